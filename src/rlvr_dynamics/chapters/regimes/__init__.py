"""The regimes chapter (``notebooks/regimes.md``): the paper's scenario inside the language
model -- three paths competing at one decision -- and where RLVR shrinks the boundary, where
it expands it, and when: the toy's phase diagram asked of the LM.

A *regime* is a base and a training mix: the base's habits at its first completion character,
set by the dial of ``path_prior`` (its P(stepwise) ``prior`` and P(guess) ``guess``; None: as
pretrained), and the share of training problems beyond the direct path (``rl.data.mix``;
None: the train split as drawn). An *arm* of the paper's scenario is a regime with a guess
habit; its *control* (``Params.controls``) the same base without it (``scenario``). Each regime
is trained with each algorithm over seeds, with the training chapter's settings and the
boundary probed from the policy's probabilities along training (``rl.probe``), densely
at first, until the crossover or the last step. Before any run of a regime starts, the toy's
prediction for its base is registered (``prediction``). From the probes:

* the paths' probability masses over steps (the LM's analogue of the toy's pi(a1), pi(a2),
  pi(a3));
* Pass@k over steps for any k (exact: 1 - (1 - p)^k per problem), on all problems and on the
  problems beyond the direct path (rare-path-only: only the stepwise path can solve them),
  read at the k where the base sits mid-curve;
* the **crossover**: the first probed step at which the stepwise path carries more mass than
  the direct one (the toy's pi(a2) > pi(a1)), per seed; inf if never;
* the **fall** of P(stepwise) and the **depth** of Pass@k on the rare-path-only problems, each
  at the step the other seeds choose, and the **gain** at the end, split into path choice and
  reliability (``stages``).

A run that has not crossed over by its last step is *stalled* when its stepwise mass at the end
is no higher than at the middle of the run (``stalled``), otherwise *still rising*.

This module holds the chapter's parameters and obtains its predictions, runs and bases; its
computations sit one idea to a module and are importable from here: ``probes`` (the probes
read as tables), ``stages`` (the two stages in numbers and the claims per regime), ``toy_mapping``
(the toy beside each regime), ``prediction`` (the toy's registered predictions), ``scenario``
(the arm against its control, and the rules that decide), ``crossover`` (each cell's crossover
against its registration; two algorithms against each other), ``toy_rungs`` (the ladder's
registered toy rungs and the slope that tells the mechanisms apart) and ``ladder`` (the rungs
from the tabular toy to the full model, read). Its figures are in ``figures``, its tables for
people in ``shown``, its words in ``sentences``.
"""
from __future__ import annotations

import dataclasses
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, model_validator

from rlvr_dynamics.chapters import Int, ListOf, NeedsParams, Real, needed, require
from rlvr_dynamics.chapters.regimes.crossover import (AGREE_FACTOR, SAME_FACTOR, comparisons,
                                                      contrasts,
                                                      prediction_checks, registered_pairs)
from rlvr_dynamics.chapters.regimes.ladder import (MODEL_RUNGS, accounts, against_accounts,
                                                   against_all, log_trajectories,
                                                   measured_slopes, rung_base, rung_rows,
                                                   rung_run, slope_checks, turns)
from rlvr_dynamics.chapters.regimes.toy_rungs import AS_BUILT, WITHOUT
from rlvr_dynamics.chapters.regimes.prediction import checks, register, starts_from
from rlvr_dynamics.chapters.regimes.scenario import (FALL_MARGIN, MATCH_FACTOR, RISE_MARGIN,
                                                     large_k, matched, stage2, verdict)
from rlvr_dynamics.chapters.regimes.stages import (ENTROPY_MARGIN, SHRINK_MARGIN,
                                                   base_rows, decompose, entropy_above,
                                                   final_entropy, informs, keeps_boundary,
                                                   mid_curve, predicted_vs_measured,
                                                   relative_stepwise, stage_check,
                                                   stage_effects, stages, stalled, summary,
                                                   time_to_crossover, two_stages)
from rlvr_dynamics.chapters.regimes.probes import (hard_problems, measured, per_run, probes,
                                                   train_share, with_passk)
