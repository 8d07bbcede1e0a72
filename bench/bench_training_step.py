"""Where a training step of the cpu profile goes, against the machine's matmul limit, measured
in one run on one thread (a worker of the build: two runs side by side, one thread each).

Two runs of the default build's shapes (8 prompts x 8 rollouts, 4 updates of 16 completions,
48 tokens at most) from the cpu profile's base (pretrained into the cpu store once if absent):

* **training**: the training chapter's GRPO run, held-out evaluation every 4 steps;
* **regimes**: the same settings with the scenario chapter's probes (the base as pretrained: the
  probes cost what they cost on any dial), probed every 5 steps as the chapter does early on.

Each phase is timed by wrapping the trainer's own methods: generation
(``_generate_single_turn``), the old policy's and the reference model's log-probabilities
(``_get_per_token_logps_and_entropies`` under ``no_grad``, told apart by the model), the loss's
forward (the same method with gradients) and backward (``accelerator.backward``), the optimizer
(between the Trainer's pre- and post-optimizer callbacks), the held-out evaluation and the probe
(their ``evaluate``), and the rest (rewards, advantages, clipping of gradients, logging: the
step's time less the phases). A second pass of one step counts each phase's floating-point work
(``torch.utils.flop_counter``); the limit of a phase is its FLOPs at the machine's matmul
throughput measured here over the model's own weights at the rows the phase multiplies
(``bench_generation.step_rate``: at the batch's rows for decoding, at the batch's tokens for
the passes over whole sequences). Printed: seconds per step, share, GFLOP, and the fraction of
the limit per phase and for the step (the FLOPs of what the passes compute: with TRL's own
passes that included the padding).

Then each change of issue 38 alone, as a ratio of times measured here: the training steps with
``GRPONTrainer``'s passes, which leave the padding out, against TRL's own passes (held-out
evaluation apart); a probe of the test split (``rl.probe.SPLITS``) against one with the ood
split's first problems added, as the scenario chapter probed before.

``--policy DIR``: the training run's steps and the probe from a saved model instead of the base
(e.g. a finished run's ``model/``: what a step costs late in training, where the completions are
longer and the padding fewer).

``--smoke``: the smoke profile (a base of 200 steps, one layer of 32, 4 x 4 rollouts, one step;
seconds; checks that the bench runs, its ratios mean nothing).

    .venv/bin/python bench/bench_training_step.py [--steps 3] [--policy DIR] [--smoke]
"""
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import logging  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402
from contextlib import contextmanager  # noqa: E402
from pathlib import Path  # noqa: E402

import torch  # noqa: E402
import transformers  # noqa: E402
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402
from transformers import TrainerCallback  # noqa: E402

from trl import GRPOTrainer  # noqa: E402

from bench_generation import step_rate  # noqa: E402

from rlvr_dynamics import profiles, registry  # noqa: E402
from rlvr_dynamics.chapters import scenario, training  # noqa: E402
from rlvr_dynamics.rl import probe  # noqa: E402
from rlvr_dynamics.rl.dynamics import Periodic  # noqa: E402
from rlvr_dynamics.rl.probe import BoundaryProbe  # noqa: E402
from rlvr_dynamics.rl.runs import build_trainer  # noqa: E402
from rlvr_dynamics.rl.trainer import GRPONTrainer  # noqa: E402

PHASES = ("generation", "old policy's log-probs", "reference log-probs", "loss forward",
          "backward", "optimizer", "held-out evaluation", "probes", "checkpoints",
          "rest (rewards, logging)")


