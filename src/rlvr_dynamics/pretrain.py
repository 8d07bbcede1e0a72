"""Pretraining a tiny base model on the sums task's corpus, and checking that it converged.

Training is supervised (loss on the completion only) on fresh data from ``tasks.sums.Author``
at every step; sequences are packed into rows (no padding; ``position_ids`` restart at each
sequence, which keeps attention inside it), about three times faster than padded batches.
A base is cached by its configuration in ``results/<profile>/base_models/<key>/`` and resumes
from its last checkpoint, to the same weights as an uninterrupted run.

"Converged" means the base reproduces its author: its held-out loss has come down to the
entropy of the author's corpus (``loss_floor``; the difference is the per-token KL from author
to model), and at the decisions that matter -- which path (the first character), which direct
answer, the slip-free steps -- its exact probabilities match the author's (``author_match``).
"""
from __future__ import annotations

import dataclasses
import logging
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import torch
from pydantic import BaseModel, ConfigDict, model_validator
from tqdm.auto import tqdm

from rlvr_dynamics.fields import Int, ListOf, NonNegative, Positive, Probability, require
from rlvr_dynamics.models import (char_tokenizer, completion_ids, first_ids, load_tiny,
                                  tiny_qwen2)
from rlvr_dynamics.store import Entry, atomic_write, config_key, read_json, results_dir
from rlvr_dynamics.tasks.sums import (ALPHABET, Author, SumTask, author_logprob, carry_units,
                                      corpus, direct_distribution, prompt, stepwise_completion,
                                      terms_of)

log = logging.getLogger(__name__)

ROW = 128
"""Tokens per packed row (longer than any sequence of the default task)."""


@dataclass(frozen=True)
class PretrainConfig:
    """Everything that determines a base model (its cache key).

    ``operands``: the operand counts of the pretraining corpus (the base may know longer sums
    than the RL training split has); ``worked``: extra stepwise examples per step, as a share of
    ``batch``, whose first completion token (the choice of path) carries no loss -- they teach
    the rare path's steps without changing how often the base chooses it; ``snapshots``: steps
    at which a copy of the model is kept (less-converged bases, ``base_model(..., step=s)``);
    ``eval_every``: steps between held-out losses; ``first_tokens``: every completion's first
    character written with a token of its own that nothing else writes
    (``models.char_tokenizer``), so that the paths, which part there, begin with tokens no
    other path shares; ``tied``: input and output embeddings one matrix (the ladder
    chapter's R5 unties them and gives the first characters their own tokens).
    """

    task: SumTask = field(default_factory=SumTask)
    author: Author = field(default_factory=Author)
    operands: tuple[int, int] = (2, 9)
    hidden: int = 128
    layers: int = 4
    heads: int = 4
    steps: int = 2000
    batch: int = 128
    lr: float = 2e-3
    warmup: int = 100
    seed: int = 0
    checkpoint_every: int = 500
    eval_every: int = 100
    snapshots: tuple[int, ...] = ()
    worked: float = 0.25
    first_tokens: bool = False
    tied: bool = True

    def __post_init__(self) -> None:
        for name in ("hidden", "layers", "heads", "steps", "batch", "checkpoint_every",
                     "eval_every"):
            if getattr(self, name) < 1:
                raise ValueError(f"PretrainConfig.{name} must be >= 1, got {getattr(self, name)}")
        if self.hidden % self.heads:
            raise ValueError(f"PretrainConfig.hidden={self.hidden} must be divisible by "
                             f"heads={self.heads}")
        if not self.lr > 0:
            raise ValueError(f"PretrainConfig.lr must be > 0, got {self.lr}")
        if not self.worked >= 0:
            raise ValueError(f"PretrainConfig.worked must be >= 0, got {self.worked}")
        if not 0 <= self.warmup < self.steps:
            raise ValueError(f"PretrainConfig.warmup must lie in [0, steps), got {self.warmup}")
        if not 2 <= self.operands[0] <= self.operands[1]:
            raise ValueError(f"PretrainConfig.operands must be 2 <= lo <= hi, got {self.operands}")
        bad = [s for s in self.snapshots if not 0 < s < self.steps]
        if bad:
            raise ValueError(f"PretrainConfig.snapshots must lie in (0, steps), got {bad}")

    def as_dict(self) -> dict:
        """The configuration as plain values, the fields of ``LATER`` left out at the values
        that reproduce the bases made before them (so that such a base keeps its key)."""
        return {k: v for k, v in dataclasses.asdict(self).items()
                if k not in LATER or v != LATER[k]}

    @property
    def key(self) -> str:
        return config_key(self.as_dict())


