"""The regime map chapter (``notebooks/regime_map.md``): the toy's phase diagram asked of the
language model. Each regime (a base's habits at its first completion character and a training
mix) is trained with each algorithm over seeds; each *cell* (a regime and an algorithm) is read
against the crossover its registration predicted before the runs (``regimes.crossover``), the
algorithms and the regimes against each other, the map beside the toy's (``regimes.stages``,
``regimes.toy_mapping``), and the paper's LM claims per regime.

Its runs and their readings are the library's (``regimes.grid``); here: the chapter's
parameters (``Params``: a ``regimes.grid.Grid`` with the pairs of regimes it sets against each
other), the computations it shows (``cell_checks``, ``regime_contrasts``, ``with_toy`` and
those of the library it reads as they are) and its decisions (``verdict_rows``: every check per regime with its statistic,
interval, margin and outcome). It records nothing for the closing chapter: the scenario
chapter records the claims. Its figures are in ``figures``, its tables for people in
``shown``, its words in ``sentences``.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd
from pydantic import model_validator

from rlvr_dynamics import stats
from rlvr_dynamics.chapters import ListOf, ChapterParams, require
from rlvr_dynamics.regimes.crossover import (AGREE_FACTOR, SAME_FACTOR, comparisons,
                                             contrasts, prediction_checks, registered_pairs)
from rlvr_dynamics.regimes.grid import Grid
from rlvr_dynamics.regimes.stages import (ENTROPY_MARGIN, SHRINK_MARGIN, entropy_above,
                                          final_entropy, keeps_boundary, stage_effects, summary,
                                          two_stages)
from rlvr_dynamics.regimes.toy_mapping import (TOY_SAME, order_agreement, orderings,
                                               toy_side)


class Params(ChapterParams, Grid):
    """The grid of runs (``regimes.grid.Grid``: regimes, algorithms, seeds, steps, probes, the
    toy's prediction) whose regimes form the map, with the pairs of regimes set against each
    other (``contrasts``: each two regimes of ``regimes``; a smaller group against a larger
    one, one training mix against another)."""

    contrasts: ListOf(ListOf(str, 2), 0) = []

    @model_validator(mode="after")
    def _map(self):
        for pair in self.contrasts:
            require(len(pair) == 2 and all(r in self.regimes for r in pair),
                    f"contrasts has {pair!r}: each must be two regimes of {list(self.regimes)}")
        return self


# --- the computations the page shows -------------------------------------------------------------

def cell_checks(table: pd.DataFrame, registered: dict[str, dict[str, Any]]
                ) -> dict[str, pd.DataFrame]:
    """Each cell's crossover against its registration under every registered prediction (the
    toy's runs under each optimizer, then the deterministic laws): registration name ->
    ``crossover.prediction_checks`` of ``crossover.registered_pairs``' runs (``table``:
    ``stages.stages``' rows)."""
    return {name: prediction_checks(p)
            for name, p in registered_pairs(table, registered).items()}


def regime_contrasts(P: Params, table: pd.DataFrame, registered: dict[str, dict[str, Any]]
                     ) -> pd.DataFrame:
    """The pairs of regimes of ``P.contrasts`` set against each other per algorithm, beside the
    direction each registered prediction gave (``crossover.contrasts``)."""
    return contrasts(table, registered_pairs(table, registered),
                     [tuple(pair) for pair in P.contrasts])


def with_toy(table: pd.DataFrame, registered: dict[str, dict[str, Any]]
             ) -> tuple[pd.DataFrame, dict[str, dict[str, dict[str, float]]]]:
    """The runs (``stages.stages``' rows) beside the toy's registered prediction for their
    regime and algorithm (``toy_mapping.toy_side``: the base's π0 and rewards, the toy's
    crossover and dip under the toy chapter's optimizer), and the toy's times to crossover
    under each optimizer (regime -> optimizer -> algorithm -> time, for
    ``toy_mapping.orderings``)."""
    rows, times = toy_side(registered, table["algorithm"].unique())
    return table.merge(rows, on=["regime", "algorithm"]), times


# --- the decisions -----------------------------------------------------------------------------

SHRINKAGE, EXPANSION, BOTH = "shrinkage", "expansion", "shrinkage, then expansion"
"""The stage checks per regime and algorithm (``verdict_rows``, claim ``lm_two_stages``)."""
KEEPS = "GRPO-N keeps the base's boundary"
"""The check of the large-k claim per regime (claim ``large_k``)."""
ENTROPY = "GRPO-N answer entropy above GRPO"
"""The check of the answer-entropy claim per regime (claim ``answer_entropy``)."""

CHECKS = {SHRINKAGE: f"the depth of mid-curve Pass@k lies below -{SHRINK_MARGIN:g} points",
          EXPANSION: f"the gain of mid-curve Pass@k lies above +{SHRINK_MARGIN:g} points",
          BOTH: "both stages replicate, every seed crossing over after its deepest point",
          KEEPS: f"GRPO-N's depth lies above -{SHRINK_MARGIN:g} points (non-inferiority)",
          ENTROPY: f"GRPO-N's answer entropy at the end exceeds GRPO's by {ENTROPY_MARGIN:g} "
                   f"nats"}
"""What each check of ``verdict_rows`` asks, in words."""

STATISTICS = {SHRINKAGE: "depth: mid-curve Pass@k on the rare-path-only problems at the step "
                         "the other seeds find lowest, minus the base's, points",
              EXPANSION: "gain: mid-curve Pass@k on the rare-path-only problems at the end, "
                         "minus the base's, points",
              BOTH: "the checks above",
              KEEPS: "GRPO-N's depth, points",
              ENTROPY: "answer entropy at the end, GRPO-N minus GRPO, nats"}
"""The statistic each check of ``verdict_rows`` reads."""

ROWS = ["claim", "regime", "algorithm", "check", "asks", "statistic", "estimate", "low", "high",
        "margin", "outcome", "votes", "per seed", "signs"]
"""``verdict_rows``' columns; ``per seed``: the values over seeds a one-sample check reads (a
tuple; None for a check of two samples or of none), ``signs``: how many lie above and below 0
(issue 51: shown beside each interval)."""


def _row(claim: str, regime: str, algorithm: str, check: str, interval: Sequence[float],
         margin: float, outcome: str, values=None) -> dict:
    """One check as ``verdict_rows`` holds it (``interval``: estimate, low, high; ``values``:
    its per-seed values, or None); no check of this chapter votes (the scenario chapter
    records the claims)."""
    seeds = None if values is None else tuple(float(v) for v in values)
    signs = None if seeds is None else (sum(v > 0 for v in seeds), sum(v < 0 for v in seeds))
    return dict(zip(ROWS, (claim, regime, algorithm, check, CHECKS[check], STATISTICS[check],
                           *(float(x) for x in interval), margin, outcome, False, seeds,
                           signs)))


def _effect(e: stats.Effect) -> tuple[float, float, float]:
    return e.estimate, e.low, e.high


def _negated(e: stats.Effect) -> tuple[float, float, float]:
    """An effect estimated on negated values (the shrinkage: minus the depth), on the original
    scale (the depth), its interval turned round."""
    return -e.estimate, -e.high, -e.low


NO_INTERVAL = (np.nan, np.nan, np.nan)


def verdict_rows(table: pd.DataFrame, entropy: pd.DataFrame,
                 informs: dict[str, tuple[bool, str]]) -> pd.DataFrame:
    """Per regime, the paper's LM claims as checks over seeds, one row each (``ROWS``): its
    claim, regime and algorithm, what it asks, the statistic with its estimate and Student-t
    interval over seeds, the margin and the outcome; on the rare-path-only problems at the
    base's mid-curve k (``table``: ``stages.stages``' rows), in points of Pass@k against the
    base:

    * ``lm_two_stages``, per algorithm: ``SHRINKAGE`` (the depth below -``SHRINK_MARGIN``) and
      ``EXPANSION`` (the gain above the margin; ``stages.stage_effects``), and ``BOTH``
      (``stages.two_stages``: the two in that order in every seed; no interval of its own);
    * ``large_k``: ``KEEPS`` (``stages.keeps_boundary``, GRPO-N's depth, non-inferiority),
      where GRPO-N ran;
    * ``answer_entropy``: ``ENTROPY`` (``stages.entropy_above``; ``entropy``:
      ``stages.final_entropy``'s rows), where GRPO and GRPO-N both ran.

    A regime whose base cannot show its boundary move (``informs``: regime -> (informs, why
    not), ``stages.informs``) reads ``stats.CANNOT_INFORM`` on the boundary's checks (the
    stages and ``KEEPS``), its estimates kept. Beside each interval, the per-seed values it
    reads and how many lie above and below 0 (``ROWS``). No row votes: this chapter records
    nothing."""
    rows = []
    for regime, g in table.groupby("regime", sort=False):
        ok, _ = informs[regime]
        for algo, h in g.groupby("algorithm", sort=False):
            shrink, grow, ordered = stage_effects(h)
            for check, interval, outcome, values in (
                    (SHRINKAGE, _negated(shrink), shrink.verdict, h["depth"]),
                    (EXPANSION, _effect(grow), grow.verdict, h["gain"]),
                    (BOTH, NO_INTERVAL, two_stages(shrink.verdict, grow.verdict, ordered),
                     None)):
                rows.append(_row("lm_two_stages", regime, algo, check, interval, SHRINK_MARGIN,
                                 outcome if ok else stats.CANNOT_INFORM, values))
        e = keeps_boundary(g)
        if e is not None:
            rows.append(_row("large_k", regime, "", KEEPS, _effect(e), SHRINK_MARGIN,
                             e.verdict if ok else stats.CANNOT_INFORM,
                             g[g["algorithm"] == "GRPO-N"]["depth"]))
        e = entropy_above(entropy, regime)
        if e is not None:
            rows.append(_row("answer_entropy", regime, "", ENTROPY, _effect(e), ENTROPY_MARGIN,
                             e.verdict))
    return pd.DataFrame(rows, columns=ROWS)
