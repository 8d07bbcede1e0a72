"""The regime map chapter's tables as displayed: each cell's crossover against its registration,
the comparisons between algorithms and the contrasts between regimes, the summary of the map,
the pairs of regimes the LM does not order as the toy does, GRPO-N's timing against the toy's
orderings, the verdicts per regime (``chapters.regime_map.verdict_rows``: each check with its
statistic, interval, margin and outcome) and the rules with when each was chosen. Cells are
written for people (a time to crossover that did not happen is "never", an effect with its
interval, numbers through ``style.number``); the numbers and decisions are the chapter's."""
from __future__ import annotations

import numpy as np
import pandas as pd

from rlvr_dynamics import stats
from rlvr_dynamics.chapters.regime_map import (AGREE_FACTOR, ENTROPY_MARGIN, KEEPS, EXPANSION,
                                               SAME_FACTOR, SHRINK_MARGIN, SHRINKAGE, TOY_SAME,
                                               order_agreement)
from rlvr_dynamics.chapters.sentences import (dip_text, median_text, run_time_text, time_text,
                                              times_text)
from rlvr_dynamics.chapters.style import grouped, number, with_legend
from rlvr_dynamics.regimes.crossover import registrations


# --- each cell against its registration; regimes and algorithms against each other -------------

def _factor(estimate: float, low: float, high: float) -> str:
    """A mean log ratio and its interval as factors: ``1.3 [0.9, 1.8]``."""
    if np.isnan(estimate):
        return "-"
    if np.isnan(low):
        return f"{np.exp(estimate):.2g} (one seed)"
    return f"{np.exp(estimate):.2g} [{np.exp(low):.2g}, {np.exp(high):.2g}]"