class Pretraining(BaseModel):
    """The base model as its chapter declares it and the chapters that train from it read it
    (``config``): ``steps`` of ``batch`` sequences, ``hidden`` x ``layers``, AdamW at ``lr``,
    ``worked`` extra stepwise examples per step, sums of ``operands`` numbers, and the author
    of its corpus (``stepwise``, ``carry_slip``, ``carry_cap``, ``step_slip``,
    ``correction``: ``tasks.sums.Author``)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, validate_default=True)

    seed: Int(0) = 0
    steps: Int(1) = 2000
    hidden: Int(4) = 128
    layers: Int(1) = 4
    batch: Int(1) = 128
    lr: Positive = 0.002
    worked: NonNegative = 0.25
    operands: ListOf(Int(2), 2) = [2, 9]
    stepwise: Probability = 0.05
    carry_slip: Probability = 0.3
    carry_cap: Int(0) | None = 2
    step_slip: Probability = 0.02
    correction: Probability = 0.03

    @model_validator(mode="after")
    def _cross(self):
        require(len(self.operands) == 2 and self.operands[0] <= self.operands[1],
                "operands must be [lo, hi] with 2 <= lo <= hi")
        require(self.hidden % 4 == 0, f"hidden={self.hidden} must be divisible by the 4 heads")
        require(self.step_slip + self.correction <= 1, "step_slip + correction must be <= 1")
        return self

    def author(self) -> Author:
        return Author(stepwise=self.stepwise, carry_slip=self.carry_slip,
                      carry_cap=self.carry_cap, step_slip=self.step_slip,
                      correction=self.correction)

    def config(self) -> PretrainConfig:
        """The base model these parameters describe (its cache key)."""
        return PretrainConfig(task=SumTask(), author=self.author(),
                              operands=tuple(self.operands), hidden=self.hidden,
                              layers=self.layers, steps=self.steps, batch=self.batch,
                              lr=self.lr, seed=self.seed, worked=self.worked)


LATER = {"first_tokens": False, "tied": True}
"""``PretrainConfig`` fields added after bases were first keyed, and their values that make
the bases of before (``PretrainConfig.as_dict``)."""


def encode_pair(tokenizer, prompt: str, completion: str, unscored: int = 0
                ) -> tuple[list[int], list[int]]:
    """``<s>prompt completion</s>`` as token ids, and labels that are -100 on the prompt and on
    the first ``unscored`` completion tokens."""
    p = [tokenizer.bos_token_id] + tokenizer.convert_tokens_to_ids(list(prompt))
    c = completion_ids(tokenizer, completion) + [tokenizer.eos_token_id]
    return p + c, [-100] * (len(p) + unscored) + c[unscored:]


def packed_batch(tokenizer, pairs: list[tuple[str, str]], row: int = ROW,
                 unscored: Sequence[int] | None = None) -> dict[str, torch.Tensor]:
    """Sequences laid end to end in rows of at most ``row`` tokens (a longer sequence gets a row
    of its own); ``position_ids`` restart at 0 for each sequence, so the model attends within
    sequences only, and the mean loss is exactly that of a padded batch. ``unscored[i]``
    completion tokens of pair i carry no loss (``encode_pair``)."""
    rows: list[tuple[list[int], list[int], list[int]]] = [([], [], [])]
    for (p, c), skip in zip(pairs, unscored or [0] * len(pairs)):
        ids, labels = encode_pair(tokenizer, p, c, skip)
        if rows[-1][0] and len(rows[-1][0]) + len(ids) > row:
            rows.append(([], [], []))
        rows[-1][0].extend(ids)
        rows[-1][1].extend(labels)
        rows[-1][2].extend(range(len(ids)))
    width = max(len(r[0]) for r in rows)
    pad = tokenizer.pad_token_id
    return {  # padding at a row's end is one more sequence, with no labels
        "input_ids": torch.tensor([r[0] + [pad] * (width - len(r[0])) for r in rows]),
        "labels": torch.tensor([r[1] + [-100] * (width - len(r[1])) for r in rows]),
        "position_ids": torch.tensor([r[2] + list(range(width - len(r[2]))) for r in rows]),
    }


def completion_loss(model, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """Mean cross-entropy (nats per completion token) of a ``packed_batch``. ``use_cache=False``
    matters: with a cache, transformers ignores the packing and attends across sequences."""
    return model(**batch, use_cache=False).loss


def validation_pairs(cfg: PretrainConfig, n: int = 1024) -> list[tuple[str, str]]:
    """A fixed held-out sample of the author's corpus (its own random stream)."""
    rng = np.random.default_rng([cfg.seed, 2**31])
    return corpus(cfg.author, n, cfg.operands, cfg.task.digits, rng, cfg.task.held_out())


