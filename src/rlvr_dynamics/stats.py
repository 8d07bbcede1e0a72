"""Checks of a claim over seeds: Student-t intervals, a minimum effect size, and a verdict
that can come out either way.

A check is an *effect*: a mean over seeds (of per-seed values, or a difference of two
independent means), signed so that a positive effect is the paper's direction, with its
Student-t confidence interval at ``CONFIDENCE`` (``n - 1`` degrees of freedom for one sample,
Welch-Satterthwaite for two) and a *margin* declared before the run: the smallest effect that
counts. The verdict of a *superiority* check ("a is above b"):

* ``replicates``: the whole interval lies above ``+margin``;
* ``opposite``: the whole interval lies below ``-margin``;
* ``no effect within the margin``: the whole interval lies inside ``(-margin, +margin)``;
* ``inconclusive``: the interval is too wide to say which;
* ``inconclusive (too few seeds)``: fewer than two seeds (no interval);
* ``cannot inform``: decided before the check is scored, when its measurement could not have
  moved either way (a base at the ceiling or the floor of the quantity, a setting without the
  path the claim is about); such a check does not vote (``verdicts.combine``).

A *non-inferiority* check ("a holds b": a - b > -margin) replicates when the whole interval
lies above ``-margin`` and is opposite when it lies below ``-margin``; being within the margin
is what it claims. With every seed saturated the interval has zero width, and the margin alone
decides: a difference smaller than the margin is no effect, however consistent.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as st

CONFIDENCE = 0.95
"""The level of every interval in the book's verdicts."""

REPLICATES = "replicates"
OPPOSITE = "opposite"
NO_EFFECT = "no effect within the margin"
UNDECIDED = "inconclusive"
FEW_SEEDS = "inconclusive (too few seeds)"
CANNOT_INFORM = "cannot inform"
CHECK_VERDICTS = (REPLICATES, OPPOSITE, NO_EFFECT, UNDECIDED, FEW_SEEDS, CANNOT_INFORM)

SUPERIORITY, NON_INFERIORITY = "superiority", "non-inferiority"

BOUNDS = (5.0, 95.0)
"""A share (per cent) whose starting value lies outside these bounds sits at its floor or its
ceiling: a check that needs it to move from there either way cannot inform (``outside``)."""


def bound(value: float, bounds: tuple[float, float] = BOUNDS) -> str:
    """Where a share (per cent) sits: "floor" below ``bounds``, "ceiling" above, else ""."""
    return "floor" if value < bounds[0] else "ceiling" if value > bounds[1] else ""


def outside(value: float, what: str, bounds: tuple[float, float] = BOUNDS) -> str:
    """Why a check on a share (per cent) that starts at ``value`` cannot inform: "" when the
    value lies within ``bounds``, else a phrase naming ``what`` and where it sits."""
    side = bound(value, bounds)
    return (f"{what} is {value:.1f} %, at its {side} (outside {bounds[0]:g}-{bounds[1]:g} %)"
            if side else "")


@dataclass(frozen=True)
class Effect:
    """An effect over seeds: its estimate, the half-width of its interval (NaN with fewer than
    two seeds), the degrees of freedom, the declared margin and the kind of check."""

    estimate: float
    half_width: float
    df: float
    margin: float
    kind: str = SUPERIORITY

    def __post_init__(self) -> None:
        if self.kind not in (SUPERIORITY, NON_INFERIORITY):
            raise ValueError(f"kind must be {SUPERIORITY!r} or {NON_INFERIORITY!r}, got {self.kind!r}")
        if not self.margin >= 0:
            raise ValueError(f"margin must be >= 0, got {self.margin}")

    @property
    def low(self) -> float:
        return self.estimate - self.half_width

    @property
    def high(self) -> float:
        return self.estimate + self.half_width

    @property
    def verdict(self) -> str:
        if math.isnan(self.half_width):
            return FEW_SEEDS
        m = self.margin
        if self.kind == NON_INFERIORITY:
            return REPLICATES if self.low > -m else OPPOSITE if self.high < -m else UNDECIDED
        if self.low > m:
            return REPLICATES
        if self.high < -m:
            return OPPOSITE
        if -m < self.low and self.high < m:
            return NO_EFFECT
        return UNDECIDED

    def text(self, fmt: str = "{:+.3f}") -> str:
        """``+0.123 [+0.100, +0.146]`` (the interval; none with one seed)."""
        if math.isnan(self.half_width):
            return fmt.format(self.estimate) + " (one seed: no interval)"
        return (f"{fmt.format(self.estimate)} [{fmt.format(self.low)}, "
                f"{fmt.format(self.high)}]")


