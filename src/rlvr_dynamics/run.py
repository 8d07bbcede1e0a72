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
    python -m rlvr_dynamics.run --profile cpu-smollm2 --part --hours 2.5   # one part of a release

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
from datetime import datetime, timedelta, timezone
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
    ap.add_argument("--part", action="store_true",
                    help="run the profile as one part of its results release: the part's start "
                         "recorded in release/<profile>/ledger.json, then the build, then what "
                         "finished released (make part)")
    ap.add_argument("--hours", type=float, default=None,
                    help="with --part: begin no training run after this many hours (the run "
                         "in progress finishes), so that the part fits its sitting")
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
    if args.hours is not None and not (args.part and args.hours > 0):
        print("error: --hours needs --part and a positive number of hours", file=sys.stderr)
        return 2
    try:
        with lock.held(args.profile, wait=not args.no_wait):
            if args.part:
                return part(args.profile, selected, resolved, args.hours)
            build(args.profile, selected, resolved, book=not args.no_book)
    except lock.Busy as e:
        print(f"error: {e}", file=sys.stderr)
        return lock.EXIT_BUSY
    except release.ReleaseError as e:  # a part from uncommitted code, or a release refused
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


def part(profile: str, selected: list[str], resolved: dict, hours: float | None) -> int:
    """One part of ``profile``'s results release (``make part``): its start recorded in the
    ledger (``release.start_part``), the build, stopped from beginning a training run after
    ``hours`` (``store.PartOver``; the runs in progress finish), then whatever finished
    released (``release.add`` with ``part``, ``complete`` where the build finished), also when
    the build stopped early or failed.
    Returns 0 when the build finished, 3 when it stopped with work left for another part."""
    row = release.start_part(profile)
    log.info("part %d of %s begun at %s (commit %s)", row["started"], profile, row["start"],
             row["commit"][:12])
    if hours is not None:
        stop = datetime.now(timezone.utc) + timedelta(hours=hours)
        os.environ["RLVR_STOP_AFTER"] = stop.isoformat(timespec="seconds")
        log.info("no training run begins after %s UTC", stop.isoformat(timespec="minutes"))
    status = 0
    try:
        build(profile, selected, resolved, book=True)
    except Exception as e:  # a run not begun (PartOver, through papermill) or a failure
        log.warning("the build stopped: %s", str(e).strip().splitlines()[-1][:300])
        status = 3
    finally:
        released = release.add(profile, part=True, complete=status == 0, wait=False)
        log.info("released: %s", "nothing new" if released is None else
                 f"part {released['part']}, {len(released['entries'])} results")
    return status


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
