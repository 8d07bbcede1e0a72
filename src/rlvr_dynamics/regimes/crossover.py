"""The LM's crossover against the toy's registered one, cell by cell, and two algorithms set
against each other on the same cells (issue: the transition law, group size, reward gap, NSR).

A *cell* is a regime and an algorithm. Its check reads, over seeds, the log of the LM's
crossover over the toy's registered one (``stages.predicted_vs_measured``, under one optimizer)
against the margin ``log(AGREE_FACTOR)``: inside it the toy's time *agrees*; beyond it the LM
is *slower* or *faster*. A run that did not cross enters with its last probe, a lower bound
on its time, so the mean is a lower bound too: with such a run the cell can still read
*slower*, and otherwise *cannot inform* (its runs ended too early to see the toy's time).
Where the toy predicts no crossover at all, the cell agrees when no run crossed and reads
faster when any did (no interval: a count).

Two algorithms on the same regimes (NSR against GRPO-N, say) are compared by their
crossovers (the difference of log times, margin ``log(SAME_FACTOR)``) and by the gain of
mid-curve Pass@k on the rare-path-only problems (margin ``stages.SHRINK_MARGIN`` points), each
a two-sample Student-t check over seeds (``stats.two_sample``); where both end at the same
floor or ceiling of Pass@k, the gains cannot inform. A run of the first that did
not cross makes the difference a lower bound (only "the first later" can stand), one of the
second an upper bound (only "the first earlier"); with both, the crossovers cannot inform.

Two regimes under one algorithm (G 4 against G 16, a training mix against another: the
chapter's ``contrasts``) are compared the same way on their crossovers, and the direction the
LM shows (later, earlier, the same within ``SAME_FACTOR``) is set beside the direction each
registered prediction gave before the runs (the ratio of its two registered times).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from rlvr_dynamics import stats
from rlvr_dynamics.regimes.stages import SHRINK_MARGIN, predicted_vs_measured
from rlvr_dynamics.regimes.toy_mapping import OWN

AGREE_FACTOR = 2.0
"""A cell's crossover agrees with the toy's when within this factor of it (declared before the
cpu-grid runs)."""

SAME_FACTOR = 1.5
"""Two algorithms' crossovers differ when more than this factor apart (declared before the
cpu-grid runs)."""

AGREES, SLOWER, FASTER = "agrees", "slower than the toy", "faster than the toy"
READING = {stats.NO_EFFECT: AGREES, stats.REPLICATES: SLOWER, stats.OPPOSITE: FASTER}
"""The check's verdict in this question's words (positive: the LM slower)."""


def registered_pairs(table: pd.DataFrame, registered: dict[str, dict[str, Any]]
                     ) -> dict[str, pd.DataFrame]:
    """Every registered prediction set against the runs (``stages.predicted_vs_measured``):
    the toy's runs under each optimizer, then each deterministic law that a registration
    holds (``toy_mapping.toy_laws``; older registrations have none); empty ones left out."""
    optimizers = dict.fromkeys(o for rec in registered.values() for o in rec["predictions"]
                               if o != OWN)
    laws = dict.fromkeys(law for rec in registered.values() for law in rec.get("laws", {}))
    pairs = {**{o: predicted_vs_measured(table, registered, o) for o in optimizers},
             **{law: predicted_vs_measured(table, registered, law, "laws") for law in laws}}
    return {name: p for name, p in pairs.items() if not p.empty}


def prediction_checks(pairs: pd.DataFrame) -> pd.DataFrame:
    """Per cell of ``pairs`` (``stages.predicted_vs_measured``'s rows under one optimizer):
    the toy's registered crossover, the LM's per seed, how many runs did not cross, the
    mean log ratio with its interval and the reading (``READING``; a toy that never crosses:
    ``AGREES`` when no run crossed, else ``FASTER``)."""
    rows = []
    for (regime, algorithm), g in pairs.groupby(["regime", "algorithm"], sort=False):
        predicted = float(g["predicted"].iloc[0])
        row = {"regime": regime, "algorithm": algorithm, "toy": predicted,
               "LM": tuple(np.where(g["censored"], np.inf, g["measured"])),
               "not crossed": int(g["censored"].sum())}
        if not np.isfinite(predicted):
            row.update(estimate=np.nan, low=np.nan, high=np.nan,
                       reading=AGREES if g["censored"].all() else FASTER)
        else:
            e = stats.one_sample(np.log(g["measured"] / predicted), math.log(AGREE_FACTOR))
            reading = READING.get(e.verdict, e.verdict)
            if g["censored"].any() and reading != SLOWER:
                reading = stats.CANNOT_INFORM
            row.update(estimate=e.estimate, low=e.low, high=e.high, reading=reading)
        rows.append(row)
    return pd.DataFrame(rows)


def censored_verdict(verdict: str, first: bool, second: bool) -> str:
    """A crossover difference's verdict where the first algorithm's (``first``) or the
    second's (``second``) runs include one that did not cross: a lower bound on the difference
    keeps only "later" (``stats.REPLICATES``), an upper bound only "earlier"
    (``stats.OPPOSITE``); what else it says, and anything with both, cannot inform."""
    if (first and second) or (first and verdict != stats.REPLICATES) \
            or (second and verdict != stats.OPPOSITE):
        return stats.CANNOT_INFORM if first or second else verdict
    return verdict


def not_crossed(runs: pd.DataFrame) -> bool:
    """Whether any of ``runs`` (rows of ``stages``) did not cross within its probes."""
    return bool(np.isinf(runs["crossover"]).any())


def at_same_bound(x: pd.DataFrame, y: pd.DataFrame) -> bool:
    """Whether two sets of runs (rows of ``stages``) end, on average, at the same floor or
    ceiling of Pass@k (``stats.bound``), where no difference of their gains can show."""
    side = stats.bound(float(x["end"].mean()))
    return bool(side) and side == stats.bound(float(y["end"].mean()))


def compare(table: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """Algorithm ``a`` against ``b`` on every regime where both ran (``table``: ``stages``'
    rows): the difference of their log crossovers (censored at the last probe) and of their
    gains of mid-curve Pass@k, each with its interval and verdict (positive: ``a`` later,
    ``a`` gains more); the gains *cannot inform* where both end at the same floor or ceiling
    (``at_same_bound``)."""
    rows = []
    for regime, g in table.groupby("regime", sort=False):
        x, y = (g[g["algorithm"] == name] for name in (a, b))
        if x.empty or y.empty:
            continue
        for quantity, values, margin in (
                ("log crossover", log_crossover, math.log(SAME_FACTOR)),
                ("gain of Pass@k (points)", lambda r: r["gain"].to_numpy(float), SHRINK_MARGIN)):
            e = stats.two_sample(values(x), values(y), margin)
            verdict = e.verdict
            if quantity == "log crossover":
                verdict = censored_verdict(verdict, not_crossed(x), not_crossed(y))
            elif at_same_bound(x, y):
                verdict = stats.CANNOT_INFORM
            rows.append({"regime": regime, "comparison": f"{a} - {b}", "quantity": quantity,
                         "estimate": e.estimate, "low": e.low, "high": e.high,
                         "margin": margin, "verdict": verdict,
                         "not crossed": f"{int(np.isinf(x['crossover']).sum())} / "
                                        f"{int(np.isinf(y['crossover']).sum())}"})
    return pd.DataFrame(rows)


PAIRS = (("GRPO-N", "GRPO"), ("NSR", "GRPO-N"), ("W-REINFORCE", "GRPO-N"), ("NSR", "GRPO"))
"""The comparisons ``comparisons`` makes where both algorithms ran: the paper's pair, then
NSR and W-REINFORCE against the negative-only update they are closest to, and NSR against
GRPO."""


def comparisons(table: pd.DataFrame) -> pd.DataFrame:
    """``compare`` for each pair of ``PAIRS`` whose algorithms both ran (``table``: ``stages``'
    rows); empty where none did."""
    ran = set(table["algorithm"])
    parts = [compare(table, a, b) for a, b in PAIRS if {a, b} <= ran]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


LATER, EARLIER, SAME = "later", "earlier", "the same"
DIRECTION = {stats.REPLICATES: LATER, stats.OPPOSITE: EARLIER, stats.NO_EFFECT: SAME}
"""A crossover difference's verdict as the direction of the first regime against the second."""


AGREES_WITH = "agrees ({})"
"""The column of ``contrasts`` that says whether the LM's direction is a registration's."""


def registrations(contrasted: pd.DataFrame) -> dict[str, str]:
    """Registration name -> its ``AGREES_WITH`` column, for the columns ``contrasts`` made."""
    head, tail = AGREES_WITH.split("{}")
    return {col[len(head):len(col) - len(tail)]: col for col in contrasted.columns
            if col.startswith(head) and col.endswith(tail)}


def direction(first: float, second: float) -> str:
    """The direction of registered crossover ``first`` against ``second`` (inf: never):
    ``LATER`` or ``EARLIER`` beyond a factor ``SAME_FACTOR``, else ``SAME``."""
    if np.isinf(first) and np.isinf(second):
        return SAME
    if np.isinf(first) or np.isinf(second):
        return LATER if np.isinf(first) else EARLIER
    ratio = first / second
    return LATER if ratio > SAME_FACTOR else EARLIER if ratio < 1 / SAME_FACTOR else SAME


def log_crossover(runs: pd.DataFrame) -> np.ndarray:
    """Each run's log crossover, a run that did not cross at its last probe (a lower bound)."""
    return np.log(np.where(np.isinf(runs["crossover"]), runs["last step"], runs["crossover"]))


def contrasts(table: pd.DataFrame, pairs: dict[str, pd.DataFrame],
              versus: list[tuple[str, str]]) -> pd.DataFrame:
    """Regime a against regime b (``versus``) for each algorithm that ran on both (``table``:
    ``stages``' rows): the difference of their log crossovers over seeds (``stats.two_sample``,
    margin log ``SAME_FACTOR``, censored as in ``compare``; ``estimate``, ``low``, ``high``),
    read as the LM's direction (``DIRECTION``; the verdict itself where it decided none);
    beside it, for each registered prediction (``pairs``: ``registered_pairs``), the direction
    of its two registered times, and whether the LM's direction agrees with it (``AGREES_WITH``;
    None where the LM's check did not decide a direction)."""
    rows = []
    for a, b in versus:
        for algorithm in table["algorithm"].unique():
            x, y = (table[(table["regime"] == r) & (table["algorithm"] == algorithm)]
                    for r in (a, b))
            if x.empty or y.empty:
                continue
            e = stats.two_sample(log_crossover(x), log_crossover(y), math.log(SAME_FACTOR))
            verdict = censored_verdict(e.verdict, not_crossed(x), not_crossed(y))
            lm = DIRECTION.get(verdict, verdict)
            row = {"contrast": f"{a} - {b}", "algorithm": algorithm, "estimate": e.estimate,
                   "low": e.low, "high": e.high, "LM": lm}
            for name, p in pairs.items():
                times = {r: p[(p["regime"] == r) & (p["algorithm"] == algorithm)]["predicted"]
                         for r in (a, b)}
                if any(t.empty for t in times.values()):
                    continue
                toy = direction(float(times[a].iloc[0]), float(times[b].iloc[0]))
                row[name] = toy
                row[AGREES_WITH.format(name)] = (lm == toy) if lm in DIRECTION.values() else None
            rows.append(row)
    return pd.DataFrame(rows)
