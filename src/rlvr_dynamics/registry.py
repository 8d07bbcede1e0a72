"""Every model and task the book can name, in one place: name -> loader, identity, label.

Models and benchmarks are named by specs: ``name``, ``name:field=value,...`` or a dict
``{"name": name, field: value, ...}``::

    models:     sums-base[:PretrainConfig fields]   the project's tiny base model (pretrain.py);
                                                     step=s picks one of its snapshots,
                                                     prior=q refits its P(stepwise) to q,
                                                     guess=g its P(guess) to g (path_prior.py)
                tiny:<folder>                        a tiny model saved with save_pretrained
                smollm2                              SmolLM2-135M-Instruct (models.py)
                <hub name or folder>                 e.g. Qwen/Qwen2.5-Math-7B, an RL checkpoint
    benchmarks: sums-test, sums-ood[:SumTask fields] the synthetic sums task (tasks/sums.py)
                arith[:digits=..,terms=..]           chat arithmetic (tasks/arithmetic.py)
                math500, aime24, aime25, amc23, math-train    (tasks/math.py)
                arc-c, mmlu-pro                      (tasks/choice.py)
    training tasks: sums, math, arith (``training_task``)

A model's *kind* is ``"char"`` (the character-vocabulary sums models, which read only the sums
benchmarks, prompts with a BOS token) or ``"text"`` (tokenizer-based models, the others). A
``PretrainConfig`` stands for the ``sums-base`` model it configures wherever a spec is taken.
"""
from __future__ import annotations

import ast
import dataclasses
import json
import re
from pathlib import Path
from typing import Any, Sequence

import pandas as pd
import torch

from rlvr_dynamics import models
from rlvr_dynamics.path_prior import Refit, refit, refit_dir
from rlvr_dynamics.pretrain import PretrainConfig, base_model
from rlvr_dynamics.store import withheld_from
from rlvr_dynamics.tasks.arithmetic import SPLITS, ArithmeticTask
from rlvr_dynamics.tasks.base import Problem, Task
from rlvr_dynamics.tasks.choice import ChoiceTask
from rlvr_dynamics.tasks.math import MathSplits, MathTask
from rlvr_dynamics.tasks.sums import SumTask

Spec = str | dict[str, Any]
"""A model or benchmark: ``"name"``, ``"name:field=value,..."`` or ``{"name": ..., field: value}``."""

BASE_MODEL = "sums-base"
MATH_BENCHMARKS = ("math500", "aime24", "aime25", "amc23", "math-train")
CHOICE_BENCHMARKS = ("arc-c", "mmlu-pro")
SUMS_BENCHMARKS = ("sums-test", "sums-ood")
BENCHMARKS = (*SUMS_BENCHMARKS, "arith", *MATH_BENCHMARKS, *CHOICE_BENCHMARKS)
TASKS = ("sums", "math", "arith")
"""Tasks a training run can name: the synthetic sums (``tasks.sums``), MATH (``tasks.math``)
and the chat arithmetic of SmolLM2 (``tasks.arithmetic``)."""

_HUB_ID = re.compile(r"^[\w.-]+/[\w.-]+$")


# --- specs ----------------------------------------------------------------------------------

