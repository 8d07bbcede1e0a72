"""The chapters' notebooks are prose and calls: no function or class is defined in one (logic
lives in ``src/``, where tests cover it), and no figure is drawn cell by cell."""
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
