"""Execute the book's notebooks with papermill under a profile, then build the HTML book.

    python -m rlvr_dynamics.run --profile cpu                       # everything
    python -m rlvr_dynamics.run --profile cpu --nb toy_dynamics --param seeds=1000
    python -m rlvr_dynamics.run --profile cpu --book-only           # rebuild pages only
    python -m rlvr_dynamics.run --publish      # one book from every profile's executed chapters
    python -m rlvr_dynamics.run train --profile paper --algorithm grpo_n --seed 1   # one run
    python -m rlvr_dynamics.run train --profile paper --config <launch file>        # any run

Every selected notebook's parameters are resolved and validated before the first one runs
(``profiles.plan``), and each chapter is handed those of the chapters it reads.
Executed notebooks go to ``build/<profile>/book/notebooks/`` (a failed one to
``build/<profile>/failed/``), each stamped with its profile, commit and code (``stamp``); the
book is built from them without re-executing anything. The published book
(``build/publish/book``, ``publish``) takes each chapter from the profile ``book/publish.yaml``
names, says so on its first lines, and marks a chapter made by older code.
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
from typing import Any, NamedTuple, Sequence

import jupytext
import nbformat
import papermill
import yaml

from rlvr_dynamics import REPO, verdicts
from rlvr_dynamics.chapters import REFERENCE_COSTS, ParameterError, params_class
from rlvr_dynamics.profiles import available_profiles, plan, profile_chapters
from rlvr_dynamics.store import (code_fingerprint, damaged_set_aside, digest, read_json,
                                 stale_reused)
from rlvr_dynamics.rl.config import TrainConfig
from rlvr_dynamics.rl.runs import train

log = logging.getLogger("rlvr_dynamics.run")

BOOK = REPO / "book"
MATHJAX = REPO / ".cache" / "mathjax" / "node_modules" / "mathjax" / "es5"
MATHJAX_PARTS = ["tex-mml-chtml.js", "input", "output/chtml", "ui"]
FINDINGS = "<!-- findings: written here from the verdict records by rlvr_dynamics.run -->"
COSTS = "<!-- costs: written here from this build's executed notebooks by rlvr_dynamics.run -->"
PROFILE_COSTS = BOOK / "profile_costs.yaml"
"""What the profiles the default build does not run cost, one entry per measurement."""
MEASURED = "<!-- profile costs: written here from book/profile_costs.yaml by rlvr_dynamics.run -->"


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


OTHER_PROFILES = "Chapters again, under other profiles"
"""The caption of the part that holds the pages of a chapter shown again (``instance``)."""


def toc_without(missing: list[str], extra: Sequence[str] = ()) -> dict[str, Any]:
    """``book/_toc.yml`` without the chapters in ``missing`` (and parts left empty), and the
    pages of ``extra`` (``instance`` names: a chapter again, under another profile) in a part
    of their own (``OTHER_PROFILES``, unnumbered, so the chapters keep their numbers) before
    the last part, in book order."""
    toc = yaml.safe_load((BOOK / "_toc.yml").read_text())
    drop = {f"notebooks/{name}" for name in missing}
    for part in toc.get("parts", []):
        part["chapters"] = [c for c in part["chapters"] if c.get("file") not in drop]
    toc["parts"] = [p for p in toc.get("parts", []) if p["chapters"]]
    if extra:
        toc["parts"].insert(max(len(toc["parts"]) - 1, 0), {
            "caption": OTHER_PROFILES,
            "chapters": [{"file": f"notebooks/{page}"} for page in extra]})
    return toc


INSTANCE = "--"
"""Between a chapter's name and a profile's in the page that shows the chapter again under
that profile (``instance``)."""


def instance(chapter: str, profile: str) -> str:
    """The page name of ``chapter`` shown again as ``profile`` executed it."""
    return f"{chapter}{INSTANCE}{profile}"


def chapter_of(page: str) -> str:
    """The chapter a page shows (the page itself for a chapter's own page)."""
    return page.split(INSTANCE, 1)[0]


def pages(root: Path) -> list[str]:
    """The executed pages in ``root/notebooks``: each chapter, then the pages that show it
    again under other profiles."""
    folder = root / "notebooks"
    out = []
    for name in chapters():
        if (folder / f"{name}.ipynb").is_file():
            out.append(name)
        out += sorted(p.stem for p in folder.glob(f"{instance(name, '*')}.ipynb"))
    return out


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
    nb.metadata[STAMP] = stamp(profile, notebook)
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


STAMP = "rlvr_dynamics"
"""The executed notebook's metadata key for what made it (``stamp``)."""


def commit() -> str:
    """The checkout's short commit, with "+changes" where tracked files differ from it."""
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip() or "unknown"
    dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain",
                            "--untracked-files=no"], capture_output=True, text=True).stdout.strip()
    return head + ("+changes" if dirty else "")


