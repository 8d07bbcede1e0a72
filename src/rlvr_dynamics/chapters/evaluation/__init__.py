"""The chapter on the evaluation stack (``notebooks/evaluation.md``): Pass@k (unbiased) checked
against exact arithmetic, the grader on real benchmark files, and Tables 1, 2 and 4's layouts
on the book's own models (the stack is ``rlvr_dynamics.evaluation``)."""
from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
from pydantic import model_validator

from rlvr_dynamics import registry
from rlvr_dynamics.chapters import (ChapterParams, Int, ListOf, NonNegative, Real, Spec, require)
from rlvr_dynamics.evaluation import BACKENDS


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


# --- prose written from the results ------------------------------------------------------------

EXACT_TOL = 1e-12
"""The estimator against exact rational arithmetic: rounding error only (as the tests demand)."""
UNBIASED_Z = 4.0
"""The mean estimate may miss 1 - (1 - p)^k by this many times its standard error's bound."""


def estimator_text(ours: Sequence[float], exact: Sequence[Fraction], deviations: Sequence[pd.Series],
                   draws: int) -> str:
    """The estimator's two checks in words: its largest gap to exact arithmetic, and its mean's
    largest gap to 1 - (1 - p)^k against the bound 0.5/sqrt(draws) on the standard error."""
    gap = max(abs(float(o - e)) for o, e in zip(ours, exact))
    worst = max(float(np.abs(d).max()) for d in deviations)
    se = 0.5 / math.sqrt(draws)
    first = (f"it matches exact rational arithmetic to rounding error (largest gap {gap:.1e} over "
             f"{len(ours)} random (n, c, k))" if gap < EXACT_TOL else
             f"it misses exact rational arithmetic by up to {gap:.1e} over {len(ours)} random "
             "(n, c, k)")
    second = (f"its mean over {draws:,} draws of c lies within {worst:.4f} of 1 − (1 − p)^k, "
              f"{worst / se:.1f} times the bound {se:.4f} on its standard error"
              + (", as an unbiased estimator should" if worst < UNBIASED_Z * se else
                 ", more than an unbiased estimator allows"))
    return f"In this build, the Pass@k estimator {first[3:]}, and {second}."
