"""Independent jobs side by side: a pool of worker processes, each with one torch thread.

The book's tiny models gain nothing from a second thread, so on two cores two single-threaded
jobs side by side take about as long as one: a chapter that asks for all of its runs at once
gets them in about half the time. Workers are spawned (fresh interpreters, no forked torch
state), take jobs in the order given, and the results come back in that order; an error in a
job stops the map and is raised here. ``workers=1`` runs the jobs inline, in this process.

    results = pool_map(train_one, [(cfg, "cpu") for cfg in configs], workers=2)

A job's result must not depend on the process it runs in: the tests check that a map with two
workers returns exactly what the same jobs return one after the other.
"""
from __future__ import annotations

import logging
import multiprocessing
import os
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any, Callable, Sequence

import torch
from tqdm.auto import tqdm

log = logging.getLogger(__name__)


def _init_worker() -> None:
    """One torch thread per worker, and only warnings logged (the parent shows the progress)."""
    torch.set_num_threads(1)
    logging.basicConfig(level=logging.WARNING)
    # TRL calls a transformers property that warns on every run; it says nothing about ours.
    warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*",
                            category=FutureWarning)


def pool_map(fn: Callable[[Any], Any], jobs: Sequence[Any], workers: int = 2,
             desc: str = "jobs") -> list[Any]:
    """``[fn(job) for job in jobs]``, computed by ``workers`` processes side by side.

    ``fn`` must be importable by name (a module-level function) and its jobs and results
    picklable. Progress is one bar over the jobs.
    """
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    jobs = list(jobs)
    if not jobs:
        return []
    if workers == 1 or len(jobs) == 1:
        return [fn(job) for job in tqdm(jobs, desc=desc, mininterval=10)]
    results: list[Any] = [None] * len(jobs)
    quiet = os.environ.get("TQDM_DISABLE")
    os.environ["TQDM_DISABLE"] = "1"  # inherited by the workers as they spawn: no bars of theirs
    try:
        with ProcessPoolExecutor(min(workers, len(jobs)),
                                 mp_context=multiprocessing.get_context("spawn"),
                                 initializer=_init_worker) as pool:
            futures = {pool.submit(fn, job): i for i, job in enumerate(jobs)}
            try:
                for future in tqdm(as_completed(futures), total=len(jobs), desc=desc,
                                   mininterval=10):
                    results[futures[future]] = future.result()
            except BaseException:
                for future in futures:
                    future.cancel()
                raise
    finally:
        if quiet is None:
            os.environ.pop("TQDM_DISABLE", None)
        else:
            os.environ["TQDM_DISABLE"] = quiet
    return results
