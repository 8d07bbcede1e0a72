"""The capability boundary, problem by problem (the debate of Section 1, measured as Yue et al.
and the paper measure it): a model's boundary at n samples is the set of problems it solves at
least once in n. Against its base, a trained model *shrinks* the boundary by the problems the
base solves and it no longer does, and *expands* it by the problems it solves and the base does
not.

From samples (``evaluation``'s sampled records) both sets are read off one draw, so a problem
solved with probability p per sample falls in or out at random when n p is about 1; two
samplings of the same base give the noise floor. From the model's probabilities (exact records)
each problem is solved in n samples with probability s = 1 - (1 - p)^n, and the counts are
their expectations over independent n-samplings of the two models: lost = sum s_base (1 - s),
gained = sum (1 - s_base) s. On sampled records s is the observed 0 or 1, so both read the same;
the base against itself then gives the expected chance loss sum s (1 - s), the noise floor.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from rlvr_dynamics import measure as ev
from rlvr_dynamics.passk import from_probability


def solved(recs: pd.DataFrame, n: int | None = None) -> pd.Series:
    """Per problem (in order of appearance), the probability that it is solved at least once
    in ``n`` samples: the observed 0 or 1 of sampled records (``n``: None or their own sample
    count), 1 - (1 - p)^n of exact ones (``n`` required)."""
    problems = list(dict.fromkeys(recs["problem"]))
    if ev.is_exact(recs):
        if n is None:
            raise ValueError("exact records need n, the samples the boundary is read at")
        return pd.Series(from_probability(recs["p"].to_numpy(float), n), index=problems)
    g = recs.groupby("problem", sort=False)["correct"]
    if n is not None and set(g.size()) != {n}:
        raise ValueError(f"the boundary is read at n={n} but the records hold "
                         f"{sorted(set(g.size()))} samples per problem")
    return (g.sum() > 0).astype(float)


def changes(base: pd.DataFrame, model: pd.DataFrame, n: int | None = None) -> pd.DataFrame:
    """Per problem, the probability that the model ``lost`` it (the base solves it in n
    samples, the model does not: shrinkage) and ``gained`` it (expansion); both evaluated on
    the same problems."""
    b, m = solved(base, n), solved(model, n)
    if list(b.index) != list(m.index):
        raise ValueError("the base and the model were evaluated on different problems")
    return pd.DataFrame({"lost": b * (1 - m), "gained": (1 - b) * m})


def table(recs: dict[tuple, pd.DataFrame], base: str, hard: set[str] = frozenset(),
          n: int | None = None) -> pd.DataFrame:
    """For every evaluation (``reproduction.evaluate_models``' keys ``(setting, benchmark,
    label, seed)``) against the base's first sampling (seed 0) of the same setting and
    benchmark, at ``n`` samples: problems solved, lost and gained (counts, or their
    expectations from exact records), and how many of the lost and gained ones are in ``hard``
    (problem ids: those beyond the base's common path). The base's other samplings appear as
    the noise floor."""
    rows = []
    for (setting, bench, label, seed), r in recs.items():
        if label == base and seed == 0:
            continue
        first = recs[setting, bench, base, 0]
        diff = changes(first, r, n)
        inside = diff.index.isin(list(hard))
        rows.append({"setting": setting, "benchmark": bench, "model": label, "seed": seed,
                     "solved": solved(r, n).sum(), "base solved": solved(first, n).sum(),
                     "lost": diff["lost"].sum(), "gained": diff["gained"].sum(),
                     "lost, hard": diff["lost"][inside].sum(),
                     "gained, hard": diff["gained"][inside].sum()})
    return pd.DataFrame(rows)


def per_problem(recs: dict[tuple, pd.DataFrame], setting: str, bench: str,
                labels: Sequence[str]) -> pd.DataFrame:
    """Problem by problem: each model's probability of a correct sample (the share of correct
    samples, or p; mean over its seeds), one column per label; the rows in the order of the
    evaluation."""
    cols = {}
    for label in labels:
        shares = [pd.Series(ev.success_probability(r), index=list(dict.fromkeys(r["problem"])))
                  for (s, b, m, _), r in recs.items() if (s, b, m) == (setting, bench, label)]
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


def solved_share(recs: pd.DataFrame, n: int | None = None) -> float:
    """Share of problems solved at least once in ``n`` samples (its expectation, exact)."""
    return float(np.mean(solved(recs, n)))
