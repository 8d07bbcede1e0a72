"""Results on disk: one folder per profile and chapter, files written atomically.

A result is keyed by the hash of the settings that produced it, so a finished computation is
found again instead of being recomputed, and runs with other settings never overwrite it.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Callable

import numpy as np

from rlvr_dynamics import REPO


def results_dir(profile: str, chapter: str) -> Path:
    """``results/<profile>/<chapter>/`` (``$RLVR_RESULTS`` replaces ``results/``), created."""
    root = Path(os.environ.get("RLVR_RESULTS", REPO / "results"))
    path = root / profile / chapter
    path.mkdir(parents=True, exist_ok=True)
    return path


def config_key(settings: dict[str, Any]) -> str:
    """A short stable hash of JSON-serialisable settings (key order does not matter)."""
    blob = json.dumps(settings, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:12]


def _atomic(path: Path, write: Callable[[Path], None]) -> Path:
    """Write through a temporary file in the same folder, then rename over ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(Path(tmp))
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def write_json(path: Path, obj: Any) -> Path:
    """Atomically write ``obj`` as indented JSON."""
    return _atomic(path, lambda p: p.write_text(json.dumps(obj, indent=1, default=_jsonable)))


def read_json(path: Path) -> Any:
    return json.loads(Path(path).read_text())


def write_npz(path: Path, **arrays: np.ndarray) -> Path:
    """Atomically write numpy arrays (``np.savez_compressed``)."""
    def write(p: Path) -> None:
        with open(p, "wb") as f:
            np.savez_compressed(f, **arrays)
    return _atomic(path, write)


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
