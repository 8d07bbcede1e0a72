"""The mechanism chapter's figure: P(stepwise) on the rare-path-only problems relative to its
start, per way of training (the geometric mean over seeds, the band from the lowest to the
highest seed), item 3's GRPO runs beside their rescaled crossover, item 4's and 5's GRPO-N
runs beside the margin that reads a loss of the rare path."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from rlvr_dynamics.chapters.figure_check import FULL
from rlvr_dynamics.chapters.mechanism import Reading, spread as spread_of
from rlvr_dynamics.regimes.mechanism import MARGIN


def plot_falls(R: Reading | None, rescaled: dict[str, float],
               title: str = "The rare path's mass, way by way") -> plt.Figure | None:
    """The runs of ``R`` (``mechanism.spread`` of its curves: per way and step, the geometric
    mean and the lowest and highest seed) in two panels: the GRPO ways (item 3) with each rung's rescaled crossover
    (``rescaled``: rung -> steps; the rungs ``R`` gave time) dashed, and the GRPO-N ways (items 4, 5) with the fall of
    ``MARGIN`` dotted. None without runs."""
    if R is None or R.curves.empty:
        return None
    spread = spread_of(R.curves)
    fig, axes = plt.subplots(1, 2, figsize=(FULL, 5.0), squeeze=False, layout="constrained")
    colours = plt.get_cmap("tab10")
    for ax, algorithm in zip(axes[0], ("GRPO", "GRPO-N")):
        mine = spread[spread["way"].str.split(",").str[0].str.endswith(f" {algorithm}")]
        for i, (w, g) in enumerate(mine.groupby("way", sort=False)):
            g = g.sort_values("step")
            ax.plot(g["step"], g["mean"], color=colours(i % 10), lw=1.2, label=w)
            ax.fill_between(g["step"], g["low"], g["high"], color=colours(i % 10), alpha=0.15)
        if algorithm == "GRPO":
            for rung, t in rescaled.items():
                if rung in R.stage_two and np.isfinite(t):
                    ax.axvline(t, color="k", ls="--", lw=0.8)
                    ax.annotate(f"{rung}: rescaled crossover", (t, 1.0), fontsize=9,
                                rotation=90, va="bottom", ha="right")
            ax.set_title("Item 3: GRPO given time")
        else:
            ax.axhline(1 - MARGIN, color="k", ls=":", lw=0.8, label="the margin of a loss")
            ax.set_title("Items 4 and 5: GRPO-N")
        ax.set_yscale("log")
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=2)
    axes[0, 0].set_ylabel("P(stepwise) / its start")
    fig.suptitle(title)
    return fig
