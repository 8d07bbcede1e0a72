"""Train one run and keep it: ``train(cfg, profile)`` returns the run's folder,

    results/<profile>/training/<algorithm>[-lambda<weight>]-seed<seed>-<config key>/
        config.json      the TrainConfig
        started.json     when the run first began (UTC) and the registration it is judged
                         against (``TrainConfig.registration``); a resume keeps it
        checkpoints/     TRL checkpoints while the run trains (removed when it is done)
        model/           the final policy and its tokenizer
        dynamics.json    one record per logged step (``dynamics.records``)
        done.json        written last: the run is complete

A finished run is found by its configuration and returned as it is (``recompute=True`` trains it
again); an unfinished one resumes from its last complete checkpoint. Checkpoints fall on
generation boundaries, where a restart regenerates exactly what the killed run would have.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import torch
from peft import LoraConfig
from transformers.trainer_callback import ProgressCallback

from rlvr_dynamics import registry
from rlvr_dynamics.parallel import pool_map
from rlvr_dynamics.pretrain import PretrainConfig, base_model
from rlvr_dynamics.store import (Entry, PartOver, checkout_commit, config_key, past_deadline,
                                 read_json, results_dir, write_json)
from rlvr_dynamics.rl import algorithms
from rlvr_dynamics.rl.attribution import Attribution
from rlvr_dynamics.rl.config import STARTED, TrainConfig, check_sizes, world_size
from rlvr_dynamics.rl.data import dataset, mix, reward_function, trace_functions
from rlvr_dynamics.rl.dynamics import DynamicsCallback, records
from rlvr_dynamics.rl.probe import (SETTINGS, BoundaryProbe, FirstCharacters, SampledProbe,
                                    StopAfterCrossover, probed)
from rlvr_dynamics.rl.trainer import GRPONConfig, GRPONTrainer

log = logging.getLogger(__name__)

CHAPTER = "training"

STEPWISE = ("trace_stepwise_right", "trace_stepwise_wrong")
"""The trace functions (``data.trace_functions``) that mark a stepwise sample."""


def run_dir(cfg: TrainConfig, profile: str) -> Path:
    """Where the run of ``cfg`` lives under ``profile`` (named by its configuration)."""
    weight = f"-lambda{cfg.positive_weight:g}" if cfg.weighted else ""
    return (results_dir(profile, CHAPTER) / f"{cfg.algorithm}{weight}-seed{cfg.seed}-"
                                            f"{config_key(cfg.as_dict())}")


def entry(cfg: TrainConfig, profile: str) -> Entry:
    """The store entry of ``cfg``'s run (made by this module's code on its tasks)."""
    return Entry(run_dir(cfg, profile), code=__name__, tasks=cfg.tasks)


def train(cfg: TrainConfig, profile: str, *, recompute: bool = False) -> Path:
    """Train ``cfg`` (or find it trained) and return its folder."""
    e = entry(cfg, profile)
    out = e.path
    if e.done and not recompute:
        log.info("%s seed %d: found finished run %s", cfg.label, cfg.seed, out.name)
        return out
    if (after := past_deadline()) is not None:
        raise PartOver(f"{cfg.label} seed {cfg.seed} ({out.name}) not begun: this part begins "
                       f"no run after {after}")
    if int(os.environ.get("RANK", "0")) == 0:  # one process prepares the folder
        e.begin(fresh=recompute)
        if not (out / STARTED).is_file():  # kept on resume: when the run first began
            write_json(out / STARTED, {"time": datetime.now(timezone.utc).isoformat(
                timespec="seconds"), "registration": cfg.registration,
                "commit": checkout_commit()})
    trainer = build_trainer(cfg, out, profile)
    if trainer.accelerator.is_main_process:
        write_json(out / "config.json", cfg.as_dict())
    checkpoint = last_checkpoint(out / "checkpoints")
    log.info("%s seed %d: training %d steps (%d updates) in %s%s", cfg.label, cfg.seed,
             cfg.steps, cfg.steps * cfg.updates_per_step, out.name,
             f", resuming from {checkpoint.name}" if checkpoint else "")
    trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
    if cfg.lora_rank:  # the final policy as a plain model: the adapters merged into the base
        trainer.model = trainer.model.merge_and_unload()
    trainer.save_model(str(out / "model"))
    if trainer.accelerator.is_main_process:
        write_json(out / "dynamics.json", records(trainer.state.log_history, cfg.updates_per_step))
        e.finish({"label": cfg.label, "updates": trainer.state.global_step},
                 scratch=["checkpoints"])
    return out


def find(cfg: TrainConfig, profile: str) -> Path | None:
    """The folder of the finished run of ``cfg``, or None."""
    e = entry(cfg, profile)
    return e.path if e.done else None


def obtain(cfg: TrainConfig, profile: str, *, inline: bool) -> Path:
    """The finished run of ``cfg``: found, or trained here when ``inline`` (CPU profiles); a
    missing run that needs GPUs is an error that says how to launch it (``launch_command``)."""
    if inline:
        return train(cfg, profile)
    found = find(cfg, profile)
    if found is None:
        raise FileNotFoundError(f"{cfg.label} (seed {cfg.seed}) has not been trained under "
                                f"profile {profile!r}; launch it on GPUs with\n  "
                                f"{launch_command(cfg, profile)}")
    return found


def obtain_all(cfgs: list[TrainConfig], profile: str, *, inline: bool, workers: int = 2
               ) -> list[Path]:
    """The finished runs of ``cfgs``, in order: those not found are trained ``workers`` at a time
    (``parallel.pool_map``) when ``inline``, else an error names the first missing one. The base
    models they start from are pretrained (and refitted) first, here, so that no two workers
    make one base at the same time."""
    missing = [cfg for cfg in dict.fromkeys(cfgs) if find(cfg, profile) is None]
    if missing and not inline:
        obtain(missing[0], profile, inline=False)  # raises, with the launch command
    if missing:
        for base in dict.fromkeys(c.model for c in missing if isinstance(c.model, PretrainConfig)):
            base_model(base, profile)
        for c in {registry.spec_text(c.policy): c for c in missing if c.path_prior}.values():
            registry.load_model(c.policy, profile)  # the refitted base, made once
        log.info("training %d of %d runs, %d at a time", len(missing), len(set(cfgs)), workers)
        pool_map(_train_job, [(cfg, profile) for cfg in missing], workers, desc="runs")
    return [run_dir(cfg, profile) for cfg in cfgs]


def _train_job(job: tuple[TrainConfig, str]) -> Path:
    return train(*job)


def launch_file(cfg: TrainConfig, profile: str) -> Path:
    """Where the run of ``cfg`` is written down for ``launch_command`` (its ``as_dict``)."""
    return results_dir(profile, CHAPTER) / "launch" / f"{run_dir(cfg, profile).name}.json"


def launch_command(cfg: TrainConfig, profile: str) -> str:
    """The command that trains exactly ``cfg`` on one node of 4 GPUs (README): the run is
    written to ``launch_file`` and the book's runner trains what it reads there, so that any
    chapter's run (regime knobs, probes and overrides included) is launched as it was asked."""
    path = write_json(launch_file(cfg, profile), cfg.as_dict())
    return ("accelerate launch --config_file configs/accelerate/zero3-1node-4gpu.yaml "
            f"-m rlvr_dynamics.run train --profile {profile} --config {path}")