from rlvr_dynamics.chapters.regimes.toy_mapping import (OWN, TOY_SAME, order, order_agreement,
                                                        orderings, toy_inputs, toy_prediction,
                                                        toy_laws, toy_predictions, toy_settings,
                                                        toy_side, toy_update)
from rlvr_dynamics.path_prior import Prior, Refit, dial_check, refit, refit_all
from rlvr_dynamics.rl.registration import content_hash
from rlvr_dynamics.pretrain import base_model
from rlvr_dynamics.rl.algorithms import ALGORITHMS
from rlvr_dynamics.rl.config import TrainConfig
from rlvr_dynamics.rl.runs import load_dynamics, obtain_all


class Regime(BaseModel):
    """A base (its P(stepwise) ``prior`` and P(guess) ``guess`` refitted, or None: as
    pretrained, no guess; pretrained from seed ``base_seed``, or None: the base-model
    chapter's seed), a training mix (the share of problems beyond the direct path, or None:
    as drawn), the group size ``G`` (None: the training chapter's; the rollouts per step
    stay the training chapter's, so a larger group is fewer prompts) and the ``algorithms``
    trained on it (None: the chapter's)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    prior: Prior | None = None
    guess: Prior | None = None
    hard_share: Real(0, 1) | None = None
    base_seed: Int(0) | None = None
    G: Int(2) | None = None
    algorithms: ListOf(str) | None = None

    @model_validator(mode="after")
    def _habits(self):
        if self.guess is not None:
            require(self.prior is not None and self.prior + self.guess < 1,
                    f"a regime's guess={self.guess} needs a prior, and prior + guess < 1 "
                    f"(the direct path keeps some mass), got prior={self.prior}")
        return self

    def base(self, T: Any):
        """The ``PretrainConfig`` this regime's runs start from (``T``: the training chapter's
        parameters)."""
        cfg = T.base()
        return cfg if self.base_seed is None else dataclasses.replace(cfg, seed=self.base_seed)


class Params(NeedsParams):
    """The ``regimes`` (name -> habits and mix) and the ``controls`` of the paper's scenario (arm ->
    its control: the same regime without the guess), trained with ``algorithms`` x ``seeds`` for
    at most ``steps`` generation steps with the training chapter's other settings but its
    held-out evaluation (this chapter reads the probes alone: ``eval_every`` 0), each run ending
    ``stop_after_crossover`` steps after its crossover (None: never early); the boundary probed
    every ``probe_every`` steps (every ``probe_early_every`` up to step ``probe_early_until``)
    on ``probe_problems`` problems of the test split and ``probe_hard`` more test problems
    beyond the direct path, under the full distribution (and the paper's evaluation setting if
    ``probe_paper``); Pass@k shown at k = ``k`` and ``ks`` (the claims read it where each base
    sits mid-curve); the toy's prediction from ``toy_seeds`` runs of ``toy_steps`` steps; each
    arm's GRPO runs again for ``without_stepwise_steps`` steps on the groups that hold no
    stepwise sample alone (``ladder``; 0: not); the model's rungs of the ladder other than the
    full model as built that run on each arm (``ladder``: R2, R3, R5 of ``ladder.MODEL_RUNGS``),
    a rung on a base of its own refitted to the P(stepwise) of ``rung_priors`` (rung -> arm ->
    prior; absent: the arm's) so that it starts where the arm does as measured (the dial's
    table); ``workers`` runs side by side."""

    needs = ("training", "toy_dynamics")

    regimes: dict[str, Regime] = {"three paths": {"prior": 0.01, "guess": 0.495},
                                  "two paths": {"prior": 0.01}}
    controls: dict[str, str] = {"three paths": "two paths"}
    contrasts: ListOf(ListOf(str, 2), 0) = []
    algorithms: ListOf(str) = ["grpo", "grpo_n"]
    seeds: ListOf(Int(0)) = [0, 1, 2, 3]
    steps: Int(1) = 120
    stop_after_crossover: Int(0) | None = 20
    probe_every: Int(1) = 20
    probe_early_every: Int(0) = 5
    probe_early_until: Int(0) = 60
    probe_problems: Int(1) = 20
    probe_hard: Int(0) = 20
    probe_paper: bool = False
    k: Int(1) = 256
    ks: ListOf(Int(1)) = [1, 16, 256, 4096]
    toy_seeds: Int(1) = 1000
    toy_steps: Int(1) = 2000
    without_stepwise_steps: Int(0) = 5
    ladder: ListOf(str, 0) = []
    rung_priors: dict[str, dict[str, Prior]] = {}
    workers: Int(1) = 2

    @model_validator(mode="after")
    def _cross(self):
        require(len(self.regimes) >= 1, "regimes must name at least one regime")
        for name in self.algorithms:
            require(name in ALGORITHMS, f"algorithms has {name!r}; valid: {sorted(ALGORITHMS)}")
        for regime, r in self.regimes.items():
            for name in r.algorithms or ():
                require(name in ALGORITHMS, f"regimes[{regime!r}].algorithms has {name!r}; "
                                            f"valid: {sorted(ALGORITHMS)}")
        require(self.k in self.ks, f"ks must hold k={self.k}, got {self.ks}")
        for rung, priors in self.rung_priors.items():
            require(rung in self.ladder and all(arm in self.three() for arm in priors),
                    f"rung_priors[{rung!r}]: a rung of ladder={self.ladder} and arms of "
                    f"{self.three()}, got {sorted(priors)}")
        for rung in self.ladder:
            require(rung in MODEL_RUNGS, f"ladder has {rung!r}; the model's rungs that run "
                                         f"beside the chapter's: {sorted(MODEL_RUNGS)}")
        require(self.probe_every <= self.steps, f"probe_every={self.probe_every} must be <= "
                                                f"steps={self.steps}")
        for pair in self.contrasts:
            require(len(pair) == 2 and all(r in self.regimes for r in pair),
                    f"contrasts has {pair!r}: each must be two regimes of {list(self.regimes)}")
        for arm, control in self.controls.items():
            require(arm in self.regimes and control in self.regimes,
                    f"controls[{arm!r}]={control!r}: both must be regimes; regimes: "
                    f"{list(self.regimes)}")
            a, c = self.regimes[arm], self.regimes[control]
            require(a.guess is not None and c.guess is None
                    and a.model_dump(exclude={"guess"}) == c.model_dump(exclude={"guess"}),
                    f"controls[{arm!r}]={control!r}: the control must be the arm's regime "
                    f"without its guess, got {a} and {c}")
        if "training" in self.upstream or self.profile == "cpu":
            self.runs()  # every run must make a valid TrainConfig (where the settings are known)
        return self

    def runs(self, registrations: dict[str, str] | None = None
             ) -> dict[tuple[str, str, int], TrainConfig]:
        """(regime, algorithm, seed) -> its run: the training chapter's settings with this
        chapter's steps, knobs and probes, each run recording its regime's registration
        (``registrations``: regime -> content hash; None: none)."""
        T = needed(self, "training")
        require(T.model == "sums-base", "the regimes are dials of the sums base: the training "
                                        f"chapter's model must be 'sums-base', got {T.model!r}")
        out = {}
        for name, r in self.regimes.items():
            for a in self.trained(name):
                for s in self.seeds:
                    try:
                        out[name, a, s] = T.run_config(a, s).replace(
                            model=r.base(T), steps=self.steps, eval_every=0,
                            path_prior=r.prior,
                            path_guess=r.guess, num_generations=r.G or T.num_generations,
                            hard_share=r.hard_share, probe_every=self.probe_every,
                            probe_problems=self.probe_problems, probe_hard=self.probe_hard,
                            probe_early_every=self.probe_early_every,
                            probe_early_until=self.probe_early_until,
                            probe_paper=self.probe_paper,
                            stop_after_crossover=self.stop_after_crossover,
                            registration=(registrations or {}).get(name))
                    except ValueError as e:
                        require(False, f"regimes[{name!r}]: {e}")
        return out

    def variant(self, how: str, registrations: dict[str, str] | None = None
                ) -> dict[tuple[str, str, int], TrainConfig]:
        """The runs trained ``how``: ``toy_rungs.AS_BUILT``, the chapter's (``runs``);
        ``toy_rungs.WITHOUT``, each arm's GRPO runs for ``without_stepwise_steps`` steps on the
        groups that hold no stepwise sample alone, probed at their start and end (none where
        that is 0); a rung of ``ladder.MODEL_RUNGS``, each arm's runs with its knobs."""
        runs = self.runs(registrations)
        if how == AS_BUILT:
            return runs
        arms = {key: cfg for key, cfg in runs.items() if key[0] in self.three()}
        if how in MODEL_RUNGS:
            return {key: rung_run(cfg, how, self.rung_prior(how, key[0]))
                    for key, cfg in arms.items()}
        require(how == WITHOUT, f"how={how!r}: one of {[AS_BUILT, WITHOUT, *MODEL_RUNGS]}")
        n = self.without_stepwise_steps
        return {key: cfg.replace(without_stepwise=True, steps=n, probe_every=n,
                                 probe_early_every=0, probe_early_until=0,
                                 stop_after_crossover=None)
                for key, cfg in arms.items() if n and key[1] == "grpo"}

    def rung_prior(self, rung: str, arm: str) -> float:
        """The P(stepwise) that ``rung``'s base is refitted to in ``arm``: the arm's own, or
        ``rung_priors``' where a rung's base lands elsewhere under the arm's dial."""
        return self.rung_priors.get(rung, {}).get(arm, self.regimes[arm].prior)

    def three(self) -> list[str]:
        """The regimes with three paths at the first character (a guess beside the direct
        and the stepwise path: the paper's scenario); the others have two."""
        return [name for name, r in self.regimes.items() if r.guess is not None]

    def trained(self, regime: str) -> list[str]:
        """The algorithms trained on ``regime``: its own, or the chapter's."""
        return self.regimes[regime].algorithms or self.algorithms


