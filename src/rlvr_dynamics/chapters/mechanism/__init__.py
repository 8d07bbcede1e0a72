"""The mechanism chapter (``notebooks/mechanism.md``): why the network departs from the toy
(issue 51, items 3-6). One arm of the paper's scenario (three paths at the first character);
its runs as the ladder's rungs train them (``regimes.ladder.MODEL_RUNGS``): R2, a readout on the
frozen body trained on the first character; R3, the full model on the first character; R4, the
full model as built; R5, the full model on a base whose paths begin with tokens of their own.

* **Item 3, the second stage given time**: R1's clock set to the network's from short
  calibration runs of R5 and R2 GRPO (``regimes.clock``), R1's registered crossover rescaled,
  and the rungs of ``stage_two_rungs`` run GRPO to ``stage_two_steps`` (at least
  ``clock.HORIZON`` times their rescaled crossover); a rung calibrated but left out has the
  steps it would need recorded.
* **Item 4, why GRPO-N loses the rare path** (``regimes.mechanism``): (a) R3 GRPO-N under SGD
  beside Adam, (b) R4 and R5 GRPO-N on completion tokens 2..L, (c) R5 GRPO-N with one kind of
  negative sample spared at a time, beside R4 and R5 GRPO-N as built, whose updates at
  ``attribution_at`` are attributed to the kinds of sample (``rl.attribution``).
* **Item 5, a remedy**: the one that the registered rule (``remedy_rule``) names from item 4's
  outcome, a named change of the runs (``remedies``), run on R4 and R5.
* **Item 6, registration in two phases** (``regimes.plan``): ``phase="register"`` registers
  every prediction and rule (the bases' toy predictions, the clock and the rescaled crossover,
  the hypotheses, the remedy rule, the fresh seeds) and trains no run it judges (only the
  calibration runs, which the clock is read from and which are judged by nothing);
  ``phase="run"`` trains and reads, judging each run only where the plan was committed in the
  results release of the commit the run began from, a replay labelled.

Here: the parameters (``Params``), the runs of each item (``calibration``, ``stage_two``,
``item_four``, ``item_five``), the plan (``register``) and the reading (``read``: a
``Reading``, with ``verdict_rows``: one row per decision, its statistic, margin, outcome and
whether its runs are judged).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import model_validator

from rlvr_dynamics import dips, stats
from rlvr_dynamics.chapters import ChapterParams, Int, ListOf, ParameterError, Positive, require
from rlvr_dynamics.path_prior import Prior
from rlvr_dynamics.regimes import clock, mechanism, plan
from rlvr_dynamics.regimes.grid import Grid, Regime, train
from rlvr_dynamics.regimes.ladder import first_masses, r1_simulation, rung_run
from rlvr_dynamics.regimes.prediction import register as register_prediction
from rlvr_dynamics.regimes.probes import probes, train_share, with_passk
from rlvr_dynamics.regimes.stages import dip_over_seeds, mid_curve, stages, stepwise_mass
from rlvr_dynamics.regimes.toy_mapping import OWN
from rlvr_dynamics.rl.algorithms import ALGORITHMS
from rlvr_dynamics.rl.config import TrainConfig
from rlvr_dynamics.rl.registration import content_hash
from rlvr_dynamics.rl.runs import load_dynamics
from rlvr_dynamics.tasks.sums import TRACES

CHAPTER = "mechanism"
REGISTER, RUN = "register", "run"
STAGE_TWO = ("R5", "R2")
"""The rungs whose GRPO runs are given time (item 3)."""
BUILT = ("R4", "R5")
"""The rungs where GRPO-N lost the rare path in the ladder (items 4 and 5)."""
CALIBRATION = "calibration"
NOT_RUN = "calibrated only, not given time (stage_two_rungs)"
"""Item 3's outcome for a rung calibrated but left out of ``stage_two_rungs``."""


def way(rung: str, label: str, how: str = "") -> str:
    """A way of training's name: ``R5 GRPO-N, tokens 2..L``."""
    return f"{rung} {label}" + (f", {how}" if how else "")


