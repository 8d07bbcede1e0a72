"""Chapter 2, the toy dynamics (``notebooks/toy_dynamics.md``): Algorithm 1 over many seeds,
every toy figure of the paper, the negative-only variant and the time-to-expansion phase
diagram (the simulation is in ``rlvr_dynamics.toy``).

The notebook calls, section by section: the runs of each figure (``figure1_runs``,
``main_run``, ``optimizer_runs``, ``group_size_runs``, ``temperature_runs``,
``four_action_runs``, ``negative_only_runs``, ``expansion_grids``; cached in
``cache_folder``), their figures (``plot_*``) and tables (``*_table``), the per-seed stages and
the claim checks recorded for the closing chapter (``stages``, ``claim_rows``), and the closing
summary (``summary_table``).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.colors import LogNorm
from pydantic import model_validator

from rlvr_dynamics import stats, toy
from rlvr_dynamics.chapters import (ChapterParams, Distribution, Int, ListOf, Positive, Real,
                                    require, require_distribution)
from rlvr_dynamics.chapters.style import ACTION_COLORS
from rlvr_dynamics.chapters.toy_dynamics import figures as toy_figures
from rlvr_dynamics.store import results_dir
from rlvr_dynamics.toy import OPTIMIZERS

Rewards = ListOf(Real())


class Params(ChapterParams):
    """The main setting (``pi0``, ``rewards``, ``G``, ``lr``, ``optimizer``, ``tau``; ``seeds``
    runs of ``steps``), the sweeps of Figures 5-7, the four-action settings, and the grid of
    the phase diagram (``expansion_*``)."""

    seeds: Int(1) = 1000
    steps: Int(1) = 1000
    seed: Int(0) = 0
    G: Int(2) = 2
    lr: Positive = 0.1
    optimizer: str = "adam"
    tau: Positive = 1.0
    pi0: Distribution = [0.495, 0.01, 0.495]
    rewards: Rewards = [0.5, 1.0, 0.0]
    pi0_sweep: ListOf(Distribution) = [[0.475, 0.05, 0.475], [0.495, 0.01, 0.495],
                                       [0.7, 0.01, 0.29], [0.2, 0.01, 0.79]]
    reward_sweep: ListOf(Rewards) = [[0.1, 1.0, 0.0], [0.3, 1.0, 0.0], [0.7, 1.0, 0.0],
                                     [0.9, 1.0, 0.0]]
    G_sweep: ListOf(Int(2)) = [2, 3, 5, 10]
    tau_sweep: ListOf(Positive) = [1.0, 2.0, 5.0, 20.0]
    pi0_four: ListOf(Distribution) = [[0.4, 0.01, 0.3, 0.29], [0.49, 0.01, 0.49, 0.01]]
    rewards_four: ListOf(Rewards) = [[0.5, 1.0, 0.0, 0.25], [0.5, 1.0, 0.0, 0.75]]
    sgd_lr: Positive = 1.0
    band: Real(0, 1, open_lo=True) = 0.8
    expansion_seeds: Int(1) = 200
    expansion_steps: Int(1) = 2000
    expansion_p2: ListOf(Real(0, 1, open_lo=True)) = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05,
                                                      0.1]
    expansion_G: ListOf(Int(2)) = [2, 3, 4, 6, 8, 12, 16]

    @model_validator(mode="after")
    def _cross(self):
        require(self.optimizer in OPTIMIZERS, f"optimizer={self.optimizer!r} must be one of "
                                              f"{list(OPTIMIZERS)}")

        def scenario(where: str, pi0: list, r: list) -> None:
            require_distribution(where, pi0)
            require(len(pi0) == len(r), f"{where}: {len(pi0)} initial probabilities but "
                    f"{len(r)} rewards")
            require(len(pi0) >= 3, f"{where}: the toy needs at least 3 actions (a1, a2, a3)")
            require(min(pi0) > 0, f"{where}: every initial probability must be > 0 (a softmax "
                    "policy gives every action some mass)")
            require(pi0[0] > pi0[1] and r[0] < r[1], f"{where}: the toy's scenario needs "
                    "pi(a1) > pi(a2) and r(a1) < r(a2) (a2 is the rare better action)")

        scenario("pi0/rewards", self.pi0, self.rewards)
        for i, pi0 in enumerate(self.pi0_sweep):
            scenario(f"pi0_sweep[{i}] with rewards", pi0, self.rewards)
        for i, r in enumerate(self.reward_sweep):
            scenario(f"reward_sweep[{i}] with pi0", self.pi0, r)
        require(len(self.pi0_four) == len(self.rewards_four),
                "pi0_four and rewards_four must list the same number of settings")
        for i, (pi0, r) in enumerate(zip(self.pi0_four, self.rewards_four)):
            scenario(f"pi0_four[{i}]/rewards_four[{i}]", pi0, r)
        require(self.band < 1, "band must be < 1 (the central fraction of seeds shaded)")
        for q in self.expansion_p2:
            a1 = self.pi0[0] * (1 - q) / (1 - self.pi0[1])
            require(q < a1, f"expansion_p2 has {q}: with pi0 rescaled, pi(a1) = {a1:.3g} is "
                    "not above it, so a2 would start expanded")
        return self


# --- the settings, as the figures state them ---------------------------------------------------

SHARE_WINDOW = 25
"""Steps per moving window of the shares of the relative negatives (``toy.negative_share``)."""


def cache_folder(P: Params) -> Path:
    """Where the chapter's finished runs are kept under ``P.profile`` (read back, not
    recomputed)."""
    return results_dir(P.profile, "toy_dynamics")


def common(P: Params, cache: Path | None = None) -> dict[str, Any]:
    """The keywords of ``toy.summarise`` that every figure shares: the main setting's optimiser,
    temperature, ``seeds`` runs of ``steps``, the band of seeds, the cache and progress."""
    return dict(lr=P.lr, tau=P.tau, optimizer=P.optimizer, steps=P.steps, seeds=P.seeds,
                seed=P.seed, band=P.band, cache=cache, progress=True)


def spread(P: Params) -> str:
    """The spread every toy figure states: seeds, the standard error's bound, the band."""
    return (f"mean over {P.seeds} seeds (standard error ≤ 0.5/√{P.seeds} = "
            f"{0.5 / P.seeds**0.5:.3f}), band: central {P.band:.0%} of seeds")


