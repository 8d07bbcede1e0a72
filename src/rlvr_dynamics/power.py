"""How many seeds and problems a contrast needs before its runs: the variance of the book's
interval for two models measured on the same problems (``stats.two_sample_problems``), split
into parts that scale differently, estimated from a pilot, and the half-width they predict at
other numbers of seeds and problems.

For a model's values ``x[s, j]`` (seed ``s``, problem ``j``; e.g. a problem's Pass@k from
``n`` samples) the model is ``x = mu + tau_s + p_j + e_sj``: ``tau`` the run-to-run spread of
training (variance ``seed``), ``p`` the problems' own spread, ``e`` what varies with both
(seed-by-problem and sampling noise, variance ``residual``). Of two models on the same
problems, ``problem`` is the variance over problems of their difference ``p_a - p_b``. Then
``two_sample_problems``' three parts at ``S`` seeds a side and ``N`` problems are

* each model's seed part, the variance of a seed's mean over the problems over ``S``:
  ``(seed + residual / N) / S``;
* the problem part, the variance over problems of the paired difference of the means over
  seeds, over ``N``: ``(problem + (residual_a + residual_b) / S) / N``;

their sum the interval's variance and their Welch-Satterthwaite degrees of freedom its ``t``.
``components`` estimates the four variances from a pilot by the two-way analysis of variance
(method of moments, a negative estimate set to zero); ``half_width`` predicts; ``needed``
gives the cheapest design whose predicted half-width is within the margin.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

import numpy as np
from scipy import optimize
from scipy import stats as st

from rlvr_dynamics.stats import CONFIDENCE


@dataclass(frozen=True)
class Components:
    """The variances of a two-model contrast (module docstring): each model's ``seed`` and
    ``residual`` part, and the ``problem`` part of their difference."""

    seed_a: float
    seed_b: float
    residual_a: float
    residual_b: float
    problem: float


def one_model(x: np.ndarray) -> tuple[float, float]:
    """(seed, residual) of one model's (seeds, problems) values: the residual as the mean
    square of the two-way interaction, the seed part as the variance of the seeds' means less
    the residual's share of it (at least zero)."""
    x = np.asarray(x, dtype=float)
    S, N = x.shape
    if S < 2 or N < 2:
        raise ValueError(f"a pilot needs at least 2 seeds and 2 problems, got {S} x {N}")
    inter = x - x.mean(1, keepdims=True) - x.mean(0, keepdims=True) + x.mean()
    residual = float((inter ** 2).sum() / ((S - 1) * (N - 1)))
    return max(0.0, float(x.mean(1).var(ddof=1)) - residual / N), residual


