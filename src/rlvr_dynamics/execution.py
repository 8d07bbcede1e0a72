"""Execute a profile's notebooks with papermill: the chapters in book order (``chapters``),
one notebook run with its resolved parameters injected and shown folded, as a reader reads them
(``execute``, ``parameters_source``), and the stamp that says what made each executed copy
(``stamp``: its profile, the commit, the fingerprints of the chapter's code and source), with
the progress of its long work shown on the terminal as it goes (``run_papermill``); the
cells a chapter without its results leaves out (``available``, ``declared``), its figures'
captions (``captions``) and the rerun box under its title (``with_rerun_box``).

Executed notebooks go to ``build/<profile>/book/notebooks/`` (a failed one to
``build/<profile>/failed/``). A page of the book is a chapter's executed notebook, or the same
chapter shown again as another profile executed it (``instance``).
"""
from __future__ import annotations

import json
import logging
import os
import pprint
from pathlib import Path
from typing import Any

import jupytext
import nbformat
import papermill
import yaml
from tqdm.contrib.logging import logging_redirect_tqdm

from rlvr_dynamics import REPO, progress
from rlvr_dynamics.chapters import CAPTION
from rlvr_dynamics.profiles import dependencies, module, params_class
from rlvr_dynamics.store import checkout_commit, digest, scoped_fingerprint

log = logging.getLogger(__name__)

BOOK = REPO / "book"


def builds() -> Path:
    """``build/``, where each profile's executed notebooks and book go (``$RLVR_BUILD``
    replaces it)."""
    return Path(os.environ.get("RLVR_BUILD", REPO / "build"))


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


NEEDS_RESULTS, WITHOUT_RESULTS = "needs-results", "without-results"
"""The tags of a chapter's cells that stand on its results, and of those that say how to make
them: a chapter whose results are absent (its module's ``available(P)`` is False: a long
profile that has not run here) is executed and shown without the first, and one whose results
are there without the second, so that no page holds a branch on them or an empty section."""


def available(notebook: str, parameters: dict[str, Any]) -> bool:
    """Whether ``notebook``'s results can be shown under ``parameters``: its chapter module's
    ``available(P)``, or True for a chapter that always computes its own."""
    check = getattr(module(notebook), "available", None)
    return True if check is None else check(params_class(notebook).parse(parameters))


def declared(nb: nbformat.NotebookNode, notebook: str, present: bool = True
             ) -> nbformat.NotebookNode:
    """``nb`` with its ``parameters`` cell (which names the profile only) holding every declared
    parameter at its default (``chapters.<name>.Params``), so that papermill knows the names it
    injects below it; without the cells tagged ``WITHOUT_RESULTS`` where its results are
    ``present``, else without those tagged ``NEEDS_RESULTS``."""
    dropped = WITHOUT_RESULTS if present else NEEDS_RESULTS
    nb.cells = [c for c in nb.cells if dropped not in c.get("metadata", {}).get("tags", [])]
    for cell in nb.cells:
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            cell.source = parameters_source(params_class(notebook)().values(), notebook)
    return nb


def execute(profile: str, notebook: str, parameters: dict[str, Any]) -> Path:
    """Run one notebook with papermill; return the executed copy."""
    root = builds() / profile
    source = root / "sources" / f"{notebook}.ipynb"
    source.parent.mkdir(parents=True, exist_ok=True)
    jupytext.write(declared(jupytext.read(REPO / "notebooks" / f"{notebook}.md"), notebook,
                            available(notebook, parameters)), source)
    done = root / "book" / "notebooks" / f"{notebook}.ipynb"
    running = root / "running" / f"{notebook}.ipynb"  # outside the book's sources
    for folder in (running.parent, done.parent):
        folder.mkdir(parents=True, exist_ok=True)
    try:
        run_papermill(source, running, parameters, REPO / "notebooks", notebook)
    except BaseException:
        failed = root / "failed" / f"{notebook}.ipynb"
        failed.parent.mkdir(parents=True, exist_ok=True)
        if running.exists():
            os.replace(running, failed)
            log.error("%s failed; the executed notebook is at %s", notebook, failed)
        raise
    nb = nbformat.read(running, as_version=4)
    nb.metadata[STAMP] = stamp(profile, notebook)
    captions(nb, notebook)
    with_rerun_box(nb, notebook, profile)
    for cell in nb.cells:  # the book shows the injected values, folded, not the defaults
        tags = cell.setdefault("metadata", {}).setdefault("tags", [])
        if "parameters" in tags and "remove-cell" not in tags:
            tags.append("remove-cell")
        if "injected-parameters" in tags:
            cell.source = parameters_source(parameters, notebook)
            tags += [t for t in ("hide-input",) if t not in tags]
    nbformat.write(nb, running)
    os.replace(running, done)
    return done