def settings(P: Params) -> str:
    """The main setting's update, as the figures state it."""
    return f"{P.optimizer}, η={P.lr}, G={P.G}, τ={P.tau}"


def fmt(t: float) -> str:
    """A time to expansion for a table: 'never' if it did not happen within the steps run."""
    return "never" if np.isinf(t) else f"{t:.0f}"


def show(pi, r) -> str:
    """A setting (initial policy and rewards) as a label."""
    return f"π0={tuple(pi)}, r={tuple(r)}"


def expansion_table(summary: toy.Summary, labels: list[str]) -> pd.DataFrame:
    """Per setting: when pi(a2) overtakes pi(a1) (median over seeds, share of seeds that got
    there, the mean trajectory, the mean field) and the peak of the mean pi(a1)."""
    return pd.DataFrame({
        "setting": labels,
        "median over seeds": [fmt(np.median(t)) for t in summary.t_expand],
        "seeds expanded": [f"{np.isfinite(t).mean():.0%}" for t in summary.t_expand],
        "mean trajectory": [fmt(t) for t in toy.expansion_time(summary.mean)],
        "mean field": [fmt(t) for t in toy.expansion_time(summary.mean_field)],
        "peak of mean π(a1) @ step": [f"{m:.3f} @ {i}" for m, i in zip(
            summary.mean[..., 0].max(0), summary.mean[..., 0].argmax(0))],
        "mean π(a2): start → lowest": [f"{a:.4f} → {b:.4f}" for a, b in zip(
            summary.mean[0, :, 1], summary.mean[..., 1].min(0))],
    }).set_index("setting")


# --- Algorithm 1 and Figure 1 --------------------------------------------------------------------

def unsampled_gradient(P: Params) -> np.ndarray:
    """Algorithm 1's group gradient (Lemma 1, summed over a group) at ``pi0`` for the group
    {a1, a3}: the advantages sum to zero, so the unsampled a2's entry is exactly 0."""
    n = np.zeros(len(P.pi0))
    n[[0, 2]] = 1.0
    g, _ = toy.group_gradient(np.array(P.pi0), n, np.array(P.rewards), 1.0, False)
    return g


def figure1_runs(P: Params, cache: Path | None = None) -> tuple[toy.Summary, toy.Summary]:
    """Figure 1's two rows: the initial policies of ``pi0_sweep`` under ``rewards``, and the
    rewards of ``reward_sweep`` from ``pi0``."""
    kw = common(P, cache)
    return (toy.summarise(z0=toy.logits(P.pi0_sweep), r=P.rewards, G=P.G, **kw),
            toy.summarise(z0=toy.logits(P.pi0), r=P.reward_sweep, G=P.G, **kw))


def plot_figure1(P: Params, by_pi0: toy.Summary, by_r: toy.Summary):
    """Figure 1 (ours): one policy panel per initial policy, then one per reward vector."""
    return toy_figures.policy_panels(
        [(by_pi0, s, f"π0 = {tuple(p)}") for s, p in enumerate(P.pi0_sweep)]
        + [(by_r, s, f"r = {tuple(r)}") for s, r in enumerate(P.reward_sweep)],
        f"Figure 1 (ours). Panels 1-{len(P.pi0_sweep)}: r = {tuple(P.rewards)}; then π0 = "
        f"{tuple(P.pi0)}.\n{settings(P)}; {spread(P)};\ndashed: mean field.")


def figure1_table(P: Params, by_pi0: toy.Summary, by_r: toy.Summary) -> pd.DataFrame:
    """The times to expansion of Figure 1's settings (``expansion_table``), both rows."""
    return pd.concat([expansion_table(by_pi0, [show(p, P.rewards) for p in P.pi0_sweep]),
                      expansion_table(by_r, [show(P.pi0, r) for r in P.reward_sweep])])


# --- the relative negatives (Section 3.2) -------------------------------------------------------

def main_run(P: Params, cache: Path | None = None) -> toy.Summary:
    """The chapter's main setting (``pi0``, ``rewards``, ``G``)."""
    return toy.summarise(z0=toy.logits(P.pi0), r=P.rewards, G=P.G, **common(P, cache))


def negative_shares(main: toy.Summary) -> np.ndarray:
    """Each action's share of the relative negatives in windows of ``SHARE_WINDOW`` steps,
    pooled over seeds, for the first setting of ``main``: (steps, K)."""
    return toy.negative_share(main, SHARE_WINDOW)[:, 0]


def plot_relative_negatives(P: Params, main: toy.Summary):
    """The mean policy of the main setting beside the shares of the relative negatives: the
    shift from a3 to a1 that Section 3.2 describes."""
    share = negative_shares(main)
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.2), sharex=True, constrained_layout=True)
    toy_figures.plot_policy(axes[0], main, 0, "mean policy (band: central seeds)")
    for k in range(share.shape[-1]):
        axes[1].plot(share[:, k], color=ACTION_COLORS[k], label=f"$a_{k + 1}$")
    axes[1].set(title="share of the relative negatives", xlabel="step", ylim=(-0.02, 1.02))
    axes[1].legend()
    fig.suptitle(f"{show(P.pi0, P.rewards)}; {settings(P)}; {spread(P)};\nshares pooled over "
                 f"{P.seeds} seeds in windows of {SHARE_WINDOW} steps", fontsize=9)
    return fig


# --- the mean of trajectories against Theorem 1 iterated ----------------------------------------

def two_settings(P: Params) -> list[list[float]]:
    """The two initial policies compared across optimisers and update rules: ``pi0`` and the
    first of ``pi0_sweep``."""
    return [P.pi0, P.pi0_sweep[0]]


def optimizer_runs(P: Params, cache: Path | None = None, negative_only: bool = False
                   ) -> dict[str, toy.Summary]:
    """``two_settings`` under each of ``optimizers``, with the standard update or the
    negative-only one (Appendix B.5)."""
    rule = {"negative_only": True} if negative_only else {}
    return {name: toy.summarise(z0=toy.logits(two_settings(P)), r=P.rewards, G=P.G, **rule,
                                **dict(common(P, cache), **kw))
            for name, kw in toy.optimizers(P.lr, P.sgd_lr).items()}


