"""Section 3.2 and Algorithm 1 (Appendix C.1): the softmax toy, simulated over many seeds at once.

A policy over K actions is pi = Softmax(z / tau). Each step samples a group of G actions, scores
them with the group-relative advantage A_i = r(a_i) - mean_j r(a_j) and moves the logits along

    g = (1/G) sum_i w_i grad_z log pi(a_i) = (1/G) sum_i w_i (e_{a_i} - pi) / tau,

with w_i = A_i (the standard update) or w_i = A_i 1[A_i < 0] (the negative-only update of
Appendix B.5), by Adam (Algorithm 1's last line) or by plain SGD (z <- z + eta g).

* ``run`` / ``simulate``: many seeds and settings at once (numpy; one Python loop over steps).
* ``algorithm1``: the literal loop of Algorithm 1 for one seed, the reference that ``run`` is
  tested and benchmarked against. Both read the same uniform draws.
* ``expected_gradient``: the exact E[g] ((1 - 1/G) times Theorem 1 for the standard update, an
  enumeration of groups for the negative-only one); ``mean_field`` iterates it deterministically.
* ``summarise`` and ``expansion_grid``: what the chapter keeps of many runs (cached on disk);
  ``chapters.toy_dynamics.figures`` draws it.
"""
from __future__ import annotations

import functools
import itertools
import logging
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np
from pydantic import BaseModel, ConfigDict, model_validator

from rlvr_dynamics.fields import Distribution, Int, ListOf, Positive, Real, require, require_distribution
from rlvr_dynamics.progress import bar
from rlvr_dynamics.store import Entry, config_key, read_npz, write_npz
from rlvr_dynamics.theory import expected_group_logit_update, logit_update, softmax

log = logging.getLogger(__name__)

OPTIMIZERS = ("adam", "sgd")
ADAM_BETAS = (0.9, 0.999)
"""torch.optim.Adam's defaults; the paper names Adam but not its settings."""
ADAM_EPS = 1e-8



def optimizers(adam_lr: float, sgd_lr: float) -> dict[str, dict[str, object]]:
    """The two optimizers the book compares, by name: Adam at the paper's eta (Algorithm 1)
    and plain SGD at ``sgd_lr`` (keyword arguments of ``run`` / ``summarise``)."""
    return {"Adam": dict(optimizer="adam", lr=adam_lr), "SGD": dict(optimizer="sgd", lr=sgd_lr)}


def check_scenario(where: str, pi0: list[float], r: list[float]) -> None:
    """A toy setting of the paper's scenario: ``pi0`` a distribution with every action's mass
    above zero, a reward per action, at least three actions, and a2 rarer and better than a1;
    else a ``ValueError`` naming ``where``."""
    require_distribution(where, pi0)
    require(len(pi0) == len(r), f"{where}: {len(pi0)} initial probabilities but {len(r)} "
                                "rewards")
    require(len(pi0) >= 3, f"{where}: the toy needs at least 3 actions (a1, a2, a3)")
    require(min(pi0) > 0, f"{where}: every initial probability must be > 0 (a softmax policy "
                          "gives every action some mass)")
    require(pi0[0] > pi0[1] and r[0] < r[1], f"{where}: the toy's scenario needs pi(a1) > "
                                             "pi(a2) and r(a1) < r(a2) (a2 is the rare better "
                                             "action)")


