"""A synthetic, verifiable reasoning task with two solution paths: multi-operand sums.

A problem is a sum of ``m`` numbers of ``d`` digits, ``"23+48+71+15="``; its gold answer is
the sum. A completion takes one of two paths, chosen by its first character:

* direct (common, error-prone): ``"#157"`` -- the answer at once;
* stepwise (rare, reliable): ``"23+48=71;71+71=142;142+15=157;#157"`` -- running partial sums.

A step may also be corrected in place, ``"23+48=61!71;"``: a wrong partial sum, ``!``, then the
right one -- an erroneous step that a correct final answer carries along (the analogue of the
paper's case study, Figure 3).

The pretraining corpus is written by a noisy "author" (``Author``) whose habits the base model
absorbs. Writing directly, the author forgets carries: each carry unit is dropped with
probability ``carry_slip``, so a sum with many carries (many operands) is answered wrongly more
often than rightly, and its most likely direct answer is wrong. Working stepwise, the author adds
two numbers at a time, errs rarely and sometimes corrects itself. This mirrors, at small scale,
the paper's setting: a base model whose common path is unreliable on hard problems and whose
reliable path is rare. The final answer is what follows the last ``#``; anything else is NA.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from math import comb
from typing import Callable

import numpy as np

from rlvr_dynamics.tasks.base import Problem

ALPHABET = "0123456789+=;#!"
"""Every character the task writes (the character vocabulary of its models)."""

SPLITS = ("train", "test", "ood")


@dataclass(frozen=True)
class Author:
    """How the pretraining corpus is written.

    ``stepwise``: probability of working stepwise; ``carry_slip``: in a direct answer, the
    probability that each carry unit is dropped (a column whose digits sum to 27 carries 2
    units); ``step_slip``: per step, probability of a wrong partial sum that is kept;
    ``correction``: per step, probability of a wrong partial sum that is corrected in place
    (``!``). A wrong partial sum drops one carry of that step (adds a spurious one if it has none).
    """

    stepwise: float = 0.05
    carry_slip: float = 0.3
    step_slip: float = 0.02
    correction: float = 0.03

    def __post_init__(self) -> None:
        for name in ("stepwise", "carry_slip", "step_slip", "correction"):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"Author.{name} must lie in [0, 1], got {getattr(self, name)}")
        if self.step_slip + self.correction > 1:
            raise ValueError(f"Author.step_slip + Author.correction must be <= 1, got "
                             f"{self.step_slip} + {self.correction}")


@dataclass(frozen=True)
class SumTask:
    """Sums of ``operands[split]`` (inclusive range) numbers of ``digits`` digits each.

    ``train`` and ``test`` share a distribution (different problems); ``ood`` has more operands.
    Problems are drawn from ``seed`` and never overlap between splits.
    """

    digits: int = 2
    operands: tuple[tuple[str, int, int], ...] = (("train", 2, 4), ("test", 2, 4), ("ood", 5, 6))
    size: tuple[tuple[str, int], ...] = (("train", 4000), ("test", 200), ("ood", 200))
    seed: int = 0
    name: str = "sums"

    def __post_init__(self) -> None:
        if self.digits < 1:
            raise ValueError(f"SumTask.digits must be >= 1, got {self.digits}")
        if sorted(s for s, *_ in self.operands) != sorted(SPLITS):
            raise ValueError(f"SumTask.operands must give one range per split {SPLITS}")
        for split, lo, hi in self.operands:
            if not 2 <= lo <= hi:
                raise ValueError(f"SumTask.operands: bad range {(split, lo, hi)}; need 2 <= lo <= hi")
        if sorted(s for s, _ in self.size) != sorted(SPLITS) or min(n for _, n in self.size) < 1:
            raise ValueError(f"SumTask.size must give a positive size per split {SPLITS}")

    # --- problems ---------------------------------------------------------------------------
    def problems(self, split: str) -> list[Problem]:
        """The problems of ``split``, deterministic in ``seed``, disjoint across splits.

        ``meta`` holds the ``terms`` and their ``carries`` (carry units per column, units first).
        """
        if split not in SPLITS:
            raise ValueError(f"unknown split {split!r}; splits: {SPLITS}")
        seen: set[tuple[int, ...]] = set()
        ranges = {s: (lo, hi) for s, lo, hi in self.operands}
        for s in SPLITS:  # draw splits in a fixed order so earlier ones exclude later ones
            rng = np.random.default_rng([self.seed, SPLITS.index(s)])
            batch: list[Problem] = []
            while len(batch) < dict(self.size)[s]:
                terms = draw_terms(rng, ranges[s], self.digits)
                if terms in seen:
                    continue
                seen.add(terms)
                batch.append(Problem(id=f"{s}-{len(batch)}", prompt=prompt(terms),
                                     answer=str(sum(terms)),
                                     meta={"terms": terms, "carries": carry_units(terms)}))
            if s == split:
                return batch
        raise AssertionError("unreachable")

    def held_out(self) -> set[tuple[int, ...]]:
        """The terms of every test and ood problem (what a pretraining corpus must avoid)."""
        return {p.meta["terms"] for s in ("test", "ood") for p in self.problems(s)}

    # --- grading ----------------------------------------------------------------------------
    def extract(self, completion: str) -> str | None:
        return extract(completion)

    def verify(self, completion: str, answer: str) -> bool:
        return extract(completion) == answer


def draw_terms(rng: np.random.Generator, operands: tuple[int, int], digits: int
               ) -> tuple[int, ...]:
    """``m`` uniform ``digits``-digit numbers, ``m`` uniform in the inclusive range ``operands``."""
    m = rng.integers(operands[0], operands[1] + 1)
    return tuple(int(x) for x in rng.integers(10 ** (digits - 1), 10 ** digits, size=m))


def prompt(terms: tuple[int, ...]) -> str:
    return "+".join(map(str, terms)) + "="


def terms_of(prompt: str) -> tuple[int, ...]:
    """The terms of a prompt ``"23+48+71="`` (the inverse of ``prompt``)."""
    return tuple(int(t) for t in prompt.removesuffix("=").split("+"))


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

def columns(terms: tuple[int, ...]) -> list[int]:
    """The digit sum of each column, units first."""
    return [sum(t // 10 ** c % 10 for t in terms) for c in range(max(len(str(t)) for t in terms))]


def add_columns(terms: tuple[int, ...], drop: Callable[[int, int], int]) -> int:
    """Column addition, units first, in which column c passes on ``units - drop(c, units)`` of
    its ``units`` carry units (``drop = lambda c, u: 0`` gives the exact sum). A dropped unit
    is simply forgotten: the next column's sum, and its own carries, are then smaller."""
    value, carry = 0, 0
    digit_sums = columns(terms)
    for c, d in enumerate(digit_sums):
        s = d + carry
        value += s % 10 * 10 ** c
        carry = s // 10 - drop(c, s // 10)
    return value + carry * 10 ** len(digit_sums)


