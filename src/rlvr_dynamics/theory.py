"""Sections 2-3 and Appendix B: how one policy-gradient step moves a softmax policy.

Notation follows the paper: logits z, policy pi = Softmax(z / tau), advantage A_hat, step eta,
group size G, rewards r, importance ratio w, empirical NTK K = J J^T with J = dz/dtheta.

* Tabular (numpy): Lemma 1 (``logit_update``), Theorem 1 (``expected_logit_update``), and the
  group-relative version that Algorithm 1 runs (``group_logit_update``, whose exact mean is
  ``expected_group_logit_update``), with exact moments by enumeration for the checks.
* Symbolic (sympy): residuals of Lemma 1, Theorem 1 and the group result, which simplify to 0.
* Through a network (torch): Proposition 1's eNTK decomposition (``proposition1``) and
  Eq. 2 / Appendix B.5's reweighted log-likelihood gradient (``grpo_objective``,
  ``grpo_coefficients``, ``equation2_gradients``) on any causal language model.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import sympy as sp
import torch
from torch.func import functional_call

from rlvr_dynamics.sampling import SamplingParams, TransformersBackend

Params = dict[str, torch.Tensor]
"""A model's parameters by name, as ``torch.func.functional_call`` takes them."""


# --- tabular softmax policy (numpy) ----------------------------------------------------------

def softmax(z: np.ndarray, tau: float = 1.0) -> np.ndarray:
    """pi = Softmax(z / tau) over the last axis (Appendix C.4's temperature)."""
    z = np.asarray(z, dtype=float) / tau
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def logit_update(pi: np.ndarray, action, advantage, lr: float) -> np.ndarray:
    """Lemma 1: the new-minus-old logits after one step on the sampled ``action``.

    Delta z_v = eta * A(v) * (1 - pi(v)) for the sampled v, and
    Delta z_u = -eta * A(v) * pi(u) for every u != v; i.e. eta * A(v) * (e_v - pi).
    ``action`` and ``advantage`` may be arrays of one shape (one update per entry, stacked
    before the last axis); ``pi`` (..., V) broadcasts against them.
    """
    pi = np.asarray(pi, dtype=float)
    e_v = np.eye(pi.shape[-1])[action]
    return lr * np.asarray(advantage, dtype=float)[..., None] * (e_v - pi)


def expected_logit_update(pi: np.ndarray, advantages: np.ndarray, lr: float) -> np.ndarray:
    """Theorem 1: E[Delta z_v] = eta * pi(v) * [(1 - pi(v)) A(v) - sum_{u != v} pi(u) A(u)].

    ``pi`` and the per-action ``advantages`` are arrays over the last axis, batched over
    leading axes. The bracket equals A(v) - sum_u pi(u) A(u), which is how it is computed.
    """
    pi = np.asarray(pi, dtype=float)
    advantages = np.asarray(advantages, dtype=float)
    return lr * pi * (advantages - (pi * advantages).sum(axis=-1, keepdims=True))


def probability_change(pi: np.ndarray, action, advantage, lr: float) -> np.ndarray:
    """Remark 2: pi' - pi, exactly, after Lemma 1's step (pi' = Softmax(log pi + Delta z)).

    To first order, for u != v, Delta log pi(u) = -eta A(v) (pi(u) + pi(v) - sum_w pi(w)^2):
    a positive sample lowers pi(u) only where pi(u) + pi(v) exceeds sum_w pi(w)^2.
    """
    pi = np.asarray(pi, dtype=float)
    return softmax(np.log(pi) + logit_update(pi, action, advantage, lr)) - pi


