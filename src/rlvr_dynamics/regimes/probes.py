"""The probes as tables: the boundary that ``rl.probe`` read from the policy's
probabilities along training, one row per problem and probe, with Pass@k for any k (exact:
1 - (1 - p)^k per problem) and its variance, and the means per run over all problems and over
the rare-path-only ones (beyond the direct path: only the stepwise path solves them)."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from rlvr_dynamics.tasks.sums import PATH_TRACES
from rlvr_dynamics.passk import from_probability
from rlvr_dynamics.tasks import sums
from rlvr_dynamics.rl.algorithms import ALGORITHMS
from rlvr_dynamics.rl.probe import probed


def hard_problems(task: sums.SumTask, author: sums.Author, count: int, extra: int = 0
                  ) -> dict[str, np.ndarray]:
    """Per split, which of its probed problems (``rl.probe.probed``: the first ``count``,
    and ``extra`` more of the test split's beyond the direct path) lie beyond the direct path
    (no direct answer can be right: only the stepwise path solves them)."""
    return {s: np.array([sums.direct_success(p.meta["terms"], author) == 0.0 for p in ps])
            for s, ps in probed(task, author, count, extra).items()}


def train_share(task: sums.SumTask, author: sums.Author, hard_share: float | None) -> float:
    """The share of training problems beyond the direct path: ``hard_share`` (the mix,
    ``rl.data.mix``), or for None that of the train split as drawn (exact)."""
    if hard_share is not None:
        return hard_share
    return float(np.mean([sums.direct_success(p.meta["terms"], author) == 0.0
                          for p in task.problems("train")]))


def probes(dynamics: dict[tuple[str, str, int], list[dict]]) -> pd.DataFrame:
    """One row per (regime, algorithm, seed, step, setting, split, problem) with the probe's
    values (``rl.probe.KEYS``)."""
    frames = []
    for (regime, algorithm, seed), run in dynamics.items():
        for r in run:
            for setting, splits in r.get("probe", {}).items():
                for split, values in splits.items():
                    f = pd.DataFrame(values)
                    f["problem"] = np.arange(len(f))
                    f[["regime", "algorithm", "seed", "step", "setting", "split"]] = (
                        regime, ALGORITHMS[algorithm].label, seed, r["step"], setting, split)
                    frames.append(f)
    return pd.concat(frames, ignore_index=True)


def with_passk(long: pd.DataFrame, ks: Sequence[int]) -> pd.DataFrame:
    """``long`` with Pass@k (%) = 100 (1 - (1 - p)^k) per problem for each k, and its variance
    from the probe's standard error of p (``var@k``: half the change of Pass@k between
    p - se and p + se, clipped to [0, 1], squared; the delta method's derivative where se is
    small, and bounded where it is not)."""
    out = long.copy()
    p = out["p"].clip(0, 1)
    lo, hi = (p - out["se"]).clip(0, 1), (p + out["se"]).clip(0, 1)
    for k in ks:
        out[f"pass@{k}"] = 100 * from_probability(p, k)
        out[f"var@{k}"] = (50 * ((1 - lo) ** k - (1 - hi) ** k)) ** 2
    for path in ("stepwise", "direct", "guess"):
        out[path] = out[f"{path}_right"] + out[f"{path}_wrong"]
    return out


def measured(long: pd.DataFrame) -> list[str]:
    """The columns of ``with_passk``'s table that ``per_run`` averages by default: every
    Pass@k and its variance, the three paths' masses and the first two crossed with
    correctness."""
    return ([c for c in long.columns if c.startswith(("pass@", "var@"))]
            + ["stepwise", "direct", "guess", *PATH_TRACES])


def per_run(long: pd.DataFrame, hard: dict[str, np.ndarray],
            columns: Sequence[str] | None = None) -> pd.DataFrame:
    """Means over problems per (regime, algorithm, seed, setting, split, step): over all of
    them, and over the rare-path-only ones (``hard_<column>``), of ``columns`` (default:
    ``measured``)."""
    columns = measured(long) if columns is None else list(columns)
    keys = ["regime", "algorithm", "seed", "setting", "split", "step"]
    flag = np.array([hard[s][i] for s, i in zip(long["split"], long["problem"])])
    out = long.groupby(keys)[columns].mean()
    h = long[flag].groupby(keys)[columns].mean().add_prefix("hard_")
    return out.join(h).reset_index()
