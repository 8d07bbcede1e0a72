"""The base-model chapter (``chapters.base_model``, its ``sentences``): the author's exact
probabilities and Pass@k against hand arithmetic, the path tallies against counts made by hand
from the records, the summaries, tables and sentences against their definitions."""
import math

import numpy as np
import pandas as pd
import pytest
import torch

from rlvr_dynamics.chapters import base_model as bm
from rlvr_dynamics.chapters.base_model import sentences, shown
from rlvr_dynamics.measure import EvalSettings
from rlvr_dynamics.models import char_tokenizer, tiny_qwen2
from rlvr_dynamics.tasks.sums import (ALPHABET, Author, SumTask, direct_distribution,
                                      direct_success, extract, path, success_probability)

AUTHOR = Author()  # carry slip 0.3, cap 2, step slip 0.02, stepwise 0.05
TASK = SumTask(size=(("train", 10), ("test", 12), ("ood", 12)))


@pytest.fixture(scope="module")
def tiny():
    """An untrained tiny model: its completions mix both paths and other junk."""
    torch.manual_seed(0)
    tok = char_tokenizer(ALPHABET)
    return tiny_qwen2(tok, hidden=16, layers=1, heads=2, seed=1).eval(), tok


# --- the author ----------------------------------------------------------------------------

def test_exact_pass_at_k_by_hand():
    # two problems right w.p. 0.5 and 0.2: Pass@k = mean of 1 - 0.5^k and 1 - 0.8^k
    got = bm.exact_pass_at_k([0.5, 0.2], [1, 2, 3])
    assert got == pytest.approx([(0.5 + 0.2) / 2, (0.75 + 0.36) / 2, (0.875 + 0.488) / 2])
    assert bm.exact_pass_at_k([0.0, 1.0], [1, 64]) == pytest.approx([0.5, 0.5])


def test_author_pass_at_1_is_its_mean_success_and_grows_with_k():
    problems = TASK.problems("test")
    curve = bm.author_pass_at_k(problems, AUTHOR, [1, 2, 8])
    p = [success_probability(q.meta["terms"], AUTHOR) for q in problems]
    assert curve[0] == pytest.approx(np.mean(p))
    assert curve[2] == pytest.approx(np.mean([1 - (1 - x) ** 8 for x in p]))
    assert np.all(np.diff(curve) > 0)


def test_stepwise_success_is_the_stepwise_term_of_success_probability():
    assert bm.stepwise_success(3, AUTHOR) == pytest.approx(0.98 ** 2)
    for terms in [(3, 4), (9, 9, 9, 9), (1, 2, 3, 4, 5, 6, 7)]:
        direct = (1 - AUTHOR.stepwise) * direct_success(terms, AUTHOR)
        assert direct + AUTHOR.stepwise * bm.stepwise_success(len(terms), AUTHOR) == \
            pytest.approx(success_probability(terms, AUTHOR))


