"""The training chapter's figures: Figure 2's dynamics (the shared ``chapters.figures``'s
``plot_dynamics``: mean over seeds, band from min to max) and the end of training against the
weight lambda on positive samples."""
from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from rlvr_dynamics.chapters.figures import PANELS, plot_dynamics  # noqa: F401 (the page's)

def plot_lambda(final: dict[float, list[dict[str, Any]]]):
    """``final``: lambda -> the last record of each seed's run; the held-out accuracy and
    entropy at the end of training against lambda (0: GRPO-N, 1: GRPO)."""
    lams = sorted(final)
    fig, axes = plt.subplots(1, 2, figsize=(7, 3.2))
    for ax, (key, name) in zip(axes, PANELS[:2]):
        values = [np.array([r[key] for r in final[lam]], dtype=float) for lam in lams]
        mean = np.array([v.mean() for v in values])
        ax.plot(lams, mean, "o-", color="tab:purple")
        for lam, v in zip(lams, values):
            ax.plot([lam] * len(v), v, ".", color="tab:purple", alpha=0.4)
        ax.set_xlabel("λ (weight on positive samples)")
        ax.set_title(f"{name} at the end")
        ax.grid(alpha=0.3)
    fig.suptitle("The end of training against λ")
    return fig
