"""The ladder chapter's tables as displayed: each arm's rungs (the dip on the log scale with its
interval, sign count and seeds, the crossover with its interval, the slope, the first stage)
and every measured slope beside what the toy on the model's schedule registered for it; the
rules with when each was chosen."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from rlvr_dynamics.chapters.sentences import dip_text, median_text, percent, seeds_text
from rlvr_dynamics.chapters.style import number, rounded, with_legend
from rlvr_dynamics.dips import FLOOR
from rlvr_dynamics.regimes.ladder import BAND, LADDER
from rlvr_dynamics.stats import CONFIDENCE
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


PER_SEED = 10
"""At most this many seeds' values are listed in a cell (the toy's thousand are counted only)."""


def _get(x: pd.Series, column: str, default: Any = None) -> Any:
    """``x[column]``, or ``default`` where the row has no such column or a missing value."""
    value = x.get(column, default)
    return default if value is None or (isinstance(value, float) and np.isnan(value)) else value


def _crossover(x: pd.Series) -> str:
    """The crossover cell: the model's Kaplan-Meier median with its interval, the toy's median;
    a median beyond the runs "not within N steps (censored)"."""
    interval = _get(x, "crossover interval")
    return median_text(x["crossover"], interval, _get(x, "horizon"))


def ladder_table(rungs: dict[str, pd.DataFrame]):
    """Each arm's ladder (``ladder.rung_rows``), rung by rung: P(stepwise) on the rare-only
    problems at its lowest relative to the start on the log scale, every rung by one statistic
    (``dips``: the geometric mean over seeds with its interval, which stays above -100 %), how
    many seeds fell and rose and each seed's value (up to ``PER_SEED`` seeds), its step
    ("censored" where the fall was still at its lowest at the last probe), what the registered
    rule reads (the toy's registered dip; the model's mean fall with its Student-t interval),
    the crossover (the model's Kaplan-Meier median with Brookmeyer and Crowley's interval; "not
    within N steps (censored)" where fewer than half the runs crossed), its clock, the slope
    over the first updates and whether the rung shows a first stage."""
    rows = []
    for arm, r in rungs.items():
        for _, x in r.iterrows():
            interval = _get(x, "dip interval")
            values = _get(x, "dip seeds")
            fell = _get(x, "fell")
            rule = _get(x, "rule's fall")
            registered = _get(x, "registered dip")
            rows.append({"arm": arm, "rung": x["rung"], "algorithm": x["algorithm"],
                         "P(stepwise) at its lowest, relative": dip_text(x["dip"], interval),
                         "seeds fell, rose": "-" if fell is None else
                         f"{fell}, {x['rose']} of {len(values)}",
                         "per seed": "-" if values is None or len(values) > PER_SEED else
                         seeds_text(values),
                         "at step": number(x["dip step"])
                         + (" (censored)" if _get(x, "dip censored", False) else ""),
                         "the rule reads": (dip_text(-rule.estimate, (-rule.high, -rule.low))
                                            if rule is not None else
                                            percent(registered) if registered is not None
                                            else "-"),
                         "crossover": _crossover(x),
                         "clock": CLOCK[x["rung"]],
                         "slope": _with_interval(x["slope"], x["slope interval"], "{:+.2f}"),
                         "first stage": x["first stage"]})
    return with_legend(pd.DataFrame(rows).set_index(["arm", "rung", "algorithm"]), {
        "P(stepwise) at its lowest, relative": (
            "dip", "P(stepwise) on the rare-only problems (the toy: π(a2)) at its lowest, "
                   "relative to the start: the geometric mean over seeds of each seed's ratio at "
                   "the probe where the other seeds are lowest, minus 1, every rung alike, with "
                   "its interval (the log ratios' Student-t interval turned back; positive: a "
                   "rise)"),
        "seeds fell, rose": ("fell, rose", "seeds below and above their start there"),
        "per seed": ("per seed", "each seed's change (the toy's seeds are counted only)"),
        "at step": ("at step", "where the dip lies (censored: the fall was still at its lowest "
                               "at the last probe, so it may go deeper)"),
        "the rule reads": ("rule", "the statistic the registered first-stage rule reads: the "
                                   "toy's registered dip (the lowest of its mean over seeds), "
                                   "the model's mean of the per-seed changes with its Student-t "
                                   "interval"),
        "crossover": ("crossover", "the stepwise path overtakes the direct one (the model's: "
                                   "Kaplan-Meier median over seeds with Brookmeyer and "
                                   "Crowley's interval; not within N steps: fewer than half "
                                   "the runs crossed by their last probe, censored)"),
        "clock": ("clock", "whose steps the columns before count"),
        "slope": ("slope", "Δlog(π_d/π_#) on Δlog(π_#/π_=) over the first updates"),
        "first stage": ("first stage", "the registered stage-1 rule's reading")})


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
            ("the dip over seeds on the log scale (shown, decides nothing): a mass floored at",
             f"{FLOOR:g}", "dips.FLOOR", "after the data it reads (issue 51)"),
            ("the median crossover's interval (shown, decides nothing): Brookmeyer-Crowley, "
             "log(-log) Greenwood bands", f"{CONFIDENCE:.0%}", "survival.median",
             "after the data it reads (issue 51)"),
            ("the slope's mechanism: half the distance between the two slopes", f"{BAND:g}",
             "regimes.ladder.BAND", "before the ladder's runs (issue 35)")]
    return pd.DataFrame(rows, columns=["rule", "value", "where", "chosen"]).set_index("rule")


def reconcile_table(cells: pd.DataFrame) -> pd.DataFrame:
    """The reconciliation's four cells (``regimes.reconcile.cells``): each one's code and base
    bytes, its refit, each seed's crossover and change of P(stepwise), and its reading."""
    out = pd.DataFrame({
        "code (commit)": cells["code"],
        "base: pretrained on (sha256)": cells["base of"] + " (" + cells["base"].str[:8] + ")",
        "refit (sha256)": cells["refit"].str[:8],
        "crossover per seed": cells["crossovers"].map(
            lambda c: ", ".join("not by 120" if np.isinf(x) else f"{x:.0f}" for x in c)),
        "change of P(stepwise) per seed": cells["change"].map(seeds_text),
        "mean change": cells["mean change"].map(percent),
        "reading (section 4's rule)": cells["reading"]})
    return out.rename_axis("cell")