AFTER, SGD, ADAM, REMEDY = "tokens 2..L", "SGD", "Adam", "remedy"


def spared_way(kind: str) -> str:
    """(c)'s way for the kind ``kind``."""
    return way("R5", "GRPO-N", f"{kind} spared")


class Params(ChapterParams, Grid):
    """One arm of the paper's scenario (``regimes``; a ``regimes.grid.Grid``), its confirmatory
    ``seeds`` never run before, ``steps`` for item 4's and 5's runs; ``phase`` (``register``:
    phase 1, register and stop; ``run``: phase 2); R5's base refitted to ``r5_prior`` (where it
    measures what the arm's base measures, ``cpu-ladder``'s ``rung_priors``); the clock's
    calibration runs (``calibration_seeds``, none of them a confirmatory seed, each
    ``calibration_steps`` steps: at least ``toy_rungs.WINDOW`` updates); item 3's runs of
    ``stage_two_steps`` steps on the rungs ``stage_two_rungs`` (of ``STAGE_TWO``, each
    calibrated); (a)'s SGD at ``sgd_learning_rate``; (c)'s kinds of negative
    sample (``spared``: names of ``tasks.sums.TRACES``); the attributed generation steps
    (``attribution_at``); the remedies (``remedies``: name -> changes of a run's
    ``TrainConfig``, ``mechanism.CULPRIT`` in ``spared_negatives`` standing for the kind item 4
    found) and the rule that picks one (``remedy_rule``: hypothesis, or ``mechanism.NONE``, ->
    remedy, in order of precedence)."""

    regimes: dict[str, Regime] = {"three paths": {"prior": 0.01, "guess": 0.495}}
    seeds: ListOf(Int(0)) = [100, 101, 102, 103, 104]
    phase: Literal[REGISTER, RUN] = RUN
    r5_prior: Prior = 0.019
    calibration_seeds: ListOf(Int(0)) = [90, 91, 92]
    calibration_steps: Int(1) = 5
    stage_two_steps: Int(1) = 600
    stage_two_rungs: ListOf(str) = list(STAGE_TWO)
    sgd_learning_rate: Positive = 0.03
    spared: ListOf(str) = ["stepwise_wrong", "guess_wrong", "direct_wrong"]
    attribution_at: ListOf(Int(0), 0) = [0, 10, 40]
    remedies: dict[str, dict[str, Any]] = {
        "spare the culprit": {"spared_negatives": [mechanism.CULPRIT]},
        "the first character alone": {"first_character_only": True}}
    remedy_rule: dict[str, str] = {"c": "spare the culprit", "b": "the first character alone",
                                   mechanism.NONE: "the first character alone"}

    @model_validator(mode="after")
    def _mechanism(self):
        require(len(self.regimes) == 1 and self.arms() == list(self.regimes),
                f"regimes must name one arm with a guess (three paths), got {list(self.regimes)}")
        require({"grpo", "grpo_n"} <= set(self.algorithms),
                f"algorithms must hold grpo and grpo_n, got {self.algorithms}")
        require(set(self.stage_two_rungs) <= set(STAGE_TWO),
                f"stage_two_rungs={self.stage_two_rungs} must be rungs of {list(STAGE_TWO)}")
        both = sorted(set(self.seeds) & set(self.calibration_seeds))
        require(not both, f"calibration_seeds {both} are also confirmatory seeds: the clock's "
                          f"runs must not be the runs it judges")
        for kind in self.spared:
            require(kind in TRACES and kind.endswith("_wrong"),
                    f"spared has {kind!r}: a kind of wrong sample of {list(TRACES)}")
        require(all(s < self.steps for s in self.attribution_at),
                f"attribution_at={self.attribution_at} must lie before steps={self.steps}")
        for name, changes in self.remedies.items():
            try:
                remedy_run(self.built("R5", "grpo_n", self.seeds[0]),
                           mechanism.resolve(changes, "guess_wrong", ()))
            except (ValueError, TypeError) as e:
                require(False, f"remedies[{name!r}]: {e}")
        for key, name in self.remedy_rule.items():
            require(key in (*mechanism.HYPOTHESES, mechanism.NONE) and name in self.remedies,
                    f"remedy_rule[{key!r}]={name!r}: a hypothesis of "
                    f"{[*mechanism.HYPOTHESES, mechanism.NONE]} -> a remedy of "
                    f"{list(self.remedies)}")
        calibration(self)
        stage_two(self)
        item_four(self)
        return self

    def arm(self) -> str:
        return next(iter(self.regimes))

    def built(self, rung: str, algorithm: str, seed: int, registration: str | None = None
              ) -> TrainConfig:
        """The arm's run of ``algorithm`` and ``seed`` as ``rung`` trains it (R4: as built;
        R2, R3, R5: ``ladder.rung_run``, R5's base refitted to ``r5_prior``)."""
        cfg = self.runs()[self.arm(), algorithm, self.seeds[0]].replace(
            seed=seed, registration=registration)
        if rung == "R4":
            return cfg
        return rung_run(cfg, rung, self.r5_prior if rung == "R5" else self.regimes[
            self.arm()].prior)


