"""A grid of training runs (the training chapter's algorithms x seeds, and GRPO at each weight
lambda on positive samples x seeds), found or trained (``runs.obtain_all``), grouped for the
chapters that read them. ``T`` is the training chapter's parameters (``T.runs()``: grid key ->
``TrainConfig``)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from rlvr_dynamics.rl import algorithms
from rlvr_dynamics.rl.runs import obtain_all


def obtain_runs(T: Any, profile: str, *, lambdas: bool = True, workers: int | None = None
                ) -> dict[tuple[str, int, float | None], Path]:
    """The finished runs of ``T.runs()`` (without the lambda family unless ``lambdas``),
    trained first where missing, ``workers`` at a time (``rl.runs.obtain_all``)."""
    grid = {k: cfg for k, cfg in T.runs().items() if lambdas or k[2] is None}
    return dict(zip(grid, obtain_all(list(grid.values()), profile, inline=T.train_inline,
                                     workers=workers or T.workers)))


def by_algorithm(T: Any, folders: dict[tuple, Path]) -> dict[str, list[Path]]:
    """label -> the algorithm's runs, one per seed in seed order."""
    return {algorithms.get(a).label: [folders[a, s, None] for s in T.seeds] for a in T.algorithms}


def by_lambda(T: Any, folders: dict[tuple, Path]) -> dict[float, list[Path]]:
    """lambda -> GRPO's runs at that weight, one per seed in seed order."""
    return {lam: [folders["grpo", s, lam] for s in T.seeds] for lam in T.lambdas}
