"""The paper's claims of Section 4 checked over seeds (``stats``): Pass@1's gain, the large-k
and out-of-distribution claims, answer entropy and the case study, each a difference of means
over seeds against a margin declared before the runs; and the setting whose verdicts decide
(the one that reaches the base's rare path)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from rlvr_dynamics import boundary, stats
from rlvr_dynamics.training.algorithms import BASE

PASS1_MARGIN = 5.0
"""pass1_gain: the smallest Pass@1 gain over the base that counts (points; the paper's gains
on AMC 2023 are 25-30 points)."""
PASSK_MARGIN = 2.0
"""large_k, ood: how far below the base still "holds" it, and the smallest gap between two
algorithms that counts (points of Pass@k; the paper's GRPO-N - GRPO at AIME 2025 Pass@256 is
20 points)."""
ANSWER_ENTROPY_MARGIN = 0.05
"""answer_entropy: the smallest difference that counts (nats; the paper's GRPO-N - GRPO on
AMC 2023 is about 0.4 nats, Table 4)."""
CASE_MARGIN = 1.0
"""case_study: the smallest difference in the share of correct samples with a corrected step
that counts (points)."""


def rare_path_support(recs: dict[tuple, pd.DataFrame], bench: str, hard: set[str], n: int
                      ) -> pd.Series:
    """Per setting, the share of ``bench``'s problems beyond the direct path (``hard``) that the
    base solves at least once in ``n`` samples (mean over its evaluations; its expectation from
    exact records): 0 when the setting's nucleus cuts the rare path off, so that no sample of
    the base can reach them."""
    out = {}
    for (setting, b, label, _), r in recs.items():
        if b == bench and label == BASE:
            solved = boundary.solved(r, n)
            out.setdefault(setting, []).append(solved[solved.index.isin(list(hard))].mean())
    return pd.Series({s: float(np.mean(v)) for s, v in out.items()}, name="rare-path support")


def headline_setting(support: pd.Series) -> str:
    """The setting whose support reaches furthest into the base's rare path (the first listed
    on a tie): the one under which a shrinkage or expansion of the boundary can be seen."""
    return str(support.idxmax())


@dataclass(frozen=True)
class Check:
    """mean(values[a]) - mean(values[b]) over seeds against its margin (``effect``)."""

    a: str
    b: str
    effect: stats.Effect


@dataclass(frozen=True)
class Claimed:
    """One claim under one setting: the values it reads (model -> one per seed) and its
    checks."""

    values: dict[str, np.ndarray]
    checks: list[Check]


def values(long: pd.DataFrame, value: str, **where) -> dict[str, np.ndarray]:
    """model -> ``value`` per seed, of the rows of ``long`` where every column of ``where``
    holds its value."""
    part = long
    for column, v in where.items():
        part = part[part[column] == v]
    return {m: g[value].to_numpy(float) for m, g in part.groupby("model", sort=False)}


def check(v: dict[str, np.ndarray], a: str, b: str, margin: float,
          kind: str = stats.SUPERIORITY) -> Check | None:
    """mean(v[a]) - mean(v[b]) (``stats.two_sample``), or None if either model is missing."""
    if a not in v or b not in v:
        return None
    return Check(a, b, stats.two_sample(v[a], v[b], margin, kind))


def _claimed(v: dict[str, np.ndarray], checks: list[Check | None]) -> Claimed:
    return Claimed(v, [c for c in checks if c is not None])


def setting_checks(passk: pd.DataFrame, entropy: pd.DataFrame, setting: str, test: str,
                   ood: str, last: int) -> dict[str, Claimed]:
    """claim -> what it reads and its checks, for the Pass@k and entropy claims under
    ``setting``: Pass@1 on ``test`` (pass1_gain), Pass@``last`` on ``test`` (large_k) and on
    ``ood`` (ood), answer entropy on ``test`` (answer_entropy)."""
    p1 = values(passk, "pass@k", setting=setting, benchmark=test, k=1)
    pk = values(passk, "pass@k", setting=setting, benchmark=test, k=last)
    po = values(passk, "pass@k", setting=setting, benchmark=ood, k=last)
    h = values(entropy, "answer entropy", setting=setting, benchmark=test)
    algos = [m for m in p1 if m != BASE]
    ni = stats.NON_INFERIORITY
    return {
        "pass1_gain": _claimed(p1, [check(p1, m, BASE, PASS1_MARGIN) for m in algos]),
        "large_k": _claimed(pk, [check(pk, "GRPO-N", BASE, PASSK_MARGIN, ni),
                                 check(pk, "GSPO-N", BASE, PASSK_MARGIN, ni),
                                 check(pk, "GRPO-N", "GRPO", PASSK_MARGIN)]),
        "ood": _claimed(po, [check(po, "GRPO-N", BASE, PASSK_MARGIN, ni),
                             check(po, BASE, "GRPO", PASSK_MARGIN)]),
        "answer_entropy": _claimed(h, [check(h, "GRPO-N", "GRPO", ANSWER_ENTROPY_MARGIN),
                                       check(h, "GSPO-N", "GSPO", ANSWER_ENTROPY_MARGIN)]),
    }


def case_check(bangs: pd.DataFrame, setting: str, test: str) -> Claimed | None:
    """The case study under ``setting`` on ``test``: GRPO's share of correct samples with a
    corrected step (%, ``case.bang_long``) above GRPO-N's; None without both."""
    b = {m: 100 * x for m, x in values(bangs, "with !, of the correct", setting=setting,
                                       benchmark=test).items()}
    c = check(b, "GRPO", "GRPO-N", CASE_MARGIN)
    return None if c is None else Claimed(b, [c])
