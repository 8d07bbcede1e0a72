"""The package's own import graph, read from its source (nothing is imported).

Two uses: ``store.code_fingerprint`` hashes the code a result depends on (a module and every
module of the package it imports, transitively), and ``tests/test_layers.py`` checks that
imports only run downward (``LAYERS``), make no cycle, and that no computation imports
presentation (``is_presentation``): figures, colours and sentences sit above everything that is
stored, so that changing them never recomputes a result.
"""
from __future__ import annotations

import ast
import functools
from pathlib import Path

PACKAGE = "rlvr_dynamics"
SOURCE = Path(__file__).resolve().parent

LAYERS: dict[str, int] = {
    # 0: what everything may use
    "rlvr_dynamics": 0, "progress": 0, "imports": 0, "store": 0, "parallel": 0, "fields": 0,
    # 1: the paper's mathematics, metrics, tasks, models and the sampler
    "theory": 1, "passk": 1, "entropy": 1, "stats": 1, "dips": 1, "survival": 1, "power": 1,
    "tasks": 1, "models": 1, "sampling": 1, "paper_tables": 1,
    # 2: what is built from them: the toy, the base model, the registry, the boundary, verdicts,
    # exact Pass@k from the completion tree
    "toy": 2, "toy_schedule": 2, "law": 2, "pretrain": 2, "registry": 2, "verdicts": 2, "exact": 2, "path_prior": 2,
    # 3: the evaluation and training stacks, the boundary read from evaluations, the comparison
    # of trained models against their base, the paper's scenario in the LM (its grid of runs),
    # what the results release held at a commit (a registration's proof)
    "measure": 3, "rl": 3, "boundary": 3, "comparison": 3, "regimes": 3, "released": 3,
    # 4: the chapters (parameters, computations, readings, figures)
    "chapters": 4,
    # 5: profiles; 6: a page's first lines, executing the notebooks, the run report, the book,
    # publishing it, one build of a profile at a time, the results release;
    # 7: the command lines, and the texts written from what they repeat (the README's profiles,
    # CONTRIBUTING's layers) with the check that every text agrees with its home
    "profiles": 5, "page": 6, "execution": 6, "report": 6, "book": 6, "publish": 6, "lock": 6,
    "release": 6, "run": 7, "texts": 7,
}
"""Layer of each module (by its name under the package, or its subpackage's). A module may
import its own layer (without cycles) and the layers below, never one above."""


PRESENTATION = ("figures", "shown", "sentences", "style", "page", "figure_check")
"""Module names that hold presentation only: a chapter's ``figures``, ``shown`` (tables whose
cells are written for people) and ``sentences``, the shared ``chapters.figures``,
``chapters.shown``, ``chapters.sentences``, ``chapters.style`` (colours, table styles,
number formats) and ``chapters.figure_check`` (whether a figure reads), and ``page`` (a page's
first lines). A chapter's plain tables of numbers are computation."""


def is_presentation(module: str) -> bool:
    """Whether ``module`` draws or writes (``PRESENTATION``) rather than computes."""
    return module.rsplit(".", 1)[-1] in PRESENTATION


def presentation_imports() -> list[str]:
    """Every import of a presentation module by a module that computes ("a imports b at line
    n"): empty when results know nothing of colours, figures or sentences."""
    return [f"{m} imports {t} at line {lines[0][0]}" for m, edges in graph().items()
            if not is_presentation(m) for t, lines in edges.items() if is_presentation(t)]


def chapter_of(module: str) -> str | None:
    """The chapter whose package holds ``module`` (``chapters/<name>/``), or None for a module of
    the library or one that every chapter shares (``chapters/__init__``, ``chapters/style.py``,
    ``chapters/figures.py``, ``chapters/shown.py``, ``chapters/sentences.py``)."""
    parts = modules()[module].relative_to(SOURCE).parts
    return parts[1] if len(parts) > 2 and parts[0] == "chapters" else None


