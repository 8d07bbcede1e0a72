"""The paper's four readings of Figure 2 (Section 4.2), checked on runs over several seeds.

1. all algorithms reach competitive greedy accuracy: no algorithm ends more than ``TOLERANCE``
   below GRPO;
2. GRPO collapses the held-out entropy: every other algorithm ends above it;
3. under GRPO-N, GSPO and GSPO-N the held-out entropy first falls, then rises: at the step t*
   where the seed-mean curve is lowest (before the last step) it is below the base, and at the
   end above its value at t*;
4. under GRPO-N it ends above the base model's.

Each reading is a difference of means with a band of two standard errors over seeds; it
*holds* when the whole band is on the paper's side, *fails* when the whole band is on the other
side, and is *within noise* otherwise (always, with one seed). Reading 3 picks t* from the same
runs, which favours a rise; that bias is one reason it asks for a band clear of zero.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from rlvr_dynamics.training.dynamics import curve

TOLERANCE = 0.05
"""How far below GRPO's greedy accuracy still counts as competitive (reading 1)."""


def band(diffs: np.ndarray) -> float:
    """Two standard errors of the mean of per-seed values (NaN with one seed)."""
    return 2 * diffs.std(ddof=1) / len(diffs) ** 0.5 if len(diffs) > 1 else float("nan")


def two_sample_band(a: np.ndarray, b: np.ndarray) -> float:
    """Two standard errors of a difference of two independent means."""
    if min(len(a), len(b)) < 2:
        return float("nan")
    return 2 * (a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b)) ** 0.5


def verdict(mean: float, width: float, threshold: float = 0.0) -> str:
    """'holds' if mean - width > threshold, 'fails' if mean + width < threshold."""
    if np.isnan(width):
        return "within noise"
    if mean - width > threshold:
        return "holds"
    if mean + width < threshold:
        return "fails"
    return "within noise"


def readings(dynamics: dict[str, list[list[dict[str, Any]]]]) -> pd.DataFrame:
    """``dynamics``: algorithm label -> one record list per seed (``dynamics.records``)."""
    end = {label: {key: curve(runs, key)[1][:, -1] for key in ("greedy_accuracy",
                                                             "heldout_entropy")}
           for label, runs in dynamics.items()}
    rows = []
    if "GRPO" in dynamics:
        grpo = end["GRPO"]
        for label in dynamics:
            if label == "GRPO":
                continue
            a, b = end[label]["greedy_accuracy"], grpo["greedy_accuracy"]
            d, w = a.mean() - b.mean(), two_sample_band(a, b)
            rows.append(("1. competitive greedy accuracy", f"{label} - GRPO, end", d, w,
                         f"> -{TOLERANCE}", verdict(d, w, -TOLERANCE)))
        for label in dynamics:
            if label == "GRPO":
                continue
            a, b = end[label]["heldout_entropy"], grpo["heldout_entropy"]
            d, w = a.mean() - b.mean(), two_sample_band(a, b)
            rows.append(("2. GRPO ends with the lowest entropy", f"{label} - GRPO, end", d, w,
                         "> 0", verdict(d, w)))
    for label, runs in dynamics.items():
        if label == "GRPO":
            continue
        steps, h = curve(runs, "heldout_entropy")
        t = int(np.argmin(h.mean(0)[:-1]))
        fell, rose = h[:, t] - h[:, 0], h[:, -1] - h[:, t]
        rows.append(("3. entropy falls, then rises", f"{label}: at step {steps[t]:g} - base",
                     fell.mean(), band(fell), "< 0", verdict(-fell.mean(), band(fell))))
        rows.append(("3. entropy falls, then rises", f"{label}: end - step {steps[t]:g}",
                     rose.mean(), band(rose), "> 0", verdict(rose.mean(), band(rose))))
    if "GRPO-N" in dynamics:
        steps, h = curve(dynamics["GRPO-N"], "heldout_entropy")
        above = h[:, -1] - h[:, 0]
        rows.append(("4. GRPO-N ends above the base", "GRPO-N: end - base", above.mean(),
                     band(above), "> 0", verdict(above.mean(), band(above))))
    return pd.DataFrame(rows, columns=["reading", "quantity", "mean", "± 2 se", "paper",
                                       "verdict"]).set_index(["reading", "quantity"])


def verdict_rows(dynamics: dict[str, list[list[dict[str, Any]]]]) -> list[dict[str, Any]]:
    """The readings as rows for ``verdicts.record``: reading 1 is the claim ``competitive``,
    2 ``entropy_collapse``, 3 and 4 ``entropy_recovery``; ``ours``: the end-of-training values,
    mean ± sd over seeds."""
    table = readings(dynamics).reset_index()

    def ours(key: str) -> str:
        return ", ".join(f"{label} {v.mean():.3f}" + (f" ± {v.std(ddof=1):.3f}" if len(v) > 1
                                                      else "")
                         for label, runs in dynamics.items()
                         for v in [curve(runs, key)[1][:, -1]])

    def checks(prefixes: tuple[str, ...]) -> list[tuple[str, str]]:
        part = table[table["reading"].str.startswith(prefixes)]
        return [(f"{q}: {m:+.3f}{'' if np.isnan(w) else f' ± {w:.3f}'} ({p}?)", v)
                for q, m, w, p, v in
                part[["quantity", "mean", "± 2 se", "paper", "verdict"]].itertuples(index=False)]

    rows = [("competitive", f"held-out greedy accuracy at the end: {ours('greedy_accuracy')}",
             ("1.",)),
            ("entropy_collapse", f"held-out token entropy at the end: {ours('heldout_entropy')}",
             ("2.",)),
            ("entropy_recovery", f"held-out token entropy at the end: {ours('heldout_entropy')}",
             ("3.", "4."))]
    return [{"claim": c, "ours": o, "checks": checks(p)} for c, o, p in rows if checks(p)]
