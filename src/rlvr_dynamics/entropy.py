"""Appendix C.5's two entropies of a model's outputs.

* Answer-level: the entropy (nats) of the empirical distribution of one problem's extracted
  answers, every unextractable answer counting as one shared "NA" answer.
* Token-level: the full-vocabulary entropy H(p_t) = -sum_v p_t(v) log p_t(v) at each generated
  position, averaged over positions and sequences.

Public API::

    answer_entropy(answers)                  # one problem's extracted answers, None = NA
    token_entropy(logits, mask=None)         # H(p_t) from logits (..., T, V)
                                             # (the sampler records it while it decodes)
    completion_token_entropy(model, prompt_ids, completion_ids)   # teacher-forced, per position
    mean_token_entropy(completion_means)     # one problem's TokenEntropy (their means)
"""
from __future__ import annotations

from collections import Counter
from typing import Sequence

import numpy as np
import torch

NA = object()


def answer_entropy(answers: Sequence[str | None]) -> float:
    """-sum_j p_j log p_j over the distinct answers of one problem (None is "NA")."""
    if len(answers) == 0:
        raise ValueError("answer_entropy needs at least one answer")
    counts = np.array(list(Counter(NA if a is None else a for a in answers).values()), float)
    p = counts / counts.sum()
    return float(-(p * np.log(p)).sum()) + 0.0  # +0.0 turns -0.0 into 0.0


def token_entropy(logits: torch.Tensor, mask: torch.Tensor | None = None, *,
                  temperature: float = 1.0, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """H(p_t) of p_t = softmax(z_t / temperature) for every position of ``logits`` (..., V), in
    nats, computed in ``dtype``; zero where ``mask`` is 0."""
    logp = torch.log_softmax(logits.to(dtype) / temperature, dim=-1)
    h = -(logp.exp() * logp).sum(-1)
    return h if mask is None else h * mask


@torch.no_grad()
def completion_token_entropy(model, prompt_ids: Sequence[Sequence[int]],
                             completion_ids: Sequence[Sequence[int]], *,
                             temperature: float = 1.0, max_batch_tokens: int = 16384,
                             chunk: int = 256) -> list[np.ndarray]:
    """H(p_t) (nats) at every generated position of each completion, by one teacher-forced pass.

    Sequence i is ``prompt_ids[i] + completion_ids[i]``; position t of its completion gets the
    entropy of the model's full-vocabulary distribution softmax(z_t / temperature) that
    produced token t (Appendix C.5). Works for any causal LM, whatever generated the tokens.
    Sequences are sorted by length, left-padded (with matching position ids) and batched up
    to ``max_batch_tokens`` tokens; only the completion positions' logits are computed
    (``logits_to_keep``) and they are reduced ``chunk`` positions at a time, so memory stays
    bounded for large vocabularies. Returns one float32 array per completion (empty for an
    empty completion).
    """
    if len(prompt_ids) != len(completion_ids):
        raise ValueError(f"{len(prompt_ids)} prompts but {len(completion_ids)} completions")
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    pad = model.config.pad_token_id if model.config.pad_token_id is not None else 0
    seqs = [list(p) + list(c) for p, c in zip(prompt_ids, completion_ids)]
    lengths = [len(c) for c in completion_ids]
    out: list[np.ndarray] = [np.zeros(0, np.float32) for _ in seqs]
    order = sorted((i for i in range(len(seqs)) if lengths[i] > 0), key=lambda i: -len(seqs[i]))
    was_training = model.training
    model.eval()
    try:
        start = 0
        while start < len(order):
            width = len(seqs[order[start]])
            size = max(1, max_batch_tokens // width)
            batch = order[start:start + size]
            start += size
            ids = torch.tensor([[pad] * (width - len(seqs[i])) + seqs[i] for i in batch],
                               device=model.device)
            mask = torch.tensor([[0] * (width - len(seqs[i])) + [1] * len(seqs[i]) for i in batch],
                                device=model.device)
            positions = (mask.cumsum(-1) - 1).clamp(min=0)
            keep = max(lengths[i] for i in batch) + 1  # logits at width-keep .. width-1
            logits = model(input_ids=ids, attention_mask=mask, position_ids=positions,
                           logits_to_keep=keep).logits[:, :-1]  # predicts the last keep-1 tokens
            h = torch.cat([token_entropy(logits[:, s:s + chunk], temperature=temperature)
                           for s in range(0, logits.shape[1], chunk)], dim=1).cpu().numpy()
            for row, i in enumerate(batch):
                out[i] = h[row, h.shape[1] - lengths[i]:].astype(np.float32)
    finally:
        model.train(was_training)
    return out


def mean_token_entropy(completion_means: Sequence[float | None]) -> float:
    """TokenEntropy of Appendix C.5 for one problem's G completions, (1/G) sum_i (1/T_i)
    sum_t H(p_t^(i)), from each completion's own average over its T_i positions (the inner
    sum, e.g. ``completion_token_entropy(...)[i].mean()``); empty completions (None or NaN: no
    generated position) are left out."""
    means = [float(m) for m in completion_means if m is not None and not np.isnan(m)]
    if not means:
        raise ValueError("mean_token_entropy needs at least one non-empty completion")
    return float(np.mean(means))