def grpo_args(cfg: TrainConfig, output_dir: Path):
    """TRL's arguments for ``cfg`` on this launch's devices (Appendix C.2 for the paper profile)."""
    devices = world_size()
    check_sizes(cfg.num_generations, cfg.generation_batch, cfg.update_batch, cfg.micro_batch,
                devices)
    accumulation = cfg.update_batch // (cfg.micro_batch * devices)
    updates = cfg.updates_per_step
    gpu = torch.cuda.is_available()
    return GRPONConfig(
        output_dir=str(output_dir),
        seed=cfg.seed,
        # the algorithm
        positive_weight=cfg.positive_weight,
        reinforce=algorithms.get(cfg.algorithm).reinforce,
        without=STEPWISE if cfg.without_stepwise else (),
        first_only=cfg.first_character_only,
        after_first=cfg.after_first_character,
        spared=tuple(f"trace_{name}" for name in cfg.spared_negatives),  # data.trace_functions
        packed=cfg.packed,
        importance_sampling_level=algorithms.get(cfg.algorithm).importance_sampling_level,
        loss_type=algorithms.get(cfg.algorithm).aggregation or cfg.loss_type,  # GSPO: per sequence
        scale_rewards="group",
        num_iterations=1,
        epsilon=cfg.epsilon,
        delta=cfg.dual_clip,  # bounds the ratio of negative samples: verl's dual clip
        beta=cfg.beta,
        entropy_coef=cfg.entropy_coef,
        # batches: one generation batch, then `updates` optimizer updates on its parts
        num_generations=cfg.num_generations,
        per_device_train_batch_size=cfg.micro_batch,
        gradient_accumulation_steps=accumulation,
        steps_per_generation=accumulation * updates,
        max_steps=cfg.steps * updates,
        # optimizer: AdamW at a constant rate (verl's default: no warm-up, weight decay 0.01),
        # or plain SGD (config.OPTIMIZERS); TRL's default optimizer is AdamW
        **({"optim": "sgd"} if cfg.optimizer == "sgd" else {}),
        learning_rate=cfg.learning_rate,
        lr_scheduler_type="constant",
        weight_decay=cfg.weight_decay,
        max_grad_norm=1.0,
        # generation
        temperature=cfg.temperature,
        top_p=1.0,
        max_completion_length=cfg.max_completion_length,
        use_vllm=cfg.use_vllm,
        vllm_mode="colocate",
        vllm_max_model_length=cfg.context,
        vllm_enable_sleep_mode=cfg.use_vllm,
        # devices and precision
        use_cpu=not gpu,
        bf16=cfg.bf16,
        activation_checkpointing=cfg.gradient_checkpointing,  # transformers 5 name
        # logging and checkpoints: every step, and at generation boundaries
        logging_steps=updates,
        save_strategy="steps",
        save_steps=cfg.checkpoint_every * updates,
        save_total_limit=2,
        report_to="none",
        disable_tqdm=False,
    )


