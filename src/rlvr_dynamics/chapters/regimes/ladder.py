"""The ladder from the tabular toy to the full model: where the first stage goes inside a network.

The toy, given an arm's measured start, dips pi(a2) and the language model did not. Each rung
between them adds one thing the toy leaves out, and each is predicted and registered before
the runs it judges (``prediction.register`` holds what is here):

* R0, the tabular toy as registered (one group a step, one Adam update, fixed rewards);
* R1, the same toy on the model's schedule (``toy_schedule``: its groups a step, updates a
  batch, per-problem Bernoulli rewards, std-scaled advantages, clipping), times in the
  model's steps;
* R4, the full model as built (the chapter's runs).

(R2, a trained first-character readout on a frozen body, R3, the full model trained on the
first character alone, and R5, a base whose paths share no character, are the issue's later
rungs; this module reads any rung whose runs exist.)

**The statistic that tells the mechanisms apart.** Over the first ``WINDOW`` updates, the
slope of the change of log(pi_d / pi_#) (stepwise against direct) on the change of
log(pi_# / pi_=) (direct against the guess), through the origin (``slope``). In the tabular
toy a group without a stepwise sample leaves the stepwise logit where it is and moves the
direct and the guess logits by equal and opposite amounts (the group's advantages sum to
zero), so the slope is -1/2 (``TABULAR``) while the stepwise path is not sampled; if the
guess's lost mass spread over every other first character in proportion, pi_d / pi_# would
not move: slope 0 (``PROPORTIONAL``). ``mechanism`` reads an interval over seeds against the
two. The sharper test trains on the groups that hold no stepwise sample alone
(``TrainConfig.without_stepwise``): there the tabular stepwise logit cannot move at all, so any
change of pi_d relative to pi_# is the network's own.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from rlvr_dynamics import stats, toy, toy_schedule
from rlvr_dynamics.chapters.regimes.scenario import FALL_MARGIN
from rlvr_dynamics.chapters.regimes.toy_mapping import OWN

WINDOW = 20
"""Updates over which the slope is read: the first five of the model's steps (four updates
each), by which the guess had lost most of its mass under GRPO in the earlier builds."""

TABULAR, PROPORTIONAL = -0.5, 0.0
"""The slope of the tabular update on groups without a stepwise sample, and of proportional
spreading."""

BAND = 0.25
"""Half the distance between the two slopes: an interval within ``BAND`` of one of them (and
so away from the other) decides for it."""

AS_BUILT, WITHOUT = "as built", "without stepwise"
"""How a run of the model was trained: the chapter's runs, or ``TrainConfig.without_stepwise``."""

TOY, SPREAD, GAINS, BEYOND, BETWEEN = ("the toy's (tabular)", "proportional spreading",
                                       "the stepwise path gains on the direct one",
                                       "beyond the toy's", "cannot tell")


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


def mechanism(effect: stats.Effect) -> str:
    """Which mechanism a slope's interval over seeds (``effect``) shows: the toy's where it
    lies within ``BAND`` of ``TABULAR``, proportional spreading within ``BAND`` of
    ``PROPORTIONAL``, the stepwise path gaining where it lies wholly above ``PROPORTIONAL +
    BAND``, beyond the toy wholly below ``TABULAR - BAND``; else (or without an interval)
    ``BETWEEN``."""
    lo, hi = effect.low, effect.high
    if np.isnan(lo) or np.isnan(hi):
        return BETWEEN
    for centre, name in ((TABULAR, TOY), (PROPORTIONAL, SPREAD)):
        if centre - BAND < lo and hi < centre + BAND:
            return name
    if lo > PROPORTIONAL + BAND:
        return GAINS
    if hi < TABULAR - BAND:
        return BEYOND
    return BETWEEN


def first_masses(run: Sequence[dict], regular: int) -> np.ndarray:
    """One run's first-character masses per update (``rl.probe.FirstCharacters``' records),
    means over the first ``regular`` probed problems (those drawn as the test split lists them:
    the toy's pi0 is read from them): rows the updates, columns direct, stepwise, guess."""
    rows = sorted((r["update"], r["first"]) for r in run if "first" in r)
    return np.array([[np.mean(f[k][:regular]) for k in ("direct", "stepwise", "guess")]
                     for _, f in rows])


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


def measured_slopes(runs: dict[tuple, list[dict]], regular: int) -> pd.DataFrame:
    """Per run (key: regime, algorithm label, seed, and how: ``AS_BUILT`` or ``WITHOUT``),
    the slope over its first ``WINDOW`` updates (``first_masses``); runs without
    the instrument are left out."""
    rows = []
    for (regime, label, seed, how), run in runs.items():
        m = first_masses(run, regular)
        if len(m) > 1:
            rows.append({"regime": regime, "algorithm": label, "seed": seed, "how": how,
                         "slope": slope(m)})
    return pd.DataFrame(rows, columns=["regime", "algorithm", "seed", "how", "slope"])


