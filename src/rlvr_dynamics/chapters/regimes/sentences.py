"""The regimes chapter's words, written from its results: the runs' settings that its figures
state, the registered predictions and the paper's scenario against them, the findings and the
orderings against the toy in words, the rules of the verdicts, and the row it hands to
``verdicts.record`` (its tables for people are in ``shown``)."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from rlvr_dynamics import stats
from rlvr_dynamics.chapters.regimes import (AGREE_FACTOR, ENTROPY_MARGIN, FALL_MARGIN, OWN,
                                            SHRINK_MARGIN, TOY_SAME, order_agreement,
                                            stage_check, stage_effects, toy_update, verdict)
from rlvr_dynamics.chapters.regimes.crossover import DIRECTION, registrations
from rlvr_dynamics.chapters.regimes.scenario import RISE_MARGIN
from rlvr_dynamics.chapters.regimes.scenario import large_k as scenario_large_k
from rlvr_dynamics.chapters.regimes.ladder import (LADDER, MODEL_RUNGS, NO, YES, both_stages,
                                                   toy_stage, turns)
from rlvr_dynamics.chapters.regimes.toy_rungs import (AS_BUILT, PROPORTIONAL, TABULAR, WINDOW,
                                                      WITHOUT)
from rlvr_dynamics.chapters.style import number, rounded
from rlvr_dynamics.chapters.sentences import run_settings


def settings(P: Any, T: Any, hard: dict[str, np.ndarray]) -> str:
    """The settings every figure of the chapter states: the training chapter's
    (``run_settings``, with this chapter's steps and seeds; the regimes that set their own
    group size named with it, at the same rollouts per step), then the probes (``hard``: the
    rare-path-only problems per split)."""
    stop = ("" if P.stop_after_crossover is None else
            f", each run ending {P.stop_after_crossover} steps after its crossover")
    own = {name: r.G for name, r in P.regimes.items() if r.G is not None}
    if own:
        stop += (" (G per regime where it differs: "
                 + ", ".join(f"{G} in '{name}'" for name, G in own.items())
                 + f", at the same {T.generation_batch} rollouts per step)")
    early = (f" (every {P.probe_early_every} up to step {P.probe_early_until})"
             if P.probe_early_every else "")
    return (f"{P.profile} profile: "
            + run_settings(T.model_copy(update={"steps": P.steps, "seeds": P.seeds}))
            + f"{stop}; probes every {P.probe_every} steps{early} on {len(hard['test'])} "
              f"problems of sums-test (the first {P.probe_problems} and {P.probe_hard} more "
              f"beyond the direct path: {hard['test'].sum()} rare-path-only in all); lines: mean "
              f"over seeds, bands: min to max")


def times_text(t: Sequence[float]) -> str:
    """Times to crossover in words: "never" within the run, "outside the toy" where the toy
    has no prediction (NaN: a regime outside its scenario)."""
    return ", ".join(time_text(x) for x in t)


def _cells(names: list[str]) -> str:
    """A few regime-and-algorithm cells in words ("none" where there are none)."""
    return "; ".join(names) or "none"


def findings_text(table: pd.DataFrame, steps: int, probe_every: int) -> str:
    """What the regime map shows, in four bullets (each cell's numbers are in the summary table
    above, the pairwise orders in ``shown.order_table``): where the rare path took over in the
    median run and where no seed crossed; where Pass@k on the rare-path-only problems at the
    base's mid-curve k fell more than ``SHRINK_MARGIN`` points below the base on the way (mean
    over seeds, deepest first); where it ended above or below the base by that margin, and the
    stalls; and per algorithm, how many of the pairs of regimes the toy sets apart the LM
    orders as the toy does (``order_agreement``)."""
    cells = []
    for (regime, algo), g in table.groupby(["regime", "algorithm"], sort=False):
        cells.append({"cell": f"{regime}, {algo}", "median": float(np.median(g["crossover"])),
                      "crossed": int(np.isfinite(g["crossover"]).sum()), "seeds": len(g),
                      "depth": float(g["depth"].mean()) + 0.0,
                      "gain": float(g["gain"].mean()) + 0.0, "stalled": int(g["stalled"].sum())})
    c = pd.DataFrame(cells)
    took = c[np.isfinite(c["median"])].sort_values("median")
    never = c[c["crossed"] == 0]["cell"].tolist()
    deep = c[c["depth"] < -SHRINK_MARGIN].sort_values("depth")
    up, down = c[c["gain"] > SHRINK_MARGIN], c[c["gain"] < -SHRINK_MARGIN]
    stalled = c[c["stalled"] > 0]
    k = int(table["k"].iloc[0]) if table["k"].nunique() == 1 else None
    at_k = f"Pass@{k}" if k else "Pass@k at each regime's mid-curve k"
    lines = [
        f"- **Takeover.** The stepwise path overtook the direct one in the median run of "
        f"{len(took)} of {len(c)} cells within {steps} steps"
        + (f", first in {took['cell'].iloc[0]} (step {took['median'].iloc[0]:g})" if len(took)
           else "") + f"; no seed crossed in {len(never)}: {_cells(never)}.",
        f"- **A dip on the way.** {at_k} on the rare-path-only problems fell more than "
        f"{SHRINK_MARGIN:g} points below the base (mean over seeds) in {len(deep)} of {len(c)} "
        f"cells: " + _cells([f"{x['cell']} ({x['depth']:+.1f})" for _, x in deep.iterrows()])
        + ".",
        f"- **At the end.** It stood more than {SHRINK_MARGIN:g} points above the base in "
        f"{len(up)} cells and below it in {len(down)}"
        + (f" ({_cells([f'{x.cell} ({x.gain:+.1f})' for x in down.itertuples()])})"
           if len(down) else "")
        + f"; {int(c['stalled'].sum())} run{'s' if c['stalled'].sum() != 1 else ''} stalled"
        + (f" ({_cells(stalled['cell'].tolist())})" if len(stalled) else "") + ".",
    ]
    orders = []
    for algo, g in table.groupby("algorithm", sort=False):
        lm = g.groupby("regime", sort=False)["crossover"].median()
        toy_t = g.groupby("regime", sort=False)["toy expansion"].first()
        agree, pairs, _ = order_agreement(lm, toy_t, probe_every)
        orders.append(f"{algo} {agree} of {pairs}")
    lines.append("- **The toy's order.** Of the pairs of regimes whose times the toy sets apart "
                 f"(more than {TOY_SAME:.0%}), the LM orders the same way: "
                 + "; ".join(orders) + " (the pairs it does not, in the table below).")
    return "\n".join(lines)


def ordering_text(orders: pd.DataFrame) -> str:
    """``toy_mapping.orderings`` in words: in how many regimes the LM's ordering of GRPO-N
    against GRPO matches the toy's under each optimizer."""
    if orders.empty:
        return "No regime ran both GRPO and GRPO-N."
    names = [c.removeprefix("toy, ") for c in orders.columns if c.startswith("toy, ")]
    parts = [f"under {name} in {sum(name in f for f in orders['follows'])} of {len(orders)}"
             for name in names]
    outside = int((orders[[f"toy, {n}" for n in names]] == "outside the toy").any(axis=1).sum())
    return ("GRPO-N's time to crossover against GRPO's, the LM's ordering matches the toy's "
            + ", ".join(parts) + " regimes"
            + (f" ({outside} outside the toy's scenario)" if outside else "") + ".")


