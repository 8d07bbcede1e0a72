"""Rung R1 of the ladder from the toy to the language model: the softmax toy of Algorithm 1
(``toy``) run on the language model's training schedule (TRL GRPO, ``rl.runs.grpo_args``).

The policy is still pi = Softmax(z / tau) over K actions with tabular logits z; times count the
model's steps. One step draws ``groups`` groups of G actions from pi_old, the policy at its
start. Each group is one problem, "hard" with probability ``share`` and "easy" otherwise, and
sample i's reward is Bernoulli with mean r_hard[a_i] or r_easy[a_i]. Advantages are scaled by
the group's standard deviation (``scale_rewards="group"``, ``advantages``). Then ``updates``
Adam steps (``toy.Adam``), each on ``groups // updates`` consecutive groups, ascend TRL's
``loss_type="dapo"`` clipped surrogate with one token per sample,

    J = (1/N_kept) sum_i min(rho_i A_i, clip(rho_i, 1 - eps, 1 + eps) A_i),
    rho_i = pi(a_i) / pi_old(a_i),

with pi the current policy, which moves between the updates of one step (``update_gradient``).
``without``: groups that hold the action are left out of the step (no gradient, not in N_kept).

Left out, being small at these settings: TRL's KL term (beta = 0.001), entropy bonus (1e-4),
dual clip (delta = 3: rho stays far below it over four updates of lr 0.1) and grad-norm
clipping (Adam's step barely depends on the gradient's scale).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlvr_dynamics.progress import bar
from rlvr_dynamics.theory import softmax
from rlvr_dynamics.toy import Adam, _count, _expand, logits

STD_EPS = 1e-4
"""TRL's A = (r - mean) / (std + 1e-4)."""


def advantages(r: np.ndarray, negative_only: bool = False) -> np.ndarray:
    """TRL's group-scaled advantages A_i = (r_i - mean_j r_j) / (std_j r_j + 1e-4) over the last
    axis (G samples), with TRL's ``nanstd``: the unbiased (G - 1) standard deviation.
    Negative-only (the -N variants): A_i 1[A_i < 0]."""
    A = (r - r.mean(-1, keepdims=True)) / (r.std(-1, ddof=1, keepdims=True) + STD_EPS)
    return np.minimum(A, 0.0) if negative_only else A


def update_gradient(pi: np.ndarray, pi_old: np.ndarray, a: np.ndarray, A: np.ndarray,
                    keep: np.ndarray, *, tau=1.0, epsilon: float = 0.2) -> np.ndarray:
    """grad_z J = (1/N_kept) sum_{kept i} [not clipped_i] rho_i A_i (e_{a_i} - pi) / tau.

    pi, pi_old (..., K); the samples' actions ``a``, advantages ``A`` and ``keep`` mask are
    (..., N). Sample i is clipped (its term of J is constant) when A_i > 0 and
    rho_i > 1 + eps, or A_i < 0 and rho_i < 1 - eps. Zero where no sample is kept.
    """
    rho = np.take_along_axis(pi, a, -1) / np.take_along_axis(pi_old, a, -1)
    clipped = ((A > 0) & (rho > 1 + epsilon)) | ((A < 0) & (rho < 1 - epsilon))
    w = np.where(keep & ~clipped, rho * A, 0.0)
    c = np.stack([np.where(a == k, w, 0.0).sum(-1) for k in range(pi.shape[-1])], -1)
    n_kept = np.maximum(keep.sum(-1), 1)[..., None]
    return (c - pi * w.sum(-1, keepdims=True)) / (n_kept * tau)