FORWARD = "--IPKernelApp.exec_lines=__import__('rlvr_dynamics.progress').progress.forward()"
"""The kernel's first line, run before any cell and binding no name: its progress bars also
go to the runner's channel (``progress.forward``)."""


def run_papermill(source: Path, output: Path, parameters: dict[str, Any], cwd: Path,
                  name: str) -> None:
    """Papermill's run of ``source`` into ``output``: its cell counter on the terminal and, as
    log lines above it (``name | runs: 7/16 [20:10<25:56, 172.92s/it]``), the progress bars
    of the kernel's long work (``progress.relayed``, through a file beside ``output``). The
    executed notebook gets the cells' outputs as ever, nothing more."""
    channel = output.with_name(f"{output.stem}.progress")
    with logging_redirect_tqdm(), progress.relayed(
            channel, lambda line: log.info("%s | %s", name, line)):
        papermill.execute_notebook(source, output, parameters=parameters, kernel_name="python3",
                                   cwd=str(cwd), progress_bar=True, extra_arguments=[FORWARD])


DISPLAYS = ("display_data", "execute_result")
"""The outputs that MyST-NB shows as displays (and wraps in a cell's figure)."""


def captions(nb: nbformat.NotebookNode, notebook: str) -> None:
    """Each figure that ``chapters.style.show`` left with a caption becomes a figure with that
    caption on the page (MyST-NB's cell-level ``mystnb.figure`` options; the cell tagged
    full-width where the figure is): MyST-NB captions every display of such a cell, so a
    captioned figure must be its cell's only display; else an error names the notebook and the
    cell."""
    for i, cell in enumerate(nb.cells):
        shown = [o for o in cell.get("outputs", []) if o.get("output_type") in DISPLAYS]
        captioned = [o["metadata"][CAPTION] for o in shown if CAPTION in o.get("metadata", {})]
        if not captioned:
            continue
        if len(shown) > 1:
            raise ValueError(f"notebooks/{notebook}.md, code cell {i}: a captioned figure must "
                             f"be its cell's only display; the cell shows {len(shown)}")
        (figure,) = captioned
        cell.metadata.setdefault("mystnb", {})["figure"] = {"caption": figure["caption"]}
        if figure["full"]:
            tags = cell.metadata.setdefault("tags", [])
            tags += [t for t in ("full-width",) if t not in tags]



RERUN = {"theory": ("seed", "vocab", "lr"), "toy_dynamics": ("seeds", "steps", "G", "pi0"),
         "base_model": ("seed", "steps", "samples"), "evaluation": ("table1_n", "table1_problems"),
         "training": ("seeds", "steps", "algorithms"), "reproduction": ("n", "problems"),
         "scenario": ("seeds", "steps"), "ladder": ("seeds", "steps", "ladder"),
         "mechanism": ("seeds", "steps", "stage_two_steps"),
         "regime_map": ("seeds", "steps"), "pretrained": ("source", "seeds", "levels"),
         "verdict": ("beside",)}
"""Each chapter's parameters that a reader most often changes: the rerun box gives them with
this build's values (every other parameter is in the injected cell, folded, and on the run
report)."""
BOX = "rlvr_dynamics-rerun"
"""The tag of the markdown cell that holds a page's rerun box (``with_rerun_box``)."""


def repository() -> tuple[str, str]:
    """The repository's address and branch: ``repository`` of ``book/_config.yml``, the one
    place they are set."""
    config = yaml.safe_load((BOOK / "_config.yml").read_text())["repository"]
    return config["url"].rstrip("/"), config.get("branch", "main")


