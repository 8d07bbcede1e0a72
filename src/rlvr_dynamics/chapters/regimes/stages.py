"""The two stages in numbers, per run and per regime: the time to expansion (the first probed
step at which the stepwise path carries more mass than the direct one, the toy's
pi(a2) > pi(a1)), the shrinkage depth on the rare-path-only problems, stalls, and the paper's
LM claims as checks over seeds (``stats``) against margins shared with the reproduction
chapter."""
from __future__ import annotations

import numpy as np
import pandas as pd

from rlvr_dynamics import stats
from rlvr_dynamics.chapters.reproduction.claims import ANSWER_ENTROPY_MARGIN, PASSK_MARGIN

SHRINK_MARGIN = PASSK_MARGIN
"""Points of Pass@k on the rare-path-only problems below the base that count as shrinkage (the
reproduction chapter's large-k margin)."""
ENTROPY_MARGIN = ANSWER_ENTROPY_MARGIN
"""Nats of answer entropy that count as a difference (the reproduction chapter's margin)."""


def time_to_expansion(run: pd.DataFrame) -> float:
    """The first probed step at which the stepwise path carries more mass than the direct one
    (one run's rows of ``per_run`` for one setting and split); inf if it never does."""
    run = run.sort_values("step")
    over = run[run["stepwise"] > run["direct"]]
    return float(over["step"].iloc[0]) if len(over) else float("inf")


def shrinkage(run: pd.DataFrame, k: int) -> tuple[float, float]:
    """(depth, step): the lowest Pass@k on the rare-path-only problems after the start, minus
    its value at the start (points; negative: shrank), and the step where it was lowest."""
    run = run.sort_values("step")
    start, later = run.iloc[0][f"hard_pass@{k}"], run.iloc[1:]
    low = later[f"hard_pass@{k}"].idxmin()
    return float(later.loc[low, f"hard_pass@{k}"] - start), float(later.loc[low, "step"])


