"""Figure 2's four readings (Section 4.2) as checks over seeds (``stats``), from the records that
runs log (``dynamics``), for every chapter that reads trained runs:

1. all algorithms reach competitive greedy accuracy: no algorithm ends more than
   ``ACCURACY_MARGIN`` below GRPO;
2. GRPO collapses the entropy: every other algorithm ends above it;
3. under GRPO-N, GSPO and GSPO-N the entropy first falls, then rises: at the step t*
   where it is lowest (strictly after the start and before the end, picked for each seed on
   the other seeds' mean curve) it is below the base, and at the end above its value at t*;
4. under GRPO-N it ends above the base model's.

The entropy is that of the training rollouts (``ENTROPY``, Figure 2's actor entropy), the
held-out entropy of greedy completions read beside it (``HELD_OUT``). Each is a check over
seeds with a Student-t interval and a margin declared here (``ACCURACY_MARGIN``,
``ENTROPY_MARGIN``); ``VERDICT_CLAIMS`` says which claim of ``verdicts`` each decides.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rlvr_dynamics import stats
from rlvr_dynamics.rl.dynamics import curve
from rlvr_dynamics.rl.runs import load_dynamics
from rlvr_dynamics.verdicts import PAPER_ALGORITHMS


def dynamics_of(runs: dict[Any, list[Path]]) -> dict[Any, list[list[dict[str, Any]]]]:
    """label -> one logged record list per seed (``rl.dynamics.records``)."""
    return {label: [load_dynamics(f) for f in folders] for label, folders in runs.items()}


def end_values(dynamics: dict[str, list[list[dict[str, Any]]]], key: str
               ) -> dict[str, np.ndarray]:
    """label -> the last value of ``key`` as the readings take it (``reading_curve``), one per
    seed."""
    return {label: reading_curve(runs, key)[1][:, -1] for label, runs in dynamics.items()}


ACCURACY_MARGIN = 0.05
"""Reading 1: how far below GRPO's final greedy accuracy still counts as competitive."""

ENTROPY_MARGIN = 0.10
"""Readings 2-4: the smallest entropy difference that counts, as a fraction of the base's
token entropy in the quantity read (declared before the runs; the paper's Table 4 gaps between
GRPO and GRPO-N are 30-60 % of its base's token entropy, see ``paper_effects``)."""

ENTROPY = "actor_entropy"
"""Readings 2-4 read the token entropy of the training rollouts (Figure 2's actor entropy,
samples of the policy at temperature 1, logged by the trainer every step)."""

HELD_OUT = "heldout_entropy"
"""The held-out token entropy of greedy completions, read beside ``ENTROPY`` and not deciding:
a switch from the short direct answer to the long stepwise chain lowers its per-token mean by
itself, whatever the policy's sharpness."""

ROLLOUT_WINDOW = 5
"""``ENTROPY`` is one batch of rollouts per step: read as the first step's (the base's own
rollouts, sampled before any update), then means over windows of this many steps."""


def reading_curve(runs: list[list[dict[str, Any]]], key: str) -> tuple[np.ndarray, np.ndarray]:
    """(steps, values[seed, point]) of ``key`` as the readings take it: ``ENTROPY`` per
    ``ROLLOUT_WINDOW`` (a window's steps: their mean), any other key at every logged step."""
    steps, v = curve(runs, key)
    if key != ENTROPY or v.shape[1] < 2:
        return steps, v
    starts = range(1, v.shape[1], ROLLOUT_WINDOW)
    return (np.array([steps[0]] + [steps[i:i + ROLLOUT_WINDOW].mean() for i in starts]),
            np.column_stack([v[:, 0]] + [v[:, i:i + ROLLOUT_WINDOW].mean(1) for i in starts]))


def _later_minimum(h: np.ndarray) -> np.ndarray:
    """Per seed, the step index t* of the lowest entropy *after the start and before the end*,
    chosen on the other seeds' mean curve (leave one seed out), so that a seed's fall and rise
    are not measured at a step picked for being low on that seed's own noise. With one seed,
    its own curve."""
    inner = h[:, 1:-1]
    if len(h) == 1:
        return np.array([1 + int(np.argmin(inner[0]))])
    return np.array([1 + int(np.argmin(np.delete(inner, i, 0).mean(0))) for i in range(len(h))])


