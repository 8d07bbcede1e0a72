"""A registration: a record written into the store before the runs it judges (a prediction,
a plan), and the rule that a run is judged against it only if the run recorded, when it
began, the record's content hash and a later time (``rl.config.STARTED``, written once by
``runs.train``; a resume or a copy keeps it). A run without that record is shown, not judged.

A time proves that the record existed before the run, not that the run's outcome was unknown:
runs are deterministic given their settings and code, so a rebuild replays known outcomes.
Two more facts say more, each read from git: the run also records the commit it began from,
and the record committed in that commit's results release (``committed_before``) was written
down before that commit's runs; a run already in that release (``known_at``) is a replay.
"""
from __future__ import annotations

import subprocess
from datetime import datetime
from pathlib import Path
from typing import Any, Sequence

from rlvr_dynamics import REPO
from rlvr_dynamics.rl.config import STARTED
from rlvr_dynamics.store import config_key, read_json, relative


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


RELEASE = "release"
"""The results release's folder in the repository: ``results/<profile>/<x>`` is released at
``release/<profile>/<x>`` (``rlvr_dynamics.release``)."""


def _at(commit: str, path: Path, repo: Path = REPO) -> bytes | None:
    """The bytes that the release held at ``commit`` for the stored file ``path`` (inside the
    results tree), None where it held none there, the commit is not one, or ``path`` lies
    outside the results tree."""
    inside = relative(path)
    if inside is None or not commit or commit.endswith("+changes") or commit == "unknown":
        return None
    shown = subprocess.run(["git", "-C", str(repo), "show",
                            f"{commit}:{RELEASE}/{inside.as_posix()}"], capture_output=True)
    return shown.stdout if shown.returncode == 0 else None


def committed_before(record: Path, run: Path, repo: Path = REPO) -> bool | None:
    """Whether the registration stored at ``record`` (a file) was committed, byte for byte, in
    the results release of the commit ``run`` began from: written down before the run, in
    git. None where the run recorded no commit or began from uncommitted changes."""
    begun = started(run) or {}
    commit = begun.get("commit", "")
    if not commit or commit.endswith("+changes"):
        return None
    return _at(commit, record, repo) == Path(record).read_bytes()


def known_at(run: Path, repo: Path = REPO) -> bool:
    """Whether ``run`` (its folder, named by its settings) was already in the results release
    of the commit it began from: its outcome was known, so this run replays it."""
    commit = (started(run) or {}).get("commit", "")
    return _at(commit, Path(run) / "done.json", repo) is not None
