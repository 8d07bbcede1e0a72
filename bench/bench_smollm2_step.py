"""Where a generation step of the ``cpu-smollm2`` profile spends its time, measured in one run
on one thread: SmolLM2-135M-Instruct with LoRA, one generation batch (prompts x G completions)
and its optimizer updates, as the pretrained chapter's runs are built
(``rl.runs.build_trainer``).

The phases are timed by wrapping the trainer's own methods:

* loading: the model from the PyPI package's GGUF (dequantised) and the trainer around it;
* generation: the trainer's ``_generate_single_turn`` (the project's sampler on the LoRA-wrapped
  policy, ``rl.trainer``);
* scoring without gradients: ``_get_per_token_logps_and_entropies`` under ``no_grad`` (the old
  policy's log-probabilities for the clipped ratio, and the reference model's for the KL);
* the loss's forward pass (the same method with gradients on) and the backward pass
  (``accelerator.backward``);
* the rest of the step (rewards, advantages, the optimizer, logging);
* the held-out greedy evaluation (``DynamicsCallback``), reported apart (every ``eval_every``
  steps in the profile).

Then one step's rollouts are drawn both ways on the same prompts, TRL's ``model.generate`` and
the project's sampler (``sampling.TransformersBackend``: its own decoding loop with a KV cache,
a group's prompt prefilled once, finished rows leaving the batch), and the ratio of their times
is printed. ``--smoke``: 2 prompts x G = 2, 2 updates, 4 tokens, 2 held-out problems (seconds
besides loading SmolLM2; checks that the bench runs, its ratio means nothing).

``--beta`` sets the KL coefficient (0: TRL loads no reference model and skips its pass).
``--shared-prompt``: each distinct prompt scored once in the passes (``rl.trainer``); either
way, the loss's pass over the step's last batch is then timed both ways and their ratio
printed.
``--bf16``: the model in bfloat16 and the step under bf16 autocast, as the paper trains (this
CPU multiplies bfloat16 matrices in hardware); the loss's pass over the step's last batch is
then also timed with the model cast to float32, and their ratio printed.
``--prompt`` sets the chat around each question (``tasks.arithmetic.PROMPTS``; the chapter
chooses it by measurement first): a prompt that gets one-line answers shortens every phase.

    .venv/bin/python bench/bench_smollm2_step.py [--steps 1] [--threads 1] [--prompt example]
                                                 [--beta 0] [--shared-prompt] [--bf16]
                                                 [--smoke]
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

from trl import GRPOTrainer

from rlvr_dynamics import profiles
from rlvr_dynamics.chapters import pretrained
from rlvr_dynamics.rl.runs import build_trainer
from rlvr_dynamics.tasks.arithmetic import PROMPTS

SECONDS: dict[str, float] = defaultdict(float)
SMOKE = dict(num_generations=2, generation_batch=4, update_batch=2, micro_batch=2,
             max_completion_length=4, eval_problems=2, eval_batch=2)


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
    BATCH.update(args=args, kwargs=kwargs)  # the last pass's batch, for ``passes_both_ways``
    return "forward (loss)" if torch.is_grad_enabled() else "scoring, no grad (old, ref)"


BATCH: dict = {}


def passes_both_ways(trainer, repeats: int = 2) -> tuple[float, float]:
    """Seconds of one pass over the step's last batch of the loss, forward and backward, with
    each distinct prompt computed once (``GRPONTrainer.shared_prompt_passes``) and with every
    row's prompt computed (``GRPONTrainer``'s passes without it): the best of ``repeats``, the
    two taken in turns so that both see the same load."""
    best = {}
    for _ in range(repeats):
        for shared in (True, False):
            trainer.args.shared_prompt = shared
            best[shared] = min(best.get(shared, float("inf")), loss_pass(trainer, repeats=1))
    return best[True], best[False]


def loss_pass(trainer, repeats: int = 2) -> float:
    """Seconds of one pass of the loss over the step's last batch, forward and backward, as the
    trainer runs it (its passes under the accelerator's autocast): the best of ``repeats``."""
    args, kwargs = BATCH["args"], BATCH["kwargs"]
    best = float("inf")
    for _ in range(repeats):
        args[0].zero_grad()
        start = time.perf_counter()
        logps, _, _ = type(trainer)._get_per_token_logps_and_entropies(trainer, *args, **kwargs)
        logps.float().sum().backward()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=1, help="generation steps to time")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--prompt", choices=PROMPTS, default="instruction")
    ap.add_argument("--beta", type=float, default=None,
                    help="the KL coefficient (default: the profile's; 0 drops the reference "
                         "model's pass)")
    ap.add_argument("--shared-prompt", action="store_true",
                    help="each distinct prompt scored once in the step's passes")
    ap.add_argument("--bf16", action="store_true",
                    help="the model in bfloat16, the step under bf16 autocast")
    ap.add_argument("--smoke", action="store_true", help="smallest sizes (seconds)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    transformers.logging.set_verbosity_error()
    P = pretrained.Params.parse({**profiles.plan("cpu-smollm2", ["pretrained"])["pretrained"],
                                 "prompt": args.prompt, "boxed_only": True})
    cfg = pretrained.runs(P)["grpo", 0].replace(steps=args.steps, checkpoint_every=10 ** 6,
                                                probe_every=0, **(SMOKE if args.smoke else {}),
                                                **({} if args.beta is None else
                                                   {"beta": args.beta}),
                                                shared_prompt=args.shared_prompt,
                                                bf16=args.bf16)
    print(f"SmolLM2 step: {cfg.generation_batch} completions ({cfg.generation_batch // cfg.num_generations}"
          f" prompts x G = {cfg.num_generations}), {cfg.updates_per_step} updates of "
          f"{cfg.update_batch}, max {cfg.max_completion_length} tokens, LoRA r={cfg.lora_rank}, "
          f"beta={cfg.beta}, prompt {args.prompt}, shared prompt {cfg.shared_prompt}, "
          f"gradient checkpointing {cfg.gradient_checkpointing}, bf16 {cfg.bf16}, "
          f"{args.threads} thread(s), load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        with timed("loading"):
            trainer = build_trainer(cfg, Path(tmp), profile="bench")
        wrap(trainer, "_generate_single_turn", "generation")
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
        shared, every = passes_both_ways(trainer)
        _, ids, mask, keep = BATCH["args"][:4]
        prompt = mask[:, :-keep].sum().item()
        print(f"the loss's pass over the last batch ({len(ids)} rows, prompts "
              f"{prompt / len(ids):.0f} tokens a row, completions "
              f"{mask[:, -keep:].sum().item() / len(ids):.1f} a row of {keep} columns), forward "
              f"and backward: {shared:.2f} s with each prompt once, {every:.2f} s with every "
              f"row's: ratio {shared / every:.2f}")

        if cfg.bf16:
            low = loss_pass(trainer)
            trainer.model.float()
            trainer.accelerator.native_amp = False  # its autocast off: float32 throughout
            high = loss_pass(trainer)
            trainer.model.to(torch.bfloat16)  # the rollouts below as the step drew them
            trainer.accelerator.native_amp = True
            print(f"the loss's pass over the last batch, forward and backward: {low:.2f} s in "
                  f"bfloat16, {high:.2f} s in float32: ratio {low / high:.2f}")

        prompts = trainer.train_dataset.select(range(cfg.generation_batch // cfg.num_generations))
        ids, _, _ = trainer._tokenize_prompts([p for p in prompts["prompt"]
                                               for _ in range(cfg.num_generations)])
        seconds = {}
        for name, generate in [("TRL's model.generate", GRPOTrainer._generate_single_turn),
                               ("the project's sampler", type(trainer)._generate_single_turn)]:
            start = time.perf_counter()
            completions, _ = generate(trainer, ids, None, {}, cfg.num_generations)
            seconds[name] = time.perf_counter() - start
            tokens = sum(map(len, completions))
            print(f"{name}: {seconds[name]:.1f} s for the step's {len(ids)} rollouts "
                  f"({tokens} tokens, {tokens / seconds[name]:.0f} tokens/s)")
        ours, theirs = seconds["the project's sampler"], seconds["TRL's model.generate"]
        print(f"ratio, the project's sampler / TRL's generate: {ours / theirs:.2f}")

if __name__ == "__main__":
    main()