def stamp(profile: str, notebook: str) -> dict[str, str]:
    """What made an executed notebook: its profile, the commit, and the fingerprints of the
    chapter's code (``store.code_fingerprint``) and of its source; ``publish`` compares the
    last two with the checkout's."""
    return {"profile": profile, "commit": commit(),
            "code": code_fingerprint(f"rlvr_dynamics.chapters.{notebook}"),
            "source": digest(REPO / "notebooks" / f"{notebook}.md")}


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


def build_book(profile: str, verdicts_of: str | None = None) -> Path:
    """Build the HTML book from the notebooks executed under ``profile`` (``build/<profile>/
    book/notebooks/``), its front page's findings from the verdicts ``verdicts_of`` recorded
    (default: ``profile``'s)."""
    root = REPO / "build" / profile / "book"
    executed = pages(root)
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
    (root / "_toc.yml").write_text(yaml.safe_dump(
        toc_without(missing, [p for p in executed if p not in chapters()]), sort_keys=False))
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
        FINDINGS, verdicts.findings(verdicts.table(verdicts_of or profile), verdicts_of or profile)))
    rerun = root / "rerun.md"  # and the costs from this build's executed notebooks
    rerun.write_text(rerun.read_text().replace(COSTS, costs_md(profile, root))
                     .replace(MEASURED, profile_costs_md()))
    cmd = [str(Path(sys.executable).with_name("jupyter-book")), "build", str(root),
           "--warningiserror", "--nitpick", "--keep-going", "--quiet"]
    log.info("building the book: %s", " ".join(cmd))
    subprocess.run(cmd, check=True)
    return root / "_build" / "html" / "index.html"


PUBLISH = BOOK / "publish.yaml"
"""The published book: its default profile and the chapters shown from other profiles."""


class Published(NamedTuple):
    """What ``PUBLISH`` asks for: the default profile, chapter -> the profile whose execution
    the published book shows, the default's chapters to execute again first (those that only
    read what the others recorded, e.g. the verdicts), and chapter -> the profiles whose
    executions are shown again on pages of their own after it (``also``)."""

    default: str
    chosen: dict[str, str]
    refresh: list[str]
    also: dict[str, list[str]]

    @property
    def profiles(self) -> list[str]:
        """Every profile other than the default that the book shows a chapter from."""
        named = [*self.chosen.values(), *(p for ps in self.also.values() for p in ps)]
        return [p for p in dict.fromkeys(named) if p != self.default]


