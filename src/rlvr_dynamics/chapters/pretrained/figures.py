"""The pretrained chapter's figures: Figure 2's dynamics and Pass@k of the base and the trained
models (shared: ``chapters.figures``), and Pass@k along training from the runs' sampled probes
(its tables for people are in ``shown``)."""
from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from rlvr_dynamics.chapters.figures import plot_dynamics, plot_passk  # noqa: F401 (the page's)
from rlvr_dynamics.chapters.style import COLORS


def plot_probe(long: pd.DataFrame, title: str = "Pass@k along training") -> plt.Figure:
    """Pass@k over training, one panel per (setting, level, k), one line per algorithm (mean
    over seeds, shaded from the lowest to the highest)."""
    panels = list(dict.fromkeys(zip(long["setting"], long["level"], long["k"])))
    cols = min(4, len(panels))
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(2.5 * cols, 2.4 * rows + 0.6), squeeze=False,
                             sharex=True, sharey=True)
    for ax, (setting, level, k) in zip(axes.flat, panels):
        part = long[(long["setting"] == setting) & (long["level"] == level) & (long["k"] == k)]
        for label, g in part.groupby("model", sort=False):
            s = g.groupby("step")["pass@k"].agg(["mean", "min", "max"])
            ax.plot(s.index, s["mean"], color=COLORS.get(label), label=label, lw=1.4)
            ax.fill_between(s.index, s["min"], s["max"], color=COLORS.get(label), alpha=0.15,
                            lw=0)
        ax.set_title(f"{level}, {setting}: Pass@{k}")
        ax.grid(alpha=0.3)
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    axes.flat[0].legend()
    fig.supxlabel("training step")
    fig.suptitle(title)
    return fig
