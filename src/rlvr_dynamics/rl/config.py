"""``TrainConfig``: everything that determines one training run, checked before any model loads.

Sizes count completions, as TRL does. The paper's setting (Appendix C.2) of 1,024 prompts with 8
rollouts each and mini-batches of 256 prompts is ``generation_batch=8192, num_generations=8,
update_batch=2048``: each generation batch is followed by ``8192 / 2048 = 4`` optimizer updates,
so from the second update on the policy differs from the one that sampled and the importance
ratios (and clipping) are live. A training *step* is one generation batch and its updates, as on
the x-axis of Figure 2.
"""
from __future__ import annotations

import dataclasses
import os
import typing
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, model_validator

from rlvr_dynamics import registry
from rlvr_dynamics.fields import Int, NonNegative, Positive, Real, check
from rlvr_dynamics.path_prior import Prior
from rlvr_dynamics.pretrain import PretrainConfig
from rlvr_dynamics.store import task_modules
from rlvr_dynamics.tasks.arithmetic import ArithmeticMix
from rlvr_dynamics.tasks.sums import TRACES, SumTask
from rlvr_dynamics.rl import algorithms

LOSS_TYPES = ("dapo", "grpo", "bnpo", "dr_grpo")
"""TRL's normalisers for the clipped surrogate: ``dapo`` is verl's token-mean (what the paper
ran), ``grpo`` is Eq. 2's ``1/G sum_i 1/|y_i| sum_t``."""


OPTIMIZERS = ("adam", "sgd")
"""The optimizers a run may train with, named as the tabular toy names its own
(``toy.OPTIMIZERS``): ``adam`` is TRL's AdamW (torch's, betas (0.9, 0.999), eps 1e-8, the
decoupled ``weight_decay``; Adam itself at ``weight_decay=0``), ``sgd`` plain SGD (torch's,
no momentum; ``weight_decay`` as an L2 term on the same parameters). Both after clipping the
gradient's norm to 1 (``runs.grpo_args``)."""


STARTED = "started.json"
"""The file in a run's folder that records, once, when the run first began (UTC) and the
``TrainConfig.registration`` it began under (``runs.train`` writes it; a resume keeps it)."""


