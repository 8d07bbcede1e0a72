"""Pass@k for 10,000 problems of n = 256 samples at every k = 1..256: ``passk.pass_at_k`` (the
product form, one cumulative product per distinct n) against a naive per-(problem, k)
1 - C(n-c, k) / C(n, k) with Python's exact binomial coefficients. Measured in one run; prints
both times, their ratio and the largest difference between the two. ``--smoke``: 20 problems of
n = 16 (seconds; checks that the bench runs, its ratio means nothing).

    .venv/bin/python bench/bench_passk.py [--smoke]
"""
import argparse
import time
from math import comb

import numpy as np

from rlvr_dynamics.passk import pass_at_k


def naive(n: np.ndarray, c: np.ndarray, ks: np.ndarray) -> np.ndarray:
    return np.array([[1 - comb(int(ni) - int(ci), int(k)) / comb(int(ni), int(k)) for k in ks]
                     for ni, ci in zip(n, c)])


def main(problems: int = 10_000, n: int = 256) -> None:
    rng = np.random.default_rng(0)
    c = rng.binomial(n, rng.beta(0.5, 1.5, size=problems))  # mostly hard problems, some easy
    ns, ks = np.full(problems, n), np.arange(1, n + 1)
    start = time.perf_counter()
    ours = pass_at_k(ns, c, ks)
    t_ours = time.perf_counter() - start
    start = time.perf_counter()
    ref = naive(ns, c, ks)
    t_naive = time.perf_counter() - start
    print(f"pass@k, {problems:,} problems x {len(ks)} values of k (n = {n}):")
    print(f"  product form (passk.pass_at_k): {t_ours:.3f} s")
    print(f"  naive binomial coefficients:    {t_naive:.3f} s")
    print(f"  speed-up (time ratio, naive / product form): {t_naive / t_ours:.0f}x; "
          f"largest |difference|: {np.abs(ours - ref).max():.1e}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--smoke", action="store_true", help="smallest sizes (seconds)")
    main(*((20, 16) if ap.parse_args().smoke else ()))
