"""Execute the book's notebooks with papermill under a profile, then build the HTML book.

The command lines (the work itself is done by ``execution``, ``book`` and ``publish``): a
profile's chapters and its book, the one published book across profiles, one training run.

    python -m rlvr_dynamics.run --profile cpu                       # everything
    python -m rlvr_dynamics.run --profile cpu --nb toy_dynamics --param seeds=1000
    python -m rlvr_dynamics.run --profile cpu --book-only           # rebuild pages only
    python -m rlvr_dynamics.run --publish      # one book from every profile's executed chapters
    python -m rlvr_dynamics.run train --profile paper --algorithm grpo_n --seed 1   # one run
    python -m rlvr_dynamics.run train --profile paper --config <launch file>        # any run
    python -m rlvr_dynamics.run release --profile cpu   # the finished results into release/

Every selected notebook's parameters are resolved and validated before the first one runs
(``profiles.plan``), and each chapter is handed those of the chapters it reads. A build holds
its profile's lock (``lock.held``) from then to its end: a second build of the same profile
waits for it, or with ``--no-wait`` exits naming the process that holds it. A build starts from
the profile's results release (``release/<profile>/``, restored into ``results/``), and
``--publish`` draws from the releases every chapter no build here has executed.
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from pathlib import Path

from rlvr_dynamics import lock, release
from rlvr_dynamics.book import build_book
from rlvr_dynamics.chapters import ParameterError
from rlvr_dynamics.execution import chapters, execute
from rlvr_dynamics.profiles import params_class, plan, profile_chapters
from rlvr_dynamics.publish import publish
from rlvr_dynamics.store import read_json
from rlvr_dynamics.rl.config import TrainConfig
from rlvr_dynamics.rl.runs import train

log = logging.getLogger("rlvr_dynamics.run")


def train_config(argv: list[str]) -> tuple[TrainConfig, str, bool]:
    """The run that ``run train`` trains, its profile and whether to train it again: a run the
    book wrote down (``--config``: ``rl.runs.launch_file``, printed by the error of a
    missing run), or a run of the training chapter (``--algorithm``, ``--seed``, lambda
    ``--positive-weight``), with its parameters under ``--profile`` and ``--param`` overrides
    resolved as the notebook's are. Every setting is checked before any model loads."""
    ap = argparse.ArgumentParser(prog="python -m rlvr_dynamics.run train",
                                 description="Train one run, on one device or many "
                                             "(accelerate launch ... -m rlvr_dynamics.run train).")
    ap.add_argument("--profile", default="cpu")
    which = ap.add_mutually_exclusive_group(required=True)
    which.add_argument("--config", type=Path, help="a run written down by a chapter")
    which.add_argument("--algorithm", help="a run of the training chapter: grpo, grpo_n, ...")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--positive-weight", type=float, default=None, metavar="LAMBDA",
                    help="weight on positive samples (GRPO/GSPO only; default: the algorithm's)")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--recompute", action="store_true", help="train again even if finished")
    args = ap.parse_args(argv)
    if args.config is not None:
        if args.param or args.positive_weight is not None:
            raise ParameterError("--config is a whole run: --param and --positive-weight "
                                 "apply to --algorithm runs only")
        try:
            return TrainConfig.from_dict(read_json(args.config)), args.profile, args.recompute
        except (OSError, ValueError, TypeError) as e:
            raise ParameterError(f"--config {args.config}: {e}") from None
    params = params_class("training").parse(plan(args.profile, ["training"], args.param)["training"])
    return (params.run_config(args.algorithm, args.seed, args.positive_weight), args.profile,
            args.recompute)


def train_main(argv: list[str]) -> int:
    """``python -m rlvr_dynamics.run train ...``: train one run (``train_config``)."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s",
                        datefmt="%H:%M:%S")
    try:
        cfg, profile, recompute = train_config(argv)
    except (ParameterError, ValueError, FileNotFoundError, TypeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(train(cfg, profile, recompute=recompute))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["train"]:
        return train_main(argv[1:])
    if argv[:1] == ["release"]:
        return release.main(argv[1:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 epilog="python -m rlvr_dynamics.run train --help: train one run; "
                                        "... release --help: release a profile's results")
    ap.add_argument("--profile", default="cpu")
    ap.add_argument("--nb", action="append", default=[],
                    help="notebook(s) to execute (comma-separated or repeated); default all")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--book-only", action="store_true", help="only rebuild the HTML book")
    ap.add_argument("--no-book", action="store_true", help="only execute the notebooks")
    ap.add_argument("--publish", action="store_true",
                    help="build the one published book (book/publish.yaml) from the notebooks "
                         "every profile has executed, recomputing nothing")
    ap.add_argument("--no-wait", action="store_true",
                    help="exit, naming the holder, where another process builds the profile")
    ap.add_argument("--reuse-stale", action="store_true",
                    help="keep finished results that older code computed (listed in the run "
                         "report) instead of recomputing them")
    args = ap.parse_args(argv)
    if args.reuse_stale:
        os.environ["RLVR_REUSE_STALE"] = "1"  # read by the store, in the kernels too
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s",
                        datefmt="%H:%M:%S")
    if args.publish:
        try:
            print(f"The book: {publish()}")
        except ParameterError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        return 0
    try:
        own = profile_chapters(args.profile)
        selected = ([n for arg in args.nb for n in arg.split(",") if n]
                    or [n for n in chapters() if own is None or n in own])
        unknown = [n for n in selected if n not in chapters()]
        if unknown:
            raise ParameterError(f"unknown notebook(s) {unknown}; the book has {chapters()}")
        if args.book_only:
            selected = []
        # Resolve and validate everything before the first notebook starts.
        resolved = plan(args.profile, selected, args.param)
    except ParameterError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        with lock.held(args.profile, wait=not args.no_wait):
            build(args.profile, selected, resolved, book=not args.no_book)
    except lock.Busy as e:
        print(f"error: {e}", file=sys.stderr)
        return lock.EXIT_BUSY
    return 0


def build(profile: str, selected: list[str], resolved: dict, book: bool) -> None:
    """Execute the ``selected`` notebooks under ``profile`` with their ``resolved``
    parameters, then build its book where ``book``; the profile's results release is restored
    first (``release.restore``), so that only what it lacks is computed."""
    restored = release.restore(profile)
    if restored:
        log.info("%d results restored from release/%s; computing the rest", len(restored),
                 profile)
    for i, nb in enumerate(selected, 1):
        log.info("[%d/%d] %s under profile %s", i, len(selected), nb, profile)
        start = time.time()
        execute(profile, nb, resolved[nb])
        log.info("[%d/%d] %s done in %.1f min", i, len(selected), nb, (time.time() - start) / 60)
    if book:
        print(f"The book: {build_book(profile)}")


if __name__ == "__main__":
    sys.exit(main())
