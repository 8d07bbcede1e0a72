"""The base's habits at its choice of path as a dial: the base refitted at its first character.

The toy's time to expansion is set by pi0(a2), the initial probability of the rare, better
action. The language model's analogue is P(stepwise), the probability that the base's first
completion character starts the stepwise path (the sums task decides the path there:
``tasks.sums.path``). ``refit`` sets it to a chosen ``prior`` and touches as little else as it
can: starting from the pretrained base, it continues pretraining on the author's corpus (the
pretraining steps that would follow the last one, worked examples included) with the first
completion character left out of that loss, plus the first character's cross-entropy against
an author whose habits are ``prior`` (stepwise) and ``guess`` (the bad path of
``tasks.sums.guess_completion``), in expectation over the choice:

    L = L_pretrain(every completion position but the first)
        - mean_x [(1 - prior - guess) log pi("#" | x) + prior log pi(d(x) | x)
                  + guess log pi("=" | x)]                       (d(x): x's first digit).

The pretraining author never guesses, so the anchor's batch also holds guesses
(``GUESS_SHARE`` of its lines, first character unscored): every refitted base, with a guess
habit or without (guess 0: the two-path control), learns the same guess after its first
character, and the bases differ in their habits at the decision alone.

The first term anchors everything but the path choice where pretraining left it (the first
character alone, trained by itself, wrecks the answers behind it: a first version of this
refit did, lab notebook); the worked examples keep teaching the stepwise steps independently
of how often the path is chosen (``pretrain.PretrainConfig.worked``), so the refitted bases
should differ in the prior alone. That is checked, not assumed:
``dial_check`` measures every refitted base's P(stepwise), P(right | direct) and P(slip-free
steps | stepwise) exactly (``pretrain.author_match``) beside the unrefitted base's.

A refitted base is cached in ``results/<profile>/base_models/<base key>-prior-<key>/``.
"""
from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from rlvr_dynamics.models import first_ids, load_tiny
from rlvr_dynamics.pretrain import (PretrainConfig, author_match, base_dir, base_model,
                                    completion_loss, packed_batch, step_data,
                                    validation_pairs)
from rlvr_dynamics.fields import Real, check
from rlvr_dynamics.parallel import pool_map
from rlvr_dynamics.store import Entry, config_key, read_json, results_dir, write_json
from rlvr_dynamics.tasks.sums import GUESS, guess_completion, prompt, terms_of

log = logging.getLogger(__name__)

Prior = Real(0, 1, open_lo=True, open_hi=True)
"""The one range of a path prior, P(stepwise) or P(guess) of the refitted base: strictly
between 0 and 1 (at 0 or 1 one path's first character has no probability left, and its log is
not finite)."""

GUESS_SHARE = 0.125
"""Guesses added to each anchor batch, as a share of its pretraining lines."""


@dataclass(frozen=True)
class Refit:
    """How the path choice is refitted: to P(stepwise) = ``prior`` and P(guess) = ``guess``
    (0: no guess habit), by ``steps`` AdamW updates at learning rate ``lr`` (the end of
    pretraining's cosine schedule, a tenth of its peak), each on one pretraining step's data of
    the base (its batch and worked examples) and its guesses."""

    prior: float
    guess: float = 0.0
    steps: int = 200
    lr: float = 2e-4

    def __post_init__(self) -> None:
        check(Prior, self.prior, "prior")
        if self.guess:
            check(Prior, self.guess, "guess")
        if not (0 <= self.guess and self.prior + self.guess < 1):
            raise ValueError(f"Refit needs guess >= 0 and prior + guess < 1 (the direct path "
                             f"keeps some mass), got prior={self.prior}, guess={self.guess}")
        if self.steps < 1 or not self.lr > 0:
            raise ValueError(f"Refit needs steps >= 1 and lr > 0, got {self.steps}, {self.lr}")


def refit_dir(cfg: PretrainConfig, refit: Refit, profile: str) -> Path:
    return base_dir(cfg, profile).with_name(
        f"{cfg.key}-prior-{config_key(dataclasses.asdict(refit))}")