def parse_spec(spec: Spec | PretrainConfig) -> tuple[str, dict[str, Any]]:
    """``"name:a=1,b=x"`` or ``{"name": "name", "a": 1, "b": "x"}`` -> ``("name", {"a": 1,
    "b": "x"})``; string values are read as Python literals where they are ones, lists become
    tuples. ``tiny:<folder>`` keeps the folder whole; a ``PretrainConfig`` is ``sums-base``
    with the fields where it differs from the defaults."""
    if isinstance(spec, PretrainConfig):
        default = PretrainConfig()
        return BASE_MODEL, {f.name: getattr(spec, f.name) for f in dataclasses.fields(spec)
                            if getattr(spec, f.name) != getattr(default, f.name)}
    if isinstance(spec, dict):
        if not isinstance(spec.get("name"), str):
            raise ValueError(f"spec {spec!r}: a dict spec needs a 'name'")
        name, fields = spec["name"], {k: v for k, v in spec.items() if k != "name"}
    elif isinstance(spec, str):
        name, _, rest = spec.partition(":")
        fields = {}
        if name == "tiny":
            fields = {"path": rest}
        elif rest:
            for item in re.split(r",(?![^()\[\]]*[)\]])", rest):  # commas outside brackets
                key, eq, value = item.partition("=")
                if not eq or not key.strip():
                    raise ValueError(f"spec {spec!r}: expected name:field=value,..., "
                                     f"got {item!r}")
                try:
                    fields[key.strip()] = ast.literal_eval(value.strip())
                except (ValueError, SyntaxError):
                    fields[key.strip()] = value.strip()
    else:
        raise ValueError(f"a spec is a string or a dict with a 'name', got {spec!r}")
    return name, {k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()}


def spec_text(spec: Spec | PretrainConfig) -> str:
    """The canonical string form of a spec (``name:field=value,...``), used in keys and tables."""
    name, fields = parse_spec(spec)
    if name == "tiny":
        return f"tiny:{fields.get('path', '')}"
    return name + (":" + ",".join(f"{k}={v!r}" for k, v in fields.items()) if fields else "")


def build(cls, fields: dict[str, Any], spec: Any):
    """``cls(**fields)``, with an error naming the spec and the valid fields."""
    valid = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted(set(fields) - set(valid))
    if unknown:
        raise ValueError(f"spec {spec!r}: unknown field(s) {unknown} of {cls.__name__}; "
                         f"valid: {valid}")
    try:
        return cls(**fields)
    except (TypeError, ValueError) as e:
        raise ValueError(f"spec {spec!r}: {e}") from None


# --- models ---------------------------------------------------------------------------------

def is_local_path(name: str) -> bool:
    """A folder on disk rather than a hub name such as ``Qwen/Qwen2.5-Math-7B``."""
    return Path(name).expanduser().exists() or not _HUB_ID.match(name)


def is_char_model(path: Path) -> bool:
    """A tiny model of this project (its tokenizer is the character-level one)."""
    tok = Path(path) / "tokenizer.json"
    return tok.is_file() and json.loads(tok.read_text()).get("model", {}).get("type") == "WordLevel"


def _base(fields: dict[str, Any], spec: Any
          ) -> tuple[PretrainConfig, int | None, Refit | None]:
    fields = dict(fields)
    step, prior = fields.pop("step", None), fields.pop("prior", None)
    guess = fields.pop("guess", None)
    cfg = build(PretrainConfig, fields, spec)
    if step is not None and step not in cfg.snapshots:
        raise ValueError(f"spec {spec!r}: step={step} is not one of its snapshots "
                         f"{cfg.snapshots}")
    if prior is not None and step is not None:
        raise ValueError(f"spec {spec!r}: prior= refits the final base; it takes no step=")
    if guess is not None and prior is None:
        raise ValueError(f"spec {spec!r}: guess= refits the path habits with prior=; give both")
    try:
        return cfg, step, None if prior is None else Refit(prior, guess or 0.0)
    except ValueError as e:
        raise ValueError(f"spec {spec!r}: {e}") from None


def check_model(spec: Spec | PretrainConfig) -> None:
    """Raise ``ValueError`` (or ``FileNotFoundError``) for a model spec that cannot load; loads
    nothing."""
    name, fields = parse_spec(spec)
    if name == BASE_MODEL:
        _base(fields, spec)
    elif name == "tiny":
        if not fields["path"]:
            raise ValueError(f"spec {spec!r}: tiny:<folder> needs a folder")
        _not_withheld(Path(fields["path"]))
    elif fields:
        raise ValueError(f"spec {spec!r}: only sums-base takes fields")
    elif not name:
        raise ValueError("a model spec must not be empty")
    elif name != "smollm2" and is_local_path(name) and not (
            Path(name).expanduser() / "config.json").is_file():
        _not_withheld(Path(name).expanduser())
        raise FileNotFoundError(f"model {name!r}: no model there (config.json missing); give a "
                                "folder saved with save_pretrained or a hub name like "
                                "'Qwen/Qwen2.5-Math-7B'")


