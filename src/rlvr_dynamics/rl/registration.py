"""A registration: a record written into the store before the runs it judges (a prediction,
a plan), and the rule that a run is judged against it only if the run recorded, when it
began, the record's content hash and a later time (``rl.config.STARTED``, written once by
``runs.train``; a resume or a copy keeps it). A run without that record is shown, not judged.
"""
from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any, Sequence

from rlvr_dynamics.rl.config import STARTED
from rlvr_dynamics.store import config_key, read_json


def content_hash(record: dict[str, Any]) -> str:
    """The hash of a registration's whole content as stored (its time included): what a run
    records when it begins (``TrainConfig.registration``)."""
    return config_key(record)


def started(run: Path) -> dict[str, Any] | None:
    """When a run first began and the registration it was begun under (``rl.config.STARTED``,
    written once; a resume or a copy keeps it); None for a run that recorded neither."""
    path = Path(run) / STARTED
    return read_json(path) if path.is_file() else None


def registered_before(record: dict[str, Any], runs: Sequence[Path]) -> bool:
    """Whether every one of ``runs`` recorded, when it began, ``record``'s content hash and a
    time not before the registration's: only such runs are judged against it. (Times are kept
    to the second, and a run that begins in the registration's second is after it: the hash it
    recorded covers the registration's content, time included, which did not exist before.)"""
    at, key = datetime.fromisoformat(record["registered"]), content_hash(record)
    begun = [started(r) for r in runs]
    return all(b is not None and b["registration"] == key
               and at <= datetime.fromisoformat(b["time"]) for b in begun)
