"""The capability boundary along training: the policy measured from its own probabilities at
checkpoints (``exact.stratified_all``), while the run trains.

Every ``every`` optimizer updates (more often early on: every ``early_every`` up to update
``early_until``; and before the first, and after the last), ``BoundaryProbe`` measures the
``probed`` problems of the sums task's test split (the first ones, and optionally more of those
that only the stepwise path can solve) under each of
``SETTINGS`` (the paper's evaluation setting and the full distribution; or the latter alone):
per problem, the
probability p of a correct answer (hence Pass@k = 1 - (1 - p)^k for every k), the probability
mass of each path crossed with correctness (``tasks.sums.trace``: the LM's analogue of the
toy's action probabilities), the answer entropy and the expected token entropy. The records go
into the Trainer's ``log_history`` (``{"step": update, "probe": {setting: {split: {...}}}}``),
which checkpoints save and a resumed run restores. Measuring reads no random state of the run:
the exact expansion is deterministic and its frontier samples use their own generators, so a
probed run trains exactly as an unprobed one.

A model of another task (SmolLM2 on chat sums) has no completion tree small enough to expand:
``SampledProbe`` draws ``n`` completions per problem under each setting from the project's
sampler (its own seeded generator) and logs how many are right (``{"step": update,
"sampled_probe": {setting: {"ids": [...], "correct": [...], "n": n}}}``): Pass@k for k <= n
by the unbiased estimator.

``FirstCharacters`` is the cheap instrument beside it: before the first update and after every
one, the probability of each path's first completion character on the same problems
(``path_prior.path_masses``: ``#`` for the direct path, the problem's own first digit for the
stepwise path, ``=`` for the guess; the rest is what they leave), from one forward pass over
the prompts (``{"step": update, "first": {path: [mass per problem]}}``). Where the boundary
probe is a few seconds, this is a few milliseconds, so the first stage is seen update by update.

``StopAfterCrossover`` ends a run a set number of updates after the first probe at which the
stepwise path carries more mass than the direct one (the toy's pi(a2) > pi(a1)): a run goes on
until its crossover, or to its last step if it never comes.
"""
from __future__ import annotations

import torch
from transformers import TrainerCallback
from trl.models import unwrap_model_for_generation

from rlvr_dynamics import exact
from rlvr_dynamics.path_prior import path_masses
from rlvr_dynamics.sampling import SamplingParams, TransformersBackend
from rlvr_dynamics.tasks import sums
from rlvr_dynamics.tasks.base import Problem, Task
from rlvr_dynamics.rl.data import prompt_text
from rlvr_dynamics.rl.dynamics import Periodic

SETTINGS = {"paper": (0.6, 0.95), "full": (1.0, 1.0)}
"""(temperature, top-p) of each measurement: Appendix C.2's evaluation setting, and the full
distribution that RL samples from."""
SPLITS = ("test",)
"""The splits probed: the test split alone, the only one the regimes chapter reads (the ood
split's longer sums made a third of a probe's time, and no reading used them)."""
TOL, MAX_NODES, BELOW = 1e-3, 50, 8
"""The exact measurement's tolerance, prefixes per problem and samples below each stratum of
the frontier: the reproduction chapter's tolerance with two thirds of its prefixes and half its
samples (a probe runs about a dozen times per run; its precision is averaged over problems and
seeds, and each path's stratum gets its own samples however rare the path)."""
KEYS = ("p", "se", *sums.TRACES, "answer_entropy", "token_entropy")


@torch.no_grad()
def measure(model, tokenizer, problems: dict[str, list[Problem]], task: sums.SumTask,
            max_tokens: int, seed: int = 0, settings: tuple[str, ...] = tuple(SETTINGS)
            ) -> dict[str, dict[str, dict[str, list[float]]]]:
    """``{setting: {split: {key: [value per problem]}}}`` for ``KEYS``, under each of
    ``settings`` (names of ``SETTINGS``)."""
    was_training = model.training
    model.eval()
    try:
        out: dict[str, dict[str, dict[str, list[float]]]] = {}
        for name in settings:
            temperature, top_p = SETTINGS[name]
            out[name] = {}
            for split, chosen in problems.items():
                est = exact.stratified_all(model, tokenizer, chosen, task, n=BELOW, seed=seed,
                                           temperature=temperature, top_p=top_p,
                                           max_tokens=max_tokens, tol=TOL, max_nodes=MAX_NODES,
                                           trace=sums.problem_trace)
                rec = {"p": [e.p for e in est], "se": [e.se for e in est],
                       "answer_entropy": [e.answer_entropy() for e in est],
                       "token_entropy": [e.token_entropy for e in est]}
                rec |= {k: [e.traces.get(k, 0.0) for e in est] for k in sums.TRACES}
                out[name][split] = {k: [round(float(v), 6) for v in rec[k]] for k in KEYS}
        return out
    finally:
        model.train(was_training)


