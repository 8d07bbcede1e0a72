"""Pass@k from the model's own probabilities: the completion tree, expanded with a KV cache.

For a model whose completions are short (the book's character-level sums models), each
problem's probability p of a correct answer can be computed instead of estimated. Every
completion is a path in a tree whose edges carry the sampler's next-token probabilities
(softmax(logits / T), cut to the top-p nucleus and renormalised exactly as
``sampling.next_tokens`` draws; the nucleus is deterministic given the prefix). Expanding the
tree until the mass not yet expanded is below ``tol`` gives certified bounds

    p_lo = mass of finished completions graded correct  <=  p  <=  p_lo + unexpanded = p_hi,

hence Pass@k = 1 - (1 - p)^k within [1 - (1 - p_lo)^k, 1 - (1 - p_hi)^k] for every k (not an
estimate), the distribution of extracted answers, the expected token entropy (Appendix C.5:
each completion's mean over its positions) and the mass of every ``trace`` statistic (the
task's per-completion indicators, e.g. the path taken) over the finished mass. A completion
ends at a stop token or at ``max_tokens`` (cut, graded as the sampler's are); with ``tol = 0``
the whole tree is expanded.

The expansion is level-synchronous, like the sampler's decoding loop: every prefix of mass at
least ``eps`` is grown one token per model call, its children's KV caches copied from its own
(``cache.batch_select_indices``), so a node costs one token's forward pass, not its prefix's.
Children below ``eps`` wait on the frontier; when no prefix of mass ``eps`` is left and the
frontier still holds more than ``tol``, ``eps`` falls eightfold and the frontier's heaviest
prefixes are grown again (prefilled in one batch). ``eps`` starts at 1, so the expansion is
nearly best-first: under a node budget the heaviest completions finish first (on a trained
model's long stepwise completions, 50 prefixes leave a median 0.12 of the mass unexpanded where
starting at ``tol`` left 1.00; lab notebook, section 21). At any moment the expanded set is a
subtree, so the bounds hold whenever the expansion stops (``tol`` reached or ``max_nodes``
prefixes expanded).

Where the tree is too large to close (a long stepwise completion branches at every step),
``stratified`` keeps the expanded part exact and samples only below the frontier, stratified
by the completion's first token (the path choice: the sums task's paths part at their first
character: ``#`` direct, a digit stepwise). Each first token whose frontier mass F_s exceeds
``tol`` is a stratum with n_s = ``n`` samples; the lighter ones together are one more, with
samples in proportion to its mass (at least one). Each sample starts from a frontier prefix
drawn in proportion to its mass within the stratum. With f_s the probability of a correct
completion given such a prefix, ``p = p_lo + sum_s F_s f_s``; ``p_lo + sum_s F_s c_s / n_s``
(c_s correct samples) is unbiased with standard error ``sqrt(sum_s F_s^2 f_s (1 - f_s) / n_s)``,
reported with f_s shrunk to (c_s + 1/2) / (n_s + 1), so that a few samples that all agree do not
claim an error of zero. A stratum's own samples make its error relative to its own mass: a
rare path of mass 0.002 is measured by its n samples, not by the 0.002 n it would get in
proportion to the whole frontier's mass (the scenario's low priors).
The answer distribution, token entropy and traces are combined the same way (each sample of a
stratum carrying mass F_s / n_s). Beside each trace statistic ``key`` the traces hold
``key + ENTROPY_SUFFIX``, the expectation of the statistic times the completion's mean token
entropy: over the trace's own mass it is the token entropy of the completions it counts (a
path's, ``comparison.metrics.entropy_by_path``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import torch
from transformers import DynamicCache

from rlvr_dynamics.entropy import token_entropy
from rlvr_dynamics.passk import from_probability
from rlvr_dynamics.sampling import (SamplingParams, TransformersBackend, encode, nucleus,
                                    stop_token_ids)
from rlvr_dynamics.tasks.base import Problem, Task

Trace = Callable[[Problem, str], dict[str, float]]
"""(problem, completion text) -> per-completion indicators (``tasks.sums.problem_trace``)."""

ENTROPY_SUFFIX = "_token_entropy"


def _add_traces(traces: dict[str, float], trace: dict[str, float], mass: float, h: float
                ) -> None:
    """Add one completion of probability ``mass`` and mean token entropy ``h``: each trace
    statistic and the statistic times ``h`` (``ENTROPY_SUFFIX``)."""
    for key, v in trace.items():
        traces[key] = traces.get(key, 0.0) + mass * v
        weighted = key + ENTROPY_SUFFIX
        traces[weighted] = traces.get(weighted, 0.0) + mass * v * h


@dataclass
class Leaf:
    """A finished completion: its token ids (the stop token left out), probability, sum of
    token entropies over its positions, number of positions, text and grade."""

    ids: tuple[int, ...]
    mass: float
    entropy_sum: float
    positions: int
    text: str
    correct: bool


class Frontier:
    """The unexpanded prefixes, in blocks: the waiting children of one growth step as an array
    of masses (parent row x candidate token, zero where a child is not waiting) beside the
    candidates' token ids and the parents' ids and entropy sums. Arrays, not one Python object
    per prefix: at temperature 1 every expanded prefix leaves all of its vocabulary waiting."""

    def __init__(self) -> None:
        self.blocks: list[tuple[list[tuple[int, ...]], np.ndarray, np.ndarray, np.ndarray]] = []

    def add(self, ids: list[tuple[int, ...]], entropy_sum: np.ndarray, mass: np.ndarray,
            tokens: np.ndarray) -> None:
        if (mass > 0).any():
            self.blocks.append((ids, entropy_sum, mass, tokens))

    def mass(self) -> float:
        return math.fsum(float(m.sum()) for _, _, m, _ in self.blocks)

    def heaviest(self) -> float:
        return max((float(m.max()) for _, _, m, _ in self.blocks), default=0.0)

    def take(self, eps: float, limit: int) -> list[tuple[float, tuple[int, ...], float]]:
        """Remove and return the (at most ``limit``) heaviest prefixes of mass >= eps, > 0."""
        found = [(b, *np.nonzero((m >= eps) & (m > 0))) for b, (_, _, m, _) in
                 enumerate(self.blocks)]
        if not any(len(r) for _, r, _ in found):
            return []
        block = np.concatenate([np.full(len(r), b) for b, r, _ in found])
        row = np.concatenate([r for _, r, _ in found])
        col = np.concatenate([c for _, _, c in found])
        mass = np.concatenate([self.blocks[b][2][r, c] for b, r, c in found])
        order = np.argsort(-mass, kind="stable")[:limit]
        out = []
        for i in order:
            ids, s, m, tokens = self.blocks[block[i]]
            out.append((float(mass[i]), _child(ids[row[i]], int(tokens[row[i], col[i]])),
                        float(s[row[i]])))
            m[row[i], col[i]] = 0.0
        self.blocks = [b for b in self.blocks if (b[2] > 0).any()]
        return out

    def strata(self) -> dict[int, float]:
        """The waiting mass per first completion token (-1: the root, not expanded yet)."""
        out: dict[int, float] = {}
        for ids, _, m, tokens in self.blocks:
            keys, where = np.unique(_firsts(ids, tokens)[m > 0], return_inverse=True)
            for key, w in zip(keys, np.bincount(where, weights=m[m > 0])):
                out[int(key)] = out.get(int(key), 0.0) + float(w)
        return out

    def draw(self, n: int, rng: np.random.Generator, firsts: Sequence[int]
             ) -> list[tuple[tuple[int, ...], float]]:
        """``n`` prefixes whose first token is in ``firsts``, drawn in proportion to their
        masses (with replacement), each with the sum of the token entropies at its
        positions."""
        masses = np.concatenate([(m * np.isin(_firsts(ids, tokens), firsts)).ravel()
                                 for ids, _, m, tokens in self.blocks])
        counts = rng.multinomial(n, masses / masses.sum())
        out, offset = [], 0
        for ids, s, m, tokens in self.blocks:
            for flat in np.nonzero(counts[offset:offset + m.size])[0]:
                r, c = divmod(int(flat), m.shape[1])
                out += [(_child(ids[r], int(tokens[r, c])), float(s[r]))] * int(
                    counts[offset + flat])
            offset += m.size
        return out


def _firsts(ids: list[tuple[int, ...]], tokens: np.ndarray) -> np.ndarray:
    """The first completion token of each waiting child (parent row x candidate)."""
    head = np.array([i[0] if i else -1 for i in ids])[:, None]
    return np.where(head >= 0, head, tokens)


def _strata(frontier: Frontier, tol: float, n: int) -> list[tuple[float, list[int], int]]:
    """(mass, first tokens, samples) of each stratum: every first token whose frontier mass
    exceeds ``tol`` alone with ``n`` samples, the lighter ones together with samples in
    proportion to their mass (at least one, so the estimate stays unbiased; ``n`` of them cost
    more time than they saved error: lab notebook, section 21)."""
    masses = frontier.strata()
    out = [(m, [f], n) for f, m in masses.items() if m > tol]
    light = [f for f, m in masses.items() if m <= tol]
    if light:
        mass = math.fsum(masses[f] for f in light)
        out.append((mass, light, max(1, round(n * mass / math.fsum(masses.values())))))
    return out


def _child(ids: tuple[int, ...], token: int) -> tuple[int, ...]:
    return ids if token < 0 else ids + (token,)  # token -1: the root, no token yet


@dataclass
class Tree:
    """One problem's expanded completion tree: the finished mass graded correct and wrong, the
    mass not expanded yet (on ``frontier``), and over the finished mass: the mass per extracted
    answer (None: no answer), the mass-weighted sum of completions' mean token entropies, the
    mass of each trace statistic, the ``keep`` most probable finished completions; and how many
    prefixes were expanded."""

    correct: float = 0.0
    wrong: float = 0.0
    unexpanded: float = 1.0
    answers: dict[str | None, float] = field(default_factory=dict)
    entropy: float = 0.0
    traces: dict[str, float] = field(default_factory=dict)
    top: list[Leaf] = field(default_factory=list, repr=False)
    nodes: int = 0
    frontier: Frontier = field(default_factory=Frontier, repr=False)

    @property
    def p_lo(self) -> float:
        return self.correct

    @property
    def p_hi(self) -> float:
        return min(1.0, self.correct + self.unexpanded)

    @property
    def finished(self) -> float:
        return self.correct + self.wrong

    def pass_at_k(self, ks: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) bounds of Pass@k = 1 - (1 - p)^k at each k."""
        k = np.asarray(ks, dtype=float)
        return from_probability(self.p_lo, k), from_probability(self.p_hi, k)

    def answer_entropy(self) -> float:
        """Entropy (nats) of the extracted answers over the finished mass, renormalised; the
        full distribution's when ``unexpanded`` is 0 (Appendix C.5, NA counting as one)."""
        return distribution_entropy(self.answers)

    def add(self, leaf: Leaf, answer: str | None, trace: dict[str, float], keep: int) -> None:
        """Count one finished completion."""
        if leaf.correct:
            self.correct += leaf.mass
        else:
            self.wrong += leaf.mass
        self.answers[answer] = self.answers.get(answer, 0.0) + leaf.mass
        h = leaf.entropy_sum / max(leaf.positions, 1)
        self.entropy += leaf.mass * h
        _add_traces(self.traces, trace, leaf.mass, h)
        if keep:
            self.top.append(leaf)
            if len(self.top) > 2 * keep:
                self.top = sorted(self.top, key=lambda x: -x.mass)[:keep]


