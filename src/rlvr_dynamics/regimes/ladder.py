"""The ladder from the tabular toy to the full model, read: where the first stage goes inside a
network.

The toy, given an arm's measured start, dips pi(a2) and the language model did not. Each rung
between them adds one thing the toy leaves out, and each is predicted and registered before
the runs it judges (the toy's rungs and the two mechanisms' slopes: ``toy_rungs``):

* R0, the tabular toy as registered; R1, the same toy on the model's schedule;
* R2, the base's body frozen and an untied first-character readout trained by the loss on the
  first completion character alone; R3, the full model trained on the first character alone
  (``MODEL_RUNGS``: run where a profile asks for them, ``Params.ladder``);
* R4, the full model as built (the chapter's runs);
* R5, the full model as built on a base whose paths begin with tokens no other path writes,
  its embeddings untied (``MODEL_RUNGS``: another pretraining of the base, refitted to the
  arm's habits).

Here: the slope of every run over its first updates (``measured_slopes``, from the
first-character masses each run records after every update) and which mechanism an interval
of it shows (``mechanism``, against ``toy_rungs.TABULAR`` and ``toy_rungs.PROPORTIONAL``); each
rung's dip read by the scenario's stage-1 rule (``rung_rows``) and the rung where the first
stage turns (``turns``). The sharper test trains on the groups that hold no stepwise sample
alone (``TrainConfig.without_stepwise``): there the tabular stepwise logit cannot move at all,
so any change of pi_d relative to pi_# is the network's own.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd
import yaml

from rlvr_dynamics import REPO, dips, stats, toy, toy_schedule
from rlvr_dynamics.regimes.scenario import FALL_MARGIN
from rlvr_dynamics.regimes.stages import crossover_median, dip_over_seeds
from rlvr_dynamics.regimes.toy_mapping import OWN, toy_update
from rlvr_dynamics.regimes.toy_rungs import (AS_BUILT, PROPORTIONAL, TABULAR, WINDOW,
                                                      WITHOUT, log_changes, slope)
from rlvr_dynamics.pretrain import PretrainConfig
from rlvr_dynamics.rl.config import TrainConfig

BAND = 0.25
"""Half the distance between the two slopes: an interval within ``BAND`` of one of them (and
so away from the other) decides for it."""

TOY, SPREAD, GAINS, BEYOND, BETWEEN = ("the toy's (tabular)", "proportional spreading",
                                       "the stepwise path gains on the direct one",
                                       "beyond the toy's", "cannot tell")


def mechanism(effect: stats.Effect) -> str:
    """Which mechanism a slope's interval over seeds (``effect``) shows: the toy's where it
    lies within ``BAND`` of ``TABULAR``, proportional spreading within ``BAND`` of
    ``PROPORTIONAL``, the stepwise path gaining where it lies wholly above ``PROPORTIONAL +
    BAND``, beyond the toy wholly below ``TABULAR - BAND``; else (or without an interval)
    ``BETWEEN``."""
    lo, hi = effect.low, effect.high
    if np.isnan(lo) or np.isnan(hi):
        return BETWEEN
    for centre, name in ((TABULAR, TOY), (PROPORTIONAL, SPREAD)):
        if centre - BAND < lo and hi < centre + BAND:
            return name
    if lo > PROPORTIONAL + BAND:
        return GAINS
    if hi < TABULAR - BAND:
        return BEYOND
    return BETWEEN


def first_masses(run: Sequence[dict], regular: int) -> np.ndarray:
    """One run's first-character masses per update (``rl.probe.FirstCharacters``' records),
    means over the first ``regular`` probed problems (those drawn as the test split lists them:
    the toy's pi0 is read from them): rows the updates, columns direct, stepwise, guess."""
    rows = sorted((r["update"], r["first"]) for r in run if "first" in r)
    return np.array([[np.mean(f[k][:regular]) for k in ("direct", "stepwise", "guess")]
                     for _, f in rows])


def log_trajectories(runs: dict[tuple, list[dict]], regular: int, window: int = WINDOW
                     ) -> pd.DataFrame:
    """Per run (``measured_slopes``' keys) and update of its first ``window``: the changes
    ``toy_rungs.log_changes`` regresses, x of log(pi_# / pi_=) and y of log(pi_d / pi_#)."""
    rows = []
    for (regime, label, seed, how), run in runs.items():
        x, y = log_changes(first_masses(run, regular)[:window + 1])
        rows += [{"regime": regime, "algorithm": label, "seed": seed, "how": how,
                  "update": u + 1, "x": a, "y": b} for u, (a, b) in enumerate(zip(x, y))]
    return pd.DataFrame(rows, columns=["regime", "algorithm", "seed", "how", "update", "x", "y"])


def measured_slopes(runs: dict[tuple, list[dict]], regular: int) -> pd.DataFrame:
    """Per run (key: regime, algorithm label, seed, and how: ``AS_BUILT`` or ``WITHOUT``),
    the slope over its first ``WINDOW`` updates (``first_masses``); runs without
    the instrument are left out."""
    rows = []
    for (regime, label, seed, how), run in runs.items():
        m = first_masses(run, regular)
        if len(m) > 1:
            rows.append({"regime": regime, "algorithm": label, "seed": seed, "how": how,
                         "slope": slope(m)})
    return pd.DataFrame(rows, columns=["regime", "algorithm", "seed", "how", "slope"])


def slope_checks(slopes: pd.DataFrame) -> pd.DataFrame:
    """Per regime, algorithm and how (``measured_slopes``' rows): the mean slope over seeds,
    its interval (and the ``stats.Effect`` itself) and the mechanism it shows
    (``mechanism``)."""
    rows = []
    for (regime, label, how), g in slopes.groupby(["regime", "algorithm", "how"], sort=False):
        e = stats.one_sample(g["slope"].to_numpy(), BAND)
        rows.append({"regime": regime, "algorithm": label, "how": how, "seeds": len(g),
                     "slope": e.estimate, "low": e.low, "high": e.high, "effect": e,
                     "mechanism": mechanism(e)})
    return pd.DataFrame(rows, columns=["regime", "algorithm", "how", "seeds", "slope", "low",
                                       "high", "effect", "mechanism"])


LADDER = ("R0", "R1", "R2", "R3", "R4", "R5")
"""Every rung of the ladder, in order (module docstring)."""
MODEL_RUNGS = {"R2": dict(first_character_only=True, readout_only=True),
               "R3": dict(first_character_only=True),
               "R5": dict(model=dict(first_tokens=True, tied=False))}
"""The model's rungs other than the full model as built, as changes to the arm's runs
(``TrainConfig`` knobs; ``model``: changes to its base's ``pretrain.PretrainConfig``): R2 the
body frozen and an untied readout trained on the first character, R3 the full model trained on
the first character alone, R5 the full model on a base pretrained with first tokens of its own
and untied embeddings (refitted to the arm's habits like the arm's base)."""
HOW = {"R4": AS_BUILT, "R2": "R2", "R3": "R3", "R5": "R5"}
"""How each of the model's rungs was trained (``measured_slopes``' key)."""
YES, NO = "yes", "no"


def rung_base(base: PretrainConfig, rung: str) -> PretrainConfig:
    """The base that ``rung`` of ``MODEL_RUNGS`` starts from, given the arm's ``base``."""
    return dataclasses.replace(base, **MODEL_RUNGS[rung].get("model", {}))


def rung_run(cfg: TrainConfig, rung: str, prior: float) -> TrainConfig:
    """An arm's run ``cfg`` (as built) as ``rung`` of ``MODEL_RUNGS`` trains it, its base
    refitted to P(stepwise) ``prior`` (``Params.rung_prior``)."""
    knobs = {k: v for k, v in MODEL_RUNGS[rung].items() if k != "model"}
    return cfg.replace(model=rung_base(cfg.model, rung), path_prior=prior, **knobs)


def toy_stage(depth: float) -> str:
    """Whether a toy rung's dip (relative, negative: a fall) is a first stage: a fall of more
    than ``scenario.FALL_MARGIN``."""
    return YES if depth < -FALL_MARGIN else NO


def lm_stage(fall: stats.Effect) -> str:
    """Whether the model's fall over seeds is a first stage: ``YES`` where the stage-1 check
    replicates, ``NO`` where it shows no effect or the opposite, else its verdict."""
    return {stats.REPLICATES: YES, stats.NO_EFFECT: NO, stats.OPPOSITE: NO}.get(
        fall.verdict, fall.verdict)


def toy_curves(record: dict[str, Any], label: str) -> dict[str, pd.DataFrame]:
    """The toy's pi(a2) per seed (columns) and step (rows, the start first) for ``label``
    (GRPO, GRPO-N) as a registration ``record`` ran it, again from its inputs and on the same
    draws: R0, the toy (the toy chapter's optimizer, ``record["steps"]`` x ``record["seeds"]``,
    seed 0, as ``toy_mapping.toy_prediction``), in toy steps; R1, the toy on the model's
    schedule (``record["schedule"]``, as ``toy_rungs.r1``), per update, in model steps. The
    registration keeps only their summaries; the dip over seeds needs every seed's curve."""
    pi0, r, G = (record["inputs"][k] for k in ("pi0", "r", "G"))
    own, tau = record["toy"][OWN], record["toy"]["tau"]
    update = toy_update(label)[1]
    steps, seeds = record["steps"], record["seeds"]
    a2 = np.array([pi[0, :, 1] for pi, _ in toy.run(
        toy.logits(pi0), r, G=G, lr=own["lr"], tau=tau, optimizer=own["optimizer"],
        steps=steps, seeds=seeds, seed=0, **update)])
    out = {"R0": pd.DataFrame(a2, index=np.arange(steps + 1, dtype=float))}
    s, updates = r1_simulation(record, label)
    out["R1"] = pd.DataFrame(s.early[:, :, 1].T, index=np.arange(s.early.shape[1]) / updates)
    return out


def r1_simulation(record: dict[str, Any], label: str) -> tuple[Any, int]:
    """R1 as a registration ``record`` ran it for ``label`` (GRPO, GRPO-N), again from its
    inputs and on the same draws (``toy_rungs.r1``'s setting), every seed's first-character
    masses kept after every update of the whole run (``toy_schedule.simulate``'s ``early``:
    seeds x (updates + 1) x 3); with the updates per model step."""
    pi0, r, G = (record["inputs"][k] for k in ("pi0", "r", "G"))
    own, tau = record["toy"][OWN], record["toy"]["tau"]
    batch, per_update, epsilon, model_steps = record["schedule"]
    share = record["share"]
    updates = batch // per_update
    rate = r[0] / (1 - share) if share < 1 else 0.0
    s = toy_schedule.simulate(pi0, [min(rate, 1.0), r[1], r[2]], [0.0, r[1], r[2]], share,
                              G=G, groups=batch // G, updates=updates, lr=own["lr"],
                              epsilon=epsilon, tau=tau, negative_only=label == "GRPO-N",
                              steps=model_steps, seeds=record["seeds"],
                              window=model_steps * updates)
    return s, updates


def toy_dips(record: dict[str, Any], labels: Sequence[str] = ("GRPO", "GRPO-N")
             ) -> dict[str, dict[str, dips.Dip]]:
    """R0's and R1's dips of pi(a2) (rung -> label -> ``dips.Dip``) by the statistic that reads
    the model's (``dips.dip`` on every seed's curve, ``toy_curves``), where the registration
    ``record`` predicted for the label; the registered dips (the lowest of the mean over
    seeds) stay as registered, and the rules read those."""
    out: dict[str, dict[str, dips.Dip]] = {"R0": {}, "R1": {}}
    for label in labels:
        if label not in record["predictions"][OWN] or label not in record["ladder"]["R1"]:
            continue
        for rung, curves in toy_curves(record, label).items():
            out[rung][label] = dips.dip(curves)
    return out


ROW = ["rung", "algorithm", "dip", "dip interval", "dip step", "dip seeds", "fell", "rose",
       "dip censored", "registered dip", "rule's fall", "crossover", "crossover interval",
       "horizon", "slope", "slope interval", "first stage"]
"""``rung_rows``' columns."""


def _dip_columns(d: dips.Dip | None) -> dict[str, Any]:
    """A ``dips.Dip`` as ``rung_rows``' columns (none: the dip is not computed here)."""
    if d is None:
        return {"dip seeds": None, "fell": None, "rose": None, "dip censored": False}
    return {"dip": d.estimate, "dip interval": (d.low, d.high), "dip step": d.step,
            "dip seeds": d.values, "fell": d.fell, "rose": d.rose, "dip censored": d.censored}


def rung_rows(record: dict[str, Any], measured: dict[str, pd.DataFrame], checks: pd.DataFrame,
              arm: str, toy_dip: dict[str, dict[str, dips.Dip]] | None = None) -> pd.DataFrame:
    """One arm's ladder, per rung and algorithm (``ROW``): the dip of P(stepwise) on the log
    scale, every rung by one statistic (``dips``: the geometric mean over seeds of the ratio
    at the lowest probe, minus 1, with its interval, step, each seed's value, how many seeds
    fell and rose, and whether the fall was still at its lowest at the last probe,
    censored), the crossover (the toy's median in its own steps for R0, in the model's steps
    for R1, the model's Kaplan-Meier median over seeds with Brookmeyer and Crowley's interval
    and the horizon it is censored at), the slope (the model's: mean over seeds with its
    interval, ``checks``: ``slope_checks``' rows) and whether the rung shows a first stage.
    The first stage is read by the rules registered before the runs, on the statistics they
    name: the toy's rungs on the registered dip (``registered dip``: the lowest of the mean
    pi(a2) over seeds), the model's on the mean of the per-seed falls with its Student-t
    interval (``rule's fall``: a ``stats.Effect``). R0 and R1 from the registration
    ``record`` (their log-scale dips from ``toy_dip``, ``toy_dips``' result; none given: the
    registered dip alone), the model's rungs from ``measured`` (rung -> ``stages.stages``'
    rows of its runs: R4 the chapter's, R2 and R3 those of ``MODEL_RUNGS``)."""
    rows = []
    lad = record["ladder"]
    toy_dip = toy_dip or {}
    for label in ("GRPO", "GRPO-N"):
        toy0, toy1 = record["predictions"][OWN].get(label), lad["R1"].get(label)
        if toy0 is not None:
            rows.append({"rung": "R0", "algorithm": label, "dip": toy0["toy dip"],
                         "dip interval": None, "dip step": toy0["toy dip step"],
                         "registered dip": toy0["toy dip"],
                         **_dip_columns(toy_dip.get("R0", {}).get(label)),
                         "crossover": toy0["toy expansion"], "horizon": record.get("steps"),
                         "slope": lad["R0"][label]["slope"],
                         "slope interval": None, "first stage": toy_stage(toy0["toy dip"])})
        if toy1 is not None:
            schedule = record.get("schedule")
            rows.append({"rung": "R1", "algorithm": label, "dip": toy1["dip"],
                         "dip interval": None, "dip step": toy1["dip step"],
                         "registered dip": toy1["dip"],
                         **_dip_columns(toy_dip.get("R1", {}).get(label)),
                         "crossover": toy1["crossover"],
                         "horizon": schedule[3] if schedule else None,
                         "slope": toy1["slope"],
                         "slope interval": None, "first stage": toy_stage(toy1["dip"])})
        for rung in (r for r in LADDER if r in measured):
            runs = measured[rung]
            mine = runs[(runs["regime"] == arm) & (runs["algorithm"] == label)]
            if mine.empty:
                continue
            fall = stats.one_sample(mine["fall"].to_numpy(), FALL_MARGIN)
            c = checks[(checks["regime"] == arm) & (checks["algorithm"] == label)
                       & (checks["how"] == HOW[rung])]
            median = crossover_median(mine)
            logged = dip_over_seeds(mine) if "log dip" in mine else None
            rows.append({"rung": rung, "algorithm": label, "dip": -fall.estimate,
                         "dip interval": (-fall.high, -fall.low),
                         "dip step": float(np.median(mine["fall step"])),
                         **_dip_columns(logged), "rule's fall": fall,
                         "crossover": median.estimate,
                         "crossover interval": (median.low, median.high),
                         "horizon": median.horizon,
                         "slope": float(c["slope"].iloc[0]) if len(c) else np.nan,
                         "slope interval": (float(c["low"].iloc[0]), float(c["high"].iloc[0]))
                         if len(c) else None,
                         "first stage": lm_stage(fall)})
    return pd.DataFrame(rows, columns=ROW)


def turns(rows: pd.DataFrame, algorithm: str) -> tuple[str, str] | None:
    """Where ``algorithm``'s first stage turns along the ladder (``rung_rows``, ``LADDER``'s
    order): (the first rung whose reading, ``YES`` or ``NO``, differs from the first rung's,
    that reading); None where every decided rung reads alike. A rung whose check is undecided
    is passed over."""
    readings = [(rung, stage.iloc[0]) for rung in LADDER
                if not (stage := rows[(rows["rung"] == rung)
                                      & (rows["algorithm"] == algorithm)]["first stage"]).empty
                and stage.iloc[0] in (YES, NO)]
    return next(((rung, r) for rung, r in readings[1:] if r != readings[0][1]), None)


def both_stages(rows: pd.DataFrame, rung: str = "R5", algorithm: str = "GRPO") -> str | None:
    """Whether ``rung`` shows the paper's two stages under ``algorithm`` (``rung_rows``): ``YES``
    where its first stage reads ``YES`` and the median crossover of its runs is finite (the
    rare path overtakes the direct one after the dip), ``NO`` where the first stage reads
    ``NO`` or the median run never crosses, else the first stage's undecided verdict; None
    where the rung did not run."""
    row = rows[(rows["rung"] == rung) & (rows["algorithm"] == algorithm)]
    if row.empty:
        return None
    stage, crossover = row["first stage"].iloc[0], row["crossover"].iloc[0]
    if stage == NO or not np.isfinite(crossover):
        return NO
    return YES if stage == YES else stage


def censored_no(rows: pd.DataFrame, rung: str = "R5", algorithm: str = "GRPO") -> bool:
    """Whether ``both_stages``' ``NO`` at ``rung`` rests on a censored median crossover alone:
    the first stage not excluded and fewer than half the runs crossed within their probes, so
    that the reading is "not within N steps (censored)", not "never" (issue 51). The rule
    itself (``both_stages``) is as registered."""
    row = rows[(rows["rung"] == rung) & (rows["algorithm"] == algorithm)]
    return (not row.empty and both_stages(rows, rung, algorithm) == NO
            and row["first stage"].iloc[0] != NO and np.isinf(row["crossover"].iloc[0]))


ACCOUNTS = REPO / "docs" / "registrations" / "ladder-accounts.yaml"
"""What each account of the first stage predicts for the rungs, committed before the
``cpu-ladder`` runs began (its first commit is the registration)."""
STRICT = ("R2", "R3", "R5")
"""The rungs whose outcomes nobody had seen when the accounts were written: only there are
their entries predictions in the strict sense (the earlier builds had shown R4, and R0 and R1
had been simulated)."""
PHENOMENA = {"dip": "GRPO", "minus_n_loses": "GRPO-N"}
"""Each account's predictions per rung, and the algorithm whose first-stage reading (its fall
of P(stepwise), ``rung_rows``) judges them: GRPO's dip, GRPO-N's loss of the rare path."""


def accounts(path: Path = ACCOUNTS) -> list[dict[str, Any]]:
    """The registered accounts (``ACCOUNTS``), their yes/no predictions as ``YES``/``NO``
    (YAML reads a bare yes as true) and "-" where an account says nothing."""
    data = yaml.safe_load(Path(path).read_text())["accounts"]
    word = {True: YES, False: NO}
    return [{**a, **{k: {r: word.get(v, v) for r, v in a[k].items()} for k in PHENOMENA}}
            for a in data]


def against_accounts(registered: list[dict[str, Any]], rows: pd.DataFrame) -> pd.DataFrame:
    """Per account (``accounts``): of its predictions for the rungs that ran and were decided
    (``rung_rows``' ``first stage``: ``YES`` or ``NO``), how many the ladder bears out, and
    which it does not (rung and phenomenon)."""
    out = []
    for a in registered:
        agree, against = 0, []
        for phenomenon, label in PHENOMENA.items():
            for rung, predicted in a[phenomenon].items():
                seen = rows[(rows["rung"] == rung) & (rows["algorithm"] == label)]["first stage"]
                if predicted not in (YES, NO) or seen.empty or seen.iloc[0] not in (YES, NO):
                    continue
                if seen.iloc[0] == predicted:
                    agree += 1
                else:
                    against.append(f"{rung} {phenomenon}")
        out.append({"account": a["name"], "cite": a["cite"], "borne out": agree,
                    "not borne out": len(against), "where not": ", ".join(against) or "-"})
    return pd.DataFrame(out, columns=["account", "cite", "borne out", "not borne out",
                                      "where not"])


def against_all(registered: list[dict[str, Any]], rungs: dict[str, pd.DataFrame]
                ) -> dict[str, dict[bool, pd.DataFrame]]:
    """``against_accounts`` for every arm's ladder (``rungs``: arm -> ``rung_rows``), apart on
    the ``STRICT`` rungs (``True``) and on those whose outcome the accounts were written knowing
    (``False``)."""
    return {arm: {strict: against_accounts(registered, rows[rows["rung"].isin(STRICT) == strict])
                  for strict in (True, False)} for arm, rows in rungs.items()}