def register_all(P: Params, how: str = AS_BUILT) -> dict[str, dict[str, Any]]:
    """Every regime's registered prediction (``prediction.register``, made where missing):
    the toy from its base, under the toy chapter's settings; for the runs of a model's rung
    (``how`` in ``ladder.MODEL_RUNGS``), each arm's from the base that rung starts from
    (``ladder.rung_run``: R5's own, refitted; R2's and R3's are the arm's, so their
    registration is the arm's)."""
    runs, D = P.runs(), needed(P, "toy_dynamics")
    out = {}
    for name, regime in P.regimes.items():
        cfg = runs[name, P.trained(name)[0], P.seeds[0]]
        if how in MODEL_RUNGS and name in P.three():
            cfg = rung_run(cfg, how, P.rung_prior(how, name))
        share = train_share(cfg.model.task, cfg.model.author, regime.hard_share)
        out[name] = register(cfg, share, D, P.toy_steps, P.toy_seeds, P.profile,
                             [ALGORITHMS[a].label for a in P.trained(name)])
    return out


def train_every(P: Params) -> None:
    """The runs of every way the chapter trains (``AS_BUILT``, ``WITHOUT``, the rungs of
    ``P.ladder``) trained where missing in one pool of ``P.workers``, each regime's prediction
    of each way registered first (``register_all``). The longest go first (``longest_first``),
    so that no worker waits at the end of one way's runs for the other's last one."""
    runs = []
    for how in (AS_BUILT, WITHOUT, *P.ladder):
        hashes = {name: content_hash(record) for name, record in register_all(P, how).items()}
        runs += P.variant(how, hashes).values()
    obtain_all(longest_first(runs), P.profile, inline=needed(P, "training").train_inline,
               workers=P.workers)


