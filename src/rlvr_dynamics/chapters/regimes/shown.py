"""The regimes chapter's tables as displayed: the dial, the registered predictions and their
inputs, the paper's scenario (the arm against its control, the toy beside the LM, the verdicts),
each cell's crossover against its registration and the comparisons and contrasts between
regimes and algorithms, the summary and the verdicts per regime, and the orderings against the
toy (their cells written for people: a time to crossover that did not happen is "never", an
effect with its interval, numbers through ``style.number``; the numbers come from the chapter's
computations: ``stages``, ``crossover``, ``toy_mapping``, ``prediction``)."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from rlvr_dynamics import stats
from rlvr_dynamics.chapters.regimes import (AGREE_FACTOR, FALL_MARGIN, MATCH_FACTOR, OWN,
                                            RISE_MARGIN, SAME_FACTOR,
                                            entropy_above, keeps_boundary, stage_effects,
                                            toy_update, two_stages)
from rlvr_dynamics.chapters.regimes.crossover import registrations
from rlvr_dynamics.chapters.regimes.scenario import large_k as scenario_large_k
from rlvr_dynamics.chapters.regimes.ladder import BAND, LADDER
from rlvr_dynamics.chapters.regimes.toy_mapping import order_agreement
from rlvr_dynamics.chapters.regimes.toy_rungs import PROPORTIONAL, TABULAR, WITHOUT
from rlvr_dynamics.chapters.regimes.sentences import time_text, times_text  # times in words
from rlvr_dynamics.chapters.style import grouped, number, rounded, with_legend


# --- the dial and the registered predictions ---------------------------------------------------

def dial_table(dial: pd.DataFrame):
    """``path_prior.dial_check``'s table (``regimes.dial``) with its numbers for people
    (``style.number``)."""
    return dial.style.format(number)


def prediction_inputs(registered: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """The toy's inputs as each regime's base gave them (``prediction.register``, regime ->
    record): π0 of the three paths, the rewards r, G, and when the record was written."""
    return pd.DataFrame([{"regime": regime,
                          "π0 (direct / stepwise / guess)":
                              " / ".join(f"{x:.3g}" for x in rec["inputs"]["pi0"]),
                          "r (direct / stepwise / guess)":
                              " / ".join(f"{x:.2f}" for x in rec["inputs"]["r"]),
                          "G": rec["inputs"]["G"],
                          "registered (UTC)": rec["registered"].replace("+00:00", "")}
                         for regime, rec in registered.items()]).set_index("regime")


def prediction_table(registered: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """The registered predictions, one row per regime, optimizer and update: the depth and
    step of the dip of the toy's mean π(a2), its median time to crossover and the share of toy
    seeds that crossed (the inputs: ``prediction_inputs``)."""
    rows = []
    for regime, rec in registered.items():
        for opt, by_label in rec["predictions"].items():
            if opt == OWN:
                continue
            for label, p in by_label.items():
                rows.append({"regime": regime, "toy": f"{opt}, {label}",
                             "dip of π(a2)": rounded("{:+.0f} %", 100 * p['toy dip']),
                             "at step": time_text(p["toy dip step"]),
                             "crossover (median)": time_text(p["toy expansion"]),
                             "seeds crossed": f"{100 * p['toy expanded']:.0f} %"})
    return pd.DataFrame(rows).set_index(["regime", "toy"])


# --- the paper's scenario: the arm against its control -----------------------------------------

def _mean_range(x: pd.Series, fmt: str) -> str:
    x = x.to_numpy(dtype=float) + 0.0
    return f"{rounded(fmt, x.mean())} ({rounded(fmt, x.min())} to {rounded(fmt, x.max())})"


SCENARIO_LEGEND = {
    "k (mid-curve)": ("k", "where the arm's base sits mid-curve"),
    "change of P(stepwise)": ("ΔP(stepwise)", "on the rare-only problems at the step the other "
                                              "seeds find lowest, relative (mean, range)"),
    "read at step": ("at step", "that step, per seed"),
    "crossover": ("crossover", "per seed"),
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
        rows.append({"regime": regime, "algorithm": algo, "k (mid-curve)": int(g["k"].iloc[0]),
                     "change of P(stepwise)": _mean_range(-100 * g["fall"], "{:+.0f} %"),
                     "read at step": ", ".join(time_text(t) for t in g["fall step"]),
                     "crossover": ", ".join(time_text(t) for t in g["crossover"]),
                     "last step": ", ".join(time_text(t) for t in g["last step"]),
                     "Pass@k start": f"{g['start'].mean():.1f}",
                     "Pass@k end": _mean_range(g["end"], "{:.1f}"),
                     "gain": _mean_range(g["gain"], "{:+.1f}"),
                     "from the path choice": f"{g['path choice'].mean():+.1f}",
                     "from reliability": f"{g['reliability'].mean():+.1f}",
                     "from the rest": f"{g['rest'].mean():+.1f}"})
    out = pd.DataFrame(rows).set_index(["regime", "algorithm"])
    first = ["k (mid-curve)", "change of P(stepwise)", "read at step", "crossover", "last step"]
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
        row = {"regime": regime, "algorithm": algo,
               "LM: change of P(stepwise)": rounded("{:+.0f} %", -100 * g['fall'].mean()),
               "LM: crossover (median)": time_text(float(np.median(g["crossover"])))}
        for opt, by_label in registered[regime]["predictions"].items():
            if opt == OWN:
                continue
            p = by_label[update]
            toy_dip = -p["toy dip"] > FALL_MARGIN
            row[f"{opt}: change of π(a2)"] = rounded("{:+.0f} %", 100 * p['toy dip'])
            row[f"{opt}: crossover"] = time_text(p["toy expansion"])
            row[f"{opt}: dip as the LM's"] = "yes" if toy_dip == lm_dip else "no"
        rows.append(row)
    return grouped(pd.DataFrame(rows).set_index(["regime", "algorithm"]))


def scenario_verdict_table(verdicts: dict[tuple[str, str], dict]) -> pd.DataFrame | None:
    """``scenario_verdicts`` for the page: each check with its verdict and effect (None where
    there are none)."""
    if not verdicts:
        return None
    rows = []
    for (arm, algo), v in verdicts.items():
        fall, spec = v["fall"], v["against control"]
        rows.append({"arm": arm, "algorithm": algo,
                     f"stage 1: P(stepwise) falls by more than {FALL_MARGIN:.0%}":
                         f"{v['checks']['stage 1']} ({fall.text('{:+.2f}')})",
                     "the fall is the bad path's doing (arm minus control)":
                         f"{v['checks']['against the control']} ("
                         f"{v.get('unmatched') or spec.text('{:+.2f}')})",
                     f"stage 2: Pass@k ends {RISE_MARGIN:g} points above the base in every seed":
                         v["checks"]["stage 2"],
                     "verdict": v["verdict"] + (f" ({v['why not']})" if v["why not"] else "")})
    return pd.DataFrame(rows).set_index(["arm", "algorithm"])


def large_k_table(table: pd.DataFrame, controls: dict[str, str],
                  informs: dict[str, tuple[bool, str]]) -> pd.DataFrame:
    """Each arm's checks of the paper's large-k claim (``scenario.large_k``): the effect with
    its interval (points of mid-curve Pass@k on the rare-only problems at the end) and the
    verdict."""
    rows = []
    for arm in controls:
        for name, e in scenario_large_k(table[table["regime"] == arm], informs[arm][0]).items():
            rows.append({"arm": arm, "check": name,
                         "effect (points)": "-" if isinstance(e, str) else e.text("{:+.1f}"),
                         "verdict": e if isinstance(e, str) else e.verdict})
    return pd.DataFrame(rows, columns=["arm", "check", "effect (points)", "verdict"]
                        ).set_index(["arm", "check"])


# --- each cell against its registration; regimes and algorithms against each other -------------

def _factor(estimate: float, low: float, high: float) -> str:
    """A mean log ratio and its interval as factors: ``1.3 [0.9, 1.8]``."""
    if np.isnan(estimate):
        return "-"
    if np.isnan(low):
        return f"{np.exp(estimate):.2g} (one seed)"
    return f"{np.exp(estimate):.2g} [{np.exp(low):.2g}, {np.exp(high):.2g}]"


def prediction_check_table(checks: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """``crossover.prediction_checks`` under each optimizer side by side: per cell the LM's
    crossovers, how many runs did not cross, and under each optimizer the toy's registered
    crossover, the LM's over it as a factor with its interval, and the reading."""
    out = None
    for opt, t in checks.items():
        part = pd.DataFrame({
            "regime": t["regime"], "algorithm": t["algorithm"],
            "LM: crossover": [", ".join(time_text(x) for x in lm) for lm in t["LM"]],
            "not crossed": t["not crossed"],
            f"{opt}: toy": [time_text(x) for x in t["toy"]],
            f"{opt}: LM / toy": [_factor(*v) for v in zip(t["estimate"], t["low"], t["high"])],
            f"{opt}: reading": t["reading"]}).set_index(["regime", "algorithm"])
        out = part if out is None else out.join(part.drop(columns=["LM: crossover",
                                                                   "not crossed"]))
    return grouped(out)


