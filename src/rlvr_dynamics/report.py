"""The pages that say how a build was made and what it cost: the run report (commit, machine,
each page's profile, commit, time and wall time beside the reference build's, the results of
older code kept and the damaged ones set aside, every chapter's parameters: ``run_report``), the
rerun page's tables of the profiles (``profiles_md``, from their files: also the README's), of
this build's costs (``costs_md``) and of the other profiles' measured costs
(``profile_costs_md``, from ``PROFILE_COSTS``), and a profile's cost in a sentence
(``measured_cost``).
"""
from __future__ import annotations

import datetime
import os
import platform
from pathlib import Path
from typing import Any

import nbformat
import yaml

from rlvr_dynamics.chapters import REFERENCE_COSTS
from rlvr_dynamics.execution import BOOK, STAMP, chapter_of, commit, pages
from rlvr_dynamics.profiles import (about, available_profiles, dependencies, notebook_names,
                                    profile_chapters)
from rlvr_dynamics.store import damaged_set_aside, stale_reused

PROFILE_COSTS = BOOK / "profile_costs.yaml"
"""What the profiles the default build does not run cost, one entry per measurement."""


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


def chapters_md(profile: str) -> str:
    """The chapters ``profile`` runs, for people: "all", "all but" the few it leaves out, or
    their list (``profiles.profile_chapters``)."""
    chosen = profile_chapters(profile)
    if chosen is None:
        return "all"
    left = [name for name in notebook_names() if name not in chosen]
    return f"all but {', '.join(left)}" if len(left) < len(chosen) else ", ".join(chosen)


def profiles_md(text: str = "description") -> str:
    """The table of every profile in ``configs/``: its name, the chapters it runs and its
    words from its file (``profiles.about``: ``text`` is ``"description"`` for the rerun page,
    ``"summary"`` for the README)."""
    cell = {name: about(name)[text].replace("|", r"\|") for name in available_profiles()}
    rows = [f"| `{name}` | {chapters_md(name)} | {words} |" for name, words in cell.items()]
    return "\n".join(["| profile | chapters | what it is |", "|---|---|---|", *rows, ""])


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


def citation_md() -> str:
    """The BibTeX entry that cites this book: its title and author from ``book/_config.yml``,
    its repository's address (``repository.url``, the one place it is set) and this build's
    commit."""
    config = yaml.safe_load((BOOK / "_config.yml").read_text())
    head = commit().removesuffix("+changes")
    year = datetime.datetime.now(datetime.timezone.utc).year
    return "\n".join([
        "```bibtex",
        "@misc{rlvrdynamics_book,",
        f"  title        = {{{config['title']}}},",
        f"  author       = {{{{{config['author']}}}}},",
        f"  year         = {{{year}}},",
        "  note         = {An executable reproduction of Yao et al. (2025), arXiv:2510.04028;",
        f"                  the build of commit {head}}},",
        f"  howpublished = {{\\url{{{config['repository']['url']}}}}}",
        "}",
        "```"])


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
        held = dependencies(chapter_of(name)) if chapter_of(name) in notebook_names() else {}
        reads = [held[field][0] for field in held if params.pop(field, None) is not None]
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