class Phases:
    """Seconds and FLOPs per phase of one trainer's steps (the wrappers of the docstring)."""

    def __init__(self, trainer) -> None:
        self.seconds, self.flops = defaultdict(float), defaultdict(float)
        self.spans: list[tuple[float, float]] = []  # (start, end) of every phase's call
        self.calls: dict[str, int] = defaultdict(int)
        self.rows: dict[str, list[int]] = defaultdict(list)
        self.counter: FlopCounterMode | None = None
        self.trainer = trainer
        self._wrap(trainer, "_generate_single_turn", lambda *a, **k: "generation",
                   rows=lambda ids, *a, **k: len(ids))
        self._wrap(trainer, "_get_per_token_logps_and_entropies", self._scoring,
                   rows=lambda model, ids, *a, **k: ids.numel())
        self._wrap(trainer.accelerator, "backward", lambda *a, **k: "backward")
        self._wrap(trainer, "_save_checkpoint", lambda *a, **k: "checkpoints")
        for cb in trainer.callback_handler.callbacks:
            name = {"DynamicsCallback": "held-out evaluation",
                    "BoundaryProbe": "probes"}.get(type(cb).__name__)
            if name:
                self._wrap(cb, "evaluate", lambda *a, name=name, **k: name)
        trainer.add_callback(OptimizerTimer(self))
        self.window = Window()
        trainer.add_callback(self.window)

    def _scoring(self, model, *args, **kwargs) -> str:
        if torch.is_grad_enabled():
            return "loss forward"
        return "reference log-probs" if model is self.trainer.ref_model else \
            "old policy's log-probs"

    @contextmanager
    def timed(self, name: str):
        flops = self.counter.get_total_flops() if self.counter else 0
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] += time.perf_counter() - start
            self.spans.append((start, time.perf_counter()))
            if self.counter:
                self.flops[name] += self.counter.get_total_flops() - flops

    def _wrap(self, obj, attr: str, name, rows=None) -> None:
        inner = getattr(obj, attr)

        def call(*args, **kwargs):
            phase = name(*args, **kwargs)
            self.calls[phase] += 1
            if rows is not None:
                self.rows[phase].append(rows(*args, **kwargs))
            with self.timed(phase):
                return inner(*args, **kwargs)
        setattr(obj, attr, call)


class Window(TrainerCallback):
    """The time from the first step's start to the last step's end: what the steps cost,
    without the run's setup and teardown (which a run of a hundred steps pays once)."""

    def __init__(self) -> None:
        self.start = self.end = 0.0

    def on_step_begin(self, args, state, control, **kwargs) -> None:
        self.start = self.start or time.perf_counter()

    def on_step_end(self, args, state, control, **kwargs) -> None:
        self.end = time.perf_counter()


class OptimizerTimer(TrainerCallback):
    """The optimizer's time: from the Trainer's pre-optimizer callback to its post one."""

    def __init__(self, phases: Phases) -> None:
        self.phases, self.start = phases, 0.0

    def on_pre_optimizer_step(self, args, state, control, **kwargs) -> None:
        self.start = time.perf_counter()

    def on_optimizer_step(self, args, state, control, **kwargs) -> None:
        self.phases.seconds["optimizer"] += time.perf_counter() - self.start
        self.phases.spans.append((self.start, time.perf_counter()))


def configs(profile: str, steps: int, policy: str | None = None) -> dict:
    """name -> (the profile's run, the bench's: ``steps`` generation steps of it, probed at each
    step's end) for the two runs of the docstring under ``profile``; the training run's steps
    from ``policy`` (a saved model's folder) instead of the base where given."""
    plan = profiles.plan(profile, ["training", "scenario"])
    T = training.Params.parse(plan["training"])
    R = scenario.Params.parse(plan["scenario"])
    probed = R.runs()[R.arms()[0], "grpo", R.seeds[0]]
    run = T.runs()["grpo", T.seeds[0], None]
    start = run.replace(model=policy, task="sums") if policy else run
    return {
        "training": (run, start.replace(steps=steps, checkpoint_every=10 ** 6, eval_every=1)),
        "regimes": (probed, probed.replace(
            steps=steps, checkpoint_every=10 ** 6, path_prior=None, path_guess=None,
            eval_every=1, probe_every=1, probe_early_every=0, probe_early_until=0,
            stop_after_crossover=None))}