def carry_units(terms: tuple[int, ...]) -> tuple[int, ...]:
    """Carry units out of each column (units first) of the exact addition: column c carries
    ``(digit sum + carry in) // 10`` units; trailing zeros left out."""
    units, carry = [], 0
    for d in columns(terms):
        carry = (d + carry) // 10
        units.append(carry)
    while units and units[-1] == 0:
        units.pop()
    return tuple(units)


def direct_completion(terms: tuple[int, ...], author: Author, rng: np.random.Generator) -> str:
    """``#answer``: in the column addition each carry unit is forgotten independently w.p.
    ``carry_slip``, so the more carries, the likelier a wrong (too small) answer."""
    return f"#{add_columns(terms, lambda c, u: int(rng.binomial(u, author.carry_slip)))}"


def direct_distribution(terms: tuple[int, ...], carry_slip: float) -> dict[str, float]:
    """The exact distribution of the author's direct answers (``direct_completion``), by
    dynamic programming over columns with the passed-on carry as state.

    P(right answer) = (1 - carry_slip) ** sum(carry_units(terms)): any forgotten unit makes
    the answer smaller.
    """
    digit_sums = columns(terms)
    states = {(0, 0): 1.0}  # (carry passed on, value written so far) -> probability
    for c, d in enumerate(digit_sums):
        nxt: dict[tuple[int, int], float] = {}
        for (carry, value), p in states.items():
            s = d + carry
            u = s // 10
            for k in range(u + 1):
                key = (u - k, value + s % 10 * 10 ** c)
                nxt[key] = nxt.get(key, 0.0) + p * comb(u, k) * carry_slip ** k * (1 - carry_slip) ** (u - k)
        states = nxt
    out: dict[str, float] = {}
    for (carry, value), p in states.items():
        answer = str(value + carry * 10 ** len(digit_sums))
        out[answer] = out.get(answer, 0.0) + p
    return out


