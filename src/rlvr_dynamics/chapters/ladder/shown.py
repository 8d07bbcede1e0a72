"""The ladder chapter's tables as displayed: each arm's rungs (the dip with its interval, the
crossover, the slope, the first stage) and every measured slope beside what the toy on the
model's schedule registered for it; the rules with when each was chosen."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from rlvr_dynamics.chapters.sentences import time_text
from rlvr_dynamics.chapters.style import number, rounded, with_legend
from rlvr_dynamics.regimes.ladder import BAND, LADDER
from rlvr_dynamics.regimes.scenario import FALL_MARGIN
from rlvr_dynamics.regimes.toy_rungs import PROPORTIONAL, TABULAR, WITHOUT


CLOCK = {"R0": "toy steps", **{rung: "model steps" for rung in LADDER[1:]}}
"""Whose steps each rung's times count (``ladder``)."""



def _with_interval(x: float, interval: tuple[float, float] | None, fmt: str) -> str:
    """``x`` and its interval (none given or none with one seed: ``x`` alone; NaN: "-")."""
    if np.isnan(x):
        return "-"
    if interval is None or np.isnan(interval[0]):
        return rounded(fmt, x)
    return f"{rounded(fmt, x)} [{rounded(fmt, interval[0])}, {rounded(fmt, interval[1])}]"


def ladder_table(rungs: dict[str, pd.DataFrame]):
    """Each arm's ladder (``ladder.rung_rows``), rung by rung: P(stepwise) on the rare-only
    problems at its lowest relative to the start (the dip; the model's at the step the other
    seeds choose, with its interval over seeds: a positive value is a rise), its step and the
    crossover (in the clock of ``CLOCK``), the slope over the first updates and whether the
    rung shows a first stage."""
    rows = []
    for arm, r in rungs.items():
        for _, x in r.iterrows():
            rows.append({"arm": arm, "rung": x["rung"], "algorithm": x["algorithm"],
                         "P(stepwise) at its lowest, relative": _with_interval(
                             100 * x["dip"], None if x["dip interval"] is None else
                             tuple(100 * v for v in x["dip interval"]), "{:+.0f} %"),
                         "at step": number(x["dip step"]),
                         "crossover": time_text(x["crossover"]),
                         "clock": CLOCK[x["rung"]],
                         "slope": _with_interval(x["slope"], x["slope interval"], "{:+.2f}"),
                         "first stage": x["first stage"]})
    return with_legend(pd.DataFrame(rows).set_index(["arm", "rung", "algorithm"]), {
        "P(stepwise) at its lowest, relative": (
            "dip", "P(stepwise) on the rare-only problems at its lowest, relative to the start "
                   "(interval over seeds; positive: a rise)"),
        "at step": ("at step", "where the dip was read"),
        "crossover": ("crossover", "the stepwise path overtakes the direct one (the model's: "
                                   "Kaplan-Meier median over seeds)"),
        "clock": ("clock", "whose steps the two columns before count"),
        "slope": ("slope", "Δlog(π_d/π_#) on Δlog(π_#/π_=) over the first updates"),
        "first stage": ("first stage", "the stage-1 rule's reading")}, unwrapped=True)


def slope_table(slopes: pd.DataFrame, judged: dict[tuple[str, str], dict[str, Any]]
                ) -> pd.DataFrame:
    """Every measured slope over seeds (``ladder.slope_checks``), beside what the registration
    that judges its runs said for it (``judged``: (regime, how) -> record, ``chapters.ladder.Ladder.judged``):
    the toy on the model's schedule (R1; for the runs without stepwise groups, R1 trained the
    same way) and the two mechanisms."""
    rows = []
    for _, x in slopes.iterrows():
        lad = judged[x["regime"], x["how"]].get("ladder", {})
        key = f"{x['algorithm']}, {WITHOUT}" if x["how"] == WITHOUT else x["algorithm"]
        r1 = lad.get("R1", {}).get(key, {}).get("slope", np.nan)
        rows.append({"regime": x["regime"], "algorithm": x["algorithm"], "trained": x["how"],
                     "seeds": x["seeds"],
                     "slope": _with_interval(x["slope"], (x["low"], x["high"]), "{:+.2f}"),
                     "R1 (registered)": "-" if np.isnan(r1) else rounded("{:+.2f}", r1),
                     "tabular / proportional": f"{TABULAR:+.2f} / {PROPORTIONAL:+.2f}",
                     "reads as": x["mechanism"]})
    return pd.DataFrame(rows).set_index(["regime", "algorithm", "trained"])



def rules_table() -> pd.DataFrame:
    """Every rule that decides this chapter's readings, its value, where it lives and when it
    was chosen: before the data it judges, or after."""
    after = "after the data it judges (earlier builds)"
    rows = [("a first stage: the fall of P(stepwise)", f"{FALL_MARGIN:.0%}",
             "regimes.scenario.FALL_MARGIN", "before the model's runs (a toy pilot)"),
            ("a run that never crossed: censored at its last probe", "-", "stats.km_median",
             after),
            ("the slope's mechanism: half the distance between the two slopes", f"{BAND:g}",
             "regimes.ladder.BAND", "before the ladder's runs (issue 35)")]
    return pd.DataFrame(rows, columns=["rule", "value", "where", "chosen"]).set_index("rule")
