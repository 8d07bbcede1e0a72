"""Panels that several chapters draw: the toy's policy over training (the toy chapter's
figures, and the reproduction chapter's beside the language model's paths).

Presentation only (``imports.is_presentation``), like ``style``."""
from __future__ import annotations

import numpy as np

from rlvr_dynamics import toy
from rlvr_dynamics.chapters.style import ACTION_COLORS


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
