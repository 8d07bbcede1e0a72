"""The sums task: grading on hand cases, splits, and the author's corpus against its exact
distributions (tolerances: 5 binomial standard deviations of the sample size)."""
import math
from collections import Counter

import numpy as np
import pytest

from rlvr_dynamics.tasks.sums import (GUESS_RANGE, Author, SumTask, add_columns,
                                      author_logprob, carry_units, corpus, corrections,
                                      direct_completion, direct_distribution, direct_success,
                                      extract, guess_completion, path, path_counts, prompt,
                                      stepwise_completion, success_probability, terms_of)


def within(freq: float, p: float, n: int) -> bool:
    return abs(freq - p) <= 5 * math.sqrt(p * (1 - p) / n) + 1e-12


# --- grading -------------------------------------------------------------------------------

@pytest.mark.parametrize("completion, answer, kind, bangs", [
    ("#157", "157", "direct", 0),
    ("23+48=71;71+71=142;142+15=157;#157", "157", "stepwise", 0),
    ("23+48=61!71;71+71=142;#142", "142", "stepwise", 1),
    ("23+48=71;#71#72", "72", "stepwise", 0),      # the last '#' counts
    ("#", None, "direct", 0),                      # nothing after '#': NA
    ("#15a", None, "direct", 0),
    ("7+1=8;", None, "stepwise", 0),               # no '#': NA
    ("71;", None, "other", 0),                     # no step: not the stepwise path
    ("25", None, "other", 0),
    ("=#57", "57", "guess", 0),                     # a guess: '=' first
    ("", None, "other", 0),
    ("+3", None, "other", 0),
])
def test_extract_path_corrections(completion, answer, kind, bangs):
    assert extract(completion) == answer
    assert path(completion) == kind
    assert corrections(completion) == bangs


def test_guess_draws_its_number_whatever_the_problem():
    rng = np.random.default_rng(0)
    guesses = [guess_completion(rng) for _ in range(2000)]
    assert {path(g) for g in guesses} == {"guess"}
    numbers = [int(extract(g)) for g in guesses]
    assert min(numbers) == GUESS_RANGE[0] and max(numbers) == GUESS_RANGE[1]
    # uniform over 90 numbers: any one answer comes up about once in 90 guesses
    assert abs(numbers.count(24) / len(numbers) - 1 / 90) < 0.01


def test_path_counts_tally_paths_rightness_and_corrections():
    samples = ["#24", "#14", "3+7=10;10+5=15;15+9=24;#24", "3+7=10;10+5=25!15;15+9=24;#24",
               "3+7=10;10+5=15;15+9=23;#23", "", "#24"]
    assert path_counts("24", samples) == {"direct": 3, "direct_right": 2, "stepwise": 3,
                                          "stepwise_right": 2, "corrected": 1}


def test_verify_compares_the_extracted_answer():
    task = SumTask()
    assert task.verify("#157", "157") and not task.verify("#1570", "157")
    assert not task.verify("23+48=71", "71")


def test_prompt_and_terms_are_inverse():
    assert prompt((23, 48, 71)) == "23+48+71="
    assert terms_of("23+48+71=") == (23, 48, 71)


# --- splits --------------------------------------------------------------------------------

def test_splits_are_deterministic_disjoint_and_in_range():
    task = SumTask(size=(("train", 300), ("test", 100), ("ood", 100)))
    splits = {s: task.problems(s) for s in ("train", "test", "ood")}
    assert [p.prompt for p in task.problems("test")] == [p.prompt for p in splits["test"]]
    terms = {s: {p.meta["terms"] for p in ps} for s, ps in splits.items()}
    assert all(len(terms[s]) == len(splits[s]) for s in splits)        # no repeats within
    assert not terms["train"] & terms["test"] and not terms["train"] & terms["ood"]
    assert not terms["test"] & terms["ood"]
    assert task.held_out() == terms["test"] | terms["ood"]
    for s, (lo, hi) in {"train": (3, 6), "test": (3, 6), "ood": (7, 9)}.items():
        for p in splits[s]:
            t = p.meta["terms"]
            assert lo <= len(t) <= hi and all(1 <= x <= 9 for x in t)
            assert p.answer == str(sum(t)) and p.prompt == prompt(t)
            assert p.meta["carries"] == carry_units(t)
    other = SumTask(seed=1, size=(("train", 300), ("test", 100), ("ood", 100)))
    assert [p.prompt for p in other.problems("test")] != [p.prompt for p in splits["test"]]


