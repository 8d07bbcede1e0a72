"""The training dynamics of Figure 2, logged while a run trains.

Figure 2 shows, per training step: the greedy-decoding accuracy and the model's entropy on the
held-out test set, the actor's entropy on its own rollouts, and the mean reward. TRL logs the
last two (``entropy``, ``reward``) together with the KL to the reference (``kl``), the clip
fraction (``clip_ratio/region_mean``) and, from ``GRPONTrainer``, the fraction of negative
samples (``frac_negative``). ``DynamicsCallback`` adds the held-out pair every few steps:

* greedy accuracy: the fraction of held-out problems whose greedy completion is correct;
* held-out token entropy: TokenEntropy of Appendix C.5 on those greedy completions, the
  full-vocabulary entropy H(p_t) at each generated position (up to and including the stop
  token) averaged over the completion, then over problems. The paper does not say on which
  completions its test-set entropy is taken; greedy ones cost no sampling and use no random
  numbers, so logging them leaves the training run itself unchanged;
* split by path, where the task tells paths apart (its ``paths`` and ``path(problem, text)``,
  as ``SumTask``'s): the share of greedy completions on each path (``heldout_share_<path>``)
  and their token entropy (``heldout_entropy_<path>``, where any took it). A switch from the
  short direct answer to the long stepwise chain moves the per-token mean by itself; within a
  path it does not.

Everything goes into the Trainer's ``log_history``, which every checkpoint saves and a resumed
run restores, so the curves of a resumed run are those of an uninterrupted one.
"""
from __future__ import annotations

import re
from typing import Any, Sequence

import numpy as np
import torch
from transformers import TrainerCallback
from trl.models import unwrap_model_for_generation

from rlvr_dynamics.sampling import SamplingParams, TransformersBackend
from rlvr_dynamics.tasks.base import Problem, Task
from rlvr_dynamics.rl.data import prompt_text

TRAIN_KEYS = {"reward": "reward", "actor_entropy": "entropy", "kl": "kl",
              "clip_fraction": "clip_ratio/region_mean", "frac_negative": "frac_negative",
              "frac_nthr": "frac_nthr"}
"""Our names for the metrics that TRL (and ``GRPONTrainer``) log at each training step
(``frac_nthr``, the share of wrong samples' tokens that NTHR selected, under its option only)."""

HELDOUT_KEYS = ("greedy_accuracy", "heldout_entropy")

HELDOUT_PREFIXES = ("heldout_share_", "heldout_entropy_")

TRACE_KEY = re.compile(r"rewards/(trace_\w+)/mean")
"""TRL's log of a trace statistic (``data.trace_functions``), kept as ``trace_<name>``."""


@torch.no_grad()
def greedy_heldout(model, tokenizer, task: Task, problems: list[Problem], max_new_tokens: int,
                   batch_size: int, progress: bool = True) -> torch.Tensor:
    """Greedy completions of ``problems`` (``sampling``'s transformers backend) and their token
    entropies (recorded by the sampler while it decodes): (number correct, number of problems,
    sum over problems of the mean token entropy of their completion, number of non-empty
    completions), then, per path of the task's ``paths`` where it has them, the number of
    completions on it and the sum of their mean token entropies: sums, so that shards from
    several processes add up."""
    texts = [prompt_text(tokenizer, p.prompt) for p in problems]
    backend = TransformersBackend(model, tokenizer, batch_size=batch_size, progress=progress)
    greedy = [c[0] for c in backend.generate(texts, SamplingParams(temperature=0,
                                                                   max_tokens=max_new_tokens),
                                             entropy_temperature=1.0)]
    correct = sum(task.verify(c.text, p.answer) for c, p in zip(greedy, problems))
    means = [float(np.mean(c.entropies)) for c in greedy if c.entropies]
    by_path = []
    if hasattr(task, "paths"):
        taken = [(task.path(p, c.text), float(np.mean(c.entropies)))
                 for c, p in zip(greedy, problems) if c.entropies]
        for name in task.paths:
            here = [h for kind, h in taken if kind == name]
            by_path += [len(here), sum(here)]
    return torch.tensor([correct, len(problems), sum(means), len(means), *by_path],
                        dtype=torch.float64)


def heldout_entry(totals: list[float], paths: Sequence[str] = ()) -> dict[str, float]:
    """``greedy_heldout``'s sums (over every shard) as the logged entry: greedy accuracy,
    held-out entropy and, where the sums hold ``paths``, each path's share of the non-empty
    completions and (where any took it) their mean token entropy."""
    correct, n, entropy, nonempty, *by_path = totals
    entry = {"greedy_accuracy": correct / n, "heldout_entropy": entropy / max(nonempty, 1.0)}
    for name, (count, h) in zip(paths, zip(by_path[::2], by_path[1::2])):
        entry[f"heldout_share_{name}"] = count / max(nonempty, 1.0)
        if count:
            entry[f"heldout_entropy_{name}"] = h / count
    return entry


