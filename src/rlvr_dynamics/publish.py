"""Publish one book across profiles: each chapter from the profile ``book/publish.yaml``
names (``PUBLISH``: ``published_from``), some shown again under other profiles on pages of their
own, nothing recomputed (the chapters that only read records executed again under the default
profile). A chapter that no build here has executed is drawn from the profile's results release
(``from_release``: its results restored, the chapter executed from them computing nothing), so a
fresh clone publishes the whole book in minutes. Each page says on its first lines which profile,
commit and date its numbers come from and what they cost (``provenance_md``: for a released
profile, its parts, their machines and total time), and warns where older code made them
(``freshness``, and the released results of older code it read, naming the modules changed
since); the book goes to ``build/publish/book`` (``publish``).
"""
from __future__ import annotations

import json
import logging
import os
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

import nbformat
import yaml

from rlvr_dynamics import REPO, execution, lock, release
from rlvr_dynamics.book import build_book
from rlvr_dynamics.chapters import ParameterError
from rlvr_dynamics.execution import (BOOK, STAMP, chapters, execute, instance, repository,
                                     with_rerun_box)
from rlvr_dynamics.profiles import available_profiles, plan, profile_chapters
from rlvr_dynamics.report import PROFILE_COSTS, measured_cost
from rlvr_dynamics.store import digest, scoped_fingerprint

log = logging.getLogger(__name__)

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


def colab_url(page: str, path: Path = PUBLISH) -> str:
    """Where Colab opens ``page``'s executed notebook: the published book's notebooks are on
    the branch ``notebooks_branch`` of ``PUBLISH`` (pushed there by the workflow's publish
    job) of the repository (``execution.repository``)."""
    url, _ = repository()
    branch = yaml.safe_load(path.read_text())["notebooks_branch"]
    return (f"https://colab.research.google.com/github/"
            f"{url.removeprefix('https://github.com/')}/blob/{branch}/{page}.ipynb")


def freshness(nb: nbformat.NotebookNode, notebook: str) -> str:
    """"current" when an executed notebook was made by this checkout's chapter code and source
    (its ``stamp``), else "older code"."""
    made = nb.metadata.get(STAMP, {})
    now = {"code": scoped_fingerprint(f"rlvr_dynamics.chapters.{notebook}"),
           "source": digest(REPO / "notebooks" / f"{notebook}.md")}
    return "current" if all(made.get(k) == v for k, v in now.items()) else "older code"


RELEASED = "released"
"""The stamp's key (``execution.STAMP``) for what a page drawn from the results release read:
the release's ``provenance`` and the released results of older code the page read."""


def _part_md(p: dict) -> str:
    start, end = (t[:16].replace("T", " ") for t in (p["start"], p["end"]))
    flags = ", AVX-512" if p["avx512"] else ""
    return (f"part {p['part']} at commit `{p['commit'][:7]}`, {start} to {end} UTC "
            f"({p['wall_s'] / 60:.1f} minutes; {p['cpu']}, {p['cores']} cores{flags})")


def released_md(made: dict) -> str:
    """Where a page drawn from the results release got its numbers (``RELEASED``): the
    release's parts, their machines and total time, and the results of older code it read."""
    info, older = made[RELEASED]["provenance"], made[RELEASED]["older"]
    text = (f"*The numbers on this page come from the `{made['profile']}` profile's results "
            f"release* (`release/{made['profile']}`, {info['results']} results), computed in "
            + "; ".join(_part_md(p) for p in info["parts"])
            + f": {info['wall_s'] / 60:.1f} minutes in all. This page was drawn from them at "
            f"commit `{made.get('commit', 'unrecorded')}`, computing nothing; to compute them "
            f"again: `make reproduce PROFILE={made['profile']}`.")
    for rel, r in sorted(info.get("remade", {}).items()):
        text += (f"\n\n:::{{note}}\n`{rel}` was computed again in part {r['in part']} "
                 f"({r['at'][:16].replace('T', ' ')} UTC), where a run needed the weights the "
                 f"release withholds, with other bytes ({', '.join(r['files'])}); the release "
                 "keeps the earlier one, and the runs begun after the remake started from the "
                 "remade one.\n:::")
    if older:
        changed = sorted({m for ms in older.values() for m in ms or []})
        text += ("\n\n:::{warning}\nThis page read " + f"{len(older)} released result(s) made "
                 "by older code than this book's (" + ", ".join(f"`{r}`" for r in sorted(older))
                 + "); the modules changed since: "
                 + (", ".join(f"`{m}`" for m in changed) or "not recorded by their part")
                 + f". Run `make reproduce PROFILE={made['profile']}`, then `make publish`, to "
                 "bring it up to date.\n:::")
    return text


def provenance_md(nb: nbformat.NotebookNode, state: str, costs: Path = PROFILE_COSTS) -> str:
    """The first lines of a published chapter: which profile, commit and date its numbers come
    from, what they cost (this execution, and the whole profile as ``measured_cost`` gives
    it; for a page drawn from the results release, ``released_md``), and, where older code
    made them, a warning that says so."""
    made, run = nb.metadata.get(STAMP, {}), nb.metadata.get("papermill", {})
    profile = made.get("profile", "an unrecorded profile")
    if RELEASED in made:
        text = released_md(made)
        if state != "current":  # the chapter's own code, not the results it read
            text += ("\n\n:::{warning}\nThis page's chapter code has changed since it was "
                     "drawn: `make publish` draws it again.\n:::")
        return text
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