def test_bad_task_and_author_settings_are_named():
    with pytest.raises(ValueError, match="SumTask.digits"):
        SumTask(digits=0)
    with pytest.raises(ValueError, match="SumTask.operands"):
        SumTask(operands=(("train", 1, 4), ("test", 2, 4), ("ood", 5, 6)))
    with pytest.raises(ValueError, match="Author.carry_slip"):
        Author(carry_slip=1.5)
    with pytest.raises(ValueError, match="Author.carry_cap"):
        Author(carry_cap=-1)
    with pytest.raises(ValueError, match="step_slip \\+ Author.correction"):
        Author(step_slip=0.6, correction=0.6)
    with pytest.raises(ValueError, match="unknown split"):
        SumTask().problems("dev")


# --- column addition and the direct path ---------------------------------------------------

def test_column_addition_is_exact_without_drops_and_carries_are_counted():
    rng = np.random.default_rng(0)
    for _ in range(500):
        terms = tuple(int(x) for x in rng.integers(1, 1000, size=rng.integers(2, 8)))
        assert add_columns(terms, lambda c, u: 0) == sum(terms)
    assert carry_units((38, 11, 56)) == (1, 1)     # 8+1+6 = 15; 3+1+5+1 = 10
    assert carry_units((99,) * 6) == (5, 5)        # 54; 54+5 = 59
    assert carry_units((12, 13)) == ()
    # forgetting the units carry of 38+11+56 makes the tens column 9: no second carry
    assert add_columns((38, 11, 56), lambda c, u: u if c == 0 else 0) == 95


def test_direct_distribution_is_exact_on_hand_cases():
    uncapped = Author(carry_slip=0.3, carry_cap=None)
    assert direct_distribution((38, 11, 56), uncapped) == pytest.approx(
        {"105": 0.49, "5": 0.21, "95": 0.3})
    # 9+9+9+9 = 36 carries 3 units; a cap of 2 loses one for sure, then each kept one w.p. 0.3
    assert direct_distribution((9, 9, 9, 9), Author(carry_slip=0.3, carry_cap=2)) == pytest.approx(
        {"26": 0.49, "16": 0.42, "6": 0.09})
    assert direct_success((9, 9, 9, 9), Author(carry_cap=2)) == 0.0
    assert direct_success((9, 9, 9, 9), Author(carry_slip=0.3, carry_cap=3)) == pytest.approx(0.343)


@pytest.mark.parametrize("terms", [(23, 48, 71, 15), (99, 99, 99, 99, 99, 99), (12, 13),
                                   (3, 7, 5, 9), (9, 8, 9, 7, 9, 8, 9)])
@pytest.mark.parametrize("cap", [None, 0, 2])
def test_direct_distribution_sums_to_one_and_only_undershoots(terms, cap):
    for s in (0.0, 0.3, 0.8):
        author = Author(carry_slip=s, carry_cap=cap)
        d = direct_distribution(terms, author)
        assert sum(d.values()) == pytest.approx(1.0)
        assert d.get(str(sum(terms)), 0) == pytest.approx(direct_success(terms, author))
        assert all(int(a) < sum(terms) for a in d if a != str(sum(terms)))


@pytest.mark.parametrize("terms, cap", [((57, 68, 79, 86), None), ((9, 8, 9, 7, 6), 2)])
def test_sampled_direct_answers_follow_the_exact_distribution(terms, cap):
    author, n = Author(carry_slip=0.3, carry_cap=cap), 20000
    rng = np.random.default_rng(1)
    counts = Counter(direct_completion(terms, author, rng)[1:] for _ in range(n))
    exact = direct_distribution(terms, author)
    assert set(counts) <= set(exact)
    for answer, p in exact.items():
        assert within(counts[answer] / n, p, n), (answer, counts[answer] / n, p)


