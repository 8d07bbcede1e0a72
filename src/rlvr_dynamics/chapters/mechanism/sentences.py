"""The mechanism chapter's words: the plan as registered, the readings of items 3-5 and the
figure's caption, each written from the plan's record and the runs."""
from __future__ import annotations

from typing import Any

import numpy as np

from rlvr_dynamics.chapters.mechanism import (AFTER, BUILT, CALIBRATION, Reading, SGD,
                                              STAGE_TWO, explaining, seeds_fresh)
from rlvr_dynamics.chapters.sentences import dip_text, median_text, percent, signs_text
from rlvr_dynamics.regimes import clock, mechanism


def plan_text(record: dict[str, Any], commit: str | None) -> str:
    """The plan in words: when it was registered, the commit it is judged from, the seeds and
    whether they are fresh, the clocks and the rescaled crossovers."""
    p = record["parameters"]
    fresh = ("none of them was run or declared before (checked against every profile's "
             "results release, the results store where the plan was made, and every profile's "
             "declared seeds)" if seeds_fresh(record)
             else f"**some were run or declared before**: {record['run before']}")
    where = (f"released in commit {commit}" if commit else
             "not yet released in any commit: no run can be judged against it")
    lines = [f"The plan was registered at {record['registered']} UTC, {where}. Its "
             f"confirmatory seeds are {', '.join(map(str, p['seeds']))}: {fresh}."]
    for rung in STAGE_TWO:
        c = record["clock"][rung]
        if c["state"] != "read":
            lines.append(f"{rung}'s clock could not be read ({c['why']}).")
            continue
        if not np.isfinite(record["rescaled crossover"][rung]):
            lines.append(f"R1 did not cross within its run on {rung}'s base: no rescaled "
                         f"prediction.")
            continue
        lines.append(
            f"{rung}'s clock, from {len(c['rates'])} calibration run(s) of "
            f"{p['calibration_steps']} steps (seeds {', '.join(map(str, p['calibration_seeds']))}): "
            f"the network's stepwise log-ratio moves {c['estimate']:.3g} times as fast as R1's "
            f"[{c['low']:.3g}, {c['high']:.3g}] over at most its first "
            f"{record['rules']['window']} updates; R1's registered crossover {record['R1 crossover'][rung]:g} steps becomes "
            f"{record['rescaled crossover'][rung]:.0f} on the network's clock, so the runs need "
            f"{record['needed steps'][rung]} steps ({clock.HORIZON:g}x); "
            + (f"they run {p['stage_two_steps']}." if rung in p.get("stage_two_rungs", STAGE_TWO)
               else f"this profile calibrates {rung} only and gives it no time "
                    f"(`stage_two_rungs`: {', '.join(p['stage_two_rungs'])})."))
    return " ".join(lines)


def judged_text(R: Reading | None) -> str:
    """How many runs are judged, and the replays, in words."""
    if R is None:
        return ("Phase 1: the plan is registered and no run it judges was made. Release and "
                "commit it, then run phase 2.")
    runs = R.runs
    judged, replays = int(runs["judged"].sum()), int(runs["replay"].sum())
    text = (f"Of {len(runs)} runs, {judged} are judged (each recorded the plan's hash, began "
            f"after it, and began from a commit whose results release holds the plan byte for "
            f"byte).")
    if judged < len(runs):
        text += (f" The other {len(runs) - judged} are shown, not judged: the plan was not "
                 f"committed before they began.")
    if replays:
        text += f" {replays} are replays: they were already released at their commit."
    return text


def stage_two_text(R: Reading | None) -> str:
    """Item 3's reading per rung."""
    if R is None:
        return ""
    lines = []
    for rung, s in R.stage_two.items():
        m = s.median
        lines.append(f"**{rung} GRPO**: median crossover "
                     f"{median_text(m.estimate, (m.low, m.high), m.horizon)} over {m.runs} "
                     f"run(s), against a rescaled crossover of {s.predicted:.0f} steps; "
                     f"{s.stalled} of {m.runs} stalled. Reading: *{s.outcome}*"
                     + (f" ({s.why})." if s.why else "."))
    return "\n\n".join(lines)


def hypotheses_text(R: Reading | None) -> str:
    """Item 4's reading: GRPO-N as built on each rung here, each hypothesis's outcome and the
    attribution, and which explains."""
    if R is None:
        return ""
    found = R.culprit or "no kind for certain"
    fid = [x for x in R.fidelity if np.isfinite(x)]
    built = ", ".join(f"{rung} *{mechanism.rare_path(R.dips.get(f'{rung} GRPO-N'))}*"
                      for rung in BUILT)
    lines = [f"GRPO-N as built, on this profile's bases (a reading can turn with a base's "
             f"bytes: the ladder's page, on two builds of one arm): {built}. The attribution (as-built GRPO-N of {', '.join(BUILT)}) names as the culprit: "
             f"**{found}**"
             + (f"; its first-order prediction over the measured change of the next update, "
                f"median {np.median(fid):.2f} over {len(fid)} attributed updates."
                if fid else ".")]
    for _, row in R.hypotheses.iterrows():
        named = f" (names {row['named']})" if row["named"] else ""
        lines.append(f"({row['hypothesis']}) {row['claim']}: *{row['outcome']}*{named}; the "
                     f"attribution {row['attribution']}.")
    ex = explaining(R.hypotheses)
    lines.append("Which explains GRPO-N's loss: " + (", ".join(f"({h})" for h in ex)
                                                      if ex else "none of (a)-(c)") + ".")
    return "\n\n".join(lines)


def remedy_text(R: Reading | None) -> str:
    """Item 5's reading."""
    if R is None:
        return ""
    if R.remedy is None:
        return "The registered rule names no remedy for this outcome of item 4."
    return (f"The rule names the remedy *{R.remedy}*; on {' and '.join(BUILT)} GRPO-N it "
            f"reads: *{R.remedy_outcome}*.")


def dip_row(d) -> str:
    """A way's dip with its interval, signs and seeds."""
    return f"{dip_text(d.estimate, (d.low, d.high))} ({signs_text(d.fell, d.rose, d.seeds)})"


def falls_caption(setting: str, seeds: list[int], rungs: list[str]) -> str:
    """The figure's caption: its settings, seeds and spread (``rungs``: item 3's)."""
    return (f"P(stepwise) on the rare-path-only problems relative to its start, the geometric "
            f"mean over seeds {', '.join(map(str, seeds))} (line) and the lowest to the highest "
            f"seed (band); left: GRPO on {' and '.join(rungs)} with each rescaled crossover "
            f"dashed; right: "
            f"GRPO-N as built, on {AFTER}, under {SGD} (R3), with one kind of negative spared "
            f"and with the remedy, the margin of a loss ({percent(-mechanism.MARGIN)}) dotted. "
            f"{setting} The calibration runs ({CALIBRATION}) are not drawn.")
