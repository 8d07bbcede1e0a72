"""The dip of a path's mass over seeds, read on the log scale: one statistic for the toy and
the language model (issue 51).

A *dip* is the fall of a mass m(t) (the rare path's: P(stepwise) on the rare-only problems in
the model, pi(a2) in the toy) below its start, read at its lowest probe t*. Given one curve per
seed at common probes (rows the probes, the start first; columns the seeds):

* each value is floored at ``FLOOR`` (a mass of 0 has no logarithm: the probe rounds every
  problem's path mass to six decimals, ``rl.probe``, so a mass below 1e-6 is below what it can
  tell apart from 0), and each seed's curve is divided by its start: r_s(t) = m_s(t) / m_s(0);
* each seed is read at the probe t*_s, after the start, at which the *other* seeds' mean of
  log r is lowest (leave one out, as ``stats.leave_one_out`` does on the linear scale), so
  that a seed's own noise does not pick its deepest point;
* the dip is the geometric mean of r_s(t*_s) over the n seeds, minus 1: exp(mean_s log r_s)
  - 1, with the Student-t interval of the mean log ratio (n - 1 degrees of freedom,
  ``stats.CONFIDENCE``) turned back the same way, exp(mean ± t se) - 1, so that the interval
  lies inside (-100 %, inf) whatever the spread;
* beside it, each seed's value (r_s - 1), how many seeds fell (r_s < 1) and rose (r_s > 1),
  and how many sat at the floor;
* the dip is *censored* when it is a fall and the pooled curve (the geometric mean of r over
  every seed) is lowest at the last common probe: the fall had not bottomed out when the run
  ended, so its depth and step are bounds, not the dip's.

With fewer than two seeds there is no leave-one-out step and no interval (NaN), as in
``stats.leave_one_out``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as st

from rlvr_dynamics.stats import CONFIDENCE

FLOOR = 1e-6
"""The smallest mass read as such: the probe's rounding unit (``rl.probe`` keeps six decimals
of every problem's path mass); a mass below it, 0 included, is read as ``FLOOR``."""


@dataclass(frozen=True)
class Dip:
    """A dip over seeds (module docstring): ``estimate`` the geometric mean of the ratios minus
    1 (-0.5: halved), ``low``, ``high`` its interval; ``mean_log`` and ``half_width`` the mean
    log ratio and its interval's half-width; ``values`` each seed's ratio minus 1, read at
    ``steps``; ``fell``, ``rose`` the seeds below and above their start; ``floored`` the seeds
    whose mass at t* sat at ``FLOOR``; ``step`` where the pooled curve is lowest, ``last`` the
    last common probe, ``censored`` a fall still at its lowest there."""

    estimate: float
    low: float
    high: float
    mean_log: float
    half_width: float
    values: tuple[float, ...]
    steps: tuple[float, ...]
    fell: int
    rose: int
    floored: int = 0
    step: float = float("nan")
    last: float = float("nan")
    censored: bool = False

    @property
    def seeds(self) -> int:
        return len(self.values)


def over_seeds(log_ratios, steps=None, floored: int = 0, step: float = float("nan"),
               last: float = float("nan"), censored: bool = False,
               confidence: float = CONFIDENCE) -> Dip:
    """The statistic of the module docstring from each seed's log ratio log r_s (NaN: a seed
    without a reading, left out) read at ``steps``: the geometric mean minus 1, its interval
    from the Student-t interval of the mean log ratio, the values and the sign count."""
    x = np.asarray(log_ratios, dtype=float)
    at = np.full(len(x), np.nan) if steps is None else np.asarray(steps, dtype=float)
    keep = ~np.isnan(x)
    x, at = x[keep], at[keep]
    n = len(x)
    mean = float(x.mean()) if n else float("nan")
    half = (float(st.t.ppf(0.5 + confidence / 2, n - 1) * x.std(ddof=1) / math.sqrt(n))
            if n >= 2 else float("nan"))
    return Dip(math.expm1(mean), math.expm1(mean - half), math.expm1(mean + half), mean, half,
               tuple(float(v) for v in np.expm1(x)), tuple(float(s) for s in at),
               int((x < 0).sum()), int((x > 0).sum()), int(floored), float(step), float(last),
               bool(censored and mean < 0))


def log_ratios(mass: pd.DataFrame, floor: float = FLOOR) -> pd.DataFrame:
    """log(m_s(t) / m_s(0)) per probe (rows, the start first) and seed (columns), each mass
    floored at ``floor``; only the probes every seed has."""
    m = mass.dropna().sort_index().astype(float).clip(lower=floor)
    return np.log(m / m.iloc[0])


def lowest_steps(logr: pd.DataFrame) -> pd.Series:
    """Per seed (``logr``: ``log_ratios``), the probe after the start at which the mean of the
    *other* seeds' log ratios is lowest (the first such probe; NaN with fewer than two seeds)."""
    later = logr.iloc[1:]
    n = logr.shape[1]
    if n < 2 or later.empty:
        return pd.Series(np.nan, index=logr.columns)
    others = (later.to_numpy().sum(1, keepdims=True) - later.to_numpy()) / (n - 1)
    return pd.Series(later.index.to_numpy(dtype=float)[others.argmin(0)], index=logr.columns)


def per_seed(mass: pd.DataFrame, floor: float = FLOOR) -> tuple[pd.DataFrame, float, float]:
    """Each seed's reading of per-seed mass curves (``mass``: rows the probes, the start first;
    columns the seeds; absolute masses): a frame indexed by seed with its ``log ratio`` (NaN
    with fewer than two seeds), the ``step`` it was read at (``lowest_steps``) and whether its
    mass there sat at the floor (``floored``); then the probe where the pooled curve (the mean
    log ratio over seeds) is lowest after the start, and the last common probe."""
    logr = log_ratios(mass, floor)
    steps = lowest_steps(logr)
    rows = {seed: {"log ratio": float(logr.loc[s, seed]) if np.isfinite(s) else np.nan,
                   "step": s,
                   "floored": bool(np.isfinite(s) and mass.loc[s, seed] < floor)}
            for seed, s in steps.items()}
    pooled = logr.iloc[1:].mean(axis=1)
    step = float(pooled.idxmin()) if len(pooled) else float("nan")
    last = float(logr.index[-1]) if len(logr) else float("nan")
    return (pd.DataFrame.from_dict(rows, orient="index", columns=["log ratio", "step", "floored"]),
            step, last)


def dip(mass: pd.DataFrame, floor: float = FLOOR, confidence: float = CONFIDENCE) -> Dip:
    """The dip of per-seed mass curves (``mass``: rows the probes, the start first; columns the
    seeds; absolute masses, not relative), as the module docstring reads it (``per_seed``,
    then ``over_seeds``)."""
    seeds, step, last = per_seed(mass, floor)
    return over_seeds(seeds["log ratio"], seeds["step"], int(seeds["floored"].sum()), step,
                      last, step == last, confidence)
