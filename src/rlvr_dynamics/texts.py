"""The repository's texts that repeat what is written once elsewhere, and the check that they
agree with it (``disagreements``, run by ``tests/test_docs.py``).

Written from their one home, each between two markers (``BLOCKS``): the README's table of
profiles, from each profile's ``summary`` in ``configs/<profile>.yaml`` (``report.profiles_md``;
the rerun page's table, from their ``description``, is written when the book is built), and
CONTRIBUTING's table of layers, from ``imports.LAYERS``. ``python -m rlvr_dynamics.texts``
writes them again; ``--check`` writes nothing and lists what disagrees.

Checked where nothing writes them: the README's layout names every file and folder of
``configs/``; its build time is the last row of the lab notebook's table of the default build's
times (``BUILD_TIMES``); the rerun page holds the marker its table of profiles is written at
(``book.PROFILES``) and no table of profiles of its own; CONTRIBUTING states no time (times are
recorded in the lab notebook, ``book/profile_costs.yaml`` and ``book/reference_costs.yaml``);
the package's docstring names every entry of ``imports.LAYERS``.
"""
from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from rlvr_dynamics import REPO, imports, profiles
from rlvr_dynamics.book import PROFILES
from rlvr_dynamics.report import profiles_md

README = "README.md"
CONTRIBUTING = "docs/CONTRIBUTING.md"
RERUN = "book/rerun.md"
LAB = "docs/experiments/cpu_scale.md"
PACKAGE_DOC = "src/rlvr_dynamics/__init__.py"

BUILD_TIMES = "Build times of the default profile, as recorded"
"""The title of the lab notebook's section whose table lists every measured build time of the
default profile, one row per build (finished, commit, minutes, ...), the last the latest."""

README_BUILD = re.compile(r"the default build took (?P<minutes>[\d.]+) minutes on 2 cores "
                          r"\(measured (?P<date>\d{4}-\d\d-\d\d) at commit "
                          r"(?P<commit>[0-9a-f]{7,})")
"""The README's sentence that states the default build's time."""

TIME = re.compile(r"\b\d+(?:\.\d+)?\s+(?:minutes?|min|hours?|seconds?)\b")


def layers_md() -> str:
    """CONTRIBUTING's table of the package's layers (``imports.LAYERS``), lowest first."""
    by_layer: dict[int, list[str]] = {}
    for name, layer in imports.LAYERS.items():
        by_layer.setdefault(layer, []).append(
            "the package's `__init__`" if name == imports.PACKAGE else f"`{name}`")
    return "\n".join(["| layer | modules and subpackages |", "|---|---|",
                      *(f"| {layer} | {', '.join(names)} |"
                        for layer, names in sorted(by_layer.items()))])


@dataclass(frozen=True)
class Block:
    """A part of ``file`` written from ``source`` by ``write``, between its markers."""
    file: str
    name: str
    source: str
    write: Callable[[], str]

    @property
    def begin(self) -> str:
        return (f"<!-- {self.name}: written from {self.source} by python -m "
                "rlvr_dynamics.texts; edit it there -->")

    @property
    def end(self) -> str:
        return f"<!-- end of {self.name} -->"


BLOCKS = (
    Block(README, "profiles", "each profile's summary in configs/<profile>.yaml",
          lambda: profiles_md("summary")),
    Block(CONTRIBUTING, "layers", "imports.LAYERS", layers_md),
)


def written(text: str, block: Block) -> str:
    """``text`` with ``block``'s part written afresh; an error where its markers are not there
    once."""
    pattern = re.compile(rf"<!-- {re.escape(block.name)}:[^\n]*-->\n.*?{re.escape(block.end)}",
                         re.S)
    if len(pattern.findall(text)) != 1:
        raise ValueError(f"{block.file}: its {block.name} are not once between the markers "
                         f"{block.begin!r} and {block.end!r}")
    return pattern.sub(lambda _: f"{block.begin}\n\n{block.write().strip()}\n\n{block.end}",
                       text)


def layout_names(readme: str) -> set[str]:
    """The files and folders the README's layout names on its ``configs/`` entry (that line
    and the indented lines after it)."""
    match = re.search(r"^configs/ (.*(?:\n {10,}\S.*)*)", readme, re.M)
    return set(re.findall(r"[\w.-]+\.yaml|[\w-]+/", match.group(1))) if match else set()