def first_position_batch(tokenizer, terms: list[tuple[int, ...]]) -> dict[str, torch.Tensor]:
    """``<s>prompt`` left-padded: the model's last position predicts the first completion
    character."""
    ids = [[tokenizer.bos_token_id] + tokenizer.convert_tokens_to_ids(list(prompt(t)))
           for t in terms]
    width, pad = max(map(len, ids)), tokenizer.pad_token_id
    mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in ids])
    return {"input_ids": torch.tensor([[pad] * (width - len(r)) + r for r in ids]),
            "attention_mask": mask, "position_ids": (mask.cumsum(-1) - 1).clamp(min=0)}


def first_characters(logits: torch.Tensor, tokenizer, terms: list[tuple[int, ...]]
                     ) -> dict[str, torch.Tensor]:
    """Per problem, the entry of ``logits`` (one row per problem, over the vocabulary) at the
    first character of each path: ``"direct"`` (``#``), ``"stepwise"`` (the problem's first
    digit) and ``"guess"`` (``tasks.sums.GUESS``), each as the token that writes it first
    (``models.first_ids``)."""
    first = first_ids(tokenizer, [str(t[0])[0] for t in terms])
    direct, guess = first_ids(tokenizer, ["#", GUESS])
    return {"direct": logits[:, direct],
            "stepwise": logits[torch.arange(len(terms)), torch.tensor(first)],
            "guess": logits[:, guess]}


def path_choice_loss(model, tokenizer, terms: list[tuple[int, ...]], prior: float,
                     guess: float = 0.0) -> torch.Tensor:
    """The second term of the module docstring's L, averaged over ``terms``."""
    logp = torch.log_softmax(model(**first_position_batch(tokenizer, terms)).logits[:, -1], -1)
    at = first_characters(logp, tokenizer, terms)
    return -((1 - prior - guess) * at["direct"] + prior * at["stepwise"]
             + guess * at["guess"]).mean()


def with_guesses(pairs: list[tuple[str, str]], step: int) -> list[tuple[str, str]]:
    """``pairs`` and ``GUESS_SHARE`` of their prompts again, answered by a guess (drawn from a
    stream of their own per ``step``)."""
    rng = np.random.default_rng([step, 7])
    return pairs + [(p, guess_completion(rng)) for p, _ in pairs[:round(GUESS_SHARE * len(pairs))]]


def refit(cfg: PretrainConfig, settings: Refit, profile: str):
    """The base of ``cfg`` with its path prior refitted (module docstring): ``(model,
    tokenizer)``, trained once and cached."""
    out = refit_dir(cfg, settings, profile)
    entry = Entry(out, code=__name__)
    if entry.whole:
        return load_tiny(out)
    model, tokenizer = base_model(cfg, profile)
    entry.begin(fresh=True)
    log.info("refitting the path habits of base %s to P(stepwise) %g, P(guess) %g (%d steps)",
             cfg.key, settings.prior, settings.guess, settings.steps)
    exclude = cfg.task.held_out()
    opt = torch.optim.AdamW(model.parameters(), lr=settings.lr, weight_decay=0.01)
    model.train()
    losses = []
    for step in range(cfg.steps, cfg.steps + settings.steps):  # the steps after pretraining's
        pairs, _ = step_data(cfg, step, exclude)
        lines = with_guesses(pairs, step)
        anchor = completion_loss(model, packed_batch(tokenizer, lines, unscored=[1] * len(lines)))
        terms = [terms_of(prompt) for prompt, _ in pairs]
        loss = anchor + path_choice_loss(model, tokenizer, terms, settings.prior, settings.guess)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    entry.finish({"base": cfg.key, "refit": dataclasses.asdict(settings), "losses": losses})
    return model, tokenizer


def _refit_job(job) -> None:
    refit(*job)


