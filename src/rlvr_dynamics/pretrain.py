"""Pretraining a tiny base model on a synthetic task's corpus (supervised, loss on the
completion only), cached by its configuration and resumable from checkpoints."""
from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from tqdm.auto import tqdm

from rlvr_dynamics.models import char_tokenizer, load_tiny, tiny_qwen2
from rlvr_dynamics.store import config_key, read_json, results_dir, write_json
from rlvr_dynamics.tasks.sums import ALPHABET, Author, SumTask, corpus

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PretrainConfig:
    """Everything that determines a base model (its cache key)."""

    task: SumTask = field(default_factory=SumTask)
    author: Author = field(default_factory=Author)
    operands: tuple[int, int] = (2, 4)
    hidden: int = 128
    layers: int = 4
    heads: int = 4
    steps: int = 3000
    batch: int = 128
    lr: float = 2e-3
    warmup: int = 100
    seed: int = 0
    checkpoint_every: int = 500

    def __post_init__(self) -> None:
        for name in ("hidden", "layers", "heads", "steps", "batch", "checkpoint_every"):
            if getattr(self, name) < 1:
                raise ValueError(f"PretrainConfig.{name} must be >= 1")
        if not self.lr > 0:
            raise ValueError(f"PretrainConfig.lr must be > 0, got {self.lr}")
        if not 2 <= self.operands[0] <= self.operands[1]:
            raise ValueError(f"PretrainConfig.operands must be 2 <= lo <= hi, got {self.operands}")


def _batch(tokenizer, pairs: list[tuple[str, str]]) -> dict[str, torch.Tensor]:
    """Right-padded <s>prompt completion</s> with labels only on the completion and </s>."""
    ids, labels = [], []
    for p, c in pairs:
        pi = [tokenizer.bos_token_id] + tokenizer.convert_tokens_to_ids(list(p))
        ci = tokenizer.convert_tokens_to_ids(list(c)) + [tokenizer.eos_token_id]
        ids.append(pi + ci)
        labels.append([-100] * len(pi) + ci)
    width = max(map(len, ids))
    pad = tokenizer.pad_token_id
    return {
        "input_ids": torch.tensor([x + [pad] * (width - len(x)) for x in ids]),
        "attention_mask": torch.tensor([[1] * len(x) + [0] * (width - len(x)) for x in ids]),
        "labels": torch.tensor([y + [-100] * (width - len(y)) for y in labels]),
    }


def pretrain(cfg: PretrainConfig, out: Path) -> Path:
    """Train from scratch (or resume from ``out/checkpoint``) and save the model in ``out``."""
    out = Path(out)
    if (out / "done.json").is_file():
        return out
    tokenizer = char_tokenizer(ALPHABET)
    model = tiny_qwen2(tokenizer, cfg.hidden, cfg.layers, cfg.heads, seed=cfg.seed)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / cfg.warmup))
    exclude = {p.meta["terms"] for s in ("test", "ood") for p in cfg.task.problems(s)}
    start, losses = 0, []
    ckpt = out / "checkpoint.pt"
    if ckpt.is_file():
        state = torch.load(ckpt, weights_only=False)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        sched.load_state_dict(state["sched"])
        start, losses = state["step"], state["losses"]
        log.info("resuming pretraining at step %d", start)
    model.train()
    for step in tqdm(range(start, cfg.steps), initial=start, total=cfg.steps, desc="pretrain"):
        rng = np.random.default_rng([cfg.seed, step])  # the data of a step depends only on it
        pairs = corpus(cfg.author, cfg.batch, cfg.operands, cfg.task.digits, rng, exclude)
        loss = model(**_batch(tokenizer, pairs)).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
        if (step + 1) % cfg.checkpoint_every == 0 and step + 1 < cfg.steps:
            out.mkdir(parents=True, exist_ok=True)
            tmp = ckpt.with_suffix(".tmp")
            torch.save({"model": model.state_dict(), "opt": opt.state_dict(),
                        "sched": sched.state_dict(), "step": step + 1, "losses": losses}, tmp)
            tmp.replace(ckpt)
    model.eval()
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    write_json(out / "done.json", {"config": dataclasses.asdict(cfg), "losses": losses})
    ckpt.unlink(missing_ok=True)
    return out


def base_model(cfg: PretrainConfig, profile: str):
    """The base model for ``cfg``: trained once, then found in ``results/<profile>/base_models``."""
    out = results_dir(profile, "base_models") / config_key(dataclasses.asdict(cfg))
    return load_tiny(pretrain(cfg, out))


def pretrain_losses(cfg: PretrainConfig, profile: str) -> list[float]:
    out = results_dir(profile, "base_models") / config_key(dataclasses.asdict(cfg))
    return read_json(out / "done.json")["losses"]