class ToySettings(BaseModel):
    """The toy's main setting, as the toy chapter declares it and the chapters that set the toy
    beside the language model read it: Algorithm 1 from ``pi0`` with rewards ``rewards`` and
    group size ``G`` at temperature ``tau``, the ``optimizer`` at ``lr``, and SGD at ``sgd_lr``
    where the two optimizers are compared (``optimizers``)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, validate_default=True)

    G: Int(2) = 2
    lr: Positive = 0.1
    optimizer: str = "adam"
    tau: Positive = 1.0
    pi0: Distribution = [0.495, 0.01, 0.495]
    rewards: ListOf(Real()) = [0.5, 1.0, 0.0]
    sgd_lr: Positive = 1.0

    @model_validator(mode="after")
    def _toy(self):
        require(self.optimizer in OPTIMIZERS, f"optimizer={self.optimizer!r} must be one of "
                                              f"{list(OPTIMIZERS)}")
        check_scenario("pi0/rewards", self.pi0, self.rewards)
        return self


# --- inputs ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Setting:
    """Checked inputs of one call, broadcast to S settings: z0, r (S, K); tau, lr (S,)."""
    z0: np.ndarray
    r: np.ndarray
    tau: np.ndarray
    lr: np.ndarray
    G: int
    optimizer: str
    negative_only: bool
    reinforce: float | None = None


def logits(pi0) -> np.ndarray:
    """Initial logits z0 = log pi0, so that Softmax(z0) = pi0; pi0 is (K,) or (S, K)."""
    pi0 = np.asarray(pi0, dtype=float)
    if pi0.ndim not in (1, 2) or pi0.shape[-1] < 2:
        raise ValueError(f"pi0 must have shape (K,) or (S, K) with K >= 2, got {pi0.shape}")
    if not np.all(np.isfinite(pi0)) or np.any(pi0 <= 0):
        raise ValueError("pi0 must have positive entries (a softmax gives every action mass)")
    if np.any(np.abs(pi0.sum(-1) - 1) > 1e-6):
        raise ValueError(f"pi0 must sum to 1 over the actions; it sums to {pi0.sum(-1)}")
    return np.log(pi0)


def with_unexplored(pi0, p2: float) -> np.ndarray:
    """pi0 with mass p2 on a2 (action 1), the other actions rescaled in proportion."""
    pi0 = np.asarray(pi0, dtype=float)
    out = pi0 * (1 - p2) / (1 - pi0[1])
    out[1] = p2
    return out


def _count(name: str, v, lo: int) -> None:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
        raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")


def setting(z0, r, *, G: int = 2, lr=0.1, tau=1.0, optimizer: str = "adam",
            negative_only: bool = False, reinforce: float | None = None) -> Setting:
    """Check and broadcast the inputs of one call; every error names its parameter."""
    _count("G", G, 1)
    if reinforce is not None and not (reinforce >= 0 and not negative_only):
        raise ValueError(f"reinforce must be >= 0 (or None), and not with negative_only; got "
                         f"reinforce={reinforce}, negative_only={negative_only}")
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}")
    arrays = {"z0": np.asarray(z0, dtype=float), "r": np.asarray(r, dtype=float)}
    for name, x in arrays.items():
        if x.ndim not in (1, 2) or x.shape[-1] < 2:
            raise ValueError(f"{name} must have shape (K,) or (S, K) with K >= 2, got {x.shape}")
        if not np.all(np.isfinite(x)):
            raise ValueError(f"{name} must be finite")
    if arrays["z0"].shape[-1] != arrays["r"].shape[-1]:
        raise ValueError(f"r has {arrays['r'].shape[-1]} actions but z0 has "
                         f"{arrays['z0'].shape[-1]}")
    for name, x in (("tau", tau), ("lr", lr)):
        x = np.asarray(x, dtype=float)
        if x.ndim > 1 or not np.all(np.isfinite(x)) or np.any(x <= 0):
            raise ValueError(f"{name} must be positive (a number or one per setting), got {x}")
        arrays[name] = x
    z0, r = np.atleast_2d(arrays["z0"]), np.atleast_2d(arrays["r"])
    try:
        (S,) = np.broadcast_shapes(z0.shape[:1], r.shape[:1], np.shape(arrays["tau"]),
                                   np.shape(arrays["lr"]))
    except ValueError:
        raise ValueError(f"settings do not broadcast: z0 has {len(z0)}, r {len(r)}, "
                         f"tau {np.size(arrays['tau'])}, lr {np.size(arrays['lr'])}") from None
    K = z0.shape[1]
    return Setting(np.broadcast_to(z0, (S, K)).copy(), np.broadcast_to(r, (S, K)).copy(),
                   np.broadcast_to(arrays["tau"], (S,)).copy(),
                   np.broadcast_to(arrays["lr"], (S,)).copy(), int(G), optimizer,
                   bool(negative_only), None if reinforce is None else float(reinforce))


# --- one step ----------------------------------------------------------------------------------

def counts(pi: np.ndarray, u: np.ndarray) -> np.ndarray:
    """How many of the G uniforms ``u`` (..., G) pick each action of ``pi`` (..., K).

    Inverse-CDF sampling: u picks action k when cdf(k-1) <= u < cdf(k), the last action taking
    every u >= cdf(K-2) (so rounding in the cumulative sum cannot lose a sample). The cdf is
    summed left to right, as in ``algorithm1``. Returns float counts (..., K).
    """
    K, G = pi.shape[-1], u.shape[-1]
    n = np.empty_like(pi)
    cdf, below_prev = pi[..., 0], 0
    for k in range(K - 1):                       # K is small: a loop beats a reduction here
        below = (u < cdf[..., None]).sum(-1)     # #{i: u_i < cdf(k)}
        n[..., k] = below - below_prev
        cdf, below_prev = cdf + pi[..., k + 1], below
    n[..., K - 1] = G - below_prev
    return n


def group_gradient(pi: np.ndarray, n: np.ndarray, r: np.ndarray, tau,
                   negative_only: bool, reinforce: float | None = None
                   ) -> tuple[np.ndarray, np.ndarray]:
    """g = (1/G) sum_i w_i (e_{a_i} - pi) / tau for a group with counts ``n`` (..., K).

    Every sample of action k has the same advantage A_k = r_k - n.r / G, so the group's sum is
    sum_k n_k w_k (e_k - pi). For the standard update (w = A) the advantages sum to zero, the
    pi terms cancel and g = n A / (G tau): an action not sampled gets no gradient at all.
    Negative-only: w = min(A, 0). With ``reinforce`` = mu (NSR: 0, W-REINFORCE: 0.1, Zhu et
    al. 2025): w = A = mu r_k - (1 - r_k), each sample's own reward with no group baseline, so
    a group that is all wrong moves too. Returns g (..., K) and the number of negative samples
    (A < 0) of each action. ``tau`` broadcasts against pi[..., 0].
    """
    G = n.sum(-1)
    scale = (1 / (G * np.asarray(tau)))[..., None]
    if reinforce is not None:  # NSR / W-REINFORCE: A = mu r - (1 - r), no group baseline
        A = reinforce * r - (1 - r)
        w = n * A
        return (w - pi * w.sum(-1)[..., None]) * scale, np.where(A < 0, n, 0.0)
    A = r - ((n * r).sum(-1) / G)[..., None]
    negative = np.where(A < 0, n, 0.0)
    if not negative_only:
        return n * A * scale, negative
    w = n * np.minimum(A, 0.0)
    return (w - pi * w.sum(-1)[..., None]) * scale, negative


class Adam:
    """Adam (Kingma & Ba 2015), ascending g: Delta z = lr m_hat / (sqrt(v_hat) + eps), with the
    bias-corrected moments m_hat, v_hat of g kept per logit."""

    def __init__(self, z: np.ndarray, lr, betas=ADAM_BETAS, eps=ADAM_EPS):
        self.lr, (self.b1, self.b2), self.eps = lr, betas, eps
        self.m, self.v, self.t = np.zeros_like(z), np.zeros_like(z), 0   # z's shape and layout

    def step(self, g: np.ndarray) -> np.ndarray:
        self.t += 1
        self.m *= self.b1
        self.m += (1 - self.b1) * g
        self.v *= self.b2
        self.v += (1 - self.b2) * g * g
        m_scale = self.lr / (1 - self.b1 ** self.t)             # lr over the bias corrections
        return m_scale * self.m / (np.sqrt(self.v / (1 - self.b2 ** self.t)) + self.eps)


class SGD:
    """Plain gradient ascent: Delta z = lr g."""

    def __init__(self, lr):
        self.lr = lr

    def step(self, g: np.ndarray) -> np.ndarray:
        return self.lr * g


def _optimizer(name: str, z: np.ndarray, lr) -> Adam | SGD:
    return Adam(z, lr) if name == "adam" else SGD(lr)


# --- many seeds at once ------------------------------------------------------------------------

def uniforms(rng: np.random.Generator, S: int, seeds: int, G: int) -> np.ndarray:
    """One step's draws, (S, seeds, G) (stored sample-major, see ``_actions_outermost``).
    ``algorithm1`` on seed j of setting s reads [s, j]."""
    return np.moveaxis(rng.random((G, S, seeds)), 0, -1)


def _actions_outermost(x: np.ndarray) -> np.ndarray:
    """x (..., K), the same values stored with the small last axis outermost in memory.

    numpy keeps that layout through elementwise operations, and then reduces over the last
    axis (softmax, sums over actions) and broadcasts against it several times faster.
    """
    out = _empty_actions_outermost(x.shape)
    out[...] = x
    return out


def _empty_actions_outermost(shape) -> np.ndarray:
    return np.moveaxis(np.empty((shape[-1], *shape[:-1])), 0, -1)


def _per_setting(x: np.ndarray, trailing: int):
    """x (S,) shaped to broadcast over ``trailing`` more axes, or one number if all equal
    (numpy broadcasts a scalar much faster)."""
    return x[0] if np.all(x == x[0]) else x.reshape(-1, *[1] * trailing)


def run(z0, r, *, G: int = 2, lr=0.1, tau=1.0, optimizer: str = "adam",
        negative_only: bool = False, reinforce: float | None = None, steps: int = 500,
        seeds: int = 100, seed: int = 0, progress: bool = False) -> Iterator[tuple[np.ndarray, np.ndarray | None]]:
    """Algorithm 1 for ``seeds`` independent runs of each of S settings, vectorised.

    z0 and r are (K,) or (S, K); tau and lr are numbers or (S,). Yields, for l = 0..steps, the
    policy pi_l (S, seeds, K) and the number of relative-negative samples of each action at
    step l (None after the last step). Step l draws ``uniforms(rng, S, seeds, G)`` from
    ``np.random.default_rng(seed)``. The inputs are checked when ``run`` is called.
    """
    st = setting(z0, r, G=G, lr=lr, tau=tau, optimizer=optimizer, negative_only=negative_only,
                 reinforce=reinforce)
    _count("steps", steps, 0)
    _count("seeds", seeds, 1)
    return _run(st, steps, seeds, seed, progress)


def _run(st: Setting, steps: int, seeds: int, seed: int, progress: bool):
    S, K = st.z0.shape
    rng = np.random.default_rng(seed)
    z = _actions_outermost(np.broadcast_to(st.z0[:, None, :], (S, seeds, K)))
    r = _actions_outermost(np.broadcast_to(st.r[:, None, :], (S, seeds, K)))
    tau = _per_setting(st.tau, 1)                 # broadcasts against (S, seeds)
    opt = _optimizer(st.optimizer, z, _per_setting(st.lr, 2))
    pi = softmax(z, np.expand_dims(tau, -1))
    for _ in bar(range(steps), progress, desc="Algorithm 1", leave=False):
        n = counts(pi, uniforms(rng, S, seeds, st.G))
        g, negative = group_gradient(pi, n, r, tau, st.negative_only, st.reinforce)
        yield pi, negative
        z += opt.step(g)
        pi = softmax(z, np.expand_dims(tau, -1))
    yield pi, None


@dataclass
class Trajectories:
    """pi (steps+1, S, seeds, K): the sampling policy Softmax(z / tau) before each step and
    after the last; negative (steps, S, seeds, K): relative-negative samples of each action."""
    pi: np.ndarray
    negative: np.ndarray


def simulate(z0, r, *, steps: int = 500, **kwargs) -> Trajectories:
    """``run`` (same keywords) with every step kept."""
    out = None
    for l, (pi, negative) in enumerate(run(z0, r, steps=steps, **kwargs)):
        if out is None:
            out = Trajectories(_empty_actions_outermost((steps + 1, *pi.shape)),
                               _empty_actions_outermost((steps, *pi.shape)))
        out.pi[l] = pi
        if negative is not None:
            out.negative[l] = negative
    return out


# --- the literal loop ------------------------------------------------------------------------

def algorithm1(z0, r, u: np.ndarray, *, lr: float = 0.1, tau: float = 1.0,
               optimizer: str = "adam", negative_only: bool = False,
               reinforce: float | None = None) -> np.ndarray:
    """Algorithm 1 as printed (Appendix C.1), one seed, one sample at a time.

    ``u`` (steps, G) holds the uniforms that pick the actions. Returns pi (steps+1, K). Each
    sample adds Lemma 1's update (``logit_update``) to g; negative-only skips samples with
    A >= 0. Adam is written out here rather than shared with ``run``, so that each checks
    the other. With ``reinforce`` = mu, A_i = mu r(a_i) - (1 - r(a_i)) (NSR, W-REINFORCE).
    """
    z = np.array(z0, dtype=float)
    r = np.asarray(r, dtype=float)
    steps, G = u.shape
    K = len(z)
    m, v = np.zeros(K), np.zeros(K)
    b1, b2 = ADAM_BETAS
    out = [softmax(z, tau)]
    for l in range(steps):
        pi = out[-1]
        cdf = list(itertools.accumulate(pi))
        a = [next((k for k in range(K - 1) if u[l, i] < cdf[k]), K - 1) for i in range(G)]
        A = ([reinforce * r[a[i]] - (1 - r[a[i]]) for i in range(G)] if reinforce is not None
             else [r[a[i]] - sum(r[a[j]] for j in range(G)) / G for i in range(G)])
        g = np.zeros(K)
        for i in range(G):
            if negative_only and not A[i] < 0:
                continue
            g += logit_update(pi, a[i], A[i], 1 / tau)     # A (e_a - pi) d(z/tau)/dz
        g = g / G
        if optimizer == "sgd":
            z = z + lr * g
        else:
            t = l + 1
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            z = z + lr * (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + ADAM_EPS)
        out.append(softmax(z, tau))
    return np.array(out)


# --- the exact expectation and its deterministic iteration --------------------------------------

def compositions(n: int, K: int) -> np.ndarray:
    """All count vectors of n draws over K actions, (C(n+K-1, K-1), K)."""
    rows = [np.bincount(c, minlength=K)
            for c in itertools.combinations_with_replacement(range(K), n)]
    return np.array(rows, dtype=int).reshape(-1, K)


def multinomial_pmf(n: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """P(counts n) under pi: n (C, K), pi (..., K) -> (..., C)."""
    coef = np.array([math.factorial(row.sum()) / math.prod(math.factorial(c) for c in row)
                     for row in n])
    return coef * np.prod(pi[..., None, :] ** n, axis=-1)


def expected_gradient(pi, r, G: int, tau=1.0, negative_only: bool = False,
                      reinforce: float | None = None) -> np.ndarray:
    """E[g] over groups of G actions drawn from pi (..., K), exactly.

    Standard update: (1 - 1/G) times Theorem 1 with eta = 1/tau (``expected_group_logit_update``).
    Negative-only: by exchangeability E[g] = E[w_1 (e_{a_1} - pi)] / tau, summed over the first
    sample's action v and the counts n of the other G - 1 samples, for which
    A_1 = r_v (1 - 1/G) - n.r / G. With ``reinforce`` = mu: each sample's own
    A = mu r - (1 - r), so E[g] = pi (A - pi . A) / tau whatever G.
    """
    pi, r = np.asarray(pi, dtype=float), np.asarray(r, dtype=float)
    tau = np.asarray(tau, dtype=float)[..., None]
    if reinforce is not None:
        A = reinforce * r - (1 - r)
        return pi * (A - (pi * A).sum(-1, keepdims=True)) / tau
    if not negative_only:
        return expected_group_logit_update(pi, r, G, 1.0) / tau
    others = compositions(G - 1, pi.shape[-1])                        # (C, K)
    p_others = multinomial_pmf(others, pi)                            # (..., C)
    r_others = (others * r[..., None, :]).sum(-1)                     # (..., C)
    A = r[..., :, None] * (1 - 1 / G) - r_others[..., None, :] / G    # (..., K, C)
    c = pi * (np.where(A < 0, A, 0.0) * p_others[..., None, :]).sum(-1)   # pi_v E[w | v]
    return (c - pi * c.sum(-1, keepdims=True)) / tau


def mean_field(z0, r, *, G: int = 2, lr=0.1, tau=1.0, optimizer: str = "adam",
               negative_only: bool = False, reinforce: float | None = None,
               steps: int = 500) -> np.ndarray:
    """Iterate the exact E[g] deterministically: pi (steps+1, S, K).

    SGD: the Theorem 1 trajectory z <- z + eta E[g]. Adam: Adam fed with E[g]. Neither is the
    mean of the random trajectories, since pi is non-linear in z (and Adam in g).
    """
    st = setting(z0, r, G=G, lr=lr, tau=tau, optimizer=optimizer, negative_only=negative_only,
                 reinforce=reinforce)
    _count("steps", steps, 0)
    z = st.z0.copy()
    opt = _optimizer(st.optimizer, z, st.lr[:, None])
    pi = np.empty((steps + 1, *z.shape))
    pi[0] = softmax(z, st.tau[:, None])
    for l in range(steps):
        z += opt.step(expected_gradient(pi[l], st.r, st.G, st.tau, st.negative_only,
                                        st.reinforce))
        pi[l + 1] = softmax(z, st.tau[:, None])
    return pi


# --- what the chapter keeps of many runs -------------------------------------------------------

def _expand(t: np.ndarray, pi: np.ndarray, l: int) -> None:
    """Record step l in ``t`` wherever pi(a2) > pi(a1) for the first time (in place)."""
    t[(pi[..., 1] > pi[..., 0]) & np.isinf(t)] = l


def expansion_time(pis: Iterable[np.ndarray]) -> np.ndarray:
    """The time to expansion: the first step l at which pi_l(a2) > pi_l(a1); inf if none.

    ``pis`` runs over steps: an array (steps+1, ..., K) or an iterable of (..., K) arrays.
    a1 and a2 are actions 0 and 1.
    """
    t = None
    for l, pi in enumerate(pis):
        t = np.full(pi.shape[:-1], np.inf) if t is None else t
        _expand(t, pi, l)
    return t


@dataclass
class Summary:
    """Statistics over the seeds of one ``run`` of S settings (small: no seeds axis but one).

    mean, lo, hi (steps+1, S, K): the mean of pi over seeds and the quantiles that bound the
    central ``band`` of seeds; reward (steps+1, S, 3): mean, lo and hi of the expected reward
    pi.r; examples (steps+1, S, E, K): the first E seeds; negatives (steps, S, K): the mean
    number of relative-negative samples of each action per group; t_expand (S, seeds): each
    seed's time to expansion; mean_field (steps+1, S, K): ``mean_field`` of the same setting.
    """
    mean: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    reward: np.ndarray
    examples: np.ndarray
    negatives: np.ndarray
    t_expand: np.ndarray
    mean_field: np.ndarray


@dataclass
class ExpansionGrid:
    """Times to expansion over G (rows) x initial pi(a2) (columns); inf: not within the steps.

    t_seed (nG, nP, seeds): each seed's; t_mean (nG, nP): the mean trajectory's; t_field
    (nG, nP): the mean field's.
    """
    t_seed: np.ndarray
    t_mean: np.ndarray
    t_field: np.ndarray


def _plain(v):
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v.item() if isinstance(v, np.generic) else v


def cached(result: type):
    """Give a keyword-only function returning the dataclass ``result`` a ``cache`` folder.

    With ``cache=<folder>``, a result computed before with the same arguments by the same code
    is read from the store entry ``<folder>/<function>-<key>/`` (``store.Entry``); a new one
    is written there. Without it, the function just runs.
    """
    def wrap(fn):
        @functools.wraps(fn)
        def inner(*, cache: Path | None = None, **kwargs):
            if cache is None:
                return fn(**kwargs)
            key = config_key({k: _plain(v) for k, v in kwargs.items() if k != "progress"})
            entry = Entry(Path(cache) / f"{fn.__name__}-{key}", code=__name__)
            if entry.done:
                log.info("%s: reusing %s", fn.__name__, entry.path)
                return result(**read_npz(entry.path / "result.npz"))
            log.info("%s: computing %s", fn.__name__, entry.path)
            out = fn(**kwargs)
            write_npz(entry.begin() / "result.npz", **asdict(out))
            entry.finish()
            return out
        return inner
    return wrap


_FIELD = ("G", "lr", "tau", "optimizer", "negative_only", "reinforce")
"""The keywords of ``run`` that ``mean_field`` shares."""


@cached(Summary)
def summarise(*, z0, r, band: float = 0.8, examples: int = 3, **kwargs) -> Summary:
    """``run(z0, r, **kwargs)`` reduced to a ``Summary`` as it goes, with its mean field.

    Memory grows with steps x settings, not with seeds, so the seeds can be many.
    """
    if not 0 < band < 1:
        raise ValueError(f"band must be in (0, 1), got {band}")
    q = [(1 - band) / 2, (1 + band) / 2]
    steps = run(z0, r, **kwargs)               # checks the inputs before anything runs
    field = {k: kwargs[k] for k in _FIELD if k in kwargs}
    rewards = setting(z0, r, **field).r[:, None, :]
    keep = {k: [] for k in ("mean", "lo", "hi", "examples", "negatives")}
    t = None
    for l, (pi, negative) in enumerate(steps):
        x = np.concatenate([pi, (pi * rewards).sum(-1, keepdims=True)], -1)  # pi and pi.r
        lo, hi = np.quantile(x, q, axis=1)
        keep["mean"].append(x.mean(1))
        keep["lo"].append(lo)
        keep["hi"].append(hi)
        keep["examples"].append(pi[:, :examples])
        if negative is not None:
            keep["negatives"].append(negative.mean(1))
        t = np.full(pi.shape[:-1], np.inf) if t is None else t
        _expand(t, pi, l)
    mean, lo, hi = (np.array(keep[k]) for k in ("mean", "lo", "hi"))
    negatives = np.array(keep["negatives"]).reshape(-1, *pi.shape[::2])
    return Summary(mean[..., :-1], lo[..., :-1], hi[..., :-1],
                   np.stack([mean[..., -1], lo[..., -1], hi[..., -1]], -1),
                   np.array(keep["examples"]), negatives, t,
                   mean_field(z0, r, steps=len(mean) - 1, **field))


@cached(ExpansionGrid)
def expansion_grid(*, pi0, r, p2, G, steps: int, seeds: int, seed: int = 0,
                   **kwargs) -> ExpansionGrid:
    """Time to expansion for every group size in ``G`` and initial pi(a2) in ``p2``.

    The initial policy is ``with_unexplored(pi0, p)`` for each p; other keywords go to ``run``
    (lr, tau, optimizer, negative_only). One vectorised run per group size.
    """
    z0 = logits([with_unexplored(pi0, p) for p in p2])
    shape = (len(G), len(p2))
    t_mean, t_field = np.full(shape, np.inf), np.full(shape, np.inf)
    t_seed = np.full((*shape, seeds), np.inf)
    for i, g in enumerate(bar(G, desc="time to expansion", leave=False)):
        for l, (pi, _) in enumerate(run(z0, r, G=g, steps=steps, seeds=seeds, seed=seed,
                                        **kwargs)):
            _expand(t_seed[i], pi, l)
            _expand(t_mean[i], pi.mean(1), l)
            if np.isfinite(t_seed[i]).all() and np.isfinite(t_mean[i]).all():
                break                            # every time is known: the rest is waste
        t_field[i] = expansion_time(mean_field(z0, r, G=g, steps=steps, **kwargs))
    return ExpansionGrid(t_seed, t_mean, t_field)


def negative_share(summary: Summary, window: int = 25) -> np.ndarray:
    """Which actions the relative negatives are: each action's share of the negative samples
    in a moving window of steps, (steps, S, K); NaN where the window holds none."""
    kernel = np.ones(window)
    smooth = np.apply_along_axis(lambda x: np.convolve(x, kernel, mode="same"), 0,
                                 summary.negatives)
    total = smooth.sum(-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, smooth / total, np.nan)


def stages(z0, r, *, early: int = 50, late: int = 200, **kwargs) -> dict[str, np.ndarray]:
    """Per seed of one setting of ``run(z0, r, **kwargs)`` (arrays of shape (seeds,)), the two
    stages of Section 3.2 in numbers: ``exploitation``, the peak of pi(a_best sampled) (the
    action with the highest pi0 * r, a_1 in the paper) over the steps after the start, minus
    its start (negative when it only falls); ``exploration``,
    pi(a_best) - pi(a_exploited) at the last step (a_best: highest reward, a_2); and which
    action the relative negatives are, early and late: ``early_worst``, the worst action's share
    of the negative samples in the first ``early`` steps, ``late_exploited``, the exploited
    action's share in the last ``late`` steps (NaN where a seed had none)."""
    st = setting(z0, r, **{k: kwargs[k] for k in _FIELD if k in kwargs})
    if st.z0.shape[0] != 1:
        raise ValueError("stages takes one setting (z0 and r of shape (K,))")
    pi0, rewards = np.exp(st.z0[0]) / np.exp(st.z0[0]).sum(), st.r[0]
    exploited = int(np.argmax(np.where(rewards < rewards.max(), pi0 * rewards, -np.inf)))
    best, worst = int(np.argmax(rewards)), int(np.argmin(rewards))
    peak, negatives, pi = None, [], None
    for step, (pi, negative) in enumerate(run(z0, r, **kwargs)):
        if step > 0:  # the peak after the start: with no rise it is below pi0, not equal to it
            peak = pi[0, :, exploited] if peak is None else np.maximum(peak, pi[0, :, exploited])
        if negative is not None:
            negatives.append(negative[0])
    neg = np.array(negatives)  # (steps, seeds, K)
    with np.errstate(invalid="ignore", divide="ignore"):
        first, last = neg[:early].sum(0), neg[-late:].sum(0)
        return {"exploitation": peak - pi0[exploited],
                "exploration": pi[0, :, best] - pi[0, :, exploited],
                "early_worst": first[:, worst] / first.sum(-1),
                "late_exploited": last[:, exploited] / last.sum(-1)}
