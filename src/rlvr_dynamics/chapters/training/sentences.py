"""The training chapter's words: the sentence that states a run's settings (every chapter that
trains quotes it), written from the parameters."""
from __future__ import annotations

from typing import Any


def run_settings(T: Any) -> str:
    """The settings every trained run shares, as a clause of a caption: model and task, prompts
    x rollouts per step, updates per step, learning rate, KL and entropy coefficients, steps
    and seeds (``T``: the training chapter's ``Params``, or any object with its fields)."""
    parts = [f"{T.model}" + (f" (LoRA rank {T.lora_rank})" if T.lora_rank else "")
             + (f" on {T.task}" if getattr(T, "task", None) else ""),
             f"{T.generation_batch // T.num_generations} prompts × {T.num_generations} rollouts "
             f"per step, {T.generation_batch // T.update_batch} updates per step",
             f"lr {T.learning_rate:g}, KL {T.beta:g}, entropy bonus {T.entropy_coef:g}",
             f"{T.steps} steps, seeds {list(T.seeds)}"]
    return ", ".join(parts)
