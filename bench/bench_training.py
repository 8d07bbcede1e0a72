"""What the training stack adds to TRL's own trainer, measured in one run on one core:

* the -N subclass (``GRPONTrainer``, lambda = 0) against TRL's ``GRPOTrainer`` on the same
  settings: seconds per optimizer update and their ratio (target: at most 1.10, the override is
  a ``torch.where`` on the advantages);
* the held-out dynamics (greedy decoding and token entropy) at the cpu profile's cadence (every
  4 steps) as a fraction of the training time.

A tiny untrained model on the sums task; cpu-profile batch shapes (8 prompts x 8 rollouts,
4 updates per step). ``--smoke``: one step of 2 prompts x 2 rollouts on a one-layer model, once
(seconds; checks that the bench runs, its ratios mean nothing).

    .venv/bin/python bench/bench_training.py [--smoke]
"""
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import logging  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import torch  # noqa: E402
import transformers  # noqa: E402
from trl import GRPOTrainer  # noqa: E402

from rlvr_dynamics import registry  # noqa: E402
from rlvr_dynamics.models import char_tokenizer, tiny_qwen2  # noqa: E402
from rlvr_dynamics.tasks.sums import ALPHABET, SumTask  # noqa: E402
from rlvr_dynamics.rl.config import Settings, TrainConfig  # noqa: E402
from rlvr_dynamics.rl.data import dataset, reward_function  # noqa: E402
from rlvr_dynamics.rl.runs import build_trainer, grpo_args  # noqa: E402
from rlvr_dynamics.rl.trainer import GRPONTrainer  # noqa: E402

TARGET, EVAL_EVERY = 1.10, 4
# (steps, repeats, prompts, rollouts, updates per step, completion tokens, held-out problems,
#  layers): the cpu profile's shapes, and the smallest that run the same code
SIZES = {"full": (2, 3, 8, 8, 4, 48, 200, 4), "smoke": (1, 1, 2, 2, 2, 8, 4, 1)}


def setup(folder: Path, size: str) -> TrainConfig:
    steps, _, prompts, G, updates, tokens, heldout, layers = SIZES[size]
    tok = char_tokenizer(ALPHABET)
    tiny_qwen2(tok, hidden=128, layers=layers, seed=0).save_pretrained(folder / "tiny")
    tok.save_pretrained(folder / "tiny")
    batch = prompts * G
    settings = Settings(
        steps=steps, num_generations=G, generation_batch=batch, update_batch=batch // updates,
        micro_batch=batch // updates, learning_rate=1e-4, weight_decay=0.01, beta=1e-3,
        epsilon=0.2, dual_clip=3.0, entropy_coef=1e-4, temperature=1.0,
        max_completion_length=tokens, loss_type="dapo", eval_every=10 ** 6,
        eval_problems=heldout, eval_batch=heldout, checkpoint_every=10 ** 6, use_vllm=False,
        context=128, bf16=False, gradient_checkpointing=False)
    return TrainConfig(algorithm="grpo_n", model=str(folder / "tiny"), task=SumTask(),
                       positive_weight=None, seed=0, settings=settings)


def timed(make) -> float:
    trainer = make()
    start = time.perf_counter()
    trainer.train()
    return (time.perf_counter() - start) / trainer.state.global_step


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--smoke", action="store_true", help="smallest sizes (seconds)")
    size = "smoke" if ap.parse_args().smoke else "full"
    torch.set_num_threads(1)
    transformers.logging.set_verbosity_error()
    logging.disable(logging.WARNING)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        cfg = setup(folder, size)

        args = grpo_args(cfg, folder / "out")
        args.disable_tqdm = True

        def make(cls):
            model, tok = registry.load_model(cfg.policy, "bench")
            return lambda: cls(model=model, reward_funcs=reward_function(cfg.task), args=args,
                               processing_class=tok,
                               train_dataset=dataset(cfg.task.problems("train"), tok))

        best = {"ours": float("inf"), "trl": float("inf")}
        for _ in range(SIZES[size][1]):  # in turns, so that both see the same load
            for name, cls in (("ours", GRPONTrainer), ("trl", GRPOTrainer)):
                best[name] = min(best[name], timed(make(cls)))
        trainer = build_trainer(cfg, folder / "ours", "bench")
        start = time.perf_counter()
        trainer.callback_handler.callbacks[-1].evaluate(trainer.state)
        heldout = time.perf_counter() - start
    ratio = best["ours"] / best["trl"]
    per_step = best["ours"] * cfg.updates_per_step
    print(f"seconds per update: GRPONTrainer (-N) {best['ours']:.3f}, TRL GRPOTrainer "
          f"{best['trl']:.3f}, ratio {ratio:.2f} (target <= {TARGET}: "
          f"{'met' if ratio <= TARGET else 'NOT met'})")
    print(f"held-out dynamics ({cfg.eval_problems} problems): {heldout:.2f} s, every "
          f"{EVAL_EVERY} steps {heldout / (EVAL_EVERY * per_step):.0%} of the training time")


if __name__ == "__main__":
    main()