Key = tuple[str, str, int]
"""A run of the chapter: (way, algorithm, seed)."""


def remedy_run(cfg: TrainConfig, changes: dict[str, Any]) -> TrainConfig:
    """``cfg`` with a remedy's ``changes`` (lists as tuples)."""
    return cfg.replace(**{k: tuple(v) if isinstance(v, list) else v for k, v in changes.items()})


def calibration(P: Params) -> dict[Key, TrainConfig]:
    """The clock's runs: R5's and R2's GRPO on ``calibration_seeds`` for ``calibration_steps``
    steps, probed at their start and end (the first-character masses after every update are
    what the clock reads), judged by nothing."""
    n = P.calibration_steps
    return {(way(rung, "GRPO", CALIBRATION), "grpo", s): P.built(rung, "grpo", s).replace(
        steps=n, probe_every=n, probe_early_every=0, probe_early_until=0,
        stop_after_crossover=None) for rung in STAGE_TWO for s in P.calibration_seeds}


def stage_two(P: Params, registration: str | None = None) -> dict[Key, TrainConfig]:
    """Item 3's runs: GRPO of each rung of ``stage_two_rungs`` on the confirmatory seeds for
    ``stage_two_steps``."""
    return {(way(rung, "GRPO"), "grpo", s): P.built(rung, "grpo", s, registration).replace(
        steps=P.stage_two_steps) for rung in P.stage_two_rungs for s in P.seeds}


def item_four(P: Params, registration: str | None = None) -> dict[Key, TrainConfig]:
    """Item 4's runs of GRPO-N on the confirmatory seeds: (a) R3 under Adam and under SGD at
    ``sgd_learning_rate``; R4 and R5 as built, their updates at ``attribution_at`` attributed;
    (b) R4 and R5 on tokens 2..L; (c) R5 with each kind of ``spared`` left out."""
    out = {}
    for s in P.seeds:
        r3 = P.built("R3", "grpo_n", s, registration)
        out[way("R3", "GRPO-N", ADAM), "grpo_n", s] = r3
        out[way("R3", "GRPO-N", SGD), "grpo_n", s] = r3.replace(
            optimizer="sgd", learning_rate=P.sgd_learning_rate)
        for rung in BUILT:
            cfg = P.built(rung, "grpo_n", s, registration)
            out[way(rung, "GRPO-N"), "grpo_n", s] = cfg.replace(
                attribution_steps=tuple(P.attribution_at))
            out[way(rung, "GRPO-N", AFTER), "grpo_n", s] = cfg.replace(
                after_first_character=True)
        for kind in P.spared:
            out[spared_way(kind), "grpo_n", s] = P.built("R5", "grpo_n", s, registration).replace(
                spared_negatives=(kind,))
    return out