def published_from(path: Path = PUBLISH) -> Published:
    """``PUBLISH`` read and checked: every chapter and profile named must exist."""
    spec = yaml.safe_load(path.read_text())
    default, chosen = spec["default"], dict(spec.get("chapters") or {})
    refresh = list(spec.get("refresh") or [])
    also = {name: list(ps) for name, ps in (spec.get("also") or {}).items()}
    known = available_profiles()
    named = [("default", default), *chosen.items(),
             *((name, p) for name, ps in also.items() for p in ps)]
    for name, profile in named:
        if profile not in known:
            raise ParameterError(f"{path}: {name} names the profile {profile!r}; known: {known}")
    unknown = sorted((set(chosen) | set(refresh) | set(also)) - set(chapters()))
    if unknown:
        raise ParameterError(f"{path}: unknown chapter(s) {unknown}; the book has {chapters()}")
    return Published(default, chosen, refresh, also)


def freshness(nb: nbformat.NotebookNode, notebook: str) -> str:
    """"current" when an executed notebook was made by this checkout's chapter code and source
    (its ``stamp``), else "older code"."""
    made = nb.metadata.get(STAMP, {})
    now = {"code": code_fingerprint(f"rlvr_dynamics.chapters.{notebook}"),
           "source": digest(REPO / "notebooks" / f"{notebook}.md")}
    return "current" if all(made.get(k) == v for k, v in now.items()) else "older code"


def measured_cost(profile: str, path: Path = PROFILE_COSTS) -> str:
    """What ``profile`` cost when last measured (``PROFILE_COSTS``' last entry for it), in a
    sentence; "" where it was never measured there (the default build states its own)."""
    entries = [e for e in yaml.safe_load(path.read_text()) or [] if e["profile"] == profile]
    if not entries:
        return ""
    e = entries[-1]
    return (f" The whole profile took {_wall_time(e['minutes'], e.get('about', False))} when "
            f"last measured ({e['date']}, code of commit {e['commit']}, {e['how']}; the page on "
            "rerunning breaks it down).")


def provenance_md(nb: nbformat.NotebookNode, state: str, costs: Path = PROFILE_COSTS) -> str:
    """The first lines of a published chapter: which profile, commit and date its numbers come
    from, what they cost (this execution, and the whole profile as ``measured_cost`` gives
    it), and, where older code made them, a warning that says so."""
    made, run = nb.metadata.get(STAMP, {}), nb.metadata.get("papermill", {})
    profile = made.get("profile", "an unrecorded profile")
    when = str(run.get("end_time", ""))[:16].replace("T", " ") or "an unrecorded time"
    text = (f"*The numbers on this page come from the `{profile}` profile*: executed "
            f"{when} UTC from commit `{made.get('commit', 'unrecorded')}`, in "
            f"{(run.get('duration') or 0) / 60:.1f} minutes (with what earlier executions of "
            f"that profile had stored); to make them: `make reproduce PROFILE={profile}`."
            + measured_cost(profile, costs))
    if state != "current":
        text += ("\n\n:::{warning}\nThis page was computed by older code than this book's: "
                 "its numbers may not be what the current code gives. Run "
                 f"`make reproduce PROFILE={profile}`, then `make publish`, to bring it up to "
                 "date.\n:::")
    return text


def head(nb: nbformat.NotebookNode, text: str) -> None:
    """Put ``text`` (markdown) right under the notebook's title: after the first line of its
    first cell where that is a ``# `` heading, else in a cell of its own before everything."""
    first = nb.cells[0] if nb.cells else None
    if first is not None and first.cell_type == "markdown" and first.source.startswith("# "):
        title, _, rest = first.source.partition("\n")
        first.source = f"{title}\n\n{text}\n\n{rest.lstrip()}"
    else:
        nb.cells.insert(0, nbformat.v4.new_markdown_cell(text))


def headed(path: Path, chapter: str) -> tuple[nbformat.NotebookNode, str]:
    """The executed notebook of ``chapter`` at ``path``, headed by its ``provenance_md``, and
    its ``freshness``."""
    nb = nbformat.read(path, as_version=4)
    state = freshness(nb, chapter)
    head(nb, provenance_md(nb, state))
    return nb, state


