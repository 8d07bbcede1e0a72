"""Results on disk: one folder per profile and chapter, one find-or-compute for everything.

A result lives in a folder named by the hash of the settings that produce it
(``config_key``), so a finished computation is found again and other settings never overwrite
it. The folder also records which *code* made it (``code_fingerprint``: the producing module
and every package module it imports, docstrings and comments left out, plus the versions of
the libraries that compute), so a result of older code is never reused silently. Of the
task modules it covers only those the result computes on (``task_modules`` of a run's or an
evaluation's task objects; ``scoped_fingerprint`` for a chapter's pages and verdicts): editing
one task leaves the results on the others where they were.

    entry = Entry(results_dir(profile, "evaluation") / name, code="rlvr_dynamics.measure")
    if not entry.done:
        entry.begin()          # parts of an unfinished result by other code are removed
        ...                    # write parts into entry.path (resumable), then
        entry.finish(summary)  # the done marker, written last

``RLVR_REUSE_STALE=1`` (``run --reuse-stale``) keeps a finished result of other code on
purpose; every such reuse is logged in ``results/<profile>/stale.json`` (``$RLVR_STALE_LEDGER``
replaces it: publishing keeps one per page) and the book's run report lists them. Writes are atomic: a temporary file, fsync'd, renamed over the target, and
the folder fsync'd.

What is read back is checked. The done marker records the size and sha256 of every file in the
folder, recursively (the two markers left out, and what ``finish(scratch=...)`` names: the
checkpoints it removes once the result is complete). ``Entry.done`` compares them, sizes first
(a stat per file), contents only when every size agrees; a file is hashed at most once per
process for a given (path, size, mtime), so a 500 MB model is read once. A result whose files
do not match (missing, another size, changed) is logged, *set aside* (moved, never deleted) to
``results/<profile>/damaged/<relative path>-<UTC time>/``, recorded in
``results/<profile>/damaged.json`` (result, what was wrong, where it went; a folder outside the
results root goes to ``damaged/`` beside it, ledger there too), and is then not done, so
find-or-compute computes it again; the run report lists these. Files added after the marker are
not part of the result and are left alone (a checkpoint left by a crash between the marker and
its removal must not discard a sound result). A marker written before these checks has no
checksums: its result is done by its code fingerprint alone, as before, since ``--reuse-stale``
must still keep such results (requiring checksums would have ``begin`` remove them). A stored
JSON file that cannot be read back raises ``Damaged``, which names the file and the remedy.

A result restored from the results release (``release.restore``) lacks the files the release
withholds (model weights), which its ``withheld.json`` lists: it is done for what reads its other
files (``Entry.done``), not for what needs those (``Entry.whole``; ``withheld_from`` names the
result that holds a missing folder). ``RLVR_READ_ONLY=1`` (set while a book is published from
the release) makes every result of the library that is not found an error (``NotStored``)
instead of a computation: publishing computes nothing but a chapter's own records.
"""
from __future__ import annotations

import ast
import dataclasses
import functools
import hashlib
import importlib.metadata
import json
import logging
import os
import shutil
import subprocess
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from rlvr_dynamics import REPO
from rlvr_dynamics.imports import TASKS, closure, modules, task_scope

log = logging.getLogger(__name__)

LIBRARIES = ("numpy", "torch", "transformers", "trl", "peft")
"""Libraries whose version is part of every code fingerprint (they do the arithmetic)."""

DONE = "done.json"
CODE = "code.json"
CLAIMED = ".done.json.damaged"
"""The done marker of a damaged result while one process sets the result aside."""
WITHHELD = "withheld.json"
"""In a result restored from the release: name -> {size, sha256} of the files it withheld."""


class Damaged(ValueError):
    """A stored file that cannot be read back."""


CHAPTERS = "rlvr_dynamics.chapters"
"""The package of the chapters, whose own records (verdicts, markers) are cheap: written even
while the library is read only."""


class NotStored(RuntimeError):
    """A result that ``RLVR_READ_ONLY`` forbids computing (publishing from the release)."""


class PartOver(RuntimeError):
    """A training run not begun because the part's time ran out (``RLVR_STOP_AFTER``)."""


