"""Exact Pass@k from the completion tree: against a closed form, against brute-force
enumeration, against a large sample, and bounds that contain the truth as the tolerance falls."""
import functools
import itertools
import math

import numpy as np
import pytest
import torch

from rlvr_dynamics import exact
from rlvr_dynamics.models import char_tokenizer, tiny_qwen2
from rlvr_dynamics.sampling import SamplingParams, TransformersBackend, nucleus
from rlvr_dynamics.tasks.base import Problem
from rlvr_dynamics.entropy import completion_token_entropy
from rlvr_dynamics.tasks.sums import ALPHABET, GUESS, SumTask, problem_trace

pytestmark = pytest.mark.usefixtures("one_thread")
TOK = char_tokenizer(ALPHABET)


class StartsWithDigit:
    """A task whose answer is likely under a random model: the completion starts with a digit."""

    name = "digit-first"

    def extract(self, text):
        return text[:1] if text[:1].isdigit() else None

    def verify(self, text, answer):
        return text[:1].isdigit()


PROBLEMS = [Problem(f"p{i}", prompt, "0", {}) for i, prompt in
            enumerate(["1+2=", "3+4+5=", "9+9+9+9="])]


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    m = tiny_qwen2(TOK, hidden=16, layers=1, seed=3).double().eval()  # float64: exact checks
    with torch.no_grad():  # sharper logits than the initialisation: a less uniform tree
        m.lm_head.weight.mul_(8.0)
    return m


@pytest.fixture(scope="module")
def truth(model):
    """problem index, temperature, top-p -> the whole tree of ``PROBLEMS[i]`` to five tokens
    (``tol=0``: exact), expanded once for every test that checks against it."""
    @functools.cache
    def trees(temperature: float, top_p: float) -> list[exact.Tree]:
        return exact.expand_all(model, TOK, PROBLEMS, StartsWithDigit(), temperature=temperature,
                                top_p=top_p, max_tokens=5, tol=0)
    return lambda i, temperature=1.0, top_p=1.0: trees(temperature, top_p)[i]


def test_a_uniform_model_matches_its_closed_form():
    """Zero embeddings: every next token is uniform over the V = 18 tokens. A completion starts
    with a digit iff, after any run of the 2 silent special tokens, a digit comes:
    P_L = (d / V) * sum_{j < L} (s / V)^j with d = 10 digits, s = 2 (the stop token ends it)."""
    m = tiny_qwen2(TOK, hidden=16, layers=1)
    with torch.no_grad():
        m.model.embed_tokens.weight.zero_()
    V, d, s = len(TOK), 10, 2
    for L in (1, 2, 3):
        tree = exact.expand(m, TOK, PROBLEMS[0], StartsWithDigit(), max_tokens=L, tol=0)
        closed = d / V * sum((s / V) ** j for j in range(L))
        assert tree.p_lo == pytest.approx(closed, abs=1e-12) and tree.unexpanded == 0
        assert tree.correct + tree.wrong == pytest.approx(1.0, abs=1e-12)


def brute_force(model, prompt_ids, task, gold, L, temperature, top_p):
    """P(correct) by listing every token sequence of length <= L and multiplying its
    conditional probabilities, each from its own forward pass (no tree, no batching)."""
    V, stops, total = len(TOK), {TOK.eos_token_id}, 0.0

    def step(ids):
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([prompt_ids + list(ids)])).logits[0, -1]
        probs = torch.softmax(logits.double() / temperature, -1)
        if top_p < 1:
            p, index = nucleus(probs[None], top_p)
            out = torch.zeros(V, dtype=torch.float64)
            out[index[0]] = p[0] / p[0].sum()
            return out
        return probs

    cache = {}
    for length in range(1, L + 1):
        for seq in itertools.product(range(V), repeat=length):
            if any(t in stops for t in seq[:-1]):
                continue  # a stop token ends the completion
            if length < L and seq[-1] not in stops:
                continue  # not finished yet: counted at a longer length
            prob = 1.0
            for i, t in enumerate(seq):
                if seq[:i] not in cache:
                    cache[seq[:i]] = step(seq[:i])
                prob *= float(cache[seq[:i]][t])
            if prob == 0:
                continue
            body = seq[:-1] if seq[-1] in stops else seq
            total += prob * task.verify(TOK.decode(list(body), skip_special_tokens=True), gold)
    return total


