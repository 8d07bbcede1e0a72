"""The training chapter (``notebooks/training.md``): GRPO, GRPO-N, GSPO and GSPO-N on TRL
(``rlvr_dynamics.rl``), their runs over seeds, the lambda family between GRPO and GRPO-N,
Figure 2's dynamics and the paper's four readings of it.

The readings (Section 4.2), checked on runs over several seeds (``stats``):

1. all algorithms reach competitive greedy accuracy: no algorithm ends more than
   ``ACCURACY_MARGIN`` below GRPO;
2. GRPO collapses the entropy: every other algorithm ends above it;
3. under GRPO-N, GSPO and GSPO-N the entropy first falls, then rises: at the step t*
   where it is lowest (strictly after the start and before the end, picked for each seed on
   the other seeds' mean curve) it is below the base, and at the end above its value at t*;
4. under GRPO-N it ends above the base model's.

The entropy is that of the training rollouts (``ENTROPY``, Figure 2's actor entropy), the
held-out entropy of greedy completions read beside it (``HELD_OUT``). Each is a check over
seeds with a Student-t interval and a margin declared here (``ACCURACY_MARGIN``,
``ENTROPY_MARGIN``; ``stats``); ``VERDICT_CLAIMS`` says which claim of
``verdicts`` each decides. Figure 2 and the sweep over lambda are drawn by ``figures``, the
sentences (the settings, the verdict rows' "ours") written by ``sentences``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml
from pydantic import model_validator

from rlvr_dynamics import REPO, registry, stats
from rlvr_dynamics.chapters import Int, ListOf, NeedsParams, Real, Text, needed, require
from rlvr_dynamics.paper_tables import entropy_table
from rlvr_dynamics.pretrain import PretrainConfig
from rlvr_dynamics.rl import algorithms
from rlvr_dynamics.rl.algorithms import ALGORITHMS
from rlvr_dynamics.rl.config import Settings, TrainConfig
from rlvr_dynamics.rl.dynamics import HELDOUT_PREFIXES, curve, summary
from rlvr_dynamics.rl.runs import load_dynamics, obtain_all
from rlvr_dynamics.verdicts import PAPER_ALGORITHMS


class Params(NeedsParams, Settings):
    """The runs (``algorithms`` x ``seeds``, and GRPO at each of ``lambdas`` x ``seeds``), the
    policy (``model``: ``sums-base`` -- the base-model chapter's base -- or another registry
    model, with ``task``), and every setting of a run (``rl.config.Settings``, declared
    there once and inherited here; Appendix C.2 for the paper profile). ``train_inline``: train
    missing runs here (CPU), ``workers`` at a time; otherwise a missing run is an error that
    gives its launch command."""

    needs = ("base_model",)

    algorithms: ListOf(str) = ["grpo", "grpo_n", "gspo", "gspo_n"]
    seeds: ListOf(Int(0)) = [0, 1, 2]
    lambdas: ListOf(Real(0, 1, open_lo=True), 0) = [0.1, 0.5]
    model: Text = registry.BASE_MODEL
    task: str = "sums"
    train_inline: bool = True
    workers: Int(1) = 2

    @model_validator(mode="after")
    def _cross(self):
        for name in self.algorithms:
            require(name in ALGORITHMS, f"algorithms has {name!r}; valid: {sorted(ALGORITHMS)}")
        require(self.task in registry.TASKS, f"task={self.task!r} must be one of "
                                             f"{list(registry.TASKS)}")
        for lam in self.lambdas:
            require(lam < 1, f"lambdas has {lam}: must be < 1 (lambda = 1 is GRPO itself)")
        require(self.model != registry.BASE_MODEL or self.task == "sums",
                f"model={registry.BASE_MODEL!r} is the base model of the sums task; "
                f"task={self.task!r} needs a model trained for it")
        self.runs()  # every run must make a valid TrainConfig
        return self

    def base(self) -> PretrainConfig | str:
        """The policy every run starts from: the base-model chapter's base for ``sums-base``."""
        if self.model == registry.BASE_MODEL:
            return needed(self, "base_model").config()
        return self.model

    def run_config(self, algorithm: str, seed: int, positive_weight: float | None = None
                   ) -> TrainConfig:
        """The run of ``algorithm`` and ``seed`` (and lambda ``positive_weight``); the regime
        knobs and probes are set by the chapters that read them (``TrainConfig.replace``)."""
        try:
            return TrainConfig(algorithm=algorithm, model=self.base(),
                               task=None if self.model == registry.BASE_MODEL else self.task,
                               positive_weight=positive_weight, seed=seed,
                               settings=Settings.of(self))
        except (FileNotFoundError, TypeError) as e:
            raise ValueError(str(e)) from None

    def runs(self) -> dict[tuple[str, int, float | None], TrainConfig]:
        """Every run of the chapter, keyed (algorithm, seed, lambda or None)."""
        grid = {(a, s, None): self.run_config(a, s) for a in self.algorithms for s in self.seeds}
        grid |= {("grpo", s, lam): self.run_config("grpo", s, lam)
                 for lam in self.lambdas for s in self.seeds}
        return grid