def probed(task: sums.SumTask, author: sums.Author, count: int, hard: int = 0
           ) -> dict[str, list[Problem]]:
    """Per split of ``SPLITS``, its first ``count`` problems; the test split's followed by the
    first ``hard`` of its other problems that lie beyond ``author``'s direct path (only the
    stepwise path solves them: ``sums.direct_success`` is 0)."""
    out = {s: task.problems(s)[:count] for s in SPLITS}
    beyond = [p for p in task.problems("test")[count:]
              if sums.direct_success(p.meta["terms"], author) == 0.0]
    if len(beyond) < hard:
        raise ValueError(f"probe_hard={hard}: the test split has only {len(beyond)} more "
                         f"problems beyond the direct path")
    out["test"] = out["test"] + beyond[:hard]
    return out


class BoundaryProbe(Periodic):
    """Every ``every`` optimizer updates (every ``early_every`` up to ``early_until``), before
    the first and after the last: ``measure`` of ``problems`` (split -> problems) under
    ``settings``."""

    def __init__(self, trainer, task: sums.SumTask, problems: dict[str, list[Problem]],
                 every: int, max_tokens: int, early_every: int = 0, early_until: int = 0,
                 settings: tuple[str, ...] = tuple(SETTINGS)) -> None:
        self.trainer, self.task, self.every, self.max_tokens = trainer, task, every, max_tokens
        self.problems, self.early_every, self.early_until = problems, early_every, early_until
        self.settings = settings

    def due(self, step: int, max_steps: int) -> bool:
        return super().due(step, max_steps) or bool(
            self.early_every and step <= self.early_until and step % self.early_every == 0)

    def evaluate(self, state) -> None:
        state.log_history.append({"step": state.global_step, "probe": measure(
            self.trainer.model, self.trainer.processing_class, self.problems, self.task,
            self.max_tokens, settings=self.settings)})


class FirstCharacters(Periodic):
    """Before the first optimizer update and after every one: the first-character mass of each
    path on ``problems`` (``path_prior.path_masses``), rounded to 7 decimals."""

    every = 1

    def __init__(self, trainer, problems: list[Problem]) -> None:
        self.trainer, self.terms = trainer, [p.meta["terms"] for p in problems]

    def evaluate(self, state) -> None:
        model = self.trainer.model
        was_training = model.training
        model.eval()
        try:
            masses = path_masses(model, self.trainer.processing_class, self.terms)
        finally:
            model.train(was_training)
        state.log_history.append({"step": state.global_step, "first": {
            path: [round(float(v), 7) for v in m] for path, m in masses.items()}})


def crossover(log_history: list[dict]) -> int | None:
    """The update of the first probe at which the stepwise path's mass exceeds the direct
    path's (means over the probed test problems, full distribution); None before it."""
    for r in log_history:
        if "probe" in r:
            m = r["probe"]["full"]["test"]
            stepwise = sum(a + b for a, b in zip(m["stepwise_right"], m["stepwise_wrong"]))
            if stepwise > sum(a + b for a, b in zip(m["direct_right"], m["direct_wrong"])):
                return r["step"]
    return None


class StopAfterCrossover(TrainerCallback):
    """Ends training at the first probe at least ``after`` optimizer updates past the
    ``crossover``, so that a run's last record is a probe (added after the probe, so that it
    reads the probe of the same update)."""

    def __init__(self, after: int) -> None:
        self.after = after

    def on_step_end(self, args, state, control, **kwargs) -> None:
        probes = [r["step"] for r in state.log_history if "probe" in r]
        at = crossover(state.log_history)
        if (at is not None and probes[-1] == state.global_step
                and state.global_step >= at + self.after):
            control.should_training_stop = True


def spread(problems: list[Problem], count: int) -> list[Problem]:
    """``count`` of ``problems`` evenly spaced, so that a task of several levels listed one
    after the other (``tasks.arithmetic.ArithmeticMix``) is probed on each of them."""
    stride = max(1, len(problems) // count)
    return problems[::stride][:count]


class SampledProbe(Periodic):
    """Every ``every`` optimizer updates, before the first and after the last: ``n`` samples
    of each of ``problems`` held-out problems (``spread`` over the test split) under each of
    ``settings`` (names of ``SETTINGS``), and how many are right."""

    def __init__(self, trainer, task: Task, problems: int, n: int, every: int,
                 max_tokens: int, batch_size: int,
                 settings: tuple[str, ...] = tuple(SETTINGS)) -> None:
        self.trainer, self.task, self.n, self.every = trainer, task, n, every
        self.max_tokens, self.batch_size, self.settings = max_tokens, batch_size, settings
        self.problems = spread(task.problems("test"), problems)

    def evaluate(self, state) -> None:
        tokenizer = self.trainer.processing_class
        texts = [prompt_text(tokenizer, p.prompt) for p in self.problems]
        out = {}
        with unwrap_model_for_generation(self.trainer.model_wrapped,
                                         self.trainer.accelerator) as model:
            backend = TransformersBackend(model, tokenizer, batch_size=self.batch_size,
                                          progress=False)
            for name in self.settings:
                temperature, top_p = SETTINGS[name]
                params = SamplingParams(n=self.n, temperature=temperature, top_p=top_p,
                                        max_tokens=self.max_tokens, seed=0)
                rows = backend.generate(texts, params)
                out[name] = {"ids": [p.id for p in self.problems], "n": self.n,
                             "correct": [sum(self.task.verify(c.text, p.answer) for c in row)
                                         for row, p in zip(rows, self.problems)]}
        state.log_history.append({"step": state.global_step, "sampled_probe": out})
