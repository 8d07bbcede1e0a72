"""A chat-format arithmetic task for small instruction-tuned models (SmolLM2-135M-Instruct).

A problem asks for the sum of ``terms`` numbers of ``digits`` digits in one user message,
"What is 3 + 4? Put the final answer in \\boxed{}."; the gold answer is the sum. ``prompt``
names how the chat around that message is set (``PROMPTS``: the message alone, after a system
message that states the format, after one worked example, or both), the candidates among which
the pretrained chapter chooses the one under which the base boxes its answers. The answer
of a completion is its last ``\\boxed{}`` if it has one, else its last integer; none is NA.
``boxed_only`` grades as the paper does (math-verify on the boxed answer): the last ``\\boxed{}``
alone, a text without one NA.
``digits`` and ``terms`` are the difficulty knob: SmolLM2 at temperature 0.7 gets one-digit
pairs right often and two-digit sums rarely (FIELD-NOTES), so rewards are mixed at the easy
settings. Splits are disjoint sets of problems drawn from ``seed``.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

import numpy as np

from rlvr_dynamics.tasks.base import Problem
from rlvr_dynamics.tasks.math import last_boxed

SPLITS = ("train", "test")
INSTRUCTION = "Put the final answer in \\boxed{}."
SYSTEM = ("You add numbers. Reply in one line: the sum worked out, then the final answer in "
          "\\boxed{}, for example \\boxed{12}.")
EXAMPLE = (120, 305)
"""The worked example's terms: three-digit numbers, a difficulty no profile trains or tests."""
PROMPTS = ("instruction", "system", "example", "system+example")


