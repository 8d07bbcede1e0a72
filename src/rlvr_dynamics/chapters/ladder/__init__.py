"""The ladder chapter (``notebooks/ladder.md``): where the toy's first stage goes inside the
network. Each rung between the tabular toy and the full model adds one thing the toy leaves
out, its prediction registered with the toy's before its runs (``regimes.toy_rungs``,
``regimes.ladder``):

* R0, the tabular toy as registered; R1, the same toy on the model's schedule;
* R2, the base's body frozen and an untied first-character readout trained by the loss on the
  first completion character alone; R3, the full model trained on the first character alone;
* R4, the full model as built (the arms' runs, as the scenario chapter trains them);
* R5, the full model as built on a base whose paths begin with tokens no other path writes,
  its embeddings untied, refitted to the arm's habits.

Every arm's GRPO also runs on the groups that hold no stepwise sample alone (``WITHOUT``). Here:
the chapter's parameters (``Params``: a ``regimes.grid.Grid`` of arms, the model's rungs that
run, their priors), the ways its runs are trained (``Params.variant``), registering and
training every way in one pool (``register``, ``train_ways``), and the ladder read
(``climb``: a ``Ladder``). Its decisions (each rung's first stage, the slope's mechanism,
whether R5 shows both stages) are the library's (``regimes.ladder``).
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable

import pandas as pd
from pydantic import model_validator

from rlvr_dynamics.chapters import ChapterParams, Int, ListOf, require
from rlvr_dynamics.path_prior import Prior
from rlvr_dynamics.regimes.grid import (Grid, Key, Readings, Regime, Trained, readings,
                                        register_all, train, trained)
from rlvr_dynamics.regimes.ladder import (MODEL_RUNGS, log_trajectories, measured_slopes,
                                          rung_rows, rung_run, slope_checks, toy_dips)
from rlvr_dynamics.regimes.ladder import accounts, against_all  # noqa: F401 (the page's calls)
from rlvr_dynamics.regimes.prediction import checks
from rlvr_dynamics.regimes.probes import probes, with_passk
from rlvr_dynamics.regimes.stages import stages
from rlvr_dynamics.regimes.toy_rungs import AS_BUILT, WITHOUT
from rlvr_dynamics.rl.algorithms import ALGORITHMS
from rlvr_dynamics.rl.config import TrainConfig
from rlvr_dynamics.rl.registration import content_hash


class Params(ChapterParams, Grid):
    """The arms (``regimes``: each with a guess, the paper's scenario) of a
    ``regimes.grid.Grid``; the model's rungs other than the full model as built that run on
    each arm (``ladder``: R2, R3, R5 of ``regimes.ladder.MODEL_RUNGS``), a rung on a base of
    its own refitted to the P(stepwise) of ``rung_priors`` (rung -> arm -> prior; absent: the
    arm's) so that it starts where the arm does as measured (the dial's table); each arm's GRPO
    run again for ``without_stepwise_steps`` steps on the groups that hold no stepwise sample
    alone (0: not)."""

    regimes: dict[str, Regime] = {"three paths": {"prior": 0.01, "guess": 0.495}}
    ladder: ListOf(str, 0) = []
    rung_priors: dict[str, dict[str, Prior]] = {}
    without_stepwise_steps: Int(0) = 5

    @model_validator(mode="after")
    def _ladder(self):
        require(self.arms() == list(self.regimes),
                f"regimes {[r for r in self.regimes if r not in self.arms()]} have no guess: the "
                "ladder climbs from the paper's scenario, whose arms have three paths")
        for rung in self.ladder:
            require(rung in MODEL_RUNGS, f"ladder has {rung!r}; the model's rungs that run "
                                         f"beside the arms': {sorted(MODEL_RUNGS)}")
        for rung, priors in self.rung_priors.items():
            require(rung in self.ladder and all(arm in self.regimes for arm in priors),
                    f"rung_priors[{rung!r}]: a rung of ladder={self.ladder} and arms of "
                    f"{list(self.regimes)}, got {sorted(priors)}")
        for how in self.ways():  # every run must make a valid TrainConfig
            self.variant(how)
        return self

    def ways(self) -> list[str]:
        """The ways the arms' runs are trained: as built (R4), on the groups without a
        stepwise sample alone (where ``without_stepwise_steps``), and each rung of ``ladder``."""
        return [AS_BUILT, *([WITHOUT] if self.without_stepwise_steps else []), *self.ladder]

    def rung_prior(self, rung: str, arm: str) -> float:
        """The P(stepwise) that ``rung``'s base is refitted to in ``arm``: the arm's own, or
        ``rung_priors``' where a rung's base lands elsewhere under the arm's dial."""
        return self.rung_priors.get(rung, {}).get(arm, self.regimes[arm].prior)

    def rung_bases(self) -> dict[str, Callable[[str], float]]:
        """Each rung of ``ladder`` -> the P(stepwise) its base is refitted to per arm
        (``rung_prior``), as ``regimes.grid.dial`` measures them."""
        return {rung: functools.partial(self.rung_prior, rung) for rung in self.ladder}

    def rebase(self, how: str):
        """How ``how`` changes an arm's run as built (``regimes.grid.Rebase``), or None."""
        if how in MODEL_RUNGS:
            return lambda arm, cfg: rung_run(cfg, how, self.rung_prior(how, arm))
        return None

    def variant(self, how: str, registrations: dict[str, str] | None = None
                ) -> dict[Key, TrainConfig]:
        """The arms' runs trained ``how`` (``ways``): as built, the grid's (``Grid.runs``);
        ``WITHOUT``, each arm's GRPO runs for ``without_stepwise_steps`` steps on the groups
        that hold no stepwise sample alone, probed at their start and end; a rung of
        ``MODEL_RUNGS``, each arm's runs with its knobs and base."""
        runs = self.runs(registrations)
        if how == AS_BUILT:
            return runs
        if how in MODEL_RUNGS:
            return {key: self.rebase(how)(key[0], cfg) for key, cfg in runs.items()}
        require(how == WITHOUT, f"how={how!r}: one of {[AS_BUILT, WITHOUT, *MODEL_RUNGS]}")
        n = self.without_stepwise_steps
        return {key: cfg.replace(without_stepwise=True, steps=n, probe_every=n,
                                 probe_early_every=0, probe_early_until=0,
                                 stop_after_crossover=None)
                for key, cfg in runs.items() if n and key[1] == "grpo"}


def register(P: Params, how: str = AS_BUILT) -> dict[str, dict[str, Any]]:
    """Every arm's registered prediction for its runs trained ``how``
    (``regimes.grid.register_all``): R5's from its own base; R2's, R3's and the runs without
    stepwise groups start from the arm's base, so their registration is the arm's."""
    return register_all(P, P.profile, P.rebase(how))


def train_ways(P: Params) -> dict[str, Trained]:
    """Every way's runs (``Params.ways``), each arm's prediction of each way registered first,
    then trained where missing in one pool (``P.workers``, the longest first); way -> its runs."""
    runs = {}
    for how in P.ways():
        hashes = {arm: content_hash(record) for arm, record in register(P, how).items()}
        runs[how] = P.variant(how, hashes)
    everything = [cfg for way in runs.values() for cfg in way.values()]
    folders = iter(train(everything, P, P.profile))
    return {how: trained(way, [next(folders) for _ in way]) for how, way in runs.items()}


@dataclasses.dataclass(frozen=True)
class Ladder:
    """The ladder read: the arms' runs as built (``built``: ``regimes.grid.Readings``), every
    run's slope with its interval per arm, algorithm and way (``slopes``:
    ``regimes.ladder.slope_checks``), each arm's rungs (``rungs``: arm ->
    ``regimes.ladder.rung_rows``), the registration checks of every way's runs
    (``registration``: "arm (way)" -> ``regimes.prediction.checks``), every run's log-ratio
    changes over its first updates (``trajectories``) and the registration that judges each
    arm's runs of each way (``judged``: (arm, way) -> its record)."""

    built: Readings
    slopes: pd.DataFrame
    rungs: dict[str, pd.DataFrame]
    registration: dict[str, dict[str, bool]]
    trajectories: pd.DataFrame
    judged: dict[tuple[str, str], dict[str, Any]]


def climb(P: Params, ways: dict[str, Trained]) -> Ladder:
    """The ladder from every way's runs (``train_ways``): each model rung's runs read like the
    arms' as built (``stages`` on the rare-only problems at each arm's mid-curve k; R4: the
    arms' as built), the slopes, each arm's rungs beside its registration (R0, R1, their dips
    over seeds run again from it: ``regimes.ladder.toy_dips``), and the registration checks."""
    built = readings(P, ways[AS_BUILT].dynamics)
    judged = {(arm, how): record for how in ways for arm, record in register(P, how).items()}
    keyed, measured = {}, {"R4": built.runs}
    for how, runs in ways.items():
        keyed |= {(r, ALGORITHMS[a].label, s, how): run for (r, a, s), run in runs.dynamics.items()}
        if how in MODEL_RUNGS:
            measured[how] = stages(with_passk(probes(runs.dynamics), [1]),
                                   P.hard(), built.ks)
    slopes = slope_checks(measured_slopes(keyed, P.probe_problems))
    rungs = {arm: rung_rows(judged[arm, AS_BUILT], measured, slopes, arm,
                            toy_dips(judged[arm, AS_BUILT])) for arm in P.regimes}
    registration = {f"{arm} ({how})": checks({arm: judged[arm, how]},
                                             {k: v for k, v in runs.dynamics.items()
                                              if k[0] == arm},
                                             {arm: runs.folders[arm]})[arm]
                    for how, runs in ways.items() for arm in runs.folders}
    return Ladder(built, slopes, rungs, registration,
                  log_trajectories(keyed, P.probe_problems), judged)
