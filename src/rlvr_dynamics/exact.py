"""Pass@k from the model's own probabilities: the completion tree, expanded best-first.

For a model whose completions are short (the book's character-level sums models), each
problem's probability p of a correct answer can be computed instead of estimated. Every
completion is a path in a tree whose edges carry the sampler's next-token probabilities
(softmax(logits / T), cut to the top-p nucleus and renormalised exactly as
``sampling.next_tokens`` draws; the nucleus is deterministic given the prefix). Expanding the
tree best-first (the most probable unexpanded prefix first, in batches) until the mass not yet
expanded is below ``tol`` gives certified bounds

    p_lo = mass of finished completions graded correct  <=  p  <=  p_lo + unexpanded = p_hi,

hence Pass@k = 1 - (1 - p)^k within [1 - (1 - p_lo)^k, 1 - (1 - p_hi)^k] for every k (not an
estimate), and the distribution of extracted answers over the finished mass. A completion ends
at a stop token or at ``max_tokens`` (cut, graded as the sampler's are); with ``tol = 0`` the
whole tree is expanded.

Where the tree is too large to expand to a small ``tol`` (a long stepwise completion branches
at every step), ``stratified`` keeps the expanded part exact and samples only below the
frontier: with F the frontier's mass and f the probability of a correct completion given a
frontier prefix drawn in proportion to its mass, ``p = p_lo + F f`` and the estimate
``p_lo + F * (correct samples) / n`` is unbiased with standard error ``F sqrt(f (1 - f) / n)``,
F times that of plain sampling with the same n.
"""
from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import torch

from rlvr_dynamics.sampling import (SamplingParams, TransformersBackend, encode, nucleus,
                                    stop_token_ids)
from rlvr_dynamics.tasks.base import Problem, Task


@dataclass
class Tree:
    """One problem's expanded completion tree: the mass of finished completions graded
    correct and wrong, the mass not expanded yet, the finished mass per extracted answer
    (None: no answer), and how many prefixes were expanded."""

    correct: float = 0.0
    wrong: float = 0.0
    unexpanded: float = 1.0
    answers: dict[str | None, float] = field(default_factory=dict)
    nodes: int = 0
    frontier: list[tuple[float, tuple[int, ...]]] = field(default_factory=list, repr=False)
    """The unexpanded prefixes and their masses (what ``stratified`` samples below)."""

    @property
    def p_lo(self) -> float:
        return self.correct

    @property
    def p_hi(self) -> float:
        return min(1.0, self.correct + self.unexpanded)

    def pass_at_k(self, ks: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) bounds of Pass@k = 1 - (1 - p)^k at each k."""
        k = np.asarray(ks, dtype=float)
        return 1 - (1 - self.p_lo) ** k, 1 - (1 - self.p_hi) ** k

    def answer_entropy(self) -> float:
        """Entropy (nats) of the extracted answers over the finished mass, renormalised; the
        full distribution's when ``unexpanded`` is 0 (Appendix C.5, NA counting as one)."""
        m = np.array([v for v in self.answers.values() if v > 0])
        q = m / m.sum()
        return float(-(q * np.log(q)).sum())


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
def expand(model, tokenizer, problem: Problem, task: Task, *, temperature: float = 1.0,
           top_p: float = 1.0, max_tokens: int = 72, tol: float = 1e-4,
           max_nodes: int = 200_000, batch_size: int = 256, add_bos: bool = True) -> Tree:
    """Expand ``problem``'s completion tree best-first until the unexpanded mass is at most
    ``tol`` (or ``max_nodes`` prefixes were expanded); see the module docstring."""
    prompt = encode(tokenizer, problem.prompt, add_bos)
    stops = set(stop_token_ids(tokenizer, model.generation_config))
    pad = tokenizer.pad_token_id
    tree, tick = Tree(), itertools.count()
    heap: list[tuple[float, int, tuple[int, ...]]] = [(-1.0, next(tick), ())]

    def finish(ids: tuple[int, ...], mass: float) -> None:
        text = tokenizer.decode(list(ids), skip_special_tokens=True)
        answer = task.extract(text)
        tree.answers[answer] = tree.answers.get(answer, 0.0) + mass
        if task.verify(text, problem.answer):
            tree.correct += mass
        else:
            tree.wrong += mass

    while heap and tree.unexpanded > tol and tree.nodes < max_nodes:
        batch = [heapq.heappop(heap) for _ in range(min(batch_size, len(heap)))]
        rows = [prompt + list(ids) for _, _, ids in batch]
        width = max(map(len, rows))
        x = torch.tensor([[pad] * (width - len(r)) + r for r in rows], device=model.device)
        mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rows],
                            device=model.device)
        position = (mask.cumsum(-1) - 1).clamp(min=0)
        logits = model(input_ids=x, attention_mask=mask, position_ids=position).logits[:, -1]
        probs, index = _next_distribution(logits.cpu(), temperature, top_p)
        for (neg, _, ids), p_row, i_row in zip(batch, probs.tolist(), index.tolist()):
            mass = -neg
            tree.unexpanded -= mass
            tree.nodes += 1
            for q, token in zip(p_row, i_row):
                if q <= 0:
                    continue
                child = mass * q
                if token in stops:
                    finish(ids, child)
                elif len(ids) + 1 >= max_tokens:
                    finish(ids + (token,), child)
                else:
                    tree.unexpanded += child
                    heapq.heappush(heap, (-child, next(tick), ids + (token,)))
    tree.frontier = [(-m, ids) for m, _, ids in heap]
    tree.unexpanded = max(0.0, sum(m for m, _ in tree.frontier))  # free of rounding drift
    return tree