def comparison_table(compared: pd.DataFrame) -> pd.DataFrame:
    """``crossover.comparisons`` for reading: the log crossover's difference as a factor, the
    gain's in points, each with its interval and verdict."""
    if compared.empty:
        return compared
    shown = []
    for _, r in compared.iterrows():
        if r["quantity"] == "log crossover":
            value = _factor(r["estimate"], r["low"], r["high"])
            what = f"crossover, as a factor (margin {SAME_FACTOR:g}x)"
        else:
            value = (f"{r['estimate']:+.1f} (one seed)" if np.isnan(r["low"]) else
                     f"{r['estimate']:+.1f} [{r['low']:+.1f}, {r['high']:+.1f}]")
            what = f"gain of mid-curve Pass@k, points (margin {r['margin']:g})"
        shown.append({"regime": r["regime"], "comparison": r["comparison"], "quantity": what,
                      "value": value, "verdict": r["verdict"],
                      "not crossed": r["not crossed"]})
    return pd.DataFrame(shown).set_index(["regime", "comparison", "quantity"])


def contrast_table(contrasted: pd.DataFrame) -> pd.DataFrame:
    """``crossover.contrasts`` for reading: the crossover of the first regime over the
    second's as a factor with its interval, the LM's direction, and each registered
    prediction's direction with whether the LM agrees ("yes", "no"; "-" where the LM decided
    none)."""
    if contrasted.empty:
        return contrasted
    shown = []
    for _, r in contrasted.iterrows():
        row = {"contrast": r["contrast"], "algorithm": r["algorithm"],
               f"LM crossover, factor (margin {SAME_FACTOR:g}x)":
                   _factor(r["estimate"], r["low"], r["high"]), "LM": r["LM"]}
        for name, col in registrations(contrasted).items():
            agree = r[col]
            said = "-" if agree is None or pd.isna(agree) else "yes" if agree else "no"
            row[name] = f"{r[name]} ({said})" if isinstance(r.get(name), str) else "-"
        shown.append(row)
    return pd.DataFrame(shown).set_index(["contrast", "algorithm"])


