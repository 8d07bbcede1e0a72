"""The chapters' notebooks are prose and calls: no function or class is defined in one (logic
lives in ``src/``, where tests cover it), no figure is drawn cell by cell, and no cell, shown or
hidden, branches, loops or assembles a string."""
import ast
import re

import jupytext
import pytest

from rlvr_dynamics.profiles import notebook_path
from rlvr_dynamics.execution import chapters

DEFINITION = re.compile(r"^\s*(def|class|async def) \w+|^\s*for .+:\n(\s+.*\n)*?\s+ax\w*\.\w+\(",
                        flags=re.M)
"""A definition, or a loop that draws on axes (``for ...:`` then ``ax.plot(...)``)."""


def definitions(source: str) -> list[str]:
    """The first line of each definition or drawing loop in ``source``."""
    text = source + "\n"
    return [text[m.start():].lstrip().split("\n", 1)[0] for m in DEFINITION.finditer(text)]


def test_the_check_sees_a_definition_and_a_drawing_loop():
    assert definitions("def f(x):\n    return x") == ["def f(x):"]
    assert definitions("for k in ks:\n    y = k\n    ax.plot(k)") == ["for k in ks:"]
    assert definitions("fig = figures.plot_dynamics(dynamics, title)") == []


@pytest.mark.parametrize("name", chapters())
def test_no_notebook_defines_or_draws_by_hand(name):
    nb = jupytext.read(notebook_path(name))
    found = [line for cell in nb.cells if cell.cell_type == "code"
             for line in definitions(cell.source)]
    assert found == [], name


def logic(code: str) -> list[str]:
    """What in one code cell's ``code`` is control flow (if, for, while, with, try, a
    conditional expression) or assembles a string (an f-string, ``.format``, ``%`` or ``+`` on
    a string): work for ``src/``, not for the page. Comprehensions are expressions, not flow."""
    found = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, (ast.If, ast.For, ast.While, ast.With, ast.Try, ast.IfExp)):
            found.append(type(node).__name__.lower())
        elif isinstance(node, ast.JoinedStr):
            found.append("f-string")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "format" and isinstance(node.func.value, ast.Constant)):
            found.append("str.format")
        elif (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod))
              and any(isinstance(x, ast.Constant) and isinstance(x.value, str)
                      for x in (node.left, node.right))):
            found.append("string " + ("+" if isinstance(node.op, ast.Add) else "%"))
    return found


@pytest.mark.parametrize("code, held", [
    ("if R is not None:\n    display(t)", ["if"]),
    ("for name in names:\n    show(name)", ["for"]),
    ('fig = plot(p, f"Pass@k along training, {Q.samples} samples")', ["f-string"]),
    ('title = "Pass@k " + name', ["string +"]),
    ('"{} steps".format(n)', ["str.format"]),
    ("x = a if b else c", ["ifexp"]),
    ("style.show(figures.plot_figure1(P, runs), sentences.figure1_caption(P))", []),
    ("checks = {n: check(p) for n, p in pairs.items()}", []),
    ("total = a + b", []),
])
def test_the_logic_check_sees_flow_and_assembly(code, held):
    assert logic(code) == held


@pytest.mark.parametrize("name", chapters())
def test_no_cell_branches_or_assembles_words(name):
    """Every cell of every chapter, shown or hidden: a few calls (``logic`` finds nothing)."""
    nb = jupytext.read(notebook_path(name))
    found = [(cell.source.splitlines()[0], held) for cell in nb.cells
             if cell.cell_type == "code" and (held := logic(cell.source))]
    assert found == [], name
