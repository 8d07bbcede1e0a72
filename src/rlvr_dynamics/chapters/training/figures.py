"""The training chapter's figures: Figure 2's dynamics (mean over seeds, band from min to max)
and the end of training against the weight lambda on positive samples."""
from __future__ import annotations

import textwrap
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from rlvr_dynamics.chapters.style import COLORS
from rlvr_dynamics.rl.dynamics import curve

PANELS = [("greedy_accuracy", "greedy accuracy (held-out)"),
          ("heldout_entropy", "token entropy (held-out)"),
          ("actor_entropy", "actor entropy (rollouts)"),
          ("reward", "mean reward (rollouts)"),
          ("frac_negative", "fraction of negative samples"),
          ("kl", "KL to the reference"),
          ("clip_fraction", "clip fraction")]


def plot_dynamics(dynamics: dict[str, list[list[dict[str, Any]]]], title: str):
    """``dynamics``: algorithm label -> one record list (``dynamics.records``) per seed."""
    fig, axes = plt.subplots(2, 4, figsize=(15, 6.5), constrained_layout=True)
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
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("training step")
        ax.grid(alpha=0.3)
    axes.flat[0].legend(fontsize=9)
    axes.flat[-1].axis("off")
    fig.suptitle(textwrap.fill(title, 170), fontsize=10)
    return fig


def plot_lambda(final: dict[float, list[dict[str, Any]]], title: str):
    """``final``: lambda -> the last record of each seed's run; the held-out accuracy and
    entropy at the end of training against lambda (0: GRPO-N, 1: GRPO)."""
    lams = sorted(final)
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4), constrained_layout=True)
    for ax, (key, name) in zip(axes, PANELS[:2]):
        values = [np.array([r[key] for r in final[lam]], dtype=float) for lam in lams]
        mean = np.array([v.mean() for v in values])
        ax.plot(lams, mean, "o-", color="tab:purple")
        for lam, v in zip(lams, values):
            ax.plot([lam] * len(v), v, ".", color="tab:purple", alpha=0.4)
        ax.set_xlabel("λ (weight on positive samples)")
        ax.set_title(f"{name} at the end", fontsize=10)
        ax.grid(alpha=0.3)
    fig.suptitle(textwrap.fill(title, 100), fontsize=9)
    return fig
