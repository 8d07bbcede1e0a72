"""Where a generation step of the ``cpu-smollm2`` profile spends its time, measured in one run
on one thread: SmolLM2-135M-Instruct with LoRA, one generation batch (prompts x G completions)
and its optimizer updates, as the pretrained chapter's runs are built
(``rl.runs.build_trainer``), once for each way of running the passes over prompt and
completion (``PASSES``): TRL's layout (every row its own prompt, the padding cut per chunk)
and packed (``packed``: each distinct prompt once, a chunk's completions in one row without
padding, ``rl.packing``). Each way is a fresh trainer from the same
seed, so every way draws and trains on the same batch (checked: the rollouts and the loss's
batches are compared).

The phases are timed by wrapping the trainer's own methods:

* loading: the model from the PyPI package's GGUF (dequantised) and the trainer around it;
* generation: the trainer's ``_generate_single_turn`` (the project's sampler on the LoRA-wrapped
  policy, ``rl.trainer``: one decoding loop for all of the step's rows);
* scoring without gradients: ``_get_per_token_logps_and_entropies`` under ``no_grad`` (the old
  policy's log-probabilities for the clipped ratio, and the reference model's for the KL);
* the loss's forward pass (the same method with gradients on) and the backward pass
  (``accelerator.backward``);
* the rest of the step (rewards, advantages, the optimizer, logging);
* the held-out greedy evaluation (``DynamicsCallback``), reported apart, timed with the first
  way only (it does not depend on the passes).

The passes' matrix products are counted as they run (``torch.utils.flop_counter``: mm, addmm
and bmm; the CPU attention kernel is not counted; the counter's own cost is in their
seconds), the generation's by drawing the step's rollouts again, untimed, from a fresh trainer
(the same rollouts, checked: a counter inside the decoding loop's many small operations would
slow it by a third); a way's fraction of the one-thread matmul limit is its FLOPs over its
seconds at that limit, measured in the same run: torch.mm over SmolLM2's own weight matrices at
the rows a pass multiplies (``bench_generation.step_rate``, the larger of two row counts). Printed: each way's step and phases, their GFLOP and fraction of
the limit, the ratio of each way's step to TRL's layout's, and the largest difference of each
way's log-probabilities from TRL's own pass on the step's last batch (the same numbers up to
rounding, on the real model).

Then one step's rollouts are drawn both ways on the same prompts, TRL's ``model.generate`` and
the project's sampler (``sampling.TransformersBackend``: its own decoding loop with a KV cache,
a group's prompt prefilled once, finished rows leaving the batch), and the ratio of their times
is printed. ``--smoke``: 2 prompts x G = 2, 2 updates, 4 tokens, 2 held-out problems (seconds
besides loading SmolLM2; checks that the bench runs, its ratios mean nothing).

``--beta`` sets the KL coefficient (0: TRL loads no reference model and skips its pass).
``--bf16``: the model in bfloat16 and the step under bf16 autocast, as the paper trains (this
CPU multiplies bfloat16 matrices in hardware); the loss's pass over the step's last batch is
then also timed with the model cast to float32, and their ratio printed.
``--prompt`` sets the chat around each question (``tasks.arithmetic.PROMPTS``; the chapter
chose ``system+example`` by measurement first): a prompt that gets one-line answers shortens
every phase.

    .venv/bin/python bench/bench_smollm2_step.py [--steps 1] [--threads 1] [--prompt example]
                                                 [--beta 0] [--bf16] [--smoke]
"""
import argparse
import os
import sys
import tempfile
import time
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path

import torch
import transformers
from torch.utils.flop_counter import FlopCounterMode

from trl import GRPOTrainer

sys.path.insert(0, str(Path(__file__).parent))
from bench_generation import step_rate  # noqa: E402

from rlvr_dynamics import profiles, registry  # noqa: E402
from rlvr_dynamics.chapters import pretrained  # noqa: E402
from rlvr_dynamics.rl.runs import build_trainer  # noqa: E402
from rlvr_dynamics.tasks.arithmetic import PROMPTS  # noqa: E402

PASSES = {"TRL's layout": {"packed": False}, "packed": {"packed": True}}
"""The ways of running the passes over prompt and completion, as ``Settings`` changes; the
first is the one the others are compared with."""

SMOKE = dict(num_generations=2, generation_batch=4, update_batch=2, micro_batch=2,
             max_completion_length=4, eval_problems=2, eval_batch=2)
APART = ("loading", "held-out evaluation (apart)")
PASS_PHASES = ("scoring, no grad (old, ref)", "forward (loss)", "backward")


