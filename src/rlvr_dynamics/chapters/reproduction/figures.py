"""The reproduction chapter's figures: Pass@k curves (shared with the pretrained chapter:
``chapters.figures``), the per-problem scatter, the paths' shares over training beside the toy,
and the case study's corrected steps (its tables for people are in ``shown``)."""
from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from rlvr_dynamics import boundary, toy
from rlvr_dynamics.chapters.figure_check import FULL
from rlvr_dynamics.chapters.figures import plot_passk, plot_policy  # noqa: F401 (the page's)
from rlvr_dynamics.chapters.reproduction import windowed
from rlvr_dynamics.chapters.style import COLORS, PATH_STYLE
from rlvr_dynamics.rl.algorithms import BASE


def plot_per_problem(recs: dict[tuple, pd.DataFrame], setting: str, benchmarks: Sequence[str],
                     labels: Sequence[str], hard: set[str],
                     title: str = "Per problem, trained against base") -> plt.Figure:
    """Problem by problem under ``setting``: the base's probability of a correct sample (x)
    against each trained model's (y, mean over seeds), one row of panels per benchmark, one
    panel per model of ``labels``; problems beyond the direct path (``hard``) in red."""
    fig, axes = plt.subplots(len(benchmarks), len(labels),
                             figsize=(min(FULL, 2.4 * len(labels) + 0.5),
                                      2.4 * len(benchmarks) + 0.6),
                             squeeze=False,
                             sharex=True, sharey=True)
    for row, bench in zip(axes, benchmarks):
        share = boundary.per_problem(recs, setting, bench, [BASE, *labels])
        red = share.index.isin(list(hard))
        for ax, label in zip(row, labels):
            ax.scatter(share[BASE][~red], share[label][~red], s=8, color="tab:blue",
                       label="within the direct path")
            ax.scatter(share[BASE][red], share[label][red], s=8, color="tab:red",
                       label="beyond the direct path")
            ax.plot([0, 1], [0, 1], color="grey", lw=0.8)
            ax.set(title=f"{label}, {bench}")
        row[0].set_ylabel("trained: share correct")
    for ax in axes[-1]:
        ax.set_xlabel("base: share correct")
    fig.legend(*axes[0][0].get_legend_handles_labels(), loc="outside lower center", ncol=2)
    fig.suptitle(title)
    return fig


def _band(ax, runs: list[list[dict]], key: str, window: int, **style) -> bool:
    """``key`` over training in windows (``windowed``): the mean over seeds and a band from the
    lowest to the highest seed; False (nothing drawn) where no run measured it."""
    x, v = windowed(runs, key, window)
    if np.isnan(v).all():
        return False
    ax.plot(x, np.nanmean(v, 0), **style)
    ax.fill_between(x, np.nanmin(v, 0), np.nanmax(v, 0), color=style.get("color"), alpha=0.12,
                    lw=0)
    return True


def plot_paths(dynamics: dict[str, list[list[dict]]], prefix: str, window: int, title: str,
               toy_summary: toy.Summary | None = None, toy_title: str = ""
               ) -> plt.Figure | None:
    """The share of rollouts on each path (``PATH_STYLE``) over training, one panel per
    algorithm (mean over seeds, band from the lowest to the highest seed), with the toy's mean
    policy in a first panel when ``toy_summary`` is given; at most three panels to a row.
    None where there is nothing to draw (runs a profile did not make)."""
    if not dynamics and toy_summary is None:
        return None
    n = len(dynamics) + (toy_summary is not None)
    cols = min(3, n)
    rows = -(-n // cols)
    fig, grid = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.7 * rows + 0.5), squeeze=False)
    axes = list(grid.flat)
    for ax in axes[n:]:
        ax.axis("off")
    if toy_summary is not None:
        ax = axes.pop(0)
        plot_policy(ax, toy_summary, 0, toy_title)
        ax.legend()  # a1: explored, partly right; a2: rare, right; a3: wrong
    for ax, (label, runs) in zip(axes, dynamics.items()):
        for key, (name, color, ls) in PATH_STYLE.items():
            _band(ax, runs, prefix + key, window, color=color, ls=ls, lw=1.4, label=name)
        ax.set(title=label, xlabel="training step", ylim=(-0.02, 1.02))
        ax.grid(alpha=0.3)
    for ax in grid[:, 0]:
        ax.set_ylabel("share of rollouts")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=4)
    fig.suptitle(title)
    return fig


def plot_corrected(dynamics: dict[str, list[list[dict]]], window: int,
                   title: str = "Corrected steps in the rollouts") -> plt.Figure:
    """The share of rollouts with a corrected step, and of those also correct (rewarded), over
    training: one line per algorithm (mean over seeds, band from the lowest to the highest)."""
    fig, axes = plt.subplots(1, 2, figsize=(7, 3))
    for label, runs in dynamics.items():
        for ax, key in zip(axes, ("trace_corrected", "trace_corrected_right")):
            _band(ax, runs, key, window, color=COLORS[label], label=label)
    axes[0].set(title="rollouts with a corrected step", xlabel="training step", ylabel="share")
    axes[1].set(title="... that are also correct (rewarded)", xlabel="training step")
    axes[0].legend()
    fig.suptitle(title)
    return fig
