"""The case study (Figure 3): corrected steps (``!``) carried along by rewarded answers, the
problem on which two models differ most, and its completions side by side."""
from __future__ import annotations

import numpy as np
import pandas as pd

from rlvr_dynamics import boundary
from rlvr_dynamics import measure as ev
from rlvr_dynamics.tasks import sums

STEPWISE_SHARE = "with !, of the correct step-by-step"
"""``bang_share``'s share that the case study's claim reads."""


def bang_share(recs: pd.DataFrame) -> dict[str, float]:
    """Of a model's samples: the share that holds a corrected step (``!``), the share of its
    correct samples that does (an erroneous step carried along by a rewarded answer), and the
    share of its correct *step-by-step* samples that does (neither direct nor a guess: the only
    ones that can carry a step), so that a model that writes steps more often does not read
    higher for that alone (NaN without such samples); from exact records the probabilities
    themselves (the traces' masses), averaged over problems and pooled for the last two."""
    if ev.is_exact(recs):
        mass = {k: np.array([t.get(k, 0.0) for t in recs["traces"]])
                for k in ("corrected", "corrected_right", "direct_right", "guess_right")}
        p = recs["p"].to_numpy(float)
        steps = float((p - mass["direct_right"] - mass["guess_right"]).clip(0).sum())
        right = float(mass["corrected_right"].sum())
        return {"with !": float(mass["corrected"].mean()),
                "with !, of the correct": right / p.sum() if p.sum() > 0 else np.nan,
                STEPWISE_SHARE: right / steps if steps > 0 else np.nan}
    text = recs["text"].astype(str)
    bang = text.str.contains("!", regex=False)
    right = recs["correct"].astype(bool)
    steps = right & ~text.str.startswith("#") & ~text.str.startswith(sums.GUESS)
    return {"with !": float(bang.mean()),
            "with !, of the correct": float(bang[right].mean()) if right.any() else np.nan,
            STEPWISE_SHARE: float(bang[steps].mean()) if steps.any() else np.nan}


def bang_long(recs: dict[tuple, pd.DataFrame]) -> pd.DataFrame:
    """``bang_share`` of every evaluation: columns setting, benchmark, model, seed and its two
    shares."""
    return pd.DataFrame([{"setting": s, "benchmark": b, "model": m, "seed": seed,
                          **bang_share(r)} for (s, b, m, seed), r in recs.items()])


def bang_means(bangs: pd.DataFrame) -> pd.DataFrame:
    """``bang_long``'s table per (setting, benchmark, model): its shares in %, mean over seeds."""
    return bangs.groupby(["setting", "benchmark", "model"], sort=False)[
        ["with !", "with !, of the correct", STEPWISE_SHARE]].mean().mul(100)


def case_problem(recs: dict[tuple, pd.DataFrame], setting: str, bench: str, a: str, b: str,
                 hard: set[str]) -> str:
    """The problem on which models ``a`` and ``b`` (seed 0) differ most in their share of
    correct samples, preferring problems beyond the direct path (``hard``)."""
    share = boundary.per_problem({k: v for k, v in recs.items() if k[3] == 0}, setting, bench,
                                 [a, b])
    gap = (share[a] - share[b]).abs()
    gap = gap + gap.index.isin(list(hard))  # hard problems first
    return str(gap.idxmax())


def samples_of(recs: pd.DataFrame, problem: str, count: int) -> pd.DataFrame:
    """One problem's completions: the first ``count`` samples (text, answer, correct), or from
    exact records its ``count`` most probable completions with their probabilities."""
    r = recs[recs["problem"] == problem]
    if ev.is_exact(recs):
        top = r["top"].iloc[0][:count]
        return pd.DataFrame([{"text": t, "probability": m, "correct": c} for t, m, c in top])
    return r.head(count)[["text", "answer", "correct"]].reset_index(drop=True)


def side_by_side(recs: dict[tuple, pd.DataFrame], setting: str, bench: str, a: str, b: str,
                 hard: set[str], count: int) -> tuple[str, pd.DataFrame]:
    """The case study: the ``case_problem`` of models ``a`` and ``b`` under ``setting`` on
    ``bench``, and its ``count`` completions (``samples_of``) of each model's seed 0, side by
    side."""
    problem = case_problem(recs, setting, bench, a, b, hard)
    return problem, pd.concat({m: samples_of(recs[setting, bench, m, 0], problem, count)
                               for m in (a, b)}, axis=1)
