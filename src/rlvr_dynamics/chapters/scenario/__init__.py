"""The scenario chapter (``notebooks/scenario.md``): the paper's scenario inside the language
model -- three paths competing at one decision -- against its control, the toy's prediction for
each base registered before the runs, and the paper's two claims about it decided by rules
declared with the code (``regimes.scenario``).

Its runs and their readings are the library's (``regimes.grid``); here: the chapter's
parameters (``Params``: a ``regimes.grid.Grid`` whose regimes are arms and their controls),
and its decisions (``verdict_rows``: every check with its statistic, interval, margin and
outcome; ``record_rows``: what the closing chapter reads); the steps of its page are the
library's (``register_all``, ``train_grid``, ``readings``). Its figures are in ``figures``, its tables for people in ``shown``, its words in
``sentences``.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from pydantic import model_validator

from rlvr_dynamics import stats, verdicts
from rlvr_dynamics.chapters import ChapterParams, require
from rlvr_dynamics.regimes.grid import Grid
from rlvr_dynamics.regimes.scenario import (FALL_MARGIN, LARGE_K, MATCH_FACTOR,  # noqa: F401
                                            RISE_MARGIN, large_k, matched, verdict)
from rlvr_dynamics.regimes.stages import predicted_vs_measured


class Params(ChapterParams, Grid):
    """The grid of runs (``regimes.grid.Grid``: regimes, algorithms, seeds, steps, probes, the
    toy's prediction) whose regimes are the paper's scenario: each arm (a regime with a guess)
    and its control (``controls``: arm -> the same regime without the guess)."""

    controls: dict[str, str] = {"three paths": "two paths"}

    @model_validator(mode="after")
    def _scenario(self):
        require(len(self.controls) >= 1, "controls must name at least one arm and its control")
        for arm, control in self.controls.items():
            require(arm in self.regimes and control in self.regimes,
                    f"controls[{arm!r}]={control!r}: both must be regimes; regimes: "
                    f"{list(self.regimes)}")
            a, c = self.regimes[arm], self.regimes[control]
            require(a.guess is not None and c.guess is None
                    and a.model_dump(exclude={"guess"}) == c.model_dump(exclude={"guess"}),
                    f"controls[{arm!r}]={control!r}: the control must be the arm's regime "
                    f"without its guess, got {a} and {c}")
        paired = {n for pair in self.controls.items() for n in pair}
        require(set(self.regimes) == paired,
                f"regimes {sorted(set(self.regimes) - paired)} are neither an arm of controls "
                "nor its control (the regime map chapter reads regimes of any kind)")
        return self


def predicted(table: pd.DataFrame, registered: dict[str, dict[str, Any]]
              ) -> dict[str, pd.DataFrame]:
    """Run by run, the LM's crossover against the toy's registered one under each optimizer
    (``stages.predicted_vs_measured``)."""
    return {opt: predicted_vs_measured(table, registered, opt) for opt in ("Adam", "SGD")}


# --- the decisions -----------------------------------------------------------------------------

BOTH = "both stages"
"""The check that decides the two-stage claim per arm and algorithm (``verdict_rows``)."""
CHECKS = {"stage 1": f"P(stepwise) on the rare-path-only problems falls by more than "
                     f"{FALL_MARGIN:.0%} of the base's at its lowest",
          "against the control": f"the fall exceeds the control's by {FALL_MARGIN:.0%}",
          "stage 2": f"mid-curve Pass@k on the rare-path-only problems ends more than "
                     f"{RISE_MARGIN:g} points above the base in every seed",
          BOTH: "stage 1, then stage 2, the fall the bad path's doing"}
"""What each of the scenario's checks asks (``regimes.scenario.verdict``), as the verdict
record states it."""
ROWS = ["claim", "arm", "algorithm", "check", "asks", "statistic", "estimate", "low", "high",
        "margin", "outcome", "votes", "per seed", "signs"]
"""``verdict_rows``' columns; ``per seed``: the values over seeds that a one-sample check reads
(a tuple; None for a check of two samples or of none), ``signs``: how many of them lie above
and below 0 (issue 51: shown beside each interval)."""


def signs(values) -> tuple[int, int]:
    """How many of ``values`` lie above 0 and how many below."""
    x = np.asarray(values, dtype=float)
    return int((x > 0).sum()), int((x < 0).sum())


def _row(claim: str, arm: str, algorithm: str, check: str, asks: str, statistic: str,
         effect: stats.Effect | None, margin: float, outcome: str, votes: bool,
         values=None) -> dict:
    e = effect or stats.Effect(np.nan, np.nan, np.nan, 0.0)  # no estimate: a placeholder
    seeds = None if values is None else tuple(float(v) for v in values)
    return dict(zip(ROWS, (claim, arm, algorithm, check, asks, statistic, e.estimate, e.low,
                           e.high, margin, outcome, votes, seeds,
                           None if seeds is None else signs(seeds))))


LARGE_K_SEEDS = {
    LARGE_K[0]: lambda runs: runs[runs["algorithm"] == "GRPO-N"]["gain"],
    LARGE_K[1]: lambda runs: runs[runs["algorithm"] == "GRPO"]["gain"],
    LARGE_K[2]: lambda runs: None}
"""The per-seed values shown beside each ``large_k`` check: the gains of the algorithm it is
about (GRPO-N's, GRPO's); none for the two-sample one."""


def verdict_rows(table: pd.DataFrame, controls: dict[str, str],
                 informs: dict[str, tuple[bool, str]],
                 same_start: dict[str, tuple[bool, str]]) -> pd.DataFrame:
    """Every check of the scenario's two claims, one row each: its claim, arm and algorithm,
    what it asks, the statistic with its estimate and interval over seeds, the margin, the
    outcome, whether it votes on the claim, and beside the interval the values per seed with
    how many lie above and below 0 (``ROWS``).

    * ``lm_two_stages``: per arm and algorithm the three checks of ``regimes.scenario.verdict``
      (the relative fall of P(stepwise) at its lowest; the same against the control's, which
      cannot inform where the two bases do not start alike, ``same_start``: ``matched``'s
      reading; the gain of mid-curve Pass@k at the end, seed by seed) and their decision
      (``BOTH``), which votes for GRPO (the paper's algorithm) and is shown beside for the
      others;
    * ``large_k``: per arm ``regimes.scenario.large_k``'s checks (GRPO-N holds the base, the
      base holds GRPO, GRPO-N above GRPO), each voting.

    A base that cannot show its boundary move (``informs``) makes every check of its arm
    *cannot inform*."""
    rows = []
    for arm, control in controls.items():
        ok, _ = informs[arm]
        same, _ = same_start.get(arm, (True, ""))
        for algo, g in table[table["regime"] == arm].groupby("algorithm", sort=False):
            c = table[(table["regime"] == control) & (table["algorithm"] == algo)]
            v = verdict(g, c, ok, same)
            gain = stats.Effect(float(g["gain"].mean()), np.nan, np.nan, RISE_MARGIN)
            for check, effect, statistic, margin, values in (
                    ("stage 1", v["fall"], "relative fall of P(stepwise)", FALL_MARGIN,
                     g["fall"]),
                    ("against the control", v["against control"],
                     "fall in the arm minus the control's", FALL_MARGIN, None),
                    ("stage 2", gain, "gain of mid-curve Pass@k, points", RISE_MARGIN,
                     g["gain"])):
                rows.append(_row("lm_two_stages", arm, algo, check, CHECKS[check], statistic,
                                 effect, margin, v["checks"][check], False, values))
            rows.append(_row("lm_two_stages", arm, algo, BOTH, CHECKS[BOTH], "the checks above",
                             None, np.nan, v["verdict"], algo == "GRPO"))  # theirs
        mine = table[table["regime"] == arm]
        for name, e in large_k(mine, ok).items():
            rows.append(_row("large_k", arm, "", name, name, "mid-curve Pass@k at the end on "
                             "the rare-path-only problems, points",
                             None if isinstance(e, str) else e, RISE_MARGIN,
                             e if isinstance(e, str) else e.verdict, True,
                             LARGE_K_SEEDS[name](mine)))
    return pd.DataFrame(rows, columns=ROWS)


def record_rows(rows: pd.DataFrame, ours: dict[str, str]) -> list[dict]:
    """``verdict_rows`` as the closing chapter records them (``verdicts.record``): per claim,
    the checks that decide (``BOTH`` per arm and algorithm; every ``large_k`` check) and those
    shown beside, each named by its arm, algorithm and what it asks; ``ours``: claim -> our
    numbers in words (``sentences.ours``), which decide nothing."""
    decisive = rows[(rows["check"] == BOTH) | (rows["claim"] == "large_k")]
    out = []
    for claim, g in decisive.groupby("claim", sort=False):
        named = [(", ".join(x for x in (r.arm, r.algorithm) if x) + f": {r.asks}", r.outcome,
                  r.votes) for r in g.itertuples()]
        out.append({"claim": claim, "ours": ours[claim],
                    "checks": [(n, o) for n, o, v in named if v],
                    "also": [(n, o) for n, o, v in named if not v]})
    return [row for row in out if row["checks"]]


def base_seeds(P: Params) -> dict[str, int]:
    """Each arm's base, by its pretraining seed (``Regime.base``)."""
    return {arm: P.regimes[arm].base(P.training).seed for arm in P.controls}


def by_base(rows: pd.DataFrame, seeds: dict[str, int]) -> pd.DataFrame:
    """Each claim's verdict on each base (``seeds``: arm -> its base's pretraining seed,
    ``base_seeds``), from the checks that vote (``verdicts.combine`` over that base's arms): a
    row per claim, a column per base (issue 51: a verdict that does not hold on a second base
    reads so)."""
    voting = rows[rows["votes"]]
    return (voting.groupby(["claim", voting["arm"].map(seeds).rename("base")], sort=False)
            ["outcome"].agg(lambda outcomes: verdicts.combine(list(outcomes))).unstack("base"))
