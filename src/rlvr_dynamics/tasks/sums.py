"""A synthetic, verifiable reasoning task with two solution paths: multi-operand sums.

A problem is a sum of ``m`` numbers of ``d`` digits, ``"23+48+71+15="``; its gold answer is
the sum. A completion takes one of two paths, chosen by its first character:

* direct (common, error-prone): ``"#157"`` -- the answer at once;
* stepwise (rare, reliable): ``"23+48=71;71+71=142;142+15=157;#157"`` -- running partial sums.

A step may also be corrected in place, ``"23+48=61!71;"``: a wrong partial sum, ``!``, then the
right one -- an erroneous step that a correct final answer carries along (the analogue of the
paper's case study, Figure 3).

The pretraining corpus is written by a noisy "author" (``Author``) whose habits the base model
absorbs: it mostly answers directly and then drops or adds carries, and only sometimes works
stepwise, where it errs rarely and sometimes corrects itself. This mirrors, at small scale, the
paper's setting: a base model whose common path is unreliable and whose reliable path is rare.
The final answer is what follows the last ``#``; anything else is NA.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlvr_dynamics.tasks.base import Problem

ALPHABET = "0123456789+=;#!"
"""Every character the task writes (the character vocabulary of its models)."""

SPLITS = ("train", "test", "ood")


@dataclass(frozen=True)
class Author:
    """How the pretraining corpus is written.

    ``stepwise``: probability of working stepwise; ``carry_slip``: per carry, probability that
    a direct answer drops it or adds a spurious one; ``step_slip``: per step, probability of a
    wrong partial sum that is kept; ``correction``: per step, probability of a wrong partial sum
    that is corrected in place (``!``).
    """

    stepwise: float = 0.05
    carry_slip: float = 0.15
    step_slip: float = 0.02
    correction: float = 0.03

    def __post_init__(self) -> None:
        for name in ("stepwise", "carry_slip", "step_slip", "correction"):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"Author.{name} must lie in [0, 1], got {getattr(self, name)}")


@dataclass(frozen=True)
class SumTask:
    """Sums of ``operands[split]`` (inclusive range) numbers of ``digits`` digits each.

    ``train`` and ``test`` share a distribution (different problems); ``ood`` has more operands.
    Problems are drawn from ``seed`` and never overlap between splits.
    """

    digits: int = 2
    operands: tuple[tuple[int, int], ...] = (("train", 2, 4), ("test", 2, 4), ("ood", 5, 6))
    size: tuple[tuple[str, int], ...] = (("train", 4000), ("test", 200), ("ood", 200))
    seed: int = 0
    name: str = "sums"

    def __post_init__(self) -> None:
        if self.digits < 1:
            raise ValueError(f"digits must be >= 1, got {self.digits}")
        for split, lo, hi in self.operands:
            if split not in SPLITS or not 2 <= lo <= hi:
                raise ValueError(f"operands: bad entry {(split, lo, hi)}")

    # --- problems ---------------------------------------------------------------------------
    def problems(self, split: str) -> list[Problem]:
        """The problems of ``split``, deterministic in ``seed``, disjoint across splits."""
        if split not in SPLITS:
            raise ValueError(f"unknown split {split!r}; splits: {SPLITS}")
        seen: set[tuple[int, ...]] = set()
        out: list[Problem] = []
        for s in SPLITS:  # draw splits in a fixed order so earlier ones exclude later ones
            rng = np.random.default_rng([self.seed, SPLITS.index(s)])
            lo, hi = dict((k, (a, b)) for k, a, b in self.operands)[s]
            n = dict(self.size)[s]
            batch: list[Problem] = []
            while len(batch) < n:
                terms = tuple(int(x) for x in rng.integers(10 ** (self.digits - 1), 10 ** self.digits,
                                                            size=rng.integers(lo, hi + 1)))
                if terms in seen:
                    continue
                seen.add(terms)
                batch.append(Problem(id=f"{s}-{len(batch)}", prompt=prompt(terms),
                                     answer=str(sum(terms)), meta={"terms": terms}))
            if s == split:
                return batch
        raise AssertionError("unreachable")

    # --- grading ----------------------------------------------------------------------------
    def extract(self, completion: str) -> str | None:
        return extract(completion)

    def verify(self, completion: str, answer: str) -> bool:
        return extract(completion) == answer


def prompt(terms: tuple[int, ...]) -> str:
    return "+".join(map(str, terms)) + "="


def extract(completion: str) -> str | None:
    """The digits after the last ``#``; None (NA) if there are none."""
    head, sep, tail = completion.rpartition("#")
    return tail if sep and tail.isdigit() else None