def update_moments(pi: np.ndarray, advantages: np.ndarray, lr: float
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Exact mean (V,) and covariance (V, V) of Lemma 1's update when v ~ pi (Theorem 1's
    setting), by summing over the V actions."""
    pi = np.asarray(pi, dtype=float)
    U = logit_update(pi, np.arange(pi.size), advantages, lr)   # row v: the update if v is drawn
    mean = pi @ U
    return mean, (U - mean).T @ (pi[:, None] * (U - mean))


def mean_sampled_update(pi: np.ndarray, advantages: np.ndarray, lr: float, n: int,
                        rng: np.random.Generator, chunk: int = 1 << 16) -> np.ndarray:
    """The average of Lemma 1's update over ``n`` actions drawn from pi (a Monte Carlo
    estimate of Theorem 1), accumulated in chunks so memory stays O(chunk * V)."""
    advantages = np.asarray(advantages, dtype=float)
    total = np.zeros(len(pi))
    for start in range(0, n, chunk):
        v = rng.choice(len(pi), size=min(chunk, n - start), p=pi)
        total += logit_update(pi, v, advantages[v], lr).sum(axis=0)
    return total / n


def group_advantages(rewards: np.ndarray, normalise: bool = False, eps: float = 1e-6
                     ) -> np.ndarray:
    """Group-relative advantages over the last axis: A_i = r_i - mean_j r_j (Algorithm 1);
    with ``normalise``, divided by (std_j r_j + eps) as in GRPO (Section 2; the unbiased
    std, as verl and TRL compute it)."""
    rewards = np.asarray(rewards, dtype=float)
    A = rewards - rewards.mean(axis=-1, keepdims=True)
    if normalise:
        A = A / (rewards.std(axis=-1, ddof=1, keepdims=True) + eps)
    return A


def group_logit_update(pi: np.ndarray, actions: np.ndarray, rewards: np.ndarray, lr: float
                       ) -> np.ndarray:
    """One step of Algorithm 1: (eta / G) sum_i A_i (e_{a_i} - pi), A_i = r(a_i) - mean_j r(a_j).

    ``actions`` (..., G) are the sampled groups, ``rewards`` (V,) the per-action rewards;
    returns (..., V). It is the group average of Lemma 1's update.
    """
    actions = np.asarray(actions)
    A = group_advantages(np.asarray(rewards, dtype=float)[actions])
    return logit_update(pi, actions, A, lr).mean(axis=-2)


def expected_group_logit_update(pi: np.ndarray, rewards: np.ndarray, G: int, lr: float
                                ) -> np.ndarray:
    """E[group_logit_update] = (1 - 1/G) * eta * pi * (r - pi . r): Theorem 1 with
    A(u) = r(u) - E_pi[r] (any baseline gives the same), shrunk by 1 - 1/G (proved in the
    theory chapter)."""
    return (1 - 1 / G) * expected_logit_update(pi, rewards, lr)


def group_update_moments(pi: np.ndarray, rewards: np.ndarray, G: int, lr: float
                         ) -> tuple[np.ndarray, np.ndarray]:
    """Exact mean (V,) and covariance (V, V) of ``group_logit_update`` over groups drawn
    i.i.d. from pi, by enumerating the C(V+G-1, G) multisets of actions (the update depends
    on a group only through its multiset) with their multinomial probabilities."""
    pi = np.asarray(pi, dtype=float)
    V = pi.size
    if math.comb(V + G - 1, G) > 2_000_000:
        raise ValueError(f"enumerating groups of G={G} over V={V} actions needs "
                         f"{math.comb(V + G - 1, G):,} multisets; use Monte Carlo instead")
    groups = np.array(list(itertools.combinations_with_replacement(range(V), G)))
    counts = np.stack([np.bincount(g, minlength=V) for g in groups])
    log_multinomial = math.lgamma(G + 1) - np.vectorize(math.lgamma)(counts + 1).sum(axis=1)
    prob = np.exp(log_multinomial + counts @ np.log(pi))
    U = group_logit_update(pi, groups, rewards, lr)
    mean = prob @ U
    return mean, (U - mean).T @ (prob[:, None] * (U - mean))


def rms_error(sample_mean: Callable[[int, np.random.Generator], np.ndarray], exact: np.ndarray,
              sample_counts: list[int], repeats: int, rng: np.random.Generator) -> np.ndarray:
    """sqrt(E ||mean of N draws - exact||^2) for each N in ``sample_counts``, estimated from
    ``repeats`` independent means ``sample_mean(N, rng)``. For i.i.d. draws with covariance
    Sigma it equals sqrt(trace(Sigma) / N)."""
    return np.array([np.sqrt(np.mean([np.sum((sample_mean(n, rng) - exact) ** 2)
                                      for _ in range(repeats)])) for n in sample_counts])


def loglog_slope(x: np.ndarray, y: np.ndarray) -> float:
    """Least-squares slope of log y against log x (the order of a power law y ~ x^slope)."""
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


# --- symbolic checks (sympy) -----------------------------------------------------------------

def lemma1_residual(V: int) -> sp.Matrix:
    """d log Softmax(z)_v / dz_u - (delta_uv - pi(u)) for symbolic logits z_1..z_V (Lemma 1,
    Appendix B.2); simplifies to the zero V x V matrix."""
    z = sp.symbols(f"z1:{V + 1}", real=True)
    Z = sum(sp.exp(zi) for zi in z)
    pi = [sp.exp(zi) / Z for zi in z]
    return sp.Matrix(V, V, lambda v, u: sp.simplify(
        sp.diff(sp.log(pi[v]), z[u]) - (int(u == v) - pi[u])))


def theorem1_residual(V: int) -> sp.Matrix:
    """For symbolic pi(u), A(u): sum_u pi(u) A(u) (e_u - pi)_v (the expectation of Lemma 1's
    update, eta = 1) minus Theorem 1's pi(v)[(1 - pi(v))A(v) - sum_{u != v} pi(u)A(u)], and
    that bracket minus A(v) - sum_u pi(u)A(u); both columns expand to 0."""
    pi = sp.symbols(f"pi1:{V + 1}", positive=True)
    A = sp.symbols(f"A1:{V + 1}", real=True)
    rows = []
    for v in range(V):
        expectation = sum(pi[u] * A[u] * (int(u == v) - pi[v]) for u in range(V))
        bracket = (1 - pi[v]) * A[v] - sum(pi[u] * A[u] for u in range(V) if u != v)
        rows.append([sp.expand(expectation - pi[v] * bracket),
                     sp.expand(bracket - (A[v] - sum(pi[u] * A[u] for u in range(V))))])
    return sp.Matrix(rows)


def group_residual(V: int, G: int) -> sp.Matrix:
    """E[(1/G) sum_i A_i (e_{a_i} - pi)] over all V^G groups with A_i = r(a_i) - mean_j r(a_j),
    minus (1 - 1/G) pi (r - pi . r), for symbolic pi (summing to 1) and r; expands to 0."""
    p = sp.symbols(f"pi1:{V}", positive=True)
    pi = [*p, 1 - sum(p)]
    r = sp.symbols(f"r1:{V + 1}", real=True)
    mean = sp.zeros(V, 1)
    for group in itertools.product(range(V), repeat=G):
        prob = sp.Mul(*(pi[a] for a in group))
        rbar = sum(r[a] for a in group) / G
        for a in group:
            mean += prob * (r[a] - rbar) / G * sp.Matrix([int(u == a) - pi[u] for u in range(V)])
    rbar_pi = sum(pi[u] * r[u] for u in range(V))
    target = sp.Matrix([(1 - sp.Rational(1, G)) * pi[v] * (r[v] - rbar_pi) for v in range(V)])
    return (mean - target).applyfunc(sp.expand)


# --- through a network (torch) ---------------------------------------------------------------

def parameters(model: torch.nn.Module) -> Params:
    """The model's trainable parameters by name (tied weights appear once)."""
    return {n: p for n, p in model.named_parameters() if p.requires_grad}