def success_probability(terms: tuple[int, ...], author: Author) -> float:
    """The probability that the author's completion is correct (its Pass@1 on this problem):
    direct without a forgotten carry, or stepwise without a kept slip."""
    direct = (1 - author.carry_slip) ** sum(carry_units(terms))
    stepwise = (1 - author.step_slip) ** (len(terms) - 1)
    return (1 - author.stepwise) * direct + author.stepwise * stepwise


def wrong_step(acc: int, t: int, rng: np.random.Generator) -> int:
    """A wrong partial sum for ``acc + t``: one carry unit forgotten in a column that carries,
    or, if none does, a spurious carry added to the units column."""
    cols = [c for c, u in enumerate(carry_units((acc, t))) if u]
    if not cols:
        return acc + t + 10
    chosen = int(rng.choice(cols))
    return add_columns((acc, t), lambda c, u: int(c == chosen))


def stepwise_completion(terms: tuple[int, ...], author: Author, rng: np.random.Generator) -> str:
    """Running partial sums; a step may slip (kept) or be corrected in place (``!``)."""
    steps, acc = [], terms[0]
    for t in terms[1:]:
        lhs, right = f"{acc}+{t}", acc + t
        u = rng.random()
        if u < author.step_slip:  # a wrong partial sum, carried on to the end
            acc = wrong_step(acc, t, rng)
            steps.append(f"{lhs}={acc}")
        elif u < author.step_slip + author.correction:  # wrong, then corrected in place
            steps.append(f"{lhs}={wrong_step(acc, t, rng)}!{right}")
            acc = right
        else:
            steps.append(f"{lhs}={right}")
            acc = right
    return ";".join(steps) + f";#{acc}"


def author_logprob(terms: tuple[int, ...], completion: str, author: Author) -> float:
    """log P(``completion`` | problem) under ``author`` (-inf if the author never writes it).

    Its mean over the author's own corpus is the entropy of the corpus: the held-out loss of a
    model that reproduces the author exactly, the floor that pretraining converges to.
    """
    if completion.startswith("#"):
        p = direct_distribution(terms, author.carry_slip).get(completion[1:], 0.0)
        return math.log((1 - author.stepwise) * p) if p > 0 else -math.inf
    *steps, final = completion.split(";")
    if len(steps) != len(terms) - 1:
        return -math.inf
    logp, acc = math.log(author.stepwise), terms[0]
    for step, t in zip(steps, terms[1:]):
        lhs, _, value = step.partition("=")
        if lhs != f"{acc}+{t}":
            return -math.inf
        right = acc + t
        cols = [c for c, u in enumerate(carry_units((acc, t))) if u]
        wrong = ({add_columns((acc, t), lambda c, u, k=k: int(c == k)) for k in cols}
                 if cols else {right + 10})
        share = 1 / max(len(cols), 1)  # wrong_step picks a carrying column uniformly
        head, bang, tail = value.partition("!")
        if bang and head.isdigit() and int(head) in wrong and tail == str(right):
            p = author.correction * share
        elif value == str(right):
            p = 1 - author.step_slip - author.correction
        elif value.isdigit() and int(value) in wrong:
            p = author.step_slip * share
        else:
            return -math.inf
        logp += math.log(p) if p > 0 else -math.inf
        acc = right if bang else int(value)
    return logp if final == f"#{acc}" else -math.inf


def corpus(author: Author, n: int, operands: tuple[int, int], digits: int,
           rng: np.random.Generator, exclude: set[tuple[int, ...]] = frozenset()
           ) -> list[tuple[str, str]]:
    """``n`` (prompt, completion) pairs written by ``author``, avoiding the ``exclude``d sums
    (the held-out problems)."""
    out: list[tuple[str, str]] = []
    while len(out) < n:
        terms = draw_terms(rng, operands, digits)
        if terms in exclude:
            continue
        write = stepwise_completion if rng.random() < author.stepwise else direct_completion
        out.append((prompt(terms), write(terms, author, rng)))
    return out

