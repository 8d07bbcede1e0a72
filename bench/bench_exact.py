"""The boundary of one model from its probabilities against n = 256 samples
(``sampling.TransformersBackend``, the book's sampler), on the same problems of both sums splits
under both settings of the reproduction chapter, measured in one run: wall time and precision.
Two ways: the tree expanded best-first (``exact.expand``: certified bounds, their width against
the standard error of a 256-sample estimate), and the tree cut at ``--strat-tol`` with n samples
below its frontier (``exact.stratified``: its standard error against plain sampling's).

    python bench/bench_exact.py [--profile cpu] [--problems 40] [--tol 1e-3]

The model is the base of ``--profile``'s base-model chapter (trained first if it is not on disk:
minutes under smoke, about a quarter of an hour under cpu)."""
import argparse
import time

import numpy as np
import torch

from rlvr_dynamics import exact, registry
from rlvr_dynamics.chapters import base_model
from rlvr_dynamics.profiles import plan
from rlvr_dynamics.sampling import SamplingParams, TransformersBackend

SETTINGS = {"paper": (0.6, 0.95), "full": (1.0, 1.0)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--profile", default="smoke")
    ap.add_argument("--problems", type=int, default=40)
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--tol", type=float, default=1e-3)
    ap.add_argument("--max-nodes", type=int, default=20_000)
    ap.add_argument("--max-tokens", type=int, default=72)
    ap.add_argument("--strat-tol", type=float, default=1e-2)
    ap.add_argument("--strat-nodes", type=int, default=500)
    args = ap.parse_args()
    torch.set_num_threads(2)
    cfg = base_model.Params.parse(plan(args.profile, ["base_model"])["base_model"]).config()
    model, tok = registry.load_model(cfg, args.profile)
    model.eval()
    task = cfg.task
    problems = [p for split in ("test", "ood") for p in task.problems(split)[:args.problems]]
    print(f"base {cfg.key} ({args.profile}), {len(problems)} problems, n = {args.n}, "
          f"tol = {args.tol:g}, max_nodes = {args.max_nodes}")
    total_exact = total_sampled = total_strat = 0.0
    for name, (T, top_p) in SETTINGS.items():
        start = time.perf_counter()
        trees = [exact.expand(model, tok, p, task, temperature=T, top_p=top_p,
                              max_tokens=args.max_tokens, tol=args.tol,
                              max_nodes=args.max_nodes) for p in problems]
        t_exact = time.perf_counter() - start
        backend = TransformersBackend(model, tok, add_bos=True, batch_size=1024, progress=False)
        start = time.perf_counter()
        samples = backend.generate([p.prompt for p in problems],
                                   SamplingParams(n=args.n, temperature=T, top_p=top_p,
                                                  max_tokens=args.max_tokens, seed=0))
        t_sampled = time.perf_counter() - start
        start = time.perf_counter()
        strat = [exact.stratified(model, tok, p, task, n=args.n, temperature=T, top_p=top_p,
                                  max_tokens=args.max_tokens, tol=args.strat_tol,
                                  max_nodes=args.strat_nodes) for p in problems]
        t_strat = time.perf_counter() - start
        total_exact, total_sampled = total_exact + t_exact, total_sampled + t_sampled
        total_strat += t_strat
        width = np.array([t.p_hi - t.p_lo for t in trees])
        p_hat = np.array([np.mean([task.verify(c.text, p.answer) for c in cs])
                          for p, cs in zip(problems, samples)])
        se = np.sqrt(np.clip(p_hat * (1 - p_hat), 1 / args.n, None) / args.n)
        inside = np.mean([(t.p_lo - 4.5 * s <= ph <= t.p_hi + 4.5 * s)
                          for t, ph, s in zip(trees, p_hat, se)])
        print(f"{name:5s} (T {T:g}, top-p {top_p:g}): exact {t_exact:7.1f} s "
              f"({np.mean([t.nodes for t in trees]):,.0f} prefixes per problem, "
              f"{sum(t.unexpanded > args.tol for t in trees)} problems hit max_nodes), "
              f"sampled {t_sampled:7.1f} s; time ratio exact/sampled {t_exact / t_sampled:.2f}; "
              f"interval width on p: median {np.median(width):.1e}, max {width.max():.1e}, "
              f"against the sampled standard error median {np.median(se):.1e}; sampled share "
              f"within the exact interval (+- 4.5 se) on {inside:.0%} of problems")
        se_strat = np.array([e.se for e in strat])
        agree = np.mean([abs(e.p - ph) <= 4.5 * np.hypot(e.se, s)
                         for e, ph, s in zip(strat, p_hat, se)])
        print(f"      stratified (tree to {args.strat_tol:g}, {args.n} samples below it): "
              f"{t_strat:7.1f} s, ratio to sampled {t_strat / t_sampled:.2f}; standard error "
              f"median {np.median(se_strat):.1e} (max {se_strat.max():.1e}) against sampled "
              f"{np.median(se):.1e}; agrees with the sampled share on {agree:.0%} of problems")
    print(f"both settings: exact {total_exact:.1f} s, stratified {total_strat:.1f} s, sampled "
          f"{total_sampled:.1f} s; ratios exact/sampled {total_exact / total_sampled:.2f}, "
          f"stratified/sampled {total_strat / total_sampled:.2f} (target: at most 0.1 at equal "
          "or better precision)")


if __name__ == "__main__":
    main()
