"""The regime map chapter's words, written from its results: each cell against its
registration and the contrasts between regimes in words, the findings of the map and the
orderings against the toy, the phase diagram's caption and the rules of the verdicts per regime
(its decisions are ``chapters.regime_map``'s, ``verdict_rules`` states how they are made; its
tables for people are in ``shown``)."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from rlvr_dynamics import stats, survival
from rlvr_dynamics.chapters.regime_map import (AGREE_FACTOR, ENTROPY_MARGIN, SHRINK_MARGIN,
                                               TOY_SAME, order_agreement)
from rlvr_dynamics.regimes.crossover import DIRECTION, registrations


def _cells(names: list[str]) -> str:
    """A few regime-and-algorithm cells in words ("none" where there are none)."""
    return "; ".join(names) or "none"


# --- each cell against its registration; regimes against each other ---------------------------

def prediction_check_text(checks: dict[str, pd.DataFrame]) -> str:
    """How many cells agree with their registered crossover under each registered prediction
    (``chapter.cell_checks``), and how many lie slower, faster, or undecided."""
    parts = []
    for opt, t in checks.items():
        counts = t["reading"].value_counts()
        said = ", ".join(f"{n} {reading}" for reading, n in counts.items())
        parts.append(f"under {opt}, of {len(t)} cells: {said}")
    return (f"Each cell's crossover against its registration (within a factor of "
            f"{AGREE_FACTOR:g}: agrees): " + "; ".join(parts) + ".")


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


# --- the map -----------------------------------------------------------------------------------

def phase_caption(setting: str, D: Any, toy_seeds: int) -> str:
    """The caption of the LM's regime map beside the toy's prediction (``D``: the toy chapter's
    parameters)."""
    return (f"Left: each seed's crossover step (dots; not crossed within its run, censored: above "
            f"the line); right: the depth, mean and range over seeds. {setting}; dashed: the toy's registered "
            f"prediction from the same π0, rewards and G, the toy chapter's optimizer "
            f"({D.optimizer}, lr {D.lr:g}), {toy_seeds} seeds.")


def findings_text(table: pd.DataFrame, steps: int, probe_every: int) -> str:
    """What the regime map shows, in four bullets (each cell's numbers are in the summary table
    above, the pairwise orders in ``shown.order_table``; ``table``: ``chapter.with_toy``'s
    rows): where the rare path took over in the median run (the Kaplan-Meier median, a run
    that did not cross censored at its last probe, else at ``steps``) and where no seed
    crossed within its run (censored); where
    Pass@k on the rare-path-only problems at the base's mid-curve k fell more than
    ``SHRINK_MARGIN`` points below the base on the way (mean over seeds, deepest first); where
    it ended above or below the base by that margin, and the stalls; and per algorithm, how
    many of the pairs of regimes the toy sets apart the LM orders as the toy does
    (``order_agreement``)."""
    cells = []
    for (regime, algo), g in table.groupby(["regime", "algorithm"], sort=False):
        last = g["last step"] if "last step" in g else np.full(len(g), float(steps))
        cells.append({"cell": f"{regime}, {algo}",
                      "median": survival.median(g["crossover"], last).estimate,
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
           else "") + f"; no seed crossed within its run (censored) in {len(never)}: "
        f"{_cells(never)}.",
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


# --- the verdicts per regime -------------------------------------------------------------------

def verdict_rules() -> str:
    """How ``chapter.verdict_rows`` decides: the interval at ``stats.CONFIDENCE``, the margins
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
            "stepwise path no longer the rare one) reads *cannot inform* on the boundary's "
            "checks. These verdicts are shown, not recorded: the closing chapter reads the "
            "claim of the two stages from the scenario chapter's arm and its control.")


# --- GRPO-N's timing against the toy's orderings -----------------------------------------------

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