def longest_first(runs: list[TrainConfig]) -> list[TrainConfig]:
    """``runs`` by their expected cost, the longest first: more steps; then the whole loss
    before the first character's (``first_character_only``: passes over the prompt and one
    token); then GRPO before the others, which cross sooner and stop sooner after it."""
    return sorted(runs, key=lambda c: (-c.steps, c.first_character_only, c.algorithm != "grpo"))


def train_all(P: Params, how: str = AS_BUILT
              ) -> tuple[dict[tuple[str, str, int], list[dict]], dict[str, list]]:
    """Every run of ``P`` trained ``how`` (``Params.variant``; trained where missing,
    ``P.workers`` at a time), each regime's prediction registered first (``register_all``) and
    recorded by its runs as they begin: (key -> its dynamics, regime -> its run folders)."""
    hashes = {name: content_hash(record) for name, record in register_all(P, how).items()}
    runs = P.variant(how, hashes)
    T = needed(P, "training")
    folders = obtain_all(list(runs.values()), P.profile, inline=T.train_inline,
                         workers=P.workers)
    by_regime: dict[str, list] = {}
    for (name, _, _), f in zip(runs, folders):
        by_regime.setdefault(name, []).append(f)
    return {key: load_dynamics(f) for key, f in zip(runs, folders)}, by_regime