def plot_optimizers(P: Params, by_opt: dict[str, toy.Summary]):
    """The mean over seeds against the mean field (Theorem 1 iterated) under Adam and SGD."""
    opts = toy.optimizers(P.lr, P.sgd_lr)
    return toy_figures.policy_panels(
        [(sm, s, f"{name}, η={opts[name]['lr']}, π0 = {tuple(p)}")
         for name, sm in by_opt.items() for s, p in enumerate(two_settings(P))],
        f"Mean over seeds (thick) and mean field (dashed); r = {tuple(P.rewards)}, G={P.G}, "
        f"τ={P.tau};\n{spread(P)}.")


def mean_field_table(P: Params, by_opt: dict[str, toy.Summary]) -> pd.DataFrame:
    """Per optimiser and setting: the largest gap between the mean trajectory and the mean
    field, where it is, and when each of them expands."""
    def gap(sm, s):
        return np.abs(sm.mean[:, s] - sm.mean_field[:, s])

    return pd.DataFrame([
        {"optimizer": name, "setting": show(p, P.rewards),
         "max |mean − mean field|": f"{gap(sm, s).max():.3f}",
         "at step": int(gap(sm, s).max(-1).argmax()),
         "expansion of the mean trajectory": fmt(toy.expansion_time(sm.mean[:, s])),
         "expansion of the mean field": fmt(toy.expansion_time(sm.mean_field[:, s]))}
        for name, sm in by_opt.items() for s, p in enumerate(two_settings(P))]
    ).set_index(["optimizer", "setting"])


# --- Figure 5: the group size ----------------------------------------------------------------

def group_size_runs(P: Params, cache: Path | None = None) -> dict[int, toy.Summary]:
    """Figure 5: the main setting at each group size of ``G_sweep``."""
    return {g: toy.summarise(z0=toy.logits(P.pi0), r=P.rewards, G=g, **common(P, cache))
            for g in P.G_sweep}


def plot_figure5(P: Params, by_G: dict[int, toy.Summary]):
    """Figure 5 (ours): one policy panel per group size."""
    return toy_figures.policy_panels([(sm, 0, f"G = {g}") for g, sm in by_G.items()],
                             f"Figure 5 (ours). {show(P.pi0, P.rewards)}; {P.optimizer}, "
                             f"η={P.lr}, τ={P.tau};\n{spread(P)}; dashed: mean field.")


def group_size_table(by_G: dict[int, toy.Summary]) -> pd.DataFrame:
    """The times to expansion of Figure 5's group sizes."""
    return pd.concat([expansion_table(sm, [f"G = {g}"]) for g, sm in by_G.items()])


# --- Figure 6: the temperature ---------------------------------------------------------------

def temperature_runs(P: Params, cache: Path | None = None) -> toy.Summary:
    """Figure 6: the main setting at each temperature of ``tau_sweep`` (logits start at
    log pi0 for every temperature)."""
    return toy.summarise(z0=toy.logits(P.pi0), r=P.rewards, G=P.G,
                         **dict(common(P, cache), tau=P.tau_sweep))


def plot_figure6(P: Params, by_tau: toy.Summary):
    """Figure 6 (ours): one policy panel (the sampling policy Softmax(z/τ)) per temperature."""
    return toy_figures.policy_panels(
        [(by_tau, s, f"τ = {t:g}") for s, t in enumerate(P.tau_sweep)],
        f"Figure 6 (ours). Logits start at log π0, π0 = {tuple(P.pi0)}; curves: the sampling "
        f"policy Softmax(z/τ).\nr = {tuple(P.rewards)}; {P.optimizer}, η={P.lr}, G={P.G}; "
        f"{spread(P)}; dashed: mean field.")


def temperature_table(P: Params, by_tau: toy.Summary) -> pd.DataFrame:
    """The times to expansion of Figure 6's temperatures, with each one's initial sampling
    policy."""
    table = expansion_table(by_tau, [f"τ = {t:g}" for t in P.tau_sweep])
    table.insert(0, "initial π_τ", [str(np.round(p, 3).tolist()) for p in by_tau.mean[0]])
    return table


# --- Figure 7: four actions ------------------------------------------------------------------

def four_action_runs(P: Params, cache: Path | None = None) -> toy.Summary:
    """Figure 7: the four-action settings (``pi0_four`` with ``rewards_four``)."""
    return toy.summarise(z0=toy.logits(P.pi0_four), r=P.rewards_four, G=P.G, **common(P, cache))


def plot_figure7(P: Params, four: toy.Summary):
    """Figure 7 (ours): one policy panel per four-action setting."""
    return toy_figures.policy_panels([(four, s, f"π0 = {tuple(p)}\nr = {tuple(r)}") for s, (p, r) in
                              enumerate(zip(P.pi0_four, P.rewards_four))],
                             f"Figure 7 (ours). Four actions; {settings(P)};\n{spread(P)}; "
                             "dashed: mean field.")


def extremes(four: toy.Summary, rewards: list[list[float]], G: int, tau: float
             ) -> list[tuple[float, float]]:
    """Appendix C.4's signs, per setting s of ``four``: along its mean field, the least
    E[g(a_max)] (never negative, says the paper) and the largest E[g(a_min)] (always
    negative)."""
    out = []
    for s, r in enumerate(rewards):
        Eg = toy.expected_gradient(four.mean_field[:, s], np.array(r), G, tau)
        out.append((Eg[:, np.argmax(r)].min(), Eg[:, np.argmin(r)].max()))
    return out


def extremes_report(P: Params, ext: list[tuple[float, float]]) -> str:
    """``extremes`` as text, one setting after the other."""
    return "\n".join(f"{show(P.pi0_four[s], P.rewards_four[s])}:\n   min over steps of "
                     f"E[g(a_max)] = {best:.2e}, max over steps of E[g(a_min)] = {worst:.2e}"
                     for s, (best, worst) in enumerate(ext))


# --- beyond the paper: the negative-only update ----------------------------------------------

COST_EARLY_STEP = 50
"""The step at which the negative-only update's early cost (pi(a1), reward) is read."""
COST_FIRST_STEPS = 100
"""The stretch over which the early reward is averaged (steps 0 to this)."""