@pytest.mark.parametrize("temperature,top_p", [(1.0, 1.0), (0.6, 0.95)])
def test_the_tree_matches_brute_force_enumeration(model, temperature, top_p):
    prompt = [TOK.bos_token_id, *TOK.convert_tokens_to_ids(list(PROBLEMS[1].prompt))]
    for task in (StartsWithDigit(), SumTask()):
        truth = brute_force(model, prompt, task, "12", 3, temperature, top_p)
        tree = exact.expand(model, TOK, Problem("p", PROBLEMS[1].prompt, "12", {}), task,
                            temperature=temperature, top_p=top_p, max_tokens=3, tol=0,
                            batch_size=7)
        assert tree.p_lo == pytest.approx(truth, abs=1e-10)


def test_certified_bounds_contain_the_truth_as_the_tolerance_falls(model, truth):
    truth = truth(2)
    widths = []
    for tol in (0.3, 0.1, 0.01, 0.001):
        tree = exact.expand(model, TOK, PROBLEMS[2], StartsWithDigit(), max_tokens=5, tol=tol)
        assert tree.p_lo <= truth.p_lo + 1e-12 <= tree.p_hi + 2e-12
        assert tree.p_hi - tree.p_lo <= tol + 1e-12
        lo, hi = tree.pass_at_k([1, 16, 4096])
        exact_k = 1 - (1 - truth.p_lo) ** np.array([1, 16, 4096])
        assert (lo <= exact_k + 1e-12).all() and (exact_k <= hi + 1e-12).all()
        widths.append(tree.p_hi - tree.p_lo)
    assert widths == sorted(widths, reverse=True) and widths[-1] < widths[0]


@pytest.mark.parametrize("temperature,top_p", [(1.0, 1.0), (0.6, 0.95)])
def test_the_sampler_agrees_with_the_tree(model, truth, temperature, top_p):
    """4096 samples per problem from the book's sampler: the share of correct ones is within
    4.5 binomial standard deviations of the exact p, for every problem (both settings)."""
    n, task = 4096, StartsWithDigit()
    backend = TransformersBackend(model, TOK, add_bos=True, batch_size=1024, progress=False)
    samples = backend.generate([p.prompt for p in PROBLEMS],
                               SamplingParams(n=n, temperature=temperature, top_p=top_p,
                                              max_tokens=5, seed=0))
    for i, (problem, completions) in enumerate(zip(PROBLEMS, samples)):
        p = truth(i, temperature, top_p).p_lo
        share = np.mean([task.verify(c.text, problem.answer) for c in completions])
        assert abs(share - p) <= 4.5 * math.sqrt(max(p * (1 - p), 1e-9) / n), (problem.id, p)


def test_answer_entropy_of_the_full_tree(model):
    tree = exact.expand(model, TOK, PROBLEMS[0], StartsWithDigit(), max_tokens=3, tol=0)
    q = np.array(list(tree.answers.values()))
    assert q.sum() == pytest.approx(1.0) and tree.answer_entropy() == pytest.approx(
        -(q * np.log(q)).sum())


def test_stratified_sampling_below_the_frontier_is_unbiased_and_tighter(model, truth):
    """The tree cut at a loose tolerance, the rest sampled: the estimate lies within 4.5
    standard errors of the exact p, and its standard error is the frontier's mass F times that
    of plain sampling (F < 1: tighter at the same n)."""
    task, n = StartsWithDigit(), 4096
    for i, problem in enumerate(PROBLEMS):
        p = truth(i).p_lo
        est = exact.stratified(model, TOK, problem, task, n=n, seed=1, max_tokens=5, tol=0.3,
                               max_nodes=3)
        F = est.tree.unexpanded
        assert 0 < F < 1 and est.samples >= n
        assert abs(est.p - p) <= 4.5 * max(est.se, 1e-6), (problem.id, est.p, p)
        assert est.se <= F * 0.5 / math.sqrt(n) + 1e-12