def loss_floor(cfg: PretrainConfig) -> float:
    """The held-out loss of a model that reproduces the author exactly: the author's entropy,
    -sum log P_author(completion | prompt) over the validation pairs, per completion token
    (``</s>`` included, as in the loss). Loss minus floor is the per-token KL(author || model)."""
    pairs = validation_pairs(cfg)
    nats = -sum(author_logprob(terms_of(p), c, cfg.author) for p, c in pairs)
    return nats / sum(len(c) + 1 for _, c in pairs)


def step_data(cfg: PretrainConfig, step: int, exclude: set[tuple[int, ...]]
              ) -> tuple[list[tuple[str, str]], list[int]]:
    """The (prompt, completion) pairs of pretraining step ``step`` and their unscored tokens:
    ``batch`` lines of the author's, then ``worked x batch`` stepwise ones whose first
    character is unscored. They depend only on (seed, step)."""
    rng = np.random.default_rng([cfg.seed, step])
    pairs = corpus(cfg.author, cfg.batch, cfg.operands, cfg.task.digits, rng, exclude)
    worked = corpus(cfg.author, round(cfg.worked * cfg.batch), cfg.operands, cfg.task.digits,
                    rng, exclude, only="stepwise")
    return pairs + worked, [0] * len(pairs) + [1] * len(worked)


def _lr_factor(cfg: PretrainConfig, step: int) -> float:
    """Linear warm-up, then cosine decay to a tenth of the peak learning rate."""
    if step < cfg.warmup:
        return (step + 1) / cfg.warmup
    progress = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
    return 0.1 + 0.45 * (1 + math.cos(math.pi * progress))


