"""Build the HTML book of a profile from the notebooks executed under it, re-executing
nothing: the book's pages and a table of contents without the chapters not executed (and with
the pages of chapters shown again under other profiles), the package's source for the pages that
include it, MathJax from local files, the run report, the findings written from the verdict
records, the profiles from their files, the costs from this build's executions and the book's
citation (at the markers ``FINDINGS``, ``PROFILES``, ``COSTS``, ``MEASURED``, ``CITATION``), then
``jupyter-book build`` with warnings as errors.
"""
from __future__ import annotations

import logging
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Sequence

import yaml

from rlvr_dynamics import REPO, verdicts
from rlvr_dynamics.execution import BOOK, builds, chapters, pages
from rlvr_dynamics.report import citation_md, costs_md, profile_costs_md, profiles_md, run_report

log = logging.getLogger(__name__)

MATHJAX = REPO / ".cache" / "mathjax" / "node_modules" / "mathjax" / "es5"
MATHJAX_PARTS = ["tex-mml-chtml.js", "input", "output/chtml", "ui"]
# the markers build_book replaces, as book/intro.md and book/rerun.md write them
FINDINGS = "<!-- findings: written here from the verdict records by rlvr_dynamics.run -->"
PROFILES = "<!-- profiles: written here from configs/*.yaml by rlvr_dynamics.run -->"
COSTS = "<!-- costs: written here from this build's executed notebooks by rlvr_dynamics.run -->"
MEASURED = "<!-- profile costs: written here from book/profile_costs.yaml by rlvr_dynamics.run -->"
CITATION = "<!-- citation: written here from book/_config.yml by rlvr_dynamics.run -->"


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


def build_book(profile: str, verdicts_of: str | None = None) -> Path:
    """Build the HTML book from the notebooks executed under ``profile`` (``build/<profile>/
    book/notebooks/``), its front page's findings from the verdicts ``verdicts_of`` recorded
    (default: ``profile``'s)."""
    root = builds() / profile / "book"
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
    rerun = root / "rerun.md"  # the profiles from their files, the costs from the executions
    rerun.write_text(rerun.read_text().replace(PROFILES, profiles_md())
                     .replace(COSTS, costs_md(profile, root))
                     .replace(MEASURED, profile_costs_md()))
    references = root / "references.md"  # how to cite the book, at this build's commit
    references.write_text(references.read_text().replace(CITATION, citation_md()))
    cmd = [str(Path(sys.executable).with_name("jupyter-book")), "build", str(root),
           "--warningiserror", "--nitpick", "--keep-going", "--quiet"]
    log.info("building the book: %s", " ".join(cmd))
    subprocess.run(cmd, check=True)
    return root / "_build" / "html" / "index.html"
