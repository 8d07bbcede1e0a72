"""The toy's figures (Figures 1, 4-7 and the phase diagram): first the panels any chapter
draws from what ``toy`` keeps (policy panels, update-rule variants, the time-to-expansion heat
map and its ECDF), then the toy chapter's own figures, captioned with their settings
(``sentences``)."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import LogNorm
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from rlvr_dynamics import toy
from rlvr_dynamics.chapters.figures import plot_policy
from rlvr_dynamics.chapters.style import ACTION_COLORS
from rlvr_dynamics.chapters.toy_dynamics import Params, negative_shares, two_settings


def legend_handles(K: int) -> list:
    """Legend entries shared by the policy panels."""
    return ([Line2D([], [], color=ACTION_COLORS[k], lw=2, label=rf"$\pi(a_{k + 1})$")
             for k in range(K)]
            + [Line2D([], [], color="k", lw=2, label="mean over seeds"),
               Patch(color="k", alpha=0.12, label="central band of seeds"),
               Line2D([], [], color="k", lw=0.5, label="single seeds"),
               Line2D([], [], color="k", ls="--", label="mean field (Theorem 1)")])


def policy_panels(panels: list[tuple[toy.Summary, int, str]], title: str, ncol: int = 2,
                  width: float = 3.5):
    """``plot_policy`` panels, one per (summary, setting, title), ``ncol`` to a row."""
    nrow = -(-len(panels) // ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(width * ncol, 2.8 * nrow + 1.2),
                             squeeze=False, sharey=True)
    for (summary, s, t), ax in zip(panels, axes.flat):
        plot_policy(ax, summary, s, t)
    for ax in axes.flat[len(panels):]:
        ax.set_axis_off()
    K = max(summary.mean.shape[-1] for summary, _, _ in panels)
    fig.legend(handles=legend_handles(K), loc="outside lower center", ncol=3)
    fig.suptitle(title)
    return fig


def plot_variants(axes, variants: dict[str, toy.Summary], s: int, r) -> None:
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
                color="k" if np.isinf(v) or v < np.sqrt(steps) else "w")
    ax.set_xticks(range(len(p2)), [f"{p:g}" for p in p2], rotation=45)
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


# --- the toy chapter's figures -----------------------------------------------------------------

PHASE_VMIN = 10
"""The shortest time to expansion on the phase diagram's colour scale (steps)."""


def plot_figure1(P: Params, by_pi0: toy.Summary, by_r: toy.Summary):
    """Figure 1 (ours): one policy panel per initial policy, then one per reward vector."""
    return policy_panels(
        [(by_pi0, s, f"π0 = {tuple(p)}") for s, p in enumerate(P.pi0_sweep)]
        + [(by_r, s, f"r = {tuple(r)}") for s, r in enumerate(P.reward_sweep)],
        "Figure 1 (ours): the two stages")


def plot_relative_negatives(P: Params, main: toy.Summary):
    """The mean policy of the main setting beside the shares of the relative negatives: the
    shift from a3 to a1 that Section 3.2 describes."""
    share = negative_shares(main)
    fig, axes = plt.subplots(1, 2, figsize=(7, 3.2), sharex=True)
    plot_policy(axes[0], main, 0, "mean policy (band: central seeds)")
    for k in range(share.shape[-1]):
        axes[1].plot(share[:, k], color=ACTION_COLORS[k], label=f"$a_{k + 1}$")
    axes[1].set(title="share of the relative negatives", xlabel="step", ylim=(-0.02, 1.02))
    axes[1].legend()
    fig.suptitle("Which action is the relative negative")
    return fig


def plot_optimizers(P: Params, by_opt: dict[str, toy.Summary]):
    """The mean over seeds against the mean field (Theorem 1 iterated) under Adam and SGD."""
    opts = toy.optimizers(P.lr, P.sgd_lr)
    return policy_panels(
        [(sm, s, f"{name}, η={opts[name]['lr']}, π0 = {tuple(p)}")
         for name, sm in by_opt.items() for s, p in enumerate(two_settings(P))],
        "The mean of trajectories against the mean field")


def plot_figure5(P: Params, by_G: dict[int, toy.Summary]):
    """Figure 5 (ours): one policy panel per group size."""
    return policy_panels([(sm, 0, f"G = {g}") for g, sm in by_G.items()],
                         "Figure 5 (ours): the group size")


def plot_figure6(P: Params, by_tau: toy.Summary):
    """Figure 6 (ours): one policy panel (the sampling policy Softmax(z/τ)) per temperature."""
    return policy_panels(
        [(by_tau, s, f"τ = {t:g}") for s, t in enumerate(P.tau_sweep)],
        "Figure 6 (ours): the temperature")


def plot_figure7(P: Params, four: toy.Summary):
    """Figure 7 (ours): one policy panel per four-action setting."""
    return policy_panels([(four, s, f"π0 = {tuple(p)}\nr = {tuple(r)}") for s, (p, r) in
                          enumerate(zip(P.pi0_four, P.rewards_four))],
                         "Figure 7 (ours): four actions")


def plot_negative_only(P: Params, by_opt: dict[str, toy.Summary],
                       negative: dict[str, toy.Summary]):
    """pi(a1), pi(a2) and the expected reward, standard against negative-only, one row per
    optimiser (the main setting)."""
    opts = toy.optimizers(P.lr, P.sgd_lr)
    fig, axes = plt.subplots(2, 3, figsize=(10, 6.5))
    for row, name in zip(axes, opts):
        plot_variants(row, {"standard": by_opt[name], "negative-only": negative[name]}, 0,
                      P.rewards)
        row[0].set_ylabel(f"{name}, η={opts[name]['lr']}")
    axes[0, 0].legend()
    fig.suptitle("The standard against the negative-only update")
    return fig


def plot_phase_diagram(P: Params, grids: dict[str, toy.ExpansionGrid]):
    """Per update rule: the median time to expansion over the grid, and its distribution over
    seeds at the smallest G."""
    norm = LogNorm(vmin=PHASE_VMIN, vmax=P.expansion_steps)
    fig, axes = plt.subplots(2, 2, figsize=(10, 8.5))
    for col, (rule, grid) in zip(axes.T, grids.items()):
        im = plot_phase(col[0], np.median(grid.t_seed, -1), P.expansion_p2, P.expansion_G,
                        P.expansion_steps, f"{rule}: median time to expansion", norm)
        plot_ecdf(col[1], grid.t_seed[0], [f"π0(a2) = {p:g}" for p in P.expansion_p2],
                  P.expansion_steps, f"{rule}, G = {P.expansion_G[0]}: distribution over seeds")
    fig.colorbar(im, ax=axes[0], label="steps")
    axes[1, 0].legend()
    fig.suptitle("Time to expansion over the initial π(a2) and G")
    return fig


