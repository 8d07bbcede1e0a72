"""Execute the book's notebooks with papermill under a profile, then build the HTML book.

    python -m rlvr_dynamics.run --profile cpu                       # everything
    python -m rlvr_dynamics.run --profile cpu --nb toy_dynamics --param seeds=1000
    python -m rlvr_dynamics.run --profile cpu --book-only           # rebuild pages only
    python -m rlvr_dynamics.run train --profile paper --algorithm grpo_n --seed 1   # one run
    python -m rlvr_dynamics.run train --profile paper --config <launch file>        # any run

Every selected notebook's parameters are resolved and validated before the first one runs
(``profiles.plan``), and each chapter is handed those of the chapters it reads.
Executed notebooks go to ``build/<profile>/book/notebooks/`` (a failed one to
``build/<profile>/failed/``); the book is built from them without re-executing anything.
"""
from __future__ import annotations

import argparse
import datetime
import logging
import os
import platform
import pprint
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import jupytext
import nbformat
import papermill
import yaml

from rlvr_dynamics import REPO, verdicts
from rlvr_dynamics.chapters import ParameterError, params_class
from rlvr_dynamics.profiles import plan, profile_chapters
from rlvr_dynamics.store import damaged_set_aside, read_json, stale_reused
from rlvr_dynamics.training.config import TrainConfig
from rlvr_dynamics.training.run import train

log = logging.getLogger("rlvr_dynamics.run")

BOOK = REPO / "book"
MATHJAX = REPO / ".cache" / "mathjax" / "node_modules" / "mathjax" / "es5"
MATHJAX_PARTS = ["tex-mml-chtml.js", "input", "output/chtml", "ui"]
REFERENCE_COSTS = BOOK / "reference_costs.yaml"
"""Minutes per chapter of the build each run report of the same profile is compared with."""
FINDINGS = "<!-- findings: written here from the verdict records by rlvr_dynamics.run -->"
COSTS = "<!-- costs: written here from this build's executed notebooks by rlvr_dynamics.run -->"


def chapters() -> list[str]:
    """Notebook names in book order, read from ``book/_toc.yml``."""
    toc = yaml.safe_load((BOOK / "_toc.yml").read_text())
    names: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            f = node.get("file", "")
            if f.startswith("notebooks/"):
                names.append(f.removeprefix("notebooks/"))
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
    walk(toc)
    return names


def toc_without(missing: list[str]) -> dict[str, Any]:
    """``book/_toc.yml`` without the chapters in ``missing`` (and parts left empty)."""
    toc = yaml.safe_load((BOOK / "_toc.yml").read_text())
    drop = {f"notebooks/{name}" for name in missing}
    for part in toc.get("parts", []):
        part["chapters"] = [c for c in part["chapters"] if c.get("file") not in drop]
    toc["parts"] = [p for p in toc.get("parts", []) if p["chapters"]]
    return toc


def execute(profile: str, notebook: str, parameters: dict[str, Any]) -> Path:
    """Run one notebook with papermill; return the executed copy."""
    root = REPO / "build" / profile
    source = root / "sources" / f"{notebook}.ipynb"
    source.parent.mkdir(parents=True, exist_ok=True)
    jupytext.write(jupytext.read(REPO / "notebooks" / f"{notebook}.md"), source)
    done = root / "book" / "notebooks" / f"{notebook}.ipynb"
    running = root / "running" / f"{notebook}.ipynb"  # outside the book's sources
    for folder in (running.parent, done.parent):
        folder.mkdir(parents=True, exist_ok=True)
    try:
        papermill.execute_notebook(source, running, parameters=parameters,
                                   kernel_name="python3", cwd=str(REPO / "notebooks"),
                                   progress_bar=True)
    except BaseException:
        failed = root / "failed" / f"{notebook}.ipynb"
        failed.parent.mkdir(parents=True, exist_ok=True)
        if running.exists():
            os.replace(running, failed)
            log.error("%s failed; the executed notebook is at %s", notebook, failed)
        raise
    nb = nbformat.read(running, as_version=4)
    for cell in nb.cells:  # the book shows the injected values, folded, not the defaults
        tags = cell.setdefault("metadata", {}).setdefault("tags", [])
        if "parameters" in tags and "remove-cell" not in tags:
            tags.append("remove-cell")
        if "injected-parameters" in tags:
            cell.source = parameters_source(parameters)
            tags += [t for t in ("hide-input",) if t not in tags]
    nbformat.write(nb, running)
    os.replace(running, done)
    return done