PAPER = REPO / "configs" / "paper.yaml"
"""The ``paper`` profile: Appendix C.2's training settings are written there once (with the
ones it leaves unsaid, from verl and Zhu et al.'s scripts, and why)."""

APPENDIX_C2 = ("model", "task", "steps", "num_generations", "generation_batch", "update_batch",
               "micro_batch", "learning_rate", "weight_decay", "beta", "epsilon", "dual_clip",
               "entropy_coef", "temperature", "max_completion_length", "context", "loss_type",
               "eval_every", "eval_problems", "use_vllm", "bf16")
"""The settings shown beside the paper's (``settings_table``)."""


def paper_settings() -> dict[str, Any]:
    """The paper's value of each of ``APPENDIX_C2``: the ``paper`` profile's training
    parameters, over the defaults it does not change."""
    profile = yaml.safe_load(PAPER.read_text())["notebooks"]["training"]
    return {k: profile.get(k, Params.model_fields[k].default) for k in APPENDIX_C2}


def paper_rate_travel(T: Params) -> dict[str, float] | None:
    """How far Adam would move a weight at the paper's learning rate over ``T``'s updates
    (about the rate per update) beside the base's mean absolute weight in its matrices; None
    where ``T`` runs at the paper's rate."""
    paper = paper_settings()["learning_rate"]
    if T.learning_rate == paper:
        return None
    updates = T.steps * (T.generation_batch // T.update_batch)
    model, _ = registry.load_model(T.base(), T.profile)
    matrices = [p.detach() for p in model.parameters() if p.ndim >= 2]
    scale = float(sum(p.abs().sum() for p in matrices) / sum(p.numel() for p in matrices))
    return {"paper": paper, "updates": updates, "travel": paper * updates, "weight": scale}


def settings_table(T: Params) -> pd.DataFrame:
    """This run's settings beside the paper's (``paper_settings``)."""
    paper = paper_settings()
    return pd.DataFrame({f"this run ({T.profile})": [getattr(T, k) for k in paper],
                         "paper (Appendix C.2)": list(paper.values())},
                        index=list(paper)).astype(str)


def obtain_runs(T: Params, profile: str, *, lambdas: bool = True, workers: int | None = None
                ) -> dict[tuple[str, int, float | None], Path]:
    """The finished runs of ``T.runs()`` (without the lambda family unless ``lambdas``),
    trained first where missing, ``workers`` at a time (``rl.runs.obtain_all``)."""
    grid = {k: cfg for k, cfg in T.runs().items() if lambdas or k[2] is None}
    return dict(zip(grid, obtain_all(list(grid.values()), profile, inline=T.train_inline,
                                     workers=workers or T.workers)))


def by_algorithm(T: Params, folders: dict[tuple, Path]) -> dict[str, list[Path]]:
    """label -> the algorithm's runs, one per seed in seed order."""
    return {algorithms.get(a).label: [folders[a, s, None] for s in T.seeds] for a in T.algorithms}


def by_lambda(T: Params, folders: dict[tuple, Path]) -> dict[float, list[Path]]:
    """lambda -> GRPO's runs at that weight, one per seed in seed order."""
    return {lam: [folders["grpo", s, lam] for s in T.seeds] for lam in T.lambdas}


def dynamics_of(runs: dict[Any, list[Path]]) -> dict[Any, list[list[dict[str, Any]]]]:
    """label -> one logged record list per seed (``rl.dynamics.records``)."""
    return {label: [load_dynamics(f) for f in folders] for label, folders in runs.items()}


def algorithm_table() -> pd.DataFrame:
    """The registered algorithms (``rl.algorithms``): where each takes its importance
    ratio, its weight lambda on positive samples, and its advantage (group-relative, or
    REINFORCE-style mu r - (1 - r) for NSR and W-REINFORCE)."""
    return pd.DataFrame([{"algorithm": a.label, "importance ratio": a.importance_sampling_level,
                          "λ (weight on positive samples)": a.positive_weight,
                          "advantage": ("group-relative" if a.reinforce is None else
                                        f"{a.reinforce:g} r - (1 - r), no group baseline")}
                         for a in ALGORITHMS.values()]).set_index("algorithm")


# --- the held-out curves in numbers ------------------------------------------------------------

SHARE, PATH_ENTROPY = HELDOUT_PREFIXES
"""The logged share of held-out greedy completions on a path (``SHARE + path``) and their
token entropy (``PATH_ENTROPY + path``), as ``rl.dynamics.heldout_entry`` writes them."""


def end_values(dynamics: dict[str, list[list[dict[str, Any]]]], key: str
               ) -> dict[str, np.ndarray]:
    """label -> the last value of ``key`` as the readings take it (``reading_curve``), one per
    seed."""
    return {label: reading_curve(runs, key)[1][:, -1] for label, runs in dynamics.items()}


def seed_summaries(dynamics: dict[str, list[list[dict[str, Any]]]]) -> dict[str, pd.DataFrame]:
    """label -> one row per seed of ``rl.dynamics.summary`` (the held-out curves at the
    base, at the lowest entropy and at the end)."""
    return {label: pd.DataFrame([summary(r) for r in runs]) for label, runs in dynamics.items()}


def held_out_table(dynamics: dict[str, list[list[dict[str, Any]]]]) -> pd.DataFrame:
    """Per algorithm, ``seed_summaries`` averaged over seeds, with the standard deviation over
    seeds of the final accuracy and entropy (``sd`` columns; NaN with one seed)."""
    rows = seed_summaries(dynamics)
    table = pd.DataFrame({label: df.mean() for label, df in rows.items()}).T
    for key in ("accuracy_end", "entropy_end"):
        table[f"sd {key}"] = [df[key].std(ddof=1) for df in rows.values()]
    return table


def lambda_ends(dynamics: dict[str, list[list[dict[str, Any]]]],
                sweep: dict[float, list[list[dict[str, Any]]]]) -> dict[float, list[dict]]:
    """lambda -> the last record of each seed's run: GRPO-N's at 0, the sweep's, GRPO's at 1
    (a lambda without runs left out)."""
    final = {0.0: [r[-1] for r in dynamics.get("GRPO-N", [])],
             **{lam: [r[-1] for r in runs] for lam, runs in sweep.items()},
             1.0: [r[-1] for r in dynamics.get("GRPO", [])]}
    return {lam: v for lam, v in final.items() if v}


def entropy_ratios(dynamics: dict[str, list[list[dict[str, Any]]]], profile: str
                   ) -> pd.DataFrame:
    """Per algorithm, the token entropy at the end over the base's: the paper's (Table 4, AMC
    2023 and AIME 2025; NaN for the algorithms it did not train, NSR and W-REINFORCE) beside
    ours (held-out, mean and sd over seeds)."""
    token = entropy_table().loc["Token-Level Entropy"]
    base = token.loc["Qwen2.5-Math-7B"]
    rows = seed_summaries(dynamics)

    def paper(label: str, bench: str) -> float:
        key = f"Qwen2.5-Math-7B {label}"
        return token.loc[key, bench] / base[bench] if key in token.index else np.nan

    ratios = pd.DataFrame({label: {
        "paper, AMC 2023": paper(label, "AMC 2023"),
        "paper, AIME 2025": paper(label, "AIME 2025"),
        f"ours ({profile}), mean": (rows[label]["entropy_end"] / rows[label]["entropy_base"]).mean(),
        f"ours ({profile}), sd": (rows[label]["entropy_end"] / rows[label]["entropy_base"]).std(ddof=1),
    } for label in rows}).T
    ratios.index.name = "end / base token entropy"
    return ratios


def by_path_table(dynamics: dict[str, list[list[dict[str, Any]]]]) -> pd.DataFrame:
    """Per algorithm, at the base (the first held-out record) and at the end (the last), the
    held-out greedy completions split by path (``rl.dynamics.heldout_entry``): the share
    of each path and the token entropy of the completions on it, mean over the seeds where any
    took it (the ``seeds`` columns count them); the whole held-out entropy beside. A path no
    greedy completion took is left out; empty where the task has no paths."""
    rows = []
    for label, runs in dynamics.items():
        for when, pick in (("base", 0), ("end", -1)):
            held = [[r for r in run if "heldout_entropy" in r][pick] for run in runs]
            paths = [k.removeprefix(SHARE) for k in held[0] if k.startswith(SHARE)]
            if not paths:
                continue
            row = {"algorithm": label, "at": when,
                   "entropy, all": np.mean([r["heldout_entropy"] for r in held])}
            for path in paths:
                h = [r[PATH_ENTROPY + path] for r in held if PATH_ENTROPY + path in r]
                row[f"share, {path}"] = np.mean([r[SHARE + path] for r in held])
                row[f"entropy, {path}"] = np.mean(h) if h else np.nan
                row[f"seeds, {path}"] = len(h)
            rows.append(row)
    if not rows:
        return pd.DataFrame()
    table = pd.DataFrame(rows).set_index(["algorithm", "at"])
    unused = [c.removeprefix("share, ") for c in table if c.startswith("share, ")
              and not table[c].any()]
    return table.drop(columns=[f"{q}, {p}" for p in unused for q in ("share", "entropy", "seeds")])


# --- the readings ------------------------------------------------------------------------------

ACCURACY_MARGIN = 0.05
"""Reading 1: how far below GRPO's final greedy accuracy still counts as competitive."""

ENTROPY_MARGIN = 0.10
"""Readings 2-4: the smallest entropy difference that counts, as a fraction of the base's
token entropy in the quantity read (declared before the runs; the paper's Table 4 gaps between
GRPO and GRPO-N are 30-60 % of its base's token entropy, see ``paper_effects``)."""

ENTROPY = "actor_entropy"
"""Readings 2-4 read the token entropy of the training rollouts (Figure 2's actor entropy,
samples of the policy at temperature 1, logged by the trainer every step)."""

HELD_OUT = "heldout_entropy"
"""The held-out token entropy of greedy completions, read beside ``ENTROPY`` and not deciding:
a switch from the short direct answer to the long stepwise chain lowers its per-token mean by
itself, whatever the policy's sharpness."""

ROLLOUT_WINDOW = 5
"""``ENTROPY`` is one batch of rollouts per step: read as the first step's (the base's own
rollouts, sampled before any update), then means over windows of this many steps."""


def reading_curve(runs: list[list[dict[str, Any]]], key: str) -> tuple[np.ndarray, np.ndarray]:
    """(steps, values[seed, point]) of ``key`` as the readings take it: ``ENTROPY`` per
    ``ROLLOUT_WINDOW`` (a window's steps: their mean), any other key at every logged step."""
    steps, v = curve(runs, key)
    if key != ENTROPY or v.shape[1] < 2:
        return steps, v
    starts = range(1, v.shape[1], ROLLOUT_WINDOW)
    return (np.array([steps[0]] + [steps[i:i + ROLLOUT_WINDOW].mean() for i in starts]),
            np.column_stack([v[:, 0]] + [v[:, i:i + ROLLOUT_WINDOW].mean(1) for i in starts]))


def _later_minimum(h: np.ndarray) -> np.ndarray:
    """Per seed, the step index t* of the lowest entropy *after the start and before the end*,
    chosen on the other seeds' mean curve (leave one seed out), so that a seed's fall and rise
    are not measured at a step picked for being low on that seed's own noise. With one seed,
    its own curve."""
    inner = h[:, 1:-1]
    if len(h) == 1:
        return np.array([1 + int(np.argmin(inner[0]))])
    return np.array([1 + int(np.argmin(np.delete(inner, i, 0).mean(0))) for i in range(len(h))])


def readings(dynamics: dict[str, list[list[dict[str, Any]]]], entropy: str = ENTROPY
             ) -> pd.DataFrame:
    """The four readings of Figure 2 as checks over seeds (``stats``): ``dynamics``: algorithm
    label -> one record list per seed (``dynamics.records``; algorithms other than the paper's,
    ``verdicts.PAPER_ALGORITHMS``, are left out); readings 2-4 read ``entropy``
    (``reading_curve``). Every outcome of each check is reachable: reading 3 measures the fall
    and the rise at a point strictly between the start and the end."""
    dynamics = {label: runs for label, runs in dynamics.items() if label in PAPER_ALGORITHMS}
    end = {key: end_values(dynamics, key) for key in ("greedy_accuracy", entropy)}
    base_h = float(np.mean([reading_curve(runs, entropy)[1][:, 0].mean()
                            for runs in dynamics.values()]))
    margin = ENTROPY_MARGIN * base_h
    rows = []

    def add(reading: str, quantity: str, effect: stats.Effect, claim: str) -> None:
        rows.append((reading, quantity, effect.estimate, effect.low, effect.high, effect.margin,
                     claim, effect.verdict))

    others = [label for label in dynamics if label != "GRPO"]
    if "GRPO" in dynamics:
        for label in others:
            add("1. competitive greedy accuracy", f"{label} - GRPO, end",
                stats.two_sample(end["greedy_accuracy"][label], end["greedy_accuracy"]["GRPO"],
                                 ACCURACY_MARGIN, stats.NON_INFERIORITY),
                f"> -{ACCURACY_MARGIN:g}")
        for label in others:
            add("2. GRPO ends with the lowest entropy", f"{label} - GRPO, end",
                stats.two_sample(end[entropy][label], end[entropy]["GRPO"], margin),
                f"> +{margin:.3f}")
    for label in others:
        steps, h = reading_curve(dynamics[label], entropy)
        if h.shape[1] < 3:
            continue  # no point strictly between the start and the end
        t = _later_minimum(h)
        low = h[np.arange(len(h)), t]
        at = ", ".join(f"{steps[i]:g}" for i in sorted(set(t)))
        add("3. entropy falls, then rises", f"{label}: start - lowest (step {at})",
            stats.one_sample(h[:, 0] - low, margin), f"> +{margin:.3f}")
        add("3. entropy falls, then rises", f"{label}: end - lowest (step {at})",
            stats.one_sample(h[:, -1] - low, margin), f"> +{margin:.3f}")
    if "GRPO-N" in dynamics:
        _, h = reading_curve(dynamics["GRPO-N"], entropy)
        add("4. GRPO-N ends above the base", "GRPO-N: end - base",
            stats.one_sample(h[:, -1] - h[:, 0], margin), f"> +{margin:.3f}")
    return pd.DataFrame(rows, columns=["reading", "quantity", "estimate", "low", "high",
                                       "margin", "paper", "verdict"]
                        ).set_index(["reading", "quantity"])


VERDICT_CLAIMS = (("competitive", "greedy_accuracy", ("1.",)),
                  ("entropy_collapse", ENTROPY, ("2.",)),
                  ("entropy_recovery", ENTROPY, ("3.", "4.")))
"""The claims of ``verdicts`` that the readings decide: the claim, the quantity whose end
values are ours, and the readings (by number) that are its checks (the entropy ones read
beside them on ``HELD_OUT``, not deciding)."""