def components(a: np.ndarray, b: np.ndarray) -> Components:
    """The variances of ``a`` against ``b`` (each (seeds, problems), the same problems) from a
    pilot; problems without a value on either side are left out, as the interval leaves them."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"a and b must hold the same problems, got {a.shape[1]} and "
                         f"{b.shape[1]}")
    kept = ~(np.isnan(a).any(0) | np.isnan(b).any(0))
    a, b = a[:, kept], b[:, kept]
    (seed_a, residual_a), (seed_b, residual_b) = one_model(a), one_model(b)
    diff = a.mean(0) - b.mean(0)
    problem = float(diff.var(ddof=1)) - residual_a / len(a) - residual_b / len(b)
    return Components(seed_a, seed_b, residual_a, residual_b, max(0.0, problem))


def half_width(c: Components, seeds: int, problems: int,
               confidence: float = CONFIDENCE) -> float:
    """The half-width of ``two_sample_problems``' interval that ``c`` predicts at ``seeds`` a
    side and ``problems`` problems (the parts of the module docstring, their degrees of
    freedom by Welch-Satterthwaite)."""
    if seeds < 2 or problems < 2:
        raise ValueError(f"an interval needs at least 2 seeds and 2 problems, got {seeds} "
                         f"and {problems}")
    S, N = seeds, problems
    parts = [((c.seed_a + c.residual_a / N) / S, S - 1), ((c.seed_b + c.residual_b / N) / S, S - 1),
             ((c.problem + (c.residual_a + c.residual_b) / S) / N, N - 1)]
    var = sum(v for v, _ in parts)
    if var == 0:
        return 0.0
    df = var ** 2 / sum(v ** 2 / d for v, d in parts if v > 0)
    return float(st.t.ppf(0.5 + confidence / 2, df) * math.sqrt(var))


@dataclass(frozen=True)
class Design:
    """Seeds a side and problems, the cost (``seeds`` x ``problems``, the runs' evaluation
    grows with both) and the predicted half-width."""

    seeds: int
    problems: int
    half_width: float


def needed(c: Components, margin: float, seeds: Iterable[int], problems: Iterable[int],
           confidence: float = CONFIDENCE) -> Design | None:
    """Of the designs ``seeds`` x ``problems``, the one with the fewest seeds (a run costs
    far more than a problem), then the fewest problems, whose predicted half-width is at most
    ``margin``; None where none is."""
    for S in sorted(seeds):
        for N in sorted(problems):
            h = half_width(c, S, N, confidence)
            if h <= margin:
                return Design(S, N, h)
    return None


# --- what a pilot's variance can size --------------------------------------------------------

def variance_range(df: float, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The range within which the true variance lies, as multiples of a variance estimated
    with ``df`` degrees of freedom, at ``confidence`` (``df s^2 / sigma^2`` is chi-square with
    ``df`` degrees of freedom): a pilot of two seeds per model has one degree of freedom a
    model, two pooled over two models, and its range is about 0.27x to 39x."""
    if not df > 0:
        raise ValueError(f"df must be > 0, got {df}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    tail = (1 - confidence) / 2
    return float(df / st.chi2.ppf(1 - tail, df)), float(df / st.chi2.ppf(tail, df))


# --- group-sequential looks ----------------------------------------------------------------------
# A contrast read at looks k = 1..K, at information fractions t_k (here: seeds read / seeds at
# the last look), by statistics Z_k = S(t_k) / sqrt(t_k) of one Brownian motion S: each look's
# two-sided bound c_k is crossed (|Z_k| >= c_k, the earlier ones not) with the probability that
# the spending function allots to that look, alpha(t_k) - alpha(t_k-1) (Lan and DeMets, 1983).
# The crossing probabilities are integrated look after look on a grid (Armitage, McPherson and
# Rowe, 1969; Jennison and Turnbull, 2000, chapter 19).

GRID = 2001
"""Points of the grid on which the continuation density is carried from look to look."""


def obrien_fleming_spending(t, alpha: float = 1 - CONFIDENCE) -> np.ndarray:
    """Lan and DeMets' O'Brien-Fleming-type spending function, two-sided and symmetric: each
    side spends ``2 - 2 Phi(z_(1 - alpha/4) / sqrt(t))`` (the one-sided function at
    ``alpha / 2``), so ``alpha(t) = 4 - 4 Phi(z_(1 - alpha/4) / sqrt(t))``; all of ``alpha``
    is spent at t = 1."""
    t = np.asarray(t, dtype=float)
    if np.any((t <= 0) | (t > 1)):
        raise ValueError(f"information fractions must lie in (0, 1], got {t}")
    return 4 - 4 * st.norm.cdf(st.norm.ppf(1 - alpha / 4) / np.sqrt(t))


def _check_fractions(fractions) -> np.ndarray:
    t = np.asarray(fractions, dtype=float)
    if t.ndim != 1 or not len(t) or np.any(np.diff(t) <= 0) or t[0] <= 0 or t[-1] > 1:
        raise ValueError(f"fractions must increase within (0, 1], got {list(fractions)}")
    return t


def _crossing(density: np.ndarray, grid: np.ndarray, before: float, now: float,
              c: float) -> float:
    """P(|Z_now| >= c) from the sub-density of Z at ``before`` on ``grid`` (the paths not
    stopped yet); ``before`` = 0: Z starts at 0 with probability 1 (``density`` ignored)."""
    sd = math.sqrt(now - before)
    if before == 0:
        return float(2 * st.norm.sf(c))
    mean = grid * math.sqrt(before)
    tails = (st.norm.sf((c * math.sqrt(now) - mean) / sd)
             + st.norm.cdf((-c * math.sqrt(now) - mean) / sd))
    return float(np.trapezoid(density * tails, grid))


def _carried(density: np.ndarray, grid: np.ndarray, before: float, now: float, c: float
             ) -> tuple[np.ndarray, np.ndarray]:
    """The sub-density of Z at ``now`` on (-c, c) of the paths that have not stopped."""
    new = np.linspace(-c, c, GRID)
    sd = math.sqrt(now - before)
    if before == 0:
        return new, st.norm.pdf(new)
    kernel = st.norm.pdf((new[:, None] * math.sqrt(now) - grid[None, :] * math.sqrt(before))
                         / sd) * math.sqrt(now) / sd
    return new, np.trapezoid(kernel * density[None, :], grid, axis=1)


def crossing_probabilities(bounds, fractions) -> np.ndarray:
    """Per look, the probability under no effect that ``|Z_k|`` first crosses ``bounds[k]``
    there (two-sided bounds at information ``fractions``); their sum is the test's size."""
    t = _check_fractions(fractions)
    if len(bounds) != len(t):
        raise ValueError(f"bounds and fractions must be as long, got {len(bounds)} and {len(t)}")
    out, grid, density, before = [], np.zeros(1), np.ones(1), 0.0
    for now, c in zip(t, bounds):
        out.append(_crossing(density, grid, before, now, c))
        grid, density = _carried(density, grid, before, now, c)
        before = now
    return np.array(out)


def spending_bounds(fractions, alpha: float = 1 - CONFIDENCE,
                    spending=obrien_fleming_spending) -> np.ndarray:
    """The two-sided bounds ``c_k`` at information ``fractions`` that spend ``spending(t)``
    (default: the O'Brien-Fleming type at total ``alpha``): at each look the one whose first
    crossing has the probability the function allots to it."""
    t = _check_fractions(fractions)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    spent = np.diff(np.concatenate([[0.0], spending(t, alpha)]))
    bounds, grid, density, before = [], np.zeros(1), np.ones(1), 0.0
    for now, share in zip(t, spent):
        c = float(optimize.brentq(lambda c: _crossing(density, grid, before, now, c) - share,
                                  0.5, 12.0, xtol=1e-7))
        bounds.append(c)
        grid, density = _carried(density, grid, before, now, c)
        before = now
    return np.array(bounds)


def nominal_confidence(bound: float) -> float:
    """The confidence of a two-sided interval whose edge is ``bound`` standard errors away:
    ``2 Phi(bound) - 1`` (a look's bound read as the level of that look's interval)."""
    return float(2 * st.norm.cdf(bound) - 1)
