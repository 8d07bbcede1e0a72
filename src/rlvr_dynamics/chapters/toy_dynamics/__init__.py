"""Chapter 2, the toy dynamics (``notebooks/toy_dynamics.md``): Algorithm 1 over many seeds,
every toy figure of the paper, the negative-only variant and the time-to-expansion phase
diagram (the simulation is in ``rlvr_dynamics.toy``).

This module holds the chapter's parameters, its runs and the claim it records for the closing
chapter: the runs of each figure (``figure1_runs``, ``main_run``, ``optimizer_runs``,
``group_size_runs``, ``temperature_runs``, ``four_action_runs``, ``negative_only_runs``,
``expansion_grids``; cached in ``cache_folder``), what is computed from them
(``negative_shares``, ``extremes``), and the per-seed stages with their claim checks (``stages``,
``claim_rows``). The chapter's tables for people are in ``shown``, its figures in
``figures``, its words in ``sentences``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pydantic import model_validator

from rlvr_dynamics import stats, toy
from rlvr_dynamics.chapters import (ChapterParams, Distribution, Int, ListOf, Positive, Real,
                                    require)
from rlvr_dynamics import law
from rlvr_dynamics.store import results_dir
from rlvr_dynamics.toy import ToySettings, check_scenario

Rewards = ListOf(Real())


class Params(ChapterParams, ToySettings):
    """The main setting (``toy.ToySettings``: ``pi0``, ``rewards``, ``G``, ``lr``,
    ``optimizer``, ``tau``, ``sgd_lr``; ``seeds`` runs of ``steps``), the sweeps of Figures
    5-7, the four-action settings, the grid of the phase diagram (``expansion_*``), and the transition law's grid (``law_*``: where kappa is
    fitted, from ``pi0`` at ``sgd_lr``) and its fresh points (``fresh_*``: where it is
    checked)."""

    seeds: Int(1) = 1000
    steps: Int(1) = 1000
    seed: Int(0) = 0
    pi0_sweep: ListOf(Distribution) = [[0.475, 0.05, 0.475], [0.495, 0.01, 0.495],
                                       [0.7, 0.01, 0.29], [0.2, 0.01, 0.79]]
    reward_sweep: ListOf(Rewards) = [[0.1, 1.0, 0.0], [0.3, 1.0, 0.0], [0.7, 1.0, 0.0],
                                     [0.9, 1.0, 0.0]]
    G_sweep: ListOf(Int(2)) = [2, 3, 5, 10]
    tau_sweep: ListOf(Positive) = [1.0, 2.0, 5.0, 20.0]
    pi0_four: ListOf(Distribution) = [[0.4, 0.01, 0.3, 0.29], [0.49, 0.01, 0.49, 0.01]]
    rewards_four: ListOf(Rewards) = [[0.5, 1.0, 0.0, 0.25], [0.5, 1.0, 0.0, 0.75]]
    band: Real(0, 1, open_lo=True) = 0.8
    expansion_seeds: Int(1) = 200
    expansion_steps: Int(1) = 2000
    expansion_p2: ListOf(Real(0, 1, open_lo=True)) = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05,
                                                      0.1]
    expansion_G: ListOf(Int(2)) = [2, 3, 4, 6, 8, 12, 16]
    law_p2: ListOf(Real(0, 1, open_lo=True)) = [0.002, 0.005, 0.01, 0.02]
    law_rewards: ListOf(Rewards) = [[0.3, 1.0, 0.0], [0.5, 1.0, 0.0], [0.7, 1.0, 0.0]]
    law_G: ListOf(Int(2)) = [2, 8]
    law_steps: Int(1) = 40_000
    fresh_pi0: Distribution = [0.6, 0.01, 0.39]
    fresh_p2: ListOf(Real(0, 1, open_lo=True)) = [0.003, 0.008, 0.015]
    fresh_rewards: ListOf(Rewards) = [[0.4, 1.0, 0.0], [0.6, 0.9, 0.1]]
    fresh_G: ListOf(Int(2)) = [3, 16]
    fresh_lr: Positive = 0.5

    @model_validator(mode="after")
    def _cross(self):
        for i, pi0 in enumerate(self.pi0_sweep):
            check_scenario(f"pi0_sweep[{i}] with rewards", pi0, self.rewards)
        for i, r in enumerate(self.reward_sweep):
            check_scenario(f"reward_sweep[{i}] with pi0", self.pi0, r)
        require(len(self.pi0_four) == len(self.rewards_four),
                "pi0_four and rewards_four must list the same number of settings")
        for i, (pi0, r) in enumerate(zip(self.pi0_four, self.rewards_four)):
            check_scenario(f"pi0_four[{i}]/rewards_four[{i}]", pi0, r)
        require(self.band < 1, "band must be < 1 (the central fraction of seeds shaded)")
        for q in self.expansion_p2:
            a1 = self.pi0[0] * (1 - q) / (1 - self.pi0[1])
            require(q < a1, f"expansion_p2 has {q}: with pi0 rescaled, pi(a1) = {a1:.3g} is "
                    "not above it, so a2 would start expanded")
        for i, r in enumerate([*self.law_rewards, *self.fresh_rewards]):
            require(r[0] < r[1] and r[2] < r[0], f"law_rewards/fresh_rewards[{i}]={r}: the law "
                    "needs r(a3) < r(a1) < r(a2)")
        return self


# --- what every run shares ---------------------------------------------------------------------

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


# --- Algorithm 1 and Figure 1 ------------------------------------------------------------------

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


# --- the relative negatives (Section 3.2) ------------------------------------------------------

def main_run(P: Params, cache: Path | None = None) -> toy.Summary:
    """The chapter's main setting (``pi0``, ``rewards``, ``G``)."""
    return toy.summarise(z0=toy.logits(P.pi0), r=P.rewards, G=P.G, **common(P, cache))