# --- the regimes: the summary and the verdicts -------------------------------------------------

SUMMARY_LEGEND = {
    "P(stepwise) at start": ("π0(a2)", "the base's P(stepwise), the toy's initial π(a2)"),
    "P(guess) at start": ("π0(a3)", "the base's P(guess)"),
    "crossed over (seeds)": ("crossed", "seeds whose stepwise path overtook the direct one"),
    "step of crossover": ("steps", "each seed's step of crossover"),
    "fall of P(stepwise)": ("fall", "P(stepwise)'s fall on the rare-only problems, relative"),
    "depth (mean)": ("depth", "Pass@k at the lowest step minus the base's, points"),
    "gain (mean)": ("gain", "Pass@k at the end minus the base's, points"),
    "probe's standard error (points)": ("se", "the probe's own standard error, points"),
    "stalled (seeds)": ("stalled", "seeds that neither crossed nor still rose"),
    "toy: crossover": ("toy cross", "the toy's registered crossover, its steps"),
    "toy: dip of π(a2)": ("toy dip", "the toy's registered dip of π(a2), relative")}
"""The summary's short column labels and what each means."""


def summary_table(summary: pd.DataFrame):
    """``stages.summary`` for the page: the seeds crossed over as "crossed/seeds", the steps
    of crossover listed, every number for people (``style.number``: floating-point residue as
    0, never as ∞), short column labels named in a legend (``SUMMARY_LEGEND``)."""
    out = summary.copy()
    out.insert(5, "crossed over (seeds)", [f"{e}/{n}" for e, n in zip(out.pop("crossed"),
                                                                      out.pop("seeds"))])
    out["step of crossover"] = [", ".join(number(x) for x in t) for t in out["step of crossover"]]
    floats = [SUMMARY_LEGEND.get(c, (c,))[0] for c in out.columns if out[c].dtype.kind == "f"]
    return with_legend(out, SUMMARY_LEGEND).format(number, subset=floats)