class StartsWith:
    """Correct iff the completion starts with ``char``."""

    name = "starts-with"

    def __init__(self, char):
        self.char = char

    def extract(self, text):
        return text[:1] or None

    def verify(self, text, answer):
        return text[:1] == self.char


def test_a_rare_first_token_is_measured_by_its_own_stratum(model):
    """Only the root expanded, completions of two tokens: the answer is right iff the text
    starts with the rarest first token that outweighs tol (or a silent token and then it).
    That token's stratum gets its own n samples, all right, so on every seed the estimate holds
    at least its mass and lies within 4.5 standard errors of the full tree's p; n samples drawn
    in proportion to the whole frontier would give the token about mass * n < 1 of them and
    miss it on most seeds."""
    root = exact.expand(model, TOK, PROBLEMS[0], StartsWithDigit(), max_tokens=2, tol=0,
                        max_nodes=1)
    masses = {t: m for t, m in root.frontier.strata().items()
              if m > 1e-3 and TOK.decode([t], skip_special_tokens=True)}
    rare = min(masses, key=masses.get)
    assert masses[rare] < 0.05
    task, n = StartsWith(TOK.decode([rare], skip_special_tokens=True)), 16
    truth = exact.expand(model, TOK, PROBLEMS[0], task, max_tokens=2, tol=0).p_lo
    for seed in range(5):
        est = exact.stratified(model, TOK, PROBLEMS[0], task, n=n, seed=seed, max_tokens=2,
                               tol=1e-3, max_nodes=1)
        assert est.samples == sum(m for _, _, m in exact._strata(root.frontier, 1e-3, n))
        assert abs(est.p - truth) <= 4.5 * est.se
        assert est.p >= masses[rare] - 1e-12  # its stratum: every sample right


def test_a_uniform_model_has_token_entropy_log_v_and_its_traces_add_up():
    """Zero embeddings: every position's next-token distribution is uniform over V tokens, so
    every completion's mean token entropy is log V; the trace masses are probabilities of
    completion kinds that partition the finished mass."""
    m = tiny_qwen2(TOK, hidden=16, layers=1)
    with torch.no_grad():
        m.model.embed_tokens.weight.zero_()
    task = SumTask()
    tree = exact.expand(m, TOK, PROBLEMS[0], task, max_tokens=3, tol=0, trace=problem_trace)
    assert tree.entropy / tree.finished == pytest.approx(math.log(len(TOK)), abs=1e-12)
    paths = ("direct_right", "direct_wrong", "stepwise_right", "stepwise_wrong", "guess_right",
             "guess_wrong")
    finished = sum((2 / len(TOK)) ** j for j in range(3))  # a stop token within 3
    # one first character each: '#' the direct path, GUESS the guess; no step fits in 3 tokens
    assert tree.traces.get("guess_wrong", 0) + tree.traces.get("guess_right", 0) == \
        pytest.approx(finished / len(TOK))
    assert tree.traces.get("stepwise_right", 0) + tree.traces.get("stepwise_wrong", 0) == 0
    assert sum(tree.traces.get(k, 0) for k in paths) <= 1 + 1e-12
    assert GUESS in ALPHABET


def test_token_entropy_and_traces_match_brute_force(model):
    """The tree's expected token entropy (each completion's mean over its positions, Appendix
    C.5) and its trace masses against every completion of length <= 3 listed one by one, its
    probability from the sampler's distribution and its entropies from ``entropy``'s
    teacher-forced pass."""
    problem = Problem("p", PROBLEMS[1].prompt, "12", {})
    prompt = [TOK.bos_token_id, *TOK.convert_tokens_to_ids(list(problem.prompt))]
    V, stop, L = len(TOK), TOK.eos_token_id, 3
    seqs = [s for n in range(1, L + 1) for s in itertools.product(range(V), repeat=n)
            if stop not in s[:-1] and (n == L or s[-1] == stop)]
    with torch.no_grad():
        probs = {}
        for s in {s[:i] for s in seqs for i in range(len(s))}:
            logits = model(input_ids=torch.tensor([prompt + list(s)])).logits[0, -1]
            probs[s] = torch.softmax(logits.double(), -1)
    mass = np.array([math.prod(float(probs[s[:i]][t]) for i, t in enumerate(s)) for s in seqs])
    h = completion_token_entropy(model, [prompt] * len(seqs), [list(s) for s in seqs])
    texts = [TOK.decode([t for t in s if t != stop], skip_special_tokens=True) for s in seqs]
    tree = exact.expand(model, TOK, problem, SumTask(), max_tokens=L, tol=0,
                        trace=problem_trace, batch_size=5)
    assert mass.sum() == pytest.approx(1.0) and tree.finished == pytest.approx(1.0)
    assert tree.entropy == pytest.approx(float(sum(m * e.mean() for m, e in zip(mass, h))),
                                         rel=1e-5)  # float32 teacher forcing against float64
    for key in ("stepwise_wrong", "direct_wrong"):
        assert tree.traces[key] == pytest.approx(
            sum(m * problem_trace(problem, t)[key] for m, t in zip(mass, texts)), abs=1e-12)
        # the token entropy within the trace: each completion's mean, weighted by its mass
        assert tree.traces[key + exact.ENTROPY_SUFFIX] == pytest.approx(
            sum(m * problem_trace(problem, t)[key] * e.mean()
                for m, t, e in zip(mass, texts, h)), rel=1e-5)