def negative_shares(main: toy.Summary) -> np.ndarray:
    """Each action's share of the relative negatives in windows of ``SHARE_WINDOW`` steps,
    pooled over seeds, for the first setting of ``main``: (steps, K)."""
    return toy.negative_share(main, SHARE_WINDOW)[:, 0]


# --- the mean of trajectories against Theorem 1 iterated ---------------------------------------

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


# --- Figure 5: the group size ------------------------------------------------------------------

def group_size_runs(P: Params, cache: Path | None = None) -> dict[int, toy.Summary]:
    """Figure 5: the main setting at each group size of ``G_sweep``."""
    return {g: toy.summarise(z0=toy.logits(P.pi0), r=P.rewards, G=g, **common(P, cache))
            for g in P.G_sweep}


# --- Figure 6: the temperature -----------------------------------------------------------------

def temperature_runs(P: Params, cache: Path | None = None) -> toy.Summary:
    """Figure 6: the main setting at each temperature of ``tau_sweep`` (logits start at
    log pi0 for every temperature)."""
    return toy.summarise(z0=toy.logits(P.pi0), r=P.rewards, G=P.G,
                         **dict(common(P, cache), tau=P.tau_sweep))


# --- Figure 7: four actions --------------------------------------------------------------------

def four_action_runs(P: Params, cache: Path | None = None) -> toy.Summary:
    """Figure 7: the four-action settings (``pi0_four`` with ``rewards_four``)."""
    return toy.summarise(z0=toy.logits(P.pi0_four), r=P.rewards_four, G=P.G, **common(P, cache))


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


# --- beyond the paper: the negative-only update ------------------------------------------------

def negative_only_runs(P: Params, cache: Path | None = None) -> dict[str, toy.Summary]:
    """``optimizer_runs`` with the negative-only update of Appendix B.5."""
    return optimizer_runs(P, cache, negative_only=True)


REINFORCE = {"NSR": 0.0, "W-REINFORCE": 0.1}
"""Negative sample reinforcement and its weighted form (Zhu et al. 2025): the reward mu of a
right sample in the REINFORCE-style advantage mu r - (1 - r) (``toy.group_gradient``)."""


