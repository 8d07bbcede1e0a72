"""The training chapter (``notebooks/training.md``): GRPO, GRPO-N, GSPO and GSPO-N on TRL
(``rlvr_dynamics.training``), their runs over seeds, the lambda family between GRPO and GRPO-N,
Figure 2's dynamics and the paper's four readings of it.

The readings (Section 4.2), checked on runs over several seeds (``stats``):

1. all algorithms reach competitive greedy accuracy: no algorithm ends more than
   ``ACCURACY_MARGIN`` below GRPO;
2. GRPO collapses the held-out entropy: every other algorithm ends above it;
3. under GRPO-N, GSPO and GSPO-N the held-out entropy first falls, then rises: at the step t*
   where it is lowest (strictly after the start and before the end, picked for each seed on
   the other seeds' mean curve) it is below the base, and at the end above its value at t*;
4. under GRPO-N it ends above the base model's.

Each is a check over seeds with a Student-t interval and a margin declared here
(``ACCURACY_MARGIN``, ``ENTROPY_MARGIN``; ``stats``).
"""
from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import yaml
from pydantic import model_validator

from rlvr_dynamics import REPO, registry, stats
from rlvr_dynamics.chapters import Int, ListOf, NeedsParams, Real, Text, needed, require
from rlvr_dynamics.pretrain import PretrainConfig
from rlvr_dynamics.training import algorithms
from rlvr_dynamics.chapters.style import COLORS
from rlvr_dynamics.training.algorithms import ALGORITHMS
from rlvr_dynamics.training.config import Settings, TrainConfig
from rlvr_dynamics.training.dynamics import curve
from rlvr_dynamics.training.run import load_dynamics, obtain_all


class Params(NeedsParams, Settings):
    """The runs (``algorithms`` x ``seeds``, and GRPO at each of ``lambdas`` x ``seeds``), the
    policy (``model``: ``sums-base`` -- the base-model chapter's base -- or another registry
    model, with ``task``), and every setting of a run (``training.config.Settings``, declared
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


def settings_table(T: Params) -> pd.DataFrame:
    """This run's settings beside the paper's (``paper_settings``)."""
    paper = paper_settings()
    return pd.DataFrame({f"this run ({T.profile})": [getattr(T, k) for k in paper],
                         "paper (Appendix C.2)": list(paper.values())},
                        index=list(paper)).astype(str)


def obtain_runs(T: Params, profile: str, *, lambdas: bool = True, workers: int | None = None
                ) -> dict[tuple[str, int, float | None], Path]:
    """The finished runs of ``T.runs()`` (without the lambda family unless ``lambdas``),
    trained first where missing, ``workers`` at a time (``training.run.obtain_all``)."""
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
    """label -> one logged record list per seed (``training.dynamics.records``)."""
    return {label: [load_dynamics(f) for f in folders] for label, folders in runs.items()}


# --- the readings ------------------------------------------------------------------------------

ACCURACY_MARGIN = 0.05
"""Reading 1: how far below GRPO's final greedy accuracy still counts as competitive."""

ENTROPY_MARGIN = 0.10
"""Readings 2-4: the smallest entropy difference that counts, as a fraction of the base's
held-out token entropy (declared before the runs; the paper's Table 4 gaps between GRPO and
GRPO-N are 30-60 % of its base's token entropy, see ``paper_effects``)."""


def _later_minimum(h: np.ndarray) -> np.ndarray:
    """Per seed, the step index t* of the lowest held-out entropy *after the start and before
    the end*, chosen on the other seeds' mean curve (leave one seed out), so that a seed's
    fall and rise are not measured at a step picked for being low on that seed's own noise.
    With one seed, its own curve."""
    inner = h[:, 1:-1]
    if len(h) == 1:
        return np.array([1 + int(np.argmin(inner[0]))])
    return np.array([1 + int(np.argmin(np.delete(inner, i, 0).mean(0))) for i in range(len(h))])


