"""The scenario chapter's tables as displayed: the arm against its control per algorithm, the
toy's registered prediction beside the LM, the verdict rows (``chapters.scenario.verdict_rows``:
each check with its statistic, interval, margin and outcome) and the rules with when each was
chosen. Cells are written for people; the numbers and decisions are the chapter's."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from rlvr_dynamics import stats
from rlvr_dynamics.chapters.scenario import FALL_MARGIN, MATCH_FACTOR, RISE_MARGIN
from rlvr_dynamics.chapters.sentences import (dip_text, median_text, run_time_text, seeds_text,
                                              signs_text, time_text, toy_time_text)
from rlvr_dynamics.chapters.style import grouped, number, rounded, with_legend
from rlvr_dynamics.regimes.stages import crossover_median, dip_over_seeds
from rlvr_dynamics.regimes.toy_mapping import OWN, toy_update


def _mean_range(x: pd.Series, fmt: str) -> str:
    x = x.to_numpy(dtype=float) + 0.0
    return f"{rounded(fmt, x.mean())} ({rounded(fmt, x.min())} to {rounded(fmt, x.max())})"


SCENARIO_LEGEND = {
    "k (mid-curve)": ("k", "where the arm's base sits mid-curve"),
    "change of P(stepwise)": ("ΔP(stepwise)", "on the rare-only problems at the step the other "
                                              "seeds find lowest, relative: the geometric mean "
                                              "over seeds minus 1 with its interval (the log "
                                              "ratios' Student-t interval turned back), and how "
                                              "many seeds fell and rose"),
    "per seed": ("per seed", "each seed's change there"),
    "read at step": ("at step", "that step, per seed (censored: the fall was still at its "
                                "lowest at the last probe)"),
    "crossover": ("crossover", "per seed (> N: not within its N steps, censored)"),
    "median crossover": ("median", "Kaplan-Meier median over seeds with Brookmeyer and "
                                   "Crowley's interval"),
    "last step": ("last step", "per seed (a run ends 20 steps after its crossover)"),
    "Pass@k start": ("start", "Pass@k at the mid-curve k on the rare-only problems, the base"),
    "Pass@k end": ("end", "the same at the end (mean, range)"),
    "gain": ("gain", "end minus start, points (mean, range)"),
    "from the path choice": ("path", "the gain's part from the choice of path"),
    "from reliability": ("reliability", "its part from each path's reliability"),
    "from the rest": ("rest", "the rest")}
"""The scenario table's short column labels and what each means."""


def scenario_tables(table: pd.DataFrame, controls: dict[str, str]) -> tuple:
    """The arms and their controls, per algorithm (``table``: ``stages.stages``' rows), in two
    tables that fit the page: the mid-curve k, the change of P(stepwise) on the rare-path-only
    problems (minus the fall) and the steps it was read at, the crossover and the last step
    per seed; then mid-curve Pass@k at the start and the end, and the gain split into path
    choice, reliability and the rest (means over seeds, range); none without ``controls``."""
    if not controls:
        return ()
    names = [n for pair in controls.items() for n in pair]
    rows = []
    for (regime, algo), g in table[table["regime"].isin(names)].groupby(
            ["regime", "algorithm"], sort=False):
        d, m = dip_over_seeds(g), crossover_median(g)
        rows.append({"regime": regime, "algorithm": algo, "k (mid-curve)": int(g["k"].iloc[0]),
                     "change of P(stepwise)": f"{dip_text(d.estimate, (d.low, d.high))}; "
                                              f"{signs_text(d.fell, d.rose, d.seeds)}",
                     "per seed": seeds_text(d.values),
                     "read at step": ", ".join(number(t) for t in d.steps)
                     + (" (censored)" if d.censored else ""),
                     "crossover": ", ".join(run_time_text(t, last) for t, last in
                                            zip(g["crossover"], g["last step"])),
                     "median crossover": median_text(m.estimate, (m.low, m.high), m.horizon),
                     "last step": ", ".join(time_text(t) for t in g["last step"]),
                     "Pass@k start": f"{g['start'].mean():.1f}",
                     "Pass@k end": _mean_range(g["end"], "{:.1f}"),
                     "gain": _mean_range(g["gain"], "{:+.1f}"),
                     "from the path choice": f"{g['path choice'].mean():+.1f}",
                     "from reliability": f"{g['reliability'].mean():+.1f}",
                     "from the rest": f"{g['rest'].mean():+.1f}"})
    out = pd.DataFrame(rows).set_index(["regime", "algorithm"])
    first = ["k (mid-curve)", "change of P(stepwise)", "per seed", "read at step", "crossover",
             "median crossover", "last step"]
    return tuple(with_legend(part, {c: SCENARIO_LEGEND[c] for c in part.columns})
                 for part in (out[first], out.drop(columns=first)))