def parameters_source(parameters: dict[str, Any]) -> str:
    """The injected parameters as a reader reads them: one assignment each, long values
    wrapped (``pprint``), the chapters' ``upstream`` dictionary last."""
    lines = []
    for name in sorted(parameters, key=lambda name: (name == "upstream", name)):
        indent = " " * (len(name) + 3)
        text = pprint.pformat(parameters[name], width=88 - len(indent), compact=True,
                              sort_dicts=False)
        lines.append(f"{name} = " + text.replace("\n", "\n" + indent))
    return "\n".join(lines)


def build_book(profile: str) -> Path:
    """Build the HTML book from the notebooks executed under ``profile``."""
    root = REPO / "build" / profile / "book"
    executed = {p.stem for p in (root / "notebooks").glob("*.ipynb")}
    missing = [c for c in chapters() if c not in executed]
    if missing:
        log.warning("not executed under %s yet, left out of this build: %s", profile, missing)
    for item in BOOK.iterdir():
        if item.name == "_toc.yml":
            continue
        target = root / item.name
        if item.is_dir():
            shutil.copytree(item, target, dirs_exist_ok=True)
        else:
            shutil.copy2(item, target)
    (root / "_toc.yml").write_text(yaml.safe_dump(toc_without(missing), sort_keys=False))
    # the package's source, for the pages that include the heart of a method from it
    # (``{literalinclude} /_src/rlvr_dynamics/...``: the page and the code cannot drift)
    shutil.copytree(REPO / "src" / "rlvr_dynamics", root / "_src" / "rlvr_dynamics",
                    dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    if not (MATHJAX / "tex-mml-chtml.js").is_file():
        raise FileNotFoundError(f"MathJax not installed at {MATHJAX}: run `make install`")
    for part in MATHJAX_PARTS:  # what the tex-mml-chtml component loads, nothing more
        src, dst = MATHJAX / part, root / "_static" / "mathjax" / part
        if src.is_dir():
            shutil.copytree(src, dst, dirs_exist_ok=True)
        else:
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    (root / "run_report.md").write_text(run_report(profile, root))
    intro = root / "intro.md"  # the findings are written from the verdict records, not by hand
    intro.write_text(intro.read_text().replace(
        FINDINGS, verdicts.findings(verdicts.table(profile), profile)))
    rerun = root / "rerun.md"  # and the costs from this build's executed notebooks
    rerun.write_text(rerun.read_text().replace(COSTS, costs_md(profile, root)))
    cmd = [str(Path(sys.executable).with_name("jupyter-book")), "build", str(root),
           "--warningiserror", "--nitpick", "--keep-going", "--quiet"]
    log.info("building the book: %s", " ".join(cmd))
    subprocess.run(cmd, check=True)
    return root / "_build" / "html" / "index.html"


def executions(root: Path) -> dict[str, dict[str, Any]]:
    """chapter -> papermill's record of its execution in this build (``end_time``,
    ``duration`` in seconds, ``parameters``), for every chapter executed, in book order."""
    out = {}
    for name in chapters():
        path = root / "notebooks" / f"{name}.ipynb"
        if path.is_file():
            out[name] = nbformat.read(path, as_version=4).metadata.get("papermill", {})
    return out


def costs_md(profile: str, root: Path) -> str:
    """The rerun page's table of what this build's chapters cost (markdown)."""
    runs = executions(root)
    minutes = {name: (meta.get("duration") or 0.0) / 60 for name, meta in runs.items()}
    rows = [f"| {name} | {str(runs[name].get('end_time', ''))[:16].replace('T', ' ')} "
            f"| {minutes[name]:.1f} min |" for name in runs]
    return "\n".join([
        f"This build ran under the **{profile}** profile on {os.cpu_count()} CPU cores:", "",
        "| chapter | finished (UTC) | wall time |", "|---|---|---|", *rows,
        f"| **all chapters** | | **{sum(minutes.values()):.1f} min** |", ""])


def run_report(profile: str, root: Path) -> str:
    """A page recording how this build was made: commit, machine, time and parameters."""
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    lines = [
        "# Run report", "",
        f"This build was made under the **{profile}** profile from commit `{commit}`"
        f"{' (with uncommitted changes)' if dirty else ''} on "
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
        f"on {platform.machine()} with {os.cpu_count()} CPU cores and Python "
        f"{platform.python_version()}.", "",
    ]
    reference = yaml.safe_load(REFERENCE_COSTS.read_text()) if REFERENCE_COSTS.is_file() else {}
    before = reference.get("minutes", {}) if reference.get("profile") == profile else {}
    extra = (" reference build |", "---|") if before else ("", "")
    lines += [f"| chapter | executed at (UTC) | wall time |{extra[0]}", f"|---|---|---|{extra[1]}"]
    params_md, minutes = [], {}
    for name, meta in executions(root).items():
        minutes[name] = (meta.get("duration") or 0.0) / 60
        then = (f" {before[name]:.1f} min |" if name in before else " - |") if before else ""
        lines.append(f"| {name} | {str(meta.get('end_time', ''))[:16].replace('T', ' ')} "
                     f"| {minutes[name]:.1f} min |{then}")
        params = dict(meta.get("parameters", {}))
        reads = list(params.pop("upstream", {}))
        params_md += [f"**{name}**" + (f" (reads the parameters of: {', '.join(reads)})"
                                       if reads else ""), "", "```yaml",
                      yaml.safe_dump(params, sort_keys=True).strip(), "```", ""]
    lines += [f"| **all chapters** | | **{sum(minutes.values()):.1f} min** |" +
              (f" **{sum(before.values()):.1f} min** |" if before else ""), "",
              *_against_reference(minutes, before, reference.get("label", "")),
              "A chapter's wall time covers what it computed in that execution: results that "
              "an earlier execution under the same profile left on disk (keyed by their "
              "settings and made by the same code) are read back, not recomputed. The book's "
              "build itself (a minute or two) is not included.", "", *_stale_md(profile),
              *_damaged_md(profile),
              "## Parameters of each chapter", "", *params_md]
    return "\n".join(lines) + "\n"


def _against_reference(minutes: dict[str, float], before: dict[str, float], label: str
                       ) -> list[str]:
    """The run report's sentence comparing the chapters this build and the reference build
    (``REFERENCE_COSTS``) both ran; none without a reference."""
    here = sum(m for name, m in minutes.items() if name in before)
    there = sum(before[name] for name in minutes if name in before)
    if not there:
        return []
    return [f"Against the reference build ({label}): the chapters both ran took {here:.1f} min "
            f"here against {there:.1f} min there, {abs(here - there):.1f} min "
            f"({abs(1 - here / there):.0%}) {'less' if here <= there else 'more'} (results read "
            f"back here count as read, not as computed).", ""]


def _stale_md(profile: str) -> list[str]:
    """The run report's account of results of older code kept on purpose (``--reuse-stale``)."""
    stale = stale_reused(profile)
    if not stale:
        return ["Every result this build read was computed by the code of this commit (the "
                "store recomputes a result whose code changed).", ""]
    return ["**Results computed by other code, reused on purpose (`--reuse-stale`):**", "",
            *[f"- `{row['result']}` (made by code {row['made_by']}, current {row['current']})"
              for row in stale], ""]


def _damaged_md(profile: str) -> list[str]:
    """The run report's account of stored results found damaged (their files no longer those
    their done marker records), set aside and computed again (``store.set_aside``)."""
    damaged = damaged_set_aside(profile)
    if not damaged:
        return ["No stored result was found damaged (the store checks every result it reads "
                "back against the file sizes and checksums its done marker records).", ""]
    return ["**Stored results found damaged and set aside (moved, not deleted; "
            f"`results/{profile}/damaged.json`):**", "",
            *[f"- `{row['result']}` ({'; '.join(row['wrong'])}), on {row['at']}: set aside in "
              f"`results/{profile}/{row['set_aside']}`, "
              f"{'computed again' if row['recomputed'] else 'not computed again yet'}"
              for row in damaged], ""]


def train_config(argv: list[str]) -> tuple[TrainConfig, str, bool]:
    """The run that ``run train`` trains, its profile and whether to train it again: a run the
    book wrote down (``--config``: ``training.run.launch_file``, printed by the error of a
    missing run), or a run of the training chapter (``--algorithm``, ``--seed``, lambda
    ``--positive-weight``), with its parameters under ``--profile`` and ``--param`` overrides
    resolved as the notebook's are. Every setting is checked before any model loads."""
    ap = argparse.ArgumentParser(prog="python -m rlvr_dynamics.run train",
                                 description="Train one run, on one device or many "
                                             "(accelerate launch ... -m rlvr_dynamics.run train).")
    ap.add_argument("--profile", default="cpu")
    which = ap.add_mutually_exclusive_group(required=True)
    which.add_argument("--config", type=Path, help="a run written down by a chapter")
    which.add_argument("--algorithm", help="a run of the training chapter: grpo, grpo_n, ...")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--positive-weight", type=float, default=None, metavar="LAMBDA",
                    help="weight on positive samples (GRPO/GSPO only; default: the algorithm's)")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--recompute", action="store_true", help="train again even if finished")
    args = ap.parse_args(argv)
    if args.config is not None:
        if args.param or args.positive_weight is not None:
            raise ParameterError("--config is a whole run: --param and --positive-weight "
                                 "apply to --algorithm runs only")
        try:
            return TrainConfig.from_dict(read_json(args.config)), args.profile, args.recompute
        except (OSError, ValueError, TypeError) as e:
            raise ParameterError(f"--config {args.config}: {e}") from None
    params = params_class("training").parse(plan(args.profile, ["training"], args.param)["training"])
    return (params.run_config(args.algorithm, args.seed, args.positive_weight), args.profile,
            args.recompute)