class Periodic(TrainerCallback):
    """Calls ``evaluate(state)`` before the first optimizer update, every ``every`` updates and
    after the last; a resumed run has the first one in its restored ``log_history``."""

    every: int

    def on_train_begin(self, args, state, control, **kwargs: Any) -> None:
        if state.global_step == 0:
            self.evaluate(state)

    def on_step_end(self, args, state, control, **kwargs: Any) -> None:
        if self.due(state.global_step, state.max_steps):
            self.evaluate(state)

    def due(self, step: int, max_steps: int) -> bool:
        """Whether update ``step`` (of ``max_steps``) is measured."""
        return step % self.every == 0 or step == max_steps

    def evaluate(self, state) -> None:
        raise NotImplementedError


class DynamicsCallback(Periodic):
    """Every ``every`` optimizer updates (and before the first), the held-out greedy accuracy
    and token entropy, appended to the trainer's ``log_history`` at the current update."""

    def __init__(self, trainer, task: Task, problems: list[Problem], every: int,
                 max_new_tokens: int, batch_size: int) -> None:
        self.trainer, self.task, self.problems = trainer, task, problems
        self.every, self.max_new_tokens, self.batch_size = every, max_new_tokens, batch_size

    def evaluate(self, state) -> None:
        acc = self.trainer.accelerator
        shard = self.problems[acc.process_index::acc.num_processes]
        with unwrap_model_for_generation(self.trainer.model_wrapped, acc) as model:
            totals = greedy_heldout(model, self.trainer.processing_class, self.task, shard,
                                    self.max_new_tokens, self.batch_size,
                                    progress=acc.is_main_process)
        totals = acc.reduce(totals.to(acc.device), reduction="sum").tolist()
        state.log_history.append({"step": state.global_step,
                                  **heldout_entry(totals, getattr(self.task, "paths", ()))})


def records(log_history: list[dict[str, Any]], updates_per_step: int) -> list[dict[str, Any]]:
    """One record per logged training step (Figure 2's x-axis: generation steps), merging the
    held-out entries, the boundary probes (``probe``, ``sampled_probe``), the first-character
    masses (``first``, after every update: rows at fractions of a step between them) and the
    attributions of single updates (``attribution``, ``rl.attribution``), TRL's
    per-step metrics under the names of ``TRAIN_KEYS`` and the trace statistics
    (``TRACE_KEY``; a step whose rollouts had none to measure has none)."""
    by_step: dict[int, dict[str, Any]] = {}
    for entry in log_history:
        if "step" not in entry:
            continue
        row = by_step.setdefault(entry["step"], {"update": entry["step"],
                                                 "step": entry["step"] / updates_per_step})
        row.update({k: v for k, v in entry.items()
                    if k in (*HELDOUT_KEYS, "probe", "sampled_probe", "first", "attribution")
                    or k.startswith(HELDOUT_PREFIXES)})
        row.update({ours: entry[theirs] for ours, theirs in TRAIN_KEYS.items() if theirs in entry})
        row.update({m[1]: v for k, v in entry.items()
                    if (m := TRACE_KEY.fullmatch(k)) and v == v})  # NaN: no rollout measured
    return [by_step[s] for s in sorted(by_step)]


def summary(run: list[dict[str, Any]]) -> dict[str, float]:
    """One run's held-out curve in numbers: at the start (the base model), at its lowest
    entropy, and at the end; plus the mean reward over the last quarter of the steps."""
    held = [r for r in run if "heldout_entropy" in r]
    low = min(held, key=lambda r: r["heldout_entropy"])
    rewards = [r["reward"] for r in run if "reward" in r]
    return {"accuracy_base": held[0]["greedy_accuracy"],
            "accuracy_end": held[-1]["greedy_accuracy"],
            "entropy_base": held[0]["heldout_entropy"],
            "entropy_min": low["heldout_entropy"], "step_of_min": low["step"],
            "entropy_end": held[-1]["heldout_entropy"],
            "reward_end": sum(rewards[-max(1, len(rewards) // 4):]) / max(1, len(rewards) // 4)}


def curve(runs: list[list[dict[str, Any]]], key: str) -> tuple[np.ndarray, np.ndarray]:
    """(steps, values[seed, step]) of ``key`` at the steps that every run logged it."""
    steps = sorted(set.intersection(*({r["step"] for r in run if key in r} for run in runs)))
    values = np.array([[next(r[key] for r in run if r["step"] == s) for s in steps]
                       for run in runs], dtype=float)
    return np.array(steps), values