def draws(rng: np.random.Generator, seeds: int, groups: int, G: int
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One step's uniforms, in this order: the actions (seeds, groups, G), which problems are
    hard (seeds, groups), the rewards (seeds, groups, G)."""
    return (rng.random((seeds, groups, G)), rng.random((seeds, groups)),
            rng.random((seeds, groups, G)))


def sample(pi_old: np.ndarray, u_a: np.ndarray, u_p: np.ndarray, u_r: np.ndarray,
           r_easy: np.ndarray, r_hard: np.ndarray, share: float
           ) -> tuple[np.ndarray, np.ndarray]:
    """A step's actions and rewards, (seeds, groups, G), from ``draws``: a_i by inverse CDF of
    pi_old (as ``toy.counts``), problem hard when u_p < share, r_i = 1[u_r < r_problem[a_i]]."""
    cdf = np.cumsum(pi_old, -1)[:, None, None, :-1]
    a = (u_a[..., None] >= cdf).sum(-1)
    mean = np.where((u_p < share)[..., None], r_hard[a], r_easy[a])
    return a, (u_r < mean).astype(float)


@dataclass
class Schedule:
    """mean (steps * updates + 1, K): the mean over seeds of pi before each update and after
    the last; crossover (seeds,): the first step l = 0..steps at whose start pi(a2) > pi(a1)
    (actions 0 and 1; l = steps: after the last), inf if none; early (seeds, window + 1, K):
    each seed's pi before each of the first ``window`` updates and after the window-th."""
    mean: np.ndarray
    crossover: np.ndarray
    early: np.ndarray


def _rewards(name: str, r, K: int) -> np.ndarray:
    r = np.asarray(r, dtype=float)
    if r.shape != (K,) or not np.all((r >= 0) & (r <= 1)):
        raise ValueError(f"{name} must be {K} reward means in [0, 1], got {r}")
    return r


def simulate(pi0, r_easy, r_hard, share: float, *, G: int, groups: int, updates: int,
             lr: float, epsilon: float = 0.2, tau: float = 1.0, negative_only: bool = False,
             without: int | None = None, steps: int, seeds: int, window: int = 20,
             seed: int = 0, progress: bool = False) -> Schedule:
    """The toy on the LM's schedule for ``seeds`` independent runs (numpy over seeds).

    Step l reads ``draws(np.random.default_rng(seed), seeds, groups, G)``, forms advantages
    per group (``advantages``), drops the groups holding ``without``, and takes ``updates``
    Adam steps of ``update_gradient`` on consecutive slices of groups // updates groups.
    """
    pi0 = np.asarray(pi0, dtype=float)
    if pi0.ndim != 1:
        raise ValueError(f"pi0 must have shape (K,), got {pi0.shape}")
    z0, K = logits(pi0), len(pi0)
    r_easy, r_hard = _rewards("r_easy", r_easy, K), _rewards("r_hard", r_hard, K)
    if not 0 <= share <= 1:
        raise ValueError(f"share={share} must be in [0, 1]")
    for name, v, lo in [("G", G, 2), ("groups", groups, 1), ("updates", updates, 1),
                        ("steps", steps, 1), ("seeds", seeds, 1), ("window", window, 1)]:
        _count(name, v, lo)
    if groups % updates:
        raise ValueError(f"groups={groups} is not divisible by updates={updates}")
    if window > steps * updates:
        raise ValueError(f"window={window} must be <= steps * updates = {steps * updates}")
    for name, v in [("lr", lr), ("epsilon", epsilon), ("tau", tau)]:
        if not (np.isfinite(v) and v > 0):
            raise ValueError(f"{name}={v} must be positive")
    if without is not None and (isinstance(without, bool) or without not in range(K)):
        raise ValueError(f"without={without!r} must be None or an action in 0..{K - 1}")

    rng = np.random.default_rng(seed)
    z = np.tile(z0 * tau, (seeds, 1))                      # Softmax(z / tau) = pi0
    opt = Adam(z, lr)
    pi = softmax(z, tau)
    mean = np.empty((steps * updates + 1, K))
    early = np.empty((seeds, window + 1, K))
    crossover = np.full(seeds, np.inf)
    for l in bar(range(steps), progress, desc="toy on the LM schedule", leave=False):
        pi_old = pi
        _expand(crossover, pi_old, l)
        a, r = sample(pi_old, *draws(rng, seeds, groups, G), r_easy, r_hard, share)
        A = advantages(r, negative_only)
        keep = np.broadcast_to(True if without is None
                               else ~(a == without).any(-1, keepdims=True), a.shape)
        a, A, keep = (x.reshape(seeds, updates, -1) for x in (a, A, keep))
        for u in range(updates):
            t = l * updates + u
            mean[t] = pi.mean(0)
            if t <= window:
                early[:, t] = pi
            z += opt.step(update_gradient(pi, pi_old, a[:, u], A[:, u], keep[:, u], tau=tau,
                                          epsilon=epsilon))
            pi = softmax(z, tau)
    mean[-1] = pi.mean(0)
    if steps * updates == window:
        early[:, -1] = pi
    _expand(crossover, pi, steps)
    return Schedule(mean, crossover, early)