def train_main(argv: list[str]) -> int:
    """``python -m rlvr_dynamics.run train ...``: train one run (``train_config``)."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s",
                        datefmt="%H:%M:%S")
    try:
        cfg, profile, recompute = train_config(argv)
    except (ParameterError, ValueError, FileNotFoundError, TypeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(train(cfg, profile, recompute=recompute))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["train"]:
        return train_main(argv[1:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 epilog="python -m rlvr_dynamics.run train --help: train one run")
    ap.add_argument("--profile", default="cpu")
    ap.add_argument("--nb", action="append", default=[],
                    help="notebook(s) to execute (comma-separated or repeated); default all")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--book-only", action="store_true", help="only rebuild the HTML book")
    ap.add_argument("--no-book", action="store_true", help="only execute the notebooks")
    ap.add_argument("--reuse-stale", action="store_true",
                    help="keep finished results that older code computed (listed in the run "
                         "report) instead of recomputing them")
    args = ap.parse_args(argv)
    if args.reuse_stale:
        os.environ["RLVR_REUSE_STALE"] = "1"  # read by the store, in the kernels too
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s",
                        datefmt="%H:%M:%S")
    try:
        own = profile_chapters(args.profile)
        selected = ([n for arg in args.nb for n in arg.split(",") if n]
                    or [n for n in chapters() if own is None or n in own])
        unknown = [n for n in selected if n not in chapters()]
        if unknown:
            raise ParameterError(f"unknown notebook(s) {unknown}; the book has {chapters()}")
        if args.book_only:
            selected = []
        # Resolve and validate everything before the first notebook starts.
        resolved = plan(args.profile, selected, args.param)
    except ParameterError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for i, nb in enumerate(selected, 1):
        log.info("[%d/%d] %s under profile %s", i, len(selected), nb, args.profile)
        start = time.time()
        execute(args.profile, nb, resolved[nb])
        log.info("[%d/%d] %s done in %.1f min", i, len(selected), nb, (time.time() - start) / 60)
    if not args.no_book:
        index = build_book(args.profile)
        print(f"The book: {index}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
