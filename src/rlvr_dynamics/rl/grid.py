"""A grid of training runs (the training chapter's algorithms x seeds, and GRPO at each weight
lambda on positive samples x seeds: ``Training``, which the training chapter declares and the
chapters that read its runs declare a field of), found or trained (``runs.obtain_all``),
grouped for the chapters that read them. ``T`` is a ``Training`` (``T.runs()``: grid key ->
``TrainConfig``)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import model_validator

from rlvr_dynamics import registry
from rlvr_dynamics.fields import Int, ListOf, Real, Text, require
from rlvr_dynamics.pretrain import PretrainConfig, Pretraining
from rlvr_dynamics.rl import algorithms
from rlvr_dynamics.rl.algorithms import ALGORITHMS
from rlvr_dynamics.rl.config import Settings, TrainConfig
from rlvr_dynamics.rl.runs import obtain_all


class Training(Settings):
    """The training chapter's runs as it declares them and the chapters that read its runs
    read them: the runs (``algorithms`` x ``seeds``, and GRPO at each of ``lambdas`` x
    ``seeds``), the policy (``model``: ``sums-base`` -- the base of ``pretraining``, the
    base-model chapter's -- or another registry model, with ``task``), and every setting of a run (``rl.config.Settings``, declared
    there once and inherited here; Appendix C.2 for the paper profile). ``train_inline``: train
    missing runs here (CPU), ``workers`` at a time; otherwise a missing run is an error that
    gives its launch command."""

    algorithms: ListOf(str) = ["grpo", "grpo_n", "gspo", "gspo_n"]
    seeds: ListOf(Int(0)) = [0, 1, 2, 3]
    lambdas: ListOf(Real(0, 1, open_lo=True), 0) = []  # the sweep runs in cpu-nsr (its cost)
    model: Text = registry.BASE_MODEL
    task: str = "sums"
    train_inline: bool = True
    workers: Int(1) = 2
    pretraining: Pretraining = Pretraining()

    @model_validator(mode="after")
    def _cross(self):
        for name in self.algorithms:
            require(name in ALGORITHMS, f"algorithms has {name!r}; valid: {sorted(ALGORITHMS)}")
        require(self.task in registry.TASKS, f"task={self.task!r} must be one of "
                                             f"{list(registry.TASKS)}")
        for lam in self.lambdas:
            require(lam < 1, f"lambdas has {lam}: must be < 1 (lambda = 1 is GRPO itself)")
        require(self.model != registry.BASE_MODEL or self.task == "sums",
                f"model={registry.BASE_MODEL!r} is the base model of the sums task; "
                f"task={self.task!r} needs a model trained for it")
        self.runs()  # every run must make a valid TrainConfig
        return self

    def base(self) -> PretrainConfig | str:
        """The policy every run starts from: the base-model chapter's base for ``sums-base``."""
        if self.model == registry.BASE_MODEL:
            return self.pretraining.config()
        return self.model

    def run_config(self, algorithm: str, seed: int, positive_weight: float | None = None
                   ) -> TrainConfig:
        """The run of ``algorithm`` and ``seed`` (and lambda ``positive_weight``); the regime
        knobs and probes are set by the chapters that read them (``TrainConfig.replace``)."""
        try:
            return TrainConfig(algorithm=algorithm, model=self.base(),
                               task=None if self.model == registry.BASE_MODEL else self.task,
                               positive_weight=positive_weight, seed=seed,
                               settings=Settings.of(self))
        except (FileNotFoundError, TypeError) as e:
            raise ValueError(str(e)) from None

    def runs(self) -> dict[tuple[str, int, float | None], TrainConfig]:
        """Every run of the chapter, keyed (algorithm, seed, lambda or None)."""
        grid = {(a, s, None): self.run_config(a, s) for a in self.algorithms for s in self.seeds}
        grid |= {("grpo", s, lam): self.run_config("grpo", s, lam)
                 for lam in self.lambdas for s in self.seeds}
        return grid


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
