"""``TrainConfig``: everything that determines one training run, checked before any model loads.

Sizes count completions, as TRL does. The paper's setting (Appendix C.2) of 1,024 prompts with 8
rollouts each and mini-batches of 256 prompts is ``generation_batch=8192, num_generations=8,
update_batch=2048``: each generation batch is followed by ``8192 / 2048 = 4`` optimizer updates,
so from the second update on the policy differs from the one that sampled and the importance
ratios (and clipping) are live. A training *step* is one generation batch and its updates, as on
the x-axis of Figure 2.
"""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Any

from rlvr_dynamics import registry
from rlvr_dynamics.pretrain import PretrainConfig
from rlvr_dynamics.tasks.sums import SumTask
from rlvr_dynamics.training import algorithms

LOSS_TYPES = ("dapo", "grpo", "bnpo", "dr_grpo")
"""TRL's normalisers for the clipped surrogate: ``dapo`` is verl's token-mean (what the paper
ran), ``grpo`` is Eq. 2's ``1/G sum_i 1/|y_i| sum_t``."""


@dataclass(frozen=True)
class TrainConfig:
    """One run. ``model`` is a ``PretrainConfig`` (the tiny base model, trained once and cached)
    or a hub name / local folder; ``task`` is None (the base model's own task), ``"sums"`` or
    ``"math"``; ``positive_weight`` is lambda (None: the algorithm's own, 1 or 0).

    The regime knobs of a tiny base (None: as pretrained): ``path_prior``, the base's P(stepwise)
    refitted to this value before RL (``path_prior.refit``); ``hard_share``, the share of
    training problems beyond the direct path (``data.mix``; None: the train split as drawn).
    ``probe_every``: generation steps between measurements of the boundary (``probe``; 0:
    none): of the tiny sums base from the policy's probabilities on ``probe_problems`` problems
    of each sums split, of any other model from ``probe_samples`` samples of each of
    ``probe_problems`` test problems."""

    algorithm: str
    model: PretrainConfig | str
    task: SumTask | str | None
    positive_weight: float | None
    seed: int
    steps: int
    num_generations: int
    generation_batch: int
    update_batch: int
    micro_batch: int
    learning_rate: float
    weight_decay: float
    beta: float
    epsilon: float
    dual_clip: float | None
    entropy_coef: float
    temperature: float
    max_completion_length: int
    loss_type: str
    eval_every: int
    eval_problems: int
    eval_batch: int
    checkpoint_every: int
    use_vllm: bool
    context: int
    bf16: bool
    gradient_checkpointing: bool
    lora_rank: int = 0
    path_prior: float | None = None
    hard_share: float | None = None
    probe_every: int = 0
    probe_problems: int = 20
    probe_samples: int = 0

    def __post_init__(self) -> None:
        default = algorithms.get(self.algorithm).positive_weight
        if self.positive_weight is None:
            object.__setattr__(self, "positive_weight", default)
        elif default == 0.0 and self.positive_weight != 0.0:
            raise ValueError(f"{self.algorithm} trains on negative samples only (lambda = 0); "
                             f"set positive_weight on {self.algorithm.removesuffix('_n')} instead")
        if not isinstance(self.model, (PretrainConfig, str)):
            raise TypeError(f"TrainConfig.model must be a PretrainConfig or a str, got "
                            f"{type(self.model).__name__}")
        registry.check_model(self.policy)
        registry.training_task(self.task, self.model)  # a task it can name (cheap: loads no data)
        tiny_sums = isinstance(self.model, PretrainConfig) and self.task is None
        for name, used in [("path_prior", self.path_prior is not None),
                           ("hard_share", self.hard_share is not None)]:
            if used and not tiny_sums:
                raise ValueError(f"TrainConfig.{name}={getattr(self, name)!r} needs the tiny "
                                 f"sums base (model a PretrainConfig, task None)")
        if self.probe_every and not tiny_sums and self.probe_samples < 1:
            raise ValueError(f"TrainConfig.probe_samples={self.probe_samples!r} must be >= 1: "
                             f"a model other than the tiny sums base is probed by sampling")
        check_sizes(self.num_generations, self.generation_batch, self.update_batch, self.micro_batch)
        for name, ok, rule in [
            ("positive_weight", self.positive_weight >= 0, ">= 0"),
            ("seed", self.seed >= 0, ">= 0"),
            ("steps", self.steps >= 1, ">= 1"),
            ("learning_rate", self.learning_rate > 0, "> 0"),
            ("weight_decay", self.weight_decay >= 0, ">= 0"),
            ("beta", self.beta >= 0, ">= 0"),
            ("epsilon", 0 < self.epsilon < 1, "in (0, 1)"),
            ("dual_clip", self.dual_clip is None or self.dual_clip > 1 + self.epsilon,
             "None or > 1 + epsilon"),
            ("entropy_coef", self.entropy_coef >= 0, ">= 0"),
            ("temperature", self.temperature > 0, "> 0"),
            ("max_completion_length", self.max_completion_length >= 1, ">= 1"),
            ("loss_type", self.loss_type in LOSS_TYPES, f"one of {list(LOSS_TYPES)}"),
            ("eval_every", self.eval_every >= 1, ">= 1"),
            ("eval_problems", self.eval_problems >= 1, ">= 1"),
            ("eval_batch", self.eval_batch >= 1, ">= 1"),
            ("checkpoint_every", self.checkpoint_every >= 1, ">= 1"),
            ("context", self.context > self.max_completion_length, "> max_completion_length"),
            ("lora_rank", self.lora_rank >= 0, ">= 0 (0: full fine-tuning)"),
            ("hard_share", self.hard_share is None or 0 <= self.hard_share <= 1,
             "None or in [0, 1]"),
            ("probe_every", self.probe_every >= 0, ">= 0 (0: no probes)"),
            ("probe_problems", self.probe_problems >= 1, ">= 1"),
            ("probe_samples", self.probe_samples >= 0, ">= 0"),
        ]:
            if not ok:
                raise ValueError(f"TrainConfig.{name}={getattr(self, name)!r} must be {rule}")

    @property
    def policy(self) -> PretrainConfig | str | dict[str, Any]:
        """The model the run starts from: ``model``, or its base with the path prior refitted
        (a ``registry`` spec)."""
        if self.path_prior is None:
            return self.model
        return {"name": registry.BASE_MODEL, **registry.parse_spec(self.model)[1],
                "prior": self.path_prior}

    @property
    def updates_per_step(self) -> int:
        """Optimizer updates per generation batch (4 in the paper)."""
        return self.generation_batch // self.update_batch

    @property
    def weighted(self) -> bool:
        """Whether lambda is not the algorithm's own (a point between GRPO-N and GRPO)."""
        return self.positive_weight != algorithms.get(self.algorithm).positive_weight

    @property
    def label(self) -> str:
        """``GRPO``, ``GSPO-N``, ... or ``GRPO λ=0.25`` for the weighted family."""
        label = algorithms.get(self.algorithm).label
        return f"{label} λ={self.positive_weight:g}" if self.weighted else label

    def replace(self, **changes: Any) -> TrainConfig:
        return dataclasses.replace(self, **changes)