def same_ordering_text() -> str:
    """When two times to crossover count as the same (``order_agreement``'s rule: the LM's
    within one probe interval, the toy's within ``TOY_SAME``)."""
    return ("The LM's ordering counts as the same when its medians lie within one probe "
            f"interval, the toy's within {100 * TOY_SAME:.0f} %.")


# --- the verdicts --------------------------------------------------------------------------------

def regimes_caption(regimes: dict[str, Any], setting: str) -> str:
    """The caption of ``figures.plot_regimes``: each regime's knobs and the runs' settings."""
    def knobs(regime: Any) -> str:
        set_ = regime.model_dump(exclude_none=True)
        return ", ".join(f"{key} {v}" for key, v in set_.items()) or "as pretrained, as drawn"

    rows = "; ".join(f"{name}: {knobs(r)}" for name, r in regimes.items())
    return (f"A row per regime ({rows}). Paths: solid right, dotted wrong, grey the guess; "
            f"Pass@k: solid the full distribution, dashed the paper's setting; mean over seeds, "
            f"band min to max. {setting}")


def phase_caption(setting: str, D: Any, toy_seeds: int) -> str:
    """The caption of the LM's regime map beside the toy's prediction (``D``: the toy chapter's
    parameters)."""
    return (f"Left: each seed's crossover step (dots; never crossed: above the line); right: "
            f"the depth, mean and range over seeds. {setting}; dashed: the toy's registered "
            f"prediction from the same π0, rewards and G, the toy chapter's optimizer "
            f"({D.optimizer}, lr {D.lr:g}), {toy_seeds} seeds.")