def distribution_entropy(masses: dict) -> float:
    """-sum q log q of the masses renormalised (0 for an empty or point distribution)."""
    m = np.array([v for v in masses.values() if v > 0])
    if not len(m):
        return 0.0
    q = m / m.sum()
    return float(-(q * np.log(q)).sum()) + 0.0


def _next_distribution(logits: torch.Tensor, temperature: float, top_p: float
                       ) -> tuple[torch.Tensor, torch.Tensor]:
    """(probabilities, token ids) of the next token as the sampler draws it, renormalised over
    the nucleus; zeros mark tokens outside it. Temperature 0: the argmax with probability 1.
    In float64, so that the tree's masses carry no rounding of their own."""
    if temperature == 0:
        return torch.ones(len(logits), 1, dtype=torch.float64), logits.argmax(-1, keepdim=True)
    probs = torch.softmax(logits.double() / temperature, dim=-1)
    if top_p >= 1:
        return probs, torch.arange(probs.shape[-1]).expand(len(probs), -1)
    p, index = nucleus(probs, top_p)
    return p / p.sum(-1, keepdim=True), index


@torch.no_grad()
def expand(model, tokenizer, problem: Problem, task: Task, **kw) -> Tree:
    """One problem's tree (``expand_all``)."""
    return expand_all(model, tokenizer, [problem], task, **kw)[0]


