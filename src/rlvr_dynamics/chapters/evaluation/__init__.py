"""The chapter on the evaluation stack (``notebooks/evaluation.md``): Pass@k (unbiased) checked
against exact arithmetic, the grader on real benchmark files, and Tables 1, 2 and 4's layouts
on the book's own models (the stack is ``rlvr_dynamics.measure``).

The chapter's parameters (``Params``), the estimator's two checks (``estimator_checks``, read
against ``EXACT_TOL`` and ``UNBIASED_Z``), the grader's check (``grader_check``), the tables'
evaluations (``evaluate``, ``passk_summary``) and what the records hold (``records_summary``).
Its figures are in ``figures``, its styled tables in ``shown``, its sentences in
``sentences``."""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from math import comb
from pathlib import Path

import numpy as np
import pandas as pd
from pydantic import model_validator

from rlvr_dynamics import measure as ev
from rlvr_dynamics import registry
from rlvr_dynamics.chapters import (ChapterParams, Int, ListOf, NonNegative, Real, Spec, require)
from rlvr_dynamics.measure import BACKENDS, EvalSettings
from rlvr_dynamics.passk import from_probability, ks_for, pass_at_k
from rlvr_dynamics.tasks.math import check_benchmarks


class Params(ChapterParams):
    """Table 1's models and benchmarks (``table1_*``: specs, ``n`` samples, at most
    ``max_tokens``, the first ``problems`` of each benchmark), Table 2's likewise, how they are
    sampled (``temperature``, ``top_p``, ``seed``, ``backend``, ``batch_size``, ``chunk``), the
    paper's random subsets (``subsample``: {benchmark: [size, repeats]}), where data lives
    (``data_dir``, ``benchmarks_dir``: the grader check's files), ``bootstrap`` resamples."""

    table1_models: ListOf(Spec) = [
        {"name": "sums-base", "steps": 800, "batch": 64, "snapshots": [200], "step": 200},
        {"name": "sums-base", "steps": 800, "batch": 64, "snapshots": [200]}]
    table1_benchmarks: ListOf(Spec) = ["sums-test", "sums-ood"]
    table1_n: Int(1) = 256
    table1_max_tokens: Int(1) = 80
    table1_problems: Int(1) | None = 100
    table2_models: ListOf(Spec, 0) = ["smollm2"]
    table2_benchmarks: ListOf(Spec, 0) = [{"name": "arith", "digits": 1},
                                          {"name": "arith", "digits": 2}]
    table2_n: Int(1) = 8
    table2_max_tokens: Int(1) = 24
    table2_problems: Int(1) | None = 12
    temperature: NonNegative = 0.6
    top_p: Real(0, 1, open_lo=True) = 0.95
    seed: Int(0) = 0
    backend: str = "transformers"
    batch_size: Int(1) = 256
    chunk: Int(1) = 8
    subsample: dict[str, ListOf(Int(1), 2)] = {"arc-c": [128, 3], "mmlu-pro": [128, 3]}
    data_dir: str | None = None
    benchmarks_dir: str | None = None
    bootstrap: Int(100) = 1000
    recompute: bool = False

    @model_validator(mode="after")
    def _cross(self):
        require(self.backend in BACKENDS, f"backend={self.backend!r} must be one of "
                                          f"{list(BACKENDS)}")
        for name, pair in self.subsample.items():
            require(len(pair) == 2, f"subsample[{name!r}] must be [size, repeats], got {pair}")
        for table in ("table1", "table2"):
            models, benchmarks = getattr(self, f"{table}_models"), getattr(self, f"{table}_benchmarks")
            for spec in benchmarks:
                registry.check_benchmark(spec)
            for spec in models:
                registry.check_model(spec)
                require(any(registry.compatible(spec, b) for b in benchmarks),
                        f"{table}_models has {spec!r}, which reads none of {table}_benchmarks "
                        f"{benchmarks} (the sums models read only sums-*; the others not those)")
        for name in ("data_dir", "benchmarks_dir"):
            folder = getattr(self, name)
            require(folder is None or Path(folder).is_dir(), f"{name}={folder!r} is not a folder")
        return self


# --- the estimator, checked --------------------------------------------------------------------

EXACT_TOL = 1e-12
"""The estimator against exact rational arithmetic: rounding error only (as the tests demand)."""
UNBIASED_Z = 4.0
"""The mean estimate may miss 1 - (1 - p)^k by this many times its standard error's bound."""


@dataclass
class EstimatorChecks:
    """``passk.pass_at_k`` checked twice: ``ours`` against ``exact`` (rational arithmetic) on
    random (n, c, k), and ``deviations``: per p, its mean over ``draws`` draws of
    c ~ Binomial(``n``, p) minus 1 - (1 - p)^k, for k = ``ks``."""

    ours: list[float]
    exact: list[Fraction]
    deviations: list[pd.Series]
    draws: int
    n: int
    ks: list[int]


