"""Train one run of the training chapter from the command line, on one device or many:

    python -m rlvr_dynamics.training --profile cpu --algorithm grpo_n --seed 1
    accelerate launch --config_file configs/accelerate/zero3-1node-4gpu.yaml \\
        -m rlvr_dynamics.training --profile paper --algorithm gspo_n

The run's settings are the training chapter's parameters under ``--profile`` (with ``--param
name=value`` overrides), exactly as the notebook builds them, so a run launched here is the
one the chapter then finds in ``results/<profile>/training/``. Every setting is checked before
any model loads; a bad one stops with an error that names it.
"""
from __future__ import annotations

import argparse
import logging
import sys

from rlvr_dynamics.chapters import ParameterError
from rlvr_dynamics.chapters.training import Params
from rlvr_dynamics.profiles import plan
from rlvr_dynamics.training.run import train


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--profile", default="cpu")
    ap.add_argument("--algorithm", required=True, help="grpo, grpo_n, gspo or gspo_n")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--positive-weight", type=float, default=None, metavar="LAMBDA",
                    help="weight on positive samples (GRPO/GSPO only; default: the algorithm's)")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--recompute", action="store_true", help="train again even if finished")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s",
                        datefmt="%H:%M:%S")
    try:
        params = Params.parse(plan(args.profile, ["training"], args.param)["training"])
        cfg = params.run_config(args.algorithm, args.seed, args.positive_weight)
    except (ParameterError, ValueError, FileNotFoundError, TypeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(train(cfg, args.profile, recompute=args.recompute))
    return 0


if __name__ == "__main__":
    sys.exit(main())