def chapter_imports() -> list[str]:
    """Every import of one chapter's module by another chapter's ("a imports b at line n"):
    empty when chapters stand on the library and the shared modules, not on each other. A
    chapter reads another's *parameters* as a field of a library type that the other's
    ``Params`` is (``training: rl.grid.Training``), never by importing it."""
    return [f"{m} imports {t} at line {lines[0][0]}" for m, edges in graph().items()
            for t, lines in edges.items()
            if chapter_of(m) and chapter_of(t) and chapter_of(m) != chapter_of(t)]


def layer(module: str) -> int:
    """The layer of ``rlvr_dynamics.<module>`` (the most specific entry of ``LAYERS``)."""
    name = module.removeprefix(PACKAGE).lstrip(".") or PACKAGE
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        if ".".join(parts[:i]) in LAYERS:
            return LAYERS[".".join(parts[:i])]
    raise KeyError(f"module {module} has no layer in imports.LAYERS; add it there")


def modules() -> dict[str, Path]:
    """Every module of the package: dotted name -> source file."""
    out = {}
    for path in sorted(SOURCE.rglob("*.py")):
        rel = path.relative_to(SOURCE.parent).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        out[".".join(parts)] = path
    return out


@functools.cache
def graph() -> dict[str, dict[str, list[tuple[int, bool]]]]:
    """module -> {imported package module: [(line, at module level?), ...]}.

    ``from rlvr_dynamics.x import y`` counts as importing ``rlvr_dynamics.x.y`` when that is a
    module, else ``rlvr_dynamics.x``."""
    known = modules()
    out: dict[str, dict[str, list[tuple[int, bool]]]] = {}
    for name, path in known.items():
        tree = ast.parse(path.read_text(), str(path))
        top = {id(node) for node in tree.body}
        edges: dict[str, list[tuple[int, bool]]] = {}
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in known
                           else node.module for a in node.names]
            for t in targets:
                if t == PACKAGE or t.startswith(PACKAGE + "."):
                    if t != name:
                        edges.setdefault(t, []).append((node.lineno, id(node) in top))
        out[name] = edges
    return out


def closure(module: str) -> list[str]:
    """``module`` and every package module it imports, directly or not, sorted."""
    g, seen, todo = graph(), set(), [module]
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        if m not in g:
            raise KeyError(f"{m} is not a module of {PACKAGE}")
        seen.add(m)
        todo.extend(g[m])
    return sorted(seen)


TASKS = f"{PACKAGE}.tasks."
"""The task modules' prefix: a result is fingerprinted with the tasks it computes on alone
(``store.code_fingerprint``)."""

DISPATCH = (f"{PACKAGE}.registry", f"{PACKAGE}.rl.config")
"""Modules that import every task to name it (the specs' parser, a run's task field): a module
that reaches a task only through them does not compute on it by its own code (``task_scope``)."""


def task_scope(module: str) -> tuple[str, ...]:
    """The task modules ``module`` computes on by its own imports: those its closure reaches
    without going from a module of ``DISPATCH`` to a task (what a run or an evaluation meets
    through a spec is scoped by its task objects instead, ``store.task_modules``)."""
    g, seen, todo = graph(), set(), [module]
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        todo.extend(t for t in g[m] if not (m in DISPATCH and t.startswith(TASKS)))
    return tuple(sorted(m for m in seen if m.startswith(TASKS)))


def cycles() -> list[list[str]]:
    """The import cycles of the package (each as a path that returns to its start)."""
    g, found, state = graph(), [], {}

    def visit(m: str, path: list[str]) -> None:
        state[m] = "open"
        for t in g[m]:
            if state.get(t) == "open":
                found.append(path[path.index(t):] + [t] if t in path else [m, t])
            elif t not in state:
                visit(t, path + [t])
        state[m] = "done"

    for m in g:
        if m not in state:
            visit(m, [m])
    return found
