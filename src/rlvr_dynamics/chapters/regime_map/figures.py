"""The regime map chapter's figures: the LM's regime map beside the toy's prediction (each
regime over training is the shared ``chapters.figures.plot_regimes``; its tables for people are
in ``shown``)."""
from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from rlvr_dynamics.chapters.regime_map import SHRINK_MARGIN
from rlvr_dynamics.chapters.style import COLORS

MIX_MARKERS = ("o", "s", "^", "D")
"""The marker of each training mix in the phase diagram, in the order the regimes name them."""


def plot_phase(table: pd.DataFrame, regimes: dict[str, Any], steps: int,
               title: str = "The model's regime map beside the toy's prediction") -> plt.Figure:
    """The LM's phase diagram beside the toy's prediction: per regime (x: its base's measured
    P(stepwise); marker: its training mix) and algorithm, the time to crossover (left; seeds
    as dots, never crossed drawn at the top) and the shrinkage depth at the mid-curve k
    (right; mean and seeds' range), the toy's predicted time to crossover on a second axis, one
    line per mix (``table``: ``chapter.with_toy``'s rows)."""
    mixes = list(dict.fromkeys(r.hard_share for r in regimes.values()))
    mix_marker = {m: MIX_MARKERS[i % len(MIX_MARKERS)] for i, m in enumerate(mixes)}
    marker = {name: mix_marker[r.hard_share] for name, r in regimes.items()}
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4.2))
    ax_toy = a1.twinx()
    for i, (algo, g) in enumerate(table.groupby("algorithm", sort=False)):
        c = COLORS.get(algo)
        for regime, h in g.groupby("regime", sort=False):
            x = h["pi0(a2)"].iloc[0] * (1 + 0.04 * (i - 0.5))  # the algorithms side by side
            t = np.where(np.isinf(h["crossover"]), steps * 1.15, h["crossover"])
            a1.scatter([x] * len(t), t, color=c, marker=marker[regime], s=16, alpha=0.7)
            d = h["depth"]
            a2.errorbar([x], [d.mean()], yerr=[[d.mean() - d.min()], [d.max() - d.mean()]],
                        color=c, marker=marker[regime], ms=4, capsize=3)
    for mix in mixes:
        names = [n for n, r in regimes.items() if r.hard_share == mix]
        toy = table[table["regime"].isin(names)].groupby("regime")[["pi0(a2)", "toy expansion"]]
        toy = toy.first().sort_values("pi0(a2)").replace(np.inf, np.nan).dropna()
        if len(toy):  # regimes outside the toy's scenario have no prediction to draw
            ax_toy.plot(toy["pi0(a2)"], toy["toy expansion"], "k--", lw=0.9,
                        marker=mix_marker[mix], mfc="none", ms=5)
    if not ax_toy.lines:
        ax_toy.remove()
    handles = [plt.Line2D([], [], color=COLORS.get(a), marker="o", ls="", label=a)
               for a in table["algorithm"].unique()]
    handles += [plt.Line2D([], [], color="0.3", marker=mix_marker[m], ls="", mfc="none",
                           label="mix: as drawn" if m is None else f"mix: rare-only share {m:g}")
                for m in mixes]
    handles.append(plt.Line2D([], [], color="k", ls="--", label="toy's prediction"))
    ax_toy.set_ylabel("toy: steps to crossover (its scale)")
    a1.axhline(steps * 1.15, color="0.6", lw=0.8)
    a1.set(xlabel="base's P(stepwise) (toy: initial π(a2))", ylabel="LM: step of crossover",
           title="time to crossover (above the line: never)")
    a2.axhline(0, color="0.6", lw=0.8)
    a2.axhspan(-SHRINK_MARGIN, SHRINK_MARGIN, color="0.9")
    a2.set(xlabel="base's P(stepwise)", ylabel="points of Pass@k vs the base",
           title="shrinkage depth at the mid-curve k, rare-only")
    priors = sorted(table["pi0(a2)"].unique())
    for ax in (a1, a2):
        ax.set_xscale("log")
        ax.set_xlim(min(priors) / 1.5, max(priors) * 1.5)  # also where one seed has no depth
        ax.xaxis.set_minor_formatter(plt.NullFormatter())
        ax.set_xticks(priors, [f"{p:.3g}" for p in priors], rotation=35)
        ax.grid(alpha=0.3)
    fig.legend(handles=handles, loc="outside lower center", ncol=4)
    fig.suptitle(title)
    return fig