def flat_grad(scalar: torch.Tensor, params: Params, retain_graph: bool = False) -> torch.Tensor:
    """d scalar / d theta as one vector (zeros for parameters the scalar does not use)."""
    grads = torch.autograd.grad(scalar, list(params.values()), retain_graph=retain_graph,
                                allow_unused=True)
    return torch.cat([(torch.zeros_like(p) if g is None else g).reshape(-1)
                      for p, g in zip(params.values(), grads)])


def stepped(params: Params, direction: torch.Tensor, lr: float) -> Params:
    """theta + eta * direction (a flat vector), as fresh leaf tensors."""
    out, i = {}, 0
    for name, p in params.items():
        d = direction[i:i + p.numel()].view_as(p)
        out[name] = (p.detach() + lr * d).requires_grad_(p.requires_grad)
        i += p.numel()
    return out


def next_token_logits(model: torch.nn.Module, params: Params, input_ids: torch.Tensor
                      ) -> torch.Tensor:
    """z^theta(x): the logits (V,) of the token after the prompt ``input_ids`` (1, P)."""
    return functional_call(model, params, (input_ids,)).logits[0, -1]


def logit_jacobian(z: torch.Tensor, params: Params) -> torch.Tensor:
    """J = dz/dtheta (V, d), one backward pass per logit."""
    return torch.stack([flat_grad(z[v], params, retain_graph=True) for v in range(z.numel())])


def entk(J: torch.Tensor) -> torch.Tensor:
    """The empirical neural tangent kernel K = J J^T (V, V) of Proposition 1."""
    return J @ J.T