def estimator_checks(seed: int, cases: int = 300, n_max: int = 1024, n: int = 16,
                     ps=(0.02, 0.1, 0.4), draws: int = 20_000) -> EstimatorChecks:
    """The estimator against exact arithmetic on ``cases`` random (n, c, k) with n up to
    ``n_max``, then its mean over ``draws`` binomial draws of c (``n`` samples, success
    probability each of ``ps``) against ``passk.from_probability``; one generator from
    ``seed`` feeds both, in that order."""
    rng = np.random.default_rng(seed)
    ns = rng.integers(1, n_max + 1, size=cases)
    cs = rng.integers(0, ns + 1)
    ks = rng.integers(1, ns + 1)
    exact = [1 - Fraction(comb(ni - ci, ki), comb(ni, ki)) for ni, ci, ki in zip(ns, cs, ks)]
    ours = [pass_at_k(ni, ci, ki)[0, 0] for ni, ci, ki in zip(ns, cs, ks)]
    kn = ks_for(n)
    deviations = [pd.Series(pass_at_k(n, rng.binomial(n, p, size=draws), kn).mean(axis=0)
                            - from_probability(p, kn), index=kn, name=f"p = {p}")
                  for p in ps]
    return EstimatorChecks(ours, exact, deviations, draws, n, kn)


def exact_gap(check: EstimatorChecks) -> float:
    """The largest |ours - exact| of the first check."""
    return max(abs(float(o - e)) for o, e in zip(check.ours, check.exact))


def worst_deviation(check: EstimatorChecks) -> float:
    """The largest |mean estimate - 1 + (1 - p)^k| of the second check."""
    return max(float(np.abs(d).max()) for d in check.deviations)


def se_bound(draws: int) -> float:
    """The bound 0.5 / sqrt(draws) on the standard error of a mean of ``draws`` values in
    [0, 1]."""
    return 0.5 / math.sqrt(draws)


def matches_exact(check: EstimatorChecks) -> bool:
    """Whether the first check finds rounding error only (below ``EXACT_TOL``)."""
    return exact_gap(check) < EXACT_TOL


def looks_unbiased(check: EstimatorChecks) -> bool:
    """Whether the second check's mean estimates all lie within ``UNBIASED_Z`` times the
    standard error's bound of 1 - (1 - p)^k."""
    return worst_deviation(check) < UNBIASED_Z * se_bound(check.draws)


def deviation_table(check: EstimatorChecks) -> pd.DataFrame:
    """The second check's deviations: one row per p, one column per k."""
    return pd.DataFrame(check.deviations).rename_axis(columns="k")


# --- the grader, checked on real benchmark files ------------------------------------------------

GRADER_COLUMNS = ["rows", "gold_self_correct", "perturbed_wrong", "solutions_with_boxed",
                  "solution_agrees", "timeouts"]
"""What ``grader_check`` reports per benchmark (``tasks.math.check_benchmarks``)."""


def grader_check(benchmarks_dir: str | None) -> pd.DataFrame | None:
    """``tasks.math.check_benchmarks`` on the benchmark folders under ``benchmarks_dir``, one
    row per benchmark; None when no folder is given."""
    if benchmarks_dir is None:
        return None
    return pd.DataFrame(check_benchmarks(benchmarks_dir)).T[GRADER_COLUMNS]


# --- Tables 1, 2 and 4 on the book's models ----------------------------------------------------

TABLES = ("table1", "table2")
"""The chapter's two tables of models and benchmarks (the ``<table>_*`` parameters)."""


def table_params(P: Params, table: str) -> dict:
    """``table``'s models, benchmarks, ``n``, ``max_tokens`` and ``problems``."""
    require(table in TABLES, f"table={table!r} must be one of {list(TABLES)}")
    return {key: getattr(P, f"{table}_{key}")
            for key in ("models", "benchmarks", "n", "max_tokens", "problems")}


def evaluate(P: Params, table: str) -> dict[tuple[str, str], pd.DataFrame]:
    """The records of ``table``'s (benchmark, model) pairs (``evaluation.evaluate_table``) at
    the chapter's sampling settings; empty when the table has no models."""
    t = table_params(P, table)
    if not t["models"]:
        return {}
    settings = EvalSettings(n=t["n"], temperature=P.temperature, top_p=P.top_p,
                            max_tokens=t["max_tokens"], seed=P.seed, chunk=P.chunk)
    return ev.evaluate_table(t["models"], t["benchmarks"], settings, P.profile,
                             backend=P.backend, batch_size=P.batch_size, data_dir=P.data_dir,
                             problems=t["problems"],
                             subsample={name: tuple(v) for name, v in P.subsample.items()},
                             recompute=P.recompute)


def passk_summary(P: Params, table: str, records: dict[tuple[str, str], pd.DataFrame]
                  ) -> pd.DataFrame | None:
    """Pass@k of ``records`` (``table``'s) at k = 1, 2, 4, ... up to its ``n``, with
    ``bootstrap``-resample intervals (``evaluation.passk_summary``); None without records."""
    if not records:
        return None
    return ev.passk_summary(records, ks_for(table_params(P, table)["n"]),
                            resamples=P.bootstrap, seed=P.seed)


def records_summary(records: dict[tuple[str, str], pd.DataFrame]) -> pd.DataFrame:
    """Per (benchmark, model): how many samples are kept, their mean length in tokens, the
    share that stopped on their own and the share without an answer."""
    names = registry.labels(list(dict.fromkeys(m for _, m in records)))
    return pd.DataFrame({(b, names[m]): {"samples": len(r), "mean length (tokens)": r["length"].mean(),
                                         "stopped on its own": r["finished"].mean(),
                                         "no answer (NA)": r["answer"].isna().mean()}
                         for (b, m), r in records.items()}).T.rename_axis(["benchmark", "model"])