@dataclass(frozen=True)
class ArithmeticTask:
    """Sums of ``terms`` numbers with ``digits`` digits each (the first digit non-zero)."""

    digits: int = 1
    terms: int = 2
    size: tuple[tuple[str, int], ...] = (("train", 49), ("test", 32))
    seed: int = 0
    boxed_only: bool = False
    prompt: str = "instruction"
    name: str = "arithmetic"

    def __post_init__(self) -> None:
        _check(type(self).__name__, self.boxed_only, self.prompt)
        if not 1 <= self.digits <= 6:
            raise ValueError(f"ArithmeticTask.digits must lie in 1..6, got {self.digits}")
        if not 2 <= self.terms <= 8:
            raise ValueError(f"ArithmeticTask.terms must lie in 2..8, got {self.terms}")
        if {s for s, _ in self.size} != set(SPLITS) or any(n < 0 for _, n in self.size):
            raise ValueError(f"ArithmeticTask.size must give a count for {SPLITS}: {self.size}")
        available = (9 * 10 ** (self.digits - 1)) ** self.terms
        if sum(n for _, n in self.size) > available:
            raise ValueError(f"ArithmeticTask: {dict(self.size)} problems asked, but only "
                             f"{available} distinct sums of {self.terms} {self.digits}-digit "
                             f"numbers exist")

    def problems(self, split: str = "test") -> list[Problem]:
        """The problems of ``split``, deterministic in ``seed``, disjoint across splits."""
        if split not in SPLITS:
            raise ValueError(f"unknown split {split!r}; splits: {SPLITS}")
        lo, hi = 10 ** (self.digits - 1), 10 ** self.digits
        total = sum(n for _, n in self.size)
        rng = np.random.default_rng([self.seed, self.digits, self.terms])
        space = (hi - lo) ** self.terms
        if space <= 10 ** 6:  # small spaces: a permutation, so every draw is distinct
            codes = rng.permutation(space)[:total]
            drawn = [tuple(lo + int(c) // (hi - lo) ** j % (hi - lo) for j in range(self.terms))
                     for c in codes]
        else:
            seen: set[tuple[int, ...]] = set()
            drawn = []
            while len(drawn) < total:
                t = tuple(int(x) for x in rng.integers(lo, hi, size=self.terms))
                if t not in seen:
                    seen.add(t)
                    drawn.append(t)
        start = sum(n for s, n in self.size[:[s for s, _ in self.size].index(split)])
        count = dict(self.size)[split]
        return [Problem(id=f"{split}-{i}", prompt=messages(t, self.prompt), answer=str(sum(t)),
                        meta={"terms": t})
                for i, t in enumerate(drawn[start:start + count])]

    def extract(self, completion: str) -> str | None:
        return extract(completion, self.boxed_only)

    def verify(self, completion: str, answer: str) -> bool:
        return self.extract(completion) == answer


@dataclass(frozen=True)
class ArithmeticMix:
    """Problems of several difficulties at once: for each ``(digits, terms)`` of ``levels``
    the splits that ``ArithmeticTask`` draws (``size`` per level, ``seed``), so that a level's
    problems here are those of its own benchmark (``arith:digits=..,terms=..``); ids are
    prefixed ``d<digits>t<terms>-`` and ``meta["level"]`` holds the level."""

    levels: tuple[tuple[int, int], ...] = ((1, 2), (1, 3))
    size: tuple[tuple[str, int], ...] = (("train", 49), ("test", 32))
    seed: int = 0
    boxed_only: bool = False
    prompt: str = "instruction"
    name: str = "arithmetic mix"

    def __post_init__(self) -> None:
        _check(type(self).__name__, self.boxed_only, self.prompt)
        if not self.levels or len(set(self.levels)) != len(self.levels):
            raise ValueError(f"ArithmeticMix.levels must be distinct (digits, terms) pairs, got "
                             f"{self.levels}")
        for level in self.levels:
            self.task(level)  # each level is a valid ArithmeticTask

    def task(self, level: tuple[int, int]) -> ArithmeticTask:
        digits, terms = level
        return ArithmeticTask(digits=digits, terms=terms, size=self.size, seed=self.seed,
                              boxed_only=self.boxed_only, prompt=self.prompt)

    def problems(self, split: str = "test") -> list[Problem]:
        """Every level's problems of ``split``, level after level."""
        return [dataclasses.replace(p, id=f"d{d}t{t}-{p.id}", meta={**p.meta, "level": (d, t)})
                for d, t in self.levels for p in self.task((d, t)).problems(split)]

    def extract(self, completion: str) -> str | None:
        return extract(completion, self.boxed_only)

    def verify(self, completion: str, answer: str) -> bool:
        return self.extract(completion) == answer


def question(terms: tuple[int, ...]) -> str:
    return f"What is {' + '.join(map(str, terms))}? {INSTRUCTION}"


def messages(terms: tuple[int, ...], prompt: str = "instruction") -> list[dict[str, str]]:
    """The chat prompt of ``PROMPTS``' ``prompt``: the question as one user message, after a
    system message (``SYSTEM``) and/or one worked example (``EXAMPLE``, answered in the
    format asked)."""
    system = [{"role": "system", "content": SYSTEM}] if "system" in prompt else []
    worked = ([{"role": "user", "content": question(EXAMPLE)},
               {"role": "assistant", "content": f"{' + '.join(map(str, EXAMPLE))} = "
                                                f"{sum(EXAMPLE)}. The final answer is "
                                                f"\\boxed{{{sum(EXAMPLE)}}}."}]
              if "example" in prompt else [])
    return system + worked + [{"role": "user", "content": question(terms)}]


_INTEGER = re.compile(r"-?\d[\d,]*")


def _check(owner: str, boxed_only: object, prompt: object) -> None:
    if not isinstance(boxed_only, bool):
        raise ValueError(f"{owner}.boxed_only must be True or False, got {boxed_only!r}")
    if prompt not in PROMPTS:
        raise ValueError(f"{owner}.prompt must be one of {PROMPTS}, got {prompt!r}")


def extract(completion: str, boxed_only: bool = False) -> str | None:
    """The integer in the last ``\\boxed{}``, else (unless ``boxed_only``) the last integer of
    the text (thousands commas dropped); None when there is none."""
    boxed = last_boxed(completion)
    if boxed is None and boxed_only:
        return None
    found = _INTEGER.findall(boxed if boxed is not None else completion)
    if not found:
        return None
    return str(int(found[-1].replace(",", "")))