def ladder_all(P: Params, dynamics: dict[tuple[str, str, int], list[dict]],
               runs: pd.DataFrame, registered: dict[str, dict[str, Any]],
               hard: dict[str, Any], ks: dict[str, int]
               ) -> tuple[pd.DataFrame, dict[str, pd.DataFrame], dict[str, dict[str, bool]],
                          pd.DataFrame, dict[tuple[str, str], dict[str, Any]]]:
    """The ladder (``ladder``) for every arm: the runs without stepwise groups and those of the
    model's rungs of ``P.ladder`` trained where missing (``train_all``), each rung's runs read
    like the chapter's (``stages`` on the rare-only problems ``hard`` at each regime's
    mid-curve k, ``ks``; R4: ``runs``, the chapter's own, ``dynamics``), the slope of every
    arm's run (the statistic reads the guess) with its interval per regime, algorithm and how
    it was trained (``ladder.slope_checks``), each arm's rungs (``ladder.rung_rows``;
    ``registered``: ``register_all``'s records), the registration checks of the runs
    trained here (``prediction.checks``, per arm and way of training: "arm (R5)"), every
    arm's run's log-ratio changes over its first updates (``ladder.log_trajectories``) and the
    registration that judges each arm's runs trained each way ((arm, how) -> its record:
    ``register_all(P, how)``'s, R5's from its own base)."""
    keyed = {(r, ALGORITHMS[a].label, s, AS_BUILT): run for (r, a, s), run in dynamics.items()
             if r in P.three()}
    measured, folders = {"R4": runs}, {}
    judged = {(arm, AS_BUILT): registered[arm] for arm in P.three()}
    for how in (WITHOUT, *P.ladder):
        trained, where = train_all(P, how)
        keyed |= {(r, ALGORITHMS[a].label, s, how): run for (r, a, s), run in trained.items()}
        judged |= {(arm, how): record for arm, record in register_all(P, how).items()
                   if arm in where}
        for regime, f in where.items():
            folders[regime, how] = f
        if how in MODEL_RUNGS and trained:
            measured[how] = stages(with_passk(probes(trained), [1]), hard, ks)
    slopes = slope_checks(measured_slopes(keyed, P.probe_problems))
    rungs = {arm: rung_rows(registered[arm], measured, slopes, arm) for arm in P.three()}
    name = {(regime, how): f"{regime} ({how})" for regime, how in folders}
    trained_here = {(name[r, how], label, s): run for (r, label, s, how), run in keyed.items()
                    if (r, how) in name}
    return (slopes, rungs,
            checks({name[key]: judged[key] for key in folders}, trained_here,
                   {name[key]: f for key, f in folders.items()}),
            log_trajectories(keyed, P.probe_problems), judged)


def dial(P: Params, problems: int = 100) -> pd.DataFrame:
    """Every regime's base measured exactly on the first ``problems`` test problems
    (``path_prior.dial_check``): the pretrained base, or that base refitted to the regime's
    prior (made where missing, ``P.workers`` refits at a time); and where the ladder runs a rung
    on a base of its own (``ladder.rung_base``: R5), each arm's base of that rung, refitted to
    the arm's habits."""
    T = needed(P, "training")
    cfg = T.base()
    made = {name: (r.base(T), None if r.prior is None else Refit(r.prior, r.guess or 0.0))
            for name, r in P.regimes.items()}
    for rung in P.ladder:
        for name in P.three():
            r = P.regimes[name]
            if (base := rung_base(r.base(T), rung)) != r.base(T):
                made[f"{name}, {rung}"] = (base, Refit(P.rung_prior(rung, name), r.guess))
    refit_all([m for m in made.values() if m[1] is not None], P.profile, P.workers)
    bases = {name: base_model(base, P.profile) if how is None else refit(base, how, P.profile)
             for name, (base, how) in made.items()}
    terms = [p.meta["terms"] for p in cfg.task.problems("test")[:problems]]
    return dial_check(bases, terms, cfg)