def verdict_rules() -> str:
    """How ``shown.regime_verdicts`` decides: the interval at ``stats.CONFIDENCE``, the margins
    (``SHRINK_MARGIN``, ``ENTROPY_MARGIN``), the order, and when a base cannot inform
    (``stats.BOUNDS``)."""
    lo, hi = stats.BOUNDS
    return (f"Each check is over seeds with a {100 * stats.CONFIDENCE:.0f} % Student-t interval "
            f"and a declared margin ({SHRINK_MARGIN:g} points of Pass@k, `SHRINK_MARGIN`; "
            f"{ENTROPY_MARGIN:g} nats, `ENTROPY_MARGIN`), at each base's mid-curve k: "
            "\"shrinkage then expansion\" replicates when the depth is below minus the margin, "
            "the gain above it, and every seed crossed over after its deepest point (a seed that "
            "never crossed fails the order); \"shrinkage only\" when it shrank and not every seed "
            "crossed over after. A base that cannot show its boundary move at any k (its Pass@k "
            f"on the rare-path-only problems outside {lo:g}-{hi:g} % at the mid-curve k, or its "
            "stepwise path no longer the rare one) reads *cannot inform* and does not vote.")


# --- the paper's scenario: the registered predictions, the arm against its control -------------

def time_text(t: float) -> str:
    """One time to crossover in words (``times_text``)."""
    return "never" if np.isinf(t) else "outside the toy" if np.isnan(t) else f"{t:g}"


def registration_text(checks: dict[str, dict[str, bool]]) -> str:
    """``prediction.checks`` in words: for every regime, whether its prediction came before
    its runs and its runs from the base it was made for; the regimes where not, named."""
    lines = []
    for what in ("registered before every run", "every run starts from the registered base"):
        failed = [r for r, c in checks.items() if not c[what]]
        said = {"registered before every run": "was registered before every one of its runs "
                                               "began",
                "every run starts from the registered base": "was made for the base its runs "
                                                             "start from (their first probe "
                                                             "measures it to 1e-4)"}[what]
        lines.append(f"Every regime's prediction {said}." if not failed else
                     f"**Not** every regime's prediction {said}: not for "
                     + ", ".join(failed) + "; its verdicts below do not read a registered "
                     "prediction.")
    return " ".join(lines)


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
        length = ", ".join(f"{r:.1f} times the toy's crossover under Adam for {label} "
                           f"({t[label]:.0f})" for label, r in ratio.items())
        enough = all(r >= 3 for r in ratio.values())
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


def slopes_caption(setting: str) -> str:
    """The caption of ``figures.plot_slopes``: what is drawn, over which updates, and the
    settings."""
    return (f"The first-character masses after each of the first {WINDOW} updates, as changes "
            f"of their log-ratios from the start, one line a seed (means over the probe's drawn "
            f"problems); dashed: the tabular update, dotted: proportional spreading. {setting}")


