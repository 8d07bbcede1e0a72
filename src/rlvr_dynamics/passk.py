"""Pass@k (Section 4.1): the unbiased estimator, its curves over k, and bootstrap intervals.

For one problem with ``n`` samples of which ``c`` are correct, the unbiased estimator is

    Pass@k = 1 - C(n-c, k) / C(n, k) = 1 - prod_{i=n-c+1}^{n} (1 - k / i),

the product form being free of huge binomial coefficients. Pass@k of a model is its mean over
problems. Public API::

    pass_at_k(n, c, k)            # (problems, ks) array; n, c, k scalars or 1-d arrays
    ks_for(n)                     # the paper's k = 1, 2, 4, ..., n
    pass_at_k_curve(n, c, ks)     # mean over problems, one value per k
    bootstrap_ci(per_problem)     # percentile interval over problems for each k
    from_probability(p, k)        # exact Pass@k = 1 - (1 - p)^k from a success probability
"""
from __future__ import annotations

import numpy as np


def _counts(name: str, x) -> np.ndarray:
    """``x`` as a 1-d int64 array of non-negative integers (an error naming ``name`` if not)."""
    a = np.atleast_1d(np.asarray(x))
    if a.ndim != 1:
        raise ValueError(f"{name} must be a scalar or a 1-d array, got shape {a.shape}")
    if a.size and not np.issubdtype(a.dtype, np.integer):
        if not (np.issubdtype(a.dtype, np.floating) and np.all(a == np.round(a))):
            raise ValueError(f"{name} must hold integers, got {a.dtype}")
    a = a.astype(np.int64)
    if (a < 0).any():
        raise ValueError(f"{name} must be non-negative, got {a[a < 0][0]}")
    return a


def pass_at_k(n, c, k) -> np.ndarray:
    """The unbiased Pass@k (Section 4.1) for every problem and every k.

    ``n`` (samples per problem) and ``c`` (correct samples) are scalars or arrays over problems
    (a scalar ``n`` is shared); ``k`` is a scalar or an array of k values. Returns an array of
    shape (problems, len(k)). Raises ``ValueError`` for k < 1, k > n, c > n or negative counts.

    For each distinct n, the running products prod_{i=n-c+1}^{n} (1 - k/i) for all c at once
    are one cumulative product down i = n, n-1, ..., 1; problems then look their c up. The
    factor i = k is exactly zero, so Pass@k = 1 exactly whenever n - c < k.
    """
    c = _counts("c", c)
    n = np.broadcast_to(_counts("n", n), c.shape) if np.ndim(n) == 0 else _counts("n", n)
    k = _counts("k", k)
    if n.shape != c.shape:
        raise ValueError(f"n and c must have the same length, got {n.shape} and {c.shape}")
    if (k < 1).any():
        raise ValueError(f"k must be >= 1, got {k.min()}")
    if (c > n).any():
        i = int(np.argmax(c > n))
        raise ValueError(f"c must be <= n, got c={c[i]} > n={n[i]} for problem {i}")
    if n.size and k.size and k.max() > n.min():
        raise ValueError(f"k must be <= n, got k={k.max()} > n={n.min()}")
    values = np.unique(n)
    out = np.empty((c.size, k.size))
    for n_value in values:
        i = np.arange(n_value, 0, -1, dtype=np.float64)             # i = n, n-1, ..., 1
        miss = np.cumprod(1.0 - k[None, :] / i[:, None], axis=0)     # [c-1, j]: C(n-c,k)/C(n,k)
        table = 1.0 - np.vstack([np.ones((1, k.size)), miss])        # table[c]: Pass@k
        if len(values) == 1:
            return table[c]
        rows = n == n_value
        out[rows] = table[c[rows]]
    return out


def from_probability(p, k) -> np.ndarray:
    """Exact Pass@k of a problem solved with probability ``p`` per sample: 1 - (1 - p)^k
    (independent samples). ``p`` and ``k`` broadcast as numpy arrays."""
    return 1 - (1 - np.asarray(p, dtype=float)) ** np.asarray(k, dtype=float)


K_MAX = 2 ** 20
"""The largest k ``mid_curve_k`` searches."""


def mid_curve_k(p, target: float = 50.0) -> int:
    """The k in [1, ``K_MAX``] at which the mean over problems of 100 ``from_probability(p,
    k)`` is closest to ``target`` per cent (exact; the mean rises with k, so a bisection finds
    it)."""
    p = np.clip(np.asarray(p, dtype=float), 0, 1)

    def at(k: int) -> float:
        return float(100 * from_probability(p, k).mean())

    lo, hi = 1, K_MAX
    if at(lo) >= target:
        return lo
    if at(hi) <= target:
        return hi
    while hi - lo > 1:  # at(lo) < target < at(hi)
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if at(mid) < target else (lo, mid)
    return lo if target - at(lo) <= at(hi) - target else hi


def ks_for(n: int) -> list[int]:
    """k = 1, 2, 4, ..., up to n, with n itself appended when it is not a power of two."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    ks = [1 << j for j in range(n.bit_length()) if 1 << j <= n]
    return ks if ks[-1] == n else ks + [n]


def pass_at_k_curve(n, c, ks) -> np.ndarray:
    """Pass@k averaged over problems, one value per k of ``ks``."""
    return pass_at_k(n, c, ks).mean(axis=0)


def bootstrap_ci(per_problem: np.ndarray, level: float = 0.95, resamples: int = 1000,
                 seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap interval of the mean over problems (rows of ``per_problem``).

    ``per_problem`` is (problems, ks), e.g. ``pass_at_k(n, c, ks)``; problems are resampled
    with replacement ``resamples`` times. Returns (low, high), each of shape (ks,).
    """
    x = np.asarray(per_problem, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    if x.shape[0] == 0:
        raise ValueError("bootstrap_ci needs at least one problem")
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    rng = np.random.default_rng(seed)
    p = x.shape[0]
    means = np.concatenate([  # a resample is a multinomial count per problem; 100 at a time
        rng.multinomial(p, np.full(p, 1.0 / p), size=min(100, resamples - s)) @ x / p
        for s in range(0, resamples, 100)])                          # (resamples, ks)
    alpha = (1 - level) / 2
    return np.quantile(means, alpha, axis=0), np.quantile(means, 1 - alpha, axis=0)