def item_five(P: Params, changes: dict[str, Any], registration: str | None = None
              ) -> dict[Key, TrainConfig]:
    """Item 5's runs: R4's and R5's GRPO-N on the confirmatory seeds with the remedy's
    ``changes`` (``mechanism.resolve``d)."""
    return {(way(rung, "GRPO-N", REMEDY), "grpo_n", s):
            remedy_run(P.built(rung, "grpo_n", s, registration), changes)
            for rung in BUILT for s in P.seeds}


def trained(runs: dict[Key, TrainConfig], P: Params) -> dict[Key, Any]:
    """``runs`` trained where missing in one pool (``regimes.grid.train``); key -> folder."""
    return dict(zip(runs, train(list(runs.values()), P, P.profile)))


# --- phase 1: the plan ---------------------------------------------------------------------------

def predictions(P: Params) -> dict[str, dict[str, Any]]:
    """The toy's registered prediction per base (``prediction.register``): R5's own, and the
    arm's (R2, R3, R4 start from it), each for runs of ``stage_two_steps`` (R1 simulated over
    them)."""
    share = train_share(P.training.base().task, P.training.base().author,
                        P.regimes[P.arm()].hard_share)
    return {rung: register_prediction(P.built(rung, "grpo", P.seeds[0]).replace(
        steps=P.stage_two_steps), share, P.toy, P.toy_steps, P.toy_seeds, P.profile,
        ["GRPO", "GRPO-N"]) for rung in ("R5", "R4")}


BASE_OF = {"R5": "R5", "R2": "R4"}
"""The registration each of item 3's rungs reads (R2 starts from the arm's base)."""


def clocks(P: Params, registered: dict[str, dict[str, Any]], folders: dict[Key, Any]
           ) -> dict[str, clock.Clock]:
    """Per rung of ``STAGE_TWO``: the clock from its calibration runs (``folders``) against R1
    of its base's registration, again on the same draws."""
    out = {}
    for rung in STAGE_TWO:
        model = [first_masses(load_dynamics(f), P.probe_problems) for (w, _, _), f in
                 folders.items() if w == way(rung, "GRPO", CALIBRATION)]
        sim, _ = r1_simulation(registered[BASE_OF[rung]], "GRPO")
        out[rung] = clock.clock(model, sim.early)
    return out


def plan_of(P: Params, registered: dict[str, dict[str, Any]], calibrated: dict[Key, Any]
            ) -> dict[str, Any]:
    """The plan's inputs (its key, ``regimes.plan.register``): the parameters, the bases'
    registrations (their hashes), the calibration runs and the rules (margins, horizon,
    hypotheses, the culprits each expects, the remedies and the rule that picks one)."""
    values = {k: v for k, v in P.values().items() if k not in ("phase", "profile", "workers")}
    return {"chapter": CHAPTER, "parameters": values,
            "predictions": {rung: content_hash(r) for rung, r in registered.items()},
            "calibration runs": sorted(f.name for f in calibrated.values()),
            "rules": {"margin": mechanism.MARGIN, "horizon": clock.HORIZON,
                      "window": clock.WINDOW, "hypotheses": mechanism.HYPOTHESES,
                      "expected culprits": mechanism.EXPECTED,
                      "remedies": P.remedies, "remedy rule": P.remedy_rule}}


def found_for(P: Params, registered: dict[str, dict[str, Any]], clocks_: dict[str, clock.Clock],
              fresh: dict[int, list[str]]) -> dict[str, Any]:
    """What the plan records beside its inputs: the toy's registered GRPO-N dips under SGD and
    Adam, R1's crossovers, the clocks, the rescaled crossovers and the steps they need, and
    where any confirmatory seed was run or declared before (``regimes.plan.run_before``)."""
    r1 = {rung: registered[BASE_OF[rung]]["ladder"]["R1"]["GRPO"]["crossover"]
          for rung in STAGE_TWO}
    rescaled = {rung: clock.rescaled(r1[rung], clocks_[rung]) for rung in STAGE_TWO}
    toy = registered["R4"]["predictions"]
    return {"toy GRPO-N dip": {name: toy[name]["GRPO-N"]["toy dip"] for name in (SGD, ADAM)},
            "R1 crossover": r1,
            "clock": {rung: dataclasses.asdict(c) for rung, c in clocks_.items()},
            "rescaled crossover": rescaled,
            "needed steps": {rung: clock.needed_steps(t) for rung, t in rescaled.items()},
            "run before": {str(s): w for s, w in fresh.items()}}