class Phases:
    """Seconds and matmul FLOPs per phase of one trainer's steps, by wrapping its methods; the
    rollouts it drew and the batches of its passes."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.flops: dict[str, float] = defaultdict(float)
        self.rollouts: list = []
        self.generated: list = []  # the arguments of each generation call
        self.batches: list = []

    @contextmanager
    def timed(self, name: str, count: bool = True):
        counter = FlopCounterMode(display=False) if count else None
        start = time.perf_counter()
        try:
            if counter is None:
                yield
            else:
                with counter:
                    yield
        finally:
            self.seconds[name] += time.perf_counter() - start
            if counter is not None:
                self.flops[name] += counter.get_total_flops()

    def wrap(self, obj, attr: str, name, count: bool = True) -> None:
        """Time (and count) every call of ``obj.attr`` under ``name`` (a str, or a function of
        the call's arguments that returns one)."""
        inner = getattr(obj, attr)

        def call(*args, **kwargs):
            with self.timed(name if isinstance(name, str) else name(*args, **kwargs), count):
                return inner(*args, **kwargs)
        setattr(obj, attr, call)

    def scoring(self, *args, **kwargs) -> str:
        self.batches.append((args, kwargs))
        return "forward (loss)" if torch.is_grad_enabled() else "scoring, no grad (old, ref)"

    def step(self, steps: int) -> float:
        return sum(v for k, v in self.seconds.items() if k not in APART) / steps

    def passes(self, steps: int) -> tuple[float, float]:
        """Seconds and FLOPs a step of the passes (scoring, loss forward, backward)."""
        return (sum(self.seconds[k] for k in PASS_PHASES) / steps,
                sum(self.flops[k] for k in PASS_PHASES) / steps)


def measure(cfg, steps: int, evaluate: bool) -> tuple[Phases, object]:
    """The phases of ``steps`` steps of ``cfg`` (the held-out evaluation timed apart if
    ``evaluate``, else off), and the trainer after them."""
    phases = Phases()
    with tempfile.TemporaryDirectory() as tmp:
        with phases.timed("loading", count=False):
            trainer = build_trainer(cfg if evaluate else cfg.replace(eval_every=0), Path(tmp),
                                    profile="bench")
        inner = trainer._generate_single_turn

        def generation(*args, **kwargs):
            out = inner(*args, **kwargs)
            phases.generated.append((args, kwargs))
            phases.rollouts.append(out[0])
            return out
        trainer._generate_single_turn = generation
        phases.wrap(trainer, "_generate_single_turn", "generation", count=False)
        phases.wrap(trainer, "_get_per_token_logps_and_entropies", phases.scoring)
        phases.wrap(trainer.accelerator, "backward", "backward")
        for cb in trainer.callback_handler.callbacks:
            if hasattr(cb, "evaluate"):
                phases.wrap(cb, "evaluate", "held-out evaluation (apart)", count=False)
        start = time.perf_counter()
        trainer.train()
        inner_seconds = sum(v for k, v in phases.seconds.items() if k not in APART)
        phases.seconds["rest of the step"] = (time.perf_counter() - start - inner_seconds
                                              - phases.seconds.get("held-out evaluation (apart)", 0))
    return phases, trainer


def generation_flops(cfg, phases: Phases) -> float:
    """The matmul FLOPs of ``phases``'s generation calls, drawn again from a fresh trainer of
    ``cfg`` (the same seeds, hence the same rollouts: checked)."""
    with tempfile.TemporaryDirectory() as tmp:
        trainer = build_trainer(cfg.replace(eval_every=0), Path(tmp), profile="bench")
        flops = 0.0
        for (args, kwargs), rollouts in zip(phases.generated, phases.rollouts):
            with FlopCounterMode(display=False) as counter:
                again = trainer._generate_single_turn(*args, **kwargs)[0]
            if again != rollouts:
                raise RuntimeError("the rollouts drawn again differ from the step's")
            flops += counter.get_total_flops()
    return flops


def same_batches(a: Phases, b: Phases) -> bool:
    """Whether two ways drew the same rollouts and passed the same batches (ids and masks)."""
    def tensors(p):
        return [x for args, _ in p.batches for x in args[1:3]]
    return a.rollouts == b.rollouts and len(a.batches) == len(b.batches) and all(
        torch.equal(x, y) for x, y in zip(tensors(a), tensors(b)))


@torch.no_grad()
def largest_difference(trainer, batch) -> dict[str, float]:
    """The largest |log-prob difference| on the completion tokens of ``batch`` (the step's last
    pass), each way's passes against TRL's own."""
    (model, ids, mask, keep, *rest), kwargs = batch
    kwargs = {k: v for k, v in kwargs.items() if k != "compute_entropy"}
    completion = mask[:, -keep:].bool()
    theirs = GRPOTrainer._get_per_token_logps_and_entropies(trainer, model, ids, mask, keep,
                                                            *rest, **kwargs)[0]
    out = {}
    for name, changes in PASSES.items():
        trainer.args.packed = changes["packed"]
        ours = type(trainer)._get_per_token_logps_and_entropies(trainer, model, ids, mask, keep,
                                                                *rest, **kwargs)[0]
        out[name] = (ours - theirs)[completion].abs().max().item()
    return out


def loss_pass(trainer, batch, repeats: int = 2) -> float:
    """Seconds of one pass of the loss over ``batch``, forward and backward, as the trainer
    runs it (its passes under the accelerator's autocast): the best of ``repeats``."""
    args, kwargs = batch
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
    ap.add_argument("--prompt", choices=PROMPTS, default="system+example")
    ap.add_argument("--beta", type=float, default=None,
                    help="the KL coefficient (default: the profile's; 0 drops the reference "
                         "model's pass)")
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
                                                bf16=args.bf16)
    print(f"SmolLM2 step: {cfg.generation_batch} completions ({cfg.generation_batch // cfg.num_generations}"
          f" prompts x G = {cfg.num_generations}), {cfg.updates_per_step} updates of "
          f"{cfg.update_batch}, max {cfg.max_completion_length} tokens, LoRA r={cfg.lora_rank}, "
          f"beta={cfg.beta}, prompt {args.prompt}, "
          f"gradient checkpointing {cfg.gradient_checkpointing}, bf16 {cfg.bf16}, "
          f"{args.threads} thread(s), load average {os.getloadavg()[0]:.1f}")
    base, _ = registry.load_model("smollm2", "bench")
    rows = (2, 4) if args.smoke else (256, 1024)
    limit = max(step_rate(base, r, 0.2 if args.smoke else 2.0) for r in rows)
    del base
    print(f"the one-thread matmul limit: {limit:.1f} GFLOP/s (torch.mm over SmolLM2's weights, "
          f"the larger at {' and '.join(map(str, rows))} rows)")

    ways: dict[str, Phases] = {}
    for i, (name, changes) in enumerate(PASSES.items()):
        phases, trainer = measure(cfg.replace(**changes), args.steps, evaluate=i == 0)
        ways[name] = phases
        if i == 0:
            generated = generation_flops(cfg.replace(**changes), phases) / args.steps
        phases.flops["generation"] = generated * args.steps  # the same rollouts every way
        step = phases.step(args.steps)
        flops = sum(phases.flops.values()) / args.steps
        print(f"\n{name} ({', '.join(f'{k}={v}' for k, v in changes.items())}):"
              f" per generation step ({args.steps} timed), seconds, share, GFLOP, of the limit")
        for phase, s in phases.seconds.items():
            per = s if phase == "loading" else s / args.steps
            f = phases.flops.get(phase, 0) / (1 if phase == "loading" else args.steps)
            share = "" if phase in APART else f"{per / step:6.1%}"
            of = f"{f / 1e9:8.1f} {f / 1e9 / limit / per:6.1%}" if f and per else ""
            print(f"  {phase:32s} {per:8.1f} s  {share:6s} {of}")
        seconds, pass_flops = phases.passes(args.steps)
        print(f"  {'the passes':32s} {seconds:8.1f} s  {seconds / step:6.1%} "
              f"{pass_flops / 1e9:8.1f} {pass_flops / 1e9 / limit / seconds:6.1%}")
        print(f"  {'step':32s} {step:8.1f} s  {'':6s} {flops / 1e9:8.1f} "
              f"{flops / 1e9 / limit / step:6.1%}")
        if name != "packed":
            del trainer
    first, *_ = ways.values()
    print()
    for name, phases in list(ways.items())[1:]:
        print(f"ratio, the step {name} / {next(iter(ways))}: "
              f"{phases.step(args.steps) / first.step(args.steps):.2f} (the passes "
              f"{phases.passes(args.steps)[0] / first.passes(args.steps)[0]:.2f}); same "
              f"rollouts and batches: {same_batches(first, phases)}")
    batch = ways["packed"].batches[-1]
    print("largest |log-prob difference| from TRL's own pass on the step's last batch: " +
          ", ".join(f"{k} {v:.1e}" for k, v in largest_difference(trainer, batch).items()))

    if cfg.bf16:
        low = loss_pass(trainer, batch)
        trainer.model.float()
        trainer.accelerator.native_amp = False  # its autocast off: float32 throughout
        high = loss_pass(trainer, batch)
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