def predicted_logprob_change(pi: torch.Tensor, K: torch.Tensor, delta_z: torch.Tensor
                             ) -> torch.Tensor:
    """Proposition 1: Delta log pi = [I - e pi^T] K Delta z + O(eta^2), with
    Delta z = eta grad_z J the logit-space step (Lemma 1 / Theorem 1)."""
    V = pi.numel()
    return (torch.eye(V, dtype=K.dtype) - torch.ones(V, 1, dtype=K.dtype) * pi[None, :]) \
        @ K @ delta_z


@dataclass
class Proposition1:
    """One gradient-ascent step on the expected reward J = sum_u pi_theta(u | x) r(u), at
    several step sizes eta.

    ``actual[k]``, ``predicted[k]``, ``tabular[k]``: Delta log pi (V,) measured after the step
    of size ``lrs[k]``, predicted by Proposition 1, and predicted with K = I (as if the logits
    were the parameters). ``logit_change[k]``: the measured Delta z. ``grad_z``: grad_z J.
    """

    lrs: np.ndarray
    pi: np.ndarray
    K: np.ndarray
    grad_z: np.ndarray
    actual: np.ndarray
    predicted: np.ndarray
    tabular: np.ndarray
    logit_change: np.ndarray

    @property
    def errors(self) -> np.ndarray:
        """max_v |actual - predicted| at each eta: Proposition 1's O(eta^2) remainder."""
        return np.abs(self.actual - self.predicted).max(axis=1)


def proposition1(model: torch.nn.Module, input_ids: torch.Tensor, rewards: np.ndarray,
                 lrs: list[float]) -> Proposition1:
    """Measure Delta log pi(. | x) after one plain gradient-ascent step theta + eta grad J of
    the expected reward J = pi_theta(. | x) . r, and compare it with Proposition 1's
    [I - e pi^T] K Delta z, for each eta in ``lrs``.

    The step direction grad_theta J comes from autograd of J itself; the prediction uses only
    pi, the eNTK K = J J^T and Delta z = eta grad_z J, which is Theorem 1's expected update
    with A(u) = r(u) (``expected_logit_update``).
    """
    params = parameters(model)
    z = next_token_logits(model, params, input_ids)
    logp = torch.log_softmax(z, -1)
    direction = flat_grad(logp.exp() @ torch.as_tensor(rewards, dtype=z.dtype), params,
                          retain_graph=True)
    K = entk(logit_jacobian(z, params)).detach()
    pi = logp.exp().detach()
    grad_z = torch.as_tensor(expected_logit_update(pi.numpy(), rewards, 1.0), dtype=z.dtype)
    eye = torch.eye(len(pi), dtype=z.dtype)
    rows: dict[str, list[torch.Tensor]] = {"actual": [], "predicted": [], "tabular": [],
                                           "logit_change": []}
    for lr in lrs:
        with torch.no_grad():
            z_new = next_token_logits(model, stepped(params, direction, lr), input_ids)
        rows["actual"].append(torch.log_softmax(z_new, -1) - logp.detach())
        rows["predicted"].append(predicted_logprob_change(pi, K, lr * grad_z))
        rows["tabular"].append(predicted_logprob_change(pi, eye, lr * grad_z))
        rows["logit_change"].append(z_new - z.detach())
    return Proposition1(np.asarray(lrs, float), pi.numpy(), K.numpy(), grad_z.numpy(),
                        **{k: torch.stack(v).numpy() for k, v in rows.items()})


# --- Eq. 2 and Appendix B.5: GRPO's gradient as a reweighted log-likelihood (torch) ----------

def completion_mask(completions: torch.Tensor, eos_id: int) -> torch.Tensor:
    """1 for the tokens of each completion (G, T) up to and including its first EOS, else 0:
    |y_i| = mask[i].sum()."""
    is_eos = (completions == eos_id).long()
    return (is_eos.cumsum(-1) - is_eos == 0).to(torch.get_default_dtype())


def completion_logprobs(model: torch.nn.Module, params: Params, prompt_ids: torch.Tensor,
                        completions: torch.Tensor) -> torch.Tensor:
    """log pi_theta(y_{i,t} | x, y_{i,<t}) for completions (G, T) of one prompt (1, P).

    Completions are right-padded after their end; causal attention keeps padding from
    changing the positions that count.
    """
    G, P = completions.shape[0], prompt_ids.shape[1]
    ids = torch.cat([prompt_ids.expand(G, -1), completions], dim=1)
    logits = functional_call(model, params, (ids,)).logits[:, P - 1:-1]
    return torch.log_softmax(logits, -1).gather(-1, completions[..., None])[..., 0]