def pretrain(cfg: PretrainConfig, out: Path) -> Path:
    """Train from scratch (or resume from ``out/checkpoint.pt``) and save the model in ``out``.

    The data of step s depends only on (seed, s), so a resumed run equals an uninterrupted one.
    ``out/done.json`` records the configuration, the training losses and the held-out losses.
    """
    out, entry = Path(out), Entry(out, code=__name__)
    if entry.whole:
        return out
    entry.begin()
    tokenizer = char_tokenizer(ALPHABET, first=cfg.first_tokens)
    model = tiny_qwen2(tokenizer, cfg.hidden, cfg.layers, cfg.heads, seed=cfg.seed,
                       tied=cfg.tied)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: _lr_factor(cfg, s))
    exclude = cfg.task.held_out()
    val = packed_batch(tokenizer, validation_pairs(cfg))
    start, losses, held_out = 0, [], []
    ckpt = out / "checkpoint.pt"
    if ckpt.is_file():
        state = torch.load(ckpt, weights_only=False)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        sched.load_state_dict(state["sched"])
        start, losses, held_out = state["step"], state["losses"], state["held_out"]
        log.info("resuming pretraining of %s at step %d", out.name, start)
    else:
        log.info("pretraining %s: %d steps of %d sequences", out.name, cfg.steps, cfg.batch)
    bar = tqdm(range(start, cfg.steps), initial=start, total=cfg.steps, desc="pretrain",
               mininterval=10)
    for step in bar:
        model.train()
        pairs, unscored = step_data(cfg, step, exclude)
        loss = completion_loss(model, packed_batch(tokenizer, pairs, unscored=unscored))
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
        done = step + 1
        if done % cfg.eval_every == 0 or done == cfg.steps:
            model.eval()
            with torch.no_grad():
                held_out.append((done, completion_loss(model, val).item()))
            bar.set_postfix(loss=f"{losses[-1]:.4f}", held_out=f"{held_out[-1][1]:.4f}")
        if done in cfg.snapshots:
            model.save_pretrained(out / f"step-{done}")
            tokenizer.save_pretrained(out / f"step-{done}")
        if done % cfg.checkpoint_every == 0 and done < cfg.steps:
            state = {"model": model.state_dict(), "opt": opt.state_dict(),
                     "sched": sched.state_dict(), "step": done, "losses": losses,
                     "held_out": held_out}
            atomic_write(ckpt, lambda f: torch.save(state, f), "wb")
    model.eval()
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    entry.finish({"config": dataclasses.asdict(cfg), "losses": losses, "held_out": held_out},
                 scratch=[ckpt.name])
    return out


def base_dir(cfg: PretrainConfig, profile: str) -> Path:
    return results_dir(profile, "base_models") / cfg.key


def base_model(cfg: PretrainConfig, profile: str, step: int | None = None):
    """The base model for ``cfg`` (and its tokenizer): trained once, then found in
    ``results/<profile>/base_models``; ``step`` picks one of ``cfg.snapshots``."""
    out = pretrain(cfg, base_dir(cfg, profile))
    if step is None:
        return load_tiny(out)
    if step not in cfg.snapshots:
        raise ValueError(f"step={step} is not a snapshot of this base; snapshots: {cfg.snapshots}")
    return load_tiny(out / f"step-{step}")


def pretrain_log(cfg: PretrainConfig, profile: str) -> dict:
    """``{"losses": [...], "held_out": [[step, loss], ...]}`` of a finished base."""
    out = base_dir(cfg, profile)
    if not Entry(out, code=__name__).done:
        raise FileNotFoundError(f"{out}: base {cfg.key} is not trained under {profile!r} by "
                                "this code; call base_model(cfg, profile) first")
    return read_json(out / "done.json")


# --- convergence: does the base reproduce its author? -------------------------------------

@torch.no_grad()
def first_char_probabilities(model, tokenizer, prompts: list[str], temperature: float = 1.0,
                             chars: str | list[str] = "#") -> np.ndarray:
    """P(first completion character = ``chars``, one for all prompts or one per prompt) for
    each prompt at ``temperature``: by default ``#``, the exact probability of the direct
    path; each prompt's first digit, the stepwise path's."""
    ids = [[tokenizer.bos_token_id] + tokenizer.convert_tokens_to_ids(list(p)) for p in prompts]
    width = max(map(len, ids))
    pad = tokenizer.pad_token_id
    x = torch.tensor([[pad] * (width - len(r)) + r for r in ids])
    mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in ids])
    logits = model(input_ids=x, attention_mask=mask).logits[:, -1]
    p = torch.softmax(logits.float() / temperature, -1)
    ids = first_ids(tokenizer, [chars] * len(prompts) if isinstance(chars, str) else chars)
    return p[torch.arange(len(prompts)), torch.tensor(ids)].numpy()