def one_sample(values, margin: float, kind: str = SUPERIORITY,
               confidence: float = CONFIDENCE) -> Effect:
    """The mean of per-seed values (e.g. paired differences) and its Student-t interval."""
    x = np.asarray(values, dtype=float)
    n = len(x)
    if n < 2:
        return Effect(float(x.mean()) if n else float("nan"), float("nan"), float("nan"),
                      margin, kind)
    se = x.std(ddof=1) / math.sqrt(n)
    return Effect(float(x.mean()), float(st.t.ppf(0.5 + confidence / 2, n - 1) * se), n - 1,
                  margin, kind)


def two_sample(a, b, margin: float, kind: str = SUPERIORITY,
               confidence: float = CONFIDENCE) -> Effect:
    """mean(a) - mean(b) of two independent sets of seeds, with Welch's interval (its
    Welch-Satterthwaite degrees of freedom; where both variances are zero, n_a + n_b - 2)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    d = float(a.mean() - b.mean())
    if min(len(a), len(b)) < 2:
        return Effect(d, float("nan"), float("nan"), margin, kind)
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    se = math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1)) if se > 0 \
        else len(a) + len(b) - 2
    return Effect(d, float(st.t.ppf(0.5 + confidence / 2, df) * se), float(df), margin, kind)


def two_sample_problems(a, b, margin: float, kind: str = SUPERIORITY,
                        confidence: float = CONFIDENCE) -> Effect:
    """mean(a) - mean(b) of two models measured on the same problems, ``a`` and ``b`` arrays
    (seeds, problems), with an interval that covers the problems too: Welch's over the seeds'
    means (``two_sample``) plus the variance over problems of the paired difference (each
    problem's mean over seeds, a's minus b's) over their number, degrees of freedom by
    Welch-Satterthwaite over the three parts. The problem part also holds a share of the seed
    noise, so the interval errs wide. Problems without a value (NaN) on either side are left
    out. With one problem, ``two_sample``'s; with fewer than two seeds on a side, no
    interval."""
    a, b = np.atleast_2d(np.asarray(a, dtype=float)), np.atleast_2d(np.asarray(b, dtype=float))
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"a and b must hold the same problems, got {a.shape[1]} and {b.shape[1]}")
    kept = ~(np.isnan(a).any(0) | np.isnan(b).any(0))
    a, b = a[:, kept], b[:, kept]
    seeds = two_sample(a.mean(1), b.mean(1), margin, kind, confidence)
    problems = a.shape[1]
    if math.isnan(seeds.half_width) or problems < 2:
        return seeds
    na, nb = len(a), len(b)
    parts = [(a.mean(1).var(ddof=1) / na, na - 1), (b.mean(1).var(ddof=1) / nb, nb - 1),
             ((a.mean(0) - b.mean(0)).var(ddof=1) / problems, problems - 1)]
    var = sum(v for v, _ in parts)
    df = var ** 2 / sum(v ** 2 / d for v, d in parts) if var > 0 else na + nb - 2
    return Effect(seeds.estimate, float(st.t.ppf(0.5 + confidence / 2, df) * math.sqrt(var)),
                  float(df), margin, kind)


def leave_one_out(curves: pd.DataFrame) -> pd.DataFrame:
    """``curves``: a frame with one column per seed and one row per step (the steps
    every seed has, the start first). Per seed: the step after the start at which the mean of
    the *other* seeds is lowest, and this seed's value there, so that a seed's own noise does
    not choose the step it is read at (NaN with fewer than two seeds: none to choose by)."""
    curves = curves.dropna().sort_index()
    later = curves.iloc[1:]
    rows = {}
    for seed in curves.columns:
        others = later.drop(columns=seed)
        if others.shape[1] == 0 or later.empty:
            rows[seed] = {"step": np.nan, "value": np.nan}
            continue
        at = others.mean(axis=1).idxmin()
        rows[seed] = {"step": float(at), "value": float(later.loc[at, seed])}
    return pd.DataFrame(rows, index=["step", "value"]).T


def km_median(times, last) -> float:
    """The Kaplan-Meier median of event times over runs: ``times`` each run's time of the
    event (inf: none within the run), ``last`` each run's last observation (where a run
    without the event is censored; a run is at risk up to it, inclusive). The first event
    time at which the estimated share of runs still without it falls to 1/2 or below; inf
    where it never does within the runs (the median is censored), so that runs that never
    reached the event count rather than drop out."""
    t, c = np.asarray(times, dtype=float), np.asarray(last, dtype=float)
    if t.shape != c.shape or not len(t):
        raise ValueError(f"times and last must be non-empty and of one length, got "
                         f"{t.shape} and {c.shape}")
    observed = np.where(np.isfinite(t), t, c)
    survival = 1.0
    for at in np.unique(t[np.isfinite(t)]):
        risk = int((observed >= at).sum())
        survival *= 1 - int((t == at).sum()) / risk
        if survival <= 0.5:
            return float(at)
    return float("inf")