def predicted_caption(setting: str) -> str:
    """The caption of the figure of predicted against measured crossovers."""
    return ("The LM's crossover per run against the toy's registered one (filled: three paths "
            "at the first character, hollow: two; triangles: not crossed by the run's last "
            f"probe; grey: the diagonal). {setting}")


def scenario_text(table: pd.DataFrame, scenario: dict[tuple[str, str], dict],
                  registered: dict[str, dict[str, Any]], controls: dict[str, str]) -> str:
    """The scenario in words, per arm and algorithm: the toy's registered dip under Adam and
    SGD, the LM's fall with its interval, the control's, the crossover and the gain with its
    split, and the verdict."""
    out = []
    for (arm, algo), v in scenario.items():
        g = table[(table["regime"] == arm) & (table["algorithm"] == algo)]
        c = table[(table["regime"] == controls[arm]) & (table["algorithm"] == algo)]
        update = toy_update(algo)[0]
        toy = {opt: p[update] for opt, p in registered[arm]["predictions"].items() if opt != OWN}
        predicted = ", ".join(f"{rounded('{:.0f}', 100 * -p['toy dip'])} % under {opt} (crossover "
                              f"{time_text(p['toy expansion'])})" for opt, p in toy.items())
        crossed = int(np.isfinite(g["crossover"]).sum())
        out.append(
            f"*{arm}*, {algo}: the toy predicted a fall of π(a2) by {predicted}; the LM's "
            f"P(stepwise) on the rare-path-only problems fell by "
            f"{v['fall'].text('{:.2f}')} (relative; a negative fall is a rise; the control: "
            f"{c['fall'].mean():.2f}), "
            f"crossed over in {crossed} of {len(g)} seeds, and mid-curve Pass@"
            f"{int(g['k'].iloc[0])} gained {g['gain'].mean():+.1f} points (path choice "
            f"{g['path choice'].mean():+.1f}, reliability {g['reliability'].mean():+.1f}, the "
            f"rest {g['rest'].mean():+.1f}): **{v['verdict']}**.")
    return "\n\n".join(out)


def scenario_verdicts(table: pd.DataFrame, controls: dict[str, str],
                      informs: dict[str, tuple[bool, str]],
                      matched: dict[str, tuple[bool, str]] | None = None
                      ) -> dict[tuple[str, str], dict]:
    """(arm, algorithm) -> ``scenario.verdict`` of its runs against its control's (``matched``:
    ``scenario.matched``, None: every arm matched)."""
    out = {}
    for arm, control in controls.items():
        same, unlike = (matched or {}).get(arm, (True, ""))
        for algo, g in table[table["regime"] == arm].groupby("algorithm", sort=False):
            c = table[(table["regime"] == control) & (table["algorithm"] == algo)]
            out[arm, algo] = verdict(g, c, informs[arm][0], same) | {
                "why not": informs[arm][1], "unmatched": unlike}
    return out


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


def prediction_check_text(checks: dict[str, pd.DataFrame]) -> str:
    """How many cells agree with their registered crossover under each optimizer, and how
    many lie slower, faster, or undecided."""
    parts = []
    for opt, t in checks.items():
        counts = t["reading"].value_counts()
        said = ", ".join(f"{n} {reading}" for reading, n in counts.items())
        parts.append(f"under {opt}, of {len(t)} cells: {said}")
    return (f"Each cell's crossover against its registration (within a factor of "
            f"{AGREE_FACTOR:g}: agrees): " + "; ".join(parts) + ".")