def prediction_check_table(checks: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """``crossover.prediction_checks`` under each registered prediction side by side
    (``chapter.cell_checks``): per cell the LM's crossovers, how many runs did not cross, and
    under each the registered crossover, the LM's over it as a factor with its interval, and
    the reading."""
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
    """``crossover.contrasts`` for reading (``chapter.regime_contrasts``): the crossover of the
    first regime over the second's as a factor with its interval, the LM's direction, and each
    registered prediction's direction with whether the LM agrees ("yes", "no"; "-" where the LM
    decided none)."""
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


# --- the map: the summary, the orders against the toy ------------------------------------------

SUMMARY_LEGEND = {
    "P(stepwise) at start": ("π0(a2)", "the base's P(stepwise), the toy's initial π(a2)"),
    "P(guess) at start": ("π0(a3)", "the base's P(guess)"),
    "crossed over (seeds)": ("crossed", "seeds whose stepwise path overtook the direct one"),
    "step of crossover": ("steps", "each seed's step of crossover (> N: not within its N "
                                   "steps, censored)"),
    "median crossover": ("median", "Kaplan-Meier median over seeds with Brookmeyer and "
                                   "Crowley's interval"),
    "dip of P(stepwise)": ("dip", "P(stepwise) on the rare-only problems at its lowest, relative "
                                  "to the start: the geometric mean over seeds with its interval "
                                  "(censored: still at its lowest at the last probe)"),
    "fell, rose (seeds)": ("fell, rose", "seeds whose P(stepwise) fell and rose there"),
    "depth (mean)": ("depth", "Pass@k at the lowest step minus the base's, points"),
    "gain (mean)": ("gain", "Pass@k at the end minus the base's, points"),
    "probe's standard error (points)": ("se", "the probe's own standard error, points"),
    "stalled (seeds)": ("stalled", "seeds that neither crossed nor still rose"),
    "toy: crossover": ("toy cross", "the toy's registered crossover, its steps"),
    "toy: dip of π(a2)": ("toy dip", "the toy's registered dip of π(a2), relative")}
"""The summary's short column labels and what each means."""


def summary_table(summary: pd.DataFrame):
    """``stages.summary`` for the page: the seeds crossed over as "crossed/seeds", the steps
    of crossover listed ("> N" where a run did not cross by its last probe N, censored), the
    Kaplan-Meier median with its interval, the dip of P(stepwise) on the log scale with its
    interval and sign count, every number for people (``style.number``: floating-point residue as
    0, never as ∞), short column labels named in a legend (``SUMMARY_LEGEND``)."""
    out = summary.copy()
    out.insert(5, "crossed over (seeds)", [f"{e}/{n}" for e, n in zip(out.pop("crossed"),
                                                                      out.pop("seeds"))])
    out["step of crossover"] = [", ".join(run_time_text(x, last) for x, last in zip(t, lasts))
                                for t, lasts in zip(out["step of crossover"],
                                                    out.pop("last steps"))]
    medians, dips = out.pop("median crossover"), out.pop("dip of P(stepwise)")
    out.insert(7, "median crossover", [median_text(m.estimate, (m.low, m.high), m.horizon)
                                       for m in medians])
    out.insert(8, "dip of P(stepwise)", [dip_text(d.estimate, (d.low, d.high))
                                         + (" (censored)" if d.censored else "") for d in dips])
    out.insert(9, "fell, rose (seeds)", [f"{d.fell}, {d.rose}" for d in dips])
    floats = [SUMMARY_LEGEND.get(c, (c,))[0] for c in out.columns if out[c].dtype.kind == "f"]
    return with_legend(out, SUMMARY_LEGEND).format(number, subset=floats)


TIED, REVERSED = "ties them", "the other way round"
"""How the LM orders a pair of regimes that the toy sets apart, where not as the toy does."""


def order_table(table: pd.DataFrame, probe_every: int) -> pd.DataFrame:
    """Per algorithm, each pair of regimes whose times to crossover the toy sets apart and the
    LM does not order the same way (``toy_mapping.order_agreement``' others; ``table``:
    ``chapter.with_toy``'s rows): the toy's order, both times and the LM's median times, and
    whether the LM ties them or orders them the other way round."""
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


# --- the verdicts per regime -------------------------------------------------------------------

NAMED = {SHRINKAGE: "depth", EXPANSION: "gain", KEEPS: "depth"}
"""The statistic named in a verdict's cell, where it is not the check's own."""


def _value(row) -> str:
    """A check's estimate and interval for a cell: ``-3.2 [-5.0, -1.4]`` (points; nats with
    three decimals for answer entropy), "(one seed: no interval)" without one."""
    fmt = "{:+.3f}" if row.claim == "answer_entropy" else "{:+.1f}"

    def signed(x: float) -> str:
        return fmt.format(x + 0.0)  # + 0.0: no "-0.0"
    if np.isnan(row.low):
        return f"{signed(row.estimate)} (one seed: no interval)"
    return f"{signed(row.estimate)} [{signed(row.low)}, {signed(row.high)}]"


def _signs(row) -> str:
    """A check's sign count over its seeds (``verdict_rows``' ``signs``): ``; seeds above 0:
    2, below: 1`` ("" where it has none)."""
    signs = getattr(row, "signs", None)
    if not isinstance(signs, tuple):
        return ""
    return f"; seeds above 0: {signs[0]}, below: {signs[1]}"


def verdict_cells(rows: pd.DataFrame, informs: dict[str, tuple[bool, str]] | None = None
                  ) -> pd.DataFrame:
    """``chapter.verdict_rows`` as a grid: a check to a row ("GRPO: shrinkage", "GRPO-N keeps
    the base's boundary"), a regime to a column, each cell "outcome (statistic estimate
    [low, high])" (the outcome alone for a check without an interval of its own); a check that
    cannot inform says why where ``informs`` (regime -> (informs, why not)) is given."""
    cells: dict[str, dict[str, str]] = {}
    for r in rows.itertuples(index=False):
        label = f"{r.algorithm}: {r.check}" if r.algorithm else r.check
        if r.outcome == stats.CANNOT_INFORM and (informs or {}).get(r.regime, (True, ""))[1]:
            cell = f"{r.outcome} ({informs[r.regime][1]})"
        elif np.isnan(r.estimate):
            cell = r.outcome
        else:
            name = NAMED.get(r.check)
            cell = f"{r.outcome} ({name + ' ' if name else ''}{_value(r)}{_signs(r)})"
        cells.setdefault(label, {})[r.regime] = cell
    regimes = list(dict.fromkeys(rows["regime"]))
    return pd.DataFrame.from_dict(cells, orient="index").reindex(columns=regimes).fillna("-")


def verdicts_table(rows: pd.DataFrame, informs: dict[str, tuple[bool, str]] | None = None):
    """The verdicts per regime (``verdict_cells``), a check to a row and a regime to a column,
    every cell in full (no truncation), left-aligned."""
    return verdict_cells(rows, informs).style.set_table_styles([
        {"selector": "td, th", "props": "padding: 0.2em 0.6em; text-align: left; "
                                        "vertical-align: top;"}])


# --- the rules ---------------------------------------------------------------------------------

def rules_table() -> pd.DataFrame:
    """Every rule that decides this chapter's readings, its value, where it lives and when it
    was chosen: before the data it judges, or after (the page marks the conclusions that rest
    on the latter)."""
    after = "after the data it judges (earlier builds)"
    unrecorded = ("not recorded (it came with the code that first read the data): taken as "
                  "after the data it judges")
    reproduction = "before the model's runs (the reproduction chapter's)"
    rows = [("a cell's crossover agrees with its registration: a factor", f"{AGREE_FACTOR:g}",
             "regimes.crossover.AGREE_FACTOR", after),
            ("two crossovers differ (two algorithms, two regimes, two registered times): a "
             "factor", f"{SAME_FACTOR:g}", "regimes.crossover.SAME_FACTOR",
             "before the cpu-grid runs"),
            ("a run that never crossed: censored at its last probe", "-",
             "regimes.crossover.prediction_checks, censored_verdict", after),
            ("a Pass@k at its floor or ceiling cannot inform", f"{stats.BOUNDS[0]:g}-"
             f"{stats.BOUNDS[1]:g} %", "stats.BOUNDS, regimes.stages.informs", after),
            ("shrinkage, expansion, GRPO-N keeps the boundary, two gains differ: points of "
             "Pass@k", f"{SHRINK_MARGIN:g}", "regimes.stages.SHRINK_MARGIN", reproduction),
            ("GRPO-N's answer entropy above GRPO's: nats", f"{ENTROPY_MARGIN:g}",
             "regimes.stages.ENTROPY_MARGIN", reproduction),
            ("two toy times count as the same: relative", f"{100 * TOY_SAME:.0f} %",
             "regimes.toy_mapping.TOY_SAME", unrecorded),
            ("two LM medians count as the same: one probe interval", "-",
             "regimes.toy_mapping.order_agreement, orderings", after)]
    return pd.DataFrame(rows, columns=["rule", "value", "where", "chosen"]).set_index("rule")