def reinforce_runs(P: Params, cache: Path | None = None) -> dict[str, dict[str, toy.Summary]]:
    """``two_settings`` under each optimizer with NSR's and W-REINFORCE's updates: rule ->
    optimizer -> its runs."""
    return {rule: {name: toy.summarise(z0=toy.logits(two_settings(P)), r=P.rewards, G=P.G,
                                       reinforce=mu, **dict(common(P, cache), **kw))
                   for name, kw in toy.optimizers(P.lr, P.sgd_lr).items()}
            for rule, mu in REINFORCE.items()}


# --- beyond the paper: the phase diagram of the time to expansion ------------------------------

def expansion_grids(P: Params, cache: Path | None = None) -> dict[str, toy.ExpansionGrid]:
    """The phase diagram's runs: times to expansion over ``expansion_G`` x ``expansion_p2``,
    standard and negative-only."""
    return {rule: toy.expansion_grid(pi0=P.pi0, r=P.rewards, p2=P.expansion_p2,
                                     G=P.expansion_G, steps=P.expansion_steps,
                                     seeds=P.expansion_seeds, seed=P.seed, lr=P.lr, tau=P.tau,
                                     optimizer=P.optimizer, negative_only=neg, cache=cache)
            for rule, neg in (("standard", False), ("negative-only", True))}


def transition_law(P: Params) -> tuple[float, pd.DataFrame, pd.DataFrame]:
    """The transition law (``law``) under SGD: kappa fitted on the ``law_*`` grid (from
    ``pi0`` at ``sgd_lr``), and the law beside the mean field on that grid and at the
    ``fresh_*`` points (other splits of pi0, rewards, group sizes and learning rate)."""
    fit = law.grid(P.law_p2, P.law_rewards, P.law_G, P.pi0, P.sgd_lr, P.tau, P.law_steps)
    kappa = law.fit_kappa(fit["mean field"].to_numpy(), fit["scale"].to_numpy())
    fresh = law.grid(P.fresh_p2, P.fresh_rewards, P.fresh_G, P.fresh_pi0, P.fresh_lr, P.tau,
                     P.law_steps)
    return kappa, law.check(fit, kappa), law.check(fresh, kappa)


def adam_law(P: Params, grids: dict[str, toy.ExpansionGrid]) -> pd.DataFrame | None:
    """The phase diagram's runs (standard update) beside ``law.adam_moments`` and Adam's mean
    field, cell by cell; None where the chapter's optimizer is not Adam."""
    if P.optimizer != "adam":
        return None
    g = grids["standard"]
    return law.adam_table(P.pi0, P.rewards, P.lr, P.expansion_G, P.expansion_p2,
                          np.median(g.t_seed, -1), g.t_field)


# --- the claim for the closing chapter: Section 3.2's two stages, checked over seeds -----------

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


def claim_rows(per_seed: dict[str, np.ndarray], ours: str) -> list[dict[str, Any]]:
    """The claim ``toy_two_stages`` (Section 3.2, Figure 1) as rows for ``verdicts.record``:
    exploitation, exploration and the shift of the relative negative from a3 to a1, each a
    ``check`` over seeds (``per_seed``: ``stages``' output); ``ours``: what the closing chapter
    shows of it (``sentences.ours``)."""
    checks = [check("peak π(a1) after step 0 - π0(a1)", per_seed["exploitation"], 0.0,
                    EXPLOITATION_MARGIN),
              check("π(a2) - π(a1) at the last step", per_seed["exploration"], 0.0,
                    EXPLORATION_MARGIN),
              check(f"a3's share of the negatives, first {EARLY_STEPS} steps",
                    per_seed["early_worst"], NEGATIVE_SHARE_MIN, NEGATIVE_SHARE_MARGIN),
              check(f"a1's share of the negatives, last {LATE_STEPS} steps",
                    per_seed["late_exploited"], NEGATIVE_SHARE_MIN, NEGATIVE_SHARE_MARGIN)]
    return [{"claim": "toy_two_stages", "ours": ours, "checks": checks}]

