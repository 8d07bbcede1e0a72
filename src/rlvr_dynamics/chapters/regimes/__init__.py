"""The regimes chapter (``notebooks/regimes.md``): where RLVR shrinks the language model's
boundary, where it expands it, and when -- the toy's phase diagram asked of the LM.

A *regime* is a base and a training mix: the base's prior on the rare (stepwise) path, set by
the dial of ``path_prior`` (None: as pretrained), and the share of training problems beyond the
direct path (``training.data.mix``; None: the train split as drawn). Each regime is trained
with each algorithm over seeds, with the training chapter's settings and the boundary probed
from the policy's probabilities along training (``training.probe``). From the probes:

* the paths' probability masses over steps (the LM's analogue of the toy's pi(a1), pi(a2));
* Pass@k over steps for any k (exact: 1 - (1 - p)^k per problem), on all problems and on the
  problems beyond the direct path (rare-path-only: only the stepwise path can solve them);
* the **time to expansion**: the first probed step at which the stepwise path carries more
  mass than the direct one (the toy's pi(a2) > pi(a1)), per seed; inf if never;
* the **shrinkage depth**: the lowest Pass@k on the rare-path-only problems over the probes
  after the start, minus the base's (negative: the boundary shrank there), per seed;
* the **toy's prediction** for the same pi0(a2), rewards and G (``toy_inputs``): its time to
  expansion and the depth of its own dip of pi(a2), from ``toy`` with the toy chapter's
  optimizer and learning rate. Its steps are not the LM's (other learning rates, other
  parameterisations): what is compared is the ordering across regimes.

A run that has not expanded by its last step is *stalled* when its stepwise mass at the end is
no higher than at the middle of the run (``stalled``), otherwise *still rising* (undecided).

This module holds the chapter's parameters and obtains its runs and bases; its computations
sit one idea to a module and are importable from here: ``tables`` (the probes as tables),
``stages`` (the two stages in numbers and the claims per regime), ``toy_mapping`` (the toy
beside each regime). Its figures are in ``figures``, its words in ``sentences``.
"""
from __future__ import annotations

import dataclasses
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, model_validator

from rlvr_dynamics.chapters import Int, ListOf, NeedsParams, Real, needed, require
from rlvr_dynamics.chapters.regimes.stages import (ENTROPY_MARGIN, SHRINK_MARGIN, entropy_above,
                                                   final_entropy, keeps_boundary, shrinkage,
                                                   stage_check, stage_effects, stages, stalled,
                                                   summary, time_to_expansion, two_stages)
from rlvr_dynamics.chapters.regimes.tables import (hard_problems, measured, per_run, probes,
                                                   with_passk)
from rlvr_dynamics.chapters.regimes.toy_mapping import (OWN, TOY_SAME, order, order_agreement,
                                                        orderings, toy_inputs, toy_prediction,
                                                        toy_predictions, toy_settings, toy_side)
from rlvr_dynamics.chapters.reproduction.paths import PATHS
from rlvr_dynamics.path_prior import Prior, Refit, dial_check, refit
from rlvr_dynamics.pretrain import base_model
from rlvr_dynamics.training.algorithms import ALGORITHMS
from rlvr_dynamics.training.config import TrainConfig
from rlvr_dynamics.training.run import load_dynamics, obtain_all


class Regime(BaseModel):
    """A base (its path prior refitted, or None: as pretrained; pretrained from seed
    ``base_seed``, or None: the base-model chapter's seed) and a training mix (the share of
    problems beyond the direct path, or None: as drawn)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    prior: Prior | None = None
    hard_share: Real(0, 1) | None = None
    base_seed: Int(0) | None = None

    def base(self, T: Any):
        """The ``PretrainConfig`` this regime's runs start from (``T``: the training chapter's
        parameters)."""
        cfg = T.base()
        return cfg if self.base_seed is None else dataclasses.replace(cfg, seed=self.base_seed)


class Params(NeedsParams):
    """The ``regimes`` (name -> prior and mix), trained with ``algorithms`` x ``seeds`` for
    ``steps`` generation steps with the training chapter's other settings, the boundary probed
    every ``probe_every`` steps on ``probe_problems`` problems per split; the boundary read at
    k = ``k`` (Pass@k shown at ``ks``); the toy's prediction from ``toy_seeds`` runs of
    ``toy_steps`` steps; ``workers`` runs side by side."""

    needs = ("training", "toy_dynamics")

    regimes: dict[str, Regime] = {"as pretrained": {}, "prior 0.01": {"prior": 0.01},
                                  "prior 0.002": {"prior": 0.002}}
    algorithms: ListOf(str) = ["grpo", "grpo_n"]
    seeds: ListOf(Int(0)) = [0, 1, 2]
    steps: Int(1) = 100
    probe_every: Int(1) = 10
    probe_problems: Int(1) = 20
    k: Int(1) = 256
    ks: ListOf(Int(1)) = [1, 16, 256, 4096]
    toy_seeds: Int(1) = 1000
    toy_steps: Int(1) = 2000
    workers: Int(1) = 2

    @model_validator(mode="after")
    def _cross(self):
        require(len(self.regimes) >= 1, "regimes must name at least one regime")
        for name in self.algorithms:
            require(name in ALGORITHMS, f"algorithms has {name!r}; valid: {sorted(ALGORITHMS)}")
        require(self.k in self.ks, f"ks must hold k={self.k}, got {self.ks}")
        require(self.probe_every <= self.steps, f"probe_every={self.probe_every} must be <= "
                                                f"steps={self.steps}")
        if "training" in self.upstream or self.profile == "cpu":
            self.runs()  # every run must make a valid TrainConfig (where the settings are known)
        return self

    def runs(self) -> dict[tuple[str, str, int], TrainConfig]:
        """(regime, algorithm, seed) -> its run: the training chapter's settings with this
        chapter's steps, knobs and probes."""
        T = needed(self, "training")
        require(T.model == "sums-base", "the regimes are dials of the sums base: the training "
                                        f"chapter's model must be 'sums-base', got {T.model!r}")
        return {(name, a, s): T.run_config(a, s).replace(
                    model=r.base(T), steps=self.steps, path_prior=r.prior,
                    hard_share=r.hard_share, probe_every=self.probe_every,
                    probe_problems=self.probe_problems)
                for name, r in self.regimes.items() for a in self.algorithms for s in self.seeds}


def train_all(P: Params) -> dict[tuple[str, str, int], list[dict]]:
    """Every run of ``P`` (trained where missing, ``P.workers`` at a time): its dynamics."""
    runs = P.runs()
    T = needed(P, "training")
    folders = obtain_all(list(runs.values()), P.profile, inline=T.train_inline,
                         workers=P.workers)
    return {key: load_dynamics(f) for key, f in zip(runs, folders)}


def dial(P: Params, problems: int = 100) -> pd.DataFrame:
    """Every regime's base measured exactly on the first ``problems`` test problems
    (``path_prior.dial_check``): the pretrained base, or that base refitted to the regime's
    prior (made where missing)."""
    T = needed(P, "training")
    cfg = T.base()
    bases = {name: base_model(r.base(T), P.profile) if r.prior is None
             else refit(r.base(T), Refit(r.prior), P.profile) for name, r in P.regimes.items()}
    terms = [p.meta["terms"] for p in cfg.task.problems("test")[:problems]]
    return dial_check(bases, terms, cfg)