def assemble(default: str, chosen: dict[str, str], root: Path, builds: Path | None = None,
             also: dict[str, list[str]] | None = None) -> dict[str, dict[str, str]]:
    """Put the published book's executed notebooks in ``root/notebooks``: each chapter's from
    the profile ``chosen`` names (the ``default``'s where it names none, or where that profile
    has not executed it; ``builds``: where each profile's ``book/notebooks`` are), each headed
    by its ``provenance_md``; then, for each chapter of ``also``, its execution under each of
    the profiles named there on a page of its own (``instance``), titled with the profile.
    Each page's rerun box gains the link that opens it in Colab (``colab_url``).
    Returns page -> its profile and state ("current", "older code", or "missing: ..." where no
    profile executed it)."""
    builds, out_dir = builds or execution.builds(), root / "notebooks"
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
        with_rerun_box(nb, name, shown, colab_url(name))
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
            with_rerun_box(nb, name, profile, colab_url(page))
            report[page] = {"profile": profile, "state": state}
            first = nb.cells[0]
            title, _, rest = first.source.partition("\n")
            first.source = f"{title}: the `{profile}` profile\n{rest}"
            nbformat.write(nb, out_dir / f"{page}.ipynb")
    return report


def executed(profile: str, chapter: str) -> bool:
    """Whether a build here has executed ``chapter`` under ``profile``."""
    return (execution.builds() / profile / "book" / "notebooks" / f"{chapter}.ipynb").is_file()


def shown(default: str, chosen: dict[str, str], also: dict[str, list[str]]
          ) -> list[tuple[str, str]]:
    """Every (chapter, profile) the published book shows: each chapter from the profile
    ``chosen`` names, or from the ``default`` where that profile has neither a build here nor
    a release that holds the chapter (as ``assemble`` falls back); each page of ``also``."""
    def source(name: str) -> str:
        wanted = chosen.get(name, default)
        return next((p for p in (wanted, default) if executed(p, name) or (
            release.manifest_of(p)["parts"] and name in (profile_chapters(p) or chapters()))),
            wanted)
    return ([(name, source(name)) for name in chapters()]
            + [(name, p) for name, ps in also.items() for p in ps])


@contextmanager
def reading_only(ledger: Path):
    """The store read only (``RLVR_READ_ONLY``), results of older code reused
    (``RLVR_REUSE_STALE``) and each reuse logged in ``ledger``, in this process and the
    kernels it starts."""
    saved = {k: os.environ.get(k) for k in ("RLVR_READ_ONLY", "RLVR_REUSE_STALE",
                                            "RLVR_STALE_LEDGER")}
    os.environ.update(RLVR_READ_ONLY="1", RLVR_REUSE_STALE="1", RLVR_STALE_LEDGER=str(ledger))
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def from_release(pairs: list[tuple[str, str]]) -> dict[str, str]:
    """Draw from the results release each (chapter, profile) of ``pairs`` that no build here
    has executed: the profile's released results restored into ``results/<profile>/``
    (``release.restore``), then the chapter executed from them under ``reading_only``, so that
    nothing is trained or evaluated; a result it needs that the release lacks fails it, and it
    is named as missing. The executed notebook's stamp records the release's ``provenance`` and
    the released results of older code the page read (``RELEASED``). Returns page -> why it
    could not be drawn."""
    failed, builds = {}, execution.builds()
    todo = [(n, p) for n, p in dict.fromkeys(pairs)
            if not executed(p, n) and release.manifest_of(p)["parts"]]
    for profile in dict.fromkeys(p for _, p in todo):
        names = [n for n, p in todo if p == profile]
        with lock.held(profile):
            restored = release.restore(profile)
            log.info("%s: %d results restored from release/%s; drawing %s", profile,
                     len(restored), profile, ", ".join(names))
            info, resolved = release.provenance(profile), plan(profile, names)
            for name in names:
                ledger = builds / profile / "stale" / f"{name}.json"
                ledger.unlink(missing_ok=True)
                try:
                    with reading_only(ledger):
                        done = execute(profile, name, resolved[name])
                except Exception as e:  # papermill names the cell; the page stays missing
                    log.error("%s could not be drawn from release/%s: %s", name, profile,
                              str(e).splitlines()[-1] if str(e) else type(e).__name__)
                    failed[f"{name} ({profile})"] = str(e)
                    continue
                read = json.loads(ledger.read_text()) if ledger.is_file() else []
                nb = nbformat.read(done, as_version=4)
                nb.metadata[STAMP][RELEASED] = {
                    "provenance": {k: v for k, v in info.items() if k != "older"},
                    "older": {r["result"]: info["older"].get(r["result"]) for r in read}}
                nbformat.write(nb, done)
    return failed


def publish(path: Path = PUBLISH) -> Path:
    """The one published book (``PUBLISH``): every chapter from the profile it is shown from,
    nothing recomputed (the chapters that only read records, e.g. the verdicts, executed again
    under the default profile), each page saying where its numbers come from; what is missing
    or was made by older code is logged and said on the page."""
    default, chosen, refresh, also = published_from(path)
    for page, why in from_release(shown(default, chosen, also)).items():
        log.warning("%s: not drawn from the release (%s)", page, why.splitlines()[-1][:300])
    resolved = plan(default, refresh)
    for name in refresh:  # cheap: they read what the chapters recorded
        log.info("%s: executed again under %s, to read every profile's records", name, default)
        execute(default, name, resolved[name])
    report = assemble(default, chosen, execution.builds() / "publish" / "book", also=also)
    for name, r in report.items():
        level = logging.INFO if r["state"] == "current" else logging.WARNING
        log.log(level, "%s: from %s (%s)", name, r["profile"], r["state"])
    return build_book("publish", verdicts_of=default)
