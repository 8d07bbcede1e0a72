"""Pretraining step time: packed rows (``pretrain.packed_batch``) against one padded row per
sequence, same model, same data, measured in one run. Prints the ratio. ``--smoke``: one timed
step (after the two warm-up steps) of a batch of 8 (seconds; checks that the bench runs, its
ratio means nothing).

    .venv/bin/python bench/bench_pretrain.py [--smoke]
"""
import argparse
import time

import numpy as np
import torch

from rlvr_dynamics.models import char_tokenizer, tiny_qwen2
from rlvr_dynamics.pretrain import (PretrainConfig, completion_loss, encode_pair, packed_batch,
                                    step_data)
from rlvr_dynamics.tasks.sums import ALPHABET


def padded_batch(tok, pairs, unscored):
    encoded = [encode_pair(tok, p, c, u) for (p, c), u in zip(pairs, unscored)]
    width = max(len(x) for x, _ in encoded)
    pad = lambda row, value: row + [value] * (width - len(row))  # noqa: E731
    return {"input_ids": torch.tensor([pad(x, tok.pad_token_id) for x, _ in encoded]),
            "labels": torch.tensor([pad(y, -100) for _, y in encoded]),
            "attention_mask": torch.tensor([pad([1] * len(x), 0) for x, _ in encoded])}


def seconds_per_step(model, batches, forward) -> float:
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for i, batch in enumerate(batches):
        if i == 2:  # two warm-up steps
            start = time.perf_counter()
        loss = forward(model, batch)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return (time.perf_counter() - start) / (len(batches) - 2)


def main(steps: int = 8, batch: int = PretrainConfig.batch) -> None:
    torch.set_num_threads(1)
    cfg = PretrainConfig(batch=batch)
    tok = char_tokenizer(ALPHABET)
    data = [step_data(cfg, s, set()) for s in range(steps)]
    padded = [padded_batch(tok, *d) for d in data]
    packed = [packed_batch(tok, pairs, unscored=u) for pairs, u in data]
    real = np.mean([b["attention_mask"].float().mean().item() for b in padded])
    t_pad = seconds_per_step(tiny_qwen2(tok), padded, lambda m, b: m(**b).loss)
    t_pack = seconds_per_step(tiny_qwen2(tok), packed, completion_loss)
    print(f"default base ({cfg.hidden}x{cfg.layers}, batch {cfg.batch} + {cfg.worked:g} worked, "
          f"operands {cfg.operands}), "
          f"1 thread: padded {t_pad:.3f} s/step ({real:.0%} real tokens), "
          f"packed {t_pack:.3f} s/step; speed-up (time ratio, padded / packed) "
          f"{t_pad / t_pack:.2f}x")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--smoke", action="store_true", help="smallest sizes (seconds)")
    main(*((3, 8) if ap.parse_args().smoke else ()))
