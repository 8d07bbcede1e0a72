"""One build of a profile at a time in one checkout.

``held(profile)`` takes ``results/<profile>/.lock`` (``fcntl.flock``, exclusive) for as long as
its ``with`` block runs and writes the holder's pid and command into it. A second process that
wants the same profile says who holds it ("profile x is being built by pid N (command ...),
waiting") and waits, or, with ``wait=False``, raises ``Busy`` with that message. The runner
(``run --profile x``) and ``release`` take it; one training run (``run train``) does not, since
every process of a multi-GPU launch runs it. The lock is the kernel's: it goes with the process
that held it, however that process ends; the file stays (removing it would let two processes
lock two files). Within one process the lock is re-entrant.
"""
from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import shlex
import sys
from pathlib import Path
from typing import Iterator

from rlvr_dynamics.store import results_root

log = logging.getLogger(__name__)

LOCK = ".lock"

EXIT_BUSY = 75
"""The exit status of a command that found its profile held and was told not to wait
(``--no-wait``; ``EX_TEMPFAIL``: try again later)."""

_held: dict[Path, int] = {}
"""The lock files this process holds, with how many ``held`` blocks hold each."""


class Busy(RuntimeError):
    """Another process holds the profile (``held(..., wait=False)``)."""


def path(profile: str) -> Path:
    """``results/<profile>/.lock`` (its folder created)."""
    folder = results_root() / profile
    folder.mkdir(parents=True, exist_ok=True)
    return folder / LOCK


def holder(profile: str) -> str:
    """Who holds ``profile``'s lock, as its file says: "pid N (command ...)"."""
    try:
        text = path(profile).read_text().strip()
    except OSError:
        text = ""
    pid, _, command = text.partition("\n")
    return f"pid {pid or '?'} (command {command or '?'})"


def _command() -> str:
    return shlex.join([Path(sys.executable).name, *sys.argv])


@contextlib.contextmanager
def held(profile: str, wait: bool = True, command: str | None = None) -> Iterator[Path]:
    """Hold ``profile``'s lock for the block (waiting for another holder, or ``Busy`` where
    not ``wait``); the file says this process's pid and ``command`` (default: its command
    line)."""
    file = path(profile).resolve()
    if _held.get(file):
        _held[file] += 1
        try:
            yield file
        finally:
            _held[file] -= 1
        return
    fd = os.open(file, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            busy = f"profile {profile} is being built by {holder(profile)}"
            if not wait:
                raise Busy(f"{busy}; not waiting (--no-wait)") from None
            log.warning("%s, waiting", busy)
            print(f"{busy}, waiting", file=sys.stderr, flush=True)
            fcntl.flock(fd, fcntl.LOCK_EX)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n{command or _command()}\n".encode(), 0)
        _held[file] = 1
        try:
            yield file
        finally:
            del _held[file]
            os.ftruncate(fd, 0)
    finally:
        os.close(fd)  # closing the last descriptor releases the lock
