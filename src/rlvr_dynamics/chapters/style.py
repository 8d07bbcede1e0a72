"""How the book draws and writes numbers: the colour of each model's curves, of the toy's
actions, tables styled for a page, and numbers formatted for people.

Presentation only (``imports.is_presentation``): no module whose results are stored imports
this one, so a new colour or format never recomputes a result.
"""
from __future__ import annotations

import math
import re

import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import display
from matplotlib_inline.backend_inline import set_matplotlib_formats
from pandas.io.formats.style import Styler

from rlvr_dynamics.chapters import CAPTION, figure_check
from rlvr_dynamics.rl.algorithms import BASE
from rlvr_dynamics.tasks.sums import PATH_TRACES

COLORS = {BASE: "black", "GRPO": "tab:blue", "GRPO-N": "tab:orange", "GSPO": "tab:green",
          "GSPO-N": "tab:red", "NSR": "tab:purple", "W-REINFORCE": "tab:brown"}
"""The colour of each model's curves, by label (``rl.algorithms``' labels)."""

ACTION_COLORS = ("tab:blue", "tab:orange", "tab:gray", "tab:purple", "tab:brown", "tab:pink")
"""The toy's actions a1, a2, ... in every toy figure."""

PATH_STYLE = dict(zip(PATH_TRACES, (("direct, right", "tab:blue", "-"),
                                    ("direct, wrong", "tab:blue", ":"),
                                    ("stepwise, right", "tab:red", "-"),
                                    ("stepwise, wrong", "tab:red", ":"))))
"""How each path of the language model (``tasks.sums.PATH_TRACES``) is drawn: its name, colour
and line style (solid: right, dotted: wrong)."""

TINY = 5e-13
"""Below this in magnitude a computed number is floating-point residue: shown as 0."""


FIGURE_RC = {"font.size": 10, "axes.titlesize": 10, "axes.labelsize": 10,
             "xtick.labelsize": 9, "ytick.labelsize": 9, "legend.fontsize": 9,
             "figure.titlesize": 11, "figure.dpi": figure_check.DPI,
             "figure.constrained_layout.use": True}
"""matplotlib's settings for every figure on the pages: text that reads at the page's width
(``figure_check.MIN_POINTS``), laid out so that labels do not collide."""


def for_pages() -> None:
    """pandas' display on the book's pages: three decimals, and text never cut short (pandas
    cuts a cell's text at 50 characters, which hid the end of every claim's measurement);
    figures with ``FIGURE_RC``, drawn at twice the pixels they are shown at (sharp on any
    screen)."""
    pd.set_option("display.precision", 3)
    pd.set_option("display.max_colwidth", None)
    plt.rcParams.update(FIGURE_RC)
    set_matplotlib_formats("retina")


def show(fig: plt.Figure | None, caption: str, full: bool = False) -> None:
    """``fig`` on the page with ``caption`` (MyST: the settings, seeds and spread, written from
    the run) under it, full width where ``full``; checked first (``figure_check.check`` at the
    width it is shown at: a figure that reads badly is an error), and closed, so that the cell
    shows it once. Nothing where there is no figure (a section this build's profile does not
    run: its plotting function returns None)."""
    if fig is None:
        return
    figure_check.check(fig, figure_check.FULL if full else figure_check.COLUMN)
    display(fig, metadata={CAPTION: {"caption": caption, "full": full}})
    plt.close(fig)


def rounded(fmt: str, x: float) -> str:
    """``fmt.format(x)`` without a negative zero: a value that rounds to zero reads "+0" under
    a signed format and "0" under an unsigned one, never "-0"."""
    text = fmt.format(x)
    if text.startswith("-") and not re.search(r"[1-9]", text):
        return ("+" if "{:+" in fmt else "") + text[1:]
    return text


def number(x: float, digits: int = 3) -> str:
    """``x`` for a reader: ``digits`` significant digits, no exponent between 1e-4 and 1e6,
    floating-point residue (|x| < ``TINY``, e.g. 1.9e-123 or -1.1e-16) as "0", and "-" for a
    missing value (None or NaN); infinities as "∞"."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    x = float(x)
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    if abs(x) < TINY:
        return "0"
    if 1e-4 <= abs(x) < 1e6:
        return f"{x:.{digits}g}" if abs(x) < 10 ** digits else f"{x:.0f}"
    return f"{x:.{max(digits - 1, 0)}e}"


def styled(table: pd.DataFrame, decimals: int = 3, caption: str = ""):
    """A table for the book: numbers to ``decimals`` places ("-" where missing; text as it
    is, never cut short), spaced columns, a caption."""
    numbers = table.select_dtypes("number").columns
    return (table.style.format(f"{{:.{decimals}f}}", na_rep="-", subset=numbers)
            .set_caption(caption)
            .set_table_styles([{"selector": "td, th", "props": "padding: 0.1em 0.6em;"},
                               {"selector": "td", "props": "text-align: right;"}]))


def grouped(table: pd.DataFrame, sep: str = ": ") -> pd.DataFrame:
    """``table`` with each column label "group: name" split into two header rows (a group over
    its names), so that a wide table of repeated prefixes ("Adam: toy", "Adam: reading", "SGD:
    toy", ...) needs short labels only; a label without ``sep`` has no group."""
    return table.set_axis(pd.MultiIndex.from_tuples(
        [tuple(c.split(sep, 1)) if sep in c else ("", c) for c in table.columns]), axis=1)


def with_legend(table: pd.DataFrame, legend: dict[str, tuple[str, str]], unwrapped: bool = False
                ) -> Styler:
    """A wide table for the page: each long column label replaced by a short one and named in
    full in a legend under the table (``legend``: long label -> (short label, what it means)),
    numbers right-aligned, cells and row labels kept on one line where ``unwrapped`` (short
    values only: lists would run off the page); format it further by the short labels."""
    short = table.rename(columns={long: s for long, (s, _) in legend.items()})
    words = "; ".join(f"<b>{s}</b>: {meaning}" for s, meaning in legend.values())
    return (short.style.set_caption(words).set_table_attributes('class="dataframe"')
            .set_table_styles([{"selector": "caption", "props": "caption-side: bottom; "
                                "text-align: left; font-size: 0.9em;"},
                               {"selector": "td, th", "props": "padding: 0.1em 0.6em;"},
                               {"selector": "td", "props": "text-align: right;"
                                + (" white-space: nowrap;" if unwrapped else "")},
                               *([{"selector": "th.row_heading", "props": "white-space: nowrap;"}]
                                 if unwrapped else [])],
                              overwrite=False))


def mark_best(table: pd.DataFrame, decimals: int = 1, caption: str = ""):
    """Table 1's marks: within each benchmark and k, the best value (after rounding to
    ``decimals``) bold and the second best underlined; ties share the mark."""
    rounded = table.round(decimals)
    styles = pd.DataFrame("", index=table.index, columns=table.columns)
    for _, block in rounded.groupby(level=0, sort=False):
        for col in block.columns:
            values = sorted(set(block[col].dropna()), reverse=True)
            for rank, css in zip(values[:2], ("font-weight: bold", "text-decoration: underline")):
                styles.loc[block.index[block[col] == rank], col] = css
    return styled(rounded, decimals, caption).apply(lambda _: styles, axis=None)
