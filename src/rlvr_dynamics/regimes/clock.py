"""R1's clock set to the network's, and the second stage given that time (issue 51, item 3).

R1 (the toy on the model's schedule, ``toy_rungs.r1``) moves its logits with the toy's
learning rate, which acts on the logits directly; the network's logits move as its parameters
do. Their clocks differ, so R1's crossover in model steps is not the network's.

**The clock.** Over the first ``WINDOW`` updates, the change of the stepwise log-ratio
y(u) = log(pi_# / pi_d)(u) - log(pi_# / pi_d)(0) (stepwise against direct at the first
character, after u updates) is fitted by a line through the origin, y = rate u (least squares:
rate = sum u y / sum u^2). The network's rate is read from each calibration run's
first-character masses (``ladder.first_masses``), R1's from its registration run again on the
same draws (``ladder.r1_simulation``, every seed). Their ratio c = (mean network rate) / (mean
R1 rate) is how much faster the network moves than R1 (c < 1: slower); its interval is the
Student-t interval of the network runs' rates over R1's rate. The clock is read only where both
rates share a sign and R1's moves (|rate| > ``STILL``); else it *cannot calibrate*.

**The rescaled prediction.** R1's registered crossover T_1 (its Kaplan-Meier median, model
steps) on the network's clock: T = T_1 / c. Runs of at least ``HORIZON`` T steps can show
whether the second stage comes.

**The reading** (``stage_two``) of runs made to that horizon: the Kaplan-Meier median crossover
over seeds (``survival.median``, runs that did not cross censored at their last probe):

* ``SLOW``, stage 2 exists but is slow: the median is finite;
* ``STALLED``, no stage 2 in this testbed: no run crossed, every run was followed to at least
  ``HORIZON`` T, and in every run the fall had stalled (``stages.stalled``: P(stepwise) at the
  last probe no higher than at mid-run);
* ``stats.UNDECIDED``: fewer than half crossed, but some run still rising or crossed;
* ``stats.CANNOT_INFORM``: no rescaled prediction (the clock could not be read), or a run that
  did not cross ended before ``HORIZON`` T.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from rlvr_dynamics import stats, survival
from rlvr_dynamics.regimes.toy_rungs import WINDOW

HORIZON = 3.0
"""How many rescaled crossovers a run must be followed for its absence to count (issue 51:
"to at least 3x the rescaled crossover")."""
STILL = 1e-6
"""An R1 rate below this (per update, in nats) does not move: no clock can be read from it."""
SLOW, STALLED = "stage 2 exists but is slow", "no stage 2 in this testbed"
CANNOT_CALIBRATE = "cannot calibrate"


def log_ratio(masses: np.ndarray) -> np.ndarray:
    """y(u) per update after the first row of ``masses`` (rows: the start, then after each
    update; columns: direct, stepwise, guess): the change of log(pi_# / pi_d)."""
    logm = np.log(np.clip(np.asarray(masses, dtype=float), 1e-12, None))
    y = logm[:, 1] - logm[:, 0]
    return y[1:] - y[0]


def rate(masses: np.ndarray, window: int = WINDOW) -> float:
    """The least-squares slope through the origin of ``log_ratio`` on the update count over the
    first ``window`` updates of ``masses`` (NaN with none)."""
    y = log_ratio(np.asarray(masses)[:window + 1])
    u = np.arange(1, len(y) + 1, dtype=float)
    return float((u * y).sum() / (u * u).sum()) if len(y) else float("nan")


@dataclass(frozen=True)
class Clock:
    """The clock: each network run's ``rates``, R1's mean rate ``toy_rate``, the ratio
    ``estimate`` (network over R1) with its interval ``low``, ``high`` (NaN with one run), and
    ``state``: ``"read"`` or ``CANNOT_CALIBRATE`` (with ``why``)."""

    rates: tuple[float, ...]
    toy_rate: float
    estimate: float
    low: float
    high: float
    state: str
    why: str = ""


def clock(model: Sequence[np.ndarray], toy: np.ndarray, window: int = WINDOW) -> Clock:
    """The clock from the network's calibration runs (``model``: each run's first-character
    masses per update, ``ladder.first_masses``) and R1's seeds (``toy``: seeds x updates x 3,
    ``toy_schedule.simulate``'s ``early``) over their first ``window`` updates."""
    rates = np.array([rate(m, window) for m in model], dtype=float)
    toy_rate = float(np.nanmean([rate(m, window) for m in toy]))
    effect = stats.one_sample(rates[~np.isnan(rates)], 0.0)
    why = ("no calibration run" if not len(rates) or np.isnan(effect.estimate)
           else f"R1's stepwise log-ratio does not move (rate {toy_rate:.2e} per update)"
           if not abs(toy_rate) > STILL
           else "the network's early change and R1's have opposite signs"
           if np.sign(effect.estimate) != np.sign(toy_rate) else "")
    if why:
        return Clock(tuple(rates), toy_rate, float("nan"), float("nan"), float("nan"),
                     CANNOT_CALIBRATE, why)
    ends = sorted((effect.low / toy_rate, effect.high / toy_rate))
    return Clock(tuple(float(r) for r in rates), toy_rate, effect.estimate / toy_rate,
                 ends[0], ends[1], "read")


def rescaled(crossover: float, c: Clock) -> float:
    """R1's registered ``crossover`` (model steps) on the network's clock: crossover / c; NaN
    where the clock was not read; inf where R1 never crossed within its run."""
    if c.state != "read":
        return float("nan")
    return float(crossover / c.estimate)


def needed_steps(predicted: float) -> int:
    """The steps a run needs for the reading (``HORIZON`` times the rescaled crossover,
    rounded up); 0 where there is no finite prediction."""
    return int(np.ceil(HORIZON * predicted)) if np.isfinite(predicted) else 0


@dataclass(frozen=True)
class StageTwo:
    """The second stage read (module docstring): ``outcome``, the Kaplan-Meier ``median`` with
    its interval, the ``predicted`` (rescaled) crossover, the horizon the runs needed
    (``needed``), how many runs ``stalled`` and the reason where it cannot inform (``why``)."""

    outcome: str
    median: survival.Median
    predicted: float
    needed: float
    stalled: int
    why: str = ""


def stage_two(crossover: Sequence[float], last: Sequence[float], stalled: Sequence[bool],
              predicted: float) -> StageTwo:
    """The reading of runs (each run's ``crossover``, inf where none; its ``last`` probe; and
    whether its fall ``stalled``) against the rescaled ``predicted`` crossover."""
    t, c = np.asarray(crossover, dtype=float), np.asarray(last, dtype=float)
    m = survival.median(t, c)
    still = int(np.sum(stalled))
    needed = HORIZON * predicted if np.isfinite(predicted) else float("nan")
    if not np.isfinite(predicted):
        return StageTwo(stats.CANNOT_INFORM, m, predicted, needed, still,
                        "no rescaled prediction (the clock could not be read, or R1 never "
                        "crossed)")
    short = np.isinf(t) & (c < needed)
    if short.any():
        return StageTwo(stats.CANNOT_INFORM, m, predicted, needed, still,
                        f"{int(short.sum())} run(s) without a crossover ended before "
                        f"{HORIZON:g}x the rescaled crossover ({needed:.0f} steps)")
    if not m.censored:
        return StageTwo(SLOW, m, predicted, needed, still)
    if m.events == 0 and still == len(t):
        return StageTwo(STALLED, m, predicted, needed, still)
    return StageTwo(stats.UNDECIDED, m, predicted, needed, still)