class Settings(BaseModel):
    """The settings of a run that its chapter shares across algorithms and seeds: declared
    here once, with their ranges and, as defaults, the ``cpu`` profile's values. The chapters
    that train embed them (``chapters.training.Params`` inherits this model), and every
    ``TrainConfig`` carries them; the paper's values are the ``paper`` profile's
    (``configs/paper.yaml``, Appendix C.2). ``eval_every``: generation steps between the
    held-out greedy evaluations of Figure 2 (``dynamics.DynamicsCallback``; 0: none, for runs
    whose chapter reads none of it). ``optimizer``: one of ``OPTIMIZERS`` (``adam``: AdamW,
    the paper's; ``sgd``: plain SGD, whose ``learning_rate`` must be far larger for a
    comparable step)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, validate_default=True)

    steps: Int(1) = 100
    num_generations: Int(2) = 8
    generation_batch: Int(2) = 64
    update_batch: Int(1) = 16
    micro_batch: Int(1) = 16
    learning_rate: Positive = 3e-5
    weight_decay: NonNegative = 0.01
    beta: NonNegative = 0.001
    epsilon: Real(0, 1, open_lo=True, open_hi=True) = 0.2
    dual_clip: Positive | None = 3.0
    entropy_coef: NonNegative = 0.0001
    temperature: Positive = 1.0
    max_completion_length: Int(1) = 48
    context: Int(2) = 128
    loss_type: Literal[LOSS_TYPES] = "dapo"
    eval_every: Int(0) = 4
    eval_problems: Int(1) = 200
    eval_batch: Int(1) = 200
    checkpoint_every: Int(1) = 20
    use_vllm: bool = False
    bf16: bool = False
    gradient_checkpointing: bool = False
    lora_rank: Int(0) = 0
    packed: bool = False  # each group's completions packed after its prompt (trainer.GRPONConfig)
    optimizer: Literal[OPTIMIZERS] = "adam"  # OPTIMIZERS; learning_rate is its step size

    @model_validator(mode="after")
    def _fit_together(self):
        check_sizes(self.num_generations, self.generation_batch, self.update_batch,
                    self.micro_batch)
        if self.packed and self.gradient_checkpointing:
            raise ValueError("packed=True needs gradient_checkpointing=False (a checkpointed "
                             "forward keeps no cache of the prompts)")
        if self.dual_clip is not None and not self.dual_clip > 1 + self.epsilon:
            raise ValueError(f"dual_clip={self.dual_clip!r} must be None or > 1 + epsilon "
                             f"({1 + self.epsilon:g})")
        if not self.context > self.max_completion_length:
            raise ValueError(f"context={self.context} must be > max_completion_length="
                             f"{self.max_completion_length}")
        return self

    @classmethod
    def of(cls, source: Any) -> Settings:
        """The settings held by ``source`` (any object with these fields, e.g. a chapter's
        parameters)."""
        return cls(**{name: getattr(source, name) for name in cls.model_fields})


@dataclass(frozen=True)
class TrainConfig:
    """One run: what it trains (``algorithm`` with lambda ``positive_weight``, None: the
    algorithm's own, 1 or 0; ``seed``), from where (``model``: a ``PretrainConfig``, the tiny
    base trained once and cached, or a hub name / local folder; ``task``: None, the base
    model's own task, or a task or its registry name), and how (``settings``). Every setting is
    also read as an attribute (``cfg.steps``). Checked before any model loads.

    The regime knobs of a tiny base (None: as pretrained): ``path_prior``, the base's P(stepwise)
    refitted to this value before RL (``path_prior.refit``), with ``path_guess`` its P(guess)
    (None: no guess habit; needs ``path_prior``); ``hard_share``, the share of
    training problems beyond the direct path (``data.mix``; None: the train split as drawn).
    ``probe_every``: generation steps between measurements of the boundary (``probe``; 0: none): of
    the tiny sums base from the policy's probabilities on ``probe_problems`` problems of the
    sums test split (``probe.SPLITS``) and ``probe_hard`` more of its problems beyond the direct
    path (``probe.probed``), every ``probe_early_every`` steps up to step ``probe_early_until``
    (0: no denser start), under the full distribution and, if ``probe_paper``, the paper's
    evaluation setting too; ``stop_after_crossover``: end the run this many generation steps
    after the first probe at which the stepwise path outweighs the direct one (None: run every
    step); of any other model from ``probe_samples`` samples of each of ``probe_problems`` test
    problems, under the same settings.

    ``without_stepwise``: every update computed from the groups that hold no stepwise sample
    alone (the others left out: ``trainer.GRPONTrainer.left_out``), the test where the toy's
    stepwise logit cannot move. ``first_character_only``: the loss on the first completion
    character alone; ``readout_only``: the body frozen and only an untied copy of the output
    embeddings trained (needs ``first_character_only``): the ladder's rungs between the toy
    and the full model. ``after_first_character``: the complement of
    ``first_character_only``, the loss on completion characters 2..L (the first one out of
    the loss and its normaliser; the passes unchanged: ``trainer.GRPONConfig.after_first``).
    ``spared_negatives``: names of ``tasks.sums.TRACES`` (e.g. ``stepwise_wrong``, the
    stepwise path's own slips; ``guess_wrong``; ``direct_wrong``): every sample with a
    negative advantage that one of them marks is left out of the loss and its normaliser
    (sample by sample, where ``without_stepwise`` leaves out whole groups;
    ``trainer.GRPONTrainer.spare``). ``attribution_steps``: generation steps whose first
    update is attributed (``attribution``: the one-update change of each path's first-character
    log-probability on the probed problems split by the kinds of sample that made it; needs
    ``probe_every``, whose problems it reads). ``registration``: the content hash of the
    registered prediction that this run is judged against (``regimes.prediction``), recorded
    in the run's own configuration, hence its folder's name; None: judged against none. The
    fields of ``LATER`` stay out of the folder's name at their defaults."""

    algorithm: str
    model: PretrainConfig | str
    task: SumTask | ArithmeticMix | str | None
    positive_weight: float | None
    seed: int
    settings: Settings
    path_prior: float | None = None
    path_guess: float | None = None
    hard_share: float | None = None
    probe_every: int = 0
    probe_problems: int = 20
    probe_hard: int = 0
    probe_early_every: int = 0
    probe_early_until: int = 0
    probe_paper: bool = True
    stop_after_crossover: int | None = None
    probe_samples: int = 0
    without_stepwise: bool = False
    first_character_only: bool = False
    readout_only: bool = False
    registration: str | None = None
    after_first_character: bool = False
    spared_negatives: tuple[str, ...] = ()
    attribution_steps: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        for name in ("spared_negatives", "attribution_steps"):  # JSON's lists back to tuples
            object.__setattr__(self, name, tuple(getattr(self, name)))
        default = algorithms.get(self.algorithm).positive_weight
        if self.positive_weight is None:
            object.__setattr__(self, "positive_weight", default)
        elif default == 0.0 and self.positive_weight != 0.0:
            raise ValueError(f"{self.algorithm} trains on negative samples only (lambda = 0); "
                             f"set positive_weight on {self.algorithm.removesuffix('_n')} instead")
        if not isinstance(self.model, (PretrainConfig, str)):
            raise TypeError(f"TrainConfig.model must be a PretrainConfig or a str, got "
                            f"{type(self.model).__name__}")
        if not isinstance(self.settings, Settings):
            raise TypeError(f"TrainConfig.settings must be a Settings, got "
                            f"{type(self.settings).__name__}")
        if self.path_prior is not None:
            check(Prior, self.path_prior, "TrainConfig.path_prior")
        if self.path_guess is not None:
            check(Prior, self.path_guess, "TrainConfig.path_guess")
            if self.path_prior is None or self.path_prior + self.path_guess >= 1:
                raise ValueError(f"TrainConfig.path_guess={self.path_guess!r} needs path_prior "
                                 f"set and path_prior + path_guess < 1, got path_prior="
                                 f"{self.path_prior!r}")
        registry.check_model(self.policy)
        registry.training_task(self.task, self.model)  # a task it can name (cheap: loads no data)
        tiny_sums = isinstance(self.model, PretrainConfig) and self.task is None
        for name, used in [("path_prior", self.path_prior is not None),
                           ("hard_share", self.hard_share is not None),
                           ("without_stepwise", self.without_stepwise),
                           ("first_character_only", self.first_character_only),
                           ("readout_only", self.readout_only),
                           ("after_first_character", self.after_first_character),
                           ("spared_negatives", bool(self.spared_negatives)),
                           ("attribution_steps", bool(self.attribution_steps))]:
            if used and not tiny_sums:
                raise ValueError(f"TrainConfig.{name}={getattr(self, name)!r} needs the tiny "
                                 f"sums base (model a PretrainConfig, task None)")
        if self.readout_only and not self.first_character_only:
            raise ValueError("TrainConfig.readout_only=True needs first_character_only=True "
                             "(the readout is trained on the first character)")
        if self.after_first_character and self.first_character_only:
            raise ValueError("TrainConfig.after_first_character=True excludes "
                             "first_character_only=True (the loss would read no token)")
        unknown = [n for n in self.spared_negatives if n not in TRACES]
        if unknown or len(set(self.spared_negatives)) < len(self.spared_negatives):
            raise ValueError(f"TrainConfig.spared_negatives={self.spared_negatives!r} must name "
                             f"distinct traces of {list(TRACES)}")
        if self.attribution_steps:
            steps = self.attribution_steps
            if not self.probe_every:
                raise ValueError(f"TrainConfig.attribution_steps={steps!r} needs probe_every "
                                 f">= 1 (it reads the probed problems)")
            if (list(steps) != sorted(set(steps)) or not all(isinstance(s, int) for s in steps)
                    or steps[0] < 0 or steps[-1] >= self.steps):
                raise ValueError(f"TrainConfig.attribution_steps={steps!r} must be increasing "
                                 f"whole generation steps in [0, steps={self.steps})")
            if self.loss_type == "bnpo":
                raise ValueError("TrainConfig.attribution_steps needs a loss additive over "
                                 "samples: loss_type 'dapo', 'grpo' or 'dr_grpo', not 'bnpo'")
        exact = ("probe_hard", "probe_early_every", "probe_early_until", "stop_after_crossover")
        for name in exact:
            if getattr(self, name) and not (tiny_sums and self.probe_every):
                raise ValueError(f"TrainConfig.{name}={getattr(self, name)!r} needs the exact "
                                 f"probe: the tiny sums base with probe_every >= 1")
        if self.probe_every and not tiny_sums and self.probe_samples < 1:
            raise ValueError(f"TrainConfig.probe_samples={self.probe_samples!r} must be >= 1: "
                             f"a model other than the tiny sums base is probed by sampling")
        for name, ok, rule in [
            ("positive_weight", self.positive_weight >= 0, ">= 0"),
            ("seed", self.seed >= 0, ">= 0"),
            ("hard_share", self.hard_share is None or 0 <= self.hard_share <= 1,
             "None or in [0, 1]"),
            ("probe_every", self.probe_every >= 0, ">= 0 (0: no probes)"),
            ("probe_problems", self.probe_problems >= 1, ">= 1"),
            ("probe_hard", self.probe_hard >= 0, ">= 0"),
            ("probe_early_every", self.probe_early_every >= 0, ">= 0 (0: none)"),
            ("probe_early_until", self.probe_early_until >= 0, ">= 0"),
            ("stop_after_crossover", self.stop_after_crossover is None
             or self.stop_after_crossover >= 0, "None or >= 0"),
            ("probe_samples", self.probe_samples >= 0, ">= 0"),
        ]:
            if not ok:
                raise ValueError(f"TrainConfig.{name}={getattr(self, name)!r} must be {rule}")

    def __getattr__(self, name: str) -> Any:
        """A setting read as the run's own attribute (``cfg.steps``)."""
        if name != "settings" and name in Settings.model_fields:
            return getattr(self.settings, name)
        raise AttributeError(f"TrainConfig has no attribute {name!r}")

    @property
    def policy(self) -> PretrainConfig | str | dict[str, Any]:
        """The model the run starts from: ``model``, or its base with the path prior refitted
        (a ``registry`` spec)."""
        if self.path_prior is None:
            return self.model
        return {"name": registry.BASE_MODEL, **registry.parse_spec(self.model)[1],
                "prior": self.path_prior,
                **({} if self.path_guess is None else {"guess": self.path_guess})}

    @property
    def tasks(self) -> tuple[str, ...]:
        """The task modules a run of this configuration meets (``store.task_modules``): its
        training task's and its base model's; its results are fingerprinted with these."""
        return task_modules(self.model, registry.training_task(self.task, self.model))

    @property
    def updates_per_step(self) -> int:
        """Optimizer updates per generation batch (4 in the paper)."""
        return self.generation_batch // self.update_batch

    @property
    def weighted(self) -> bool:
        """Whether lambda is not the algorithm's own (a point between GRPO-N and GRPO)."""
        return self.positive_weight != algorithms.get(self.algorithm).positive_weight

    @property
    def label(self) -> str:
        """``GRPO``, ``GSPO-N``, ... or ``GRPO λ=0.25`` for the weighted family."""
        label = algorithms.get(self.algorithm).label
        return f"{label} λ={self.positive_weight:g}" if self.weighted else label

    def replace(self, **changes: Any) -> TrainConfig:
        """This run with ``changes``, to its own fields or to its settings, validated again."""
        settings = {k: changes.pop(k) for k in list(changes) if k in Settings.model_fields}
        if settings:
            changes["settings"] = Settings(**{**self.settings.model_dump(), **settings})
        return dataclasses.replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        """The run as plain values (its settings flat beside its own fields, each task and
        model as its fields and type): what names its folder and what ``from_dict`` reads.
        The fields of ``LATER`` are left out at the values that make the runs of before, so
        that such a run keeps its key (as ``pretrain.PretrainConfig.as_dict`` does)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
               if f.name != "settings"}
        for name in ("model", "task"):
            value = out[name]
            if dataclasses.is_dataclass(value):
                fields = value.as_dict() if isinstance(value, PretrainConfig) else \
                    dataclasses.asdict(value)
                out[name] = {"type": type(value).__name__, **fields}
        return {k: v for k, v in {**out, **self.settings.model_dump()}.items()
                if k not in LATER or v != LATER[k]}

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> TrainConfig:
        """The run that ``as_dict`` wrote (e.g. a launch file); an unknown field is an error."""
        values = dict(values)
        settings = {k: values.pop(k) for k in list(values) if k in Settings.model_fields}
        for name in ("model", "task"):
            if isinstance(values.get(name), dict):
                values[name] = _build(values[name], name)
        unknown = sorted(set(values) - {f.name for f in dataclasses.fields(cls)})
        if unknown:
            raise ValueError(f"TrainConfig has no field {unknown[0]!r}")
        return cls(**values, settings=Settings(**settings))


LATER = {"optimizer": "adam", "after_first_character": False, "spared_negatives": (),
         "attribution_steps": ()}
"""Fields of a run (its own or its ``Settings``') added after runs were first keyed, and their
values that make the runs of before (``TrainConfig.as_dict``); ``from_dict`` reads a run
without them as at these values."""


_BUILDABLE = {c.__name__: c for c in (PretrainConfig, SumTask, ArithmeticMix)}


def _build(fields: dict[str, Any], name: str):
    """The model or task that ``TrainConfig.as_dict`` wrote for ``name`` (its ``type`` and
    fields; JSON's lists back to the tuples and nested dataclasses the type declares)."""
    fields = dict(fields)
    kind = fields.pop("type", None)
    if kind not in _BUILDABLE:
        raise ValueError(f"TrainConfig.{name}: unknown type {kind!r}; known: {sorted(_BUILDABLE)}")
    return _dataclass(_BUILDABLE[kind], fields)


def _dataclass(cls: type, fields: dict[str, Any]):
    hints = typing.get_type_hints(cls)
    return cls(**{k: _dataclass(hints[k], v) if dataclasses.is_dataclass(hints[k])
                  else _tuples(v) for k, v in fields.items()})


def _tuples(value: Any) -> Any:
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def check_sizes(num_generations: int, generation_batch: int, update_batch: int,
                micro_batch: int, world_size: int = 1) -> None:
    """The batch sizes fit together: whole groups of ``num_generations`` completions per
    generation batch, a whole number of updates per generation batch, and a whole number of
    micro-batches (on ``world_size`` devices) per update."""
    if num_generations < 2:
        raise ValueError(f"num_generations={num_generations} must be >= 2 (group advantages)")
    for name, value in [("generation_batch", generation_batch), ("update_batch", update_batch),
                        ("micro_batch", micro_batch)]:
        if value < 1:
            raise ValueError(f"{name}={value} must be >= 1")
    if generation_batch % num_generations:
        raise ValueError(f"generation_batch={generation_batch} is not divisible by "
                         f"num_generations={num_generations}: a batch must hold whole groups")
    if generation_batch % update_batch:
        raise ValueError(f"generation_batch={generation_batch} is not divisible by "
                         f"update_batch={update_batch}: each generation needs whole updates")
    if update_batch % (micro_batch * world_size):
        raise ValueError(f"update_batch={update_batch} is not divisible by micro_batch="
                         f"{micro_batch} x {world_size} device(s)")


def world_size() -> int:
    """Processes in this launch (``accelerate launch`` / ``torchrun`` set ``WORLD_SIZE``)."""
    return int(os.environ.get("WORLD_SIZE", "1"))
