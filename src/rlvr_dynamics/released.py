"""What the results release held at a commit, read from git: ``release/<profile>/<x>`` holds
the store's ``results/<profile>/<x>``, a record gzipped as ``<x>.gz`` (``release.stored``).

A registration (a plan, a protocol) is proven written before a run when the release of the
commit the run began from holds it byte for byte (``committed_before``); the commit that first
released it dates it (``first_commit``). Both read a gzipped record back as the store wrote it.
(``rl.registration._at`` reads the plain name only, which the release stopped writing for
records at 4857565; it stays while the training code is frozen, ``known_at`` reading a done
marker, which is never gzipped.)
"""
from __future__ import annotations

import gzip
import subprocess
from pathlib import Path

from rlvr_dynamics import REPO
from rlvr_dynamics.rl.registration import started
from rlvr_dynamics.store import relative

RELEASE = "release"
"""The results release's folder in the repository."""


def names(path: Path) -> list[str] | None:
    """The names under which the release may hold the stored file ``path``: as it is, and
    gzipped; None where ``path`` lies outside the results tree."""
    inside = relative(Path(path))
    if inside is None:
        return None
    plain = f"{RELEASE}/{inside.as_posix()}"
    return [plain, plain + ".gz"]


def at(commit: str, path: Path, repo: Path = REPO) -> bytes | None:
    """The bytes of the stored file ``path`` as the store wrote them, from the release of
    ``commit`` (a gzipped record decompressed); None where that release held neither name,
    ``commit`` is none or carries uncommitted changes, or ``path`` lies outside the results."""
    held = names(path)
    if held is None or not commit or commit.endswith("+changes") or commit == "unknown":
        return None
    for name in held:
        shown = subprocess.run(["git", "-C", str(repo), "show", f"{commit}:{name}"],
                               capture_output=True)
        if shown.returncode == 0:
            return gzip.decompress(shown.stdout) if name.endswith(".gz") else shown.stdout
    return None


def first_commit(path: Path, repo: Path = REPO) -> str | None:
    """The first commit (its full hash) whose release added the stored file ``path``, under
    either name; None where none did or ``path`` lies outside the results."""
    held = names(path)
    if held is None:
        return None
    shown = subprocess.run(["git", "-C", str(repo), "log", "--format=%H", "--diff-filter=A",
                            "--reverse", "--", *held], capture_output=True, text=True)
    first = shown.stdout.split()
    return first[0] if shown.returncode == 0 and first else None


def committed_before(record: Path, run: Path, repo: Path = REPO) -> bool | None:
    """Whether the registration stored at ``record`` was in the release of the commit ``run``
    began from, byte for byte: written down, in git, before the run. None where the run
    recorded no commit or began from uncommitted changes."""
    commit = (started(run) or {}).get("commit", "")
    if not commit or commit.endswith("+changes"):
        return None
    return at(commit, record, repo) == Path(record).read_bytes()