def _neg(e: stats.Effect) -> str:
    """An effect estimated on negated values, shown on the original scale."""
    def signed(x: float) -> str:
        return f"{-x + 0.0:+.1f}"  # + 0.0: no "-0.0"
    if np.isnan(e.half_width):
        return f"{signed(e.estimate)} (one seed: no interval)"
    return f"{signed(e.estimate)} [{signed(e.high)}, {signed(e.low)}]"


def regime_verdicts(table: pd.DataFrame, entropy: pd.DataFrame,
                    informs: dict[str, tuple[bool, str]]) -> pd.DataFrame:
    """Per regime, the paper's LM claims as checks over seeds, on the rare-path-only problems
    at the base's mid-curve k (points of Pass@k against the base), each verdict with its
    effect; a regime whose base cannot show its boundary move (``informs``: regime ->
    (informs, why not)) reads *cannot inform* on the boundary's checks:

    * per algorithm, *shrinkage* and *expansion* (``stages.stage_effects``) and *shrinkage,
      then expansion* (``stages.two_stages``);
    * *GRPO-N keeps the base's boundary* (``stages.keeps_boundary``), read beside GRPO's
      shrinkage;
    * *GRPO-N's answer entropy above GRPO's* at the end (``stages.entropy_above``;
      ``entropy``: regime, algorithm, seed, answer entropy)."""
    rows = []
    for regime, g in table.groupby("regime", sort=False):
        row = {"regime": regime}
        ok, why = informs[regime]
        for algo, h in g.groupby("algorithm", sort=False):
            shrink, grow, ordered = stage_effects(h)
            if not ok:
                for what in ("shrinkage", "expansion", "shrinkage, then expansion"):
                    row[f"{algo}: {what}"] = f"{stats.CANNOT_INFORM} ({why})"
                continue
            row[f"{algo}: shrinkage"] = f"{shrink.verdict} (depth {_neg(shrink)})"
            row[f"{algo}: expansion"] = f"{grow.verdict} (gain {grow.text('{:+.1f}')})"
            row[f"{algo}: shrinkage, then expansion"] = two_stages(shrink.verdict,
                                                                   grow.verdict, ordered)
        e = keeps_boundary(g)
        if e is not None:
            row["GRPO-N keeps the base's boundary"] = (
                f"{e.verdict} (depth {e.text('{:+.1f}')})" if ok
                else f"{stats.CANNOT_INFORM} ({why})")
        e = entropy_above(entropy, regime)
        if e is not None:
            row["GRPO-N answer entropy above GRPO"] = f"{e.verdict} ({e.text()})"
        rows.append(row)
    return pd.DataFrame(rows).set_index("regime")


def verdicts_table(verdicts: pd.DataFrame):
    """The verdicts per regime (``regime_verdicts``), a claim to a row and a regime
    to a column, every cell in full (no truncation), left-aligned."""
    return (verdicts.T.style.set_table_styles([
        {"selector": "td, th", "props": "padding: 0.2em 0.6em; text-align: left; "
                                        "vertical-align: top;"}]))