def stalled(run: pd.DataFrame) -> bool:
    """No expansion, and the stepwise mass at the last probe no higher than at mid-run."""
    run = run.sort_values("step")
    mid = run.iloc[len(run) // 2]["stepwise"]
    return bool(np.isinf(time_to_expansion(run)) and run.iloc[-1]["stepwise"] <= mid)


def stages(means: pd.DataFrame, k: int, hard: dict[str, np.ndarray], setting: str = "full",
           split: str = "test") -> pd.DataFrame:
    """Per run (regime, algorithm, seed): time to expansion, shrinkage depth and its step,
    the change of Pass@k on the rare-path-only problems from the start to the end (``gain``),
    whether it stalled, and ``noise``: the
    median over probes of the standard error of the rare-path-only problems' mean Pass@k that
    the probe's own estimate carries (``means`` needs ``hard_var@k``). The depth is a minimum
    over probes, so where the noise is not small against it, it is biased downward by about
    one to two noise units."""
    part = means[(means["setting"] == setting) & (means["split"] == split)]
    rows = []
    for (regime, algorithm, seed), run in part.groupby(["regime", "algorithm", "seed"],
                                                       sort=False):
        depth, at = shrinkage(run, k)
        run = run.sort_values("step")
        rows.append({"regime": regime, "algorithm": algorithm, "seed": seed,
                     "expansion": time_to_expansion(run), "depth": depth, "depth_step": at,
                     "gain": float(run.iloc[-1][f"hard_pass@{k}"] - run.iloc[0][f"hard_pass@{k}"]),
                     "noise": float(np.median(np.sqrt(run[f"hard_var@{k}"]
                                                      / max(hard[split].sum(), 1)))),
                     "stalled": stalled(run)})
    return pd.DataFrame(rows)


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per regime and algorithm (``table``: ``stages`` joined with ``toy_mapping.toy_side``'s
    rows): the base's P(stepwise) and the toy's rewards, how many of its seeds expanded and at
    which steps, the shrinkage depth (mean and lowest), the probe's standard error (median),
    the stalled seeds, and the toy's prediction (its time to expansion and the dip of
    pi(a2))."""
    return table.groupby(["regime", "algorithm"], sort=False).agg(
        **{"P(stepwise) at start": ("pi0(a2)", "first"), "r(a1)": ("r(a1)", "first"),
           "r(a2)": ("r(a2)", "first"),
           "expanded": ("expansion", lambda t: int((t < np.inf).sum())),
           "seeds": ("expansion", "size"),
           "step of expansion": ("expansion", tuple),
           "shrinkage depth (mean)": ("depth", "mean"), "depth (min)": ("depth", "min"),
           "probe's standard error (points)": ("noise", "median"),
           "stalled (seeds)": ("stalled", "sum"),
           "toy: steps to expansion": ("toy expansion", "first"),
           "toy: dip of π(a2)": ("toy dip", "first")})


# --- the paper's claims per regime ---------------------------------------------------------------

def stage_effects(runs: pd.DataFrame) -> tuple[stats.Effect, stats.Effect, bool]:
    """Over one regime's and algorithm's seeds (rows of ``stages``): the shrinkage (minus the
    depth, against ``SHRINK_MARGIN``), the expansion (the gain, against the same margin), and
    whether in every seed the deepest point came before the step of expansion."""
    return (stats.one_sample(-runs["depth"].to_numpy(), SHRINK_MARGIN),
            stats.one_sample(runs["gain"].to_numpy(), SHRINK_MARGIN),
            bool((runs["depth_step"] < runs["expansion"]).all()))


def two_stages(shrink: str, expand: str, ordered: bool) -> str:
    """The verdict on "shrinkage, then expansion" from the verdicts of the two stages and
    whether, in every seed, the deepest point came before the expansion."""
    if stats.FEW_SEEDS in (shrink, expand):
        return stats.FEW_SEEDS
    if shrink == expand == stats.REPLICATES:
        return stats.REPLICATES if ordered else "both, not in that order"
    if shrink == stats.REPLICATES:
        return "shrinkage only"
    if expand == stats.REPLICATES:
        return "expansion only"
    return "neither"


def stage_check(shrink: str, expand: str, ordered: bool) -> str:
    """"Shrinkage, then expansion" as one check verdict (``stats.CHECK_VERDICTS``, for the
    closing chapter): replicates when both stages replicate in that order in every seed,
    opposite when both replicate in the other order, else the verdict of the first stage that
    did not replicate."""
    if shrink == expand == stats.REPLICATES:
        return stats.REPLICATES if ordered else stats.OPPOSITE
    return shrink if shrink != stats.REPLICATES else expand


def keeps_boundary(runs: pd.DataFrame) -> stats.Effect | None:
    """*GRPO-N keeps the base's boundary*, over one regime's rows of ``stages``: GRPO-N's depth
    not below -``SHRINK_MARGIN`` (non-inferiority); None without GRPO-N."""
    depth = {a: h["depth"].to_numpy() for a, h in runs.groupby("algorithm")}
    if "GRPO-N" not in depth:
        return None
    return stats.one_sample(depth["GRPO-N"], SHRINK_MARGIN, stats.NON_INFERIORITY)


def entropy_above(entropy: pd.DataFrame, regime: str) -> stats.Effect | None:
    """*GRPO-N's answer entropy above GRPO's* at the end, by more than ``ENTROPY_MARGIN``, in
    ``regime`` (``entropy``: ``final_entropy``'s rows); None without both."""
    h = entropy[entropy["regime"] == regime]
    ent = {a: x["answer entropy"].to_numpy() for a, x in h.groupby("algorithm")}
    if not {"GRPO", "GRPO-N"} <= set(ent):
        return None
    return stats.two_sample(ent["GRPO-N"], ent["GRPO"], ENTROPY_MARGIN)


def final_entropy(long: pd.DataFrame, setting: str = "full", split: str = "test"
                  ) -> pd.DataFrame:
    """Per run, the answer and token entropy at its last probe (means over problems)."""
    part = long[(long["setting"] == setting) & (long["split"] == split)]
    last = part.groupby(["regime", "algorithm", "seed"])["step"].transform("max")
    return (part[part["step"] == last].groupby(["regime", "algorithm", "seed"])
            [["answer_entropy", "token_entropy"]].mean().rename(
                columns={"answer_entropy": "answer entropy", "token_entropy": "token entropy"})
            .reset_index())
