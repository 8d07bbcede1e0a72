"""The pretrained chapter's figures: Figure 2's dynamics and Pass@k of the base and the trained
models (shared: ``chapters.figures``), and Pass@k along training from the runs' sampled probes
(its tables for people are in ``shown``)."""
from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
import pandas as pd

from rlvr_dynamics.chapters.figures import plot_dynamics, plot_passk  # noqa: F401 (the page's)
from rlvr_dynamics.chapters.style import COLORS


def plot_probe(long: pd.DataFrame, title: str) -> plt.Figure:
    """Pass@k over training, one panel per (setting, level, k), one line per algorithm (mean
    over seeds, shaded from the lowest to the highest)."""
    panels = list(dict.fromkeys(zip(long["setting"], long["level"], long["k"])))
    cols = min(4, len(panels))
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.3 * cols, 2.7 * rows), squeeze=False,
                             sharex=True, sharey=True, constrained_layout=True)
    for ax, (setting, level, k) in zip(axes.flat, panels):
        part = long[(long["setting"] == setting) & (long["level"] == level) & (long["k"] == k)]
        for label, g in part.groupby("model", sort=False):
            s = g.groupby("step")["pass@k"].agg(["mean", "min", "max"])
            ax.plot(s.index, s["mean"], color=COLORS.get(label), label=label, lw=1.4)
            ax.fill_between(s.index, s["min"], s["max"], color=COLORS.get(label), alpha=0.15,
                            lw=0)
        ax.set_title(f"{level}, {setting}: Pass@{k}", fontsize=8)
        ax.grid(alpha=0.3)
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7)
    fig.supxlabel("training step", fontsize=8)
    fig.suptitle(textwrap.fill(title, 150), fontsize=8)
    return fig
