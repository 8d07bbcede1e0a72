"""Figures that several chapters draw: the toy's policy over training (the toy chapter's, and
the reproduction chapter's beside the language model's paths), Figure 2's training dynamics,
and Pass@k over seeds (the reproduction chapter's and the pretrained chapter's; Tables 1 and 4
styled are in ``chapters.shown``).

Presentation only (``imports.is_presentation``), like ``style``."""
from __future__ import annotations

from typing import Any, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from rlvr_dynamics import toy
from rlvr_dynamics.chapters.figure_check import FULL
from rlvr_dynamics.chapters.style import ACTION_COLORS, COLORS, PATH_STYLE
from rlvr_dynamics.comparison.metrics import over_seeds
from rlvr_dynamics.rl.dynamics import curve


def plot_policy(ax, summary: toy.Summary, s: int, title: str = "") -> None:
    """Setting s: per action, the mean of pi over seeds (solid), the central band of seeds
    (shaded), the first seeds (thin) and the mean field (dashed)."""
    x = np.arange(len(summary.mean))
    for k in range(summary.mean.shape[-1]):
        c = ACTION_COLORS[k]
        ax.fill_between(x, summary.lo[:, s, k], summary.hi[:, s, k], color=c, alpha=0.12, lw=0)
        ax.plot(x, summary.examples[:, s, :, k], color=c, lw=0.5, alpha=0.45)
        ax.plot(x, summary.mean_field[:, s, k], color=c, ls="--", lw=1.2)
        ax.plot(x, summary.mean[:, s, k], color=c, lw=2, label=rf"$\pi(a_{k + 1})$")
    ax.set(ylim=(-0.02, 1.02), xlabel="step", title=title)


PANELS = [("greedy_accuracy", "greedy accuracy (held-out)"),
          ("heldout_entropy", "token entropy (held-out)"),
          ("actor_entropy", "actor entropy (rollouts)"),
          ("reward", "mean reward (rollouts)"),
          ("frac_negative", "fraction of negative samples"),
          ("kl", "KL to the reference"),
          ("clip_fraction", "clip fraction")]


def plot_dynamics(dynamics: dict[str, list[list[dict[str, Any]]]],
                  title: str = "Training dynamics (Figure 2's layout)"):
    """``dynamics``: algorithm label -> one record list (``dynamics.records``) per seed."""
    fig, axes = plt.subplots(2, 4, figsize=(10, 5.6))
    for ax, (key, name) in zip(axes.flat, PANELS):
        for label, runs in dynamics.items():
            if not all(any(key in r for r in run) for run in runs):
                continue
            steps, values = curve(runs, key)
            color = COLORS.get(label)
            ax.plot(steps, values.mean(0), color=color, label=label, lw=1.5)
            if len(runs) > 1:
                ax.fill_between(steps, values.min(0), values.max(0), color=color, alpha=0.2,
                                lw=0)
        ax.set_title(name)
        ax.set_xlabel("training step")
        ax.grid(alpha=0.3)
    axes.flat[-1].axis("off")
    axes.flat[-1].legend(*axes.flat[0].get_legend_handles_labels(), loc="center")
    fig.suptitle(title)
    return fig


def plot_passk(long: pd.DataFrame, title: str = "Pass@k of the base and the trained models"
               ) -> plt.Figure:
    """Pass@k against k: one panel per (setting, benchmark), one line per model (mean over
    seeds, shaded from the lowest to the highest seed), at most four to a row."""
    panels = list(dict.fromkeys(zip(long["setting"], long["benchmark"])))
    cols = min(4, len(panels))
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(2.4 * cols + 0.4, 2.6 * rows + 0.6),
                             squeeze=False, sharey=True)
    for ax, (setting, bench) in zip(axes.flat, panels):
        part = long[(long["setting"] == setting) & (long["benchmark"] == bench)]
        stats = over_seeds(part, "pass@k", ["model", "k"]).reset_index()
        for label, g in stats.groupby("model", sort=False):
            color = COLORS.get(label)
            ax.plot(g["k"], g["mean"], marker="o", ms=2.5, lw=1.3, color=color, label=label)
            ax.fill_between(g["k"], g["min"], g["max"], color=color, alpha=0.15, lw=0)
        ax.set_xscale("log", base=2)
        ax.set(xlabel="k", title=f"{bench}, {setting}")
        ax.grid(alpha=0.3)
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    for ax in axes[:, 0]:
        ax.set_ylabel("Pass@k (%)")
    axes[0][0].legend()
    fig.suptitle(title)
    return fig


# --- the paper's scenario in the LM (the scenario, ladder and regime map chapters) ---------------

PATHS_DRAWN = {**PATH_STYLE, "guess": ("guess", "0.45", "-")}
"""The reproduction chapter's paths and the guess (the bad path of the paper's scenario)."""


def band(ax, g: pd.DataFrame, column: str, **style) -> None:
    """``column`` of ``g`` over its steps: the mean over seeds, a band from min to max."""
    s = g.groupby("step")[column].agg(["mean", "min", "max"])
    ax.plot(s.index, s["mean"], lw=1.4, **style)
    ax.fill_between(s.index, s["min"], s["max"], color=style.get("color"), alpha=0.12, lw=0)


def plot_regimes(means: pd.DataFrame, regimes: Sequence[str], k: int,
                 title: str = "Each regime over training", split: str = "test") -> plt.Figure:
    """A row per regime of ``regimes``: per algorithm, the paths' masses over steps (the toy's
    Figure 1 layout), then Pass@k over steps on all problems and on the rare-path-only ones,
    under the full distribution (solid) and the paper's setting (dashed, where probed); mean
    over seeds, band min-max."""
    part = means[means["split"] == split]
    algos = list(dict.fromkeys(part["algorithm"]))
    cols = len(algos) + 2
    fig, grid = plt.subplots(len(regimes), cols,
                             figsize=(min(FULL, 2.5 * cols), 2.3 * len(regimes) + 1.0),
                             squeeze=False, sharex=True)
    for axes, regime in zip(grid, regimes):
        mine = part[part["regime"] == regime]
        full = mine[mine["setting"] == "full"]
        for ax, a in zip(axes, algos):
            for key, (name, color, style) in PATHS_DRAWN.items():
                band(ax, full[full["algorithm"] == a], key, color=color, ls=style, label=name)
            ax.set(title=f"{a}: paths", ylim=(-0.02, 1.02))
        axes[0].set_ylabel(f"{regime}\nprobability mass")
        for ax, prefix, name in ((axes[-2], "", "all"), (axes[-1], "hard_", "rare-only")):
            for a in algos:
                for setting, ls in (("full", "-"), ("paper", "--")):
                    g = mine[(mine["algorithm"] == a) & (mine["setting"] == setting)]
                    if g.empty:  # a profile that probed the full distribution alone
                        continue
                    band(ax, g, f"{prefix}pass@{k}", color=COLORS.get(a), ls=ls,
                          label=f"{a}, {setting}")
            ax.set(title=f"Pass@{k}, {name}", ylim=(-2, 102))
        for ax in axes:
            ax.grid(alpha=0.3)
    for ax in grid[-1]:
        ax.set_xlabel("training step")
    legends = [grid[0][len(algos) - 1], grid[0][-1]]
    handles = [h for ax in legends for h in ax.get_legend_handles_labels()[0]]
    labels = [x for ax in legends for x in ax.get_legend_handles_labels()[1]]
    fig.legend(handles, labels, loc="outside lower center", ncol=4)
    fig.suptitle(title)
    return fig

