"""The evaluation chapter's figures: Pass@k curves, shown below our Pass@k in Table 1's layout
(``passk_section``; the chapter's styled tables are in ``shown``)."""
from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import Markdown, display

from rlvr_dynamics.chapters.evaluation import Params
from rlvr_dynamics.chapters.evaluation.sentences import empty_table, passk_caption
from rlvr_dynamics.chapters.evaluation.shown import passk_marks
from rlvr_dynamics.chapters.style import show


def plot_passk(summary: pd.DataFrame, title: str) -> plt.Figure:
    """Pass@k against k (log2 axis), one panel per benchmark, one line per model, with the
    bootstrap interval shaded."""
    benches = list(dict.fromkeys(summary["benchmark"]))
    fig, axes = plt.subplots(1, len(benches), figsize=(max(7.0, 4.2 * len(benches)), 3.8),
                             squeeze=False)
    for ax, bench in zip(axes[0], benches):
        part = summary[summary["benchmark"] == bench]
        for model, g in part.groupby("model", sort=False):
            ax.plot(g["k"], g["pass@k"], marker="o", ms=3, label=model)
            ax.fill_between(g["k"], g["low"], g["high"], alpha=0.2)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("k")
        ax.set_ylabel("Pass@k (%)")
        ax.set_title(f"{bench} ({int(part['problems'].iloc[0])} problems)")
        ax.grid(alpha=0.3)
    axes[0][0].legend()
    fig.suptitle(title)
    return fig


def passk_section(table: str, summary: pd.DataFrame | None) -> None:
    """``table``'s Pass@k with its marks; or a line saying that the table has no models."""
    display(Markdown(empty_table(table)) if summary is None else passk_marks(summary))


def show_passk(P: Params, table: str, summary: pd.DataFrame | None) -> None:
    """``table``'s Pass@k curves, captioned with its settings (none where it has no models)."""
    if summary is not None:
        show(plot_passk(summary, f"Pass@k of Table {table[-1]}'s models"),
             passk_caption(P, table), full=True)
