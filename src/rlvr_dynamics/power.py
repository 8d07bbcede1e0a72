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
