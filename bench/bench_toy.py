"""Speed of the vectorised Algorithm 1 (``toy.simulate``) against its literal per-step loop
(``toy.algorithm1``): seed-steps per second of each and their ratio, measured in one run on
one core. The target is a ratio of at least 100. ``--smoke``: 3 steps, 8 seeds, one timing
(seconds; checks that the bench runs, its ratios mean nothing).

    .venv/bin/python bench/bench_toy.py [--smoke]
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # one core for both sides
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from rlvr_dynamics import toy  # noqa: E402

TARGET = 100
CASES = [  # (label, pi0, r, G, optimizer, negative_only)
    ("Figure 1: K=3, G=2, Adam", [0.495, 0.01, 0.495], [0.5, 1.0, 0.0], 2, "adam", False),
    ("negative-only, SGD", [0.495, 0.01, 0.495], [0.5, 1.0, 0.0], 2, "sgd", True),
    ("Figure 5: K=3, G=10", [0.495, 0.01, 0.495], [0.5, 1.0, 0.0], 10, "adam", False),
    ("Figure 7: K=4, G=2", [0.49, 0.01, 0.49, 0.01], [0.5, 1.0, 0.0, 0.75], 2, "adam", False),
]
SETTINGS = 4
# (steps, settings x seeds of the vectorised side, seeds of the loop, timings of each)
SIZES = {"full": (300, 4000, 6, 5), "smoke": (3, 8, 1, 1)}


def best_times(repeats: int, *fns) -> list[float]:
    """The fastest of ``repeats`` timings of each function, taken in turns so that both sides
    of a ratio see the same load on a shared machine."""
    best = [float("inf")] * len(fns)
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - start)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--smoke", action="store_true", help="smallest sizes (seconds)")
    steps, n, loop_seeds, repeats = SIZES["smoke" if ap.parse_args().smoke else "full"]
    print(f"{steps} steps; best of {repeats}; seed-steps per second")
    print(f"{'case':28s} {'vectorised':>12s} {'literal loop':>13s} {'ratio':>7s}")
    ratios = []
    for label, pi0, r, G, opt, neg in CASES:
        z0, kw = toy.logits(pi0), dict(lr=0.1, optimizer=opt, negative_only=neg)
        u = np.random.default_rng(0).random((steps, G))
        vec, loop = best_times(
            repeats,
            lambda: toy.simulate(np.tile(z0, (SETTINGS, 1)), r, G=G, steps=steps,
                                 seeds=n // SETTINGS, **kw),
            lambda: [toy.algorithm1(z0, r, u, **kw) for _ in range(loop_seeds)])
        vec_rate, loop_rate = n * steps / vec, loop_seeds * steps / loop
        ratios.append(vec_rate / loop_rate)
        print(f"{label:28s} {vec_rate:12.3g} {loop_rate:13.3g} {ratios[-1]:6.0f}x")
    worst = min(ratios)
    print(f"smallest ratio {worst:.0f}x: target of {TARGET}x "
          f"{'met' if worst >= TARGET else 'NOT met'}")


if __name__ == "__main__":
    main()