def _not_withheld(folder: Path) -> None:
    """Raise ``FileNotFoundError`` where ``folder`` is a model that the results release
    withheld from a result restored from it (``store.withheld_from``), naming the result."""
    held = withheld_from(folder)
    if held is not None:
        raise FileNotFoundError(
            f"model {folder}: the results release withholds model weights, and results/{held} "
            "was restored from it without them; they are needed here because a result that "
            "reads them is not released (or was made by other code): compute that result "
            f"again (a training run: python -m rlvr_dynamics.run train --config "
            f"results/{held}/config.json --profile <profile> --recompute)")


def model_kind(spec: Spec | PretrainConfig) -> str:
    """``"char"`` for the character-vocabulary sums models, ``"text"`` for the others."""
    name, fields = parse_spec(spec)
    if name in (BASE_MODEL, "tiny"):
        return "char"
    return "char" if name != "smollm2" and is_char_model(Path(name)) else "text"


def load_model(spec: Spec | PretrainConfig, profile: str, dtype: torch.dtype | None = None):
    """``(model, tokenizer)`` named by ``spec``. ``sums-base`` trains the base model on first
    use and caches it (``pretrain.base_model``); a hub model or foreign folder loads in
    ``dtype`` (default: bfloat16 on a GPU, float32 on the CPU)."""
    check_model(spec)
    name, fields = parse_spec(spec)
    if name == BASE_MODEL:
        cfg, step, prior = _base(fields, spec)
        return base_model(cfg, profile, step) if prior is None else refit(cfg, prior, profile)
    if name == "tiny":
        return models.load_tiny(fields["path"])
    if name == "smollm2":
        return models.load_smollm2()
    if is_char_model(Path(name)):
        return models.load_tiny(name)
    if dtype is None:
        dtype = torch.bfloat16 if torch.cuda.is_available() else torch.float32
    return models.load_pretrained(name, dtype=dtype)


def model_identity(spec: Spec | PretrainConfig) -> dict[str, Any]:
    """What the weights behind ``spec`` are, beyond its text: the ``PretrainConfig`` key of a
    ``sums-base`` model (its defaults may change), the modification times of a local folder's
    weight files (a checkpoint retrained in place). A hub name is its own identity.

    The evaluations' keys take the ``sums-base`` and hub identities from here and name a local
    folder by what made it or by its content instead, never by where it lies or when it was
    written (``measure.model_key``); the folder branch here is left as it was because every
    training run's code fingerprint covers this module."""
    name, fields = parse_spec(spec)
    if name == BASE_MODEL:
        cfg, step, prior = _base(fields, spec)
        return {"pretrain": cfg.key, "step": step} | (
            {} if prior is None else {"refit": refit_dir(cfg, prior, "").name})
    folder = Path(fields["path"] if name == "tiny" else name)
    if name != "smollm2" and folder.is_dir():
        return {"weights": {f.name: f.stat().st_mtime_ns for f in sorted(folder.iterdir())
                            if f.suffix in (".safetensors", ".bin", ".pt", ".gguf")}}
    return {}


def label(spec: Spec | PretrainConfig) -> str:
    """A short display name: ``sums-base@<step>`` (plus fields other than steps/snapshots),
    a hub name or folder by its last component."""
    name, fields = parse_spec(spec)
    if name == BASE_MODEL:
        step = fields.pop("step", fields.get("steps", PretrainConfig.steps))
        rest = ", ".join(f"{k}={v}" for k, v in fields.items() if k not in ("steps", "snapshots"))
        return f"sums-base@{step}" + (f" ({rest})" if rest else "")
    if name == "tiny":
        return "tiny:" + Path(fields["path"]).name
    return name if name == "smollm2" else Path(name).name


