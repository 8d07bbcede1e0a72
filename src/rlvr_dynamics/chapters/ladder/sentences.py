"""The ladder chapter's words, written from its results: each arm's ladder rung by rung (where
the first stage turns, the slopes, whether R5 shows both stages), the registered accounts
against the rungs that ran, and the slopes figure's caption. The decisions are the library's
(``regimes.ladder``); here they are only written out."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from rlvr_dynamics.chapters.ladder.shown import PER_SEED
from rlvr_dynamics.chapters.sentences import (censored_fall_text, dip_text, median_text, percent,
                                              signs_text, time_text)
from rlvr_dynamics.chapters.style import number, rounded
from rlvr_dynamics.regimes import reconcile
from rlvr_dynamics.regimes.ladder import (LADDER, MODEL_RUNGS, NO, YES, both_stages,
                                          censored_no, toy_stage, turns)
from rlvr_dynamics.regimes.toy_rungs import AS_BUILT, PROPORTIONAL, TABULAR, WINDOW, WITHOUT


HOW_SHORT = {AS_BUILT: "R4 (as built)", WITHOUT: "without stepwise groups"}
"""How a run was trained, in a few words (a model rung's runs by its name)."""


STAGE_WORDS = {YES: "a first stage", NO: "none"}
"""A rung's first-stage reading (``ladder.rung_rows``) in words; a check's verdict otherwise."""



def _censored(x: pd.Series) -> bool:
    """Whether a rung's fall was still at its lowest at the last probe (``dips.Dip.censored``)."""
    censored = x.get("dip censored")
    return isinstance(censored, (bool, np.bool_)) and bool(censored)


def _dip(x: pd.Series) -> str:
    """One rung's dip (``ladder.rung_rows``' row) as a signed percentage ("-" where none), the
    geometric mean over seeds ("censored" where the fall was still at its lowest at the last
    probe)."""
    return percent(x["dip"]) + (" (censored)" if _censored(x) else "")


def _dip_words(rung: str, x: pd.Series) -> str:
    """One rung's dip, how many seeds fell (the model's rungs), whether it is censored and its
    first-stage reading, in words."""
    fell, values = x.get("fell"), x.get("dip seeds")
    notes = ([f"{fell} of {len(values)} seeds fell"] if isinstance(values, tuple)
             and len(values) <= PER_SEED and fell is not None else [])
    notes += ["censored"] * _censored(x)
    notes.append(STAGE_WORDS.get(x["first stage"], x["first stage"]))
    return f"{rung} {percent(x['dip'])} ({'; '.join(notes)})"


def ladder_text(rungs: dict[str, pd.DataFrame], slopes: pd.DataFrame,
                judged: dict[tuple[str, str], dict[str, Any]] | None = None) -> str:
    """The ladder in words, per arm (``ladder.rung_rows``) and algorithm: the dip per rung and
    where the first stage turns (``ladder.turns``), the model's slope over the first updates
    (``ladder.slope_checks``: as built and without stepwise groups) and what it reads as, the
    rungs not run in this build, and whether R5 shows both stages beside what its own
    registration predicted (``judged``: (arm, how) -> the registration that judges those runs,
    ``chapters.ladder.Ladder.judged``)."""
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
    interval = x.get("dip interval")
    if isinstance(interval, tuple):
        dip = (f"P(stepwise) {dip_text(x['dip'], interval)} on the log scale, "
               f"{signs_text(x['fell'], x['rose'], len(x['dip seeds']))}"
               + (f"; {censored_fall_text(x['dip step'])}" if x.get("dip censored") else ""))
    stage = x["first stage"]
    horizon = x.get("horizon")
    median = median_text(x["crossover"], x.get("crossover interval")
                         if isinstance(x.get("crossover interval"), tuple) else None,
                         horizon if horizon is not None and np.isfinite(horizon) else None)
    cross = (f"the stepwise path overtakes the direct one at a median step of {median}"
             if np.isfinite(x["crossover"]) else
             f"the median run had not crossed over: {median}" if horizon is not None
             and np.isfinite(horizon) else
             "the median run had not crossed over within its run (censored)")
    first = {YES: f"shows the first stage ({dip})", NO: f"shows no first stage ({dip})"}.get(
        stage, f"may or may not show a first stage (its check reads *{stage}*; {dip})")
    answer = both_stages(rows)
    said = (f"shows both stages: {dip} at its lowest, then {cross}" if answer == YES else
            f"does not show both stages within its run: it {first}, and {cross}; a censored "
            f"reading, not a finding that the second stage never comes"
            if censored_no(rows) else
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
               if np.isfinite(toy["crossover"]) else "no crossover within its run (censored)."))


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


def slopes_caption(setting: str) -> str:
    """The caption of ``figures.plot_slopes``: what is drawn, over which updates, and the
    settings."""
    return (f"The first-character masses after each of the first {WINDOW} updates, as changes "
            f"of their log-ratios from the start, one line a seed (means over the probe's drawn "
            f"problems); dashed: the tabular update, dotted: proportional spreading. {setting}")



CAUSE_WORDS = {"base": "the base's bytes", "code": "the code",
               "undecided": "undecided by the four cells",
               "no anchor": "not read: cell A (cpu-map's code and base) did not reproduce cpu-map"}
"""``regimes.reconcile.cause`` in words."""


def reconcile_text(cells: pd.DataFrame, cause: str, commits: dict[str, str | None]) -> str:
    """What changed between cpu-map and the ladder, from the reconciliation's cells
    (``regimes.reconcile``): the cause its registered rule names, what each base did under
    both codes, and what the cells do not cover."""
    c = cells
    same = (c.loc["A", "crossovers"] == c.loc["D", "crossovers"]
            and c.loc["A", "change"] == c.loc["D", "change"])
    at = {k: f"`{v}`" if v else "(not in this checkout's history)" for k, v in commits.items()}
    x, e = c.loc["A"], c.loc["B"]
    return (
        f"**What changed between cpu-map and the ladder: {CAUSE_WORDS[cause]}.** The design "
        f"and its rule were committed at {at['design']}, the commands at {at['script']}, both "
        f"before any cell ran; the outcome at {at['outcome']}. With the base pretrained on the "
        f"{x['base of']} (sha256 {x['base'][:8]}), cpu-map's code (A) crossed at steps "
        f"{', '.join(f'{s:.0f}' for s in x['crossovers'])} with P(stepwise) "
        f"{percent(x['mean change'])} at the read step, and the ladder's code (D) "
        f"{'did exactly the same, seed by seed' if same else 'did otherwise: see the table'}. "
        f"With the base of the same `PretrainConfig` pretrained on the {e['base of']} (sha256 "
        f"{e['base'][:8]}), the runs crossed by step 120 in {int(reconcile.crossed_by(c, 120)['B'])}"
        f" of {len(e['crossovers'])} seeds under the ladder's code (B) and "
        f"{int(reconcile.crossed_by(c, 120)['C'])} under cpu-map's (C), with P(stepwise) "
        f"{percent(e['mean change'])} and {percent(c.loc['C', 'mean change'])}. The cells ran on "
        f"one machine ({c.attrs['machine']}, {c.attrs['cores']} cores, {c.attrs['when']}), at "
        "the 0.02 arm's GRPO only, seeds 0-2, to step 120: that the builds' gap at the 0.01 "
        "arm follows the bases too is expected, and untested. cpu-map's machine was "
        "not recorded: that it pretrained the first base's bytes rests on cell A reproducing "
        "its crossovers exactly. A reading that turns with the base's bytes is a property of "
        "one base, not of RLVR.")
