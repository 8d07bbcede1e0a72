"""Appendix C.5's two entropies of a model's outputs.

* Answer-level: the entropy (nats) of the empirical distribution of one problem's extracted
  answers, every unextractable answer counting as one shared "NA" answer.
* Token-level: the full-vocabulary entropy H(p_t) = -sum_v p_t(v) log p_t(v) at each generated
  position, averaged over positions and sequences.
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


def token_entropy(logits: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """H(p_t) for every position of ``logits`` (..., T, V), in nats; zero where ``mask`` is 0."""
    logp = torch.log_softmax(logits.float(), dim=-1)
    h = -(logp.exp() * logp).sum(-1)
    return h if mask is None else h * mask