def negative_only_runs(P: Params, cache: Path | None = None) -> dict[str, toy.Summary]:
    """``optimizer_runs`` with the negative-only update of Appendix B.5."""
    return optimizer_runs(P, cache, negative_only=True)


def plot_negative_only(P: Params, by_opt: dict[str, toy.Summary],
                       negative: dict[str, toy.Summary]):
    """pi(a1), pi(a2) and the expected reward, standard against negative-only, one row per
    optimiser (the main setting)."""
    opts = toy.optimizers(P.lr, P.sgd_lr)
    fig, axes = plt.subplots(2, 3, figsize=(10, 6.5), constrained_layout=True)
    for row, name in zip(axes, opts):
        toy_figures.plot_variants(row, {"standard": by_opt[name], "negative-only": negative[name]}, 0,
                          P.rewards)
        row[0].set_ylabel(f"{name}, η={opts[name]['lr']}")
    axes[0, 0].legend()
    fig.suptitle(f"Standard vs negative-only updates; {show(P.pi0, P.rewards)}, G={P.G}, "
                 f"τ={P.tau};\n{spread(P)}; dashed: mean field.", fontsize=10)
    return fig


def costs(sm: toy.Summary) -> dict[str, str]:
    """What an update rule gains and costs in the first setting of ``sm``: when the runs
    expand, pi(a1) and the reward early on, the reward over the run and at its end."""
    reward = sm.reward[:, 0, 0]
    early = min(COST_EARLY_STEP, len(reward) - 1)
    return {"median time to expansion": fmt(np.median(sm.t_expand[0])),
            "seeds expanded": f"{np.isfinite(sm.t_expand[0]).mean():.0%}",
            f"mean π(a1) at step {early}": f"{sm.mean[early, 0, 0]:.3f}",
            f"mean reward at step {early}": f"{reward[early]:.3f}",
            f"mean reward, first {COST_FIRST_STEPS} steps":
                f"{reward[:COST_FIRST_STEPS + 1].mean():.3f}",
            "mean reward, whole run": f"{reward.mean():.3f}",
            "time to expansion, 10% / 90% of seeds": " / ".join(
                fmt(q) for q in np.quantile(sm.t_expand[0], [0.1, 0.9], method="inverted_cdf")),
            "final mean reward": f"{reward[-1]:.3f}"}


def costs_table(by_opt: dict[str, toy.Summary], negative: dict[str, toy.Summary]
                ) -> pd.DataFrame:
    """``costs`` per optimiser, standard and negative-only side by side."""
    return pd.DataFrame({(name, rule): costs(sm) for name in by_opt
                         for rule, sm in (("standard", by_opt[name]),
                                          ("negative-only", negative[name]))})


# --- beyond the paper: the phase diagram of the time to expansion ----------------------------

PHASE_VMIN = 10
"""The shortest time to expansion on the phase diagram's colour scale (steps)."""


def expansion_grids(P: Params, cache: Path | None = None) -> dict[str, toy.ExpansionGrid]:
    """The phase diagram's runs: times to expansion over ``expansion_G`` x ``expansion_p2``,
    standard and negative-only."""
    return {rule: toy.expansion_grid(pi0=P.pi0, r=P.rewards, p2=P.expansion_p2,
                                     G=P.expansion_G, steps=P.expansion_steps,
                                     seeds=P.expansion_seeds, seed=P.seed, lr=P.lr, tau=P.tau,
                                     optimizer=P.optimizer, negative_only=neg, cache=cache)
            for rule, neg in (("standard", False), ("negative-only", True))}


def plot_phase_diagram(P: Params, grids: dict[str, toy.ExpansionGrid]):
    """Per update rule: the median time to expansion over the grid, and its distribution over
    seeds at the smallest G."""
    norm = LogNorm(vmin=PHASE_VMIN, vmax=P.expansion_steps)
    fig, axes = plt.subplots(2, 2, figsize=(9.5, 8.5), constrained_layout=True)
    for col, (rule, grid) in zip(axes.T, grids.items()):
        im = toy_figures.plot_phase(col[0], np.median(grid.t_seed, -1), P.expansion_p2, P.expansion_G,
                            P.expansion_steps, f"{rule}: median time to expansion", norm)
        toy_figures.plot_ecdf(col[1], grid.t_seed[0], [f"π0(a2) = {p:g}" for p in P.expansion_p2],
                      P.expansion_steps,
                      f"{rule}, G = {P.expansion_G[0]}: distribution over seeds")
    fig.colorbar(im, ax=axes[0], label="steps")
    axes[1, 0].legend(fontsize=8)
    fig.suptitle(f"Time to expansion; π0 = {tuple(P.pi0)} with a2's mass set, r = "
                 f"{tuple(P.rewards)}; {P.optimizer}, η={P.lr}, τ={P.tau};\n"
                 f"{P.expansion_seeds} seeds per cell, {P.expansion_steps} steps (grey: the "
                 "median run had not expanded).", fontsize=10)
    return fig


def expansion_grid_table(P: Params, grids: dict[str, toy.ExpansionGrid]) -> pd.DataFrame:
    """The time to expansion of the mean trajectory and of the mean field on the grid."""
    index = pd.Index([f"G={g}" for g in P.expansion_G], name="G")
    columns = pd.Index([f"{p:g}" for p in P.expansion_p2], name="initial π(a2)")
    return pd.concat({(rule, what): pd.DataFrame(np.vectorize(fmt)(t), index=index,
                                                 columns=columns)
                      for rule, grid in grids.items()
                      for what, t in (("mean trajectory", grid.t_mean),
                                      ("mean field", grid.t_field))},
                     names=["update", "time to expansion of"])


# --- the readings: Section 3.2's two stages, checked over seeds -----------------------------

EARLY_STEPS = 50
"""The first steps in which a3 should carry most relative negatives (stage 1)."""
LATE_STEPS = 200
"""The last steps in which a1 should carry most relative negatives (stage 2)."""
EXPLOITATION_MARGIN = 0.05
"""Stage 1: the smallest rise of pi(a1) above its start (its peak after step 0) that counts."""
EXPLORATION_MARGIN = 0.05
"""Stage 2: the smallest lead of pi(a2) over pi(a1) at the last step that counts."""
NEGATIVE_SHARE_MIN = 0.5
NEGATIVE_SHARE_MARGIN = 0.05
"""The shift of the relative negative: a3's share early and a1's share late (of the negative
samples) must each exceed one half (a majority) by at least the margin."""