def rerun_md(notebook: str, profile: str, parameters: dict[str, Any], minutes: float,
             colab: str | None = None) -> str:
    """A chapter's rerun box (a folded admonition): the exact command that reruns it with its
    main parameters (``RERUN``) at this build's values, what it cost in this build, where its
    source is and how to open it in Binder (``repository``) and, in the published book, in
    Colab (``colab``: the address of the page's executed notebook there)."""
    url, branch = repository()
    values = " ".join(f"{name}={json.dumps(parameters[name], separators=(',', ':'))}"
                      for name in RERUN.get(notebook, ()) if name in parameters)
    command = (f"make reproduce{'' if profile == 'cpu' else f' PROFILE={profile}'} "
               f"NB={notebook}" + (f" PARAMS='{values}'" if values else ""))
    source = f"notebooks/{notebook}.md"
    binder = (f"https://mybinder.org/v2/gh/{url.removeprefix('https://github.com/')}/{branch}"
              f"?urlpath=lab/tree/{source}")
    executed = (f"[Open it in Colab]({colab}): the executed notebook of this page, outputs "
                f"and all; to rerun it there, `!pip install git+{url}` in a first cell."
                if colab else "The download button above gives this page as an executed "
                "`.ipynb`, which Colab and Jupyter open (rerunning it needs the package there "
                "too: `pip install -e .` in a clone).")
    return "\n".join([
        ":::{admonition} Rerun this chapter", ":class: dropdown", "",
        f"This page was executed under the `{profile}` profile, in {minutes:.1f} min in this "
        "build (results already on disk, made by the same code, are read back rather than "
        "computed: the page on rerunning gives each profile's cost from empty results). To "
        "rerun it with other values (any declared parameter can be set the same way; the "
        "folded cell below lists them all):", "", "```bash", command, "```", "",
        f"The chapter's source is [`{source}`]({url}/blob/{branch}/{source}) (a MyST notebook: "
        "`make lab` opens it in JupyterLab, where its first cell names the profile). "
        f"[Open it in Binder]({binder}): Binder builds the repository's `environment.yml`; "
        f"run `pip install --no-deps -e .` in its terminal before the first cell. {executed} "
        "The addresses come from `repository.url` in `book/_config.yml`, the one place it is "
        "set.",
        ":::"])


def with_rerun_box(nb: nbformat.NotebookNode, notebook: str, profile: str,
                   colab: str | None = None) -> None:
    """``nb`` (executed by papermill) with its rerun box (``rerun_md``) right under its title,
    made from the parameters and the duration papermill recorded; a box from an earlier call
    replaced."""
    meta = nb.metadata.get("papermill", {})
    box = nbformat.v4.new_markdown_cell(rerun_md(notebook, profile, meta.get("parameters", {}),
                                                 (meta.get("duration") or 0.0) / 60, colab),
                                        metadata={"tags": [BOX]})
    for i, cell in enumerate(nb.cells):
        if BOX in cell.metadata.get("tags", []):
            nb.cells[i] = box
            return
    first = next(i for i, c in enumerate(nb.cells) if c.cell_type == "markdown")
    title, _, rest = nb.cells[first].source.partition("\n")
    nb.cells[first].source = rest
    nb.cells[first:first] = [nbformat.v4.new_markdown_cell(title), box]


STAMP = "rlvr_dynamics"
"""The executed notebook's metadata key for what made it (``stamp``)."""


def commit() -> str:
    """The checkout's short commit, with "+changes" where tracked files differ from it."""
    return checkout_commit(short=True)


def stamp(profile: str, notebook: str) -> dict[str, str]:
    """What made an executed notebook: its profile, the commit, and the fingerprints of the
    chapter's code on its tasks (``store.scoped_fingerprint``) and of its source; ``publish``
    compares the last two with the checkout's."""
    return {"profile": profile, "commit": commit(),
            "code": scoped_fingerprint(f"rlvr_dynamics.chapters.{notebook}"),
            "source": digest(REPO / "notebooks" / f"{notebook}.md")}


def parameters_source(parameters: dict[str, Any], notebook: str) -> str:
    """The injected parameters of ``notebook`` as a reader reads them: one assignment each,
    long values wrapped (``pprint``), those that hold another chapter's parameters
    (``profiles.dependencies``) last."""
    lines = []
    read = dependencies(notebook)
    for name in sorted(parameters, key=lambda name: (name in read, name)):
        indent = " " * (len(name) + 3)
        text = pprint.pformat(parameters[name], width=88 - len(indent), compact=True,
                              sort_dicts=False)
        lines.append(f"{name} = " + text.replace("\n", "\n" + indent))
    return "\n".join(lines)
