"""The scenario chapter's figures: the arm's and the control's P(stepwise) on the rare-path-only
problems over training, and each run's crossover against the toy's registered one (each regime
over training is the shared ``chapters.figures.plot_regimes``)."""
from __future__ import annotations

from typing import Collection

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from matplotlib.ticker import NullFormatter

from rlvr_dynamics.chapters.figure_check import FULL
from rlvr_dynamics.chapters.figures import band
from rlvr_dynamics.chapters.scenario import FALL_MARGIN
from rlvr_dynamics.regimes.stages import relative_stepwise
from rlvr_dynamics.chapters.style import COLORS


def plot_scenario(long: pd.DataFrame, hard: np.ndarray, controls: dict[str, str],
                  title: str = "The paper's scenario: three paths against two",
                  split: str = "test") -> plt.Figure | None:
    """The paper's scenario, one panel per algorithm: P(stepwise) on the rare-path-only
    problems relative to the start (full distribution) over training, in each arm (solid) and
    its control (dashed); mean over seeds, band min to max; the fall that counts as stage 1
    shaded. None without ``controls`` (a profile that runs no arm against its control)."""
    if not controls:
        return None
    part = long[(long["setting"] == "full") & (long["split"] == split)
                & long["regime"].isin([n for pair in controls.items() for n in pair])]
    algos = list(dict.fromkeys(part["algorithm"]))
    fig, axes = plt.subplots(1, len(algos), figsize=(min(FULL, 3.5 * len(algos)), 3.3),
                             squeeze=False, sharey=True)
    for ax, algo in zip(axes[0], algos):
        for arm, control in controls.items():
            for regime, ls in ((arm, "-"), (control, "--")):
                g = part[(part["regime"] == regime) & (part["algorithm"] == algo)]
                rel = relative_stepwise(g, hard).stack().rename("relative").reset_index()
                band(ax, rel, "relative", color=COLORS.get(algo), ls=ls, label=regime)
        ax.axhline(1, color="0.6", lw=0.8)
        ax.axhspan(1e-3, 1 - FALL_MARGIN, color="0.93", lw=0)
        ax.set_yscale("log")  # a fall and a hundredfold rise on one axis
        ax.set(title=algo, xlabel="training step", ylim=(0.1, None))
        ax.grid(alpha=0.3)
        ax.legend()
    axes[0][0].set_ylabel("P(stepwise), rare-only, / base")
    fig.suptitle(title)
    return fig


def plot_predicted(pairs: dict[str, pd.DataFrame], three: Collection[str],
                   title: str = "The model's crossover against the toy's") -> plt.Figure:
    """One panel per toy optimizer (``pairs``: optimizer -> ``stages.predicted_vs_measured``):
    each run's measured crossover against the toy's registered one, log-log, coloured by
    algorithm, a regime of ``three`` (three paths at the first character: ``Params.three``)
    filled and one of two paths hollow; a run that did not cross is drawn at its last probe as
    a triangle pointing up (it crosses later, if at all); the diagonal is agreement."""
    fig, axes = plt.subplots(1, len(pairs), figsize=(min(FULL, 3.6 * len(pairs) + 1.5), 3.8),
                             squeeze=False)
    for ax, (opt, t) in zip(axes[0], pairs.items()):
        t = t[np.isfinite(t["predicted"])]
        for (algo, arm, censored), g in t.groupby(
                ["algorithm", t["regime"].isin(list(three)), "censored"], sort=False):
            c = COLORS.get(algo)
            ax.scatter(g["predicted"], g["measured"], marker="^" if censored else "o", s=28,
                       facecolors=c if arm else "none", edgecolors=c,
                       label=f"{algo}, {'three' if arm else 'two'} paths"
                             + (", not crossed" if censored else ""))
        if len(t):
            lo = 0.5 * min(t["predicted"].min(), t["measured"].min())
            hi = 2 * max(t["predicted"].max(), t["measured"].max())
            ax.plot([lo, hi], [lo, hi], color="0.6", lw=0.8)
        ax.set(xscale="log", yscale="log", title=f"the toy under {opt}",
               xlabel="toy's crossover (its steps)")
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_minor_formatter(NullFormatter())
        ax.grid(alpha=0.3, which="both")
    axes[0][0].set_ylabel("model's crossover (its steps)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside right center")
    fig.suptitle(title)
    return fig

