"""Chapter 1, the theory (``notebooks/theory.md``): Lemma 1, Theorem 1, Proposition 1 and the
GRPO gradient (Eq. 2) with its negative-only form, each checked numerically and symbolically
(the mathematics is in ``rlvr_dynamics.theory``).

Each section of the notebook is one call here that computes (returning a result whose
``record`` holds the numbers it measured), then what ``figures`` draws, what ``shown``
tabulates for people and what ``sentences`` writes of it. Every section draws from its own
random stream ``[seed, k]``::

    setting = tabular_setting(P)                    # [seed, 0]: pi, A, r
    lemma1_symbolic(P); lemma1_autograd(P)          # [seed, 1]
    remark2(setting, P)
    theorem1_exact(setting, P)
    mc = monte_carlo(setting, P)                    # [seed, 2]
    group_check(setting, P)                         # [seed, 3]
    net = tiny_network(P); prop1 = proposition1_check(net, P)  # [seed, 4]
    equation2_check(net, P)                         # [seed, 5]
    record = collect(...); save_record(record, P)  # the closing table: shown.summary_rows

Each check asserts its own threshold (the module constants below), so a notebook whose
mathematics stops holding fails where the check runs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import sympy as sp
import torch
from pydantic import model_validator

from rlvr_dynamics import theory as T
from rlvr_dynamics.chapters import ChapterParams, Int, ListOf, Positive, require
from rlvr_dynamics.models import char_tokenizer, tiny_qwen2
from rlvr_dynamics.store import config_key, results_dir, write_json
from rlvr_dynamics.tasks.sums import ALPHABET


class Params(ChapterParams):
    """``vocab``/``lr``/``draws``: Lemma 1's random policies; ``symbolic_vocab``: the size of
    the sympy checks; ``mc_samples``/``mc_repeats``: Theorem 1's Monte Carlo error against the
    sample count; ``group_sizes``/``group_draws``: the group version; ``hidden``/``layers``/
    ``lr_max``/``halvings``/``G``/``max_len``: Proposition 1 and Eq. 2 on a small network."""

    seed: Int(0) = 0
    vocab: Int(3, 64) = 8
    lr: Positive = 0.1
    draws: Int(1) = 1000
    symbolic_vocab: Int(2, 5) = 4
    mc_samples: ListOf(Int(1), 3) = [10, 30, 100, 300, 1000, 3000, 10000, 30000, 100000]
    mc_repeats: Int(2) = 100
    group_sizes: ListOf(Int(2)) = [2, 4, 8]
    group_draws: Int(100) = 100000
    hidden: Int(8) = 128
    layers: Int(1) = 4
    lr_max: Positive = 0.004
    halvings: Int(2, 30) = 6
    G: Int(2) = 8
    max_len: Int(1, 64) = 8

    @model_validator(mode="after")
    def _cross(self):
        require(len(set(self.mc_samples)) >= 3,
                "mc_samples needs at least 3 distinct sample counts to fit a slope")
        require(self.hidden % 8 == 0, f"hidden={self.hidden} must be a multiple of 8 "
                "(4 attention heads with an even head size, as rotary embeddings need)")
        for G in self.group_sizes:  # the bound of theory.group_update_moments' enumeration
            require(math.comb(self.vocab + G - 1, G) <= 2_000_000,
                    f"group_sizes has G={G}: enumerating its groups over vocab={self.vocab} "
                    "actions is too large (more than 2,000,000 multisets)")
        return self


# --- the checks' thresholds --------------------------------------------------------------------

AUTOGRAD_TOL = 1e-12
"""Lemma 1 against autograd in float64: rounding only."""
EXACT_TOL = 1e-15
"""Theorem 1 and the group result against exact enumeration: rounding only."""
MC_SLOPE_TOL = 0.1
"""The Monte Carlo error's fitted slope in N may miss -1/2 by this much."""
Z_MAX = 5.0
"""The largest Monte Carlo deviation from the group closed form, in standard errors."""
PROP1_SLOPE_TOL = 0.25
"""Proposition 1's remainder: its fitted slope in eta may miss 2 by this much."""
EQ2_REL_TOL = 1e-6
"""Eq. 2 against autograd, relative (Qwen2's RMSNorm runs in float32 inside float64)."""
SYMBOLIC_GROUP_SIZES = (2, 3)
"""The group sizes of the symbolic group check (all V^G groups are enumerated)."""
PROMPT = "12+34="
"""The prompt the tiny network reads (Proposition 1, Eq. 2)."""
EQ2_GAP = "max |autograd − Eq. 2| / max |autograd|"
"""The column of ``equation2_gaps`` that the check reads."""
MC_SE = "max |MC - closed form| / SE"
"""The column of the group table that the check reads."""