def past_deadline() -> str | None:
    """The time (UTC, ISO) after which a part begins no new training run
    (``RLVR_STOP_AFTER``, set by ``run --part --hours``), where it has passed; else None."""
    after = os.environ.get("RLVR_STOP_AFTER")
    if after and datetime.now(timezone.utc) >= datetime.fromisoformat(after):
        return after
    return None


def read_only() -> bool:
    """Whether results of the library may only be read (``RLVR_READ_ONLY=1``): a chapter's
    own records (``rlvr_dynamics.chapters.*``) are still written."""
    return os.environ.get("RLVR_READ_ONLY", "") not in ("", "0")


def results_root() -> Path:
    """``results/`` (``$RLVR_RESULTS`` replaces it)."""
    return Path(os.environ.get("RLVR_RESULTS", REPO / "results"))


def results_dir(profile: str, chapter: str) -> Path:
    """``results/<profile>/<chapter>/``, created."""
    path = results_root() / profile / chapter
    path.mkdir(parents=True, exist_ok=True)
    return path


def config_key(settings: dict[str, Any]) -> str:
    """A short stable hash of JSON-serialisable settings (key order does not matter)."""
    blob = json.dumps(settings, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:12]


# --- which code made a result ----------------------------------------------------------------

def _is_prose(statement: ast.stmt) -> bool:
    """A bare string statement: a docstring, of a module, class or function or of the
    attribute assigned just before it; it computes nothing."""
    return (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
            and isinstance(statement.value.value, str))


