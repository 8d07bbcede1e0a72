"""The regimes chapter's figures: the paper's scenario (the arm's and the control's P(stepwise)
on the rare-path-only problems over training), each regime's paths and Pass@k over training,
the LM's regime map beside the toy's prediction, and the ladder's slopes (its tables for people
are in ``shown``)."""
from __future__ import annotations

import textwrap
from typing import Any, Collection, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from rlvr_dynamics.chapters.regimes import FALL_MARGIN, SHRINK_MARGIN, relative_stepwise
from rlvr_dynamics.chapters.regimes.toy_rungs import PROPORTIONAL, TABULAR
from rlvr_dynamics.chapters.style import COLORS, PATH_STYLE

PATHS_DRAWN = {**PATH_STYLE, "guess": ("guess", "0.45", "-")}
"""The reproduction chapter's paths and the guess (the bad path of the paper's scenario)."""


def _band(ax, g: pd.DataFrame, column: str, **style) -> None:
    s = g.groupby("step")[column].agg(["mean", "min", "max"])
    ax.plot(s.index, s["mean"], lw=1.4, **style)
    ax.fill_between(s.index, s["min"], s["max"], color=style.get("color"), alpha=0.12, lw=0)


def plot_regime(means: pd.DataFrame, regime: str, k: int, ks: Sequence[int], title: str,
                split: str = "test") -> plt.Figure:
    """One regime: per algorithm, the paths' masses over steps (the toy's Figure 1 layout),
    then Pass@k over steps on all problems and on the rare-path-only ones, under the full
    distribution (solid) and the paper's setting (dashed, where probed); mean over seeds, band
    min-max."""
    part = means[(means["regime"] == regime) & (means["split"] == split)]
    algos = list(dict.fromkeys(part["algorithm"]))
    fig, axes = plt.subplots(1, len(algos) + 2, figsize=(3.2 * (len(algos) + 2), 3.1),
                             squeeze=False)
    axes = axes[0]
    full = part[part["setting"] == "full"]
    for ax, a in zip(axes, algos):
        for key, (name, color, style) in PATHS_DRAWN.items():
            _band(ax, full[full["algorithm"] == a], key, color=color, ls=style, label=name)
        ax.set(title=f"{a}: paths (full)", xlabel="training step", ylim=(-0.02, 1.02))
    axes[0].set_ylabel("probability mass")
    axes[len(algos) - 1].legend(fontsize=7)
    for ax, prefix, name in ((axes[-2], "", "all problems"),
                             (axes[-1], "hard_", "rare-path-only problems")):
        for a in algos:
            for setting, ls in (("full", "-"), ("paper", "--")):
                g = part[(part["algorithm"] == a) & (part["setting"] == setting)]
                if g.empty:  # a profile that probed the full distribution alone
                    continue
                _band(ax, g, f"{prefix}pass@{k}", color=COLORS.get(a), ls=ls,
                      label=f"{a}, {setting}")
        ax.set(title=f"Pass@{k}, {name}", xlabel="training step", ylim=(-2, 102))
    axes[-2].set_ylabel("Pass@k (%)")
    axes[-1].legend(fontsize=7)
    for ax in axes:
        ax.title.set_fontsize(9)
        ax.grid(alpha=0.3)
    fig.suptitle(textwrap.fill(title, 170), fontsize=8)
    fig.tight_layout()
    return fig


def plot_scenario(long: pd.DataFrame, hard: np.ndarray, controls: dict[str, str],
                  title: str, split: str = "test") -> plt.Figure:
    """The paper's scenario, one panel per algorithm: P(stepwise) on the rare-path-only
    problems relative to the start (full distribution) over training, in each arm (solid) and
    its control (dashed); mean over seeds, band min to max; the fall that counts as stage 1
    shaded."""
    part = long[(long["setting"] == "full") & (long["split"] == split)
                & long["regime"].isin([n for pair in controls.items() for n in pair])]
    algos = list(dict.fromkeys(part["algorithm"]))
    fig, axes = plt.subplots(1, len(algos), figsize=(4.2 * len(algos), 3.3), squeeze=False)
    for ax, algo in zip(axes[0], algos):
        for arm, control in controls.items():
            for regime, ls in ((arm, "-"), (control, "--")):
                g = part[(part["regime"] == regime) & (part["algorithm"] == algo)]
                rel = relative_stepwise(g, hard).stack().rename("relative").reset_index()
                _band(ax, rel, "relative", color=COLORS.get(algo), ls=ls, label=regime)
        ax.axhline(1, color="0.6", lw=0.8)
        ax.axhspan(1e-3, 1 - FALL_MARGIN, color="0.93", lw=0)
        ax.set_yscale("log")  # a fall and a hundredfold rise on one axis
        ax.set(title=f"{algo}: P(stepwise) on the rare-path-only problems",
               xlabel="training step", ylabel="relative to the base (log scale)",
               ylim=(0.1, None))
        ax.title.set_fontsize(9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(textwrap.fill(title, 150), fontsize=8)
    fig.tight_layout()
    return fig


def plot_predicted(pairs: dict[str, pd.DataFrame], title: str, three: Collection[str]
                   ) -> plt.Figure:
    """One panel per toy optimizer (``pairs``: optimizer -> ``stages.predicted_vs_measured``):
    each run's measured crossover against the toy's registered one, log-log, coloured by
    algorithm, a regime of ``three`` (three paths at the first character: ``Params.three``)
    filled and one of two paths hollow; a run that did not cross is drawn at its last probe as
    a triangle pointing up (it crosses later, if at all); the diagonal is agreement."""
    fig, axes = plt.subplots(1, len(pairs), figsize=(4.2 * len(pairs), 3.6), squeeze=False)
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
               xlabel="toy's registered crossover (its steps)",
               ylabel="LM's crossover (training steps)")
        ax.title.set_fontsize(9)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=6)
    fig.suptitle(textwrap.fill(title, 150), fontsize=8)
    fig.tight_layout()
    return fig


