"""The scenario chapter's words, written from its results: the arm and its control introduced,
the figures' captions, the runs against the registered predictions, the verdicts in words and
our numbers for the closing chapter (``ours``). Its decisions are ``chapters.scenario``'s
(``verdict_rows``); here they are only written out."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from rlvr_dynamics.chapters.scenario import BOTH, FALL_MARGIN
from rlvr_dynamics.chapters.sentences import (censored_fall_text, dip_text, median_text,
                                              signs_text, toy_time_text)
from rlvr_dynamics.chapters.style import rounded
from rlvr_dynamics.regimes.stages import crossover_median, dip_over_seeds
from rlvr_dynamics.regimes.toy_mapping import OWN, toy_update


def scenario_intro(controls: dict[str, str], ks: dict[str, int],
                   registered: dict[str, dict[str, Any]], steps: int) -> str:
    """Which arm is set against which control, the mid-curve k each is read at, and how the
    runs' length compares with the toy's registered crossover (at least 3 times it can say
    "never"; less, only "not within the run")."""
    if not controls:
        return ("This profile runs no arm of the paper's scenario (`controls` is empty); the "
                "default profile does: `make reproduce`.")
    out = []
    for arm, control in controls.items():
        t = {label: p["toy expansion"] for label, p in registered[arm]["predictions"]["Adam"].items()}
        ratio = {label: steps / x for label, x in t.items() if np.isfinite(x) and x > 0}
        length = (", ".join(f"{r:.1f} times the toy's crossover under Adam for {label} "
                            f"({t[label]:.0f})" for label, r in ratio.items())
                  or "the toy registered no crossover under Adam within its own run")
        enough = bool(ratio) and all(r >= 3 for r in ratio.values())
        out.append(f"The arm *{arm}* against its control *{control}*, read at k = {ks[arm]} "
                   f"(where the arm's base sits closest to 50 % Pass@k on the rare-path-only "
                   f"problems; the control's own mid-curve k is {ks[control]}). Its runs last "
                   f"at most {steps} steps: {length}"
                   + ("." if enough else "; a run that has not crossed over by then has not "
                      "crossed within the run, which is not to say never."))
    return " ".join(out)


def scenario_caption(setting: str) -> str:
    """The caption of the scenario's figure."""
    return (f"P(stepwise) on the rare-path-only problems relative to the base, log scale "
            f"(solid: with the guess; dashed: the control; shaded: a fall by more than "
            f"{FALL_MARGIN:.0%}); mean over seeds, band min to max. {setting}")


def predicted_caption(setting: str) -> str:
    """The caption of the figure of predicted against measured crossovers."""
    return ("The LM's crossover per run against the toy's registered one (filled: three paths "
            "at the first character, hollow: two; triangles: not crossed by the run's last "
            f"probe; grey: the diagonal). {setting}")


def predicted_text(pairs: dict[str, pd.DataFrame]) -> str:
    """How far the LM's crossovers lie from the toy's registered ones under each optimizer
    (``pairs``: optimizer -> ``stages.predicted_vs_measured``): the runs that crossed, measured
    over predicted (median and range), the runs that did not cross within their run although
    the toy crossed before their last probe, and which optimizer's toy is closer (the median
    absolute log ratio)."""
    parts, closeness = [], {}
    for opt, t in pairs.items():
        ratio = t["measured / predicted"].dropna()
        late = int((t["censored"] & (t["predicted"] <= t["measured"])).sum())
        if len(ratio):
            closeness[opt] = float(np.median(np.abs(np.log(ratio))))
            said = (f"measured over predicted {np.median(ratio):.2f} (median of {len(ratio)} "
                    f"runs that crossed, {ratio.min():.2f}-{ratio.max():.2f})")
        else:
            said = "no run has both a measured and a predicted crossover"
        parts.append(f"under {opt}: {said}; {late} of {len(t)} runs had not crossed by their "
                     "last probe although the toy had crossed by then")
    best = (f" The crossovers lie closer to the toy under {min(closeness, key=closeness.get)} "
            "(the smaller median distance on a log scale)." if len(closeness) > 1 else "")
    return "Against the toy's registered crossover, " + "; ".join(parts) + "." + best


def interval(estimate: float, low: float, high: float, fmt: str = "{:.2f}") -> str:
    """An estimate with its interval (``verdict_rows``' columns), or alone where there is none."""
    if np.isnan(low):
        return fmt.format(estimate) + " (one seed: no interval)"
    return f"{fmt.format(estimate)} [{fmt.format(low)}, {fmt.format(high)}]"


