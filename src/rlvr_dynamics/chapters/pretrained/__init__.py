"""The pretrained-model chapter (``notebooks/pretrained.md``): Section 4 asked of a real
pretrained chat model, SmolLM2-135M-Instruct (a small model of the Llama family whose 3B member
the paper's Table 2 trains), on chat sums of several difficulties.

* *The format.* Under each candidate chat prompt (``prompts``, ``tasks.arithmetic.PROMPTS``)
  the base samples the training levels' training problems (which no evaluation reads) at
  T = 1: the share of its right answers that it boxed, and its Pass@1 and Pass@n under the
  paper's grader, the boxed answer alone (``formats``). ``settle`` picks the prompt and the
  grader by the rule stated before any run (``chosen``): the paper's grader where a prompt
  boxes at least ``min_boxed`` of the right answers on the training levels, else the lenient
  one, said on the page.
* *The task.* The base's Pass@1 and Pass@n per difficulty ``(digits, terms)`` at T = 1, the
  distribution RL samples from (``difficulty``); a difficulty *fits* when its rewards are
  mixed, its boundary has room and sits at a large k (``fits``: Pass@1 at least
  ``min_pass1``, Pass@n at most ``max_passn``, the base's mid-curve k at least
  ``min_mid_k``). The training mix (``levels``) is stated in the profile; the chapter says
  whether each of its levels fits.
* *The protocol* (``plan``). From the base alone, everything that judges the claims is
  registered in the store (``protocol_of``, ``plan.register``): phase 1. No run begins until
  the protocol is in the results release of the checkout's commit (``committed``; ``make part``
  releases it, a commit keeps it); runs are judged only where they began from such a commit
  (``plan.admitted``): phase 2.
* *The runs, in parts.* The training chapter's settings with ``train``'s changes for this model
  (LoRA, its learning rate, batch and token budget, and the packed passes, ``rl.packing``: the
  same log-probabilities up to rounding, each long prompt computed once and no padding), on
  ``tasks.arithmetic.ArithmeticMix(levels)``, GRPO and GRPO-N over ``seeds``, look after look
  (``looks``). Each job trains one run and then evaluates it (``run_job``), so that a part
  stopped by ``store.PartOver`` has evaluated every run it finished; the next part restores
  them from the release, weights withheld, and needs none of them. Their held-out dynamics give
  the training claims (``rl.readings``).
* *The boundary.* The base (sampled ``base_repeats`` times) and every final model, n samples
  on each level's test problems and on harder levels (``ood_levels``), under each setting:
  Pass@k (Table 2's layout), the entropies (Table 4's), the problems lost and gained against
  the base (``boundary``), and the large-k and entropy claims (``comparison.claims.decided``),
  each read at the protocol's looks at the look's confidence and stopped by its rule
  (``judged``), under the chosen grader (the paper's where the format allows) and, beside
  it, the other (``regraded``).

A build of another profile computes nothing here: it shows ``source``'s results where that
profile has made them (its runs and evaluations in the store, and the marker this chapter
writes when it finishes there), and otherwise says how to make them.

Its figures are in ``figures``, its tables for people in ``shown``, its words (and the rows
it hands to ``verdicts.record``) in ``sentences``.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pydantic import ValidationError, model_validator

from rlvr_dynamics import measure as ev
from rlvr_dynamics import registry, verdicts
from rlvr_dynamics.chapters.pretrained import plan
from rlvr_dynamics.chapters import (ChapterParams, Int, ListOf, ParameterError, Probability,
                                    Text, require)
from rlvr_dynamics.comparison.case import STEPWISE_SHARE
from rlvr_dynamics.comparison.claims import Decided, decided
from rlvr_dynamics.comparison.models import (Model, Setting, comparison, evaluate_models,
                                             run_spec)
from rlvr_dynamics.comparison.metrics import entropy_long, passk_long  # noqa: F401 (the page's)
from rlvr_dynamics.comparison.metrics import entropy_problems, mid_curve, passk_problems
from rlvr_dynamics.rl.readings import verdict_rows  # noqa: F401 (the page's)
from rlvr_dynamics.parallel import pool_map
from rlvr_dynamics.store import (DONE, Entry, PartOver, checkout_commit, config_key, read_json,
                                 results_dir)
from rlvr_dynamics.tasks.arithmetic import PROMPTS, ArithmeticMix, ArithmeticTask, extract
from rlvr_dynamics.tasks.math import last_boxed
from rlvr_dynamics.passk import ks_for, pass_at_k
from rlvr_dynamics.rl.algorithms import ALGORITHMS, BASE  # noqa: F401 (BASE: the page's)
from rlvr_dynamics.rl.config import TrainConfig
from rlvr_dynamics.rl.grid import Training
from rlvr_dynamics.rl.readings import dynamics_of, readings  # noqa: F401 (the page's)
from rlvr_dynamics.rl.runs import obtain as obtain_run, run_dir
from rlvr_dynamics.stats import CONFIDENCE

Level = ListOf(Int(1), 2)
"""A difficulty: [digits, terms]."""


class Params(ChapterParams):
    """``source``: the profile whose results this chapter shows (None: this build's own,
    computed where missing); the model and the training changes (``train``: fields of the
    training chapter's parameters); the training mix ``levels`` and the harder ``ood_levels``;
    the difficulties measured (``difficulty_levels``, ``difficulty_n`` samples at T = 1) and
    the rule that a difficulty fits (``min_pass1``, ``max_passn``, ``min_mid_k``); ``algorithms`` x ``seeds``,
    each probed every ``probe_every`` steps (``probe_samples`` samples of ``probe_problems``
    test problems: at least the levels' mid-curve k); ``looks``: the seeds per algorithm at
    which the protocol reads its claims (the last all of them; ``plan.looks``); ``committed``:
    begin no run until the protocol is committed in the results release, and judge only runs
    begun from such a commit (False: by the store's times alone, said on the page);
    the evaluation: the first ``problems`` test problems of each level, ``n`` samples under each
    of ``settings``, Pass@k at ``ks``, the base ``base_repeats`` times, ``workers`` side by side
    in batches of ``batch_size`` rows; ``boxed_only``: grade the boxed answer alone, as the
    paper does (``tasks.arithmetic``; the default also takes the last integer of a text
    without one); ``record``: keep this chapter's verdicts for the closing chapter (off where
    another chapter of the build records the same claims); ``training``: the training
    chapter's settings that ``train`` changes."""

    training: Training = Training()

    source: Text | None = "cpu-smollm2"
    train: dict[str, Any] = {
        "model": "smollm2", "task": "arith", "lora_rank": 16, "learning_rate": 1e-4,
        "steps": 96, "num_generations": 8, "generation_batch": 32, "update_batch": 8,
        "micro_batch": 8, "entropy_coef": 0.0, "max_completion_length": 64, "context": 256,
        "eval_every": 16, "eval_problems": 32, "eval_batch": 32, "checkpoint_every": 8,
        "packed": True}
    levels: ListOf(Level) = [[1, 2], [1, 3]]
    ood_levels: ListOf(Level, 0) = [[2, 2]]
    difficulty_levels: ListOf(Level) = [[1, 2], [1, 3], [1, 4], [2, 2], [2, 3]]
    difficulty_n: Int(1) = 16
    min_pass1: Probability = 0.02
    max_passn: Probability = 0.95
    min_mid_k: Int(1) = 4
    algorithms: ListOf(str) = ["grpo", "grpo_n"]
    seeds: ListOf(Int(0)) = [0, 1, 2, 3, 4]
    looks: ListOf(Int(2)) = [3, 5]
    committed: bool = True
    probe_every: Int(1) = 24
    probe_problems: Int(1) = 16
    probe_samples: Int(1) = 16
    problems: Int(1) = 16
    n: Int(1) = 16
    ks: ListOf(Int(1)) = [1, 2, 4, 8, 16]
    settings: dict[str, Setting] = {"paper": {"temperature": 0.6, "top_p": 0.95},
                                       "full": {"temperature": 1.0, "top_p": 1.0}}
    base_repeats: Int(1) = 2
    workers: Int(1) = 2
    batch_size: Int(1) = 256
    prompts: ListOf(str) = list(PROMPTS)
    format_problems: Int(1) = 32
    format_n: Int(1) = 16
    min_boxed: Probability = 0.8
    prompt: Text | None = None
    boxed_only: bool | None = None
    record: bool = True

    @model_validator(mode="after")
    def _cross(self):
        for name in self.algorithms:
            require(name in ALGORITHMS, f"algorithms has {name!r}; valid: {sorted(ALGORITHMS)}")
        require(max(self.ks) <= self.n, f"every k must be <= n={self.n}, got ks={self.ks}")
        require(self.min_mid_k <= self.difficulty_n, f"min_mid_k={self.min_mid_k} must be "
                f"<= difficulty_n={self.difficulty_n} (the mid-curve k is read within them)")
        require(self.n in self.ks, f"ks must hold n={self.n} (the boundary's k), got {self.ks}")
        require(len(self.settings) >= 1, "settings must name at least one setting")
        require(self.source != self.profile, f"source={self.source!r} is this build's own "
                                             "profile: give None to compute its results here")
        for name in ("levels", "ood_levels", "difficulty_levels"):
            for digits, terms in getattr(self, name):
                try:
                    ArithmeticTask(digits=digits, terms=terms)
                except ValueError as e:
                    require(False, f"{name} has [{digits}, {terms}]: {e}")
        require(not {tuple(x) for x in self.levels} & {tuple(x) for x in self.ood_levels},
                "ood_levels must not repeat a training level")
        for name in [*self.prompts, *([self.prompt] if self.prompt is not None else [])]:
            require(name in PROMPTS, f"prompts and prompt take {PROMPTS}, got {name!r}")
        require(len(self.prompts) >= 1, "prompts must name at least one candidate")
        require(bool(self.looks) and self.looks[-1] == len(self.seeds)
                and all(b > a for a, b in zip(self.looks, self.looks[1:])),
                f"looks must increase to the {len(self.seeds)} seeds (the last look reads "
                f"them all), got {self.looks}")
        return self

    def settled(self) -> Params:
        """These parameters, where the format is settled (``settle``); an error otherwise."""
        if self.prompt is None or self.boxed_only is None:
            raise ValueError("the prompt and the grader are chosen by the format's measurement "
                             "first: use settle(P, formats(P, profile))")
        return self

    def mix(self) -> ArithmeticMix:
        """The training task: the mix of ``levels`` under the settled prompt and grader."""
        P = self.settled()
        return ArithmeticMix(levels=tuple(tuple(x) for x in P.levels),
                             boxed_only=P.boxed_only, prompt=P.prompt)

    def benchmarks(self) -> list[dict[str, Any]]:
        """Each training level's test problems, then each harder level's."""
        P = self.settled()
        return [level_spec(x, P.boxed_only, P.prompt) for x in P.levels + P.ood_levels]


def level_spec(level: list[int], boxed_only: bool = False, prompt: str = "instruction",
               split: str = "test") -> dict[str, Any]:
    """The benchmark spec of one difficulty's ``split`` under ``prompt`` (graded
    ``boxed_only`` where asked); fields at their defaults left out."""
    return {"name": "arith", "digits": level[0], "terms": level[1],
            **({"boxed_only": True} if boxed_only else {}),
            **({"prompt": prompt} if prompt != "instruction" else {}),
            **({"split": split} if split != "test" else {})}


def training_params(P: Params) -> Training:
    """The training chapter's settings (this build's) with ``P.train``'s changes; one that does
    not fit is an error naming it."""
    try:
        return Training.model_validate({**P.training.model_dump(), **P.train,
                                        "algorithms": P.algorithms, "seeds": P.seeds,
                                        "lambdas": []})
    except ValidationError as e:
        err = e.errors()[0]
        raise ParameterError(f"pretrained: parameter train[{'.'.join(map(str, err['loc']))}]: "
                             f"{err['msg'].removeprefix('Value error, ')}") from None


def runs(P: Params, registration: str | None = None) -> dict[tuple[str, int], TrainConfig]:
    """(algorithm, seed) -> its run: the training settings on the mix ``P.levels``, probed
    every ``probe_every`` steps by ``probe_samples`` samples of ``probe_problems`` of its test
    problems (``rl.probe.SampledProbe``), begun under ``registration`` (the plan's protocol's
    content hash, ``TrainConfig.registration``)."""
    T = training_params(P)
    return {(a, s): T.run_config(a, s).replace(
                task=P.mix(), probe_every=P.probe_every, probe_problems=P.probe_problems,
                probe_samples=P.probe_samples, registration=registration)
            for a in P.algorithms for s in P.seeds}


def eval_settings(P: Params) -> dict[str, ev.EvalSettings]:
    """Each named setting as the evaluation stack's (n samples, the runs' token budget)."""
    budget = training_params(P).max_completion_length
    return {name: ev.EvalSettings(n=P.n, temperature=s.temperature, top_p=s.top_p,
                                  max_tokens=budget, chunk=P.problems)
            for name, s in P.settings.items()}


# --- the task ------------------------------------------------------------------------------

def difficulty(P: Params, profile: str) -> pd.DataFrame:
    """The base's Pass@k (%) per difficulty of ``P.difficulty_levels`` (k = 1 and powers of two
    up to ``difficulty_n``), from ``difficulty_n`` samples at T = 1 on ``P.problems`` test
    problems each, with the share of completions cut at the token budget (evaluated where
    missing)."""
    T = training_params(P)
    s = ev.EvalSettings(n=P.difficulty_n, temperature=1.0, top_p=1.0,
                        max_tokens=T.max_completion_length, chunk=P.problems)
    P = P.settled()
    specs = [level_spec(x, P.boxed_only, P.prompt) for x in P.difficulty_levels]
    found = ev.evaluate_table([T.model], specs, s, profile, batch_size=P.batch_size,
                              problems=P.problems)
    ks, every = ks_for(P.difficulty_n), list(range(1, P.difficulty_n + 1))
    rows = []
    for level, spec in zip(P.difficulty_levels, specs):
        recs = found[registry.spec_text(spec), registry.spec_text(T.model)].drop(columns="repeat")
        curve = 100 * ev.passk_per_problem(recs, every).mean(0)
        rows.append({"digits": level[0], "terms": level[1],
                     **{f"Pass@{k}": curve[k - 1] for k in ks},
                     "mid-curve k": mid_k(curve),
                     "cut at the budget (%)": 100 * float((~recs["finished"]).mean())})
    return pd.DataFrame(rows).set_index(["digits", "terms"])


def mid_k(curve: np.ndarray) -> int:
    """The base's mid-curve k within its samples: of k = 1 .. n (``curve``: Pass@k in per cent
    at each, unbiased), the one whose Pass@k is closest to 50 % (``passk.mid_curve_k``'s rule,
    without extrapolating past n; the smaller k on a tie)."""
    return int(np.argmin(np.abs(np.asarray(curve, float) - 50.0))) + 1


def fits(table: pd.DataFrame, P: Params) -> pd.Series:
    """Per difficulty, whether it leaves mixed rewards (Pass@1 >= ``min_pass1``), room for
    the boundary (Pass@n <= ``max_passn``) and a boundary read at a large k (the base's
    mid-curve k at least ``min_mid_k``: a large-k claim read at k = 1 is not the paper's)."""
    return ((table["Pass@1"] >= 100 * P.min_pass1)
            & (table[f"Pass@{P.difficulty_n}"] <= 100 * P.max_passn)
            & (table["mid-curve k"] >= P.min_mid_k)).rename("fits")


# --- the format ----------------------------------------------------------------------------

def formats(P: Params, profile: str) -> pd.DataFrame:
    """The base under each prompt (``candidates``) on each training level: ``format_n``
    samples at T = 1 (RL's sampling distribution) of the level's first ``format_problems``
    training problems (evaluated where missing, graded leniently so that every right answer
    is counted): the right answers, the share of them boxed, Pass@1 and
    Pass@``format_n`` (%) under the lenient grader and under the paper's (the boxed answer
    alone: right and boxed), and the share cut at the token budget."""
    T = training_params(P)
    s = ev.EvalSettings(n=P.format_n, temperature=1.0, top_p=1.0,
                        max_tokens=T.max_completion_length, chunk=P.format_problems)
    plan = {(prompt, tuple(x)): level_spec(x, prompt=prompt, split="train")
            for prompt in candidates(P) for x in P.levels}
    found = ev.evaluate_table([T.model], list(plan.values()), s, profile,
                              batch_size=P.batch_size, problems=P.format_problems)
    ks = [1, P.format_n]
    rows = []
    for (prompt, (digits, terms)), spec in plan.items():
        recs = found[registry.spec_text(spec), registry.spec_text(T.model)].drop(
            columns="repeat")
        right = recs["correct"].astype(bool)
        boxed = is_boxed(recs)
        lenient = ev.passk_per_problem(recs, ks).mean(0)
        paper = ev.passk_per_problem(recs.assign(correct=right & boxed), ks).mean(0)
        rows.append({"prompt": prompt, "digits": digits, "terms": terms,
                     "right answers": int(right.sum()),
                     "boxed, of the right": 100 * float(boxed[right].mean())
                     if right.any() else float("nan"),
                     "Pass@1": 100 * lenient[0], f"Pass@{P.format_n}": 100 * lenient[1],
                     "Pass@1, boxed only": 100 * paper[0],
                     f"Pass@{P.format_n}, boxed only": 100 * paper[1],
                     "cut at the budget (%)": 100 * float((~recs["finished"]).mean())})
    return pd.DataFrame(rows).set_index(["prompt", "digits", "terms"])


def is_boxed(recs: pd.DataFrame) -> pd.Series:
    """Per sampled record, whether its text holds a ``\\boxed{}`` answer (the paper's grader
    reads the last one, ``tasks.math.last_boxed``)."""
    return recs["text"].astype(str).map(lambda t: last_boxed(t) is not None)


def candidates(P: Params) -> list[str]:
    """The prompts measured: ``P.prompts``, and ``P.prompt`` where it is given."""
    return list(dict.fromkeys([*P.prompts, *([P.prompt] if P.prompt else [])]))


def chosen(table: pd.DataFrame, P: Params) -> tuple[str, bool]:
    """The rule, fixed before any run: a prompt qualifies where the base boxes at least
    ``min_boxed`` of its right answers on the training levels (pooled: every right answer
    counts once); of the qualified prompts (of ``P.prompts``, or ``P.prompt`` alone where it is
    given) the one with the highest boxed-only Pass@1 (mean over the levels: the paper's
    reward then has the most signal) is taken and graded as the paper grades
    (``boxed_only``). Where none qualifies, the one that boxes the most, graded leniently.
    Ties go to the earlier prompt."""
    names = [P.prompt] if P.prompt else P.prompts
    boxed = boxed_share(table).reindex(names).fillna(0.0)
    signal = table.groupby("prompt", sort=False)["Pass@1, boxed only"].mean().reindex(names)
    qualified = boxed[boxed >= 100 * P.min_boxed].index
    if len(qualified):
        return str(signal[qualified].idxmax()), True
    return str(boxed.idxmax()), False


def boxed_share(table: pd.DataFrame) -> pd.Series:
    """Per prompt of ``formats``' table, the share (%) of the base's right answers that it
    boxed, pooled over the levels (NaN where it had none)."""
    right = table["right answers"]
    boxed = right * table["boxed, of the right"].fillna(0.0) / 100
    per = pd.DataFrame({"right": right, "boxed": boxed}).groupby("prompt", sort=False).sum()
    return (100 * per["boxed"] / per["right"].where(per["right"] > 0)).rename("boxed")


def settle(P: Params, table: pd.DataFrame) -> Params:
    """``P`` with its prompt and grader fixed: where None, as ``chosen`` from the format's
    measurement ``table``."""
    prompt, paper = chosen(table, P)
    return type(P).parse({**P.values(), "prompt": prompt,
                          "boxed_only": paper if P.boxed_only is None else P.boxed_only})


# --- the protocol --------------------------------------------------------------------------

def protocol_of(P: Params, table: pd.DataFrame) -> dict[str, Any]:
    """What the protocol registers before any run (``plan``), from the settled parameters and
    the base's difficulty table: the model, prompt and grader, the levels and each training
    level's mid-curve k, the probe, the algorithms, seeds and steps, the looks and their
    bounds, the margins and rules, the evaluation and every run's key, and where it falls
    below issue 52's floor. A probe that cannot read a level's mid-curve k is refused."""
    T = training_params(P)
    mid = {f"{d}-digit x {t}": int(table.loc[(d, t), "mid-curve k"]) for d, t in P.levels
           if (d, t) in table.index}
    short = {level: k for level, k in mid.items() if k > P.probe_samples}
    if short:
        raise ParameterError(f"pretrained: parameter probe_samples={P.probe_samples} is below "
                             f"the base's mid-curve k {short}: the probe could not read "
                             "Pass@k there")
    what = {"model": registry.spec_text(T.model), "prompt": P.prompt,
            "grader": "paper (boxed only)" if P.boxed_only else "lenient",
            "levels": P.levels, "ood_levels": P.ood_levels, "mid-curve k": mid,
            "probe": {"every": P.probe_every, "problems": P.probe_problems,
                      "samples": P.probe_samples},
            "algorithms": P.algorithms, "seeds": P.seeds, "steps": T.steps,
            "eval_every": T.eval_every,
            "looks": plan.looks(len(P.seeds), P.looks), "spending": plan.SPENDING,
            "margins": plan.MARGINS, "rules": plan.RULES, "committed": P.committed,
            "problems": P.problems, "n": P.n, "ks": P.ks, "base_repeats": P.base_repeats,
            "evaluation": {k: dataclasses.asdict(v) for k, v in eval_settings(P).items()},
            "runs": {f"{a}-seed{s}": config_key(c.as_dict()) for (a, s), c in runs(P).items()}}
    return {**what, "below the floor": plan.shortfalls(what)}


@dataclass(frozen=True)
class Protocol:
    """The registered protocol (``record``, stored at ``path``), the commit whose results
    release first held it (None: not committed yet), and per run why it is not judged
    against it ("" where it is; ``plan.admitted``)."""

    record: dict[str, Any]
    path: Path
    commit: str | None
    admitted: dict[str, str]

    @property
    def refused(self) -> dict[str, str]:
        return {run: why for run, why in self.admitted.items() if why}


# --- the runs, one job each ------------------------------------------------------------------

def run_job(job: tuple) -> str:
    """One run trained (or found), then its final model evaluated under every setting on every
    benchmark (``evaluate_models``, inline); "" when done, or why it was not begun (the part's
    time ran out: ``store.PartOver``), so that the other jobs of a part still run."""
    cfg, label, seed, benchmarks, settings, where, inline, problems, batch_size = job
    try:
        folder = obtain_run(cfg, where, inline=inline)
    except PartOver as e:
        return str(e)
    evaluate_models([Model(label, seed, run_spec(folder))], benchmarks, settings, where,
                    problems=problems, workers=1, batch_size=batch_size)
    return ""


def train_and_evaluate(P: Params, grid: dict[tuple[str, int], TrainConfig], where: str,
                       inline: bool) -> dict[tuple[str, int], Path]:
    """Every run of ``grid`` trained and evaluated, ``P.workers`` jobs at a time (``run_job``);
    where a part's time ran out for some, ``store.PartOver`` once the others are done."""
    benchmarks = [registry.spec_text(b) for b in P.benchmarks()]
    jobs = [(c, ALGORITHMS[a].label, P.seeds.index(s), benchmarks, eval_settings(P), where,
             inline, P.problems, P.batch_size) for (a, s), c in grid.items()]
    left = [why for why in pool_map(run_job, jobs, P.workers, desc="runs") if why]
    if left:
        raise PartOver(f"{len(left)} of {len(jobs)} runs not begun: {left[0]}")
    return {k: run_dir(c, where) for k, c in grid.items()}


def ordered(grid: dict[tuple[str, int], TrainConfig]) -> dict[tuple[str, int], TrainConfig]:
    """``grid`` seed by seed, each seed's algorithms together (a part ends with whole seeds)."""
    return dict(sorted(grid.items(), key=lambda kv: (kv[0][1], kv[0][0])))


# --- the looks -------------------------------------------------------------------------------

def at_look(recs: dict[tuple, pd.DataFrame], seeds: int) -> dict[tuple, pd.DataFrame]:
    """The evaluations a look reads: the base's, and each trained model's first ``seeds``
    (seed indices below it)."""
    return {k: r for k, r in recs.items() if k[2] == BASE or k[3] < seeds}


def regraded(recs: dict[tuple, pd.DataFrame], boxed_only: bool) -> dict[tuple, pd.DataFrame]:
    """The same samples under another grader (``tasks.arithmetic.extract``: the last
    ``\\boxed{}`` alone where ``boxed_only``, else the last integer where there is none):
    answers and correctness read again from the texts, nothing sampled."""
    out = {}
    for key, r in recs.items():
        answer = r["text"].astype(str).map(lambda t: extract(t, boxed_only=boxed_only))
        out[key] = r.assign(answer=answer, correct=answer == r["gold"].astype(str))
    return out


def outcomes(P: Params, recs: dict[tuple, pd.DataFrame], seeds: int, confidence: float
             ) -> dict[str, str]:
    """claim -> its verdict at a look of ``seeds`` seeds read at ``confidence``: the checks that
    vote on every level combined (``verdicts.combine``)."""
    levels = decided_levels(P, at_look(recs, seeds), max(P.ks), confidence)
    return {claim: verdicts.combine([x.verdict for _, d in per for x, _ in d.votes])
            for claim, per in levels.items()}


@dataclass(frozen=True)
class Judged:
    """The looks read (the protocol's ``looks``, as far as the runs went), each look's verdict
    per claim, and the look at which each claim stopped (``plan.stopped``)."""

    looks: list[dict[str, float]]
    outcomes: list[dict[str, str]]
    stops: dict[str, int]


def judged(looks: list[dict[str, float]], seen: list[dict[str, str]]) -> Judged:
    """The claims' verdicts at the looks read (``seen``: ``outcomes`` per look) and where each
    stops (``plan.stopped``)."""
    return Judged(list(looks[:len(seen)]), list(seen), plan.stopped(seen))


def decisions(P: Params, recs: dict[tuple, pd.DataFrame], J: Judged
              ) -> dict[str, list[tuple[str, Decided]]]:
    """Each claim's decisions per level at the look where it stopped (what the page writes)."""
    out = {}
    for claim, i in J.stops.items():
        look = J.looks[i]
        out[claim] = decided_levels(P, at_look(recs, int(look["seeds"])), max(P.ks),
                                    look["confidence"])[claim]
    return out


# --- the results ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Results:
    """What the chapter shows, from the profile ``where`` (``P``: its parameters): the format,
    the difficulty table, the protocol, and (phase 2) the runs' dynamics, the evaluations and
    the claims judged look by look (``judged``: None where the protocol refused a run)."""

    where: str
    P: Params
    formats: pd.DataFrame
    difficulty: pd.DataFrame
    protocol: Protocol | None
    dynamics: dict[str, list[list[dict[str, Any]]]]
    recs: dict[tuple, pd.DataFrame]
    judged: Judged | None = None


class NotCommitted(RuntimeError):
    """Phase 1 done: the protocol is registered, and no run may begin until it is committed in
    the results release of the checkout's commit."""


def marker(profile: str) -> Entry:
    """This chapter's finished marker under ``profile`` (made by this module's code)."""
    return Entry(results_dir(profile, "pretrained"), code=__name__)


def source_params(P: Params) -> Params:
    """``P`` itself when it computes here, else the parameters that the ``source`` profile's
    run of this chapter recorded in its marker (what made the results shown, whatever its
    profile file says today)."""
    if P.source is None:
        return P
    return Params.parse(read_json(marker(P.source).path / DONE)["params"])


def available(P: Params) -> bool:
    """Whether this chapter has results to show under ``P`` (``execution.available``): always
    where it computes its own, else where ``P.source``'s profile finished it with this code."""
    return P.source is None or marker(P.source).done


def decided_levels(P: Params, recs: dict[tuple, pd.DataFrame], last: int,
                   confidence: float = CONFIDENCE) -> dict[str, list[tuple[str, Decided]]]:
    """The large-k and entropy claims decided per level (``comparison.claims.decided``, under
    the first setting, at the base's mid-curve k with k = ``last`` beside, intervals at
    ``confidence``): claim -> (level, its decision) for every training level, whose checks
    decide the claim together (``verdicts.combine``), and the harder level's claim once, from
    the first training level."""
    passk, entropy = passk_problems(recs, P.ks), entropy_problems(recs)
    mid = mid_curve(recs, P.ks)
    benchmarks = [registry.spec_text(b) for b in P.benchmarks()]
    trained = benchmarks[:len(P.levels)]
    ood = benchmarks[len(P.levels)] if P.ood_levels else trained[0]
    no_case = pd.DataFrame(columns=["setting", "benchmark", "model", "seed", STEPWISE_SHARE])
    per_level = {b: decided(passk, mid, entropy, no_case, list(P.settings),
                            next(iter(P.settings)), b, ood, "", last, confidence=confidence)
                 for b in trained}
    return {claim: [(b, per_level[b][claim])
                    for b in (trained[:1] if claim == "ood" else trained) if claim in per_level[b]]
            for claim in per_level[trained[0]]}


def claims(R: Results, profile: str, rows: list[dict]) -> pd.DataFrame:
    """The chapter's claim ``rows`` as its verdict table, kept for the closing chapter where
    this build computed them, ``Params.record`` asks it and the protocol admits every run
    (``verdicts.record``); rows of refused runs are never kept."""
    if R.judged is None:
        return pd.DataFrame(columns=["ours", "verdict"])
    if R.P.record and R.where == profile:
        return verdicts.record(profile, "pretrained", rows)
    return verdicts.chapter_table("pretrained", rows)


def looked(R: Results) -> Results:
    """``R`` with its dynamics cut to the seeds of the look where the protocol stopped (the
    training claims are read there, ``plan.RULES``)."""
    if R.judged is None:
        return R
    seeds = int(R.judged.looks[max(R.judged.stops.values(), default=0)]["seeds"])
    return dataclasses.replace(R, dynamics={k: v[:seeds] for k, v in R.dynamics.items()})


def obtain(P: Params) -> Results | None:
    """The chapter's results: computed here where missing (``P.source`` None; the marker,
    with the parameters, is written at the end), or read back from ``P.source`` where its
    marker says that profile finished this chapter with this code (its runs are then only
    found, never trained), or None where it has not.

    Phase 1: the format, the difficulty table, the base's evaluations and the protocol
    (registered); where ``committed`` and the checkout's commit does not hold the protocol in
    its results release, no run begins (``NotCommitted`` says how to go on). Phase 2: the runs, look
    after look, each trained and evaluated by one job; the claims read at each look, and no run
    of a later look begun once every claim has stopped; every run admitted by the protocol, or
    the claims not judged (``plan.admitted``)."""
    where = P.profile if P.source is None else P.source
    compute = P.source is None
    if not compute and not marker(where).done:
        return None
    Q = source_params(P)
    measured = formats(Q, where)
    Q = settle(Q, measured)
    table = difficulty(Q, where)
    record, path = plan.register(protocol_of(Q, table), where)
    base = comparison(training_params(Q).model, {}, base_repeats=Q.base_repeats)
    benchmarks = [registry.spec_text(b) for b in Q.benchmarks()]
    recs = evaluate_models(base, benchmarks, eval_settings(Q), where, problems=Q.problems,
                           workers=Q.workers, batch_size=Q.batch_size)
    commit = plan.committed_in(path)
    if compute and Q.committed and not plan.committed_at(path, checkout_commit()):
        raise NotCommitted(
            f"phase 1 done: the protocol is registered at {path}; no run begins until it is "
            f"committed in the results release. Release it (make part does at its end, or make "
            f"release PROFILE={where} PART=1), commit release/{where}, then run make part "
            f"PROFILE={where} HOURS=0.5 again")
    grid = ordered(runs(Q, plan.hash_of(record)))
    folders: dict[tuple[str, int], Path] = {}
    seen: list[dict[str, str]] = []
    for look in record["looks"]:
        n = int(look["seeds"])
        todo = {k: c for k, c in grid.items() if k[1] in Q.seeds[:n] and k not in folders}
        folders |= train_and_evaluate(Q, todo, where, inline=compute)
        trained = {ALGORITHMS[a].label: [folders[a, s] for s in Q.seeds[:n]]
                   for a in Q.algorithms}
        recs = evaluate_models(comparison(training_params(Q).model, trained, Q.base_repeats),
                               benchmarks, eval_settings(Q), where, problems=Q.problems,
                               workers=Q.workers, batch_size=Q.batch_size)
        seen.append(outcomes(Q, recs, n, look["confidence"]))
        if plan.every_claim_stopped(seen):
            break
    admitted = plan.admitted(record, path, list(folders.values()), Q.committed)
    protocol = Protocol(record, path, commit, admitted)
    J = judged(record["looks"], seen) if not protocol.refused else None
    if compute:
        marker(where).begin(fresh=True)
        marker(where).finish({"runs": len(folders), "params": P.values()})
    return Results(where, Q, measured, table, protocol, dynamics_of(trained), recs, J)


def beside_outcomes(R: Results) -> dict[str, str]:
    """claim -> its verdict under the other grader (``regraded``: the lenient one where the
    chapter grades as the paper does, else the paper's), read at the look where the chapter's
    grader stopped it: shown beside, never recorded."""
    if R.judged is None:
        return {}
    again = regraded(R.recs, not R.P.boxed_only)
    out = {}
    for claim, i in R.judged.stops.items():
        look = R.judged.looks[i]
        out[claim] = outcomes(R.P, again, int(look["seeds"]), look["confidence"]).get(claim, "")
    return out


def probe_at_mid(R: Results) -> pd.DataFrame:
    """Pass@k along training from the runs' sampled probes (``probe_passk``) at each training
    level's mid-curve k as the protocol registered it (the base's, from the difficulty table)."""
    mid = R.protocol.record["mid-curve k"]
    wanted = {f"d{d}t{t}": mid[f"{d}-digit x {t}"] for d, t in R.P.levels
              if f"{d}-digit x {t}" in mid}
    long = probe_passk(R.dynamics, sorted(set(wanted.values())))
    if long.empty:
        return long
    return long[long["k"] == long["level"].map(wanted)].reset_index(drop=True)


def answer_sources(recs: dict[tuple, pd.DataFrame]) -> pd.DataFrame:
    """Where the grader (``tasks.arithmetic.extract``: the last ``\\boxed{}``, else, unless
    ``boxed_only``, the last integer of the text) found the answers it counted right, per
    evaluation (setting, benchmark, model, seed; sampled records): the share of right
    samples, the share of the
    right ones that were boxed and of those the fallback found, and the Pass@1 that a
    boxed-only grader (as the paper grades, math-verify on the boxed answer) would give."""
    rows = []
    for (setting, bench, model, seed), r in recs.items():
        right = r["correct"].astype(bool).to_numpy()
        boxed = is_boxed(r).to_numpy()
        rows.append({"setting": setting, "benchmark": bench, "model": model, "seed": seed,
                     "right": right.mean(),
                     "boxed, of the right": boxed[right].mean() if right.any() else float("nan"),
                     "Pass@1, boxed only": (right & boxed).mean()})
    out = pd.DataFrame(rows)
    return out.assign(**{"fallback, of the right": 1 - out["boxed, of the right"]})


def probe_passk(dynamics: dict[str, list[list[dict[str, Any]]]], ks: list[int]
                ) -> pd.DataFrame:
    """Pass@k (%) along training from the runs' sampled probes (the unbiased estimator of
    each problem's right samples, mean over the problems of a level): columns model, seed,
    step, setting, level ("d<digits>t<terms>", from the problem ids), k, pass@k."""
    rows = []
    for label, per_seed in dynamics.items():
        for seed, run in enumerate(per_seed):
            for r in run:
                for setting, probe in r.get("sampled_probe", {}).items():
                    usable = [k for k in ks if k <= probe["n"]]
                    per = pass_at_k(probe["n"], probe["correct"], usable)
                    levels = pd.Series([i.split("-", 1)[0] for i in probe["ids"]])
                    for level, idx in levels.groupby(levels).groups.items():
                        rows += [{"model": label, "seed": seed, "step": r["step"],
                                  "setting": setting, "level": level, "k": k,
                                  "pass@k": 100 * float(v)}
                                 for k, v in zip(usable, per[list(idx)].mean(0))]
    return pd.DataFrame(rows)
