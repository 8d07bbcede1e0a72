"""What the training stack adds to TRL's own trainer, measured in one run on one core:

* the -N subclass (``GRPONTrainer``, lambda = 0) against TRL's ``GRPOTrainer`` on the same
  settings: seconds per optimizer update and their ratio (target: at most 1.10, the override is
  a ``torch.where`` on the advantages);
* the held-out dynamics (greedy decoding and token entropy) at the cpu profile's cadence (every
  4 steps) as a fraction of the training time.

A tiny untrained model on the sums task; cpu-profile batch shapes (8 prompts x 8 rollouts,
4 updates per step).

    .venv/bin/python bench/bench_training.py
"""
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import logging  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import torch  # noqa: E402
import transformers  # noqa: E402
from trl import GRPOTrainer  # noqa: E402

from rlvr_dynamics.models import char_tokenizer, tiny_qwen2  # noqa: E402
from rlvr_dynamics.tasks.sums import ALPHABET, SumTask  # noqa: E402
from rlvr_dynamics.training.config import TrainConfig  # noqa: E402
from rlvr_dynamics.training.data import dataset, reward_function  # noqa: E402
from rlvr_dynamics.training.run import build_trainer, grpo_args, load_model  # noqa: E402
from rlvr_dynamics.training.trainer import GRPONTrainer  # noqa: E402

TARGET, STEPS, REPEATS = 1.10, 2, 3


def setup(folder: Path) -> TrainConfig:
    tok = char_tokenizer(ALPHABET)
    tiny_qwen2(tok, hidden=128, layers=4, seed=0).save_pretrained(folder / "tiny")
    tok.save_pretrained(folder / "tiny")
    return TrainConfig(
        algorithm="grpo_n", model=str(folder / "tiny"), task=SumTask(), positive_weight=None,
        seed=0, steps=STEPS, num_generations=8, generation_batch=64, update_batch=16,
        micro_batch=16, learning_rate=1e-4, weight_decay=0.01, beta=1e-3, epsilon=0.2,
        dual_clip=3.0, entropy_coef=1e-4, temperature=1.0, max_completion_length=48,
        loss_type="dapo", eval_every=10 ** 6, eval_problems=200, eval_batch=200,
        checkpoint_every=10 ** 6, use_vllm=False, context=128, bf16=False,
        gradient_checkpointing=False)


def timed(make) -> float:
    trainer = make()
    start = time.perf_counter()
    trainer.train()
    return (time.perf_counter() - start) / trainer.state.global_step


def main() -> None:
    torch.set_num_threads(1)
    transformers.logging.set_verbosity_error()
    logging.disable(logging.WARNING)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        cfg = setup(folder)

        args = grpo_args(cfg, folder / "out")
        args.disable_tqdm = True

        def make(cls):
            model, tok = load_model(cfg, "bench")
            return lambda: cls(model=model, reward_funcs=reward_function(cfg.task), args=args,
                               processing_class=tok,
                               train_dataset=dataset(cfg.task.problems("train"), tok))

        best = {"ours": float("inf"), "trl": float("inf")}
        for _ in range(REPEATS):  # in turns, so that both see the same load
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
    print(f"held-out dynamics ({cfg.eval_problems} problems): {heldout:.2f} s, every 4 steps "
          f"{heldout / (4 * per_step):.0%} of the training time")


if __name__ == "__main__":
    main()
