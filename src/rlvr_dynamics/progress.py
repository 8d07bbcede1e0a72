"""Progress bars that worker processes can silence, and that a notebook's kernel can relay to
the terminal that runs it.

``parallel.pool_map`` sets ``TQDM_DISABLE`` for its workers (the parent shows one bar over the
jobs). tqdm reads that variable only for the keyword arguments a call leaves out, so a bar must
not pass ``disable=`` itself; ``bar`` leaves the iterable bare instead when it is not wanted.

A bar drawn in a notebook's kernel lands in the executed notebook, not on the terminal of the
runner that executes it. So the runner opens a channel (``relayed``: a file that ``CHANNEL``
names in the environment the kernel inherits), the kernel calls ``forward`` once at its start,
and from then on every tqdm bar there, whoever made it, also appends its state to that file as
one plain line (``line``: ``runs: 7/16 [20:10<25:56, 172.92s/it]``) at most every ``EVERY``
seconds and when it closes; the runner shows each line as it comes. The notebook's own outputs
are untouched.
"""
from __future__ import annotations

import os
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterable, Iterator, TypeVar

from tqdm import std
from tqdm.auto import tqdm

T = TypeVar("T")

CHANNEL = "RLVR_PROGRESS"
"""The environment variable that names the file a runner reads progress lines from."""
EVERY = 10.0
"""Seconds between two lines of one bar (a bar shorter than this sends none)."""
PLAIN = "{desc}: {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}{postfix}]"
"""A bar's state as one line: tqdm's counts and estimate, without the bar itself."""


def bar(iterable: Iterable[T], show: bool = True, **kwargs) -> Iterable[T]:
    """``tqdm(iterable, **kwargs)`` when ``show``, else ``iterable`` itself."""
    return tqdm(iterable, **kwargs) if show else iterable


def line(meter: std.tqdm) -> str:
    """``meter``'s state as one plain line (``PLAIN``; without ``desc: `` where it has none)."""
    form = PLAIN if meter.desc else PLAIN.removeprefix("{desc}: ")
    return meter.format_meter(**{**meter.format_dict, "bar_format": form, "ncols": None})


def _send(meter: std.tqdm, closing: bool) -> None:
    """Append ``meter``'s line to the channel when it moved and ``EVERY`` seconds have passed
    since its last line (or its start); on ``closing``, its final line if it sent any before
    or lasted that long. Never raises: a lost line must not stop the work."""
    path = os.environ.get(CHANNEL)
    if not path or getattr(meter, "disable", True):
        return
    try:
        now = time.time()
        sent, n = getattr(meter, "_relayed", (meter.start_t, None))
        due = now - sent >= EVERY
        if meter.n == n or not (due or (closing and n is not None)):
            return
        meter._relayed = (now, meter.n)
        with open(path, "a", encoding="utf-8") as channel:
            channel.write(line(meter) + "\n")
    except Exception:  # noqa: BLE001 (a full disk, a removed channel, an odd bar)
        pass


def forward() -> None:
    """From now on, every tqdm bar of this process also sends its line to the file ``CHANNEL``
    names (``_send``; nothing while it names none). tqdm's base class is wrapped, not a
    module's name, so that bars made by modules that import tqdm themselves (``parallel``,
    ``pretrain``, the Trainer's) are forwarded too. Called by a notebook's kernel at its start
    (``execution.FORWARD``); a second call changes nothing."""
    if getattr(std.tqdm, "_forwarded", False):
        return
    update, close = std.tqdm.update, std.tqdm.close

    def forwarding_update(self, n=1):
        shown = update(self, n)
        _send(self, closing=False)
        return shown

    def forwarding_close(self):
        _send(self, closing=True)
        close(self)

    std.tqdm.update, std.tqdm.close = forwarding_update, forwarding_close
    std.tqdm._forwarded = True


@contextmanager
def relayed(path: Path, show: Callable[[str], None], poll: float = 0.5) -> Iterator[None]:
    """While open, ``CHANNEL`` names ``path`` (an empty file) for the processes started
    meanwhile, and each line written there is handed to ``show`` within ``poll`` seconds; on
    leaving, the last lines are shown, the variable restored and the file removed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")
    before = os.environ.get(CHANNEL)
    os.environ[CHANNEL] = str(path)
    stop = threading.Event()

    def pump() -> None:
        rest = b""
        with open(path, "rb") as channel:
            while True:
                last = stop.wait(poll)
                *lines, rest = (rest + channel.read()).split(b"\n")
                for text in lines:
                    show(text.decode("utf-8", errors="replace"))
                if last:
                    return

    reader = threading.Thread(target=pump, name="progress relay", daemon=True)
    reader.start()
    try:
        yield
    finally:
        stop.set()
        reader.join()
        if before is None:
            os.environ.pop(CHANNEL, None)
        else:
            os.environ[CHANNEL] = before
        path.unlink(missing_ok=True)
