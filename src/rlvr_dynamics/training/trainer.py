"""The one small subclass of TRL's ``GRPOTrainer`` behind all four algorithms: the advantages
of positive samples weighted by lambda (``algorithms`` explains the choices), nothing else of TRL
changed but the shuffling seed per epoch, which makes resumed runs exact."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils.data import Sampler
from trl import GRPOConfig, GRPOTrainer


@dataclass
class GRPONConfig(GRPOConfig):
    """TRL's ``GRPOConfig`` plus ``positive_weight``, the lambda of the module docstring."""

    positive_weight: float = field(
        default=1.0,
        metadata={"help": "lambda: weight on the advantages of samples with non-negative advantage "
                          "(1: GRPO/GSPO, 0: GRPO-N/GSPO-N, Appendix B.5)."})

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.positive_weight >= 0:
            raise ValueError(f"positive_weight must be >= 0, got {self.positive_weight}")


class GRPONTrainer(GRPOTrainer):
    """TRL's ``GRPOTrainer`` with the positive samples' advantages weighted by lambda
    (``args.positive_weight``); with lambda = 1 its advantages and loss are TRL's, bit for bit.

    Also logs ``frac_negative``, the fraction of the generation batch whose relative advantage
    is negative (the samples that -N trains on).
    """

    def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        batch = super()._generate_and_score_completions(inputs)
        advantages = batch["advantages"]
        negative = advantages < 0
        batch["advantages"] = torch.where(negative, advantages,
                                          self.args.positive_weight * advantages)
        mode = "train" if self.model.training else "eval"
        self._metrics[mode]["frac_negative"].append(
            self.accelerator.gather(negative.float()).mean().item())
        return batch

    def _get_train_sampler(self, dataset=None) -> Sampler:
        """TRL's sampler, reshuffled from ``seed + epoch`` at every epoch so that a run resumed
        in a later epoch sees the same prompts as an uninterrupted one (TRL's sampler draws its
        epochs from one generator that a restart would reset)."""
        return EpochSeeded(super()._get_train_sampler(dataset))


class EpochSeeded(Sampler):
    """A shuffling sampler whose generator is reseeded with ``seed + epoch`` by ``set_epoch``
    (which the Trainer calls at the start of every epoch, also after resuming)."""

    def __init__(self, sampler: Sampler) -> None:
        self.sampler = sampler

    def set_epoch(self, epoch: int) -> None:
        generator, seed = getattr(self.sampler, "generator", None), getattr(self.sampler, "seed", None)
        if generator is not None and seed is not None:
            generator.manual_seed(seed + epoch)

    def __iter__(self):
        return iter(self.sampler)

    def __len__(self) -> int:
        return len(self.sampler)