def claim_rows(table: pd.DataFrame, informs: dict[str, tuple[bool, str]],
               controls: dict[str, str],
               matched: dict[str, tuple[bool, str]] | None = None) -> list[dict]:
    """The row this chapter records for ``verdicts`` (claim ``lm_two_stages``). With an arm
    of the paper's scenario (``controls``), GRPO's ``scenario.verdict`` per arm decides; else,
    per regime, GRPO's "shrinkage, then expansion" (``stages.stage_check``; *cannot inform*
    where the base cannot show its boundary move). GRPO-N's, and the other regimes', are shown
    beside them."""
    checks, also, ours = [], [], []
    scenario = scenario_verdicts(table, controls, informs, matched)
    for (arm, algo), v in scenario.items():
        check = (f"{arm} against {controls[arm]}, {algo}: P(stepwise) on the rare-path-only "
                 f"problems falls by more than {FALL_MARGIN:.0%} (and more than without the "
                 f"bad path), then mid-curve Pass@k ends above the base", v["verdict"])
        (checks if algo == "GRPO" else also).append(check)
        g = table[(table["regime"] == arm) & (table["algorithm"] == algo)]
        change = rounded("{:+.0f}", -100 * g["fall"].mean())
        ours.append(f"{arm}, {algo}: P(stepwise) changes {change} % at its lowest, "
                    f"mid-curve Pass@{int(g['k'].iloc[0])} gains {g['gain'].mean():+.1f} points")
    in_scenario = {n for pair in controls.items() for n in pair}
    for regime, g in table.groupby("regime", sort=False):
        if regime in in_scenario:
            continue
        ok, why = informs[regime]
        for algo, h in g.groupby("algorithm", sort=False):
            shrink, grow, ordered = stage_effects(h)
            check = (f"{regime}, {algo}: mid-curve Pass@{int(h['k'].iloc[0])} on the "
                     f"rare-path-only problems falls more than {SHRINK_MARGIN:g} points, then "
                     f"rises above the base",
                     stage_check(shrink.verdict, grow.verdict, ordered) if ok
                     else stats.CANNOT_INFORM)
            (checks if algo == "GRPO" and not scenario else also).append(check)
            ours.append(f"{regime}, {algo}: depth {h['depth'].mean():+.1f}, gain "
                        f"{h['gain'].mean():+.1f} points, crossed over in "
                        f"{int(np.isfinite(h['crossover']).sum())}/{len(h)} seeds")
    if not checks:
        return []
    return [{"claim": "lm_two_stages", "ours": "; ".join(ours), "checks": checks,
             "also": also}] + large_k_rows(table, informs, controls)


def large_k_rows(table: pd.DataFrame, informs: dict[str, tuple[bool, str]],
                 controls: dict[str, str]) -> list[dict]:
    """The row this chapter records for the ``large_k`` claim: each arm's ``scenario.large_k``
    checks (mid-curve Pass@k on its rare-only problems at the end), decided beside the
    reproduction chapter's (``verdicts.measured`` joins them); none without an arm."""
    checks, ours = [], []
    for arm in controls:
        g = table[table["regime"] == arm]
        effects = scenario_large_k(g, informs[arm][0])
        if not effects:
            continue
        k = int(g["k"].iloc[0])
        checks += [(f"{arm}, Pass@{k} on the rare-path-only problems at the end: {name} "
                    f"(margin {RISE_MARGIN:g} points)",
                    e if isinstance(e, str) else e.verdict) for name, e in effects.items()]
        ours.append(f"{arm}: mid-curve Pass@{k} on the rare-path-only problems from "
                    f"{g['start'].mean():.1f} to "
                    + ", ".join(f"{h['end'].mean():.1f} ({a})"
                                for a, h in g.groupby("algorithm", sort=False)))
    return [{"claim": "large_k", "ours": "; ".join(ours), "checks": checks}] if checks else []


