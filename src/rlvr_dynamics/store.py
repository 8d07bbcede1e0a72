"""Results on disk: one folder per profile and chapter, one find-or-compute for everything.

A result lives in a folder named by the hash of the settings that produce it
(``config_key``), so a finished computation is found again and other settings never overwrite
it. The folder also records which *code* made it (``code_fingerprint``: the producing module
and every package module it imports, docstrings and comments left out, plus the versions of
the libraries that compute), so a result of older code is never reused silently:

    entry = Entry(results_dir(profile, "evaluation") / name, code="rlvr_dynamics.evaluation")
    if not entry.done:
        entry.begin()          # parts of an unfinished result by other code are removed
        ...                    # write parts into entry.path (resumable), then
        entry.finish(summary)  # the done marker, written last

``RLVR_REUSE_STALE=1`` (``run --reuse-stale``) keeps a finished result of other code on
purpose; every such reuse is logged in ``results/<profile>/stale.json`` and the book's run
report lists them. Writes are atomic: a temporary file, fsync'd, renamed over the target, and
the folder fsync'd.
"""
from __future__ import annotations

import ast
import functools
import hashlib
import importlib.metadata
import json
import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable

import numpy as np

from rlvr_dynamics import REPO
from rlvr_dynamics.imports import closure, modules

log = logging.getLogger(__name__)

LIBRARIES = ("numpy", "torch", "transformers", "trl", "peft")
"""Libraries whose version is part of every code fingerprint (they do the arithmetic)."""

DONE = "done.json"
CODE = "code.json"


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
def _module_hash(module: str) -> str:
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
def code_fingerprint(module: str) -> str:
    """A hash of the code behind ``module``'s results: its source and that of every package
    module it imports (transitively; ``BOOKKEEPING`` left out), without docstrings or comments,
    and the versions of ``LIBRARIES``. Editing prose leaves it unchanged; editing code changes
    it."""
    parts = {m: _module_hash(m) for m in closure(module) if m not in BOOKKEEPING}
    parts |= {f"lib:{name}": _version(name) for name in LIBRARIES}
    return config_key(parts)


def reuse_stale() -> bool:
    """Whether finished results of other code are kept on purpose (``RLVR_REUSE_STALE=1``)."""
    return os.environ.get("RLVR_REUSE_STALE", "") not in ("", "0")


class Entry:
    """One result's folder, made by the code of ``code`` (a module name of the package)."""

    def __init__(self, path: Path, code: str) -> None:
        self.path, self.module = Path(path), code
        self.code = code_fingerprint(code)

    def _marker(self, name: str) -> dict | None:
        try:
            return read_json(self.path / name)
        except (OSError, ValueError):
            return None

    @property
    def done(self) -> bool:
        """Finished by this code; or finished by other code and ``reuse_stale()`` (logged)."""
        marker = self._marker(DONE)
        if marker is None:
            return False
        if marker.get("code") == self.code:
            return True
        if reuse_stale():
            _log_stale(self.path, marker.get("code"), self.code)
            return True
        log.info("%s was computed by other code (%s, now %s): computing it again",
                 self.path, marker.get("code"), self.code)
        return False

    def begin(self, fresh: bool = False) -> Path:
        """Make the folder ready to (re)compute into: removed first if ``fresh``, if it holds a
        result of other code, or parts begun by other code; parts of this code are kept."""
        started = self._marker(CODE)
        if fresh or (self.path.exists() and (started or {}).get("code") != self.code):
            shutil.rmtree(self.path, ignore_errors=True)
        self.path.mkdir(parents=True, exist_ok=True)
        if not (self.path / CODE).is_file():
            write_json(self.path / CODE, {"module": self.module, "code": self.code})
        return self.path

    def finish(self, info: dict[str, Any] | None = None) -> Path:
        """Write the done marker (last): the result is complete."""
        write_json(self.path / DONE, {**(info or {}), "module": self.module, "code": self.code})
        return self.path


def obtain(entry: Entry, compute: Callable[[Path], dict[str, Any] | None], *,
           recompute: bool = False) -> Path:
    """``entry``'s folder, computed first by ``compute(folder)`` (which returns the done
    marker's info) unless it is done; ``recompute`` starts afresh."""
    if recompute or not entry.done:
        entry.begin(fresh=recompute)
        entry.finish(compute(entry.path))
    return entry.path


def _log_stale(path: Path, old: str | None, new: str) -> None:
    try:
        profile = Path(path).resolve().relative_to(results_root().resolve()).parts[0]
    except ValueError:
        return
    ledger = results_root() / profile / "stale.json"
    rows = read_json(ledger) if ledger.is_file() else []
    row = {"result": str(Path(path).relative_to(results_root() / profile)), "made_by": old,
           "current": new}
    if row not in rows:
        log.warning("reusing %s, computed by other code (%s; current %s)", path, old, new)
        write_json(ledger, rows + [row])


def stale_reused(profile: str) -> list[dict[str, str]]:
    """Results that ``reuse_stale`` kept under ``profile`` (for the run report)."""
    ledger = results_root() / profile / "stale.json"
    return read_json(ledger) if ledger.is_file() else []


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
    return json.loads(Path(path).read_text())


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