@pytest.mark.parametrize("cap", [0, 1, 2, None])
def test_direct_success_by_sum_is_the_sums_tens(cap):
    """For single digits, P(right | direct) = 0.7 ** (sum // 10), 0 beyond the cap."""
    author = Author(carry_cap=cap)
    sums = np.arange(3, 82)
    got = bm.direct_success_by_sum(sums, author)
    want = [0.0 if cap is not None and s // 10 > cap else 0.7 ** (s // 10) for s in sums]
    assert got == pytest.approx(want)
    # any single-digit terms with that sum agree (the test split's problems)
    for p in TASK.problems("test"):
        assert bm.direct_success_by_sum([sum(p.meta["terms"])], author)[0] == \
            pytest.approx(direct_success(p.meta["terms"], author))


def test_terms_with_sum():
    for s in range(1, 90):
        t = bm.terms_with_sum(s)
        assert sum(t) == s and all(1 <= x <= 9 for x in t)


def test_author_examples_table():
    table = shown.author_examples([(3, 4, 2), (9, 9, 8, 7, 6, 5)], AUTHOR)
    assert list(table["problem"]) == ["3+4+2=9", "9+9+8+7+6+5=44"]
    assert list(table["P(right | direct)"]) == [1.0, 0.0]    # no carry; 4 carries > cap
    assert table["P(right | stepwise)"][1] == round(0.98 ** 5, 3)
    assert table["P(right)"][1] == round(0.05 * 0.98 ** 5, 3)
    assert table["direct answers (probability)"][0] == "9 (1.00)"
    # the most likely direct answer comes first
    first = table["direct answers (probability)"][1].split(" ")[0]
    dist = direct_distribution((9, 9, 8, 7, 6, 5), AUTHOR)
    assert first == max(dist, key=dist.get)


def test_split_table_counts_sums_beyond_the_cap_by_hand():
    splits = bm.problem_splits(TASK, 10)
    assert [len(v) for v in splits.values()] == [10, 10]
    table = shown.split_table(splits, AUTHOR)
    for s, ps in splits.items():
        sums = [sum(p.meta["terms"]) for p in ps]
        beyond = sum(x >= 30 for x in sums) / len(ps)         # three carries or more
        assert table[s]["beyond the direct path"] == f"{beyond:.0%}"
        assert table[s]["problems"] == len(ps)
    lo, hi = map(int, table["test"]["operands"].split("-"))
    assert 3 <= lo <= hi <= 6


def test_corpus_lines_are_the_authors():
    lines = bm.corpus_lines(AUTHOR, 30, (2, 9), 1, seed=0).splitlines()
    assert len(lines) == 30
    assert lines == bm.corpus_lines(AUTHOR, 30, (2, 9), 1, seed=0).splitlines()
    assert lines != bm.corpus_lines(AUTHOR, 30, (2, 9), 1, seed=1).splitlines()
    for line in lines:
        prompt, completion = line.split()
        terms = tuple(int(t) for t in prompt.rstrip("=").split("+"))
        assert 2 <= len(terms) <= 9
        if completion.startswith("#"):
            assert completion[1:] in direct_distribution(terms, AUTHOR)


# --- pretraining ---------------------------------------------------------------------------

def test_convergence_line_and_kl(tiny):
    model, tok = tiny
    log = {"losses": [2.0] * 10, "held_out": [[2, 1.0], [4, 0.8], [6, 0.7], [8, 0.65],
                                              [10, 0.6]]}
    base = bm.Base("k", model, tok, log, floor=0.5, seconds=3.0, folder="/x")
    assert base.kl == pytest.approx(0.1)
    line = sentences.convergence_line(base)
    # int(0.8 * 5) - 1 = 3: the fourth evaluation, 0.65, against the last, 0.6
    assert line == ("final held-out loss 0.600; KL(author || base) = 0.100 nats per token; "
                    "last 20 % of training lowered it by 0.050")
    assert base.size == sum(p.numel() for p in model.parameters())
    assert f"{base.size:,} parameters" in sentences.describe(base)


# --- does the base reproduce its author? ---------------------------------------------------

def test_match_table_is_the_mean_per_split(tiny):
    model, tok = tiny
    splits = {s: ps[:3] for s, ps in bm.problem_splits(TASK, 3).items()}
    match = bm.author_matches(model, tok, splits, AUTHOR)
    table = bm.match_table(match)
    assert table.shape == (8, 2)
    for s in splits:
        assert table.loc[(s, "P(stepwise)"), "author"] == AUTHOR.stepwise
        assert table.loc[(s, "P(stepwise)"), "base"] == pytest.approx(
            match[s]["stepwise"].mean(), abs=5e-4)
        assert table.loc[(s, "TV(direct answers), base vs author"), "author"] == 0.0
        m = np.array([len(p.meta["terms"]) for p in splits[s]])
        assert table.loc[(s, "P(slip-free | stepwise)"), "author"] == \
            round(np.mean(0.95 ** (m - 1)), 3)


# --- the base, sampled ---------------------------------------------------------------------

def test_eval_settings():
    st = bm.eval_settings(bm.Params(samples=8, max_tokens=20, seed=3))
    assert [(s.n, s.temperature, s.top_p, s.max_tokens, s.seed) for s in st.values()] == \
        [(8, 1.0, 1.0, 20, 3), (8, 0.6, 0.95, 20, 3)]


def test_sampled_tallies_match_counts_by_hand(tiny, tmp_path, capsys):
    model, tok = tiny
    splits = {s: ps[:2] for s, ps in bm.problem_splits(TASK, 2).items()}
    settings = {"T=1.0": EvalSettings(n=12, temperature=1.0, top_p=1.0, max_tokens=12, seed=0)}
    sampled = bm.sample_base(model, tok, TASK, splits, AUTHOR, settings, tmp_path)
    assert set(sampled) == {("test", "T=1.0"), ("ood", "T=1.0")}
    assert capsys.readouterr().out.count("problems x 12 samples in") == 2
    kinds = set()
    for (s, _), (recs, table) in sampled.items():
        assert list(table["id"]) == [p.id for p in splits[s]]
        for p, row in zip(splits[s], table.to_dict("records")):
            texts = list(recs.loc[recs["problem"] == p.id, "text"])
            assert row["n"] == len(texts) == 12
            terms = p.meta["terms"]  # the stepwise path begins with the problem's first step
            kinds |= {path(t, terms) for t in texts}
            right = [extract(t) == p.answer for t in texts]
            assert row["c"] == sum(right)
            assert row["direct"] == sum(path(t, terms) == "direct" for t in texts)
            assert row["stepwise"] == sum(path(t, terms) == "stepwise" for t in texts)
            assert row["direct_right"] == sum(r for t, r in zip(texts, right)
                                              if path(t, terms) == "direct")
            assert row["corrected"] == sum("!" in t for t in texts)
            assert row["direct_possible"] == (sum(p.meta["terms"]) < 30)
            answers = [extract(t) for t in texts]
            assert row["distinct"] == len(set(answers))
            freq = np.array(list(pd.Series([a or "NA" for a in answers]).value_counts()))
            assert row["answer_entropy"] == pytest.approx(
                -sum(f / 12 * math.log(f / 12) for f in freq))
    assert len(kinds) > 1                     # the tallies saw more than one kind of path


def test_summary_by_hand():
    # three problems of 200 samples: solved often, rarely (2 of 200), never
    table = pd.DataFrame({"n": [200, 200, 200], "c": [150, 2, 0],
                          "direct": [100, 190, 200], "direct_right": [60, 0, 0],
                          "stepwise": [100, 10, 0], "stepwise_right": [90, 2, 0],
                          "corrected": [4, 2, 0], "direct_possible": [True, False, False],
                          "answer_entropy": [0.5, 1.0, 1.5], "distinct": [2, 3, 4]})
    # per-completion mean token entropies: problem a (0.2, 0.4), problem b (1.0, empty)
    recs = pd.DataFrame({"problem": ["a", "a", "b", "b"], "token_entropy": [0.2, 0.4, 1.0, None]})
    out = bm.summary(recs, table, 200)
    assert out["Pass@1"] == pytest.approx((0.75 + 0.01 + 0) / 3)
    assert out["Pass@200"] == pytest.approx(2 / 3)
    assert out["stepwise share"] == pytest.approx(110 / 600)
    assert out["P(right | direct)"] == pytest.approx(60 / 490)
    assert out["P(right | stepwise)"] == pytest.approx(92 / 110)
    assert out["samples with a correction"] == pytest.approx(6 / 600)
    assert out["problems beyond the direct path"] == pytest.approx(2 / 3)
    assert out["solved rarely (0 < c ≤ 1 %)"] == pytest.approx(1 / 3)
    assert out["never solved"] == pytest.approx(1 / 3)
    assert out["distinct answers"] == 3 and out["answer entropy"] == 1.0
    assert out["token entropy"] == pytest.approx((0.3 + 1.0) / 2)
    table2 = bm.summary_table({("test", "T=1.0"): (recs, table)}, 200)
    assert table2[("test", "T=1.0")]["never solved"] == round(1 / 3, 3)


def test_nucleus_text_counts_the_problems_whose_stepwise_path_is_cut(monkeypatch):
    from rlvr_dynamics.tasks.base import Problem

    asked = []
    monkeypatch.setattr(bm, "first_char_probabilities",
                        lambda m, t, prompts, temperature: asked.append(temperature)
                        or np.array([0.99, 0.97, 0.5]))
    split = {"test": [Problem(f"p{i}", "1+2=", "3", {}) for i in range(3)]}
    paper = bm.eval_settings(bm.Params())[bm.PAPER_SETTING]
    nucleus = bm.nucleus(None, None, split, paper)
    assert asked == [0.6] and list(nucleus) == ["test"]
    text = sentences.nucleus_text(nucleus, paper)
    assert "out of the nucleus on 2 of 3 problems" in text and "lowest 0.500" in text
    # a wider nucleus keeps the stepwise path on every problem
    wide = sentences.nucleus_text(nucleus, EvalSettings(n=1, temperature=0.6, top_p=0.995))
    assert "out of the nucleus on 0 of 3 problems" in wide


def test_author_and_beyond_texts_state_the_authors_numbers():
    text = sentences.author_text(AUTHOR)
    assert "directly 95 % of the time and works stepwise 5 %" in text
    assert "at most 2 carry units" in text and "with probability 0.3" in text
    assert "probability 0.02 per step" in text and "with probability 0.03" in text
    assert "passes on every carry unit" in sentences.author_text(Author(carry_cap=None))
    splits = bm.problem_splits(TASK, 10)
    assert sentences.beyond_text(splits, AUTHOR).startswith(
        "Every sum of 30 or more needs at least 3 carries")           # the cap of 2, plus one
    assert sentences.beyond_text(splits, Author(carry_cap=0)).startswith(
        "Every sum of 10 or more needs at least 1 carry ")
    assert sentences.beyond_text(splits, Author(carry_cap=None)).startswith("No sum")


def test_pretraining_text_states_the_config():
    text = sentences.pretraining_text(bm.Params().config())
    assert "4 layers of width 128 with 4 heads" in text
    assert "2,000 steps, each of 128 corpus lines and 32 worked stepwise solutions" in text
    assert "learning rate of 0.002 reached after 100 warm-up steps" in text


def test_lengths_text_by_hand():
    from rlvr_dynamics.tasks.base import Problem

    # 3+7=10;10+5=15;15+9=24;#24 against #24: 26 characters against 3; 3+4=7;#7 against #7
    split = {"test": [Problem("a", "3+7+5+9=", "24", {"terms": (3, 7, 5, 9)})],
             "ood": [Problem("b", "3+4=", "7", {"terms": (3, 4)})]}
    assert "by a factor of 8.7 on test and 4.0 on ood on average" in sentences.lengths_text(split)