def contrast_text(contrasted: pd.DataFrame) -> str:
    """Per registered prediction, in how many of the contrasts where the LM decided a
    direction its registered times gave the same one."""
    if contrasted.empty:
        return "This profile declares no contrasts between regimes (`contrasts = []`)."
    decided = contrasted[contrasted["LM"].isin(list(DIRECTION.values()))]
    if decided.empty:
        return (f"In none of the {len(contrasted)} contrasts did the LM's runs decide a "
                "direction (every interval straddles a bound of the margin, or a run that did "
                "not cross leaves it open), so none can test a registered direction.")
    parts = []
    for name, col in registrations(contrasted).items():
        votes = decided[col].dropna()
        parts.append(f"{name} {int(votes.sum())} of {len(votes)}")
    return (f"The LM's runs decided a direction in {len(decided)} of the {len(contrasted)} "
            "contrasts; the registered predictions gave the same direction in: "
            + ", ".join(parts) + ".")


HOW_SHORT = {AS_BUILT: "R4 (as built)", WITHOUT: "without stepwise groups"}
"""How a run was trained, in a few words (a model rung's runs by its name)."""

STAGE_WORDS = {YES: "a first stage", NO: "none"}
"""A rung's first-stage reading (``ladder.rung_rows``) in words; a check's verdict otherwise."""


def _dip(x: pd.Series) -> str:
    """One rung's dip (``ladder.rung_rows``' row) as a signed percentage ("-" where none)."""
    return "-" if np.isnan(x["dip"]) else rounded("{:+.0f} %", 100 * x["dip"])


def _dip_words(rung: str, x: pd.Series) -> str:
    """One rung's dip and its first-stage reading, in words."""
    return f"{rung} {_dip(x)} ({STAGE_WORDS.get(x['first stage'], x['first stage'])})"


def ladder_text(rungs: dict[str, pd.DataFrame], slopes: pd.DataFrame,
                judged: dict[tuple[str, str], dict[str, Any]] | None = None) -> str:
    """The ladder in words, per arm (``ladder.rung_rows``) and algorithm: the dip per rung and
    where the first stage turns (``ladder.turns``), the model's slope over the first updates
    (``ladder.slope_checks``: as built and without stepwise groups) and what it reads as, the
    rungs not run in this build, and whether R5 shows both stages beside what its own
    registration predicted (``judged``: (arm, how) -> the registration that judges those runs,
    ``ladder_all``'s)."""
    lines = [f"Slopes are over the first {WINDOW} updates, mean over seeds with the interval "
             f"(the tabular toy: {TABULAR:+.2f}; proportional spreading: {PROPORTIONAL:+.2f}), "
             "each followed by what the rule reads it as."] if len(slopes) else []
    for arm, rows in rungs.items():
        mine_slopes = slopes[slopes["regime"] == arm]
        for label in dict.fromkeys([*rows["algorithm"], *mine_slopes["algorithm"]]):
            mine = rows[rows["algorithm"] == label].set_index("rung")
            parts = []
            if len(mine):
                dips = ", ".join(_dip_words(rung, x) for rung, x in mine.iterrows())
                turn = turns(rows, label)
                said = (f"the first stage turns at {turn[0]}, where it "
                        f"{'appears' if turn[1] == YES else 'vanishes'}" if turn else
                        "no decided rung reads otherwise than the first")
                pending = [r for r, s in mine["first stage"].items() if s not in (YES, NO)]
                undecided = (f" (the rule decides nothing at {', '.join(pending)}, where the "
                             f"stage is neither shown nor excluded)" if pending else "")
                parts.append(f"the dip of P(stepwise), rung by rung: {dips}; {said}{undecided}")
            slope = mine_slopes[mine_slopes["algorithm"] == label]
            if len(slope):
                parts.append("slopes: " + ", ".join(
                    f"{HOW_SHORT.get(x['how'], x['how'])} {x['effect'].text('{:+.2f}')} "
                    f"*{x['mechanism']}*" for _, x in slope.iterrows()))
            lines.append(f"* **{arm}, {label}**: " + "; ".join(parts) + ".")
    ran = {r for rows in rungs.values() for r in rows["rung"]}
    later = [r for r in MODEL_RUNGS if r not in ran]
    if rungs and later:
        names = ", ".join(later[:-1]) + " and " * (len(later) > 1) + later[-1]
        lines.append(f"\nNot run in this build: {names} (the `cpu-ladder` profile runs "
                     f"{'them' if len(later) > 1 else 'it'})"
                     + (": whether a network whose paths share no first token shows both "
                        "stages is not answered here." if LADDER[-1] in later else "."))
    lines += [r5_text(arm, rows, (judged or {}).get((arm, LADDER[-1])))
              for arm, rows in rungs.items() if both_stages(rows)]
    return "\n".join(lines)