def _without_docstrings(source: str) -> str:
    """``source``'s syntax tree without comments and without any bare string statement
    (``_is_prose``), so that rewording leaves a fingerprint alone."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            statements = getattr(node, field, None)
            if isinstance(statements, list) and any(isinstance(s, ast.stmt) and _is_prose(s)
                                                    for s in statements):
                setattr(node, field, [s for s in statements if not _is_prose(s)] or [ast.Pass()])
    return ast.dump(tree)


@functools.cache
def module_hash(module: str) -> str:
    return hashlib.sha256(_without_docstrings(modules()[module].read_text()).encode()).hexdigest()


def _version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "absent"


BOOKKEEPING = ("rlvr_dynamics", "rlvr_dynamics.imports", "rlvr_dynamics.store",
               "rlvr_dynamics.progress")
"""Modules that decide where results are kept, how they are fingerprinted and how progress is
shown, not what the results are: left out of every fingerprint, so that editing them does not
recompute the book (every module imports them)."""


@functools.cache
def code_fingerprint(module: str, tasks: tuple[str, ...] | None = None) -> str:
    """A hash of the code behind ``module``'s results: its source and that of every package
    module it imports (transitively; ``BOOKKEEPING`` left out), without docstrings or comments,
    and the versions of ``LIBRARIES``. Editing prose leaves it unchanged; editing code changes
    it. ``tasks``: where given, the task modules the result was computed on
    (``task_modules``); the other modules of ``TASKS`` that ``module`` imports (to build tasks
    this result never meets) are left out, so that editing one task does not re-key the
    results on another."""
    names = closure(module)
    if tasks is not None:
        used = {m for t in tasks for m in closure(t)}
        names = [m for m in names if not m.startswith(TASKS) or m in used]
    parts = {m: module_hash(m) for m in names if m not in BOOKKEEPING}
    parts |= {f"lib:{name}": _version(name) for name in LIBRARIES}
    return config_key(parts)


def scoped_fingerprint(module: str) -> str:
    """``code_fingerprint`` of ``module`` on the tasks its own imports reach
    (``imports.task_scope``): a chapter's pages and verdicts, which an edit of a task they never
    compute on leaves as they were."""
    return code_fingerprint(module, task_scope(module))


def task_modules(*objects: Any) -> tuple[str, ...]:
    """The modules of ``TASKS`` whose classes ``objects`` hold: the objects themselves and,
    recursively, their dataclass fields and the items of their dicts, lists and tuples."""
    found: set[str] = set()

    def walk(x: Any) -> None:
        if type(x).__module__.startswith(TASKS):
            found.add(type(x).__module__)
        if dataclasses.is_dataclass(x) and not isinstance(x, type):
            for f in dataclasses.fields(x):
                walk(getattr(x, f.name))
        elif isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, (list, tuple)):
            for v in x:
                walk(v)

    for x in objects:
        walk(x)
    return tuple(sorted(found))


def checkout_commit(short: bool = False) -> str:
    """The commit of this checkout (``REPO``), with "+changes" where tracked files outside the
    results release (``release/``) differ from it; "unknown" outside git. A run records it when
    it begins (``rl.runs.train``), so that a registration can be shown to have been committed
    before it. The release is left out: ``make part`` writes its ledger there as a part starts,
    and a release changes no run."""
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", *(["--short"] if short else []),
                           "HEAD"], capture_output=True, text=True).stdout.strip() or "unknown"
    dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain",
                            "--untracked-files=no", "--", ".", ":(exclude)release"],
                           capture_output=True, text=True).stdout.strip()
    return head + ("+changes" if dirty else "")


def reuse_stale() -> bool:
    """Whether finished results of other code are kept on purpose (``RLVR_REUSE_STALE=1``)."""
    return os.environ.get("RLVR_REUSE_STALE", "") not in ("", "0")


class Entry:
    """One result's folder, made by the code of ``code`` (a module name of the package) on the
    task modules ``tasks`` (``code_fingerprint``; None: every one ``code`` imports)."""

    def __init__(self, path: Path, code: str, tasks: tuple[str, ...] | None = None) -> None:
        self.path, self.module = Path(path), code
        self.code = code_fingerprint(code, tasks)

    def _marker(self, name: str) -> dict | None:
        try:
            return read_json(self.path / name)
        except (OSError, ValueError):
            return None

    @property
    def done(self) -> bool:
        """Finished by this code (or by other code and ``reuse_stale()``, logged) with every
        file as it was finished; a damaged result is set aside (``set_aside``), not done."""
        marker = self._marker(DONE)
        if marker is None:
            return False
        if marker.get("code") != self.code and not self._keeps_stale():
            log.info("%s was computed by other code (%s, now %s): computing it again",
                     self.path, marker.get("code"), self.code)
            return False
        held = set(self.withheld)
        files = {n: f for n, f in marker.get("files", {}).items() if n not in held}
        wrong = damage(self.path, files) if "files" in marker else []
        if wrong:
            set_aside(self.path, wrong)
            return False
        if marker.get("code") != self.code:
            _log_stale(self.path, marker.get("code"), self.code)
        return True

    def _keeps_stale(self) -> bool:
        """Whether a finished result of other code is kept (``reuse_stale``), except a
        chapter's own record while the library is read only: it is cheap, and made again."""
        return reuse_stale() and not (read_only() and self.module.startswith(CHAPTERS))

    @property
    def withheld(self) -> list[str]:
        """The files of this result that the release withheld and that are not here (a result
        restored from it: ``WITHHELD``); [] for a result computed here."""
        listed = self._marker(WITHHELD) or {}
        return sorted(n for n in listed if not (self.path / n).is_file())

    @property
    def whole(self) -> bool:
        """Done with every file it was finished with, weights included: what loads them needs
        this (a result restored without its weights is computed again, ``fresh``)."""
        return self.done and not self.withheld

    def begin(self, fresh: bool = False) -> Path:
        """Make the folder ready to (re)compute into: removed first if ``fresh``, if it holds a
        result of other code, or parts begun by other code; parts of this code are kept."""
        if read_only() and not self.module.startswith(CHAPTERS):
            raise NotStored(f"{self.path} ({self.module}) is not stored, or was made by other "
                            "code, and RLVR_READ_ONLY forbids computing it: publishing from "
                            "the release computes nothing; make reproduce PROFILE=<its "
                            "profile> computes it")
        started = self._marker(CODE)
        other = self.path.exists() and (started or {}).get("code") != self.code
        if fresh or other or self.withheld:
            shutil.rmtree(self.path, ignore_errors=True)
        self.path.mkdir(parents=True, exist_ok=True)
        if not (self.path / CODE).is_file():
            write_json(self.path / CODE, {"module": self.module, "code": self.code})
        return self.path

    def finish(self, info: dict[str, Any] | None = None, scratch: Sequence[str] = ()) -> Path:
        """Write the done marker (last): the result is complete. It records every file's size
        and sha256 (``manifest``); ``scratch`` names what only served the computation
        (checkpoints), left out and removed once the marker is written."""
        write_json(self.path / DONE, {**(info or {}), "module": self.module, "code": self.code,
                                      "files": manifest(self.path, skip=scratch)})
        for name in scratch:
            _remove(self.path / name)
        return self.path


