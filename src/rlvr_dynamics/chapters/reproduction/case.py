"""The case study (Figure 3): corrected steps (``!``) carried along by rewarded answers, the
problem on which two models differ most, and its completions side by side."""
from __future__ import annotations

import numpy as np
import pandas as pd

from rlvr_dynamics import boundary
from rlvr_dynamics import evaluation as ev


def bang_share(recs: pd.DataFrame) -> dict[str, float]:
    """Of a model's samples: the share that holds a corrected step (``!``), and the share of
    its correct samples that does (an erroneous step carried along by a rewarded answer); from
    exact records the probabilities themselves (the ``corrected`` traces' masses), averaged
    over problems and weighted by each problem's p for the second."""
    if ev.is_exact(recs):
        bang = np.array([t.get("corrected", 0.0) for t in recs["traces"]])
        right = np.array([t.get("corrected_right", 0.0) for t in recs["traces"]])
        p = recs["p"].to_numpy(float)
        return {"with !": float(bang.mean()),
                "with !, of the correct": float(right.sum() / p.sum()) if p.sum() > 0 else np.nan}
    bang = recs["text"].str.contains("!", regex=False)
    right = recs["correct"].astype(bool)
    return {"with !": float(bang.mean()),
            "with !, of the correct": float(bang[right].mean()) if right.any() else np.nan}


def bang_long(recs: dict[tuple, pd.DataFrame]) -> pd.DataFrame:
    """``bang_share`` of every evaluation: columns setting, benchmark, model, seed and its two
    shares."""
    return pd.DataFrame([{"setting": s, "benchmark": b, "model": m, "seed": seed,
                          **bang_share(r)} for (s, b, m, seed), r in recs.items()])


def bang_means(bangs: pd.DataFrame) -> pd.DataFrame:
    """``bang_long``'s table per (setting, benchmark, model): both shares in %, mean over seeds."""
    return bangs.groupby(["setting", "benchmark", "model"], sort=False)[
        ["with !", "with !, of the correct"]].mean().mul(100)


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