def path(completion: str) -> str:
    """``"direct"`` (starts with ``#``), ``"stepwise"`` (starts with a digit) or ``"other"``."""
    if completion.startswith("#"):
        return "direct"
    if completion[:1].isdigit():
        return "stepwise"
    return "other"


def corrections(completion: str) -> int:
    """How many erroneous steps the completion corrected in place (``!`` marks)."""
    return completion.count("!")


# --- the pretraining author ---------------------------------------------------------------

def carry_columns(terms: tuple[int, ...]) -> list[int]:
    """The columns (0 = units) whose column sum, with the incoming carry, reaches 10."""
    cols, carry = [], 0
    for col in range(max(len(str(t)) for t in terms)):
        carry = (sum(t // 10 ** col % 10 for t in terms) + carry) // 10
        if carry:
            cols.append(col)
    return cols


def slip(value: int, rng: np.random.Generator, cols: list[int] | None = None) -> int:
    """``value`` with one carry slipped: +-10^(c+1) for a column c (units column by default
    range), never negative and never equal to ``value``."""
    cols = cols or list(range(max(len(str(value)) - 1, 1)))
    for _ in range(100):
        wrong = value + int(rng.choice([-1, 1])) * 10 ** (int(rng.choice(cols)) + 1)
        if wrong >= 0 and wrong != value:
            return wrong
    return value + 10


def direct_completion(terms: tuple[int, ...], author: Author, rng: np.random.Generator) -> str:
    """``#answer``: each carry independently slips (one carry dropped or added) w.p.
    ``carry_slip``, so harder sums (more carries) are answered wrongly more often."""
    value = sum(terms)
    for col in carry_columns(terms):
        if rng.random() < author.carry_slip:
            value += int(rng.choice([-1, 1])) * 10 ** (col + 1)
    return f"#{max(value, 0)}"


def stepwise_completion(terms: tuple[int, ...], author: Author, rng: np.random.Generator) -> str:
    """Running partial sums; a step may slip (kept) or be corrected in place (``!``)."""
    steps, acc = [], terms[0]
    for t in terms[1:]:
        lhs, right = f"{acc}+{t}", acc + t
        u = rng.random()
        if u < author.step_slip:  # a wrong partial sum, carried on to the end
            acc = slip(right, rng, carry_columns((acc, t)))
            steps.append(f"{lhs}={acc}")
        elif u < author.step_slip + author.correction:  # wrong, then corrected in place
            steps.append(f"{lhs}={slip(right, rng, carry_columns((acc, t)))}!{right}")
            acc = right
        else:
            steps.append(f"{lhs}={right}")
            acc = right
    return ";".join(steps) + f";#{acc}"


def corpus(author: Author, n: int, operands: tuple[int, int], digits: int,
           rng: np.random.Generator, exclude: set[tuple[int, ...]] = frozenset()
           ) -> list[tuple[str, str]]:
    """``n`` (prompt, completion) pairs written by ``author``, avoiding the ``exclude``d sums
    (the held-out problems)."""
    out: list[tuple[str, str]] = []
    while len(out) < n:
        terms = tuple(int(x) for x in rng.integers(10 ** (digits - 1), 10 ** digits,
                                                    size=rng.integers(operands[0], operands[1] + 1)))
        if terms in exclude:
            continue
        write = stepwise_completion if rng.random() < author.stepwise else direct_completion
        out.append((prompt(terms), write(terms, author, rng)))
    return out
