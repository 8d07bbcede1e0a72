"""A synthetic, verifiable reasoning task with solution paths chosen at one decision: sums of
single digits.

A problem is a sum of ``m`` numbers (by default single digits), ``"3+7+5+9="``; its gold answer
is the sum. A completion takes one of three paths, chosen by its first character:

* direct (common, error-prone): ``"#24"`` -- the answer at once;
* stepwise (rare, reliable): ``"3+7=10;10+5=15;15+9=24;#24"`` -- running partial sums;
* guess (bad): ``"=#57"`` -- a second ``=``, then a two-digit number drawn at random
  (``guess_completion``): almost never right. The pretraining author never guesses; the guess
  is a habit that ``path_prior.refit`` gives a base, the paper's explored, bad action a3
  (Section 3.2) beside the direct path's a1 and the stepwise path's a2.

A step may also be corrected in place, ``"10+5=25!15;"``: a wrong partial sum, ``!``, then the
right one -- an erroneous step that a correct final answer carries along (the analogue of the
paper's case study, Figure 3).

The pretraining corpus is written by a noisy "author" (``Author``) whose habits the base model
absorbs. Answering directly, the author adds in columns and is poor at carrying: it keeps at
most ``carry_cap`` carry units of a column in mind (a sum of 34 needs three: the author cannot
get it right directly), and forgets each unit it keeps with probability ``carry_slip``.
Working stepwise it adds one number at a time, never needs more than one carry, errs rarely and
sometimes corrects itself. This mirrors, at small scale, the paper's setting: the common path
is unreliable and fails outright on hard problems, the reliable path is rare. The final answer
is what follows the last ``#``; anything else is NA.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from math import comb
from typing import Callable, ClassVar, Sequence

import numpy as np

from rlvr_dynamics.tasks.base import Problem

ALPHABET = "0123456789+=;#!"
"""Every character the task writes (the character vocabulary of its models)."""

PATHS = ("direct", "stepwise", "guess", "other")
"""What ``path`` tells apart, in this order."""

GUESS = "="
"""The first character of a guess (a character of ``ALPHABET`` that starts no other path, so
the vocabulary, and every base pretrained on it, stay as they were)."""
GUESS_RANGE = (10, 99)
"""The inclusive range a guess draws its number from, uniformly."""

SPLITS = ("train", "test", "ood")


@dataclass(frozen=True)
class Author:
    """How the pretraining corpus is written.

    ``stepwise``: probability of working stepwise; ``carry_cap``: in a direct answer, the most
    carry units a column passes on (a column summing to 34 has 3; None: no cap);
    ``carry_slip``: the probability that each unit passed on is forgotten all the same;
    ``step_slip``: per step, probability of a wrong partial sum that is kept;
    ``correction``: per step, probability of a wrong partial sum that is corrected in place
    (``!``). A wrong partial sum drops one carry of that step (adds a spurious one if it has none).
    """

    stepwise: float = 0.05
    carry_slip: float = 0.3
    carry_cap: int | None = 2
    step_slip: float = 0.02
    correction: float = 0.03

    def __post_init__(self) -> None:
        for name in ("stepwise", "carry_slip", "step_slip", "correction"):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"Author.{name} must lie in [0, 1], got {getattr(self, name)}")
        if self.carry_cap is not None and (isinstance(self.carry_cap, bool)
                                           or not isinstance(self.carry_cap, int)
                                           or self.carry_cap < 0):
            raise ValueError(f"Author.carry_cap must be None or an integer >= 0, "
                             f"got {self.carry_cap!r}")
        if self.step_slip + self.correction > 1:
            raise ValueError(f"Author.step_slip + Author.correction must be <= 1, got "
                             f"{self.step_slip} + {self.correction}")


@dataclass(frozen=True)
class SumTask:
    """Sums of ``operands[split]`` (inclusive range) numbers of ``digits`` digits each.

    ``train`` and ``test`` share a distribution (different problems); ``ood`` has more operands,
    hence larger sums that need more carries. Problems are drawn from ``seed`` and never overlap
    between splits.
    """

    digits: int = 1
    operands: tuple[tuple[str, int, int], ...] = (("train", 3, 6), ("test", 3, 6), ("ood", 7, 9))
    size: tuple[tuple[str, int], ...] = (("train", 2000), ("test", 200), ("ood", 200))
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

    paths: ClassVar[tuple[str, ...]] = PATHS

    def path(self, problem: Problem, completion: str) -> str:
        """The path ``completion`` takes on ``problem`` (one of ``paths``: ``path``, given
        its terms)."""
        return path(completion, problem.meta.get("terms"))


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


STEP = re.compile(r"\d+\+\d+=")
"""How a stepwise completion begins: its first step, ``a+b=``."""


def path(completion: str, terms: tuple[int, ...] | None = None) -> str:
    """``"direct"`` (starts with ``#``), ``"stepwise"`` (starts with the problem's first step
    ``a+b=``, a and b its first two ``terms``; without them, with any step), ``"guess"``
    (starts with ``GUESS``) or ``"other"`` (a bare number, or steps that begin elsewhere than
    the problem does: a base taught to guess blurts some digits without its marker)."""
    if completion.startswith("#"):
        return "direct"
    if (completion.startswith(f"{terms[0]}+{terms[1]}=") if terms and len(terms) > 1
            else STEP.match(completion)):
        return "stepwise"
    if completion.startswith(GUESS):
        return "guess"
    return "other"


def guess_completion(rng: np.random.Generator) -> str:
    """``"=#n"``: a guess, ``n`` uniform over ``GUESS_RANGE`` whatever the problem."""
    return f"{GUESS}#{int(rng.integers(GUESS_RANGE[0], GUESS_RANGE[1] + 1))}"


def corrections(completion: str) -> int:
    """How many erroneous steps the completion corrected in place (``!`` marks)."""
    return completion.count("!")


def path_counts(answer: str, completions: Sequence[str],
                terms: tuple[int, ...] | None = None) -> dict[str, int]:
    """One problem's samples by path (``path``, given its ``terms``): how many took each path,
    how many of those were right, and how many carried a corrected step (``!``)."""
    kinds = [path(c, terms) for c in completions]
    right = [extract(c) == answer for c in completions]
    return {"direct": kinds.count("direct"),
            "direct_right": sum(r for k, r in zip(kinds, right) if k == "direct"),
            "stepwise": kinds.count("stepwise"),
            "stepwise_right": sum(r for k, r in zip(kinds, right) if k == "stepwise"),
            "corrected": sum(corrections(c) > 0 for c in completions)}


TRACES = ("direct_right", "direct_wrong", "stepwise_right", "stepwise_wrong", "guess_right",
          "guess_wrong", "corrected", "corrected_right")
"""The per-completion statistics of ``trace``."""

PATH_TRACES = TRACES[:4]
"""The direct and stepwise paths crossed with correctness: the LM's analogues of the toy's
actions, read by every chapter that follows the paths along training."""


def trace(answer: str, completion: str, terms: tuple[int, ...] | None = None
          ) -> dict[str, float]:
    """One completion as 0/1 indicators: its path (``path`` given the problem's ``terms``:
    direct, stepwise or guess; none for "other") crossed with right or wrong, whether it holds
    a corrected step (``!``), and whether it is right *and* holds one (an erroneous step that a
    correct answer carries along). Means over rollouts are the LM's analogues of the toy's
    action probabilities (Section 3.2)."""
    kind, right = path(completion, terms), extract(completion) == answer
    bang = corrections(completion) > 0
    return {**{f"{k}_{'right' if ok else 'wrong'}": float(kind == k and right == ok)
               for k in ("direct", "stepwise", "guess") for ok in (True, False)},
            "corrected": float(bang), "corrected_right": float(bang and right)}


def problem_trace(problem: Problem, completion: str) -> dict[str, float]:
    """``trace`` of one of this task's problems (its answer and terms): the ``exact.Trace``
    of the sums task."""
    return trace(problem.answer, completion, problem.meta.get("terms"))


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


def kept_carries(units: int, author: Author) -> int:
    """How many of a column's ``units`` carry units a direct answer can pass on (the cap)."""
    return units if author.carry_cap is None else min(units, author.carry_cap)


