"""The ladder chapter's figure: each run's first updates as changes of the first-character
log-ratios, against the tabular update and proportional spreading."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from rlvr_dynamics.chapters.figure_check import FULL
from rlvr_dynamics.chapters.style import COLORS
from rlvr_dynamics.regimes.toy_rungs import PROPORTIONAL, TABULAR


def plot_slopes(trajectories: pd.DataFrame,
                title: str = "How the guess's lost mass moves, update by update") -> plt.Figure:
    """The mechanism's picture (``ladder.log_trajectories``): per arm and way of training, each
    run's change of log(π_d / π_#) against that of log(π_# / π_=) over its first updates
    (one line a seed, coloured by algorithm), beside the tabular update's line (slope -1/2)
    and proportional spreading's (slope 0): a row an arm, a column a way of training."""
    regimes = list(dict.fromkeys(trajectories["regime"])) or [None]
    hows = list(dict.fromkeys(trajectories["how"])) or [None]
    fig, axes = plt.subplots(len(regimes), len(hows),
                             figsize=(min(FULL, 2.6 * len(hows) + 0.5), 2.6 * len(regimes) + 1),
                             squeeze=False)
    for ax in axes.flat:
        ax.set_visible(False)
    for (regime, how), g in trajectories.groupby(["regime", "how"], sort=False):
        ax = axes[regimes.index(regime), hows.index(how)]
        ax.set_visible(True)
        for (label, _), run in g.groupby(["algorithm", "seed"], sort=False):
            ax.plot(run["x"], run["y"], color=COLORS.get(label), lw=1, alpha=0.8,
                    label=label)
        span = np.array([min(0.0, g["x"].min()), max(0.0, g["x"].max())])
        ax.plot(span, TABULAR * span, "k--", lw=1, label=f"tabular ({TABULAR:+.1f})")
        ax.plot(span, PROPORTIONAL * span, "k:", lw=1, label=f"proportional ({PROPORTIONAL:+.0f})")
        ax.set(title=f"{regime}, {how}" if len(regimes) == 1 else how)
        ax.grid(alpha=0.3)
    for regime, ax in zip(regimes, axes[:, 0]):
        ax.set_ylabel(f"{regime}\nΔ log(π_d / π_#)" if len(regimes) > 1 else "Δ log(π_d / π_#)")
    keep = {label: h for ax in axes.flat for h, label in zip(*ax.get_legend_handles_labels())}
    for ax in axes[-1]:
        ax.set_xlabel("Δ log(π_# / π_=)")
    fig.legend(keep.values(), keep.keys(), loc="outside lower center", ncol=4)
    fig.suptitle(title)
    return fig