@dataclass(frozen=True)
class Estimate:
    """``stratified``'s p: the exact part, the sampled frontier's contribution and its
    standard error, and the samples drawn."""

    tree: Tree
    p: float
    se: float
    samples: int


@torch.no_grad()
def stratified(model, tokenizer, problem: Problem, task: Task, *, n: int, seed: int = 0,
               temperature: float = 1.0, top_p: float = 1.0, max_tokens: int = 72,
               tol: float = 1e-2, max_nodes: int = 2_000, batch_size: int = 256,
               add_bos: bool = True) -> Estimate:
    """The tree expanded to ``tol`` (or ``max_nodes``), then ``n`` completions sampled below
    its frontier, each from a frontier prefix drawn in proportion to its mass (the module
    docstring gives the estimator and its standard error)."""
    tree = expand(model, tokenizer, problem, task, temperature=temperature, top_p=top_p,
                  max_tokens=max_tokens, tol=tol, max_nodes=max_nodes, batch_size=batch_size,
                  add_bos=add_bos)
    F = tree.unexpanded
    if F == 0 or n == 0:
        return Estimate(tree, tree.p_lo, 0.0, 0)
    masses = np.array([m for m, _ in tree.frontier])
    counts = np.random.default_rng(seed).multinomial(n, masses / masses.sum())
    drawn = [ids for (_, ids), c in zip(tree.frontier, counts) for _ in range(c)]
    prompt = encode(tokenizer, problem.prompt, add_bos)
    budget = max_tokens - min(map(len, drawn))
    backend = TransformersBackend(model, tokenizer, batch_size=batch_size, progress=False)
    params = SamplingParams(n=1, temperature=temperature, top_p=top_p, max_tokens=budget,
                            seed=seed)
    stops = set(backend.stops)
    correct = 0
    for ids, out in zip(drawn, backend.generate_ids([prompt + list(ids) for ids in drawn],
                                                    params)):
        rest = list(out[0].token_ids)[:max_tokens - len(ids)]  # this prefix's own budget
        end = next((i for i, t in enumerate(rest) if t in stops), len(rest))
        text = tokenizer.decode(list(ids) + rest[:end], skip_special_tokens=True)
        correct += bool(task.verify(text, problem.answer))
    f = correct / n
    return Estimate(tree, tree.p_lo + F * f, F * float(np.sqrt(f * (1 - f) / n)), n)
