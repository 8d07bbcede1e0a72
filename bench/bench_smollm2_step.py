"""Where a generation step of the ``cpu-smollm2`` profile spends its time, measured in one run
on one thread: SmolLM2-135M-Instruct with LoRA, one generation batch (prompts x G completions)
and its optimizer updates, as the training chapter builds them (``training.run.build_trainer``).

The phases are timed by wrapping the trainer's own methods:

* loading: the model from the PyPI package's GGUF (dequantised) and the trainer around it;
* generation: TRL's ``_generate_single_turn`` (``model.generate`` on the LoRA-wrapped policy);
* scoring without gradients: ``_get_per_token_logps_and_entropies`` under ``no_grad`` (the old
  policy's log-probabilities for the clipped ratio, and the reference model's for the KL);
* the loss's forward pass (the same method with gradients on) and the backward pass
  (``accelerator.backward``);
* the rest of the step (rewards, advantages, the optimizer, logging);
* the held-out greedy evaluation (``DynamicsCallback``), reported apart (every ``eval_every``
  steps in the profile).

Then the same prompts are sampled by the project's sampler (``sampling.TransformersBackend``:
its own decoding loop with a KV cache, finished rows leaving the batch) and the ratio of the
two generation times is printed, at the same number of completions and token budget.

    .venv/bin/python bench/bench_smollm2_step.py [--steps 1] [--threads 1]
"""
import argparse
import os
import tempfile
import time
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path

import torch
import transformers

from rlvr_dynamics import profiles
from rlvr_dynamics.chapters.training import Params
from rlvr_dynamics.sampling import SamplingParams, TransformersBackend
from rlvr_dynamics.training.data import prompt_text
from rlvr_dynamics.training.run import build_trainer

SECONDS: dict[str, float] = defaultdict(float)


@contextmanager
def timed(name: str):
    start = time.perf_counter()
    try:
        yield
    finally:
        SECONDS[name] += time.perf_counter() - start


def wrap(obj, attr: str, name) -> None:
    """Time every call of ``obj.attr`` under ``name`` (a str, or a function of the call's
    arguments that returns one)."""
    inner = getattr(obj, attr)

    def call(*args, **kwargs):
        with timed(name if isinstance(name, str) else name(*args, **kwargs)):
            return inner(*args, **kwargs)
    setattr(obj, attr, call)


def scoring(*args, **kwargs) -> str:
    return "forward (loss)" if torch.is_grad_enabled() else "scoring, no grad (old, ref)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=1, help="generation steps to time")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    transformers.logging.set_verbosity_error()
    T = Params.parse(profiles.resolve("cpu-smollm2", "training"))
    cfg = T.run_config("grpo", 0).replace(steps=args.steps, checkpoint_every=10 ** 6)
    print(f"SmolLM2 step: {cfg.generation_batch} completions ({cfg.generation_batch // cfg.num_generations}"
          f" prompts x G = {cfg.num_generations}), {cfg.updates_per_step} updates of "
          f"{cfg.update_batch}, max {cfg.max_completion_length} tokens, LoRA r={cfg.lora_rank}, "
          f"beta={cfg.beta}, gradient checkpointing {cfg.gradient_checkpointing}, "
          f"{args.threads} thread(s), load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        with timed("loading"):
            trainer = build_trainer(cfg, Path(tmp), profile="bench")
        wrap(trainer, "_generate_single_turn", "generation (TRL)")
        wrap(trainer, "_get_per_token_logps_and_entropies", scoring)
        wrap(trainer.accelerator, "backward", "backward")
        for cb in trainer.callback_handler.callbacks:
            if hasattr(cb, "evaluate"):
                wrap(cb, "evaluate", "held-out evaluation (apart)")
        start = time.perf_counter()
        trainer.train()
        total = time.perf_counter() - start - SECONDS["held-out evaluation (apart)"]
        inner = sum(v for k, v in SECONDS.items() if k not in ("loading",
                                                                "held-out evaluation (apart)"))
        SECONDS["rest of the step"] = total - inner
        print(f"\nper generation step ({args.steps} timed), seconds and share of the step:")
        for name, s in SECONDS.items():
            share = "" if name in ("loading", "held-out evaluation (apart)") else \
                f"{s / total:6.1%}"
            per = s if name == "loading" else s / args.steps
            print(f"  {name:32s} {per:8.1f} s  {share}")
        print(f"  {'step':32s} {total / args.steps:8.1f} s")

        problems = trainer.train_dataset.select(range(cfg.generation_batch // cfg.num_generations))
        model, tok = trainer.model, trainer.processing_class
        texts = [prompt_text(tok, p) for p in problems["prompt"]]
        backend = TransformersBackend(model, tok, batch_size=cfg.generation_batch, progress=False)
        params = SamplingParams(temperature=cfg.temperature, max_tokens=cfg.max_completion_length,
                                n=cfg.num_generations, seed=0)
        model.eval()
        with torch.no_grad():
            start = time.perf_counter()
            out = backend.generate(texts, params)
            ours = time.perf_counter() - start
        tokens = sum(len(c.token_ids) for row in out for c in row)
        theirs = SECONDS["generation (TRL)"] / args.steps
        print(f"\nthe project's sampler on the same {len(texts)} prompts x {cfg.num_generations}: "
              f"{ours:.1f} s ({tokens} tokens, {tokens / ours:.0f} tokens/s); TRL's generation "
              f"{theirs:.1f} s per step: ratio ours/TRL {ours / theirs:.2f}")


if __name__ == "__main__":
    main()
