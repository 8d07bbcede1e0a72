"""The toy's rungs of the ladder and the slope that tells two mechanisms apart: what is
registered with each arm's prediction before its runs (``prediction.register``), apart from
the readings of the runs (``ladder``), so that a change to how runs are read does not touch a
registration.

* R0: the tabular toy as registered (one group a step, one Adam update, fixed rewards): its
  slope over the first updates (its dip and crossover are the registration's toy prediction);
* R1: the same toy on the model's schedule (``toy_schedule``), its dip, crossover and slope in
  the model's steps, and its slope with the groups that hold a stepwise sample left out.

**The slope.** Over the first ``WINDOW`` updates, the least-squares slope through the origin
of the change of log(pi_d / pi_#) (stepwise against direct) on the change of log(pi_# / pi_=)
(direct against the guess). In the tabular toy a group without a stepwise sample leaves the
stepwise logit where it is and moves the direct and the guess logits by equal and opposite
amounts (the group's advantages sum to zero): slope -1/2 (``TABULAR``) while the stepwise path
is not sampled. If the guess's lost mass spread over every other first character in
proportion, pi_d / pi_# would not move: slope 0 (``PROPORTIONAL``).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from rlvr_dynamics import stats, toy, toy_schedule

WINDOW = 20
"""Updates over which the slope is read: the first five of the model's steps (four updates
each), by which the guess had lost most of its mass under GRPO in the earlier builds."""

TABULAR, PROPORTIONAL = -0.5, 0.0
"""The slope of the tabular update on groups without a stepwise sample, and of proportional
spreading."""

AS_BUILT, WITHOUT = "as built", "without stepwise"
"""How a run of the model was trained: the chapter's runs, or ``TrainConfig.without_stepwise``."""


def log_changes(masses: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) per update after the first row of ``masses`` (rows: updates; columns: direct,
    stepwise, guess): x the change of log(pi_# / pi_=), y that of log(pi_d / pi_#)."""
    logm = np.log(np.clip(np.asarray(masses, dtype=float), 1e-12, None))
    x = (logm[:, 0] - logm[:, 2]) - (logm[0, 0] - logm[0, 2])
    y = (logm[:, 1] - logm[:, 0]) - (logm[0, 1] - logm[0, 0])
    return x[1:], y[1:]


def slope(masses: np.ndarray, window: int = WINDOW) -> float:
    """The least-squares slope through the origin of y on x (``log_changes``) over the first
    ``window`` updates of ``masses`` (rows: the start, then after each update); NaN where x
    does not move."""
    x, y = log_changes(np.asarray(masses)[:window + 1])
    sxx = float((x * x).sum())
    return float((x * y).sum() / sxx) if sxx > 1e-12 else float("nan")


def toy_slope(pi: np.ndarray, window: int = WINDOW) -> float:
    """The mean over seeds of each seed's ``slope`` (``pi``: seeds x (window + 1) x 3)."""
    return float(np.nanmean([slope(p, window) for p in pi]))


def dip(mean_a2: np.ndarray, per: int = 1) -> dict[str, float]:
    """The dip of a mean trajectory of pi(a2) (the start first): its depth, the lowest value
    over the start minus 1 (0: no dip), and where it lies, in steps of ``per`` updates."""
    low = int(np.argmin(mean_a2))
    return {"dip": float(mean_a2[low] / mean_a2[0] - 1), "dip step": low / per}


def r0(pi0: Sequence[float], r: Sequence[float], G: int, D: Any, seeds: int,
       updates: dict[str, dict[str, Any]]) -> dict[str, dict[str, float]]:
    """R0's slope per update (``updates``: label -> the toy's keywords): the toy of the toy
    chapter (``D``: optimizer, lr, tau) from ``pi0`` with rewards ``r`` and group size ``G``,
    ``seeds`` runs of ``WINDOW`` steps (one update each)."""
    out = {}
    for label, kw in updates.items():
        traj = toy.simulate(toy.logits(pi0), r, G=G, lr=D.lr, tau=D.tau, optimizer=D.optimizer,
                            steps=WINDOW, seeds=seeds, **kw).pi[:, 0]
        out[label] = {"slope": toy_slope(np.moveaxis(traj, 1, 0))}
    return out


def r1(pi0: Sequence[float], r: Sequence[float], share: float, G: int, groups: int,
       updates: int, epsilon: float, D: Any, steps: int, seeds: int,
       labels: Sequence[str]) -> dict[str, dict[str, float]]:
    """R1's prediction per label of ``labels`` (GRPO, GRPO-N): the toy on the model's schedule
    (``toy_schedule.simulate``, the toy chapter's Adam and tau) from ``pi0``, the direct path
    right at r(a1) / (1 - share) on the problems it can solve and never on the others, the
    stepwise path and the guess at r(a2), r(a3) on both, ``steps`` model steps: the dip of the
    mean pi(a2) and its step, the Kaplan-Meier median crossover (model steps), the share of
    seeds that crossed and the mean slope; and, for GRPO, the slope with the groups that hold a
    stepwise sample left out (``"GRPO, " + WITHOUT``)."""
    rate = r[0] / (1 - share) if share < 1 else 0.0
    easy, hard = [min(rate, 1.0), r[1], r[2]], [0.0, r[1], r[2]]
    common = dict(G=G, groups=groups, updates=updates, lr=D.lr, epsilon=epsilon, tau=D.tau,
                  steps=steps, seeds=seeds, window=min(WINDOW, steps * updates))
    out = {}
    for label in labels:
        if label not in ("GRPO", "GRPO-N"):
            continue
        s = toy_schedule.simulate(pi0, easy, hard, share, negative_only=label == "GRPO-N",
                                  **common)
        out[label] = {**dip(s.mean[:, 1], updates),
                      "crossover": stats.km_median(s.crossover, np.full(seeds, steps)),
                      "crossed": float(np.isfinite(s.crossover).mean()),
                      "slope": toy_slope(s.early)}
        if label == "GRPO":
            w = toy_schedule.simulate(pi0, easy, hard, share, without=1,
                                      **{**common, "steps": WINDOW // updates + 1,
                                         "window": WINDOW})
            out[f"GRPO, {WITHOUT}"] = {"slope": toy_slope(w.early)}
    return out
