"""The toy's figures (Figures 1, 4-7 and the phase diagram): policy panels, update-rule
variants, the time-to-expansion heat map and its ECDF, drawn from what ``toy`` keeps."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import LogNorm
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from rlvr_dynamics.chapters.style import ACTION_COLORS
from rlvr_dynamics.toy import Summary


def plot_policy(ax, summary: Summary, s: int, title: str = "") -> None:
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


def legend_handles(K: int) -> list:
    """Legend entries shared by the policy panels."""
    return ([Line2D([], [], color=ACTION_COLORS[k], lw=2, label=rf"$\pi(a_{k + 1})$")
             for k in range(K)]
            + [Line2D([], [], color="k", lw=2, label="mean over seeds"),
               Patch(color="k", alpha=0.12, label="central band of seeds"),
               Line2D([], [], color="k", lw=0.5, label="single seeds"),
               Line2D([], [], color="k", ls="--", label="mean field (Theorem 1)")])


def policy_panels(panels: list[tuple[Summary, int, str]], title: str, ncol: int = 2,
                  width: float = 3.7):
    """``plot_policy`` panels, one per (summary, setting, title), ``ncol`` to a row."""
    nrow = -(-len(panels) // ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(width * ncol, 2.8 * nrow + 1.2),
                             squeeze=False, sharey=True, constrained_layout=True)
    for (summary, s, t), ax in zip(panels, axes.flat):
        plot_policy(ax, summary, s, t)
    for ax in axes.flat[len(panels):]:
        ax.set_axis_off()
    K = max(summary.mean.shape[-1] for summary, _, _ in panels)
    fig.legend(handles=legend_handles(K), loc="outside lower center", ncol=4, fontsize=8)
    fig.suptitle(title, fontsize=9)
    return fig


def plot_variants(axes, variants: dict[str, Summary], s: int, r) -> None:
    """pi(a1), pi(a2) and the expected reward pi.r of setting s for several update rules:
    mean (solid), central band (shaded), mean field (dashed), one colour per rule."""
    r = np.asarray(r, dtype=float)
    for (name, sm), c in zip(variants.items(), ("tab:blue", "tab:red", "tab:green")):
        x = np.arange(len(sm.mean))
        series = [(sm.mean[:, s, k], sm.lo[:, s, k], sm.hi[:, s, k], sm.mean_field[:, s, k])
                  for k in (0, 1)]
        series.append((*sm.reward[:, s].T, sm.mean_field[:, s] @ r))
        for ax, (mean, lo, hi, field) in zip(axes, series):
            ax.fill_between(x, lo, hi, color=c, alpha=0.15, lw=0)
            ax.plot(x, field, color=c, ls="--", lw=1)
            ax.plot(x, mean, color=c, lw=2, label=name)
    for ax, t in zip(axes, (r"$\pi(a_1)$, explored", r"$\pi(a_2)$, unexplored",
                            r"expected reward $\pi\cdot r$")):
        ax.set(title=t, xlabel="step")


def plot_phase(ax, t: np.ndarray, p2, G, steps: int, title: str, norm=None):
    """Heat map of times to expansion t (nG, nP); cells that did not expand are hatched."""
    norm = norm or LogNorm(vmin=max(1, np.nanmin(np.where(np.isinf(t), np.nan, t))), vmax=steps)
    shown = np.ma.masked_invalid(np.where(np.isinf(t), np.nan, np.maximum(t, 1)))
    ax.set_facecolor("0.85")
    im = ax.imshow(shown, origin="lower", aspect="auto", cmap="viridis_r", norm=norm)
    for (i, j), v in np.ndenumerate(t):
        ax.text(j, i, f">{steps}" if np.isinf(v) else f"{v:.0f}", ha="center", va="center",
                fontsize=8, color="k" if np.isinf(v) or v < np.sqrt(steps) else "w")
    ax.set_xticks(range(len(p2)), [f"{p:g}" for p in p2], fontsize=8)
    ax.set_yticks(range(len(G)), [str(g) for g in G])
    ax.set(xlabel=r"initial $\pi(a_2)$", ylabel="G", title=title)
    return im


def plot_ecdf(ax, t_seed: np.ndarray, labels: list[str], steps: int, title: str) -> None:
    """Fraction of seeds expanded by each step, one curve per row of t_seed (n, seeds)."""
    x = np.arange(1, steps + 1)
    colors = plt.cm.viridis(np.linspace(0, 0.9, len(t_seed)))
    for t, label, c in zip(t_seed, labels, colors):
        ax.step(x, (t[:, None] <= x).mean(0), where="post", color=c, label=label)
    ax.set(xlabel="step", xscale="log", ylabel="fraction of seeds expanded", ylim=(-0.02, 1.02),
           title=title)
