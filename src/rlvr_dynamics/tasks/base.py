"""What every task is: problems with gold answers, an answer extractor and a 0/1 verifier."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class Problem:
    """One prompt with its gold answer. ``prompt`` is the exact model input (template applied
    by the task, or a list of chat messages for chat models); ``meta`` holds task extras
    (difficulty, source line, ...)."""

    id: str
    prompt: str | list[dict[str, str]]
    answer: str
    meta: dict[str, Any] = field(default_factory=dict)


class Task(Protocol):
    """A verifiable task. ``reward`` is the paper's r(x, y): 1 if the final answer is correct."""

    name: str

    def problems(self, split: str) -> list[Problem]:
        """The problems of ``split`` (e.g. "train", "test", "ood")."""

    def extract(self, completion: str) -> str | None:
        """The final answer in ``completion``, or None when none can be extracted (NA)."""

    def verify(self, completion: str, answer: str) -> bool:
        """Whether ``completion``'s final answer equals the gold ``answer``."""


def reward(task: Task, completion: str, answer: str) -> float:
    """r(x, y) in {0, 1} (Section 2)."""
    return float(task.verify(completion, answer))
