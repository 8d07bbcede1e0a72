"""What the trainer sees: a task's problems as prompts (the sums task's in a chosen mix of
problems beyond the direct path, ``mix``), a ``datasets.Dataset``, the reward r(x, y) in {0, 1}
(Section 2), and trace statistics of the rollouts that leave training as it is."""
from __future__ import annotations

import math
import re
from typing import Any, Callable

from datasets import Dataset

from rlvr_dynamics.tasks import sums
from rlvr_dynamics.tasks.base import Problem, Task, reward
from rlvr_dynamics.tasks.sums import SumTask


def prompt_text(tokenizer, prompt: str | list[dict[str, str]]) -> str | list[dict[str, str]]:
    """The model input for ``prompt``: a string gets the tokenizer's BOS token in front unless
    the tokenizer adds it itself (the sums models were pretrained on ``<s>prompt``); chat
    messages are left to TRL, which applies the chat template."""
    if not isinstance(prompt, str) or tokenizer.bos_token is None:
        return prompt
    adds_bos = tokenizer("0")["input_ids"][:1] == [tokenizer.bos_token_id]
    return prompt if adds_bos or prompt.startswith(tokenizer.bos_token) else tokenizer.bos_token + prompt


def dataset(problems: list[Problem], tokenizer) -> Dataset:
    """Columns ``prompt`` (model input) and ``answer`` (gold), as TRL's reward functions get them."""
    return Dataset.from_list([{"prompt": prompt_text(tokenizer, p.prompt), "answer": p.answer}
                              for p in problems])


def _text(completion: Any) -> str:
    return completion if isinstance(completion, str) else completion[-1]["content"]


def reward_function(task: Task) -> Callable[..., list[float]]:
    """TRL's reward-function interface for r(x, y): 1 if the completion's answer is correct."""
    def correct(completions: list[Any], answer: list[str], **_: Any) -> list[float]:
        return [reward(task, _text(c), a) for c, a in zip(completions, answer)]
    return correct


def trace_functions(task: Task, author: sums.Author | None = None) -> list[Callable[..., list]]:
    """Reward functions that only measure: each returns one per-completion statistic of the
    rollouts, and ``build_trainer`` gives it weight 0 (``GRPOConfig.reward_weights``). TRL logs the
    mean of every reward function (``rewards/<name>/mean``) and sums the weighted rewards before
    the group normalisation, so a weight of 0 leaves rewards, advantages and gradients exactly as
    they are, at no cost but the statistics themselves.

    For the sums task: ``trace_<s>`` for each statistic ``s`` of ``sums.trace`` on every rollout
    and, given the base's ``author``, ``trace_hard_<s>`` on the rollouts of problems beyond its
    direct path (a common path that is always wrong beside a rare one that can be right; None on
    the other rollouts, which TRL's means leave out). Other tasks have none.
    """
    if not isinstance(task, SumTask):
        return []

    def terms(prompt: Any) -> tuple[int, ...]:
        return sums.terms_of(re.search(r"[\d+]+=$", _text(prompt)).group())

    def hard(prompt: Any) -> bool:
        return sums.direct_success(terms(prompt), author) == 0.0

    def statistic(name: str, only_hard: bool) -> Callable[..., list]:
        def fn(prompts: list[Any], completions: list[Any], answer: list[str], **_: Any) -> list:
            return [sums.trace(a, _text(c), terms(p))[name] if not only_hard or hard(p) else None
                    for p, c, a in zip(prompts, completions, answer)]
        fn.__name__ = f"trace_{'hard_' if only_hard else ''}{name}"
        return fn

    return [statistic(name, only_hard) for only_hard in ([False, True] if author else [False])
            for name in sums.TRACES]


def mix(problems: list[Problem], author: sums.Author, hard_share: float | None
        ) -> list[Problem]:
    """The training problems with a share ``hard_share`` beyond ``author``'s direct path (sums
    that no direct answer gets right: ``sums.direct_success`` is 0), the rest solvable both
    ways (None: ``problems`` as drawn). As many problems as that share allows are kept, the
    first ones of each kind, in their drawn order."""
    if hard_share is None:
        return problems
    if not 0 <= hard_share <= 1:
        raise ValueError(f"hard_share must be None or lie in [0, 1], got {hard_share}")
    hard = [sums.direct_success(p.meta["terms"], author) == 0.0 for p in problems]
    n_hard, n_easy = sum(hard), len(problems) - sum(hard)
    total = min(n_hard / hard_share if hard_share > 0 else math.inf,
                n_easy / (1 - hard_share) if hard_share < 1 else math.inf)
    quota = {True: round(total * hard_share), False: round(total * (1 - hard_share))}
    if not quota[True] + quota[False]:
        raise ValueError(f"no training problem fits hard_share={hard_share} "
                         f"({n_hard} beyond the direct path, {n_easy} not)")
    out = []
    for p, h in zip(problems, hard):
        if quota[h]:
            out.append(p)
            quota[h] -= 1
    return out