def grpo_objective(logp: torch.Tensor, logp_old: torch.Tensor, advantages: torch.Tensor,
                   mask: torch.Tensor, negative_only: bool = False) -> torch.Tensor:
    """Eq. (B.1) without clipping and KL: (1/G) sum_i (1/|y_i|) sum_t w_{i,t} A_i, with
    w_{i,t} = pi_theta / pi_old (token level); ``negative_only`` keeps only A_i < 0 (B.5)."""
    A = advantages * (advantages < 0) if negative_only else advantages
    w = torch.exp(logp - logp_old)
    return ((w * A[:, None] * mask).sum(1) / mask.sum(1)).mean()


def grpo_coefficients(logp: torch.Tensor, logp_old: torch.Tensor, advantages: torch.Tensor,
                      mask: torch.Tensor, negative_only: bool = False) -> torch.Tensor:
    """Eq. 2's weight on grad log pi(y_{i,t}): w_{i,t} A_i / (G |y_i|) (0 off the mask), times
    the indicator 1[A_i < 0] for the negative-only gradient of Appendix B.5. Detached."""
    A = advantages * (advantages < 0) if negative_only else advantages
    w = torch.exp(logp - logp_old).detach()
    return w * A[:, None] * mask / (mask.sum(1, keepdim=True) * len(A))


VARIANTS = {"GRPO": False, "GRPO-N": True}
"""The two gradients of Appendix B: all responses (Eq. 2), negative advantages only (B.5)."""


@dataclass
class Equation2:
    """The gradient of the unclipped objective by autograd and as Eq. 2 assembles it, for each
    of ``VARIANTS``; ``ratios`` are the importance ratios w_{i,t} (G, T)."""

    autograd: dict[str, torch.Tensor]
    assembled: dict[str, torch.Tensor]
    ratios: torch.Tensor


def equation2_gradients(model: torch.nn.Module, params: Params, old_params: Params,
                        prompt_ids: torch.Tensor, completions: torch.Tensor, mask: torch.Tensor,
                        advantages: torch.Tensor) -> Equation2:
    """grad_theta of the unclipped objective (``grpo_objective``) by autograd, and the same
    gradient assembled as Eq. 2 says, sum_{i,t} c_{i,t} grad_theta log pi_theta(y_{i,t}), with
    each token's score vector from its own backward pass (shared by both variants)."""
    logp = completion_logprobs(model, params, prompt_ids, completions)
    with torch.no_grad():
        logp_old = completion_logprobs(model, old_params, prompt_ids, completions)
    autograd, coefficients, assembled = {}, {}, {}
    for name, negative_only in VARIANTS.items():
        objective = grpo_objective(logp, logp_old, advantages, mask, negative_only)
        autograd[name] = flat_grad(objective, params, retain_graph=True)
        coefficients[name] = grpo_coefficients(logp, logp_old, advantages, mask, negative_only)
        assembled[name] = torch.zeros_like(autograd[name])
    for i, t in mask.nonzero().tolist():
        score = flat_grad(logp[i, t], params, retain_graph=True)
        for name, c in coefficients.items():
            assembled[name] += c[i, t] * score
    return Equation2(autograd, assembled, torch.exp(logp - logp_old).detach())


def sample_group(model: torch.nn.Module, tokenizer, prompt_ids: torch.Tensor, G: int,
                 max_len: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """G completions (G, max_len) of one prompt sampled from the model at temperature 1 (no
    top-p) by the book's sampler (``sampling.TransformersBackend``), ending at a stop token or
    at max_len and padded after it, and their ``completion_mask``."""
    params = SamplingParams(n=G, temperature=1.0, top_p=1.0, max_tokens=max_len, seed=seed)
    backend = TransformersBackend(model, tokenizer, progress=False)
    rows = [list(c.token_ids) for c in backend.generate_ids([prompt_ids[0].tolist()], params)[0]]
    pad = tokenizer.pad_token_id
    completions = torch.tensor([r + [pad] * (max_len - len(r)) for r in rows])
    return completions, completion_mask(completions, tokenizer.eos_token_id)