def scenario_text(table: pd.DataFrame, rows: pd.DataFrame,
                  registered: dict[str, dict[str, Any]], controls: dict[str, str]) -> str:
    """The scenario in words, per arm and algorithm: the toy's registered dip under Adam and
    SGD, the LM's fall with its interval (``rows``: ``verdict_rows``; the statistic the rule
    reads), the control's, the dip on the log scale with its interval and sign count
    (``stages.dip_over_seeds``; censored where still at its lowest at the last probe), the
    crossovers with the Kaplan-Meier median and its interval (``stages.crossover_median``),
    the gain with its split, and the decision."""
    out = []
    two = rows[rows["claim"] == "lm_two_stages"]
    for (arm, algo), v in two.groupby(["arm", "algorithm"], sort=False):
        fall = v[v["check"] == "stage 1"].iloc[0]
        decided = v[v["check"] == BOTH].iloc[0]["outcome"]
        g = table[(table["regime"] == arm) & (table["algorithm"] == algo)]
        c = table[(table["regime"] == controls[arm]) & (table["algorithm"] == algo)]
        update = toy_update(algo)[0]
        toy = {opt: p[update] for opt, p in registered[arm]["predictions"].items() if opt != OWN}
        steps = registered[arm].get("steps")
        predicted = ", ".join(f"{rounded('{:.0f}', 100 * -p['toy dip'])} % under {opt} (crossover "
                              f"{toy_time_text(p['toy expansion'], steps)})"
                              for opt, p in toy.items())
        crossed = int(np.isfinite(g["crossover"]).sum())
        d, m = dip_over_seeds(g), crossover_median(g)
        log_scale = (f"on the log scale, P(stepwise) at its lowest changed by "
                     f"{dip_text(d.estimate, (d.low, d.high))} (the geometric mean over seeds; "
                     f"{signs_text(d.fell, d.rose, d.seeds)}"
                     + (f"; {censored_fall_text(d.step)}" if d.censored else "") + ")")
        median = (f"median {median_text(m.estimate, (m.low, m.high), m.horizon)}"
                  if not m.censored else
                  f"the median {median_text(m.estimate, (m.low, m.high), m.horizon)}")
        out.append(
            f"*{arm}*, {algo}: the toy predicted a fall of π(a2) by {predicted}; the LM's "
            f"P(stepwise) on the rare-path-only problems fell by "
            f"{interval(fall.estimate, fall.low, fall.high)} (relative, the mean of the "
            f"per-seed falls that the rule reads; a negative fall is a rise; the control: "
            f"{c['fall'].mean():.2f}); {log_scale}; it "
            f"crossed over in {crossed} of {len(g)} seeds ({median}), and mid-curve Pass@"
            f"{int(g['k'].iloc[0])} gained {g['gain'].mean():+.1f} points (path choice "
            f"{g['path choice'].mean():+.1f}, reliability {g['reliability'].mean():+.1f}, the "
            f"rest {g['rest'].mean():+.1f}): **{decided}**.")
    return "\n\n".join(out)


def ours(table: pd.DataFrame, controls: dict[str, str]) -> dict[str, str]:
    """Our numbers for the closing chapter's claims (``record_rows``' ``ours``), per claim: each
    arm's change of P(stepwise) at its lowest and gain of mid-curve Pass@k per algorithm
    (``lm_two_stages``), and its mid-curve Pass@k at the start and the end (``large_k``)."""
    two, large = [], []
    for arm in controls:
        g = table[table["regime"] == arm]
        k = int(g["k"].iloc[0])
        for algo, h in g.groupby("algorithm", sort=False):
            change = rounded("{:+.0f}", -100 * h["fall"].mean())
            two.append(f"{arm}, {algo}: P(stepwise) changes {change} % at its lowest, "
                       f"mid-curve Pass@{k} gains {h['gain'].mean():+.1f} points")
        large.append(f"{arm}: mid-curve Pass@{k} on the rare-path-only problems from "
                     f"{g['start'].mean():.1f} to "
                     + ", ".join(f"{h['end'].mean():.1f} ({a})"
                                 for a, h in g.groupby("algorithm", sort=False)))
    return {"lm_two_stages": "; ".join(two), "large_k": "; ".join(large)}


def bases_text(table: pd.DataFrame) -> str:
    """Each claim's verdict on each base (``chapters.scenario.by_base``), and whether it holds
    on every base; with one base, that the variance from the base is not measured here."""
    if table.shape[1] == 1:
        return (f"Every claim here is decided on one base (pretraining seed "
                f"{table.columns[0]}) over seeds: how a verdict varies with the base is not "
                "measured in this profile (`cpu-bases` decides the claims on two).")
    lines = []
    for claim, verdict in table.iterrows():
        on = "; ".join(f"base {seed}: *{v}*" for seed, v in verdict.items())
        holds = ("the same on every base" if verdict.nunique() == 1 else
                 "**it does not hold on every base**")
        lines.append(f"* `{claim}`: {on}; {holds}.")
    return "Each claim's verdict on each base (pretraining seed), over that base's seeds:\n\n" + \
        "\n".join(lines)