def _holds(condition: bool, message: str) -> None:
    """A check of the chapter: raise AssertionError(message) unless ``condition``."""
    if not condition:
        raise AssertionError(message)


@dataclass
class Check:
    """What a check measured (``record``: saved with the chapter's numbers)."""

    record: dict[str, Any]


def collect(*checks: Any) -> dict[str, Any]:
    """Every check's ``record``, merged in the order given (the chapter's saved numbers)."""
    record: dict[str, Any] = {}
    for check in checks:
        record.update(check.record)
    return record


# --- the tabular setting -----------------------------------------------------------------------

@dataclass
class Tabular:
    """The tabular setting of Lemma 1 and Theorem 1: a peaked policy ``pi`` (like a trained
    model's), a fixed advantage ``A`` per action (Theorem 1's setting) and a verifiable 0/1
    reward ``r`` under which half the actions are correct (Algorithm 1's setting)."""

    pi: np.ndarray
    A: np.ndarray
    r: np.ndarray


def tabular_setting(P: Params) -> Tabular:
    """pi = Softmax(2 g), A = g', r = 1 on a random half of the ``vocab`` actions (stream
    [seed, 0])."""
    rng = np.random.default_rng([P.seed, 0])
    pi = T.softmax(2.0 * rng.normal(size=P.vocab))
    A = rng.normal(size=P.vocab)
    r = np.zeros(P.vocab)
    r[rng.permutation(P.vocab)[: P.vocab // 2]] = 1
    return Tabular(pi, A, r)


# --- Lemma 1 and Remark 2 ----------------------------------------------------------------------

def lemma1_symbolic(P: Params) -> Check:
    """Lemma 1 (Appendix B.2), symbolically: every entry of d log pi(v)/dz_u - (delta_uv - pi(u))
    over ``symbolic_vocab`` actions simplifies to 0 (``theory.lemma1_residual``)."""
    V = P.symbolic_vocab
    zero = T.lemma1_residual(V) == sp.zeros(V, V)
    _holds(zero, f"Lemma 1's symbolic residual (V = {V}) does not simplify to 0")
    return Check({"lemma1_symbolic_zero": zero})


def lemma1_autograd(P: Params) -> Check:
    """Lemma 1 against autograd: for ``draws`` logits z ~ N(0, 2^2 I), actions v and advantages
    A ~ N(0, 1) (stream [seed, 1]), eta * grad_z A log Softmax(z)_v must equal
    ``theory.logit_update`` to float64 rounding."""
    rng = np.random.default_rng([P.seed, 1])
    Z = torch.tensor(2.0 * rng.normal(size=(P.draws, P.vocab)), requires_grad=True)
    v = rng.integers(P.vocab, size=P.draws)
    adv = rng.normal(size=P.draws)
    (torch.tensor(adv) * torch.log_softmax(Z, -1)[torch.arange(P.draws), v]).sum().backward()
    lemma1 = T.logit_update(T.softmax(Z.detach().numpy()), v, adv, P.lr)
    error = float(np.abs(P.lr * Z.grad.numpy() - lemma1).max())
    _holds(error < AUTOGRAD_TOL, f"Lemma 1 misses autograd by {error:.1e}")
    return Check({"lemma1_autograd_max_error": error})


def remark2_cases(vocab: int) -> dict[str, int]:
    """The sampled actions Remark 2's figure shows, as positions in the sorted policy."""
    return {"the most likely action": 0, "a rare action": vocab - 2}


def probability_gainers(pi: np.ndarray, v: int, lr: float) -> list[int]:
    """Remark 2: the actions u != v whose probability rises (exactly, ``probability_change``)
    after a positive sample of v (A(v) = +1); to first order those with
    pi(u) + pi(v) < sum_w pi(w)^2."""
    change = T.probability_change(pi, v, +1, lr)
    return [u for u in range(len(pi)) if u != v and change[u] > 0]


def remark2(setting: Tabular, P: Params) -> Check:
    """Remark 2 on the sorted policy: the other actions that gain probability after a positive
    sample of the rare action (the paper says none do)."""
    pi_sorted = setting.pi[np.argsort(-setting.pi)]
    rare = remark2_cases(P.vocab)["a rare action"]
    return Check({"remark2_gainers_after_rare_positive": probability_gainers(pi_sorted, rare,
                                                                             P.lr)})


# --- Theorem 1 and its Monte Carlo check -------------------------------------------------------

def theorem1_exact(setting: Tabular, P: Params) -> Check:
    """Theorem 1, symbolically (``theory.theorem1_residual`` expands to 0) and exactly (Lemma 1's
    update summed over the actions, weighted by pi, equals ``expected_logit_update``)."""
    V = P.symbolic_vocab
    symbolic = T.theorem1_residual(V) == sp.zeros(V, 2)
    mean_exact, _ = T.update_moments(setting.pi, setting.A, P.lr)
    error = float(np.abs(mean_exact - T.expected_logit_update(setting.pi, setting.A, P.lr)
                         ).max())
    _holds(symbolic and error < EXACT_TOL,
           f"Theorem 1 fails: symbolic {symbolic}, enumeration error {error:.1e}")
    return Check({"theorem1_symbolic_zero": symbolic, "theorem1_enumeration_max_error": error})


def mean_group_update(pi: np.ndarray, rewards: np.ndarray, G: int, lr: float, n: int,
                      rng: np.random.Generator) -> np.ndarray:
    """The mean of Algorithm 1's update (``theory.group_logit_update``) over n groups of G
    actions drawn from pi: a Monte Carlo estimate of ``expected_group_logit_update``."""
    return T.group_logit_update(pi, rng.choice(len(pi), size=(n, G), p=pi), rewards, lr).mean(0)


@dataclass
class MonteCarlo:
    """Theorem 1 (and Algorithm 1's group update, group size ``G``) by Monte Carlo: the RMS
    error of the mean of N sampled updates for each N of ``samples``, and the exact standard
    errors sqrt(tr Sigma / N) it should follow."""

    samples: list[int]
    G: int
    rms_single: np.ndarray
    rms_group: np.ndarray
    se_single: np.ndarray
    se_group: np.ndarray

    @property
    def slopes(self) -> tuple[float, float]:
        """The fitted log-log slopes in N of the two errors (theory: -1/2 each)."""
        return (T.loglog_slope(self.samples, self.rms_single),
                T.loglog_slope(self.samples, self.rms_group))

    @property
    def record(self) -> dict[str, float]:
        single, group = self.slopes
        return {"theorem1_mc_slope": single, "group_mc_slope": group}


def monte_carlo(setting: Tabular, P: Params) -> MonteCarlo:
    """Theorem 1's Monte Carlo check: the mean of N sampled Lemma 1 updates is unbiased, so its
    RMS error (over ``mc_repeats`` means) shrinks like N^-1/2; the same for Algorithm 1's group
    update against its closed form, at G = ``group_sizes[0]`` (stream [seed, 2])."""
    pi, A, r, lr = setting.pi, setting.A, setting.r, P.lr
    G0 = P.group_sizes[0]
    mean_exact, cov_exact = T.update_moments(pi, A, lr)
    rng = np.random.default_rng([P.seed, 2])
    _, group_cov = T.group_update_moments(pi, r, G0, lr)
    rms_single = T.rms_error(lambda n, g: T.mean_sampled_update(pi, A, lr, n, g),
                             mean_exact, P.mc_samples, P.mc_repeats, rng)
    rms_group = T.rms_error(lambda n, g: mean_group_update(pi, r, G0, lr, n, g),
                            T.expected_group_logit_update(pi, r, G0, lr),
                            P.mc_samples, P.mc_repeats, rng)
    n = np.asarray(P.mc_samples)
    mc = MonteCarlo(list(P.mc_samples), G0, rms_single, rms_group,
                    np.sqrt(np.trace(cov_exact) / n), np.sqrt(np.trace(group_cov) / n))
    _holds(all(abs(s + 0.5) < MC_SLOPE_TOL for s in mc.slopes),
           f"Monte Carlo error slopes {mc.slopes} are not near -1/2")
    return mc


# --- group-relative advantages: the (1 - 1/G) factor -------------------------------------------

@dataclass
class GroupCheck:
    """E[U] = (1 - 1/G) eta pi (r - pi . r) for Algorithm 1's group update: the symbolic
    residuals (``symbolic``, by group size) and one ``table`` row per G of ``group_sizes``."""

    symbolic: dict[int, bool]
    table: pd.DataFrame
    symbolic_vocab: int

    @property
    def record(self) -> dict[str, Any]:
        return {"group_symbolic_zero": self.symbolic,
                "group": self.table.reset_index().to_dict(orient="records")}


def group_check(setting: Tabular, P: Params) -> GroupCheck:
    """The group result, three ways: sympy over all V^G groups (``theory.group_residual``, G in
    ``SYMBOLIC_GROUP_SIZES``); the exact mean over all multisets (``group_update_moments``); and
    a Monte Carlo mean over ``group_draws`` groups within ``Z_MAX`` standard errors of the
    closed form (stream [seed, 3]). The ratio column is ||E[U]|| / ||Theorem 1||, i.e. 1 - 1/G."""
    pi, r, lr, V = setting.pi, setting.r, P.lr, P.symbolic_vocab
    symbolic = {G_: T.group_residual(V, G_) == sp.zeros(V, 1) for G_ in SYMBOLIC_GROUP_SIZES}
    _holds(all(symbolic.values()), f"the group result's symbolic residual fails: {symbolic}")
    theorem1_centred = T.expected_logit_update(pi, r - pi @ r, lr)
    rng = np.random.default_rng([P.seed, 3])
    rows = []
    for G_ in P.group_sizes:
        closed = T.expected_group_logit_update(pi, r, G_, lr)
        exact, cov = T.group_update_moments(pi, r, G_, lr)
        groups = rng.choice(P.vocab, size=(P.group_draws, G_), p=pi)
        updates = T.group_logit_update(pi, groups, r, lr)
        z_score = (updates.mean(0) - closed) / np.sqrt(np.diag(cov) / P.group_draws)
        rows.append({"G": G_, "1 - 1/G": 1 - 1 / G_,
                     "‖E[U]‖ / ‖Theorem 1‖":
                         np.linalg.norm(exact) / np.linalg.norm(theorem1_centred),
                     "max |enumeration - closed form|": np.abs(exact - closed).max(),
                     MC_SE: np.abs(z_score).max()})
    table = pd.DataFrame(rows).set_index("G")
    _holds((table["max |enumeration - closed form|"] < EXACT_TOL).all(),
           "the exact group mean misses the closed form")
    _holds((table[MC_SE] < Z_MAX).all(),
           f"a Monte Carlo group mean lies {Z_MAX:g} or more standard errors off the closed form")
    return GroupCheck(symbolic, table, V)


# --- Proposition 1 through a network -----------------------------------------------------------

@dataclass
class Network:
    """The tiny Qwen2 of Proposition 1 and Eq. 2 (float64), its tokenizer and the prompt ``x``
    (1, P)."""

    tokenizer: Any
    model: torch.nn.Module
    x: torch.Tensor

    @property
    def n_params(self) -> int:
        return sum(p.numel() for p in T.parameters(self.model).values())


def tiny_network(P: Params) -> Network:
    """A randomly initialised tiny Qwen2 (``hidden``, ``layers``, 4 heads, tied embeddings, the
    character vocabulary of the book's task, init seed ``seed``) in float64, reading ``PROMPT``."""
    tokenizer = char_tokenizer(ALPHABET)
    model = tiny_qwen2(tokenizer, hidden=P.hidden, layers=P.layers, seed=P.seed).double()
    prompt = [tokenizer.bos_token_id, *tokenizer.convert_tokens_to_ids(list(PROMPT))]
    return Network(tokenizer, model, torch.tensor([prompt]))


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """cos(a, b) = a . b / (|a| |b|)."""
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


@dataclass
class Prop1Check:
    """Proposition 1 measured (``theory.proposition1``) at the step sizes ``lrs``, on a network
    of ``n_params`` parameters whose next-token vocabulary is ``tokens``."""

    result: T.Proposition1
    lrs: list[float]
    n_params: int
    tokens: list[str]

    @property
    def mid(self) -> int:
        """The step size the single-step comparisons read: the middle of the grid."""
        return len(self.lrs) // 2

    @property
    def record(self) -> dict[str, Any]:
        p, mid = self.result, self.mid
        return {"prop1": {
            "lrs": self.lrs, "errors": p.errors.tolist(),
            "halving_ratios": (p.errors[:-1] / p.errors[1:]).tolist(),
            "slope": T.loglog_slope(p.lrs, p.errors),
            "cos_actual_predicted": cosine(p.actual[mid], p.predicted[mid]),
            "cos_actual_K_identity": cosine(p.actual[mid], p.tabular[mid]),
            "cos_logit_change_K_dz": cosine(p.logit_change[mid], p.K @ p.grad_z),
            "cos_logit_change_dz": cosine(p.logit_change[mid], p.grad_z),
        }}

    @property
    def table(self) -> pd.DataFrame:
        """Per step size eta: the measured change, the prediction's error and its ratio per
        halving of eta (NaN at the smallest eta)."""
        p = self.result
        ratios = [*self.record["prop1"]["halving_ratios"], np.nan]
        return pd.DataFrame({"eta": self.lrs, "max |Δlog π| measured": np.abs(p.actual).max(1),
                             "max |measured - predicted|": p.errors,
                             "error ratio to the next smaller η": ratios})

    @property
    def cosines(self) -> pd.DataFrame:
        """How well the measured changes align with Proposition 1, K = I, and K Delta z, at
        the middle step size (one column, named by it)."""
        p1 = self.record["prop1"]
        return pd.Series({"cos(measured Δlog π, Proposition 1)": p1["cos_actual_predicted"],
                          "cos(measured Δlog π, K = I)": p1["cos_actual_K_identity"],
                          "cos(measured Δz, K Δz)": p1["cos_logit_change_K_dz"],
                          "cos(measured Δz, Δz of Lemma 1 / Theorem 1)":
                              p1["cos_logit_change_dz"]},
                         name=f"η = {self.lrs[self.mid]:.2g}").to_frame()


def proposition1_check(net: Network, P: Params) -> Prop1Check:
    """Proposition 1 (Appendix B.3): one real gradient-ascent step on the expected reward of a
    seeded 0/1 labelling of half the vocabulary (stream [seed, 4]) at eta = ``lr_max`` halved
    ``halvings`` times; the error of [I - e pi^T] K Delta z must fall like eta^2 (fitted slope
    within ``PROP1_SLOPE_TOL`` of 2)."""
    V = len(net.tokenizer)
    rng = np.random.default_rng([P.seed, 4])
    rewards = np.zeros(V)
    rewards[rng.permutation(V)[: V // 2]] = 1
    lrs = [P.lr_max * 2.0 ** -k for k in range(P.halvings + 1)]
    check = Prop1Check(T.proposition1(net.model, net.x, rewards, lrs), lrs, net.n_params,
                       net.tokenizer.convert_ids_to_tokens(list(range(V))))
    slope = check.record["prop1"]["slope"]
    _holds(abs(slope - 2) < PROP1_SLOPE_TOL,
           f"Proposition 1's remainder has slope {slope:.3f} in eta, not 2")
    return check


# --- Eq. 2 and the negative-only gradient of Appendix B.5 --------------------------------------

def equation2_gaps(eq2: T.Equation2) -> pd.DataFrame:
    """One row per gradient of ``theory.VARIANTS``: its norm and the relative gap between
    autograd and Eq. 2's assembly (``EQ2_GAP``)."""
    rows = [{"gradient": f"{name} ({'B.5' if negative_only else 'Eq. 2'})",
             "‖autograd‖": eq2.autograd[name].norm().item(),
             EQ2_GAP: ((eq2.autograd[name] - eq2.assembled[name]).abs().max()
                       / eq2.autograd[name].abs().max()).item()}
            for name, negative_only in T.VARIANTS.items()]
    return pd.DataFrame(rows).set_index("gradient")


@dataclass
class Eq2Check:
    """Eq. 2 and B.5 on one sampled group: the ``table`` of ``equation2_gaps``, the group's
    ``rewards`` and completion ``lengths``, the range of the importance ratios and the cosine
    between the full and the negative-only gradient."""

    table: pd.DataFrame
    rewards: np.ndarray
    lengths: list[int]
    ratio_range: list[float]
    cos_full_negative_only: float

    @property
    def record(self) -> dict[str, Any]:
        return {"eq2": {"table": self.table.reset_index().to_dict(orient="records"),
                        "lengths": self.lengths, "rewards": self.rewards.tolist(),
                        "ratio_range": self.ratio_range,
                        "cos_full_negative_only": self.cos_full_negative_only}}


def equation2_check(net: Network, P: Params) -> Eq2Check:
    """Eq. 2 (Appendix B.1) and B.5: ``G`` completions of the prompt sampled from the network
    (theta_old), a random half rewarded (stream [seed, 5]) with GRPO's advantages, theta one
    unclipped GRPO step of size ``lr_max`` further (so the ratios differ from 1); the gradient
    by autograd and as Eq. 2 assembles it must agree to ``EQ2_REL_TOL`` of its size."""
    model, x = net.model, net.x
    old_params = {k: p.detach().clone() for k, p in T.parameters(model).items()}
    completions, mask = T.sample_group(model, net.tokenizer, x, P.G, P.max_len, P.seed)
    rng = np.random.default_rng([P.seed, 5])
    rewards = np.zeros(P.G)
    rewards[rng.permutation(P.G)[: P.G // 2]] = 1
    advantages = torch.tensor(T.group_advantages(rewards, normalise=True))
    logp_old = T.completion_logprobs(model, T.parameters(model), x, completions)
    first_step = T.flat_grad(T.grpo_objective(logp_old, logp_old.detach(), advantages, mask),
                             T.parameters(model))
    params = T.stepped(T.parameters(model), first_step, P.lr_max)
    eq2 = T.equation2_gradients(model, params, old_params, x, completions, mask, advantages)
    table = equation2_gaps(eq2)
    _holds((table[EQ2_GAP] < EQ2_REL_TOL).all(),
           f"Eq. 2 misses autograd: relative gaps {table[EQ2_GAP].tolist()}")
    w_valid = eq2.ratios[mask.bool()]
    return Eq2Check(table, rewards, mask.sum(1).int().tolist(),
                    [w_valid.min().item(), w_valid.max().item()],
                    torch.nn.functional.cosine_similarity(*eq2.autograd.values(), dim=0).item())


# --- the summary -------------------------------------------------------------------------------

def save_record(record: dict[str, Any], P: Params) -> Path:
    """Every measured number, with the parameters, in
    ``results/<profile>/theory/checks_<key>.json``."""
    path = results_dir(P.profile, P.chapter()) / f"checks_{config_key(P.values())}.json"
    return write_json(path, {"parameters": P.values(), **record})