def horizon_error(P: Params, needed: dict[str, int]) -> str:
    """Why ``stage_two_steps`` is too short for the reading of a rung it runs (empty: it is
    not)."""
    most = max((n for rung, n in needed.items() if rung in P.stage_two_rungs), default=0)
    return (f"parameter stage_two_steps={P.stage_two_steps}: item 3's runs need at least "
            f"{most} steps ({clock.HORIZON:g}x the rescaled crossover, per rung {needed}); "
            f"set it, or leave a rung out of stage_two_rungs={P.stage_two_rungs}, in the "
            f"profile before the plan is registered"
            if P.stage_two_steps < most else "")


def refusal(P: Params, found: dict[str, Any]) -> str:
    """Why phase 1 refuses to register the plan (empty: it does not): a confirmatory seed run
    or declared before, or ``stage_two_steps`` short of what the rescaled crossover needs."""
    if found["run before"]:
        return (f"{CHAPTER}: parameter seeds={P.seeds}: seeds run or declared before: "
                f"{found['run before']}")
    error = horizon_error(P, found["needed steps"])
    return f"{CHAPTER}: {error}" if error else ""


def register(P: Params) -> tuple[dict[str, Any], Any]:
    """Phase 1 (and the first step of phase 2): the bases' predictions, the calibration runs
    (trained where missing; no run the plan judges) and the plan, registered where it is not
    yet, with its clocks (its record and the file it lies in). In ``phase="register"`` a plan
    not yet registered is refused (``refusal``, naming the parameter)."""
    registered = predictions(P)
    calibrated = trained(calibration(P), P)
    what = plan_of(P, registered, calibrated)
    found = None
    if plan.registered(P.profile, CHAPTER, what) is None:
        found = found_for(P, registered, clocks(P, registered, calibrated),
                          plan.run_before(P.seeds, CHAPTER, Grid.model_fields["seeds"].default))
        if P.phase == REGISTER and (why := refusal(P, found)):
            raise ParameterError(why)
    return (plan.register(P.profile, CHAPTER, what, found),
            plan.record_file(P.profile, CHAPTER, what))


# --- phase 2: the runs and their reading ---------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Reading:
    """The chapter's runs read: every run judged or not (``runs``), their stages (``table``:
    ``stages.stages``' rows, ``regime`` the way), P(stepwise) on the rare-only problems per way,
    seed and step relative to the start (``curves``), the dip per way (``dips``), item 3's
    reading per rung (``stage_two``), item 4's per hypothesis (``hypotheses``) and the
    attribution (``attribution``: per part, its ``stats.Effect`` over runs; ``culprit``;
    ``fidelity``: predicted over measured change per attributed update), the remedy chosen and
    its reading, and the decisions (``verdicts``)."""

    runs: pd.DataFrame
    table: pd.DataFrame
    curves: pd.DataFrame
    dips: dict[str, dips.Dip]
    stage_two: dict[str, clock.StageTwo]
    hypotheses: pd.DataFrame
    attribution: dict[str, stats.Effect]
    culprit: str | None
    fidelity: list[float]
    remedy: str | None
    remedy_outcome: str
    verdicts: pd.DataFrame


def judged_runs(record: dict[str, Any], file: Any, folders: dict[Key, Any]) -> pd.DataFrame:
    """Per run (``folders``), ``plan.judge``'s answer."""
    rows = [{"way": w, "algorithm": ALGORITHMS[a].label, "seed": s, "run": f.name,
             **plan.judge(record, file, f)} for (w, a, s), f in folders.items()]
    return pd.DataFrame(rows, columns=["way", "algorithm", "seed", "run", "registered before",
                                       "committed before", "replay", "judged"])


