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
    return toy.policy_panels(
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
    toy.plot_policy(axes[0], main, 0, "mean policy (band: central seeds)")
    for k in range(share.shape[-1]):
        axes[1].plot(share[:, k], color=toy.ACTION_COLORS[k], label=f"$a_{k + 1}$")
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


def optimizers(P: Params) -> dict[str, dict[str, Any]]:
    """Adam at the paper's η and plain SGD at ``sgd_lr``."""
    return {"Adam": dict(optimizer="adam", lr=P.lr), "SGD": dict(optimizer="sgd", lr=P.sgd_lr)}


def optimizer_runs(P: Params, cache: Path | None = None, negative_only: bool = False
                   ) -> dict[str, toy.Summary]:
    """``two_settings`` under each of ``optimizers``, with the standard update or the
    negative-only one (Appendix B.5)."""
    rule = {"negative_only": True} if negative_only else {}
    return {name: toy.summarise(z0=toy.logits(two_settings(P)), r=P.rewards, G=P.G, **rule,
                                **dict(common(P, cache), **kw))
            for name, kw in optimizers(P).items()}


def plot_optimizers(P: Params, by_opt: dict[str, toy.Summary]):
    """The mean over seeds against the mean field (Theorem 1 iterated) under Adam and SGD."""
    opts = optimizers(P)
    return toy.policy_panels(
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
    return toy.policy_panels([(sm, 0, f"G = {g}") for g, sm in by_G.items()],
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
    return toy.policy_panels(
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
    return toy.policy_panels([(four, s, f"π0 = {tuple(p)}\nr = {tuple(r)}") for s, (p, r) in
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
    opts = optimizers(P)
    fig, axes = plt.subplots(2, 3, figsize=(10, 6.5), constrained_layout=True)
    for row, name in zip(axes, opts):
        toy.plot_variants(row, {"standard": by_opt[name], "negative-only": negative[name]}, 0,
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
        im = toy.plot_phase(col[0], np.median(grid.t_seed, -1), P.expansion_p2, P.expansion_G,
                            P.expansion_steps, f"{rule}: median time to expansion", norm)
        toy.plot_ecdf(col[1], grid.t_seed[0], [f"π0(a2) = {p:g}" for p in P.expansion_p2],
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
    return (f"{what} - {reference:g} = {e.text()} over {len(v)} seeds (> +{margin:g}?)",
            e.verdict)


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