def direct_completion(terms: tuple[int, ...], author: Author, rng: np.random.Generator) -> str:
    """``#answer``: column addition in which a column passes on at most ``carry_cap`` carry
    units, each forgotten w.p. ``carry_slip``, so the more carries, the likelier a wrong (too
    small) answer, and beyond the cap a right one is impossible."""
    def drop(c: int, u: int) -> int:
        kept = kept_carries(u, author)
        return u - kept + int(rng.binomial(kept, author.carry_slip))
    return f"#{add_columns(terms, drop)}"


def direct_distribution(terms: tuple[int, ...], author: Author) -> dict[str, float]:
    """The exact distribution of the author's direct answers (``direct_completion``), by
    dynamic programming over columns with the carry passed on as state."""
    digit_sums, s = columns(terms), author.carry_slip
    states = {(0, 0): 1.0}  # (carry passed on, value written so far) -> probability
    for c, d in enumerate(digit_sums):
        nxt: dict[tuple[int, int], float] = {}
        for (carry, value), p in states.items():
            total = d + carry
            kept = kept_carries(total // 10, author)
            for k in range(kept + 1):
                key = (kept - k, value + total % 10 * 10 ** c)
                nxt[key] = nxt.get(key, 0.0) + p * comb(kept, k) * s ** k * (1 - s) ** (kept - k)
        states = nxt
    out: dict[str, float] = {}
    for (carry, value), p in states.items():
        answer = str(value + carry * 10 ** len(digit_sums))
        out[answer] = out.get(answer, 0.0) + p
    return out


def direct_success(terms: tuple[int, ...], author: Author) -> float:
    """P(the author's direct answer is right) = (1 - carry_slip) ** (carry units), or 0 when a
    column carries more than ``carry_cap`` units: any lost unit makes the answer smaller."""
    units = carry_units(terms)
    if author.carry_cap is not None and any(u > author.carry_cap for u in units):
        return 0.0
    return (1 - author.carry_slip) ** sum(units)


def success_probability(terms: tuple[int, ...], author: Author) -> float:
    """The probability that the author's completion is correct (its Pass@1 on this problem):
    direct and right, or stepwise without a kept slip."""
    stepwise = (1 - author.step_slip) ** (len(terms) - 1)
    return (1 - author.stepwise) * direct_success(terms, author) + author.stepwise * stepwise


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
        p = direct_distribution(terms, author).get(completion[1:], 0.0)
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
           rng: np.random.Generator, exclude: set[tuple[int, ...]] = frozenset(),
           only: str | None = None) -> list[tuple[str, str]]:
    """``n`` (prompt, completion) pairs written by ``author``, avoiding the ``exclude``d sums
    (the held-out problems); ``only="stepwise"`` or ``"direct"`` makes the author take that
    path every time instead of choosing."""
    if only not in (None, "stepwise", "direct"):
        raise ValueError(f"only must be None, 'stepwise' or 'direct', got {only!r}")
    out: list[tuple[str, str]] = []
    while len(out) < n:
        terms = draw_terms(rng, operands, digits)
        if terms in exclude:
            continue
        stepwise = rng.random() < author.stepwise if only is None else only == "stepwise"
        write = stepwise_completion if stepwise else direct_completion
        out.append((prompt(terms), write(terms, author, rng)))
    return out