def read_runs(P: Params, folders: dict[Key, Any]) -> tuple[pd.DataFrame, pd.DataFrame,
                                                           dict[str, dips.Dip]]:
    """Every run's stages (``stages.stages`` on the rare-only problems, ``regime`` the way),
    the relative P(stepwise) curves and the dip per way."""
    dynamics = {key: load_dynamics(f) for key, f in folders.items()}
    hard = P.hard()
    long = with_passk(probes(dynamics), [1])
    table = stages(long, hard, mid_curve(long, hard))
    part = long[(long["setting"] == "full") & (long["split"] == "test")]
    curves = []
    for w, g in part.groupby("regime", sort=False):
        mass = stepwise_mass(g, hard["test"])
        rel = (mass / mass.iloc[0]).stack().rename("relative").reset_index()
        curves.append(rel.assign(way=w))
    curves = pd.concat(curves, ignore_index=True) if curves else pd.DataFrame(
        columns=["step", "seed", "relative", "way"])
    return table, curves, {w: dip_over_seeds(g) for w, g in table.groupby("regime", sort=False)}


def hypotheses(record: dict[str, Any], d: dict[str, dips.Dip], found: str | None
               ) -> pd.DataFrame:
    """Item 4's hypotheses (``regimes.mechanism``) on the dips per way ``d`` and the
    attribution's culprit ``found``: per hypothesis its outcome, the kinds it names, whether
    the attribution agrees and whether it explains the loss."""
    toy = record["toy GRPO-N dip"]
    a = mechanism.optimizer(toy[SGD], toy[ADAM], d.get(way("R3", "GRPO-N", SGD)),
                            d.get(way("R3", "GRPO-N", ADAM)))
    b = mechanism.later_tokens({r: d[way(r, "GRPO-N", AFTER)] for r in BUILT
                                if way(r, "GRPO-N", AFTER) in d},
                               {r: d[way(r, "GRPO-N")] for r in BUILT if way(r, "GRPO-N") in d})
    kinds = record["parameters"]["spared"]
    c, named = mechanism.whose({k: d[spared_way(k)] for k in kinds if spared_way(k) in d},
                               d.get(way("R5", "GRPO-N")))
    rows = []
    for h, outcome, names in (("a", a, ()), ("b", b, ()), ("c", c, named)):
        agrees = mechanism.agreement(h, found, names)
        rows.append({"hypothesis": h, "claim": mechanism.HYPOTHESES[h], "outcome": outcome,
                     "named": ", ".join(names), "attribution": agrees,
                     "explains": mechanism.explains(outcome, agrees)})
    return pd.DataFrame(rows, columns=["hypothesis", "claim", "outcome", "named",
                                       "attribution", "explains"])


def attributed(folders: dict[Key, Any]) -> tuple[str | None, dict[str, stats.Effect], list[float]]:
    """The attribution over the as-built GRPO-N runs of ``BUILT`` (``mechanism.parts``,
    ``culprit``, ``fidelity``)."""
    runs = [load_dynamics(f) for (w, _, _), f in folders.items()
            if w in {way(r, "GRPO-N") for r in BUILT}]
    found, effects = mechanism.culprit([p for run in runs if (p := mechanism.parts(run))])
    return found, effects, [x for run in runs for x in mechanism.fidelity(run)]