def stages(P: Params) -> dict[str, np.ndarray]:
    """The two stages per seed in the main setting (``toy.stages``: exploitation, exploration,
    a3's share of the negatives in the first ``EARLY_STEPS`` steps, a1's in the last
    ``LATE_STEPS``)."""
    return toy.stages(toy.logits(P.pi0), P.rewards, early=EARLY_STEPS, late=LATE_STEPS, G=P.G,
                      lr=P.lr, tau=P.tau, optimizer=P.optimizer, steps=P.steps, seeds=P.seeds,
                      seed=P.seed)


def check(what: str, values: np.ndarray, reference: float, margin: float) -> tuple[str, str]:
    """(what, verdict) of 'the mean over seeds of ``values`` exceeds ``reference`` by more than
    ``margin``' (``stats.one_sample``: Student-t interval); NaN seeds (no negative samples in
    the window) left out."""
    v = values[~np.isnan(values)]
    e = stats.one_sample(v - reference, margin)
    shift = f" - {reference:g}" if reference else ""
    return (f"{what}{shift} = {e.text()} over {len(v)} seeds (> +{margin:g}?)", e.verdict)


def claim_rows(P: Params, per_seed: dict[str, np.ndarray]) -> list[dict[str, Any]]:
    """The claim ``toy_two_stages`` (Section 3.2, Figure 1) as rows for ``verdicts.record``:
    exploitation, exploration and the shift of the relative negative from a3 to a1, each a
    ``check`` over seeds (``per_seed``: ``stages``' output)."""
    checks = [check("peak π(a1) after step 0 - π0(a1)", per_seed["exploitation"], 0.0,
                    EXPLOITATION_MARGIN),
              check("π(a2) - π(a1) at the last step", per_seed["exploration"], 0.0,
                    EXPLORATION_MARGIN),
              check(f"a3's share of the negatives, first {EARLY_STEPS} steps",
                    per_seed["early_worst"], NEGATIVE_SHARE_MIN, NEGATIVE_SHARE_MARGIN),
              check(f"a1's share of the negatives, last {LATE_STEPS} steps",
                    per_seed["late_exploited"], NEGATIVE_SHARE_MIN, NEGATIVE_SHARE_MARGIN)]
    ours = (f"π0 = {P.pi0}, r = {P.rewards}, G = {P.G}, {P.seeds} seeds, {P.steps} steps: π(a1) "
            f"peaks {per_seed['exploitation'].mean():+.2f} above its start; at the end π(a2) - "
            f"π(a1) = {per_seed['exploration'].mean():+.2f} (mean over seeds)")
    return [{"claim": "toy_two_stages", "ours": ours, "checks": checks}]


# --- the summary: the paper's toy claims on this build's numbers ------------------------------

STAGE1_A2_SLACK = 1.05
"""Stage 1's "pi(a2) stays put or falls": the mean pi(a2) at the peak of pi(a1) is at most
this times its start."""
SHARE_START_STEPS = 10
"""The first steps over which a3's share of the relative negatives is read (steps 0-9)."""


def summary_table(main: toy.Summary, by_G: dict[int, toy.Summary],
                  ext: list[tuple[float, float]]) -> pd.DataFrame:
    """Each toy claim of the paper (Figure 1's two stages, the shift of the relative negative,
    Figure 5's group sizes, Figure 7's signs from ``extremes``), what this build shows, and
    whether it holds here (in the mean over seeds)."""
    share = negative_shares(main)
    steps = len(main.mean) - 1
    peak = int(main.mean[:, 0, 0].argmax())
    start, top, end = main.mean[0, 0], main.mean[peak, 0], main.mean[-1, 0]
    medians = [np.median(sm.t_expand[0]) for sm in by_G.values()]
    early_a3 = np.nanmean(share[:SHARE_START_STEPS, 2])
    late_a1 = np.nanmean(share[peak:, 0])
    return pd.DataFrame([
        ("stage 1: π(a1) rises, π(a3) falls, π(a2) stays or falls",
         f"mean π {np.round(start, 3).tolist()} → {np.round(top, 3).tolist()} at step {peak}",
         top[0] > start[0] and top[2] < start[2] and top[1] <= STAGE1_A2_SLACK * start[1]),
        ("stage 2: π(a2) rises, π(a1) falls",
         f"mean π {np.round(end, 3).tolist()} at step {steps}",
         end[1] > top[1] and end[0] < top[0]),
        ("the relative negative shifts from a3 to a1",
         f"a3's share {early_a3:.2f} in steps 0-{SHARE_START_STEPS - 1}, "
         f"a1's share {late_a1:.2f} after step {peak}",
         early_a3 > NEGATIVE_SHARE_MIN and late_a1 > NEGATIVE_SHARE_MIN),
        ("a larger G keeps both stages (and expands sooner)",
         "median time to expansion " + ", ".join(f"G={g}: {fmt(m)}"
                                                 for g, m in zip(by_G, medians)),
         all(a >= b for a, b in zip(medians, medians[1:]))),
        ("four actions: E[Δz(a_max)] ≥ 0, E[Δz(a_min)] < 0",
         "along the mean field of both settings",
         all(best >= 0 > worst for best, worst in ext)),
    ], columns=["claim (paper)", "this build", "holds here"]).set_index("claim (paper)")


# --- prose written from the results ------------------------------------------------------------

SWITCH_LO, SWITCH_HI = 0.1, 0.9
"""A single run's switch: from its last step with pi(a2) below ``SWITCH_LO`` to its first above
``SWITCH_HI``."""
SIZEABLE = 0.1
"""A mean probability at the last step that counts as mass kept on an action."""


def _stages(mean: np.ndarray) -> tuple[bool, bool, int]:
    """For one setting's mean policy (steps+1, K): stage 1 (pi(a1) peaks above its start while
    pi(a3) falls), stage 2 (after the peak pi(a2) rises and pi(a1) falls) and the peak step."""
    peak = int(mean[:, 0].argmax())
    stage1 = bool(mean[peak, 0] > mean[0, 0] and mean[peak, 2] < mean[0, 2])
    stage2 = bool(mean[-1, 1] > mean[peak, 1] and mean[-1, 0] < mean[peak, 0])
    return stage1, stage2, peak


