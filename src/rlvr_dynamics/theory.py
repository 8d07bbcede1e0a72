"""Section 3.1 and Appendix B: how one policy-gradient step moves a softmax policy's logits.

Notation follows the paper: logits z, policy pi = Softmax(z / tau), advantage A_hat, step eta.
"""
from __future__ import annotations

import numpy as np


def softmax(z: np.ndarray, tau: float = 1.0) -> np.ndarray:
    """pi = Softmax(z / tau) over the last axis (Appendix C.4's temperature)."""
    z = np.asarray(z, dtype=float) / tau
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def logit_update(pi: np.ndarray, action: int, advantage: float, lr: float) -> np.ndarray:
    """Lemma 1: the new-minus-old logits after one step on the sampled ``action``.

    Delta z_v = eta * A(v) * (1 - pi(v)) for the sampled v, and
    Delta z_u = -eta * A(v) * pi(u) for every u != v; i.e. eta * A(v) * (e_v - pi).
    """
    pi = np.asarray(pi, dtype=float)
    delta = -lr * advantage * pi
    delta[..., action] += lr * advantage
    return delta


def expected_logit_update(pi: np.ndarray, advantages: np.ndarray, lr: float) -> np.ndarray:
    """Theorem 1: E[Delta z_v] = eta * pi(v) * [(1 - pi(v)) A(v) - sum_{u != v} pi(u) A(u)].

    ``pi`` and the per-action ``advantages`` are arrays over the last axis, batched over
    leading axes. The bracket equals A(v) - sum_u pi(u) A(u), which is how it is computed.
    """
    pi = np.asarray(pi, dtype=float)
    advantages = np.asarray(advantages, dtype=float)
    return lr * pi * (advantages - (pi * advantages).sum(axis=-1, keepdims=True))