def read(P: Params, record: dict[str, Any], file: Any) -> Reading | None:
    """Phase 2: item 3's and item 4's runs trained (one pool), item 4 read, the remedy its
    rule names trained on R4 and R5 and read; every run judged (``judged_runs``). None in
    phase 1: no run is made."""
    if P.phase == REGISTER:
        return None
    h = plan.plan_hash(record)
    folders = trained({**stage_two(P, h), **item_four(P, h)}, P)
    table, curves, d = read_runs(P, folders)
    found, effects, fid = attributed(folders)
    hyp = hypotheses(record, d, found)
    named = tuple(x for x in ", ".join(hyp["named"]).split(", ") if x)
    chosen = mechanism.choose_remedy(list(hyp.loc[hyp["explains"], "hypothesis"]),
                                     record["rules"]["remedy rule"])
    if chosen is not None:
        changes = mechanism.resolve(record["rules"]["remedies"][chosen], found, named)
        folders |= trained(item_five(P, changes, h), P)
        table, curves, d = read_runs(P, folders)
    remedy_outcome = mechanism.remedy({r: d[way(r, "GRPO-N", REMEDY)] for r in BUILT
                                       if way(r, "GRPO-N", REMEDY) in d})
    runs = judged_runs(record, file, folders)
    two = {}
    for rung in P.stage_two_rungs:
        rows = table[table["regime"] == way(rung, "GRPO")]
        two[rung] = clock.stage_two(rows["crossover"], rows["last step"], rows["stalled"],
                                    record["rescaled crossover"][rung])
    return Reading(runs, table, curves, d, two, hyp, effects, found, fid, chosen,
                   remedy_outcome, verdict_rows(two, hyp, found, chosen, remedy_outcome, runs))


READS = {"3: R5": [way("R5", "GRPO")], "3: R2": [way("R2", "GRPO")],
         "4 (a)": [way("R3", "GRPO-N", ADAM), way("R3", "GRPO-N", SGD)],
         "4 (b)": [way(r, "GRPO-N", h) for r in BUILT for h in ("", AFTER)],
         "4 (c)": [way("R5", "GRPO-N")], "4: attribution": [way(r, "GRPO-N") for r in BUILT],
         "5: remedy": [way(r, "GRPO-N", REMEDY) for r in BUILT]}
"""The ways each decision reads (item 4 (c) also every way of ``spared_way``)."""


def verdict_rows(two: dict[str, clock.StageTwo], hyp: pd.DataFrame, found: str | None,
                 chosen: str | None, remedy_outcome: str, runs: pd.DataFrame) -> pd.DataFrame:
    """One row per decision: what it reads, its outcome, how many of its runs are judged (the
    plan committed before them) and replays, and whether it is ``decided``: every run it reads
    judged (else it is shown, not judged)."""
    outcome = {**{f"3: {r}": two[r].outcome if r in two else NOT_RUN for r in STAGE_TWO},
               **{f"4 ({h})": o for h, o in zip(hyp["hypothesis"], hyp["outcome"])},
               "4: attribution": found or mechanism.CANNOT_TELL,
               "5: remedy": remedy_outcome if chosen else "none chosen"}
    rows = []
    for decision, ways in READS.items():
        mine = runs[runs["way"].isin(ways) | ((decision == "4 (c)")
                                               & runs["way"].str.contains(" spared"))]
        rows.append({"decision": decision, "outcome": outcome[decision], "runs": len(mine),
                     "judged": int(mine["judged"].sum()), "replays": int(mine["replay"].sum()),
                     "decided": bool(len(mine)) and bool(mine["judged"].all())})
    return pd.DataFrame(rows, columns=["decision", "outcome", "runs", "judged", "replays",
                                       "decided"])


def explaining(hyp: pd.DataFrame) -> list[str]:
    """The hypotheses that explain GRPO-N's loss (their runs bear them out and the attribution
    agrees)."""
    return list(hyp.loc[hyp["explains"], "hypothesis"])


def seeds_fresh(record: dict[str, Any]) -> bool:
    """Whether the plan found every confirmatory seed fresh (never run or declared before)."""
    return not record["run before"]


def spread(curves: pd.DataFrame) -> pd.DataFrame:
    """Per way and step: the geometric mean over seeds of P(stepwise) relative to its start
    (floored at ``dips.FLOOR``), its lowest and highest seed, and the seeds."""
    c = curves.assign(log=np.log(curves["relative"].astype(float).clip(lower=dips.FLOOR)))
    g = c.groupby(["way", "step"], sort=False)
    return pd.DataFrame({"mean": np.exp(g["log"].mean()), "low": np.exp(g["log"].min()),
                         "high": np.exp(g["log"].max()), "seeds": g["seed"].nunique()}
                        ).reset_index()
