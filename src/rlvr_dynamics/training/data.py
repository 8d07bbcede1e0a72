"""What the trainer sees: a task's problems as prompts, a ``datasets.Dataset``, and the reward
r(x, y) in {0, 1} (Section 2)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from datasets import Dataset

from rlvr_dynamics.tasks.base import Problem, Task, reward
from rlvr_dynamics.tasks.sums import SumTask


def resolve_task(task: Task | str | None, model: Any) -> Task:
    """The task object of a ``TrainConfig``: its own, the base model's (``None``), or one named."""
    if task is None:
        return model.task
    if task == "sums":
        return SumTask()
    if task == "math":
        return MathSplits()
    return task


@dataclass(frozen=True)
class MathSplits:
    """MATH as the paper trains on it (Section 4.1): its 7,500 training problems, MATH-500 held
    out, both with the Appendix C.2 prompt and graded by math-verify (``tasks.math``)."""

    train: str = "math-train"
    test: str = "math500"
    name: str = "math"

    def problems(self, split: str) -> list[Problem]:
        from rlvr_dynamics.tasks.math import MathTask
        if split not in ("train", "test"):
            raise ValueError(f"unknown split {split!r} of the MATH training task; splits: train, test")
        return MathTask(getattr(self, split)).problems()

    def verify(self, completion: str, answer: str) -> bool:
        from rlvr_dynamics.tasks.math import grade
        return grade(completion, answer)


def prompt_text(tokenizer, prompt: str | list[dict[str, str]]) -> str | list[dict[str, str]]:
    """The model input for ``prompt``: a string gets the tokenizer's BOS token in front unless
    the tokenizer adds it itself (the sums models were pretrained on ``<s>prompt``); chat
    messages are left to TRL, which applies the chat template."""
    if not isinstance(prompt, str) or tokenizer.bos_token is None:
        return prompt
    adds_bos = tokenizer("0")["input_ids"][:1] == [tokenizer.bos_token_id]
    return prompt if adds_bos or prompt.startswith(tokenizer.bos_token) else tokenizer.bos_token + prompt


def dataset(problems: list[Problem], tokenizer) -> Dataset:
    """Columns ``prompt`` (model input) and ``answer`` (gold), as TRL's reward functions get them."""
    return Dataset.from_list([{"prompt": prompt_text(tokenizer, p.prompt), "answer": p.answer}
                              for p in problems])


def reward_function(task: Task) -> Callable[..., list[float]]:
    """TRL's reward-function interface for r(x, y): 1 if the completion's answer is correct."""
    def correct(completions: list[Any], answer: list[str], **_: Any) -> list[float]:
        texts = [c if isinstance(c, str) else c[-1]["content"] for c in completions]
        return [reward(task, t, a) for t, a in zip(texts, answer)]
    return correct