def check_sizes(num_generations: int, generation_batch: int, update_batch: int,
                micro_batch: int, world_size: int = 1) -> None:
    """The batch sizes fit together: whole groups of ``num_generations`` completions per
    generation batch, a whole number of updates per generation batch, and a whole number of
    micro-batches (on ``world_size`` devices) per update."""
    if num_generations < 2:
        raise ValueError(f"num_generations={num_generations} must be >= 2 (group advantages)")
    for name, value in [("generation_batch", generation_batch), ("update_batch", update_batch),
                        ("micro_batch", micro_batch)]:
        if value < 1:
            raise ValueError(f"{name}={value} must be >= 1")
    if generation_batch % num_generations:
        raise ValueError(f"generation_batch={generation_batch} is not divisible by "
                         f"num_generations={num_generations}: a batch must hold whole groups")
    if generation_batch % update_batch:
        raise ValueError(f"generation_batch={generation_batch} is not divisible by "
                         f"update_batch={update_batch}: each generation needs whole updates")
    if update_batch % (micro_batch * world_size):
        raise ValueError(f"update_batch={update_batch} is not divisible by micro_batch="
                         f"{micro_batch} x {world_size} device(s)")


def world_size() -> int:
    """Processes in this launch (``accelerate launch`` / ``torchrun`` set ``WORLD_SIZE``)."""
    return int(os.environ.get("WORLD_SIZE", "1"))
