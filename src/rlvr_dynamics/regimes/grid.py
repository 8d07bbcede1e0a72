"""The regimes and the grid of runs they make: each regime trained with each algorithm over
seeds, with the training chapter's settings and this grid's steps, knobs and probes.

``Regime`` is one base and training mix; ``Grid`` the parameters every chapter of the scenario
declares (the regimes, algorithms, seeds, steps, probes and the toy's prediction settings), with
``Grid.runs`` the runs they make. ``register_all`` registers each regime's prediction before its
runs; ``train`` trains what is missing, in one pool, the longest first; ``dial`` measures every
base the grid starts from.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

import pandas as pd
from pydantic import BaseModel, ConfigDict, model_validator

from rlvr_dynamics import registry
from rlvr_dynamics.fields import Int, ListOf, Real, require
from rlvr_dynamics import path_prior
from rlvr_dynamics.path_prior import Prior, Refit
from rlvr_dynamics.regimes.ladder import rung_base
from rlvr_dynamics.regimes.prediction import checks, register
from rlvr_dynamics.regimes.probes import hard_problems, per_run, probes, train_share, with_passk
from rlvr_dynamics.regimes.stages import base_rows, informs, mid_curve, stages
from rlvr_dynamics.rl.algorithms import ALGORITHMS
from rlvr_dynamics.rl.config import TrainConfig
from rlvr_dynamics.rl.grid import Training
from rlvr_dynamics.rl.registration import content_hash
from rlvr_dynamics.rl.runs import load_dynamics, obtain_all
from rlvr_dynamics.toy import ToySettings

Key = tuple[str, str, int]
"""A run of the grid: (regime, algorithm, seed)."""


class Regime(BaseModel):
    """A base (its P(stepwise) ``prior`` and P(guess) ``guess`` refitted, or None: as
    pretrained, no guess; pretrained from seed ``base_seed``, or None: the base-model
    chapter's seed), a training mix (the share of problems beyond the direct path, or None:
    as drawn), the group size ``G`` (None: the training chapter's; the rollouts per step
    stay the training chapter's, so a larger group is fewer prompts) and the ``algorithms``
    trained on it (None: the grid's)."""

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

    def base(self, T: Training):
        """The ``PretrainConfig`` this regime's runs start from (``T``: the training chapter's
        runs)."""
        cfg = T.base()
        return cfg if self.base_seed is None else dataclasses.replace(cfg, seed=self.base_seed)


class Grid(BaseModel):
    """The ``regimes`` (name -> habits and mix), trained with ``algorithms`` x ``seeds`` for at
    most ``steps`` generation steps with the training chapter's other settings but its held-out
    evaluation (the probes are read alone: ``eval_every`` 0), each run ending
    ``stop_after_crossover`` steps after its crossover (None: never early); the boundary probed
    every ``probe_every`` steps (every ``probe_early_every`` up to step ``probe_early_until``)
    on ``probe_problems`` problems of the test split and ``probe_hard`` more test problems
    beyond the direct path, under the full distribution (and the paper's evaluation setting if
    ``probe_paper``); Pass@k shown at k = ``k`` and ``ks`` (the claims read it where each base
    sits mid-curve); the toy's prediction from ``toy_seeds`` runs of ``toy_steps`` steps under
    the toy chapter's setting (``toy``); ``workers`` runs side by side. Every run has the
    training chapter's settings (``training``) and starts from its base."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, validate_default=True)

    regimes: dict[str, Regime] = {"three paths": {"prior": 0.01, "guess": 0.495},
                                  "two paths": {"prior": 0.01}}
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
    workers: Int(1) = 2
    training: Training = Training()
    toy: ToySettings = ToySettings()

    @model_validator(mode="after")
    def _grid(self):
        require(len(self.regimes) >= 1, "regimes must name at least one regime")
        for name in self.algorithms:
            require(name in ALGORITHMS, f"algorithms has {name!r}; valid: {sorted(ALGORITHMS)}")
        for regime, r in self.regimes.items():
            for name in r.algorithms or ():
                require(name in ALGORITHMS, f"regimes[{regime!r}].algorithms has {name!r}; "
                                            f"valid: {sorted(ALGORITHMS)}")
        require(self.k in self.ks, f"ks must hold k={self.k}, got {self.ks}")
        require(self.probe_every <= self.steps, f"probe_every={self.probe_every} must be <= "
                                                f"steps={self.steps}")
        self.runs()  # every run must make a valid TrainConfig
        return self

    def runs(self, registrations: dict[str, str] | None = None) -> dict[Key, TrainConfig]:
        """(regime, algorithm, seed) -> its run: the training chapter's settings with this
        grid's steps, knobs and probes, each run recording its regime's registration
        (``registrations``: regime -> content hash; None: none)."""
        T = self.training
        require(T.model == registry.BASE_MODEL,
                "the regimes are dials of the sums base: the training chapter's model must be "
                f"{registry.BASE_MODEL!r}, got {T.model!r}")
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

    def hard(self) -> dict[str, Any]:
        """Per split, which probed problems lie beyond the direct path (``probes.hard_problems``
        on the training chapter's base)."""
        cfg = self.training.base()
        return hard_problems(cfg.task, cfg.author, self.probe_problems, self.probe_hard)

    def arms(self) -> list[str]:
        """The regimes with three paths at the first character (a guess beside the direct
        and the stepwise path: the paper's scenario); the others have two."""
        return [name for name, r in self.regimes.items() if r.guess is not None]

    def trained(self, regime: str) -> list[str]:
        """The algorithms trained on ``regime``: its own, or the grid's."""
        return self.regimes[regime].algorithms or self.algorithms


Rebase = Callable[[str, TrainConfig], TrainConfig]
"""How a way of training changes a regime's run (regime, its run -> the run trained that way):
the ladder's rungs start some runs from a base of their own."""


def register_all(G: Grid, profile: str, rebase: Rebase | None = None
                 ) -> dict[str, dict[str, Any]]:
    """Every regime's registered prediction (``prediction.register``, made where missing): the
    toy from the base that its runs start from (``rebase``: as a way of training changes them;
    None: as built), under the toy chapter's setting (``G.toy``)."""
    runs = G.runs()
    out = {}
    for name, regime in G.regimes.items():
        cfg = runs[name, G.trained(name)[0], G.seeds[0]]
        cfg = rebase(name, cfg) if rebase else cfg
        share = train_share(cfg.model.task, cfg.model.author, regime.hard_share)
        out[name] = register(cfg, share, G.toy, G.toy_steps, G.toy_seeds, profile,
                             [ALGORITHMS[a].label for a in G.trained(name)])
    return out


def registered_runs(G: Grid, registered: dict[str, dict[str, Any]]) -> dict[Key, TrainConfig]:
    """``G``'s runs, each recording its regime's registration (``registered``: regime -> its
    record, ``register_all``'s)."""
    return G.runs({name: content_hash(record) for name, record in registered.items()})


def train(runs: list[TrainConfig], G: Grid, profile: str) -> list:
    """``runs`` trained where missing in one pool of ``G.workers`` (or, where the training
    chapter trains nothing here, an error giving each launch command), the longest first
    (``longest_first``: no worker waits at the end for another's last one); their folders, in
    the order given."""
    order = longest_first(runs)
    folders = obtain_all(order, profile, inline=G.training.train_inline, workers=G.workers)
    where = dict(zip(map(id, order), folders))
    return [where[id(cfg)] for cfg in runs]


def longest_first(runs: list[TrainConfig]) -> list[TrainConfig]:
    """``runs`` by their expected cost, the longest first: more steps; then the whole loss
    before the first character's (``first_character_only``: passes over the prompt and one
    token); then GRPO before the others, which cross sooner and stop sooner after it."""
    return sorted(runs, key=lambda c: (-c.steps, c.first_character_only, c.algorithm != "grpo"))


@dataclasses.dataclass(frozen=True)
class Trained:
    """A grid's runs, trained: each run's dynamics (key -> its records) and each regime's run
    folders (what ``prediction.checks`` reads)."""

    dynamics: dict[Key, list[dict]]
    folders: dict[str, list]

    def registration_checks(self, registered: dict[str, dict[str, Any]]
                            ) -> dict[str, dict[str, bool]]:
        """Per regime, whether its prediction (``registered``) came before every run and every
        run started from the base it was made for (``prediction.checks``)."""
        return checks(registered, self.dynamics, self.folders)


def train_grid(G: Grid, registered: dict[str, dict[str, Any]], profile: str) -> Trained:
    """Every run of ``G``, trained where missing (``train``), each recording its regime's
    registration (``registered``: ``register_all``'s)."""
    runs = registered_runs(G, registered)
    return trained(runs, train(list(runs.values()), G, profile))


def trained(runs: dict[Key, TrainConfig], folders: list) -> Trained:
    """``runs`` (key -> run) and their ``folders`` (in the same order), read."""
    by_regime: dict[str, list] = {}
    for (name, _, _), f in zip(runs, folders):
        by_regime.setdefault(name, []).append(f)
    return Trained({key: load_dynamics(f) for key, f in zip(runs, folders)}, by_regime)


def dial(G: Grid, profile: str, rebases: dict[str, Callable[[str], float]] | None = None,
         problems: int = 100) -> pd.DataFrame:
    """Every regime's base measured exactly on the first ``problems`` test problems
    (``path_prior.dial_check``): the pretrained base, or that base refitted to the regime's
    prior (made where missing, ``G.workers`` refits at a time); and for each rung of
    ``rebases`` (rung -> the arm's prior for it) that runs on a base of its own
    (``ladder.rung_base``: R5), each arm's base of that rung, refitted to the arm's habits."""
    T = G.training
    cfg = T.base()
    made = {name: (r.base(T), None if r.prior is None else Refit(r.prior, r.guess or 0.0))
            for name, r in G.regimes.items()}
    for rung, prior in (rebases or {}).items():
        for name in G.arms():
            r = G.regimes[name]
            if (base := rung_base(r.base(T), rung)) != r.base(T):
                made[f"{name}, {rung}"] = (base, Refit(prior(name), r.guess))
    return path_prior.dial(made, cfg, problems, profile, G.workers)


@dataclasses.dataclass(frozen=True)
class Readings:
    """A grid's runs read from their probes: every probe with Pass@k at the grid's ``ks``
    (``long``), the mean over seeds per regime and algorithm (``means``), the k where each
    regime's base sits mid-curve on its rare-only problems (``ks``), each run's stages at that k
    (``runs``: ``stages.stages``' rows) and whether each regime's base can show its boundary
    move (``informs``: regime -> (informs, why not))."""

    long: pd.DataFrame
    means: pd.DataFrame
    ks: dict[str, int]
    runs: pd.DataFrame
    informs: dict[str, tuple[bool, str]]


def readings(G: Grid, dynamics: dict[Key, list[dict]]) -> Readings:
    """``dynamics`` (key -> a run's records) read on the probed problems (``Grid.hard``: the
    rare-only problems per split)."""
    hard = G.hard()
    long = with_passk(probes(dynamics), G.ks)
    ks = mid_curve(long, hard)
    return Readings(long, per_run(long, hard), ks, stages(long, hard, ks),
                    {r: informs(base_rows(long, r), hard["test"], ks[r]) for r in G.regimes})