def slope_checks(slopes: pd.DataFrame) -> pd.DataFrame:
    """Per regime, algorithm and how (``measured_slopes``' rows): the mean slope over seeds,
    its interval (and the ``stats.Effect`` itself) and the mechanism it shows
    (``mechanism``)."""
    rows = []
    for (regime, label, how), g in slopes.groupby(["regime", "algorithm", "how"], sort=False):
        e = stats.one_sample(g["slope"].to_numpy(), BAND)
        rows.append({"regime": regime, "algorithm": label, "how": how, "seeds": len(g),
                     "slope": e.estimate, "low": e.low, "high": e.high, "effect": e,
                     "mechanism": mechanism(e)})
    return pd.DataFrame(rows, columns=["regime", "algorithm", "how", "seeds", "slope", "low",
                                       "high", "effect", "mechanism"])


LADDER = ("R0", "R1", "R2", "R3", "R4", "R5")
"""Every rung of the ladder, in order (module docstring)."""
RUNGS = ("R0", "R1", "R4")
"""The rungs this chapter reads, in order."""
YES, NO = "yes", "no"


def toy_stage(depth: float) -> str:
    """Whether a toy rung's dip (relative, negative: a fall) is a first stage: a fall of more
    than ``scenario.FALL_MARGIN``."""
    return YES if depth < -FALL_MARGIN else NO


def lm_stage(fall: stats.Effect) -> str:
    """Whether the model's fall over seeds is a first stage: ``YES`` where the stage-1 check
    replicates, ``NO`` where it shows no effect or the opposite, else its verdict."""
    return {stats.REPLICATES: YES, stats.NO_EFFECT: NO, stats.OPPOSITE: NO}.get(
        fall.verdict, fall.verdict)


def rung_rows(record: dict[str, Any], runs: pd.DataFrame, checks: pd.DataFrame, arm: str
              ) -> pd.DataFrame:
    """One arm's ladder, per rung and algorithm: the dip of P(stepwise) (relative; the model's
    at the leave-one-out step, ``stages.stages``' ``fall``, with its interval), where it lies,
    the crossover (the toy's median in its own steps for R0, in the model's steps for R1, the
    model's Kaplan-Meier median over seeds for R4), the slope (R4: mean over seeds with its
    interval, ``checks``: ``slope_checks``' rows) and whether the rung shows a first stage;
    R0 and R1 from the registration ``record``, R4 from the arm's ``runs`` (``stages``'
    rows)."""
    rows = []
    lad = record["ladder"]
    for label in ("GRPO", "GRPO-N"):
        toy0, toy1 = record["predictions"][OWN].get(label), lad["R1"].get(label)
        if toy0 is not None:
            rows.append({"rung": "R0", "algorithm": label, "dip": toy0["toy dip"],
                         "dip interval": None, "dip step": toy0["toy dip step"],
                         "crossover": toy0["toy expansion"], "slope": lad["R0"][label]["slope"],
                         "slope interval": None, "first stage": toy_stage(toy0["toy dip"])})
        if toy1 is not None:
            rows.append({"rung": "R1", "algorithm": label, "dip": toy1["dip"],
                         "dip interval": None, "dip step": toy1["dip step"],
                         "crossover": toy1["crossover"], "slope": toy1["slope"],
                         "slope interval": None, "first stage": toy_stage(toy1["dip"])})
        mine = runs[(runs["regime"] == arm) & (runs["algorithm"] == label)]
        if mine.empty:
            continue
        fall = stats.one_sample(mine["fall"].to_numpy(), FALL_MARGIN)
        c = checks[(checks["regime"] == arm) & (checks["algorithm"] == label)
                   & (checks["how"] == AS_BUILT)]
        rows.append({"rung": "R4", "algorithm": label, "dip": -fall.estimate,
                     "dip interval": (-fall.high, -fall.low),
                     "dip step": float(np.median(mine["fall step"])),
                     "crossover": stats.km_median(mine["crossover"], mine["last step"]),
                     "slope": float(c["slope"].iloc[0]) if len(c) else np.nan,
                     "slope interval": (float(c["low"].iloc[0]), float(c["high"].iloc[0]))
                     if len(c) else None,
                     "first stage": lm_stage(fall)})
    return pd.DataFrame(rows, columns=["rung", "algorithm", "dip", "dip interval", "dip step",
                                       "crossover", "slope", "slope interval", "first stage"])


def turns(rows: pd.DataFrame, algorithm: str) -> tuple[str, str] | None:
    """Where ``algorithm``'s first stage turns along the ladder (``rung_rows``, ``RUNGS``'
    order): (the first rung whose reading, ``YES`` or ``NO``, differs from the first rung's,
    that reading); None where every decided rung reads alike. A rung whose check is undecided
    is passed over."""
    readings = [(rung, stage.iloc[0]) for rung in RUNGS
                if not (stage := rows[(rows["rung"] == rung)
                                      & (rows["algorithm"] == algorithm)]["first stage"]).empty
                and stage.iloc[0] in (YES, NO)]
    return next(((rung, r) for rung, r in readings[1:] if r != readings[0][1]), None)