def measure(cfg, folder: Path, profile: str, count: bool) -> Phases:
    """The phases of ``cfg``'s steps (with FLOPs counted when ``count``)."""
    trainer = build_trainer(cfg, folder, profile)
    phases = Phases(trainer)
    if count:
        phases.counter = FlopCounterMode(display=False)
        with phases.counter:
            trainer.train()
    else:
        trainer.train()
    start, end = phases.window.start, phases.window.end
    inside = sum(max(0.0, min(b, end) - max(a, start)) for a, b in phases.spans)
    phases.seconds["rest (rewards, logging)"] = end - start - inside
    return phases


PERIODIC = ("held-out evaluation", "probes", "checkpoints")


def cadence(cfg) -> dict[str, float]:
    """Calls per generation step of each periodic phase in the profile's own run of ``cfg``:
    the updates at which its callback is due (``Periodic.due``, ``BoundaryProbe.due``; the
    Trainer checkpoints every ``save_steps``), over the run's steps."""
    u = cfg.updates_per_step
    updates = cfg.steps * u
    due = {"checkpoints": lambda step, _: step and step % (cfg.checkpoint_every * u) == 0}
    if cfg.eval_every:  # the scenario chapter's runs have none
        due["held-out evaluation"] = Every(cfg.eval_every * u).due
    if cfg.probe_every:
        due["probes"] = BoundaryProbe(None, None, {}, every=cfg.probe_every * u, max_tokens=0,
                                      early_every=cfg.probe_early_every * u,
                                      early_until=cfg.probe_early_until * u).due
    return {phase: sum(bool(is_due(step, updates)) for step in range(updates + 1)) / cfg.steps
            for phase, is_due in due.items()}


class Every(Periodic):
    """A ``Periodic`` schedule alone, read for when it is due."""

    def __init__(self, every: int) -> None:
        self.every = every


def report(name: str, cfg, timed: Phases, counted: Phases, model, steps: int, source: str
           ) -> None:
    """Print the phases of ``name``, its periodic phases at ``cfg``'s cadence."""
    per_call = cadence(cfg)
    seconds = {p: (timed.seconds[p] / timed.calls[p] * per_call[p] if p in PERIODIC
                   else timed.seconds[p] / steps)
               for p in PHASES if p in timed.seconds and (p not in PERIODIC or p in per_call)}
    flops = {p: (counted.flops[p] / counted.calls[p] * per_call[p] if p in PERIODIC
                 else counted.flops[p]) for p in seconds if counted.flops.get(p)}
    total = sum(seconds.values())
    print(f"\n{name}, from {source}: {cfg.generation_batch} completions a step "
          f"({cfg.generation_batch // cfg.num_generations} prompts x G = {cfg.num_generations}), "
          f"{cfg.updates_per_step} updates, max {cfg.max_completion_length} tokens, {steps} steps "
          f"timed; periodic phases at the run's cadence ("
          + ", ".join(f"{p} {c:.2f} a step" for p, c in per_call.items()) + ")")
    print(f"  {'phase':26s} {'s/step':>7s} {'share':>6s} {'GFLOP':>7s} {'of limit':>8s}")
    limits: dict[int, float] = {}
    at_limit = 0.0
    for phase, s in seconds.items():
        line = f"  {phase:26s} {s:7.3f} {s / total:6.1%}"
        if phase in flops:
            rows = counted.rows.get(phase) or [cfg.generation_batch]
            r = max(1, round(sum(rows) / len(rows)))
            if r not in limits:
                limits[r] = step_rate(model, r, 0.5)
            seconds_at_limit = flops[phase] / 1e9 / limits[r]
            at_limit += seconds_at_limit
            line += f" {flops[phase] / 1e9:7.3f} {seconds_at_limit / s:8.1%}"
        print(line)
    print(f"  {'step':26s} {total:7.3f} {'':6s} {sum(flops.values()) / 1e9:7.3f} "
          f"{at_limit / total:8.1%}")
    print("  limit: torch.mm over the model's weights, GFLOP/s at rows " + ", ".join(
        f"{r}: {g:.1f}" for r, g in sorted(limits.items())))
    print(f"  ratio of the step's time at the limit to its time: {at_limit / total:.2f}")