def assemble(default: str, chosen: dict[str, str], root: Path, builds: Path = REPO / "build",
             also: dict[str, list[str]] | None = None) -> dict[str, dict[str, str]]:
    """Put the published book's executed notebooks in ``root/notebooks``: each chapter's from
    the profile ``chosen`` names (the ``default``'s where it names none, or where that profile
    has not executed it; ``builds``: where each profile's ``book/notebooks`` are), each headed
    by its ``provenance_md``; then, for each chapter of ``also``, its execution under each of
    the profiles named there on a page of its own (``instance``), titled with the profile.
    Returns page -> its profile and state ("current", "older code", or "missing: ..." where no
    profile executed it)."""
    out_dir = root / "notebooks"
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    report = {}
    for name in chapters():
        wanted = chosen.get(name, default)
        path = next((builds / p / "book" / "notebooks" / f"{name}.ipynb"
                     for p in dict.fromkeys([wanted, default])
                     if (builds / p / "book" / "notebooks" / f"{name}.ipynb").is_file()), None)
        if path is None:
            report[name] = {"profile": wanted, "state": f"missing: make reproduce PROFILE={wanted}"}
            continue
        nb, state = headed(path, name)
        shown = nb.metadata.get(STAMP, {}).get("profile", path.parents[2].name)
        report[name] = {"profile": shown, "state": state if shown == wanted else
                        f"{state}; {wanted} has not executed it: make reproduce PROFILE={wanted}"}
        nbformat.write(nb, out_dir / f"{name}.ipynb")
    for name, profiles in (also or {}).items():
        for profile in profiles:
            page = instance(name, profile)
            path = builds / profile / "book" / "notebooks" / f"{name}.ipynb"
            if not path.is_file():
                report[page] = {"profile": profile,
                                "state": f"missing: make reproduce PROFILE={profile}"}
                continue
            nb, state = headed(path, name)
            report[page] = {"profile": profile, "state": state}
            first = nb.cells[0]
            title, _, rest = first.source.partition("\n")
            first.source = f"{title}: the `{profile}` profile\n{rest}"
            nbformat.write(nb, out_dir / f"{page}.ipynb")
    return report


def publish(path: Path = PUBLISH) -> Path:
    """The one published book (``PUBLISH``): every chapter from the profile it is shown from,
    nothing recomputed (the chapters that only read records, e.g. the verdicts, executed again
    under the default profile), each page saying where its numbers come from; what is missing
    or was made by older code is logged and said on the page."""
    default, chosen, refresh, also = published_from(path)
    resolved = plan(default, refresh)
    for name in refresh:  # cheap: they read what the chapters recorded
        log.info("%s: executed again under %s, to read every profile's records", name, default)
        execute(default, name, resolved[name])
    report = assemble(default, chosen, REPO / "build" / "publish" / "book", also=also)
    for name, r in report.items():
        level = logging.INFO if r["state"] == "current" else logging.WARNING
        log.log(level, "%s: from %s (%s)", name, r["profile"], r["state"])
    return build_book("publish", verdicts_of=default)


def executions(root: Path) -> dict[str, dict[str, Any]]:
    """page -> papermill's record of its execution in this build (``end_time``,
    ``duration`` in seconds, ``parameters``) and what made it (``STAMP``: ``stamp``), for
    every page executed (``pages``: the chapters, and in the published book the chapters
    shown again under other profiles), in book order."""
    out = {}
    for name in pages(root):
        meta = nbformat.read(root / "notebooks" / f"{name}.ipynb", as_version=4).metadata
        out[name] = {**meta.get("papermill", {}), STAMP: meta.get(STAMP, {})}
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


def _wall_time(minutes: float, about: bool) -> str:
    """A measured wall time for people: hours to a tenth where the measurement was
    approximate (``about``), else hours and minutes."""
    if about:
        return f"about {minutes / 60:.1f} h"
    hours, rest = divmod(round(minutes), 60)
    return f"{hours} h {rest} min" if hours else f"{minutes:g} min"


