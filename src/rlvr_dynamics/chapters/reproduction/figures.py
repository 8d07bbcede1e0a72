"""The reproduction chapter's figures: Pass@k curves (shared with the pretrained chapter:
``chapters.figures``), the per-problem scatter, the paths' shares over training beside the toy,
and the case study's corrected steps (its tables for people are in ``shown``)."""
from __future__ import annotations

import textwrap
from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from rlvr_dynamics import boundary, toy
from rlvr_dynamics.chapters.figures import plot_passk, plot_policy  # noqa: F401 (the page's)
from rlvr_dynamics.chapters.reproduction import windowed
from rlvr_dynamics.chapters.style import COLORS, PATH_STYLE
from rlvr_dynamics.rl.algorithms import BASE


def plot_per_problem(recs: dict[tuple, pd.DataFrame], setting: str, benchmarks: Sequence[str],
                     labels: Sequence[str], hard: set[str], title: str) -> plt.Figure:
    """Problem by problem under ``setting``: the base's probability of a correct sample (x)
    against each trained model's (y, mean over seeds), one row of panels per benchmark, one
    panel per model of ``labels``; problems beyond the direct path (``hard``) in red."""
    fig, axes = plt.subplots(len(benchmarks), len(labels),
                             figsize=(3 * len(labels), 2.9 * len(benchmarks)), squeeze=False,
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
            ax.set(title=f"{label}, {bench}", xlabel="base: share correct")
            ax.title.set_fontsize(9)
        row[0].set_ylabel("trained: share correct")
    axes[0][0].legend(fontsize=7)
    fig.suptitle(title, fontsize=8)
    fig.tight_layout()
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
               toy_summary: toy.Summary | None = None, toy_title: str = "") -> plt.Figure:
    """The share of rollouts on each path (``PATH_STYLE``) over training, one panel per
    algorithm (mean over seeds, band from the lowest to the highest seed), with the toy's mean
    policy in a first panel when ``toy_summary`` is given."""
    n = len(dynamics) + (toy_summary is not None)
    fig, axes = plt.subplots(1, n, figsize=(3.1 * n, 3.0), squeeze=False)
    axes = list(axes[0])
    if toy_summary is not None:
        ax = axes.pop(0)
        plot_policy(ax, toy_summary, 0, toy_title)
        ax.legend(fontsize=7)  # a1: explored, partly right; a2: rare, right; a3: wrong
    for ax, (label, runs) in zip(axes, dynamics.items()):
        for key, (name, color, ls) in PATH_STYLE.items():
            _band(ax, runs, prefix + key, window, color=color, ls=ls, lw=1.4, label=name)
        ax.set(title=label, xlabel="training step", ylim=(-0.02, 1.02))
        ax.title.set_fontsize(9)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("share of rollouts")
    axes[-1].legend(fontsize=7)
    fig.suptitle(textwrap.fill(title, 160), fontsize=8)
    fig.tight_layout()
    return fig


def plot_corrected(dynamics: dict[str, list[list[dict]]], window: int, title: str
                   ) -> plt.Figure:
    """The share of rollouts with a corrected step, and of those also correct (rewarded), over
    training: one line per algorithm (mean over seeds, band from the lowest to the highest)."""
    fig, axes = plt.subplots(1, 2, figsize=(8, 3), constrained_layout=True)
    for label, runs in dynamics.items():
        for ax, key in zip(axes, ("trace_corrected", "trace_corrected_right")):
            _band(ax, runs, key, window, color=COLORS[label], label=label)
    axes[0].set(title="rollouts with a corrected step", xlabel="training step", ylabel="share")
    axes[1].set(title="... that are also correct (rewarded)", xlabel="training step")
    axes[0].legend(fontsize=7)
    fig.suptitle(title, fontsize=8)
    return fig