def padding_kept(cfg, folder: Path, profile: str, repeats: int = 2) -> tuple[float, float]:
    """Seconds per step of ``cfg``'s steps (held-out evaluation apart) with ``GRPONTrainer``'s
    passes and with TRL's own, which compute the padding too: the first change, alone (the
    best of ``repeats`` runs of each, taken in turns so that both see the same load)."""
    best = [float("inf"), float("inf")]
    for repeat in range(repeats):
        for i, passes in enumerate((GRPONTrainer._get_per_token_logps_and_entropies,
                                    GRPOTrainer._get_per_token_logps_and_entropies)):
            trainer = build_trainer(cfg.replace(eval_every=10 ** 6), folder / f"{repeat}-{i}",
                                    profile)
            trainer._get_per_token_logps_and_entropies = passes.__get__(trainer)
            window = Window()
            trainer.add_callback(window)
            trainer.train()
            best[i] = min(best[i], (window.end - window.start) / cfg.steps)
    return best[0], best[1]


def probe_with_ood(cfg, profile: str, policy: str | None = None) -> tuple[float, float]:
    """Seconds of one probe of ``cfg``'s base (or of ``policy``, a saved model's folder) on the
    test split (``probe.SPLITS``) and with the ood split's first problems added, as it was
    measured before: the second change, alone."""
    model, tokenizer = registry.load_model(policy or cfg.policy, profile)
    task = registry.training_task(cfg.task, cfg.model)
    problems = probe.probed(task, cfg.model.author, cfg.probe_problems, cfg.probe_hard)
    out = []
    for chosen in (problems, {**problems, "ood": task.problems("ood")[:cfg.probe_problems]}):
        start = time.perf_counter()
        probe.measure(model, tokenizer, chosen, task, cfg.max_completion_length,
                      settings=("full",))
        out.append(time.perf_counter() - start)
    return out[0], out[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=3, help="generation steps timed per run")
    ap.add_argument("--smoke", action="store_true", help="the smoke profile, one step")
    ap.add_argument("--policy", help="a saved model's folder (e.g. a finished run's model/): "
                                     "the training steps and the probe from it, not the base")
    args = ap.parse_args()
    torch.set_num_threads(1)
    transformers.logging.set_verbosity_error()
    logging.disable(logging.WARNING)
    profile, steps = ("smoke", 1) if args.smoke else ("cpu", args.steps)
    with tempfile.TemporaryDirectory() as tmp:
        if args.smoke:
            os.environ["RLVR_RESULTS"] = str(Path(tmp) / "results")
        runs = configs(profile, steps, args.policy)
        for name, (run, bench) in runs.items():
            timed = measure(bench, Path(tmp) / name, profile, count=False)
            counted = measure(bench.replace(steps=1), Path(tmp) / f"{name}-counted", profile,
                              count=True)
            report(name, run, timed, counted, counted.trainer.model, steps,
                   args.policy if args.policy and name == "training" else "the base")
        print("\neach change alone:")
        ours, trl = padding_kept(runs["training"][1], Path(tmp) / "padding", profile)
        print(f"  the passes without padding: {ours:.3f} s a step (held-out evaluation apart), "
              f"with TRL's padded passes {trl:.3f}: ratio {ours / trl:.2f}")
        test, both = probe_with_ood(runs["regimes"][1], profile, args.policy)
        print(f"  the probe on the test split: {test:.2f} s, with the ood split too {both:.2f}: "
              f"ratio {test / both:.2f}")


if __name__ == "__main__":
    main()