def build_trainer(cfg: TrainConfig, out: Path, profile: str):
    """The ``GRPONTrainer`` of ``cfg`` writing to ``out``, with the held-out evaluation (where
    ``cfg.eval_every``), the task's trace statistics (``data.trace_functions``, weight 0)
    and, when ``cfg.probe_every``, the boundary probe (``probe``: exact for the tiny sums base,
    with the first-character masses after every update beside it and, at
    ``cfg.attribution_steps``, the attribution of an update: ``attribution``; sampled for other
    models).

    Everything that can be checked without a model (the configuration, the batch sizes on this
    launch's devices, TRL's own argument checks) is checked before the model loads.
    """
    args = grpo_args(cfg, out / "checkpoints")
    model, tokenizer = registry.load_model(cfg.policy, profile,
                                           torch.bfloat16 if cfg.bf16 else torch.float32)
    task = registry.training_task(cfg.task, cfg.model)
    heldout = task.problems("test")[:cfg.eval_problems]
    author = getattr(cfg.model, "author", None)
    traces = trace_functions(task, author)
    args.reward_weights = [1.0] + [0.0] * len(traces)  # the traces only measure (data.py)
    train = task.problems("train")
    if cfg.hard_share is not None:
        train = mix(train, author, cfg.hard_share)
    if cfg.readout_only:
        readout_alone(model)
    trainer = GRPONTrainer(model=model, reward_funcs=[reward_function(task), *traces], args=args,
                           train_dataset=dataset(train, tokenizer),
                           processing_class=tokenizer, peft_config=lora_config(cfg))
    trainer.remove_callback(ProgressCallback)
    trainer.add_callback(QuietProgress)
    if cfg.eval_every:
        trainer.add_callback(DynamicsCallback(trainer, task, heldout,
                                              every=cfg.eval_every * cfg.updates_per_step,
                                              max_new_tokens=cfg.max_completion_length,
                                              batch_size=cfg.eval_batch))
    every = cfg.probe_every * cfg.updates_per_step
    settings = tuple(SETTINGS) if cfg.probe_paper else ("full",)
    if cfg.probe_every and isinstance(cfg.model, PretrainConfig) and cfg.task is None:
        updates = cfg.updates_per_step
        problems = probed(task, author, cfg.probe_problems, cfg.probe_hard)
        trainer.add_callback(FirstCharacters(trainer, problems["test"]))
        trainer.add_callback(BoundaryProbe(
            trainer, task, problems,
            every=every, max_tokens=cfg.max_completion_length,
            early_every=cfg.probe_early_every * updates,
            early_until=cfg.probe_early_until * updates, settings=settings))
        if cfg.stop_after_crossover is not None:
            trainer.add_callback(StopAfterCrossover(cfg.stop_after_crossover * updates))
        if cfg.attribution_steps:  # the first update of each of those generation steps
            trainer.add_callback(Attribution(trainer, [p.meta["terms"] for p in problems["test"]],
                                             [s * updates for s in cfg.attribution_steps]))
    elif cfg.probe_every:
        trainer.add_callback(SampledProbe(trainer, task, cfg.probe_problems, cfg.probe_samples,
                                          every=every, max_tokens=cfg.max_completion_length,
                                          batch_size=cfg.eval_batch, settings=settings))
    return trainer