@torch.no_grad()
def expand_all(model, tokenizer, problems: Sequence[Problem], task: Task, *,
               temperature: float = 1.0, top_p: float = 1.0, max_tokens: int = 72,
               tol: float = 1e-4, max_nodes: int = 200_000, batch_size: int = 1024,
               add_bos: bool = True, entropy_temperature: float = 1.0,
               trace: Trace | None = None, keep: int = 0) -> list[Tree]:
    """Expand each problem's completion tree until its unexpanded mass is at most ``tol`` (or
    ``max_nodes`` of its prefixes were expanded), all problems' prefixes grown together, at
    most ``batch_size`` per model call; see the module docstring. ``keep``: how many of the
    most probable finished completions each tree lists (``Tree.top``)."""
    if not 0 <= tol <= 1:
        raise ValueError(f"tol must lie in [0, 1], got {tol}")
    if batch_size < 1 or max_nodes < 1:
        raise ValueError(f"batch_size and max_nodes must be >= 1, got {batch_size}, {max_nodes}")
    prompts = [encode(tokenizer, p.prompt, add_bos) for p in problems]
    stops = sorted(set(stop_token_ids(tokenizer, model.generation_config)))
    trees = [Tree() for _ in problems]
    for tree in trees:
        tree.frontier.add([()], np.zeros(1), np.ones((1, 1)), np.full((1, 1), -1))

    def finish(t: int, ids: tuple[int, ...], mass: float, entropy_sum: float) -> None:
        text = tokenizer.decode(list(ids), skip_special_tokens=True)
        positions = len(ids) + (len(ids) < max_tokens)  # the stop token's position counts
        problem = problems[t]
        leaf = Leaf(ids, mass, entropy_sum, positions, text,
                    bool(task.verify(text, problem.answer)))
        trees[t].add(leaf, task.extract(text), trace(problem, text) if trace else {},
                     keep)

    eps = [1.0] * len(trees)  # the heaviest prefixes first: eightfold steps down to tol
    active = set(range(len(trees)))
    while active:
        rows: list[tuple[int, float, tuple[int, ...], float]] = []
        share = max(1, batch_size // len(active))
        for t in sorted(active):
            tree = trees[t]
            while True:
                took = tree.frontier.take(eps[t], min(share, max_nodes - tree.nodes))
                if took or eps[t] == 0 or tree.frontier.mass() <= tol:
                    break
                eps[t] = min(eps[t] / 8, tree.frontier.heaviest()) if eps[t] > 1e-15 else 0.0
            if not took:
                active.discard(t)
            rows += [(t, *row) for row in took]
        if rows:
            _grow(model, tokenizer.pad_token_id, prompts, rows, trees, finish, stops, eps,
                  temperature=temperature, top_p=top_p, max_tokens=max_tokens,
                  max_nodes=max_nodes, batch_size=batch_size,
                  entropy_temperature=entropy_temperature)
        active = {t for t in active if trees[t].nodes < max_nodes}
    for tree in trees:
        tree.top = sorted(tree.top, key=lambda x: -x.mass)[:keep]
        tree.unexpanded = tree.frontier.mass()  # summed afresh: free of drift
    return trees


def _grow(model, pad: int, prompts: list[list[int]],
          rows: list[tuple[int, float, tuple[int, ...], float]], trees: list[Tree], finish,
          stops: list[int], eps: list[float], *, temperature: float, top_p: float,
          max_tokens: int, max_nodes: int, batch_size: int, entropy_temperature: float) -> None:
    """Grow ``rows`` (frontier prefixes: tree, mass, ids, entropy sum) one token per model
    call with a KV cache: each child finishes (a stop token, or ``max_tokens`` reached), grows
    on (mass >= its tree's eps, within its tree's ``max_nodes`` and ``batch_size`` rows in all)
    or waits on its tree's frontier."""
    device = model.device
    seqs = [prompts[t] + list(ids) for t, _, ids, _ in rows]
    width = max(map(len, seqs))
    x = torch.tensor([[pad] * (width - len(q)) + q for q in seqs], device=device)
    mask = torch.tensor([[0] * (width - len(q)) + [1] * len(q) for q in seqs], device=device)
    position = (mask.cumsum(-1) - 1).clamp(min=0)
    cache = DynamicCache(config=model.config)
    logits = model(input_ids=x, attention_mask=mask, position_ids=position, cache=cache,
                   use_cache=True).logits[:, -1]
    position = position[:, -1]
    tree_of = np.array([t for t, _, _, _ in rows])
    mass = np.array([m for _, m, _, _ in rows])
    ids = [i for _, _, i, _ in rows]
    s = np.array([e for _, _, _, e in rows])
    threshold = np.array(eps)
    while True:
        probs, index = _next_distribution(logits.cpu(), temperature, top_p)
        probs, index = probs.numpy(), index.numpy()
        s = s + token_entropy(logits.cpu(), temperature=entropy_temperature,
                              dtype=torch.float64).numpy()
        for t, count in zip(*np.unique(tree_of, return_counts=True)):
            trees[t].nodes += int(count)
        child = mass[:, None] * probs
        stop = np.isin(index, stops)
        for r in np.nonzero((child * stop).sum(1) > 0)[0]:
            finish(tree_of[r], ids[r], float((child[r] * stop[r]).sum()), float(s[r]))
        last = np.array([len(i) + 1 >= max_tokens for i in ids])
        for r, c in zip(*np.nonzero(last[:, None] & ~stop & (child > 0))):
            finish(tree_of[r], ids[r] + (int(index[r, c]),), float(child[r, c]), float(s[r]))
        open_ = ~last[:, None] & ~stop & (child > 0)
        r, c = np.nonzero(open_ & (child >= threshold[tree_of][:, None]))
        r, c = _within_budget(r, c, child, tree_of, trees, max_nodes, batch_size)
        waiting = np.where(open_, child, 0.0)
        waiting[r, c] = 0.0
        for t in np.unique(tree_of):
            mine = tree_of == t
            trees[t].frontier.add([i for i, m in zip(ids, mine) if m], s[mine], waiting[mine],
                                  index[mine])
        if not len(r):
            return
        parents = torch.as_tensor(r, device=device)
        cache.batch_select_indices(parents)
        mask = torch.cat([mask[parents], torch.ones(len(r), 1, dtype=mask.dtype,
                                                    device=device)], dim=1)
        position = position[parents] + 1
        tokens = torch.as_tensor(index[r, c], device=device)[:, None]
        mass, s, tree_of = child[r, c], s[r], tree_of[r]
        ids = [ids[i] + (int(t),) for i, t in zip(r, index[r, c])]
        logits = model(input_ids=tokens, attention_mask=mask, position_ids=position[:, None],
                       cache=cache, use_cache=True).logits[:, -1]


def _within_budget(r: np.ndarray, c: np.ndarray, child: np.ndarray, tree_of: np.ndarray,
                   trees: list[Tree], max_nodes: int, batch_size: int
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The heaviest children (rows ``r``, columns ``c`` of ``child``) that fit: per tree at
    most what is left of its ``max_nodes``, at most ``batch_size`` in all."""
    if not len(r):
        return r, c
    t = tree_of[r]
    order = np.lexsort((-child[r, c], t))  # by tree, heaviest first
    r, c, t = r[order], c[order], t[order]
    first = np.searchsorted(t, t, side="left")
    rank = np.arange(len(t)) - first
    room = np.array([max_nodes - trees[i].nodes for i in t])
    keep = rank < room
    r, c = r[keep], c[keep]
    order = np.argsort(-child[r, c], kind="stable")[:batch_size]
    return r[order], c[order]


@dataclass(frozen=True)
class Estimate:
    """``stratified``'s p: the exact part plus the sampled frontier's contribution, its
    standard error, and the samples drawn (``n`` per stratum, fewer for the lightest); the
    answer masses, expected token entropy and trace masses combined the same way (over the
    finished and sampled mass, renormalised)."""

    tree: Tree
    p: float
    se: float
    samples: int
    answers: dict[str | None, float]
    token_entropy: float
    traces: dict[str, float]

    def answer_entropy(self) -> float:
        return distribution_entropy(self.answers)


@torch.no_grad()
def stratified(model, tokenizer, problem: Problem, task: Task, **kw) -> Estimate:
    """One problem's estimate (``stratified_all``)."""
    return stratified_all(model, tokenizer, [problem], task, **kw)[0]


@torch.no_grad()
def stratified_all(model, tokenizer, problems: Sequence[Problem], task: Task, *, n: int,
                   seed: int = 0, temperature: float = 1.0, top_p: float = 1.0,
                   max_tokens: int = 72, tol: float = 1e-2, max_nodes: int = 2_000,
                   batch_size: int = 1024, add_bos: bool = True,
                   entropy_temperature: float = 1.0, trace: Trace | None = None,
                   keep: int = 0) -> list[Estimate]:
    """Each problem's tree expanded to ``tol`` (or ``max_nodes``, ``expand_all``), then,
    where its frontier holds more than ``tol``, ``n`` completions sampled below each of its
    frontier's strata (the module docstring gives the strata, the estimator and its standard
    error); all problems' samples drawn in one call of the sampler."""
    trees = expand_all(model, tokenizer, problems, task, temperature=temperature, top_p=top_p,
                       max_tokens=max_tokens, tol=tol, max_nodes=max_nodes,
                       batch_size=batch_size, add_bos=add_bos,
                       entropy_temperature=entropy_temperature, trace=trace, keep=keep)
    rng = np.random.default_rng(seed)
    strata = {j: _strata(t.frontier, tol, n) for j, t in enumerate(trees)
              if n > 0 and t.unexpanded > tol}
    prompts = [encode(tokenizer, p.prompt, add_bos) for p in problems]
    rows = [(j, i, ids, s) for j, ss in strata.items() for i, (_, firsts, m) in enumerate(ss)
            for ids, s in trees[j].frontier.draw(m, rng, firsts)]
    # each sample below the frontier, per tree and stratum: (its completion's ids, its mean
    # token entropy)
    completions = {j: [[] for _ in ss] for j, ss in strata.items()}
    stops = set(stop_token_ids(tokenizer, model.generation_config))
    if rows:
        backend = TransformersBackend(model, tokenizer, batch_size=batch_size, progress=False)
        params = SamplingParams(n=1, temperature=temperature, top_p=top_p,
                                max_tokens=max_tokens - min(len(ids) for _, _, ids, _ in rows),
                                seed=seed)
        outs = backend.generate_ids([prompts[j] + list(ids) for j, _, ids, _ in rows], params,
                                    entropy_temperature)
        for (j, i, ids, s), out in zip(rows, outs):
            rest = list(out[0].token_ids)[:max_tokens - len(ids)]  # this prefix's own budget
            end = next((k for k, t in enumerate(rest) if t in stops), None)
            rest = rest if end is None else rest[:end + 1]
            h = s + math.fsum(out[0].entropies[:len(rest)])
            completions[j][i].append((list(ids) + rest, h / max(len(ids) + len(rest), 1)))
    out = []
    for j, (problem, tree) in enumerate(zip(problems, trees)):
        F = tree.unexpanded
        answers, traces, entropy = dict(tree.answers), dict(tree.traces), tree.entropy
        if j not in completions:  # closed (to tol): the midpoint, within F / 2 of the truth
            finished = max(tree.finished, 1e-300)
            out.append(Estimate(tree, tree.p_lo + F / 2, 0.0, 0, answers, entropy / finished,
                                {k: v / finished for k, v in traces.items()}))
            continue
        p, variance = tree.p_lo, 0.0
        for (F_s, _, m), drawn in zip(strata[j], completions[j]):
            w, correct = F_s / m, 0
            for ids, h in drawn:
                text = tokenizer.decode([t for t in ids if t not in stops],
                                        skip_special_tokens=True)
                correct += bool(task.verify(text, problem.answer))
                answer = task.extract(text)
                answers[answer] = answers.get(answer, 0.0) + w
                entropy += w * h
                _add_traces(traces, trace(problem, text) if trace else {}, w, h)
            f_se = (correct + 0.5) / (m + 1)  # never 0 from a few samples
            p += F_s * correct / m
            variance += F_s ** 2 * f_se * (1 - f_se) / m
        total = tree.finished + F
        out.append(Estimate(tree, p, math.sqrt(variance), sum(m for _, _, m in strata[j]),
                            answers,
                            entropy / total, {k: v / total for k, v in traces.items()}))
    return out