def plot_regimes(means: pd.DataFrame, regimes: dict[str, Any], k: int, ks: Sequence[int],
                 settings: str) -> list[plt.Figure]:
    """``plot_regime`` for each of ``regimes`` (name -> ``Regime``), titled with its knobs and
    the runs' ``settings``."""
    def knobs(regime: Any) -> str:
        set_ = regime.model_dump(exclude_none=True)
        return " ".join(f"{key}={v}" for key, v in set_.items()) or "as pretrained, as drawn"

    return [plot_regime(means, name, k, ks, f"Regime '{name}' ({knobs(regime)}). {settings}")
            for name, regime in regimes.items()]


MIX_MARKERS = ("o", "s", "^", "D")
"""The marker of each training mix in the phase diagram, in the order the regimes name them."""


def plot_phase(table: pd.DataFrame, regimes: dict[str, Any], steps: int, title: str
               ) -> plt.Figure:
    """The LM's phase diagram beside the toy's prediction: per regime (x: its base's measured
    P(stepwise); marker: its training mix) and algorithm, the time to crossover (left; seeds
    as dots, never crossed drawn at the top) and the shrinkage depth at the mid-curve k
    (right; mean and seeds' range), the toy's predicted time to crossover on a second axis, one
    line per mix."""
    mixes = list(dict.fromkeys(r.hard_share for r in regimes.values()))
    mix_marker = {m: MIX_MARKERS[i % len(MIX_MARKERS)] for i, m in enumerate(mixes)}
    marker = {name: mix_marker[r.hard_share] for name, r in regimes.items()}
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.6))
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
    ax_toy.set_ylabel("toy: steps to crossover (its own scale)", fontsize=8)
    a1.axhline(steps * 1.15, color="0.6", lw=0.8)
    a1.set(xlabel="base's P(stepwise) (toy: initial π(a2))", ylabel="LM: step of crossover",
           title="time to crossover (above the line: never)")
    a2.axhline(0, color="0.6", lw=0.8)
    a2.axhspan(-SHRINK_MARGIN, SHRINK_MARGIN, color="0.9")
    a2.set(xlabel="base's P(stepwise)", ylabel="points of Pass@k vs the base",
           title="shrinkage depth at the mid-curve k, rare-path-only problems")
    priors = sorted(table["pi0(a2)"].unique())
    for ax in (a1, a2):
        ax.set_xscale("log")
        ax.set_xlim(min(priors) / 1.5, max(priors) * 1.5)  # also where one seed has no depth
        ax.xaxis.set_minor_formatter(plt.NullFormatter())
        ax.set_xticks(priors, [f"{p:.3g}" for p in priors], fontsize=7, rotation=35)
        ax.title.set_fontsize(9)
        ax.grid(alpha=0.3)
    a2.legend(handles=handles, fontsize=7, loc="lower right")
    fig.suptitle(textwrap.fill(title, 150), fontsize=8)
    fig.tight_layout()
    return fig


def plot_slopes(trajectories: pd.DataFrame, title: str) -> plt.Figure:
    """The mechanism's picture (``ladder.log_trajectories``): per arm and way of training, each
    run's change of log(π_d / π_#) against that of log(π_# / π_=) over its first updates
    (one line a seed, coloured by algorithm), beside the tabular update's line (slope -1/2)
    and proportional spreading's (slope 0): a row an arm, a column a way of training."""
    regimes = list(dict.fromkeys(trajectories["regime"])) or [None]
    hows = list(dict.fromkeys(trajectories["how"])) or [None]
    fig, axes = plt.subplots(len(regimes), len(hows), figsize=(3.4 * len(hows),
                                                               3.2 * len(regimes)),
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
        handles, labels = ax.get_legend_handles_labels()
        keep = dict(zip(labels, handles))
        ax.legend(keep.values(), keep.keys(), fontsize=7)
        ax.set(title=f"{regime}, {how}", xlabel="Δ log(π_# / π_=)",
               ylabel="Δ log(π_d / π_#)")
        ax.title.set_fontsize(9)
        ax.grid(alpha=0.3)
    fig.suptitle(textwrap.fill(title, int(20 * fig.get_figwidth())), fontsize=8)
    fig.tight_layout()
    return fig