def readout_alone(model) -> None:
    """Freeze every parameter of ``model`` and give it an untied, trainable copy of its output
    embeddings (the body's input embeddings stay frozen), so that training moves the readout
    alone: the ladder's R2."""
    for p in model.parameters():
        p.requires_grad_(False)
    head = model.get_output_embeddings()
    head.weight = torch.nn.Parameter(head.weight.detach().clone())
    model.config.tie_word_embeddings = False


def lora_config(cfg: TrainConfig):
    """peft's LoRA on every linear layer at rank ``cfg.lora_rank`` (alpha = 2 x rank), or None
    for full fine-tuning (rank 0)."""
    if not cfg.lora_rank:
        return None
    return LoraConfig(r=cfg.lora_rank, lora_alpha=2 * cfg.lora_rank, lora_dropout=0.0,
                      target_modules="all-linear", task_type="CAUSAL_LM")


class QuietProgress(ProgressCallback):
    """The Trainer's progress bar over optimizer updates, without a printed line per log (the
    logged dynamics are in the run's ``dynamics.json``)."""

    def on_log(self, args, state, control, logs=None, **kwargs) -> None:
        pass


def last_checkpoint(folder: Path) -> Path | None:
    """The newest complete checkpoint in ``folder``; incomplete ones (a run killed while saving:
    ``trainer_state.json``, written last, missing or unreadable) are removed."""
    if not folder.is_dir():
        return None
    complete = []
    for path in folder.glob("checkpoint-*"):
        try:
            json.loads((path / "trainer_state.json").read_text())
            complete.append(path)
        except (OSError, ValueError):
            log.warning("removing incomplete checkpoint %s", path)
            shutil.rmtree(path, ignore_errors=True)
    return max(complete, key=lambda p: int(p.name.split("-")[1]), default=None)


# --- reading a finished run ------------------------------------------------------------------

def load_dynamics(run: Path) -> list[dict[str, Any]]:
    """The logged dynamics of a finished run (``dynamics.records``)."""
    return read_json(Path(run) / "dynamics.json")


def load_final_model(run: Path):
    """The final policy of a finished run and its tokenizer."""
    return registry.load_model(str(Path(run) / "model"), profile="")