def readings(dynamics: dict[str, list[list[dict[str, Any]]]], entropy: str = ENTROPY
             ) -> pd.DataFrame:
    """The four readings of Figure 2 as checks over seeds (``stats``): ``dynamics``: algorithm
    label -> one record list per seed (``dynamics.records``; algorithms other than the paper's,
    ``verdicts.PAPER_ALGORITHMS``, are left out); readings 2-4 read ``entropy``
    (``reading_curve``). Every outcome of each check is reachable: reading 3 measures the fall
    and the rise at a point strictly between the start and the end."""
    dynamics = {label: runs for label, runs in dynamics.items() if label in PAPER_ALGORITHMS}
    end = {key: end_values(dynamics, key) for key in ("greedy_accuracy", entropy)}
    base_h = float(np.mean([reading_curve(runs, entropy)[1][:, 0].mean()
                            for runs in dynamics.values()]))
    margin = ENTROPY_MARGIN * base_h
    rows = []

    def add(reading: str, quantity: str, effect: stats.Effect, claim: str) -> None:
        rows.append((reading, quantity, effect.estimate, effect.low, effect.high, effect.margin,
                     claim, effect.verdict))

    others = [label for label in dynamics if label != "GRPO"]
    if "GRPO" in dynamics:
        for label in others:
            add("1. competitive greedy accuracy", f"{label} - GRPO, end",
                stats.two_sample(end["greedy_accuracy"][label], end["greedy_accuracy"]["GRPO"],
                                 ACCURACY_MARGIN, stats.NON_INFERIORITY),
                f"> -{ACCURACY_MARGIN:g}")
        for label in others:
            add("2. GRPO ends with the lowest entropy", f"{label} - GRPO, end",
                stats.two_sample(end[entropy][label], end[entropy]["GRPO"], margin),
                f"> +{margin:.3f}")
    for label in others:
        steps, h = reading_curve(dynamics[label], entropy)
        if h.shape[1] < 3:
            continue  # no point strictly between the start and the end
        t = _later_minimum(h)
        low = h[np.arange(len(h)), t]
        at = ", ".join(f"{steps[i]:g}" for i in sorted(set(t)))
        add("3. entropy falls, then rises", f"{label}: start - lowest (step {at})",
            stats.one_sample(h[:, 0] - low, margin), f"> +{margin:.3f}")
        add("3. entropy falls, then rises", f"{label}: end - lowest (step {at})",
            stats.one_sample(h[:, -1] - low, margin), f"> +{margin:.3f}")
    if "GRPO-N" in dynamics:
        _, h = reading_curve(dynamics["GRPO-N"], entropy)
        add("4. GRPO-N ends above the base", "GRPO-N: end - base",
            stats.one_sample(h[:, -1] - h[:, 0], margin), f"> +{margin:.3f}")
    return pd.DataFrame(rows, columns=["reading", "quantity", "estimate", "low", "high",
                                       "margin", "paper", "verdict"]
                        ).set_index(["reading", "quantity"])


VERDICT_CLAIMS = (("competitive", "greedy_accuracy", ("1.",)),
                  ("entropy_collapse", ENTROPY, ("2.",)),
                  ("entropy_recovery", ENTROPY, ("3.", "4.")))
"""The claims of ``verdicts`` that the readings decide: the claim, the quantity whose end
values are ours, and the readings (by number) that are its checks (the entropy ones read
beside them on ``HELD_OUT``, not deciding)."""


def verdict_rows(dynamics: dict[str, list[list[dict[str, Any]]]]) -> pd.DataFrame:
    """Every check of the claims that the readings decide (``VERDICT_CLAIMS``), one row each:
    its claim, the reading and quantity (``readings``' index), the entropy it reads (``read``:
    ``ENTROPY``, or ``HELD_OUT`` for the entropy readings taken again on the held-out set), the
    estimate and its interval, the margin, the side the paper's claim needs (``paper``), the
    outcome, and whether it votes on the claim (the readings on ``ENTROPY`` and the accuracy
    do; those on ``HELD_OUT`` are shown beside them). A claim none of whose readings could be
    taken has no rows."""
    tables = {key: readings(dynamics, key).reset_index() for key in (ENTROPY, HELD_OUT)}
    parts = []
    for claim, key, prefixes in VERDICT_CLAIMS:
        for read in (ENTROPY, HELD_OUT) if key == ENTROPY else (ENTROPY,):
            part = tables[read][tables[read]["reading"].str.startswith(prefixes)]
            parts.append(part.assign(claim=claim, read=read, votes=read == ENTROPY))
    rows = pd.concat(parts, ignore_index=True).rename(columns={"verdict": "outcome"})
    decided = rows.groupby("claim")["votes"].transform("any")
    return rows[decided][["claim", "reading", "quantity", "read", "estimate", "low", "high",
                          "margin", "paper", "outcome", "votes"]].reset_index(drop=True)
