"""The theory chapter's figures: Remark 2's bidirectional update, Theorem 1's Monte Carlo
errors and Proposition 1 on the tiny network (the checks' tables for people are in
``shown``)."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import NullFormatter

from rlvr_dynamics import theory as T
from rlvr_dynamics.chapters.theory import (MonteCarlo, Params, Prop1Check, Tabular,
                                           remark2_cases)


def plot_remark2(setting: Tabular, P: Params) -> plt.Figure:
    """Remark 2's bidirectional update: Lemma 1's logit change and the exact probability change
    after A(v) = +1 and -1, for a likely and a rare sampled action (no sampling)."""
    pi_sorted = setting.pi[np.argsort(-setting.pi)]
    vocab, lr = P.vocab, P.lr
    fig, axes = plt.subplots(2, 2, figsize=(10, 6), sharex=True)
    positions = np.arange(vocab)
    for col, (name, v) in enumerate(remark2_cases(vocab).items()):
        for sign, colour in ((+1, "tab:green"), (-1, "tab:red")):
            dz = T.logit_update(pi_sorted, v, sign, lr)
            dpi = T.probability_change(pi_sorted, v, sign, lr)
            offset = -0.2 if sign > 0 else 0.2
            axes[0, col].bar(positions + offset, dz, 0.4, color=colour,
                             label=f"A(v) = {sign:+d}")
            axes[1, col].bar(positions + offset, dpi, 0.4, color=colour)
        axes[0, col].set_title(f"sampled v = action {v} ({name}, π(v) = {pi_sorted[v]:.3f})")
        for ax in axes[:, col]:
            ax.axhline(0, color="k", lw=0.5)
            ax.axvline(v, color="grey", ls="--", lw=0.8)
    axes[0, 0].set_ylabel("logit change  Δz (Lemma 1)")
    axes[1, 0].set_ylabel("probability change  Δπ (exact)")
    axes[0, 0].legend()
    for ax in axes[1]:
        ax.set_xlabel("action, most to least likely (below: its π)")
        ax.set_xticks(positions, [f"{u}\n{p:.2f}" for u, p in zip(positions, pi_sorted)])
    fig.suptitle("Remark 2: one update moves the sampled action and the others")
    return fig


def _loglog(ax: plt.Axes, x, y, slope_ref: float, label: str, **kw) -> float:
    """y(x) on log-log axes, its fitted slope, and a reference slope through y[0]."""
    slope = T.loglog_slope(x, y)
    ax.loglog(x, y, "o-", label=f"{label}: fitted slope {slope:.3f}", **kw)
    ref = f"slope {slope_ref:g} (theory)"
    ax.loglog(x, y[0] * (np.asarray(x) / x[0]) ** slope_ref, "k:", lw=1,
              label="_nolegend_" if ref in ax.get_legend_handles_labels()[1] else ref)
    return slope


def plot_monte_carlo(mc: MonteCarlo, P: Params) -> plt.Figure:
    """The Monte Carlo errors of ``monte_carlo`` against N, with their fitted slopes, the
    slope -1/2 and the exact standard-error lines."""
    fig, ax = plt.subplots(figsize=(7, 4.5))
    _loglog(ax, mc.samples, mc.rms_single, -0.5, "Theorem 1 (sampled actions, fixed A)")
    _loglog(ax, mc.samples, mc.rms_group, -0.5, f"Algorithm 1 group update, G = {mc.G}",
            color="tab:orange")
    n = np.asarray(mc.samples)
    ax.loglog(n, mc.se_single, "--", color="tab:blue", lw=1, alpha=0.6,
              label="sqrt(tr Σ / N), exact")
    ax.loglog(n, mc.se_group, "--", color="tab:orange", lw=1, alpha=0.6)
    ax.set(xlabel="N, sampled actions (or groups) averaged",
           ylabel="RMS error  ‖mean − exact‖₂",
           title="Monte Carlo error of the expected logit update")
    ax.legend()
    return fig


def plot_proposition1(check: Prop1Check, P: Params) -> plt.Figure:
    """Left: Proposition 1's error against eta (slope 2) beside the change itself (slope 1).
    Right: one step's measured Delta log pi, Proposition 1's prediction, and K = I rescaled."""
    p, mid, lrs = check.result, check.mid, check.lrs
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 4.5))
    _loglog(ax, p.lrs, p.errors, 2, "max |measured − predicted|")
    ax.loglog(p.lrs, np.abs(p.actual).max(1), "s--", color="grey", ms=4,
              label="max |Δlog π| itself (first order)")
    ax.set(xlabel="step size η", ylabel="max over actions",
           title="Proposition 1's remainder shrinks like η²")
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.legend()
    tokens = np.arange(len(check.tokens))
    bx.bar(tokens - 0.27, p.actual[mid], 0.27, label="measured after the step")
    bx.bar(tokens, p.predicted[mid], 0.27, label="Proposition 1: (I − eπᵀ) K Δz")
    scale = p.actual[mid] @ p.tabular[mid] / (p.tabular[mid] @ p.tabular[mid])
    bx.bar(tokens + 0.27, scale * p.tabular[mid], 0.27,
           label=f"K = I (Lemma 1 alone), rescaled ×{scale:.0f}")
    bx.axhline(0, color="k", lw=0.5)
    bx.set_xticks(tokens, check.tokens, rotation=90)
    bx.set(xlabel="next token", ylabel="Δ log π(token | x)",
           title=f"one step, η = {lrs[mid]:.2g}")
    bx.legend()
    fig.suptitle("Proposition 1 on a tiny network")
    return fig
