"""The capability boundary along training: the policy measured from its own probabilities at
checkpoints (``exact.stratified_all``), while the run trains.

Every ``every`` optimizer updates (and before the first, and after the last), ``BoundaryProbe``
measures the first ``problems`` problems of the sums task's test and ood splits under each of
``SETTINGS`` (the paper's evaluation setting and the full distribution): per problem, the
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
"""
from __future__ import annotations

import torch
from trl.models import unwrap_model_for_generation

from rlvr_dynamics import exact
from rlvr_dynamics.sampling import SamplingParams, TransformersBackend
from rlvr_dynamics.tasks import sums
from rlvr_dynamics.tasks.base import Problem, Task
from rlvr_dynamics.training.data import prompt_text
from rlvr_dynamics.training.dynamics import Periodic

SETTINGS = {"paper": (0.6, 0.95), "full": (1.0, 1.0)}
"""(temperature, top-p) of each measurement: Appendix C.2's evaluation setting, and the full
distribution that RL samples from."""
SPLITS = ("test", "ood")
TOL, MAX_NODES, BELOW = 1e-3, 50, 8
"""The exact measurement's tolerance, prefixes per problem and samples below each stratum of
the frontier: the reproduction chapter's tolerance with two thirds of its prefixes and half its
samples (a probe runs about a dozen times per run; its precision is averaged over problems and
seeds, and each path's stratum gets its own samples however rare the path)."""
KEYS = ("p", "se", *sums.TRACES, "answer_entropy", "token_entropy")


@torch.no_grad()
def measure(model, tokenizer, problems: dict[str, list[Problem]], task: sums.SumTask,
            max_tokens: int, seed: int = 0) -> dict[str, dict[str, dict[str, list[float]]]]:
    """``{setting: {split: {key: [value per problem]}}}`` for ``KEYS``."""
    was_training = model.training
    model.eval()
    try:
        out: dict[str, dict[str, dict[str, list[float]]]] = {}
        for name, (temperature, top_p) in SETTINGS.items():
            out[name] = {}
            for split, chosen in problems.items():
                est = exact.stratified_all(model, tokenizer, chosen, task, n=BELOW, seed=seed,
                                           temperature=temperature, top_p=top_p,
                                           max_tokens=max_tokens, tol=TOL, max_nodes=MAX_NODES,
                                           trace=sums.trace)
                rec = {"p": [e.p for e in est], "se": [e.se for e in est],
                       "answer_entropy": [e.answer_entropy() for e in est],
                       "token_entropy": [e.token_entropy for e in est]}
                rec |= {k: [e.traces.get(k, 0.0) for e in est] for k in sums.TRACES}
                out[name][split] = {k: [round(float(v), 6) for v in rec[k]] for k in KEYS}
        return out
    finally:
        model.train(was_training)


class BoundaryProbe(Periodic):
    """Every ``every`` optimizer updates, before the first and after the last: ``measure``."""

    def __init__(self, trainer, task: sums.SumTask, problems: int, every: int,
                 max_tokens: int) -> None:
        self.trainer, self.task, self.every, self.max_tokens = trainer, task, every, max_tokens
        self.problems = {s: task.problems(s)[:problems] for s in SPLITS}

    def evaluate(self, state) -> None:
        state.log_history.append({"step": state.global_step, "probe": measure(
            self.trainer.model, self.trainer.processing_class, self.problems, self.task,
            self.max_tokens)})


def spread(problems: list[Problem], count: int) -> list[Problem]:
    """``count`` of ``problems`` evenly spaced, so that a task of several levels listed one
    after the other (``tasks.arithmetic.ArithmeticMix``) is probed on each of them."""
    stride = max(1, len(problems) // count)
    return problems[::stride][:count]


class SampledProbe(Periodic):
    """Every ``every`` optimizer updates, before the first and after the last: ``n`` samples
    of each of ``problems`` held-out problems (``spread`` over the test split) under each of
    ``SETTINGS``, and how many are right."""

    def __init__(self, trainer, task: Task, problems: int, n: int, every: int,
                 max_tokens: int, batch_size: int) -> None:
        self.trainer, self.task, self.n, self.every = trainer, task, n, every
        self.max_tokens, self.batch_size = max_tokens, batch_size
        self.problems = spread(task.problems("test"), problems)

    def evaluate(self, state) -> None:
        tokenizer = self.trainer.processing_class
        texts = [prompt_text(tokenizer, p.prompt) for p in self.problems]
        out = {}
        with unwrap_model_for_generation(self.trainer.model_wrapped,
                                         self.trainer.accelerator) as model:
            backend = TransformersBackend(model, tokenizer, batch_size=self.batch_size,
                                          progress=False)
            for name, (temperature, top_p) in SETTINGS.items():
                params = SamplingParams(n=self.n, temperature=temperature, top_p=top_p,
                                        max_tokens=self.max_tokens, seed=0)
                rows = backend.generate(texts, params)
                out[name] = {"ids": [p.id for p in self.problems], "n": self.n,
                             "correct": [sum(self.task.verify(c.text, p.answer) for c in row)
                                         for row, p in zip(rows, self.problems)]}
        state.log_history.append({"step": state.global_step, "sampled_probe": out})