def obtain(entry: Entry, compute: Callable[[Path], dict[str, Any] | None], *,
           recompute: bool = False) -> Path:
    """``entry``'s folder, computed first by ``compute(folder)`` (which returns the done
    marker's info) unless it is done; ``recompute`` starts afresh."""
    if recompute or not entry.done:
        entry.begin(fresh=recompute)
        entry.finish(compute(entry.path))
    return entry.path


def relative(path: Path) -> Path | None:
    """``path`` relative to the results root (both resolved; ``path`` need not exist), None
    for a path outside it: how one result names another wherever the results folder lies."""
    try:
        return Path(path).resolve().relative_to(results_root().resolve())
    except ValueError:
        return None


def _profile_home(path: Path) -> tuple[Path, Path] | None:
    """``results/<profile>/``, which keeps the ledgers of ``path``, and ``path`` relative to
    it; None for a path outside the results root."""
    rel = relative(path)
    if rel is None:
        return None
    return (results_root() / rel.parts[0], Path(*rel.parts[1:])) if len(rel.parts) > 1 else None


def origin(path: Path) -> dict[str, Any] | None:
    """What ``path`` (a file or folder inside the results tree) is, without saying where the
    tree lies: the finished result that holds it (the nearest folder at or above it with a done
    marker, relative to the results root), the code that made that result, ``path`` inside it,
    and the sha256 the marker recorded for each of ``path``'s files. Read from the marker
    alone, so ``path`` itself need not be on disk. None outside the results tree, where no
    finished result holds it, or where the nearest marker lists files but none of ``path``'s
    (a folder that result did not make)."""
    rel = relative(path)
    if rel is None:
        return None
    for n in range(len(rel.parts), -1, -1):
        result, inner = Path(*rel.parts[:n]), Path(*rel.parts[n:]).as_posix()
        marker = results_root() / result / DONE
        if not marker.is_file():
            continue
        try:
            done = json.loads(marker.read_text())
        except (OSError, ValueError):
            return None
        inside = inner in (".", "")
        files = {name: f["sha256"] for name, f in done.get("files", {}).items()
                 if inside or name == inner or name.startswith(inner + "/")}
        if "files" in done and not files:
            return None
        return {"result": result.as_posix(), "code": done.get("code"),
                "path": "" if inside else inner, "files": files}
    return None


def withheld_from(path: Path) -> str | None:
    """The result (relative to the results root) that holds ``path`` and whose release
    withheld it, where ``path`` is not on disk; else None."""
    made = origin(path) if not Path(path).exists() else None
    if made is None:
        return None
    listed = (results_root() / made["result"] / WITHHELD)
    try:
        names = json.loads(listed.read_text()) if listed.is_file() else {}
    except ValueError:
        return None
    inner = made["path"]
    return made["result"] if any(n == inner or n.startswith(inner + "/") for n in names) else None


def _ledger(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_text()) if path.is_file() else []


def _log_stale(path: Path, old: str | None, new: str) -> None:
    if (home := _profile_home(path)) is None:
        return
    ledger = Path(os.environ.get("RLVR_STALE_LEDGER") or home[0] / "stale.json")
    rows = _ledger(ledger)
    row = {"result": str(home[1]), "made_by": old, "current": new}
    if row not in rows:
        log.warning("reusing %s, computed by other code (%s; current %s)", path, old, new)
        write_json(ledger, rows + [row])


def stale_reused(profile: str) -> list[dict[str, str]]:
    """Results that ``reuse_stale`` kept under ``profile`` (for the run report)."""
    return _ledger(results_root() / profile / "stale.json")


# --- what is read back is what was finished ---------------------------------------------------

def manifest(folder: Path, skip: Sequence[str] = ()) -> dict[str, dict[str, Any]]:
    """Relative path -> {size, sha256} of every file under ``folder`` (recursively), the markers
    and the top-level names in ``skip`` (files or folders) left out."""
    folder, left_out = Path(folder), {DONE, CODE, *skip}
    files = sorted(p for p in folder.rglob("*") if p.is_file()
                   and p.relative_to(folder).parts[0] not in left_out)
    return {p.relative_to(folder).as_posix(): {"size": p.stat().st_size, "sha256": digest(p)}
            for p in files}


