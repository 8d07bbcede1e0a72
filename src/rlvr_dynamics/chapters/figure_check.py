"""Whether a figure reads at the width the book shows it: every text at least ``MIN_POINTS`` once
the figure is scaled to the page, titles short (the settings go into the caption under it), no
two texts drawn over each other.

The book shows a figure at its natural size (``DPI`` pixels an inch) or, where it is wider than
its place, scaled down to fit: the text column (``COLUMN`` inches) or, for a figure shown full
width, the column and the margin (``FULL``). Measured on the book's pages at a 1300-pixel
window (sphinx-book-theme). Presentation only (``imports.is_presentation``), like ``style``.
"""
from __future__ import annotations

from itertools import combinations

import matplotlib.pyplot as plt
from matplotlib.text import Text

DPI = 100
"""Pixels an inch at which the page shows a figure (matplotlib's, the inline backend's)."""
COLUMN, FULL = 7.0, 10.0
"""The width in inches of the text column and of a full-width cell at ``DPI``."""
MIN_POINTS = 9.0
"""The smallest text, in points at the size the page shows it."""
TITLE_CHARS = 70
"""The longest title or panel title; settings belong in the caption."""
OVERLAP_PIXELS = 4.0
"""Two texts overlap where their boxes share more than this many square pixels."""


class FigureError(ValueError):
    """A figure that ``problems`` finds hard to read."""


def scale(fig: plt.Figure, width: float) -> float:
    """The factor by which the page shrinks ``fig`` into ``width`` inches (1 where it fits)."""
    return min(1.0, width / fig.get_figwidth())


def texts(fig: plt.Figure) -> list[Text]:
    """Every text the figure draws: visible, not empty (titles, labels, legends, and the tick
    labels of the ticks inside each visible axis's view, the only ones drawn)."""
    axes = [a for ax in fig.axes if ax.get_visible() for a in (ax.xaxis, ax.yaxis)]
    ticks = {id(label) for a in axes for tick in a.majorTicks + a.minorTicks
             for label in (tick.label1, tick.label2)}
    drawn = {id(label) for a in axes if a.get_visible() for tick in a._update_ticks()
             for label in (tick.label1, tick.label2)}  # a twin's shared axis is not drawn
    return [t for t in fig.findobj(Text)
            if t.get_visible() and t.get_text().strip() and t.figure is fig
            and (t.axes is None or t.axes.get_visible())
            and (id(t) not in ticks or id(t) in drawn)]


def problems(fig: plt.Figure, width: float = COLUMN) -> list[str]:
    """What makes ``fig``, shown ``width`` inches wide at most, hard to read: a text smaller
    than ``MIN_POINTS`` once scaled (``scale``), a title longer than ``TITLE_CHARS``, two texts
    whose boxes overlap by more than ``OVERLAP_PIXELS`` (tick labels of one axis included)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    shrink, out = scale(fig, width), []
    shown = texts(fig)
    titles = [fig._suptitle] + [t for ax in fig.axes for t in
                                (ax.title, ax._left_title, ax._right_title)]
    for t in shown:
        size = t.get_fontsize() * shrink
        if size < MIN_POINTS:
            out.append(f"text {t.get_text()[:40]!r} is {size:.1f} pt on the page "
                       f"(font {t.get_fontsize():g} pt, figure {fig.get_figwidth():g} in wide "
                       f"shown in {width:g}); at least {MIN_POINTS:g}")
        if t in titles and len(t.get_text()) > TITLE_CHARS:
            out.append(f"title {t.get_text()[:40]!r}... has {len(t.get_text())} characters; at "
                       f"most {TITLE_CHARS} (settings go into the caption)")
    boxes = [(t, t.get_window_extent(renderer)) for t in shown]
    for (a, box_a), (b, box_b) in combinations(boxes, 2):
        w = min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0)
        h = min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0)
        if w > 0 and h > 0 and w * h * (DPI / fig.dpi) ** 2 > OVERLAP_PIXELS:
            out.append(f"texts {a.get_text()[:30]!r} and {b.get_text()[:30]!r} overlap")
    return out


def check(fig: plt.Figure, width: float = COLUMN) -> plt.Figure:
    """``fig``, or a ``FigureError`` that lists its ``problems`` at ``width``."""
    found = problems(fig, width)
    if found:
        title = fig._suptitle.get_text() if fig._suptitle else ""
        raise FigureError(f"figure {title!r} reads badly at {width:g} in:\n  "
                          + "\n  ".join(found))
    return fig