@torch.no_grad()
def sequence_logprobs(model, tokenizer, pairs: list[tuple[str, str]]) -> np.ndarray:
    """log pi(completion </s> | <s> prompt) for each (prompt, completion), teacher-forced."""
    batch = packed_batch(tokenizer, pairs)
    logp = torch.log_softmax(model(**batch, use_cache=False).logits.float(), -1)
    labels = batch["labels"][:, 1:]
    token = logp[:, :-1].gather(-1, labels.clamp(min=0)[..., None])[..., 0] * (labels >= 0)
    # each sequence's labelled tokens sit in its own run of the packed rows: sum per run
    starts = batch["position_ids"][:, 1:] == 0
    seq = starts.long().cumsum(-1)
    out = []
    for r in range(token.shape[0]):
        sums = torch.zeros(int(seq[r].max()) + 1).index_add_(0, seq[r], token[r])
        has = torch.zeros_like(sums).index_add_(0, seq[r], (labels[r] >= 0).float())
        out += sums[has > 0].tolist()
    return np.array(out)


def author_match(model, tokenizer, terms_list: list[tuple[int, ...]], author: Author
                 ) -> dict[str, np.ndarray]:
    """Per problem, the model's exact probabilities at the author's decisions, beside the
    author's own (all conditional on the path, all at temperature 1):

    ``stepwise``: P(stepwise path) = P(first character = the first digit of the problem)
    (author: ``Author.stepwise``);
    ``direct_right``: P(right answer | direct); ``direct_tv``: total-variation distance between
    the model's and the author's direct answers (model mass outside the author's answers counts
    in full); ``clean_stepwise``: P(the slip-free stepwise completion | stepwise), which the
    author writes with probability (1 - step_slip - correction) ** (m - 1). ``author_*`` hold
    the author's values, ``units`` the carry units and ``m`` the operand count.
    """
    prompts = [prompt(t) for t in terms_list]
    p_direct = first_char_probabilities(model, tokenizer, prompts)
    p_stepwise = first_char_probabilities(model, tokenizer, prompts, chars=[p[0] for p in prompts])
    clean = Author(step_slip=0.0, correction=0.0)
    no_rng = np.random.default_rng(0)  # a slip-free author draws nothing
    rows = [(p, stepwise_completion(t, clean, no_rng)) for p, t in zip(prompts, terms_list)]
    index = [(i, None, 0.0) for i in range(len(terms_list))]
    for i, terms in enumerate(terms_list):
        for answer, p in direct_distribution(terms, author).items():
            rows.append((prompts[i], f"#{answer}"))
            index.append((i, answer, p))
    logp = sequence_logprobs(model, tokenizer, rows)
    n = len(terms_list)
    out = {k: np.zeros(n) for k in ("direct_right", "author_direct_right", "direct_tv",
                                    "clean_stepwise")}
    covered = np.zeros(n)
    for (i, answer, p), lp in zip(index, logp):
        if answer is None:
            out["clean_stepwise"][i] = math.exp(lp) / p_stepwise[i]
            continue
        q = math.exp(lp) / p_direct[i]  # conditional on choosing the direct path
        out["direct_tv"][i] += abs(p - q)
        covered[i] += q
        if answer == str(sum(terms_list[i])):
            out["direct_right"][i], out["author_direct_right"][i] = q, p
    out["direct_tv"] = 0.5 * (out["direct_tv"] + np.clip(1 - covered, 0, None))
    m = np.array([len(t) for t in terms_list])
    return {**out, "stepwise": p_stepwise,
            "author_stepwise": np.full(n, author.stepwise),
            "author_clean_stepwise": (1 - author.step_slip - author.correction) ** (m - 1),
            "units": np.array([sum(carry_units(t)) for t in terms_list]), "m": m}