def refit_all(jobs: list[tuple[PretrainConfig, Refit]], profile: str, workers: int = 2) -> None:
    """The refits ``jobs`` (base, settings) not yet on disk, ``workers`` at a time
    (``parallel.pool_map``: one thread each, where one refit alone would gain 1.6x from the
    second core, two side by side gain 2x). Their pretrained bases are made first, here, each
    once: two refits of one base must not pretrain it side by side."""
    missing = [(cfg, how) for cfg, how in jobs
               if not Entry(refit_dir(cfg, how, profile), code=__name__).whole]
    for cfg in {cfg.key: cfg for cfg, _ in missing}.values():
        base_model(cfg, profile)
    pool_map(_refit_job, [(cfg, how, profile) for cfg, how in missing], workers, desc="refits")


def dial(made: dict[str, tuple[PretrainConfig, Refit | None]], cfg: PretrainConfig,
         problems: int, profile: str, workers: int = 2) -> pd.DataFrame:
    """``dial_check`` of the bases ``made`` (name -> a base and the refit of it, None: the base
    itself) on ``cfg``'s first ``problems`` test problems, computed once and kept in
    ``results/<profile>/base_models/dial-<key>/`` (a page reads it without the bases' weights,
    which the results release withholds); the refits made where missing, ``workers`` at a
    time."""
    what = {"bases": {name: [base.key, None if how is None else dataclasses.asdict(how)]
                      for name, (base, how) in made.items()},
            "cfg": cfg.key, "problems": problems}
    entry = Entry(results_dir(profile, "base_models") / f"dial-{config_key(what)}", code=__name__)
    if not entry.done:
        refit_all([m for m in made.values() if m[1] is not None], profile, workers)
        bases = {name: base_model(base, profile) if how is None else refit(base, how, profile)
                 for name, (base, how) in made.items()}
        terms = [p.meta["terms"] for p in cfg.task.problems("test")[:problems]]
        table = dial_check(bases, terms, cfg)
        entry.begin(fresh=True)
        write_json(entry.path / "dial.json", {"columns": list(table.columns),
                                              "rows": {k: list(v) for k, v in
                                                       table.iterrows()}})
        entry.finish(what)
    stored = read_json(entry.path / "dial.json")
    return pd.DataFrame.from_dict(stored["rows"], orient="index", columns=stored["columns"])


@torch.no_grad()
def path_masses(model, tokenizer, terms: list[tuple[int, ...]]) -> dict[str, np.ndarray]:
    """P(the first completion character starts each path), per problem, exactly from the
    logits (``first_characters``)."""
    batch = {k: v.to(model.device) for k, v in first_position_batch(tokenizer, terms).items()}
    p = torch.softmax(model(**batch).logits[:, -1].float(), -1).cpu()
    return {k: v.numpy() for k, v in first_characters(p, tokenizer, terms).items()}


def dial_check(bases: dict[str, tuple], terms: list[tuple[int, ...]], cfg: PretrainConfig
               ) -> pd.DataFrame:
    """Per named base (``(model, tokenizer)``), the exact means over ``terms`` of each path's
    first-character mass (``path_masses``), P(right | direct) and P(slip-free steps |
    stepwise) (``pretrain.author_match``), and the held-out pretraining loss after the first
    completion character (``cfg``'s validation corpus), beside the author's: what a refit
    changed, and what it left alone."""
    author = cfg.author
    val = validation_pairs(cfg)
    rows = {}
    for name, (model, tokenizer) in bases.items():
        model.eval()
        with torch.no_grad():
            m = author_match(model, tokenizer, terms, author)
            loss = completion_loss(model, packed_batch(tokenizer, val,
                                                       unscored=[1] * len(val))).item()
        masses = path_masses(model, tokenizer, terms)
        rows[name] = {"P(stepwise)": masses["stepwise"].mean(),
                      "P(direct)": masses["direct"].mean(), "P(guess)": masses["guess"].mean(),
                      "P(right | direct)": m["direct_right"].mean(),
                      "P(slip-free | stepwise)": m["clean_stepwise"].mean(),
                      "held-out loss after the first character": loss}
    rows["author"] = {"P(stepwise)": author.stepwise, "P(direct)": 1 - author.stepwise,
                      "P(guess)": 0.0,
                      "P(right | direct)": m["author_direct_right"].mean(),
                      "P(slip-free | stepwise)": m["author_clean_stepwise"].mean(),
                      "held-out loss after the first character": np.nan}
    return pd.DataFrame(rows).T
