"""The models a comparison measures and the problems it measures them on: the base (sampled
``base_repeats`` times, the noise floor) and one finished run per algorithm and seed, each an
``evaluation`` spec, evaluated side by side on the first problems of each benchmark."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import pandas as pd
from pydantic import BaseModel, ConfigDict

from rlvr_dynamics import boundary, registry
from rlvr_dynamics import measure as ev
from rlvr_dynamics.parallel import pool_map
from rlvr_dynamics.pretrain import PretrainConfig, base_model
from rlvr_dynamics.tasks import sums
from rlvr_dynamics.fields import NonNegative, Real
from rlvr_dynamics.rl.algorithms import BASE
from rlvr_dynamics.rl.config import TrainConfig
from rlvr_dynamics.rl.runs import train
from rlvr_dynamics.store import read_json, results_root, withheld_from


class Setting(BaseModel):
    """A sampling setting: temperature and top-p."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    temperature: NonNegative
    top_p: Real(0, 1, open_lo=True)


@dataclass(frozen=True)
class Model:
    """One evaluated model: its table label, its seed (training seed; for the base, the index of
    its repeated sampling) and its evaluation spec. ``sampling_offset`` is added to the sampling
    seed (the base's repeats)."""

    label: str
    seed: int
    spec: str
    sampling_offset: int = 0


def run_spec(run: Path) -> str:
    """The evaluation spec of a finished training run's final policy: ``tiny:<folder>`` for a
    character-level sums model, the folder itself for a pretrained one (SmolLM2). The kind is
    the model's own where its folder is on disk, else that of the model the run started from
    (its ``config.json``): a copy of the results without the runs' large model folders still
    names each run's model as the evaluations stored under it do (``measure.model_key``)."""
    folder, config = Path(run) / "model", Path(run) / "config.json"
    if folder.is_dir() or not config.is_file():
        char = registry.is_char_model(folder)
    else:
        char = registry.model_kind(TrainConfig.from_dict(read_json(config)).model) == "char"
    return f"tiny:{folder}" if char else str(folder)


OTHER_BASE = BASE + ", pretraining seed {}"
"""The label of a base pretrained from another seed and measured beside the first, which every
run starts from (``Params.other_bases``)."""


def other_base_label(seed: int) -> str:
    """``OTHER_BASE`` for ``seed``."""
    return OTHER_BASE.format(seed)


def is_base(label: str) -> bool:
    """Whether ``label`` names a base (the first or another, ``OTHER_BASE``), not a trained
    model."""
    return label == BASE or label.startswith(OTHER_BASE.format(""))


def other_bases(base: Any, seeds: Sequence[int], profile: str) -> dict[str, str]:
    """label -> evaluation spec of the base ``base`` (the training chapter's ``PretrainConfig``)
    pretrained again from each of ``seeds``, pretrained here one at a time where ``profile``'s
    store lacks it; nothing is trained from them."""
    if seeds and not isinstance(base, PretrainConfig):
        raise ValueError(f"other_bases={list(seeds)} needs the book's own base (sums-base); "
                         f"the runs start from {base!r}")
    out = {}
    for seed in seeds:
        cfg = dataclasses.replace(base, seed=seed)
        base_model(cfg, profile)
        out[other_base_label(seed)] = registry.spec_text(cfg)
    return out


def comparison(base_spec: Any, runs: dict[str, Sequence[Path]], base_repeats: int = 1,
               others: dict[str, str] | None = None) -> list[Model]:
    """The base (a registry spec or ``PretrainConfig``, sampled ``base_repeats`` times), the
    ``others`` (label -> spec: ``other_bases``, each sampled once) and every run of ``runs``
    (label -> one run folder per seed, in seed order)."""
    base_spec = registry.spec_text(base_spec)
    if base_repeats < 1:
        raise ValueError(f"base_repeats must be >= 1, got {base_repeats}")
    return ([Model(BASE, j, base_spec, j) for j in range(base_repeats)]
            + [Model(label, 0, spec) for label, spec in (others or {}).items()]
            + [Model(label, seed, run_spec(run)) for label, folders in runs.items()
               for seed, run in enumerate(folders)])


def chosen(benchmarks: Sequence[Any], problems: int) -> dict[str, list]:
    """The first ``problems`` test problems of each benchmark, keyed by its spec text."""
    return {registry.spec_text(b): registry.load_benchmark(b)[1][:problems] for b in benchmarks}


def beyond_direct(chosen: dict[str, list]) -> set[str]:
    """The ids of the sums problems (of ``chosen``'s benchmarks) that the base's direct path
    cannot solve (a sum of 30 or more, beyond the author's carry cap): only the stepwise path
    can."""
    author = sums.Author()
    return set().union(*(boundary.hard_ids(ps, lambda terms: sums.direct_success(terms, author) > 0)
                         for ps in chosen.values()))


def train_beyond_direct(T: Any) -> float:
    """The share of the training problems of ``T``'s runs (the training chapter's parameters)
    that lie beyond the direct path (``beyond_direct``)."""
    run = T.run_config(T.algorithms[0], T.seeds[0])
    train = registry.training_task(run.task, run.model).problems("train")
    return len(beyond_direct({"train": train})) / len(train)


def _settings(model: Model, settings: ev.EvalSettings) -> ev.EvalSettings:
    return dataclasses.replace(settings, seed=settings.seed + model.sampling_offset)


def _evaluate_job(job) -> None:
    """Evaluate one model under one setting on every benchmark (records land on disk)."""
    model, benchmarks, settings, profile, problems, batch_size = job
    ev.evaluate_table([model.spec], benchmarks, _settings(model, settings), profile,
                      batch_size=batch_size, problems=problems)


def remake_withheld(models: Sequence[Model], profile: str) -> None:
    """Train again, from its ``config.json``, each run of ``models`` restored from the results
    release without its weights (``store.withheld_from``), which an evaluation not released
    needs: the run's settings and code give the run again."""
    for m in models:
        _, fields = registry.parse_spec(m.spec)
        held = withheld_from(Path(fields.get("path") or m.spec))
        if held is not None:
            cfg = TrainConfig.from_dict(read_json(results_root() / held / "config.json"))
            train(cfg, profile, recompute=True)


def evaluate_models(models: Sequence[Model], benchmarks: Sequence[str],
                    settings: dict[str, ev.EvalSettings], profile: str, *, problems: int,
                    workers: int = 2, batch_size: int = 256) -> dict[tuple, pd.DataFrame]:
    """Records of every model on every benchmark under every named setting, keyed
    ``(setting, benchmark, label, seed)``. Evaluations not on disk yet are computed ``workers``
    at a time, one job per model and setting; the rest are read back."""
    jobs = [(m, list(benchmarks), s, profile, problems, batch_size)
            for m in models for s in settings.values()]
    loaded = {registry.spec_text(b): registry.load_benchmark(b) for b in benchmarks}
    todo = [j for j in jobs if not all(ev.is_done(ev.run_dir(
        profile, registry.spec_text(j[0].spec), b, probs[:problems], _settings(j[0], j[2]),
        "transformers"), task) for b, (task, probs) in loaded.items())]
    remake_withheld([j[0] for j in todo], profile)
    pool_map(_evaluate_job, todo, workers, desc="evaluations")
    out = {}
    for name, s in settings.items():
        for m in models:
            table = ev.evaluate_table([m.spec], benchmarks, _settings(m, s), profile,
                                      batch_size=batch_size, problems=problems)
            for (bench, _), recs in table.items():
                out[name, bench, m.label, m.seed] = recs.drop(columns="repeat")
    return out
