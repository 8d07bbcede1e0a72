"""The base-model chapter's figures: the author's chance of being right by path, pretraining
against its floor, the base against its author problem by problem, the base's Pass@k beside the
author's exact curve, and each problem's share of right samples."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from rlvr_dynamics.chapters.base_model import (Base, author_pass_at_k,
                                               direct_success_by_sum, setting_names,
                                               stepwise_success)
from rlvr_dynamics.passk import bootstrap_ci, ks_for, pass_at_k
from rlvr_dynamics.tasks.sums import Author, SumTask


def plot_author(author: Author, task: SumTask, operand_counts=(3, 6, 9)):
    """P(right | path) of the author against the sum: the direct path (exact, single-digit
    sums from the smallest to the largest any split holds) and the stepwise path for
    ``operand_counts`` operands, over the test split's sums (shaded)."""
    ranges = {s: (lo, hi) for s, lo, hi in task.operands}
    top = 10 ** task.digits - 1
    smallest = min(lo for lo, _ in ranges.values()) * 10 ** (task.digits - 1)
    sums_ = np.arange(smallest, max(hi for _, hi in ranges.values()) * top + 1)
    lo, hi = ranges["test"]
    fig, ax = plt.subplots(figsize=(6.4, 3.2))
    ax.step(sums_, direct_success_by_sum(sums_, author), where="post", label="direct")
    for m in operand_counts:
        ax.hlines(stepwise_success(m, author), m, top * m, color=f"C{m // 3}", ls="--",
                  label=f"stepwise, {m} operands")
    ax.axvspan(lo * 10 ** (task.digits - 1) - 1, hi * top, color="0.9", zorder=0,
               label=f"test sums ({lo}-{hi} operands)")
    ax.set(xlabel="the sum", ylabel="P(right | path)", ylim=(-0.02, 1.02),
           title="The author's chance of being right, by path (exact)")
    ax.legend(loc="center right")
    return fig


def plot_pretraining(base: Base):
    """The training loss (a running mean over a fiftieth of the steps) and the held-out loss
    against the floor, on a log scale."""
    held, losses, floor = base.held, np.array(base.log["losses"]), base.floor
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    window = max(1, len(losses) // 50)
    ax.plot(np.arange(window, len(losses) + 1),
            np.convolve(losses, np.ones(window) / window, "valid"),
            lw=1, alpha=0.6, label=f"training loss (mean of {window} steps)")
    ax.plot(held[:, 0], held[:, 1], "o-", ms=3, label="held-out loss")
    ax.axhline(floor, color="k", ls="--", label=f"floor: the author's entropy ({floor:.3f})")
    ax.set(yscale="log", xlabel="pretraining step", ylabel="nats per completion token",
           title="Pretraining against its floor")
    ax.legend()
    return fig


def plot_match(match: dict[str, dict[str, np.ndarray]]):
    """Each problem's P(right | direct), base against author, one panel per split."""
    fig, axes = plt.subplots(1, 2, figsize=(7, 3.4), sharey=True)
    for ax, (s, mm) in zip(axes, match.items()):
        ax.scatter(mm["author_direct_right"], mm["direct_right"], s=10, c=mm["m"],
                   cmap="viridis")
        ax.plot([0, 1], [0, 1], "k--", lw=1)
        ax.set(xlabel="author: P(right | direct)", title=f"{s}: {len(mm['m'])} problems")
    axes[0].set_ylabel("base: P(right | direct)")
    fig.suptitle("Each problem's right direct answer, base against author")
    return fig


def plot_passk(sampled, splits: dict[str, list], author: Author, samples: int):
    """Pass@k of the base per split and setting (unbiased estimator, 95 % bootstrap band over
    problems) beside the author's exact curve at T = 1."""
    ks = ks_for(samples)
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), sharey=True)
    for ax, s in zip(axes, splits):
        for i, name in enumerate(setting_names(sampled)):
            table = sampled[s, name][1]
            per = pass_at_k(table["n"].to_numpy(), table["c"].to_numpy(), ks)
            lo, hi = bootstrap_ci(per)
            ax.plot(ks, per.mean(0), "o-", ms=3, color=f"C{i}", label=f"base, {name}")
            ax.fill_between(ks, lo, hi, color=f"C{i}", alpha=0.2)
        ax.plot(ks, author_pass_at_k(splits[s], author, ks), "k--", lw=1,
                label="author, T=1 (exact)")
        ax.set(xscale="log", xticks=ks, xticklabels=ks, xlabel="k",
               title=f"{s} ({len(splits[s])} problems)")
    axes[0].set_ylabel("Pass@k")
    axes[0].legend()
    fig.suptitle("Pass@k of the base beside its author's")
    return fig


def plot_success_shares(sampled, splits: dict[str, list]):
    """Histograms of each problem's share of right samples, one panel per setting, split by
    whether the direct path can reach the problem."""
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4), sharey=True)
    bins = np.linspace(0, 1, 21)
    for ax, name in zip(axes, setting_names(sampled)):
        for s, ls in zip(splits, ("-", "--")):
            table = sampled[s, name][1]
            share = table["c"] / table["n"]
            for possible, color in ((True, "C0"), (False, "C3")):
                sel = share[table["direct_possible"] == possible]
                if len(sel):
                    ax.hist(sel, bins=bins, histtype="step", ls=ls, color=color,
                            label=f"{s}, {'within' if possible else 'beyond'} the direct path")
        ax.set(xlabel="share of a problem's samples that are right", title=name, yscale="log")
    axes[0].set_ylabel("problems")
    axes[0].legend()
    fig.suptitle("Per-problem success of the base")
    return fig