def profile_costs_md(path: Path = PROFILE_COSTS) -> str:
    """The rerun page's table of what the profiles the default build does not run cost, from
    their measurements (``PROFILE_COSTS``: profile, date, commit, how, the lab notebook's
    section, what ran, ``minutes`` with ``about``, and the timed ``parts``, each with the
    minutes of its single ``runs`` where timed)."""
    rows = []
    for e in yaml.safe_load(path.read_text()) or []:
        parts = []
        for part in e.get("parts", []):
            runs = ", ".join(f"{name} {min(t):g}-{max(t):g} min a run"
                             for name, t in part.get("runs", {}).items())
            parts.append(f"{part['part']} {part['minutes']:g} min"
                         + (f" ({runs})" if runs else ""))
        rows.append(f"| `{e['profile']}` | {e['date']}, code of commit {e['commit']}, {e['how']} "
                    f"(lab notebook, section {e['lab_notebook']}) | {e['what']} | "
                    f"{_wall_time(e['minutes'], e.get('about', False))} | "
                    f"{'; '.join(parts) or '-'} |")
    return "\n".join(["| profile | measured | what ran | wall time | its parts |",
                      "|---|---|---|---|---|", *rows, ""])


def run_report(profile: str, root: Path) -> str:
    """A page recording how this build was made: commit, machine, time and parameters."""
    head = commit()
    lines = [
        "# Run report", "",
        f"This build was made under the **{profile}** profile from commit "
        f"`{head.removesuffix('+changes')}`"
        f"{' (with uncommitted changes)' if head.endswith('+changes') else ''} on "
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
        f"on {platform.machine()} with {os.cpu_count()} CPU cores and Python "
        f"{platform.python_version()}.", "",
    ]
    reference = yaml.safe_load(REFERENCE_COSTS.read_text()) if REFERENCE_COSTS.is_file() else {}
    before = reference.get("minutes", {}) if reference.get("profile") == profile else {}
    extra = (" reference build |", "---|") if before else ("", "")
    lines += [f"| chapter | profile | commit | executed at (UTC) | wall time |{extra[0]}",
              f"|---|---|---|---|---|{extra[1]}"]
    params_md, minutes = [], {}
    for name, meta in executions(root).items():
        minutes[name] = (meta.get("duration") or 0.0) / 60
        then = (f" {before[name]:.1f} min |" if name in before else " - |") if before else ""
        made = meta.get(STAMP, {})
        lines.append(f"| {name} | {made.get('profile', profile)} | {made.get('commit', '-')} "
                     f"| {str(meta.get('end_time', ''))[:16].replace('T', ' ')} "
                     f"| {minutes[name]:.1f} min |{then}")
        params = dict(meta.get("parameters", {}))
        reads = list(params.pop("upstream", {}))
        params_md += [f"**{name}**" + (f" (reads the parameters of: {', '.join(reads)})"
                                       if reads else ""), "", "```yaml",
                      yaml.safe_dump(params, sort_keys=True).strip(), "```", ""]
    lines += [f"| **all chapters** | | | | **{sum(minutes.values()):.1f} min** |" +
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
    book wrote down (``--config``: ``rl.runs.launch_file``, printed by the error of a
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
    ap.add_argument("--publish", action="store_true",
                    help="build the one published book (book/publish.yaml) from the notebooks "
                         "every profile has executed, recomputing nothing")
    ap.add_argument("--reuse-stale", action="store_true",
                    help="keep finished results that older code computed (listed in the run "
                         "report) instead of recomputing them")
    args = ap.parse_args(argv)
    if args.reuse_stale:
        os.environ["RLVR_REUSE_STALE"] = "1"  # read by the store, in the kernels too
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s",
                        datefmt="%H:%M:%S")
    if args.publish:
        try:
            print(f"The book: {publish()}")
        except ParameterError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        return 0
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