def build_times(lab: str) -> list[dict[str, str]]:
    """The rows of the lab notebook's table of the default build's times (``BUILD_TIMES``),
    in its order: ``date``, ``commit``, ``minutes``."""
    section = re.search(rf"^## [\d.]*\s*{re.escape(BUILD_TIMES)}.*?(?=^## |\Z)", lab, re.M | re.S)
    if not section:
        return []
    rows = re.findall(r"^\| (\d{4}-\d\d-\d\d) \| ([0-9a-f]{7,}) \| ([\d.]+) \|", section.group(0),
                      re.M)
    return [{"date": d, "commit": c, "minutes": m} for d, c, m in rows]


def _blocks(read: dict[str, str]) -> list[str]:
    found = []
    for block in BLOCKS:
        try:
            if written(read[block.file], block) != read[block.file]:
                found.append(f"{block.file}: its {block.name} differ from {block.source} "
                             "(python -m rlvr_dynamics.texts writes them)")
        except ValueError as e:
            found.append(str(e))
    return found


def _layout(read: dict[str, str]) -> list[str]:
    held = {p.name + ("/" if p.is_dir() else "") for p in profiles.CONFIGS.iterdir()
            if p.is_dir() or p.suffix == ".yaml"}
    named = layout_names(read[README])
    return [] if named == held else [
        f"{README}: its layout's configs/ names {sorted(named)}, configs/ holds {sorted(held)}"]


def _build_time(read: dict[str, str]) -> list[str]:
    rows = build_times(read[LAB])
    stated = README_BUILD.search(" ".join(read[README].split()))
    if not rows:
        return [f"{LAB}: no table of rows under a section titled {BUILD_TIMES!r}"]
    if [r["date"] for r in rows] != sorted(r["date"] for r in rows):
        return [f"{LAB}: the rows of {BUILD_TIMES!r} are not in the order they were made"]
    if not stated:
        return [f"{README}: no sentence that matches {README_BUILD.pattern!r}"]
    latest = {k: rows[-1][k] for k in ("minutes", "date", "commit")}
    return [] if stated.groupdict() == latest else [
        f"{README}: states the default build's time as {stated.groupdict()}, the lab "
        f"notebook's last measurement ({BUILD_TIMES!r}) is {latest}"]


def _rerun(read: dict[str, str]) -> list[str]:
    found = []
    if PROFILES not in read[RERUN]:
        found.append(f"{RERUN}: no marker {PROFILES!r} for its table of profiles")
    own = re.findall(r"^\| `([\w-]+)` \|", read[RERUN], re.M)
    if set(own) & set(profiles.available_profiles()):
        found.append(f"{RERUN}: a table of profiles of its own ({own}); the book writes it from "
                     "the profiles' files")
    return found


def _stated_times(read: dict[str, str]) -> list[str]:
    times = TIME.findall(read[CONTRIBUTING])
    return [f"{CONTRIBUTING}: states times ({times}) that nothing checks: name where they are "
            "recorded instead"] if times else []


def _package_doc(read: dict[str, str]) -> list[str]:
    doc = read[PACKAGE_DOC].split('"""')[1]
    unnamed = [name for name in imports.LAYERS
               if name != imports.PACKAGE and f"``{name}``" not in doc]
    return [f"{PACKAGE_DOC}: its docstring does not name {unnamed} (imports.LAYERS)"] \
        if unnamed else []


CHECKS = (_blocks, _layout, _build_time, _rerun, _stated_times, _package_doc)


def disagreements(root: Path = REPO) -> list[str]:
    """Every place where a text under ``root`` disagrees with the one home of what it says
    (``CHECKS``; the configs are ``profiles.CONFIGS``), one line each; empty when they all
    agree."""
    read = {name: (root / name).read_text()
            for name in (README, CONTRIBUTING, RERUN, LAB, PACKAGE_DOC)}
    return [line for check in CHECKS for line in check(read)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="write nothing: list what disagrees (exit status 1 if anything does)")
    args = ap.parse_args(argv)
    if not args.check:
        for block in BLOCKS:
            path = REPO / block.file
            text = path.read_text()
            if written(text, block) != text:
                path.write_text(written(text, block))
                print(f"wrote {block.file}: its {block.name}")
    found = disagreements()
    print("\n".join(found) or "every text agrees with its home")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