# --- the whole author ----------------------------------------------------------------------

def test_every_completion_has_its_exact_probability():
    """Frequencies of all completions (both paths, slips and corrections) against
    exp(author_logprob), for an author that errs often enough to visit every branch."""
    author = Author(stepwise=0.4, carry_slip=0.3, step_slip=0.1, correction=0.2)
    terms, n = (9, 5, 8), 40000
    rng = np.random.default_rng(2)
    counts = Counter((stepwise_completion if rng.random() < author.stepwise
                      else direct_completion)(terms, author, rng) for _ in range(n))
    probs = {c: math.exp(author_logprob(terms, c, author)) for c in counts}
    assert sum(probs.values()) == pytest.approx(1.0, abs=1e-9)  # every branch was seen
    assert any("!" in c for c in counts) and any(path(c) == "direct" for c in counts)
    for c, k in counts.items():
        assert within(k / n, probs[c], n), (c, k / n, probs[c])


def test_author_logprob_rejects_what_the_author_never_writes():
    author = Author()
    assert author_logprob((23, 48), "#70", author) == -math.inf      # an overshoot
    assert author_logprob((23, 48), "23+48=71;#72", author) == -math.inf
    assert author_logprob((23, 48), "23+49=72;#72", author) == -math.inf
    assert author_logprob((23, 48), "23+48=71;#71", author) == pytest.approx(
        math.log(author.stepwise * (1 - author.step_slip - author.correction)))


def test_corpus_statistics_match_the_author():
    author, n = Author(stepwise=0.1, carry_slip=0.3, step_slip=0.05, correction=0.1), 6000
    rng = np.random.default_rng(3)
    exclude = SumTask().held_out()
    pairs = corpus(author, n, (2, 9), 1, rng, exclude)
    assert not {terms_of(p) for p, _ in pairs} & exclude
    assert {len(terms_of(p)) for p, _ in pairs} == set(range(2, 10))
    step = [(p, c) for p, c in pairs if path(c) == "stepwise"]
    assert within(len(step) / n, author.stepwise, n)
    # direct accuracy: its expectation over these very problems is exact
    direct = [(terms_of(p), c) for p, c in pairs if path(c) == "direct"]
    expected = np.mean([direct_success(t, author) for t, _ in direct])
    observed = np.mean([c == f"#{sum(t)}" for t, c in direct])
    assert abs(observed - expected) <= 5 * math.sqrt(0.25 / len(direct))
    # stepwise: per step, slips kept and slips corrected
    steps = sum(len(terms_of(p)) - 1 for p, _ in step)
    assert within(sum(corrections(c) for _, c in step) / steps, author.correction, steps)
    right = np.mean([extract(c) == str(sum(terms_of(p))) for p, c in step])
    expected = np.mean([(1 - author.step_slip) ** (len(terms_of(p)) - 1) for p, _ in step])
    assert abs(right - expected) <= 5 * math.sqrt(0.25 / len(step))


def test_corpus_can_be_asked_for_one_path():
    rng = np.random.default_rng(4)
    assert {path(c) for _, c in corpus(Author(), 200, (2, 9), 1, rng, only="stepwise")} == {"stepwise"}
    assert {path(c) for _, c in corpus(Author(), 200, (2, 9), 1, rng, only="direct")} == {"direct"}
    with pytest.raises(ValueError, match="only must be"):
        corpus(Author(), 1, (2, 9), 1, rng, only="both")


def test_success_probability_is_the_mixture_of_the_two_paths():
    author = Author(stepwise=0.2, carry_slip=0.5, carry_cap=None, step_slip=0.1, correction=0.0)
    terms = (99, 99, 99)                                  # 27 -> 2 units; 27+2=29 -> 2 units
    assert success_probability(terms, author) == pytest.approx(0.8 * 0.5 ** 4 + 0.2 * 0.9 ** 2)
    capped = Author(stepwise=0.2, carry_cap=1, step_slip=0.1, correction=0.0)
    assert success_probability(terms, capped) == pytest.approx(0.2 * 0.9 ** 2)
