"""The regimes chapter's figures: the paper's scenario (the arm's and the control's P(stepwise)
on the rare-path-only problems over training), each regime's paths and Pass@k over training,
the LM's regime map beside the toy's prediction, and the ladder's slopes (its tables for people
are in ``shown``)."""
from __future__ import annotations

from typing import Any, Collection, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import NullFormatter

from rlvr_dynamics.chapters.figure_check import FULL
from rlvr_dynamics.chapters.regimes import FALL_MARGIN, SHRINK_MARGIN, relative_stepwise
from rlvr_dynamics.chapters.regimes.toy_rungs import PROPORTIONAL, TABULAR
from rlvr_dynamics.chapters.style import COLORS, PATH_STYLE

PATHS_DRAWN = {**PATH_STYLE, "guess": ("guess", "0.45", "-")}
"""The reproduction chapter's paths and the guess (the bad path of the paper's scenario)."""


def _band(ax, g: pd.DataFrame, column: str, **style) -> None:
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
                _band(ax, full[full["algorithm"] == a], key, color=color, ls=style, label=name)
            ax.set(title=f"{a}: paths", ylim=(-0.02, 1.02))
        axes[0].set_ylabel(f"{regime}\nprobability mass")
        for ax, prefix, name in ((axes[-2], "", "all"), (axes[-1], "hard_", "rare-only")):
            for a in algos:
                for setting, ls in (("full", "-"), ("paper", "--")):
                    g = mine[(mine["algorithm"] == a) & (mine["setting"] == setting)]
                    if g.empty:  # a profile that probed the full distribution alone
                        continue
                    _band(ax, g, f"{prefix}pass@{k}", color=COLORS.get(a), ls=ls,
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
                _band(ax, rel, "relative", color=COLORS.get(algo), ls=ls, label=regime)
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


MIX_MARKERS = ("o", "s", "^", "D")
"""The marker of each training mix in the phase diagram, in the order the regimes name them."""


def plot_phase(table: pd.DataFrame, regimes: dict[str, Any], steps: int,
               title: str = "The model's regime map beside the toy's prediction") -> plt.Figure:
    """The LM's phase diagram beside the toy's prediction: per regime (x: its base's measured
    P(stepwise); marker: its training mix) and algorithm, the time to crossover (left; seeds
    as dots, never crossed drawn at the top) and the shrinkage depth at the mid-curve k
    (right; mean and seeds' range), the toy's predicted time to crossover on a second axis, one
    line per mix."""
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