def test_a_node_budget_leaves_certified_bounds_and_the_heaviest_completions_listed(model):
    full = exact.expand(model, TOK, PROBLEMS[2], StartsWithDigit(), max_tokens=5, tol=0,
                        keep=4)
    cut = exact.expand(model, TOK, PROBLEMS[2], StartsWithDigit(), max_tokens=5, tol=0,
                       max_nodes=40, batch_size=8)
    assert cut.nodes <= 40 + 8 and cut.unexpanded > 0
    assert cut.p_lo <= full.p_lo + 1e-12 <= cut.p_hi + 2e-12
    assert cut.finished + cut.unexpanded == pytest.approx(1.0, abs=1e-12)
    masses = [leaf.mass for leaf in full.top]
    assert len(masses) == 4 and masses == sorted(masses, reverse=True)


def test_stratified_entropy_and_answers_are_close_to_the_full_tree(model):
    """Sampled below a loose frontier: the answer masses and the token entropy within a few
    standard errors of the full tree's (4096 samples)."""
    task = SumTask()
    truth = exact.expand(model, TOK, PROBLEMS[1], task, max_tokens=4, tol=0,
                         trace=problem_trace)
    est = exact.stratified(model, TOK, PROBLEMS[1], task, n=4096, seed=2, max_tokens=4,
                           tol=0.2, max_nodes=3, trace=problem_trace)
    assert est.samples >= 4096 and sum(est.answers.values()) == pytest.approx(1.0)
    assert est.token_entropy == pytest.approx(truth.entropy, abs=0.05)
    weighted = "direct_wrong" + exact.ENTROPY_SUFFIX
    assert est.traces[weighted] == pytest.approx(truth.traces[weighted], abs=0.05)
    assert est.answer_entropy() == pytest.approx(truth.answer_entropy(), abs=0.05)


def test_problems_expanded_together_equal_each_expanded_alone(model):
    """Batching the trees of several problems (rows of different prompts in one model call,
    a small batch so that budgets and thresholds interact) changes no tree."""
    task = SumTask()
    problems = [Problem(p.id, p.prompt, "12", {}) for p in PROBLEMS]
    together = exact.expand_all(model, TOK, problems, task, max_tokens=4, tol=1e-3,
                                batch_size=16, max_nodes=60)
    for problem, tree in zip(problems, together):
        alone = exact.expand(model, TOK, problem, task, max_tokens=4, tol=1e-3, batch_size=16,
                             max_nodes=60)
        assert tree.nodes <= 60 + 16
        assert tree.p_lo <= alone.p_hi + 1e-12 and alone.p_lo <= tree.p_hi + 1e-12
    closed = exact.expand_all(model, TOK, problems, task, max_tokens=3, tol=0, batch_size=16)
    for problem, tree in zip(problems, closed):
        alone = exact.expand(model, TOK, problem, task, max_tokens=3, tol=0)
        assert tree.p_lo == pytest.approx(alone.p_lo, abs=1e-12)
        assert tree.entropy == pytest.approx(alone.entropy, abs=1e-9)
        assert tree.answers.keys() == alone.answers.keys()
