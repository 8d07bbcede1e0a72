"""The results release: each profile's finished results kept in the repository, without weights.

``release/<profile>/`` holds the finished store entries of ``results/<profile>/`` (every folder
with a done marker: dynamics, evaluations, probes, registrations, verdict records), each file
where it lies under ``results/<profile>/``, and ``manifest.json``: the size and sha256 of every
released file (``files``); each entry's module, code fingerprint, the commit whose code has that
fingerprint (null where the checkout's code has another: older code), when it was begun and
finished (its files' times) and its withheld files (``entries``); and the parts that released
them (``parts``: one ``make release PROFILE=x`` each, with its commit, the profile's
parameters, the machine, the span in which its results were made and the call's own).

Model weights, merged models, checkpoints and optimizer states are withheld, by name
(``withheld``: ``WITHHELD_SUFFIXES``, ``WITHHELD_FOLDERS``); the bases' weights only once the
profile is complete and none of its pages loads them (``WEIGHTS_RELEASED``, ``keeps_bases``). Each released done marker is the
original, so it still lists their sizes and checksums, and the manifest lists them per entry:
the omission is visible, and weights found elsewhere can be checked against it.

``add`` refuses results that are unfinished (unless ``part``: then it releases what finished and
names the rest), damaged, made by code with uncommitted changes under ``src/``, different from
what an earlier part released under the same name, or over the budget (``PROFILE_BUDGET``,
``TOTAL_BUDGET``); the manifest is written last, and a part that fails removes what it copied
(one killed midway leaves files its manifest does not list: ``verify`` names them). ``verify``
checks a profile's release against its manifest.

    python -m rlvr_dynamics.release --profile cpu [--part] [--no-wait]   # make release
    python -m rlvr_dynamics.release --profile cpu --verify
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import itertools
import json
import os
import platform
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rlvr_dynamics import REPO, imports, lock
from rlvr_dynamics.chapters import ParameterError
from rlvr_dynamics.measure import WEIGHTS
from rlvr_dynamics.profiles import notebook_names, plan, profile_chapters
from rlvr_dynamics.store import (BOOKKEEPING, CLAIMED, CODE, DONE, WITHHELD, Damaged,
                                 atomic_write, code_fingerprint, damage, module_hash, read_json,
                                 results_root, stale_reused, write_json)

MANIFEST = "manifest.json"
LEDGER = "ledger.json"
"""Every part started (``start_part``), with its commit, machine and start; a part that
released its results also has its end and the manifest's part number (``add``), one cut off
has neither. Not in the manifest: it records what was begun, not what was kept."""
FORMAT = 1

WITHHELD_SUFFIXES = (*WEIGHTS, ".pth", ".ckpt")
"""Files of weights (``measure.WEIGHTS``) and of optimizer and random states (torch's
``optimizer.pt``, ``rng_state.pth``): withheld wherever they lie."""

WITHHELD_FOLDERS = ("model", "checkpoints", "checkpoint-*", "global_step*")
"""Folders withheld whole, inside a result: a run's merged model, the trainer's checkpoints
(TRL's ``checkpoint-N``, DeepSpeed's ``global_stepN``)."""

WEIGHTS_RELEASED = ("rlvr_dynamics.pretrain",)
"""The modules whose results keep their weights in the release while it needs them: the
pretrained bases (4 MB each at the book's size). Every run starts from one, and the same
``PretrainConfig`` pretrains other bytes on another CPU (lab notebook, section 55: sha256
f4fa3455 on an AMD EPYC, 8655e555 on an Intel Xeon), so a later part, on any machine, resumes
only from the released base. Once the profile is complete, they are withheld unless one of its
pages loads them (``PAGES_LOAD_BASES``)."""

PAGES_LOAD_BASES = ("base_model", "training")
"""The chapters whose pages load a base's weights when published: the base model's chapter
measures its base, the training chapter reads its weights' scale."""

NOT_RESULTS = ("damaged", "damaged.json", "stale.json", lock.LOCK)
"""What ``results/<profile>/`` holds beside results: set-aside results, the ledgers, the lock."""

PROFILE_BUDGET = 25_000_000
TOTAL_BUDGET = 150_000_000
"""The most bytes one profile's release, and all of ``release/``, may hold."""


class ReleaseError(ValueError):
    """A release refused or a mismatch found; the message names the profile, entry or file."""


def release_root() -> Path:
    """``release/`` (``$RLVR_RELEASE`` replaces it)."""
    return Path(os.environ.get("RLVR_RELEASE", REPO / "release"))


def withheld(name: str, module: str | None = None) -> bool:
    """Whether the file ``name`` (a path inside a result made by ``module``) is withheld from
    the release: a file of weights, or of optimizer state, or inside a withheld folder, unless
    ``module`` is one of ``WEIGHTS_RELEASED`` (kept while ``keeps_bases``)."""
    if module in WEIGHTS_RELEASED:
        return False
    parts = Path(name).parts
    return (Path(name).suffix in WITHHELD_SUFFIXES
            or any(Path(p).match(f) for p in parts[:-1] for f in WITHHELD_FOLDERS))


def keeps_bases(profile: str, complete: bool) -> bool:
    """Whether ``release/<profile>`` keeps its bases' weights: until the profile is
    ``complete`` (a later part resumes from them), and after it where a page loads them."""
    chapters = profile_chapters(profile) or notebook_names()
    return not complete or any(c in PAGES_LOAD_BASES for c in chapters)


def sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


AS_IS = (".npz", ".safetensors", ".gz", ".png", *WITHHELD_SUFFIXES)
"""Suffixes of files released as they are (compressed already, or binary); every other file
(JSON records, mostly: 43 MB of the default build's, 1.7 MB gzipped) is released gzipped."""


def stored(name: str) -> str:
    """The name under which the release keeps the result's file ``name``: ``name.gz`` where it
    is compressed (not ``AS_IS``; a result's markers, ``DONE`` and ``CODE``, never are)."""
    plain = Path(name).suffix in AS_IS or name in (DONE, CODE)
    return name if plain else name + ".gz"


def _content(f: dict[str, Any]) -> str:
    """The sha256 of what a released file holds: of its uncompressed bytes where gzipped."""
    return f.get("content", f["sha256"])


def _when(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="seconds")


def _mb(size: int) -> str:
    return f"{size / 1e6:.1f} MB"


# --- what the results hold ---------------------------------------------------------------------

def survey(profile: str) -> tuple[list[str], list[str], list[str]]:
    """``results/<profile>/``'s finished entries, unfinished ones (begun, no done marker) and
    the files outside both, as paths relative to it."""
    home = results_root() / profile
    finished, unfinished, loose = [], [], []

    def walk(folder: Path, inside: bool) -> None:
        for p in sorted(folder.iterdir()):
            rel = p.relative_to(home).as_posix()
            if folder == home and p.name in NOT_RESULTS:
                continue
            if p.is_dir():
                if (p / DONE).is_file():
                    finished.append(rel)
                elif (p / CODE).is_file() or (p / CLAIMED).is_file():
                    unfinished.append(rel)
                walk(p, inside or (p / DONE).is_file() or (p / CODE).is_file())
            elif not inside and not p.name.startswith("."):
                loose.append(rel)

    if home.is_dir():
        walk(home, False)
    return finished, unfinished, loose


def commit_of(module: str, code: str, head: str) -> str | None:
    """``head`` where the checkout's code of ``module`` has the fingerprint ``code`` (on some
    set of task modules, as the store scopes it), else None: made by other code."""
    try:
        imports.closure(module)
    except KeyError:
        return None
    tasks = sorted(m for m in imports.modules() if m.startswith(imports.TASKS))
    scopes = [None] + [c for r in range(len(tasks) + 1) for c in itertools.combinations(tasks, r)]
    return head if any(code_fingerprint(module, s) == code for s in scopes) else None


def entry_record(profile: str, rel: str, head: str, bases: bool = True) -> dict[str, Any]:
    """What the manifest says of the finished entry ``results/<profile>/<rel>``: its module,
    code, commit (``commit_of``), times (first file written, done marker), the files it
    releases and those it withholds (a base's weights too, unless ``bases``); ``ReleaseError``
    where it cannot be released as it is."""
    folder = results_root() / profile / rel
    where = f"results/{profile}/{rel}"
    try:
        marker = read_json(folder / DONE)
    except Damaged as e:
        raise ReleaseError(f"{where} is damaged: {e}") from None
    if "files" not in marker:
        raise ReleaseError(f"{where}: its done marker records no checksums (it was finished "
                           "before the store kept them), so its release could not be checked; "
                           "compute it again")
    wrong = damage(folder, marker["files"])
    if wrong:
        raise ReleaseError(f"{where} is damaged: {'; '.join(wrong)}")
    module = marker.get("module") if bases else None
    kept = [DONE] + ([CODE] if (folder / CODE).is_file() else [])
    kept += [n for n in marker["files"] if not withheld(n, module)]
    times = [(folder / n).stat().st_mtime for n in [*kept, *marker["files"]]
             if (folder / n).exists()]
    stale = {row["result"] for row in stale_reused(profile)}
    return {"module": marker.get("module"), "code": marker.get("code"),
            "commit": commit_of(marker.get("module") or "", marker.get("code") or "", head),
            "reused_stale": rel in stale,
            "begun": _when(min(times)), "finished": _when((folder / DONE).stat().st_mtime),
            "released": kept,
            "withheld": {n: f for n, f in marker["files"].items() if withheld(n, module)}}


def module_hashes() -> dict[str, str]:
    """Every package module's code hash (``store``'s, docstrings and comments left out): a
    part records them, so that a later checkout names the modules changed since."""
    return {m: module_hash(m)[:16] for m in sorted(imports.modules())}


# --- where it is made ----------------------------------------------------------------------------

def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if done.returncode:
        raise ReleaseError(f"git {' '.join(args)} failed in {repo}: {done.stderr.strip()}")
    return done.stdout


def committed(repo: Path) -> str:
    """The commit of ``repo``'s checkout; ``ReleaseError`` naming the files where tracked
    files under ``src/`` have uncommitted changes (results made there are of no commit)."""
    changed = git(repo, "status", "--porcelain", "--untracked-files=no", "--", "src").splitlines()
    if changed:
        raise ReleaseError(f"{repo}: uncommitted changes under src/ "
                           f"({', '.join(line[3:] for line in changed)}): commit them, then "
                           "run the results again, before a release")
    return git(repo, "rev-parse", "HEAD").strip()


def machine() -> dict[str, Any]:
    """This machine: CPU model and flags (``/proc/cpuinfo``, else ``lscpu``), its cores."""
    fields: dict[str, str] = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().split("\n\n")[0].splitlines():
            key, _, value = line.partition(":")
            fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    if "model name" not in fields and shutil.which("lscpu"):
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            key, _, value = line.partition(":")
            fields.setdefault({"Model name": "model name", "Flags": "flags"}.get(
                key.strip(), key.strip()), value.strip())
    return {"cpu": fields.get("model name", platform.processor() or "unknown"),
            "flags": fields.get("flags", "").split(), "cores": os.cpu_count(),
            "cores_usable": len(os.sched_getaffinity(0)), "arch": platform.machine()}


# --- the release ---------------------------------------------------------------------------------

def manifest_of(profile: str, root: Path | None = None) -> dict[str, Any]:
    """``release/<profile>/manifest.json``, or an empty one where the profile has none."""
    path = (root or release_root()) / profile / MANIFEST
    if not path.is_file():
        return {"profile": profile, "format": FORMAT, "parts": [], "entries": {}, "files": {}}
    try:
        return json.loads(path.read_text())
    except ValueError as e:
        raise ReleaseError(f"{path} cannot be read ({e})") from None


def verify(profile: str, root: Path | None = None) -> None:
    """Check ``release/<profile>/`` against its manifest: every listed file there with its size
    and sha256, no file unlisted, each entry's done marker's files released or withheld with
    the checksums it records. ``ReleaseError`` names the first mismatch."""
    folder = (root or release_root()) / profile
    if not (folder / MANIFEST).is_file():
        raise ReleaseError(f"release/{profile} has no {MANIFEST}")
    m = manifest_of(profile, root)
    for name, f in sorted(m["files"].items()):
        path = folder / name
        if not path.is_file():
            raise ReleaseError(f"release/{profile}/{name} is missing")
        if path.stat().st_size != f["size"]:
            raise ReleaseError(f"release/{profile}/{name} has {path.stat().st_size} bytes, "
                               f"{f['size']} in its manifest")
        if sha256(path) != f["sha256"]:
            raise ReleaseError(f"release/{profile}/{name} has changed (another sha256 than "
                               "its manifest's)")
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        name = path.relative_to(folder).as_posix()
        if name not in (MANIFEST, LEDGER) and name not in m["files"]:
            raise ReleaseError(f"release/{profile}/{name} is not in its manifest")
    for rel, e in sorted(m["entries"].items()):
        if f"{rel}/{DONE}" not in m["files"]:
            raise ReleaseError(f"release/{profile}/{rel}: its done marker is not in its manifest")
        marker = json.loads((folder / rel / DONE).read_text())
        for name, f in marker.get("files", {}).items():
            listed = (m["files"].get(f"{rel}/{stored(name)}") if name in e["released"]
                      else e["withheld"].get(name) if withheld(name) else None)
            if listed is None or _content(listed) != f["sha256"]:
                raise ReleaseError(f"release/{profile}/{rel}/{name}: neither released nor "
                                   "withheld with the checksum its done marker records")


def verify_all(root: Path | None = None) -> dict[str, str]:
    """Every profile released under ``root`` (``release/``) whose release does not verify,
    with its first mismatch; {} when all do (and when there is none). A folder that holds only
    its ledger (a first part begun, nothing released yet) is no release yet."""
    root = root or release_root()
    found = {}
    for folder in sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []:
        if [p.name for p in folder.iterdir()] == [LEDGER]:
            continue
        try:
            verify(folder.name, root)
        except (ReleaseError, OSError, KeyError, ValueError) as e:
            found[folder.name] = str(e)
    return found


def _budget(profile: str, files: dict[str, dict], root: Path) -> None:
    """Refuse where ``files`` (the profile's release as it would be) or all of ``root`` would
    go over budget, naming the largest files."""
    others = {f"{p.name}/{n}": f for p in root.iterdir() if p.is_dir() and p.name != profile
              for n, f in manifest_of(p.name, root)["files"].items()} if root.is_dir() else {}
    mine = {f"{profile}/{n}": f for n, f in files.items()}
    for scope, held, cap in ((f"release/{profile}", mine, PROFILE_BUDGET),
                             ("release/", {**others, **mine}, TOTAL_BUDGET)):
        size = sum(f["size"] for f in held.values())
        if size > cap:
            largest = sorted(held.items(), key=lambda kv: -kv[1]["size"])[:5]
            raise ReleaseError(f"{scope} would hold {_mb(size)}, over its budget of {_mb(cap)}; "
                               "the largest files: " + ", ".join(
                                   f"{n} ({_mb(f['size'])})" for n, f in largest))


def _copy(source: Path, target: Path) -> None:
    with open(source, "rb") as src:
        atomic_write(target, lambda f: shutil.copyfileobj(src, f), "wb")


def ledger_of(profile: str, root: Path | None = None) -> list[dict[str, Any]]:
    """``release/<profile>/ledger.json``: the parts started, [] where none was."""
    path = (root or release_root()) / profile / LEDGER
    return json.loads(path.read_text()) if path.is_file() else []


def start_part(profile: str, repo: Path = REPO, root: Path | None = None) -> dict[str, Any]:
    """Record in the ledger that a part of ``profile`` starts now, here, from ``repo``'s
    commit (refused with uncommitted changes under ``src/``: its results could be released
    by no commit); ``add`` closes it. Commit the ledger then, so that a part cut off is
    still on record."""
    root = root or release_root()
    rows = ledger_of(profile, root)
    row = {"started": len(rows) + 1, "commit": committed(repo),
           "start": datetime.now(timezone.utc).isoformat(timespec="seconds"),
           "machine": machine(), "end": None, "released_as": None}
    write_json(root / profile / LEDGER, rows + [row])
    return row


def withdraw_bases(m: dict[str, Any], folder: Path) -> list[str]:
    """Move the bases' weights that ``m`` (a manifest of the release in ``folder``) released
    to their entries' withheld files, with the checksums their done markers record (the
    manifest changes, the files are removed by the caller once it is written); the files."""
    gone = []
    for rel, e in m["entries"].items():
        if e["module"] not in WEIGHTS_RELEASED:
            continue
        recorded = json.loads((folder / rel / DONE).read_text())["files"]
        for name in [n for n in e["released"] if withheld(n)]:
            e["released"].remove(name)
            e["withheld"][name] = recorded[name]
            del m["files"][f"{rel}/{stored(name)}"]
            gone.append(f"{rel}/{stored(name)}")
    return gone


def remade_record(profile: str, rel: str, entry: dict[str, Any], root: Path) -> dict[str, Any]:
    """What the manifest records of ``results/<profile>/<rel>``, released by an earlier part
    (``entry``) without its weights and computed again here because a later run needed them,
    with other weights (a refit is not bit for bit repeatable: its losses move in the 6th digit
    with the threads it ran on): the released and the remade done markers' sha256, when it was
    remade, and the withheld files whose checksums differ, each as released and as remade. The
    released result stays as it is; what began after the remake started from the remade one.
    ``ReleaseError`` where a released file differs too: a result rewritten, never released."""
    marker = results_root() / profile / rel / DONE
    then = json.loads((root / profile / rel / DONE).read_text())["files"]
    now = read_json(marker)["files"]
    differ = sorted(n for n in set(then) | set(now) if then.get(n) != now.get(n))
    if not differ or not all(n in entry["withheld"] for n in differ):
        raise ReleaseError(f"results/{profile}/{rel} differs from what part {entry['part']} "
                           "released (another done marker): a release is never rewritten; "
                           f"start release/{profile} afresh to release it")
    return {"part": entry["part"], "released": sha256(root / profile / rel / DONE),
            "remade": sha256(marker), "remade_at": _when(marker.stat().st_mtime),
            "files": {n: {"released": then.get(n), "remade": now.get(n)} for n in differ}}


def add(profile: str, *, part: bool = False, complete: bool | None = None, wait: bool = True,
        repo: Path = REPO, root: Path | None = None) -> dict[str, Any] | None:
    """Release ``profile``'s finished results not yet released, as one more part of
    ``release/<profile>/`` (holding the profile's lock); the part, or None where nothing is
    new. ``part``: release what finished and name the unfinished, instead of refusing them.
    ``complete`` (default: not ``part``): the profile's build finished, so that its bases'
    weights are withheld from now on where no page loads them (``keeps_bases``; those an
    earlier part released are removed, the part records them as ``withdrawn``). A released
    result that was restored without its weights and computed again here is not released
    again: the part records the remake (``remade_record``)."""
    root = root or release_root()
    bases = keeps_bases(profile, not part if complete is None else complete)
    called = datetime.now(timezone.utc)
    parameters = plan(profile, profile_chapters(profile) or notebook_names())
    with lock.held(profile, wait=wait):
        head = committed(repo)
        if (root / profile / MANIFEST).is_file():
            verify(profile, root)
        m = manifest_of(profile, root)
        finished, unfinished, loose = survey(profile)
        if unfinished and not part:
            raise ReleaseError(f"results/{profile}/{unfinished[0]} is unfinished (no done "
                               f"marker; {len(unfinished)} in all): let it finish, or release "
                               "what finished as a part (make release PART=1, --part)")
        home, n = results_root() / profile, len(m["parts"]) + 1
        withdrawn = [] if bases else withdraw_bases(m, root / profile)
        new, files, packed, remade = {}, dict(m["files"]), {}, {}
        for rel in finished:
            done = sha256(home / rel / DONE)
            if rel in m["entries"]:
                recorded = any(p.get("remade", {}).get(rel, {}).get("remade") == done
                               for p in m["parts"])
                if m["files"][f"{rel}/{DONE}"]["sha256"] != done and not recorded:
                    remade[rel] = remade_record(profile, rel, m["entries"][rel], root)
                continue
            record = entry_record(profile, rel, head, bases)
            for name in record["released"]:
                path, key = home / rel / name, f"{rel}/{stored(name)}"
                f = {"size": path.stat().st_size, "sha256": sha256(path)}
                if key != f"{rel}/{name}":
                    packed[key] = gzip.compress(path.read_bytes(), compresslevel=9, mtime=0)
                    f = {"size": len(packed[key]), "sha256": hashlib.sha256(
                        packed[key]).hexdigest(), "content": f["sha256"]}
                if _content(files.get(key, f)) != _content(f):
                    raise ReleaseError(f"results/{profile}/{rel}/{name} differs from the file "
                                       "an earlier part released there")
                files[key] = f
            new[rel] = {"part": n, **record}
        if not new and not withdrawn and not remade:
            return None
        _budget(profile, files, root)
        written = []
        try:
            for rel, e in new.items():
                for name in e["released"]:
                    key = f"{rel}/{stored(name)}"
                    target = root / profile / key
                    if not target.is_file():
                        if key in packed:
                            atomic_write(target, lambda f, data=packed[key]: f.write(data), "wb")
                        else:
                            _copy(home / rel / name, target)
                        written.append(target)
                    if sha256(target) != files[key]["sha256"] or (
                            sha256(home / rel / name) != _content(files[key])):
                        raise ReleaseError(f"results/{profile}/{rel}/{name} changed while it "
                                           "was copied")
        except BaseException:
            for target in written:
                target.unlink(missing_ok=True)
            raise
        begun = min((e["begun"] for e in new.values()), default=_when(called.timestamp()))
        ended = max((e["finished"] for e in new.values()), default=_when(called.timestamp()))
        span = datetime.fromisoformat(ended) - datetime.fromisoformat(begun)
        now = datetime.now(timezone.utc)
        record = {"part": n, "commit": head, "start": begun, "end": ended,
                  "wall_s": span.total_seconds(), "timed_by": "the results' files",
                  "call": {"start": called.isoformat(timespec="seconds"),
                           "end": now.isoformat(timespec="seconds"),
                           "wall_s": round((now - called).total_seconds(), 1)},
                  "machine": machine(), "modules": module_hashes(),
                  "parameters": parameters, "entries": sorted(new),
                  "left_for_later": unfinished, "not_results": loose, "withdrawn": withdrawn,
                  "remade": remade}
        rows = ledger_of(profile, root)
        if rows and rows[-1]["end"] is None:
            rows[-1] |= {"end": now.isoformat(timespec="seconds"), "released_as": n,
                         **({"released_by": head} if rows[-1]["commit"] != head else {})}
            record["started_as"] = rows[-1]["started"]
            write_json(root / profile / LEDGER, rows)
        write_json(root / profile / MANIFEST, {
            **m, "format": FORMAT, "withheld": {"suffixes": list(WITHHELD_SUFFIXES),
                                                "folders": list(WITHHELD_FOLDERS)},
            "parts": m["parts"] + [record], "entries": {**m["entries"], **new},
            "files": dict(sorted(files.items()))})
        for name in withdrawn:  # after the manifest: a part cut off here leaves files verify names
            (root / profile / name).unlink()
        return record


# --- reading from it -----------------------------------------------------------------------------

def restore(profile: str, root: Path | None = None) -> list[str]:
    """Copy ``release/<profile>/``'s results (verified first) into ``results/<profile>/``
    where it holds no finished result of that name, each with its ``store.WITHHELD`` list of
    the files the release withheld; the results restored. A build then computes only the rest,
    and a run whose weights something needs is trained again (``store.Entry.whole``)."""
    root = root or release_root()
    if not (root / profile / MANIFEST).is_file():
        return []
    verify(profile, root)
    m, home, restored = manifest_of(profile, root), results_root() / profile, []
    for rel, e in sorted(m["entries"].items()):  # a result before the results inside it
        target = home / rel
        if (target / DONE).is_file():
            continue
        for name in e["released"]:
            source = root / profile / rel / stored(name)
            if name == DONE:
                continue
            if source.name != Path(name).name:
                atomic_write(target / name, lambda f, s=source: f.write(
                    gzip.decompress(s.read_bytes())), "wb")
            else:
                _copy(source, target / name)
        if e["withheld"]:
            write_json(target / WITHHELD, e["withheld"])
        _copy(root / profile / rel / DONE, target / DONE)  # last: the result is complete
        restored.append(rel)
    return restored


def provenance(profile: str, root: Path | None = None) -> dict[str, Any] | None:
    """Where ``release/<profile>``'s numbers come from, for a page's first lines: its parts
    (commit, start, end, wall time, CPU), their total wall time, and its results made by code
    other than this checkout's (``older``: result -> the modules its code imports whose code
    changed since its part, or None where its part's commit did not make it either) and the
    released results a later part computed again with other bytes (``remade``: result -> its
    part, when, the files that differ); None where the profile has no release."""
    m = manifest_of(profile, root)
    if not m["parts"]:
        return None
    now, parts = module_hashes(), {p["part"]: p for p in m["parts"]}
    older = {}
    for rel, e in m["entries"].items():
        if commit_of(e["module"] or "", e["code"] or "", "now") is not None:
            continue
        then = parts[e["part"]].get("modules", {})
        changed = None if e["commit"] is None else sorted(
            x for x in imports.closure(e["module"])
            if x not in BOOKKEEPING and then.get(x) != now.get(x))
        older[rel] = changed
    return {"parts": [{k: p[k] for k in ("part", "commit", "start", "end", "wall_s")}
                      | {"cpu": p["machine"]["cpu"], "cores": p["machine"]["cores"],
                         "avx512": "avx512f" in p["machine"]["flags"]} for p in m["parts"]],
            "wall_s": sum(p["wall_s"] for p in m["parts"]), "results": len(m["entries"]),
            "older": older,
            "remade": {rel: {"in part": p["part"], "at": r["remade_at"],
                             "files": sorted(r["files"])}
                       for p in m["parts"] for rel, r in p.get("remade", {}).items()}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rlvr_dynamics.release",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--profile", default="cpu")
    ap.add_argument("--part", action="store_true",
                    help="release what finished, naming the unfinished, instead of refusing")
    ap.add_argument("--no-wait", action="store_true",
                    help="exit, naming the holder, where another process builds the profile")
    ap.add_argument("--verify", action="store_true", help="only check the release")
    args = ap.parse_args(argv)
    try:
        if args.verify:
            verify(args.profile)
            print(f"release/{args.profile} matches its manifest")
            return 0
        record = add(args.profile, part=args.part, wait=not args.no_wait)
    except lock.Busy as e:
        print(f"error: {e}", file=sys.stderr)
        return lock.EXIT_BUSY
    except (ReleaseError, ParameterError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if record is None:
        print(f"release/{args.profile}: nothing new to release")
        return 0
    print(f"release/{args.profile}: part {record['part']}, {len(record['entries'])} results at "
          f"commit {record['commit'][:12]}; commit release/{args.profile} to keep it")
    entries = manifest_of(args.profile)["entries"]
    other = [rel for rel in record["entries"] if entries[rel]["commit"] is None]
    for what, names in (("left for a later part (unfinished)", record["left_for_later"]),
                        ("made by code other than this commit's (commit null)", other),
                        ("not released (no store entry holds them)", record["not_results"])):
        if names:
            print(f"  {what}: {', '.join(names)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