def r5_text(arm: str, rows: pd.DataFrame, record: dict[str, Any] | None = None) -> str:
    """Whether the top rung shows both of the paper's stages under GRPO in ``arm``
    (``ladder.both_stages``), and why not where it does not; beside it what the toy on the
    model's schedule (R1) predicted from the rung's own base where its registration
    ``record`` is given."""
    x = rows[(rows["rung"] == LADDER[-1]) & (rows["algorithm"] == "GRPO")].iloc[0]
    dip = f"P(stepwise) {_dip(x)}"
    stage = x["first stage"]
    cross = (f"the stepwise path overtakes the direct one at a median step of "
             f"{x['crossover']:.0f}" if np.isfinite(x["crossover"]) else
             "the median run never crossed over")
    first = {YES: f"shows the first stage ({dip})", NO: f"shows no first stage ({dip})"}.get(
        stage, f"may or may not show a first stage (its check reads *{stage}*; {dip})")
    answer = both_stages(rows)
    said = (f"shows both stages: {dip} at its lowest, then {cross}" if answer == YES else
            f"does not show both stages: it {first}, and {cross}" if answer == NO else
            f"{first}; {cross}")
    out = (f"\n**{arm}**: on a base whose paths begin with tokens no other path writes and "
           f"whose embeddings are untied ({LADDER[-1]}), GRPO {said}.")
    if record is None:
        return out
    toy = record["ladder"]["R1"]["GRPO"]
    return (f"{out} Registered from that base before its runs, the toy on the model's schedule "
            f"(R1) predicted P(stepwise) {rounded('{:+.0f} %', 100 * toy['dip'])} at step "
            f"{number(toy['dip step'])} ({STAGE_WORDS[toy_stage(toy['dip'])]} by the same "
            f"rule) and "
            + (f"a crossover at step {time_text(toy['crossover'])}."
               if np.isfinite(toy["crossover"]) else "no crossover within its run."))


def _tally(against: dict[str, dict[bool, pd.DataFrame]], name: str, strict: bool) -> str:
    """One account's tally over every arm (``ladder.against_all``) on the strict rungs or on
    the others: how many of its decided predictions were borne out, and where not."""
    return "; ".join(
        f"{arm}: {int(x['borne out'])} of {int(x['borne out'] + x['not borne out'])}"
        + (f" (not at {x['where not']})" if x["not borne out"] else "")
        for arm, t in against.items() for _, x in t[strict].iterrows()
        if x["account"] == name and x["borne out"] + x["not borne out"])


def accounts_text(accounts: list[dict[str, Any]],
                  against: dict[str, dict[bool, pd.DataFrame]]) -> str:
    """Each registered account of the first stage (``ladder.accounts``), cited where it has a
    reference, with how many of its decided predictions each arm's ladder bears out
    (``ladder.against_all``): on the rungs nobody had seen when it was written
    (``ladder.STRICT``), and apart, on those whose outcome it was written knowing."""
    lines = []
    for a in accounts:
        who = f"{{cite:t}}`{a['cite']}`" if a["cite"] else a["source"]
        strict, known = _tally(against, a["name"], True), _tally(against, a["name"], False)
        lines.append(f"* **{a['name']}** ({who}): {a['reading']} *In this build*, borne out on "
                     f"the rungs nobody had seen: {strict or 'none of them ran'}; on the rungs "
                     f"it was written knowing: {known or 'none decided'}.")
    return "\n".join(lines)
