"""The package's imports run downward only (``imports.LAYERS``), make no cycle, and sit at the
top of their modules (inside a function only for an optional dependency, never for the
package's own modules)."""
import re

from rlvr_dynamics import REPO, imports
from rlvr_dynamics.chapters import NAMES


def test_every_module_has_a_layer():
    for module in imports.graph():
        imports.layer(module)


def test_no_import_runs_upward():
    upward = [f"{m} (layer {imports.layer(m)}) imports {t} (layer {imports.layer(t)}) at line "
              f"{lines[0][0]}"
              for m, edges in imports.graph().items() for t, lines in edges.items()
              if imports.layer(t) > imports.layer(m)]
    assert not upward, "\n".join(upward)


def test_no_import_cycle():
    assert imports.cycles() == []


def test_the_package_is_imported_at_module_level_only():
    inside = [f"{m} line {line}: {t}" for m, edges in imports.graph().items()
              for t, lines in edges.items() for line, top in lines if not top]
    assert not inside, "\n".join(inside)


def test_no_chapter_imports_another():
    """A chapter imports the library and the shared chapter modules, never another chapter's
    computation or words (so that a stored result is keyed by its own chapter's code only)."""
    assert imports.chapter_imports() == []


def test_the_chapter_check_sees_a_bad_edge(monkeypatch):
    graph = {k: dict(v) for k, v in imports.graph().items()}
    graph["rlvr_dynamics.chapters.ladder.shown"][
        "rlvr_dynamics.chapters.scenario.shown"] = [(12, True)]
    monkeypatch.setattr(imports, "graph", lambda: graph)
    assert imports.chapter_imports() == [
        "rlvr_dynamics.chapters.ladder.shown imports "
        "rlvr_dynamics.chapters.scenario.shown at line 12"]


def test_shared_chapter_modules_belong_to_no_chapter():
    assert imports.chapter_of("rlvr_dynamics.chapters.style") is None
    assert imports.chapter_of("rlvr_dynamics.chapters") is None
    assert imports.chapter_of("rlvr_dynamics.chapters.ladder") == "ladder"
    assert imports.chapter_of("rlvr_dynamics.chapters.scenario.shown") == "scenario"
    assert imports.chapter_of("rlvr_dynamics.regimes.stages") is None  # the library's
    assert imports.chapter_of("rlvr_dynamics.toy") is None


def test_the_checks_see_a_bad_edge(monkeypatch):
    """The checks can fail: an upward edge and a cycle planted in the graph are found."""
    graph = {k: dict(v) for k, v in imports.graph().items()}
    graph["rlvr_dynamics.passk"]["rlvr_dynamics.run"] = [(1, True)]
    graph["rlvr_dynamics.run"]["rlvr_dynamics.passk"] = [(1, True)]
    monkeypatch.setattr(imports, "graph", lambda: graph)
    assert any("rlvr_dynamics.run" in c for c in imports.cycles())
    assert imports.layer("rlvr_dynamics.run") > imports.layer("rlvr_dynamics.passk")


OPTIONAL = {
    ("rlvr_dynamics.sampling", "vllm"): "the GPU backend; absent on CPU machines",
    ("rlvr_dynamics.tasks.math", "math_verify"): "imported in the grading worker process only, "
                                                 "after its warnings are silenced",
    ("rlvr_dynamics.tasks.math", "datasets"): "the hub loader, only where no local file is given",
    ("rlvr_dynamics.tasks.math", "pandas"): "parquet benchmark files only",
    ("rlvr_dynamics.tasks.choice", "datasets"): "the hub loader, only where no local file is given",
}
"""The imports that may sit inside a function, and why."""


def test_function_level_imports_are_only_the_optional_ones():
    import ast

    found = set()
    for module, path in imports.modules().items():
        tree = ast.parse(path.read_text())
        top = {id(n) for n in tree.body}
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in top:
                names = [a.name for a in node.names] if isinstance(node, ast.Import) \
                    else [node.module or ""]
                found |= {(module, n.split(".")[0]) for n in names}
    assert found <= set(OPTIONAL), sorted(found - set(OPTIONAL))


def test_no_computation_imports_presentation():
    """Figures, colours and sentences sit above every module whose results are stored."""
    assert imports.presentation_imports() == []


def test_the_presentation_check_sees_a_bad_edge(monkeypatch):
    graph = {k: dict(v) for k, v in imports.graph().items()}
    graph["rlvr_dynamics.toy"]["rlvr_dynamics.chapters.style"] = [(7, True)]
    monkeypatch.setattr(imports, "graph", lambda: graph)
    assert imports.presentation_imports() == [
        "rlvr_dynamics.toy imports rlvr_dynamics.chapters.style at line 7"]


def notebook_chapter_imports(text: str, chapter: str) -> list[str]:
    """The lines of a chapter's notebook that import another chapter's module."""
    pattern = re.compile(r"^\s*from rlvr_dynamics\.chapters(?:\.(\w+))? import ([\w, ()]+)", re.M)
    names = set(NAMES) - {chapter}
    return [m.group(0).strip() for m in pattern.finditer(text)
            if m.group(1) in names
            or (m.group(1) is None and names & {n.split(" as ")[0].strip(" ()")
                                                for n in m.group(2).split(",")})]


def test_no_notebook_imports_another_chapter():
    """A page, too, calls its own chapter, the shared modules and the library only."""
    found = {nb: notebook_chapter_imports((REPO / "notebooks" / f"{nb}.md").read_text(), nb)
             for nb in NAMES}
    assert {nb: lines for nb, lines in found.items() if lines} == {}


def test_the_notebook_check_sees_another_chapter():
    text = ("from rlvr_dynamics.chapters import pretrained as chapter\n"
            "from rlvr_dynamics.chapters import needed, style\n"
            "from rlvr_dynamics.chapters import reproduction as rp\n"
            "from rlvr_dynamics.chapters.training import figures as tr_figures\n")
    assert notebook_chapter_imports(text, "pretrained") == [
        "from rlvr_dynamics.chapters import reproduction as rp",
        "from rlvr_dynamics.chapters.training import figures as tr_figures"]
