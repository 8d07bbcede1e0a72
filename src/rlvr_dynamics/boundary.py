"""The capability boundary, problem by problem (the debate of Section 1, measured as Yue et al.
and the paper measure it): a model's boundary at n samples is the set of problems it solves at
least once in n. Against its base, a trained model *shrinks* the boundary by the problems the
base solves and it no longer does, and *expands* it by the problems it solves and the base does
not.

Both sets are read from samples, so a problem solved with probability p per sample falls in or
out at random when n p is about 1. Two samplings of the same base give the noise floor: the
problems "lost" and "gained" between them are pure chance, and a trained model's counts mean
something only beyond that.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd


def counts(recs: pd.DataFrame) -> pd.DataFrame:
    """Per problem (in order of appearance): samples ``n`` and correct samples ``c``."""
    g = recs.groupby("problem", sort=False)["correct"]
    return pd.DataFrame({"n": g.size(), "c": g.sum().astype(int)})


def solved(recs: pd.DataFrame) -> pd.Series:
    """Whether each problem is solved at least once in its samples (the boundary)."""
    return counts(recs)["c"] > 0


def compare(base: pd.DataFrame, model: pd.DataFrame) -> dict[str, list[str]]:
    """The problems a model ``lost`` (the base solves them, it does not: shrinkage) and
    ``gained`` (expansion) against ``base``; both evaluated on the same problems."""
    b, m = solved(base), solved(model)
    if list(b.index) != list(m.index):
        raise ValueError("the base and the model were evaluated on different problems")
    return {"lost": list(b.index[b & ~m]), "gained": list(b.index[~b & m])}


def table(recs: dict[tuple, pd.DataFrame], base: str, hard: set[str] = frozenset()
          ) -> pd.DataFrame:
    """For every evaluation (``reproduction.evaluate_models``' keys ``(setting, benchmark,
    label, seed)``) against the base's first sampling (seed 0) of the same setting and
    benchmark: problems solved, lost and gained, and how many of the lost and gained ones are
    in ``hard`` (problem ids: those beyond the base's common path). The base's other samplings
    appear as the noise floor."""
    rows = []
    for (setting, bench, label, seed), r in recs.items():
        if label == base and seed == 0:
            continue
        diff = compare(recs[setting, bench, base, 0], r)
        rows.append({"setting": setting, "benchmark": bench, "model": label, "seed": seed,
                     "solved": int(solved(r).sum()),
                     "base solved": int(solved(recs[setting, bench, base, 0]).sum()),
                     "lost": len(diff["lost"]), "gained": len(diff["gained"]),
                     "lost, hard": len(set(diff["lost"]) & hard),
                     "gained, hard": len(set(diff["gained"]) & hard)})
    return pd.DataFrame(rows)


def per_problem(recs: dict[tuple, pd.DataFrame], setting: str, bench: str,
                labels: Sequence[str]) -> pd.DataFrame:
    """Problem by problem: the share of each model's samples that are correct (mean over its
    seeds), one column per label; the rows in the order of the evaluation."""
    cols = {}
    for label in labels:
        shares = [counts(r)["c"] / counts(r)["n"] for (s, b, m, _), r in recs.items()
                  if (s, b, m) == (setting, bench, label)]
        cols[label] = pd.concat(shares, axis=1).mean(1)
    return pd.DataFrame(cols)


def summary(boundary: pd.DataFrame) -> pd.DataFrame:
    """``table``'s counts as mean ± sd over seeds per (setting, benchmark, model)."""
    keys = ["setting", "benchmark", "model"]
    values = ["solved", "lost", "gained", "lost, hard", "gained, hard"]
    g = boundary.groupby(keys, sort=False)[values]
    mean, sd = g.mean(), g.std(ddof=1)
    out = mean.round(1).astype(str) + " ± " + sd.round(1).astype(str)
    out = out.where(sd.notna(), mean.round(1).astype(str))
    out.insert(0, "seeds", g.size())
    out.insert(1, "base solved", boundary.groupby(keys, sort=False)["base solved"].first())
    return out


def hard_ids(problems, direct_possible) -> set[str]:
    """The ids of ``problems`` for which ``direct_possible(terms)`` is False."""
    return {p.id for p in problems if not direct_possible(p.meta["terms"])}


def solved_share(recs: pd.DataFrame) -> float:
    """Share of problems solved at least once."""
    return float(np.mean(solved(recs)))