def labels(specs: Sequence[str]) -> dict[str, str]:
    """``label`` of each spec, or the spec itself where two labels would collide."""
    short = {s: label(s) for s in specs}
    counts = pd.Series(list(short.values())).value_counts()
    return {s: (lab if counts[lab] == 1 else s) for s, lab in short.items()}


# --- benchmarks and training tasks ------------------------------------------------------------

def check_benchmark(spec: Spec) -> None:
    """Raise ``ValueError`` for an unknown or malformed benchmark spec (loads no data)."""
    name, fields = parse_spec(spec)
    if name in SUMS_BENCHMARKS:
        build(SumTask, fields, spec)
    elif name == "arith":
        arith(fields, spec)
    elif name in MATH_BENCHMARKS + CHOICE_BENCHMARKS:
        if fields:
            raise ValueError(f"spec {spec!r}: {name} takes no fields")
    else:
        raise ValueError(f"unknown benchmark {spec!r}; known: {', '.join(BENCHMARKS)}")


def arith(fields: dict[str, Any], spec: Spec) -> tuple[ArithmeticTask, str]:
    """The chat sums of an ``arith`` spec and the split it measures: ``split`` (the test
    problems unless it names another; the pretrained chapter chooses its prompt on the
    training problems, which no evaluation reads), the other fields the task's."""
    fields = dict(fields)
    split = fields.pop("split", "test")
    if split not in SPLITS:
        raise ValueError(f"spec {spec!r}: split must be one of {SPLITS}, got {split!r}")
    return build(ArithmeticTask, fields, spec), split


def benchmark_kind(spec: Spec) -> str:
    """``"char"`` for the sums task (which only character models read), ``"text"`` else."""
    return "char" if parse_spec(spec)[0] in SUMS_BENCHMARKS else "text"


def compatible(model_spec: Spec, benchmark_spec: Spec) -> bool:
    return model_kind(model_spec) == benchmark_kind(benchmark_spec)


def load_benchmark(spec: Spec, data_dir: str | Path | None = None) -> tuple[Task, list[Problem]]:
    """The task and test problems named by ``spec``; math and choice benchmarks come from the
    hub, or from ``data_dir/<name>`` (a file or folder) when ``data_dir`` is given."""
    check_benchmark(spec)
    name, fields = parse_spec(spec)
    if name in SUMS_BENCHMARKS:
        task = build(SumTask, fields, spec)
        return task, task.problems(name.removeprefix("sums-"))
    if name == "arith":
        task, split = arith(fields, spec)
        return task, task.problems(split)
    path = None if data_dir is None else str(Path(data_dir) / name)
    task = MathTask(name, path) if name in MATH_BENCHMARKS else ChoiceTask(name, path)
    return task, task.problems()


def training_task(task: Task | str | None, model: Any) -> Task:
    """The task a run trains on: the base model's own (``None``, a ``PretrainConfig`` carries
    its task), one named in ``TASKS``, or a task object."""
    if task is None:
        if not isinstance(model, PretrainConfig):
            raise ValueError("a task is needed when the model is not a base model of this "
                             "project (a PretrainConfig carries its own task)")
        return model.task
    if isinstance(task, str):
        if task not in TASKS:
            raise ValueError(f"unknown task {task!r}; valid: {list(TASKS)}")
        return {"sums": SumTask, "math": MathSplits, "arith": ArithmeticTask}[task]()
    if not (hasattr(task, "problems") and hasattr(task, "verify")):
        raise TypeError(f"a task must be None, a task name or a Task, got {type(task).__name__}")
    return task