def readings(dynamics: dict[str, list[list[dict[str, Any]]]]) -> pd.DataFrame:
    """The four readings of Figure 2 as checks over seeds (``stats``): ``dynamics``: algorithm
    label -> one record list per seed (``dynamics.records``). Every outcome of each check is
    reachable: reading 3 measures the fall and the rise at a step strictly between the start
    and the end."""
    end = {label: {key: curve(runs, key)[1][:, -1] for key in ("greedy_accuracy",
                                                             "heldout_entropy")}
           for label, runs in dynamics.items()}
    base_h = float(np.mean([curve(runs, "heldout_entropy")[1][:, 0].mean()
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
                stats.two_sample(end[label]["greedy_accuracy"], end["GRPO"]["greedy_accuracy"],
                                 ACCURACY_MARGIN, stats.NON_INFERIORITY),
                f"> -{ACCURACY_MARGIN:g}")
        for label in others:
            add("2. GRPO ends with the lowest entropy", f"{label} - GRPO, end",
                stats.two_sample(end[label]["heldout_entropy"], end["GRPO"]["heldout_entropy"],
                                 margin), f"> +{margin:.3f}")
    for label in others:
        steps, h = curve(dynamics[label], "heldout_entropy")
        if h.shape[1] < 3:
            continue  # no step strictly between the start and the end
        t = _later_minimum(h)
        low = h[np.arange(len(h)), t]
        at = ", ".join(f"{steps[i]:g}" for i in sorted(set(t)))
        add("3. entropy falls, then rises", f"{label}: start - lowest (step {at})",
            stats.one_sample(h[:, 0] - low, margin), f"> +{margin:.3f}")
        add("3. entropy falls, then rises", f"{label}: end - lowest (step {at})",
            stats.one_sample(h[:, -1] - low, margin), f"> +{margin:.3f}")
    if "GRPO-N" in dynamics:
        _, h = curve(dynamics["GRPO-N"], "heldout_entropy")
        add("4. GRPO-N ends above the base", "GRPO-N: end - base",
            stats.one_sample(h[:, -1] - h[:, 0], margin), f"> +{margin:.3f}")
    return pd.DataFrame(rows, columns=["reading", "quantity", "estimate", "low", "high",
                                       "margin", "paper", "verdict"]
                        ).set_index(["reading", "quantity"])


def verdict_rows(dynamics: dict[str, list[list[dict[str, Any]]]]) -> list[dict[str, Any]]:
    """The readings as rows for ``verdicts.record``: reading 1 is the claim ``competitive``,
    2 ``entropy_collapse``, 3 and 4 ``entropy_recovery``; ``ours``: the end-of-training values,
    mean ± sd over seeds."""
    table = readings(dynamics).reset_index()

    def ours(key: str) -> str:
        return ", ".join(f"{label} {v.mean():.3f}" + (f" ± {v.std(ddof=1):.3f}" if len(v) > 1
                                                      else "")
                         for label, runs in dynamics.items()
                         for v in [curve(runs, key)[1][:, -1]])

    def checks(prefixes: tuple[str, ...]) -> list[tuple[str, str]]:
        part = table[table["reading"].str.startswith(prefixes)]
        return [(f"{q}: {e:+.3f} [{lo:+.3f}, {hi:+.3f}] ({p}?)", v)
                for q, e, lo, hi, p, v in
                part[["quantity", "estimate", "low", "high", "paper", "verdict"]].itertuples(
                    index=False)]

    rows = [("competitive", f"held-out greedy accuracy at the end: {ours('greedy_accuracy')}",
             ("1.",)),
            ("entropy_collapse", f"held-out token entropy at the end: {ours('heldout_entropy')}",
             ("2.",)),
            ("entropy_recovery", f"held-out token entropy at the end: {ours('heldout_entropy')}",
             ("3.", "4."))]
    return [{"claim": c, "ours": o, "checks": checks(p)} for c, o, p in rows if checks(p)]


# --- Figure 2 -----------------------------------------------------------------------------------

PANELS = [("greedy_accuracy", "greedy accuracy (held-out)"),
          ("heldout_entropy", "token entropy (held-out)"),
          ("actor_entropy", "actor entropy (rollouts)"),
          ("reward", "mean reward (rollouts)"),
          ("frac_negative", "fraction of negative samples"),
          ("kl", "KL to the reference"),
          ("clip_fraction", "clip fraction")]


def plot_dynamics(dynamics: dict[str, list[list[dict[str, Any]]]], title: str):
    """``dynamics``: algorithm label -> one record list (``dynamics.records``) per seed."""
    fig, axes = plt.subplots(2, 4, figsize=(15, 6.5), constrained_layout=True)
    for ax, (key, name) in zip(axes.flat, PANELS):
        for label, runs in dynamics.items():
            if not all(any(key in r for r in run) for run in runs):
                continue
            steps, values = curve(runs, key)
            color = COLORS.get(label)
            ax.plot(steps, values.mean(0), color=color, label=label, lw=1.5)
            if len(runs) > 1:
                ax.fill_between(steps, values.min(0), values.max(0), color=color, alpha=0.2,
                                lw=0)
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("training step")
        ax.grid(alpha=0.3)
    axes.flat[0].legend(fontsize=9)
    axes.flat[-1].axis("off")
    fig.suptitle(textwrap.fill(title, 170), fontsize=10)
    return fig


def plot_lambda(final: dict[float, list[dict[str, Any]]], title: str):
    """``final``: lambda -> the last record of each seed's run; the held-out accuracy and
    entropy at the end of training against lambda (0: GRPO-N, 1: GRPO)."""
    lams = sorted(final)
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4), constrained_layout=True)
    for ax, (key, name) in zip(axes, PANELS[:2]):
        values = [np.array([r[key] for r in final[lam]], dtype=float) for lam in lams]
        mean = np.array([v.mean() for v in values])
        ax.plot(lams, mean, "o-", color="tab:purple")
        for lam, v in zip(lams, values):
            ax.plot([lam] * len(v), v, ".", color="tab:purple", alpha=0.4)
        ax.set_xlabel("λ (weight on positive samples)")
        ax.set_title(f"{name} at the end", fontsize=10)
        ax.grid(alpha=0.3)
    fig.suptitle(textwrap.fill(title, 100), fontsize=9)
    return fig
