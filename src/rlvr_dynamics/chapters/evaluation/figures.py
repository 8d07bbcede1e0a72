"""The evaluation chapter's figures: Pass@k curves, shown below our Pass@k in Table 1's layout
(``passk_section``; the chapter's styled tables are in ``shown``)."""
from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import Markdown, display

from rlvr_dynamics.chapters.evaluation import Params
from rlvr_dynamics.chapters.evaluation.sentences import empty_table, passk_title
from rlvr_dynamics.chapters.evaluation.shown import passk_marks


def plot_passk(summary: pd.DataFrame, title: str) -> plt.Figure:
    """Pass@k against k (log2 axis), one panel per benchmark, one line per model, with the
    bootstrap interval shaded."""
    benches = list(dict.fromkeys(summary["benchmark"]))
    fig, axes = plt.subplots(1, len(benches), figsize=(max(8.0, 4.2 * len(benches)), 3.8),
                             squeeze=False)
    for ax, bench in zip(axes[0], benches):
        part = summary[summary["benchmark"] == bench]
        for model, g in part.groupby("model", sort=False):
            ax.plot(g["k"], g["pass@k"], marker="o", ms=3, label=model)
            ax.fill_between(g["k"], g["low"], g["high"], alpha=0.2)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("k")
        ax.set_ylabel("Pass@k (%)")
        ax.set_title(f"{bench} ({int(part['problems'].iloc[0])} problems)", fontsize=10)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.suptitle(textwrap.fill(title, 110), fontsize=9)
    fig.tight_layout()
    return fig


def passk_section(P: Params, table: str, summary: pd.DataFrame | None) -> None:
    """``table``'s Pass@k with its marks, then its curves; or a line saying that the table has
    no models."""
    if summary is None:
        display(Markdown(empty_table(table)))
        return
    display(passk_marks(summary))
    plot_passk(summary, passk_title(P, table))
