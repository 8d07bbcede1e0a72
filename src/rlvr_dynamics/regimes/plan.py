"""A chapter's plan registered in two phases, so that git can prove it came before its runs
(issue 51, item 6).

Phase 1 writes the plan into the store (every prediction and rule its runs are judged by,
with the time: ``register``) and trains no run it judges; the plan is then released
(``make release``) and committed. Phase 2 trains the runs, each recording the plan's content
hash and the commit it began from (``rl.runs.train``), and judges a run only where the plan
was committed, byte for byte, in that commit's results release (``released
.committed_before``), labelling it a *replay* where the run itself was already released there
(``rl.registration.known_at``): ``judge``.

Confirmatory runs use seeds never run before (``run_before``): no training run on the sums base
in any profile's results release or in the results store here carries one, nor does any
profile declare one for a chapter other than the plan's own.
"""
from __future__ import annotations

import gzip
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Sequence

import yaml

from rlvr_dynamics import REPO
from rlvr_dynamics.regimes import clock, mechanism  # noqa: F401 (the rules the plan is keyed by)
from rlvr_dynamics.released import RELEASE, committed_before, first_commit
from rlvr_dynamics.rl.registration import content_hash, known_at, registered_before
from rlvr_dynamics.store import Entry, config_key, read_json, results_dir, results_root, write_json

RECORD = "plan.json"


def location(profile: str, chapter: str, what: dict[str, Any]) -> Entry:
    """The store entry of the plan ``what`` (keyed by its content, never by its time; made by
    this module's code, which imports the rules it registers: a rule changed is a new plan)."""
    return Entry(results_dir(profile, chapter) / "plan" / config_key(what), code=__name__)


def registered(profile: str, chapter: str, what: dict[str, Any]) -> dict[str, Any] | None:
    """The plan ``what`` as registered, None where it is not yet."""
    entry = location(profile, chapter, what)
    return read_json(entry.path / RECORD) if entry.done else None


def register(profile: str, chapter: str, what: dict[str, Any],
             found: dict[str, Any] | None = None) -> dict[str, Any]:
    """The plan ``what`` registered: read back where it exists, else written now with the time
    (UTC, to the second) and what was ``found`` from its inputs (the numbers computed for it:
    kept beside its inputs, not in its key, so that a later phase finds the plan from its
    inputs alone); as stored, which is what its content hash is taken of."""
    entry = location(profile, chapter, what)
    if entry.done:
        return read_json(entry.path / RECORD)
    record = {"registered": datetime.now(timezone.utc).isoformat(timespec="seconds"), **what,
              **(found or {})}
    write_json(entry.begin(fresh=True) / RECORD, record)
    entry.finish({"registered": record["registered"]})
    return read_json(entry.path / RECORD)


def record_file(profile: str, chapter: str, what: dict[str, Any]) -> Path:
    """Where the plan's record lies in the store (what ``committed_before`` compares)."""
    return location(profile, chapter, what).path / RECORD


def judge(record: dict[str, Any], file: Path, run: Path, repo: Path = REPO) -> dict[str, Any]:
    """Whether ``run`` (its folder) may be judged against the plan ``record`` (stored at
    ``file``): it recorded the plan's hash and began after it (``registered before``), the plan
    was in the results release of the commit the run began from (``committed before``: None
    where the run began from uncommitted changes or recorded no commit), and whether the run
    itself was released there already (``replay``). ``judged``: both of the first."""
    before = registered_before(record, [run])
    committed = committed_before(file, run, repo)
    return {"registered before": before, "committed before": committed,
            "replay": known_at(run, repo), "judged": bool(before and committed)}


def _training_configs(roots: Iterable[Path]) -> Iterable[tuple[str, dict[str, Any]]]:
    """Each training run's settings under ``roots`` (a store, or the release: its configs
    gzipped, ``release.stored``), by its folder."""
    for root in roots:
        for config in sorted(Path(root).glob("*/training/*/config.json*")):
            read = (json.loads(gzip.decompress(config.read_bytes())) if config.suffix == ".gz"
                    else read_json(config))
            yield config.parent.relative_to(root).as_posix(), read


def _declared(configs: Path, own: str) -> dict[int, list[str]]:
    """Seed -> the profiles' chapters that declare it (``seeds`` or ``calibration_seeds``),
    other than the chapter ``own``."""
    out: dict[int, list[str]] = {}
    for path in sorted(Path(configs).glob("*.yaml")):
        notebooks = (yaml.safe_load(path.read_text()) or {}).get("notebooks") or {}
        for name, values in notebooks.items():
            if name == own or not isinstance(values, dict):
                continue
            for key in ("seeds", "calibration_seeds"):
                if isinstance(values.get(key), list):
                    for s in values[key]:
                        out.setdefault(s, []).append(f"{path.stem}: {name}")
    return out


def run_before(seeds: Sequence[int], own: str, defaults: Sequence[int] = (),
               release: Path = REPO / RELEASE, configs: Path = REPO / "configs",
               store: Path | None = None) -> dict[int, list[str]]:
    """Each of ``seeds`` that was run or declared before -> where: a training run on the sums
    base with that seed in a profile's results ``release`` or in the results ``store`` (None:
    ``store.results_root()``), a profile's chapter other than ``own`` that declares it
    (``configs``), or the grid's default seeds (``defaults``). Empty: every seed is fresh."""
    roots = [release, results_root() if store is None else store]
    out: dict[int, list[str]] = {}
    for where, config in _training_configs(roots):
        if isinstance(config.get("model"), dict) and config.get("seed") in seeds:
            out.setdefault(config["seed"], []).append(where)
    for seed, places in _declared(configs, own).items():
        if seed in seeds:
            out.setdefault(seed, []).extend(places)
    for seed in defaults:
        if seed in seeds:
            out.setdefault(seed, []).append("the grid's default seeds")
    return out


def plan_hash(record: dict[str, Any]) -> str:
    """The plan's content hash, which every run it judges records."""
    return content_hash(record)


def committed_in(file: Path, repo: Path = REPO) -> str | None:
    """The first commit whose results release holds the plan stored at ``file`` (its short
    hash), None where no commit does."""
    first = first_commit(file, repo)
    return first and first[:7]
