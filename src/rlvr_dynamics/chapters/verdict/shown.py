"""The closing chapter's table as the page shows it: one row per claim (the claim, the paper's
numbers, ours, the verdict), text left-aligned in columns wide enough to read, the verdict
coloured by how it reads (the chapter draws no figure: its one table for people is here, its
words in ``sentences``)."""
from __future__ import annotations

import pandas as pd
from IPython.display import Markdown, display

from rlvr_dynamics import stats
from rlvr_dynamics.chapters.verdict import sentences

COLUMNS = {"claim": ("claim", "31%"), "paper": ("the paper", "22%"), "ours": ("ours", "31%"),
           "verdict": ("verdict", "16%")}
"""The columns of ``verdicts.table`` the page shows: heading and width."""

VERDICT_COLORS = {"replicates": "#1a7f37", "partly": "#9a6700",
                  "does not replicate": "#cf222e", stats.OPPOSITE: "#cf222e",
                  stats.NO_EFFECT: "#cf222e", stats.UNDECIDED: "#57606a",
                  stats.FEW_SEEDS: "#57606a", stats.CANNOT_INFORM: "#8c959f",
                  "not measured": "#8c959f"}
"""Green where the paper's claim replicates, amber where it partly does, red where it does
not, grey where the build cannot say."""


def verdict_table(table: pd.DataFrame, caption: str):
    """``table`` (``verdicts.table``) as the page's verdict table: one row per claim, fixed
    column widths over the whole width, text escaped and left-aligned, the verdict in colour."""
    shown = table[list(COLUMNS)].rename(columns={k: h for k, (h, _) in COLUMNS.items()})
    widths = [{"selector": f"th.col_heading.col{i}", "props": f"width: {w};"}
              for i, (_, w) in enumerate(COLUMNS.values())]
    return (shown.style.hide(axis="index").format(escape="html").set_caption(caption)
            .map(lambda v: f"color: {VERDICT_COLORS.get(v, 'inherit')}; font-weight: 600;",
                 subset=[COLUMNS["verdict"][0]])
            .set_table_styles([
                {"selector": "", "props": "table-layout: fixed; width: 100%; "
                                          "border-collapse: collapse; font-size: 0.9em;"},
                {"selector": "caption", "props": "caption-side: top; text-align: left; "
                                                 "font-weight: 600; padding-bottom: 0.4em;"},
                {"selector": "th, td", "props": "text-align: left; vertical-align: top; "
                                                "padding: 0.4em 0.6em; overflow-wrap: break-word;"},
                {"selector": "tbody tr", "props": "border-top: 1px solid #d0d7de;"},
                *widths]))


def beside(tables: dict[str, pd.DataFrame]) -> None:
    """Each other profile's verdicts (``chapter.beside``: name -> its table), after what the
    page says of them (``sentences.beside_text``); the words alone where a profile has none."""
    for name, other in tables.items():
        display(Markdown(sentences.beside_text(name, other)))
        if not other.empty:
            display(verdict_table(other, sentences.caption(name)))