def against_prediction(table: pd.DataFrame, registered: dict[str, dict[str, Any]],
                       controls: dict[str, str]) -> pd.DataFrame | None:
    """Per regime of the scenario and algorithm: the toy's registered change of π(a2) at its
    lowest point and its crossover under Adam and SGD beside the LM's (the mean change of
    P(stepwise) at the leave-one-out step, the median crossover), and whether the LM's dip is
    where each toy puts it (a fall beyond ``FALL_MARGIN`` or none); None without
    ``controls``."""
    if not controls:
        return None
    names = [n for pair in controls.items() for n in pair]
    rows = []
    for (regime, algo), g in table[table["regime"].isin(names)].groupby(
            ["regime", "algorithm"], sort=False):
        update = toy_update(algo)[0]
        lm_dip = float(g["fall"].mean()) > FALL_MARGIN
        d, m = dip_over_seeds(g), crossover_median(g)
        row = {"regime": regime, "algorithm": algo,
               "LM: change of P(stepwise)": dip_text(d.estimate, (d.low, d.high)),
               "LM: fell, rose": f"{d.fell}, {d.rose} of {d.seeds}",
               "LM: crossover (median)": median_text(m.estimate, (m.low, m.high), m.horizon)}
        for opt, by_label in registered[regime]["predictions"].items():
            if opt == OWN:
                continue
            p = by_label[update]
            toy_dip = -p["toy dip"] > FALL_MARGIN
            row[f"{opt}: change of π(a2)"] = rounded("{:+.0f} %", 100 * p['toy dip'])
            row[f"{opt}: crossover"] = toy_time_text(p["toy expansion"],
                                                     registered[regime].get("steps"))
            row[f"{opt}: dip as the LM's"] = "yes" if toy_dip == lm_dip else "no"
        rows.append(row)
    return grouped(pd.DataFrame(rows).set_index(["regime", "algorithm"]))



SIGN_WORDS = {"stage 1": ("fell", "rose"), "stage 2": ("gained", "lost"),
              "GRPO-N holds the base": ("GRPO-N gained", "lost"),
              "the base holds GRPO": ("GRPO gained", "lost")}
"""How each check's sign count (``verdict_rows``' ``signs``) reads: above 0, below 0."""


def _signs(row: Any) -> str:
    """A check's sign count in words ("" where it has none): ``; 3 of 3 seeds fell, 0 rose``."""
    if row["signs"] is None or not isinstance(row["signs"], tuple):
        return ""
    up, down = SIGN_WORDS.get(row["check"], ("above 0", "below"))
    return f"; {up} in {row['signs'][0]} of {len(row['per seed'])} seeds, {down} in " \
           f"{row['signs'][1]}"


def _cell(row: Any) -> str:
    """One check's outcome with its estimate and interval (none where it has none), the sign
    count of its seeds where it has one, and "(votes)" where it decides the claim."""
    said = row["outcome"] + (" (votes)" if row["votes"] else "")
    if np.isnan(row["estimate"]):
        return said
    estimate, low, high = (row[c] + 0.0 for c in ("estimate", "low", "high"))
    if np.isnan(low):
        return f"{said}: {estimate:+.2f}{_signs(row)}"
    return f"{said}: {estimate:+.2f} [{low:+.2f}, {high:+.2f}]{_signs(row)}"


def verdict_table(rows: pd.DataFrame, claim: str):
    """``verdict_rows`` of one claim for the page: a row per arm and algorithm, a column per
    check, each cell its outcome with the statistic's estimate and interval over seeds (the
    checks that vote on the claim marked); under the table, what each check asks, the
    statistic it reads and its margin."""
    part = rows[rows["claim"] == claim]
    cells = pd.DataFrame({"arm": part["arm"], "algorithm": part["algorithm"].replace("", "-"),
                          "check": part["check"],
                          "cell": [_cell(r) for _, r in part.iterrows()]})
    table = cells.pivot(index=["arm", "algorithm"], columns="check", values="cell")
    table = table[list(dict.fromkeys(part["check"]))]
    table.columns.name = None
    legend = {check: (check, f"{g['asks'].iloc[0]} (statistic: {g['statistic'].iloc[0]}; "
                             + ("the margins of those checks" if np.isnan(g["margin"].iloc[0])
                                else f"margin {g['margin'].iloc[0]:g}") + ")")
              for check, g in part.groupby("check", sort=False)}
    return with_legend(table, legend)


def rules_table() -> pd.DataFrame:
    """Every rule that decides this chapter's readings, its value, where it lives and when it
    was chosen: before the data it judges, or after (the page marks the conclusions that rest
    on the latter)."""
    after = "after the data it judges (earlier builds)"
    rows = [("a first stage: the fall of P(stepwise)", f"{FALL_MARGIN:.0%}",
             "regimes.scenario.FALL_MARGIN", "before the model's runs (a toy pilot)"),
            ("stage 2 and the large-k checks: points of Pass@k", f"{RISE_MARGIN:g}",
             "regimes.scenario.RISE_MARGIN", "before the model's runs (the reproduction "
             "chapter's)"),
            ("the large-k claim read in the arm: GRPO-N against the base and GRPO", "-",
             "regimes.scenario.large_k", after),
            ("the arm and its control start alike: a factor of P(stepwise)", f"{MATCH_FACTOR:g}",
             "regimes.scenario.MATCH_FACTOR", after),
            ("a Pass@k at its floor or ceiling cannot inform", f"{stats.BOUNDS[0]:g}-"
             f"{stats.BOUNDS[1]:g} %", "stats.BOUNDS", after)]
    return pd.DataFrame(rows, columns=["rule", "value", "where", "chosen"]).set_index("rule")