def _ordered(times: list[float]) -> bool:
    """Whether times to expansion never fall along the list (inf counts as latest)."""
    return all(a <= b for a, b in zip(times, times[1:]))


def _at(t: float) -> str:
    """'at step t', or 'never' if it did not happen within the steps run."""
    return "never" if np.isinf(t) else f"at step {t:.0f}"


def _joined(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def figure1_text(P: Params, by_pi0: toy.Summary, by_r: toy.Summary) -> str:
    """What Figure 1 and its table show: in how many panels the mean has both stages, whether
    the mean pi(a2) dips in stage 1, and how the median time to expansion orders with r(a1) and
    with a2's initial probability."""
    panels = [(by_pi0, s) for s in range(len(P.pi0_sweep))] + [(by_r, s) for s in
                                                                range(len(P.reward_sweep))]
    found = [_stages(sm.mean[:, s]) for sm, s in panels]
    both = sum(a and b for a, b, _ in found)
    dips = sum(sm.mean[:, s, 1].min() < sm.mean[0, s, 1] for sm, s in panels)
    peaks = [p for *_, p in found]
    text = (f"In the mean over seeds both stages appear in {both} of the {len(panels)} panels "
            f"(π(a1) peaks, and π(a3) falls, between steps {min(peaks)} and {max(peaks)}; after "
            "the peak, π(a1) declines as π(a2) rises). During stage 1 the mean π(a2) falls below "
            f"its start in {dips} of them (last column of the table)")
    text += (", the paper's \"or may even decrease\": a2 gets no gradient until it is sampled "
             "while the normaliser grows with z(a1). " if dips else ". ")
    med_r = [float(np.median(t)) for t in by_r.t_expand]
    order_r = np.argsort([r[0] for r in P.reward_sweep], kind="stable")
    text += ("The median time to expansion is " + _joined(
        [f"{fmt(med_r[i])} for r(a1) = {P.reward_sweep[i][0]:g}" for i in order_r]))
    med_p = [float(np.median(t)) for t in by_pi0.t_expand]
    p2 = [p[1] for p in P.pi0_sweep]
    text += "; from the initial policies it is " + _joined(
        [f"{fmt(m)} from π0 = {tuple(p)}" for m, p in zip(med_p, P.pi0_sweep)]) + ". "
    later_r = _ordered([med_r[i] for i in order_r]) and len(set(med_r)) > 1
    rarer = sorted(set(p2))
    later_p = len(rarer) > 1 and all(
        min(m for m, q in zip(med_p, p2) if q == lo) >= max(m for m, q in zip(med_p, p2) if q == hi)
        for lo, hi in zip(rarer, rarer[1:])) and len(set(med_p)) > 1
    claims = [c for c, ok in (("the closer r(a1) is to r(a2)", later_r),
                              ("the rarer a2 starts", later_p)) if ok]
    if claims:
        return text + f"Expansion comes later {' and '.join(claims)}."
    return text + ("Within these runs the median does not order clearly with r(a1) or with a2's "
                   "initial probability.")


def _switch_durations(runs: np.ndarray) -> list[int]:
    """The switch of each single run (steps+1, E, K) that reached pi(a2) > ``SWITCH_HI``: the
    steps since its last pi(a2) < ``SWITCH_LO`` before that."""
    out = []
    for e in range(runs.shape[1]):
        p2 = runs[:, e, 1]
        above = np.flatnonzero(p2 > SWITCH_HI)
        if len(above):
            below = np.flatnonzero(p2[: above[0]] < SWITCH_LO)
            out.append(int(above[0] - (below[-1] if len(below) else 0)))
    return out


def single_runs_text(P: Params, by_pi0: toy.Summary, by_r: toy.Summary) -> str:
    """How abruptly Figure 1's single runs switch, against how widely the seeds' times to
    expansion spread."""
    panels = [(by_pi0, s) for s in range(len(P.pi0_sweep))] + [(by_r, s) for s in
                                                                range(len(P.reward_sweep))]
    durations = [d for sm, s in panels for d in _switch_durations(sm.examples[:, s])]
    shown = sum(sm.examples.shape[2] for sm, _ in panels)
    sm, s = max(panels, key=lambda p: np.isfinite(p[0].t_expand[p[1]]).mean())
    t = sm.t_expand[s]
    q10, q90 = np.quantile(t, [0.1, 0.9], method="inverted_cdf")
    label = show(P.pi0_sweep[s], P.rewards) if sm is by_pi0 else show(P.pi0, P.reward_sweep[s])
    spread_text = (f"across seeds the time to expansion spreads from {fmt(q10)} (10 % of seeds) "
                   f"to {fmt(q90)} (90 %) in the panel where most seeds expand ({label}, "
                   f"{np.isfinite(t).mean():.0%} of seeds)")
    if not durations:
        return (f"None of the {shown} single runs drawn switches from π(a2) < {SWITCH_LO:g} to "
                f"π(a2) > {SWITCH_HI:g} within the horizon; {spread_text}.")
    text = (f"Of the {shown} single runs drawn, {len(durations)} switch from π(a2) < "
            f"{SWITCH_LO:g} to π(a2) > {SWITCH_HI:g} within the horizon, in "
            f"{min(durations)} to {max(durations)} steps (median {np.median(durations):.0f}), "
            f"while {spread_text}. ")
    if np.isfinite(q90) and np.median(durations) < 0.5 * (q90 - q10) or not np.isfinite(q90):
        return text + ("**Each run switches quickly, at a random time**: for a single run the "
                       "second stage is an event whose waiting time is set by how often a2 is "
                       "sampled, not a gradual drift.")
    return text + ("Here the switches take about as long as their timing varies, so the mean's "
                   "decline is not only an average of abrupt events.")


def relative_negatives_text(main: toy.Summary) -> str:
    """Who the relative negatives are at the start, after the peak of pi(a1), and at the end
    (the main setting's first setting)."""
    share = negative_shares(main)
    peak = int(main.mean[:, 0, 0].argmax())
    early_a3 = np.nanmean(share[:SHARE_START_STEPS, 2])
    late = np.nanmean(share[peak:], 0)
    a2 = np.nanmax(share[:, 1]) if np.isfinite(share[:, 1]).any() else 0.0
    text = (f"In steps 0-{SHARE_START_STEPS - 1}, {early_a3:.0%} of the negative samples are a3; "
            f"after the peak of π(a1) (step {peak}), {late[0]:.0%} are a1 and {late[2]:.0%} are "
            f"a3. ")
    text += ("The shift is there: once π(a1) has saturated, most negative samples are a1, drawn "
             "in the same group as an a2. " if early_a3 > NEGATIVE_SHARE_MIN
             and late[0] > NEGATIVE_SHARE_MIN else
             "The shift from a3 to a1 does not show in this build's windows. ")
    return text + (f"a2's share never exceeds {a2:.0%}: the best action cannot be a relative "
                   "negative (its advantage is never below zero), while a sampled a3 always is, "
                   "unless its whole group is a3.")


def mean_field_text(P: Params, by_opt: dict[str, toy.Summary]) -> str:
    """When the mean field and the mean trajectory expand, per optimiser and setting, the
    largest gap between them, and whether runs expand where the mean field never does."""
    parts, ahead = [], {}
    for name, sm in by_opt.items():
        rows = []
        for s, p in enumerate(two_settings(P)):
            field = float(toy.expansion_time(sm.mean_field[:, s]))
            mean = float(toy.expansion_time(sm.mean[:, s]))
            gap = np.abs(sm.mean[:, s] - sm.mean_field[:, s]).max()
            ahead.setdefault(name, []).append(field < mean)
            rows.append(f"from π0(a2) = {p[1]:g} the mean field expands {_at(field)}, the mean "
                        f"of runs {_at(mean)} ({np.isfinite(sm.t_expand[s]).mean():.0%} of "
                        f"runs), with gaps of up to {gap:.2f} in probability")
        parts.append(f"Under {name}, " + "; ".join(rows) + ".")
    text = " ".join(parts)
    if all(ahead.get("Adam", [False])):
        text += " **Under Adam the mean field expands before the average run in both settings.**"
    else:
        text += " Under Adam the mean field does not run ahead of the average run in both settings."
    sgd = by_opt.get("SGD")
    if sgd is not None and any(np.isfinite(toy.expansion_time(sgd.mean_field[:, s])) == False  # noqa: E712
                               and np.isfinite(sgd.t_expand[s]).any()
                               for s in range(len(two_settings(P)))):
        text += " Under SGD some runs expand within the horizon where the mean field never does."
    return text


def group_size_text(by_G: dict[int, toy.Summary]) -> str:
    """Whether both stages show at every G, and how the median time to expansion and the spread
    of the seeds' times change with G."""
    stages = [_stages(sm.mean[:, 0]) for sm in by_G.values()]
    medians = [float(np.median(sm.t_expand[0])) for sm in by_G.values()]
    both = all(a and b for a, b, _ in stages)
    text = ("Both stages are present at every G. " if both else
            "Both stages are present in the mean at " + (", ".join(
                f"G = {g}" for g, (a, b, _) in zip(by_G, stages) if a and b) or "no G") + ". ")
    text += "The median time to expansion is " + _joined(
        [f"{fmt(m)} at G = {g}" for g, m in zip(by_G, medians)]) + ", with "
    text += _joined([f"{np.isfinite(sm.t_expand[0]).mean():.0%} of seeds expanded at G = {g}"
                     for g, sm in by_G.items()]) + ". "
    falls = all(a >= b for a, b in zip(medians, medians[1:])) and medians[0] > medians[-1]
    return text + ("What G changes most is *when* stage 2 comes: more samples per step find a2 "
                   "sooner." if falls else
                   "In this build a larger G does not bring expansion sooner.")


def temperature_text(P: Params, by_tau: toy.Summary) -> str:
    """Per temperature: the median time to expansion and how far the sampling policy's pi(a1)
    rises above its start."""
    medians = [float(np.median(t)) for t in by_tau.t_expand]
    rise = [by_tau.mean[:, s, 0].max() - by_tau.mean[0, s, 0] for s in range(len(P.tau_sweep))]
    text = "The median time to expansion is " + _joined(
        [f"{fmt(m)} at τ = {t:g}" for m, t in zip(medians, P.tau_sweep)])
    text += ", and the sampling policy's π_τ(a1) rises above its start by at most " + _joined(
        [f"{r:.3f} at τ = {t:g}" for r, t in zip(rise, P.tau_sweep)]) + ". "
    order = np.argsort(P.tau_sweep)
    sooner = (all(medians[a] >= medians[b] for a, b in zip(order, order[1:]))
              and medians[order[0]] > medians[order[-1]])
    weaker = all(rise[a] >= rise[b] for a, b in zip(order, order[1:]))
    text += ("A higher temperature flattens the sampling policy, so a2 is sampled early and "
             "expansion comes sooner: the paper's case for a higher training temperature. "
             if sooner else "Here expansion does not come sooner at every higher temperature. ")
    if weaker:
        text += "The price is the exploitation stage, which weakens as τ grows"
        hottest = order[-1]
        return text + (f" and at τ = {P.tau_sweep[hottest]:g} hardly happens (π_τ(a1) rises by "
                       f"less than {EXPLOITATION_MARGIN:g})." if rise[hottest] < EXPLOITATION_MARGIN
                       else ".")
    return text + "The exploitation stage does not weaken steadily with τ here."


def four_action_text(P: Params, four: toy.Summary) -> str:
    """Per four-action setting: the mean probability of each intermediate action (a4 on) at the
    start and the end, and whether mass stays on one whose reward lies between r(a1) and
    r(a2)."""
    parts, stuck = [], False
    for s, (pi0, r) in enumerate(zip(P.pi0_four, P.rewards_four)):
        for k in range(3, len(pi0)):
            start, end = four.mean[0, s, k], four.mean[-1, s, k]
            parts.append(f"with r(a{k + 1}) = {r[k]:g}, the mean π(a{k + 1}) goes from "
                         f"{start:.3f} to {end:.3f} (π(a2) ends at {four.mean[-1, s, 1]:.3f})")
            stuck |= bool(r[0] < r[k] < r[1] and end >= SIZEABLE)
    text = "Over the run, " + "; ".join(parts) + ". "
    if stuck:
        return text + ("Where an unexplored action whose reward lies between a1's and a2's keeps "
                       "a sizeable share at the end, some runs expanded to it first and stayed "
                       "there: expansion need not reach the best action.")
    return text + "No intermediate action keeps a sizeable share at the end in this build."


def negative_only_text(by_opt: dict[str, toy.Summary], negative: dict[str, toy.Summary]) -> str:
    """Standard against negative-only, per optimiser (the main setting): when runs expand, how
    many, the reward over the run and pi(a1) early on; and pi(a2)'s fate where nothing expands."""
    out = []
    for name in by_opt:
        std, neg = by_opt[name], negative[name]
        m_std, m_neg = (float(np.median(sm.t_expand[0])) for sm in (std, neg))
        f_std, f_neg = (np.isfinite(sm.t_expand[0]).mean() for sm in (std, neg))
        r_std, r_neg = (sm.reward[:, 0, 0].mean() for sm in (std, neg))
        early = min(COST_EARLY_STEP, len(std.mean) - 1)
        q = [fmt(x) for x in np.quantile(neg.t_expand[0], [0.1, 0.9], method="inverted_cdf")]
        faster = m_neg < m_std or (m_neg == m_std and f_neg > f_std)
        verdict = "yes" if faster and r_neg > r_std else "no"
        text = (f"**Under {name}, {verdict}**: the median time to expansion is {fmt(m_neg)} "
                f"with negative-only updates and {fmt(m_std)} with standard ones ({f_neg:.0%} against {f_std:.0%} of "
                f"seeds expanded; negative-only's 10 % / 90 % quantiles {q[0]} / {q[1]}), the mean "
                f"reward over the run {r_neg:.3f} against {r_std:.3f}, and the mean π(a1) at step "
                f"{early} {neg.mean[early, 0, 0]:.3f} against {std.mean[early, 0, 0]:.3f}.")
        if f_neg == 0:
            p2 = neg.mean[:, 0, 1]
            text += (f" With negative-only updates no run expands, and the mean π(a2) goes from "
                     f"{p2[0]:.4f} to {p2[-1]:.4f}"
                     + (" (it decays)." if p2[-1] < p2[0] else "."))
        out.append(text)
    return "\n\n".join(out)


def phase_text(P: Params, grids: dict[str, toy.ExpansionGrid]) -> str:
    """The phase diagram in words: per update rule, how many cells' median run expands, how the
    median grows as a2 starts rarer (at the smallest G) and falls with G, and the mean fields'
    range."""
    order = np.argsort(P.expansion_p2)[::-1]            # from common to rare a2
    parts, grows = [], {}
    for rule, grid in grids.items():
        med = np.median(grid.t_seed, -1)
        finite = np.isfinite(med)
        row = [med[0, j] for j in order]
        grows[rule] = _ordered(row) and row[0] < row[-1]
        shorter = sum(med[i + 1, j] <= med[i, j] for i in range(len(P.expansion_G) - 1)
                      for j in range(len(P.expansion_p2)))
        pairs = (len(P.expansion_G) - 1) * len(P.expansion_p2)
        field = grid.t_field[np.isfinite(grid.t_field)]
        slowest = fmt(med[finite].max()) if finite.any() else "none"
        parts.append(
            f"With the {rule} update the median run expands within {P.expansion_steps} steps in "
            f"{finite.sum()} of {finite.size} cells (the slowest at {slowest}); at G = "
            f"{P.expansion_G[0]} its median is " + _joined(
                [f"{fmt(med[0, j])} from π0(a2) = {P.expansion_p2[j]:g}" for j in order])
            + f"; a larger G shortens or keeps the median in {shorter} of {pairs} comparisons; "
            "its mean field expands " + (f"at steps {field.min():.0f} to {field.max():.0f}"
                                         if len(field) else "nowhere") + ".")
    text = " ".join(parts)
    if grows.get("standard"):
        text += (" With the standard update the time to expansion grows as a2 starts rarer: "
                 "stage 1 drives π(a2) down further (its logit is frozen while a1's grows), so "
                 "the wait for the first useful sample of a2 lengthens. This is the paper's "
                 "shrinkage made quantitative: the rarer the better answer, the longer training "
                 "must last to find it.")
    return text


def summary_text(table: pd.DataFrame, by_opt: dict[str, toy.Summary],
                 negative: dict[str, toy.Summary], grids: dict[str, toy.ExpansionGrid]) -> str:
    """The closing bullets: which of the paper's toy claims hold here (``summary_table``), and
    this chapter's own findings with their numbers."""
    held = [c for c, ok in table["holds here"].items() if ok]
    missed = [c for c, ok in table["holds here"].items() if not ok]
    bullets = [("**Reproduced, in the mean over seeds**: " + "; ".join(held) + "."
                if held else "**None of the paper's toy claims holds here in the mean.**")
               + (f" **Not reproduced here**: {'; '.join(missed)}." if missed else "")]
    adam = by_opt.get("Adam")
    if adam is not None:
        f = [_at(float(toy.expansion_time(adam.mean_field[:, s])))
             for s in range(adam.mean.shape[1])]
        m = [_at(float(toy.expansion_time(adam.mean[:, s]))) for s in range(adam.mean.shape[1])]
        bullets.append("**The trajectory of means against the mean of trajectories** (Adam, the "
                       f"two settings): the mean field expands {' and '.join(f)}, the mean of "
                       f"runs {' and '.join(m)}. Theorem 1 is a one-step statement; iterated, it "
                       "is not a forecast of the run.")
    for name in by_opt:
        s, n = (float(np.median(sm[name].t_expand[0])) for sm in (by_opt, negative))
        bullets.append(f"**Negative-only under {name}** (beyond the paper): median time to "
                       f"expansion {fmt(n)}, against {fmt(s)} for the standard update.")
    cells = {rule: np.isfinite(np.median(g.t_seed, -1)) for rule, g in grids.items()}
    bullets.append("**Time to expansion** (beyond the paper): the median run expands in "
                   + _joined([f"{c.sum()} of {c.size} cells with the {rule} update"
                              for rule, c in cells.items()]) + " of the phase diagram.")
    return "\n".join(f"- {b}" for b in bullets)