def digest(path: Path) -> str:
    """``path``'s sha256, computed at most once per process for a given (path, size, mtime)."""
    st = Path(path).stat()
    return _digest(str(Path(path).absolute()), st.st_size, st.st_mtime_ns)


@functools.cache
def _digest(path: str, size: int, mtime_ns: int) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def damage(folder: Path, files: dict[str, dict[str, Any]]) -> list[str]:
    """What in ``folder`` differs from ``files`` (its ``manifest`` when finished), one line per
    file; [] when intact. Sizes are compared first and contents only if they all agree; files
    added since are not part of the result."""
    wrong = []
    for name, was in files.items():
        try:
            size = (Path(folder) / name).stat().st_size
        except FileNotFoundError:
            wrong.append(f"{name} is missing")
            continue
        if size != was["size"]:
            wrong.append(f"{name} has {size} bytes, {was['size']} when finished")
    if wrong:
        return wrong
    for name, was in files.items():
        try:
            if digest(Path(folder) / name) != was["sha256"]:
                wrong.append(f"{name} has changed (another sha256)")
        except FileNotFoundError:  # removed meanwhile (another process set it aside)
            wrong.append(f"{name} is missing")
    return wrong


def set_aside(path: Path, wrong: list[str]) -> Path | None:
    """Move the damaged result ``path`` to ``damaged/<relative path>-<UTC time>/`` in
    ``results/<profile>/`` (in its parent folder outside the results root), record it in
    ``damaged.json`` there, and return where it went. Its done marker is renamed first, so that
    of processes finding the same damage at once one moves it (the others get None)."""
    path = Path(path)
    try:
        os.rename(path / DONE, path / CLAIMED)
    except FileNotFoundError:
        return None
    home, rel = _profile_home(path) or (path.parent, Path(path.name))
    now = datetime.now(timezone.utc)
    aside = home / "damaged" / f"{rel}-{now:%Y%m%dT%H%M%S.%fZ}"
    aside.parent.mkdir(parents=True, exist_ok=True)
    os.rename(path, aside)
    os.rename(aside / CLAIMED, aside / DONE)
    log.warning("%s is damaged (%s): set aside in %s; computing it again", path,
                "; ".join(wrong), aside)
    row = {"result": str(rel), "wrong": wrong, "set_aside": str(aside.relative_to(home)),
           "at": f"{now:%Y-%m-%d %H:%M} UTC"}
    write_json(home / "damaged.json", _ledger(home / "damaged.json") + [row])
    return aside


def damaged_set_aside(profile: str) -> list[dict[str, Any]]:
    """The damaged results set aside under ``profile`` (ledger rows: ``result``, ``wrong``,
    ``set_aside``, ``at``), each with ``recomputed``: whether the result is finished again
    (for the run report)."""
    home = results_root() / profile
    return [{**row, "recomputed": (home / row["result"] / DONE).is_file()}
            for row in _ledger(home / "damaged.json")]


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


# --- atomic files -----------------------------------------------------------------------------

def atomic_write(path: Path, write: Callable[[Any], None], mode: str) -> Path:
    """Write through a temporary file in the same folder, fsync it, rename it over ``path``,
    and fsync the folder, so that a crash leaves either the old file or the new one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode) as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def write_json(path: Path, obj: Any) -> Path:
    """Atomically write ``obj`` as indented JSON."""
    text = json.dumps(obj, indent=1, default=_jsonable)
    return atomic_write(path, lambda f: f.write(text), "w")


def read_json(path: Path) -> Any:
    """The JSON stored in ``path``, a file of the result folder ``path.parent``; a file missing
    or not JSON is ``Damaged``, an error that names it and says how to compute it again."""
    path = Path(path)
    try:
        return json.loads(path.read_text())
    except (FileNotFoundError, ValueError) as e:
        raise Damaged(f"{path} cannot be read back ({e}): the result in {path.parent} is "
                      "damaged; delete that folder and run again to compute it afresh") from e


def write_npz(path: Path, **arrays: np.ndarray) -> Path:
    """Atomically write numpy arrays (``np.savez_compressed``)."""
    return atomic_write(path, lambda f: np.savez_compressed(f, **arrays), "wb")


def read_npz(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON-serialisable: {type(obj).__name__}")
