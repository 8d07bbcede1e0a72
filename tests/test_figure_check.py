"""Figures that read at the page's width: the check finds each planted fault (a tiny font once
scaled, a settings paragraph as a title, tick labels run into each other) and passes a figure
drawn with the book's settings; ``style.show`` leaves the caption that the execution makes the
figure's caption on the page, and a captioned figure beside another display is an error."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import nbformat  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from rlvr_dynamics import execution  # noqa: E402
from rlvr_dynamics.chapters import CAPTION  # noqa: E402
from rlvr_dynamics.chapters import figure_check, style  # noqa: E402


@pytest.fixture
def book_rc():
    plt.close("all")
    with plt.rc_context(style.FIGURE_RC):
        yield
    plt.close("all")


def good() -> plt.Figure:
    fig, axes = plt.subplots(1, 2, figsize=(7, 3))
    for ax in axes:
        ax.plot(np.arange(10), np.arange(10) ** 2, label="GRPO")
        ax.set(xlabel="training step", ylabel="P(stepwise)", title="GRPO-N")
        ax.legend()
    fig.suptitle("The rare path over training")
    return fig


def test_a_figure_drawn_with_the_books_settings_reads(book_rc):
    assert figure_check.problems(good()) == []


def test_a_wide_figure_shrunk_into_the_column_has_fonts_too_small(book_rc):
    fig, ax = plt.subplots(figsize=(15, 3))
    ax.plot([0, 1])
    found = figure_check.problems(fig)
    assert found and all("pt on the page" in p for p in found), found
    assert figure_check.problems(fig, width=15) == []  # shown at its own width, it reads
    with pytest.raises(figure_check.FigureError, match="at least 9"):
        figure_check.check(fig)


def test_a_settings_paragraph_as_title_is_found(book_rc):
    fig = good()
    fig.suptitle("adam, η=0.1, G=2, τ=1.0; mean over 1000 seeds (standard error ≤ 0.5/√1000); "
                 "band: central 80 % of seeds", fontsize=10)
    (found,) = figure_check.problems(fig)
    assert "characters; at most 70" in found


def test_a_twin_axis_does_not_count_the_shared_axis_twice(book_rc):
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([0.005, 0.009], [1, 2])
    ax.set_xticks([0.005, 0.009], ["0.005", "0.009"])
    ax.twinx().plot([0.005, 0.009], [3, 4])
    assert figure_check.problems(fig) == []


def test_tick_labels_run_into_each_other_are_found(book_rc):
    fig, ax = plt.subplots(figsize=(3, 2.5))
    ax.plot([20, 90], [1, 2])
    ax.set_xscale("log")
    ax.set_xticks([20, 30, 40, 50, 60, 70, 80, 90],
                  [rf"${k}\times10^1$" for k in range(2, 10)])
    found = figure_check.problems(fig)
    assert any("overlap" in p for p in found), found


def test_show_leaves_a_caption_that_the_execution_makes_the_figures(book_rc, monkeypatch):
    shown = []
    monkeypatch.setattr(style, "display", lambda fig, metadata: shown.append(metadata))
    style.show(good(), "Settings: 3 seeds, bands min to max.", full=True)
    assert shown == [{CAPTION: {"caption": "Settings: 3 seeds, bands min to max.",
                                          "full": True}}]
    assert plt.get_fignums() == []  # closed: the cell shows it once (none else was open)
    with pytest.raises(figure_check.FigureError):
        fig, ax = plt.subplots(figsize=(20, 3))
        style.show(fig, "too wide for the column")
    out = {"output_type": "display_data", "data": {"image/png": ""}, "metadata": shown[0]}
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(outputs=[out]),
                                         nbformat.v4.new_code_cell()])
    execution.captions(nb, "page")
    assert nb.cells[0].metadata["mystnb"] == {"figure": {
        "caption": "Settings: 3 seeds, bands min to max."}}
    assert "full-width" in nb.cells[0].metadata["tags"] and "mystnb" not in nb.cells[1].metadata
    nb.cells[0].outputs.append({"output_type": "display_data", "data": {"text/html": "<table>"},
                                "metadata": {}})
    with pytest.raises(ValueError, match=r"notebooks/page.md, code cell 0: a captioned figure "
                                         r"must be its cell's only display; the cell shows 2"):
        execution.captions(nb, "page")