# --- the orderings against the toy -------------------------------------------------------------

TIED, REVERSED = "ties them", "the other way round"
"""How the LM orders a pair of regimes that the toy sets apart, where not as the toy does."""


def order_table(table: pd.DataFrame, probe_every: int) -> pd.DataFrame:
    """Per algorithm, each pair of regimes whose times to crossover the toy sets apart and the
    LM does not order the same way (``toy_mapping.order_agreement``' others; ``table``: the
    summary's rows): the toy's order, both times and the LM's median times, and whether the LM
    ties them or orders them the other way round."""
    rows = []
    for algo, g in table.groupby("algorithm", sort=False):
        lm = g.groupby("regime", sort=False)["crossover"].median()
        toy_t = g.groupby("regime", sort=False)["toy expansion"].first()
        for first, second, tie in order_agreement(lm, toy_t, probe_every)[2]:
            rows.append({"algorithm": algo, "the toy: first": first, "then": second,
                         "toy's times": f"{time_text(toy_t[first])}, {time_text(toy_t[second])}",
                         "LM's medians": f"{time_text(lm[first])}, {time_text(lm[second])}",
                         "the LM": TIED if tie else REVERSED})
    return pd.DataFrame(rows, columns=["algorithm", "the toy: first", "then", "toy's times",
                                       "LM's medians", "the LM"])


def ordering_table(orders: pd.DataFrame) -> pd.DataFrame:
    """``toy_mapping.orderings`` for reading: each ordering with its two times (GRPO-N vs
    GRPO), where the toy's scenario holds."""
    def shown(o: str, times: tuple[float, float]) -> str:
        return (o if o == "outside the toy"
                else f"{o} ({times_text([times[0]])} vs {times_text([times[1]])})")
    out = pd.DataFrame(index=orders.index)
    out["LM: GRPO-N vs GRPO"] = [shown(o, t) for o, t in zip(orders["LM"], orders["LM times"])]
    for column in [c for c in orders.columns if c.startswith("toy, ")]:
        times = orders[column.replace("toy, ", "toy times, ")]
        out[column] = [shown(o, t) for o, t in zip(orders[column], times)]
    out["the LM follows"] = [" and ".join(f) or "none" for f in orders["follows"]]
    return out


# --- the ladder -------------------------------------------------------------------------------

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
    that judges its runs said for it (``judged``: (regime, how) -> record, ``ladder_all``'s):
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
    was chosen: before the data it judges, or after (the page marks the conclusions that rest
    on the latter)."""
    after = "after the data it judges (earlier builds)"
    rows = [("a first stage: the fall of P(stepwise)", f"{FALL_MARGIN:.0%}", "scenario.FALL_MARGIN",
             "before the model's runs (a toy pilot)"),
            ("stage 2 and the large-k checks: points of Pass@k", f"{RISE_MARGIN:g}",
             "scenario.RISE_MARGIN", "before the model's runs (the reproduction chapter's)"),
            ("the large-k claim read in the arm: GRPO-N against the base and GRPO", "-",
             "scenario.large_k", after),
            ("the arm and its control start alike: a factor of P(stepwise)", f"{MATCH_FACTOR:g}",
             "scenario.MATCH_FACTOR", after),
            ("a crossover agrees with the toy's: a factor", f"{AGREE_FACTOR:g}",
             "crossover.AGREE_FACTOR", after),
            ("two crossovers differ: a factor", f"{SAME_FACTOR:g}", "crossover.SAME_FACTOR",
             "before the cpu-grid runs"),
            ("a Pass@k at its floor or ceiling cannot inform", f"{stats.BOUNDS[0]:g}-"
             f"{stats.BOUNDS[1]:g} %", "stats.BOUNDS", after),
            ("a run that never crossed: censored at its last probe", "-",
             "crossover.prediction_checks, stats.km_median", after),
            ("the slope's mechanism: half the distance between the two slopes", f"{BAND:g}",
             "ladder.BAND", "before this build's runs (issue 35)")]
    return pd.DataFrame(rows, columns=["rule", "value", "where", "chosen"]).set_index("rule")
