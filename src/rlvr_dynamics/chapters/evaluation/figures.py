"""The evaluation chapter's figures and styled tables: Pass@k curves and tables in Table 1's
layout (ours and the paper's, with its marks), entropies in Table 4's, the estimator's check."""
from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import Markdown, display

from rlvr_dynamics import measure as ev
from rlvr_dynamics import paper_tables
from rlvr_dynamics.chapters.evaluation import EstimatorChecks, Params, deviation_table
from rlvr_dynamics.chapters.evaluation.sentences import (NO_GRADER_CHECK, OURS_PASSK,
                                                         PAPER_ENTROPY, PAPER_PASSK,
                                                         deviation_caption, empty_table,
                                                         entropy_caption, passk_title)
from rlvr_dynamics.chapters.style import mark_best, styled


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


def deviations(check: EstimatorChecks):
    """The estimator's second check as a table: mean estimate minus 1 - (1 - p)^k."""
    return styled(deviation_table(check), 4, deviation_caption(check))


def grader_report(report: pd.DataFrame | None):
    """The grader's check per benchmark, or a line saying that it did not run."""
    return Markdown(NO_GRADER_CHECK) if report is None else report


def passk_marks(summary: pd.DataFrame):
    """Our Pass@k in Table 1's layout, with its marks (``style.mark_best``)."""
    return mark_best(ev.passk_table(summary), caption=OURS_PASSK)


def passk_section(P: Params, table: str, summary: pd.DataFrame | None) -> None:
    """``table``'s Pass@k with its marks, then its curves; or a line saying that the table has
    no models."""
    if summary is None:
        display(Markdown(empty_table(table)))
        return
    display(passk_marks(summary))
    plot_passk(summary, passk_title(P, table))


def paper_passk(table: int):
    """The paper's Table ``table`` (1 or 2), quoted, with our marking rule."""
    return mark_best(paper_tables.passk_table(table), caption=PAPER_PASSK.format(table=table))


def entropies(P: Params, records: dict[tuple[str, str], pd.DataFrame]):
    """Our entropies in Table 4's layout."""
    return styled(ev.entropy_table(records), 3, entropy_caption(P))


def paper_entropies():
    """The paper's Table 4, quoted."""
    return styled(paper_tables.entropy_table(), 3, PAPER_ENTROPY)
