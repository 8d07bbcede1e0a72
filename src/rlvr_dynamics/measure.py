"""Evaluating models as the paper does (Section 4.1, Appendix C.2 and C.5): n samples per
problem at temperature 0.6 and top-p 0.95, per-sample raw results kept on disk, Pass@k with
bootstrap intervals over problems, and the answer- and token-level entropies, laid out as the
paper's Tables 1-4.

Models and benchmarks are named by the specs of ``registry``.

Two estimators, chosen by ``EvalSettings.estimator``, give the same metrics:

* ``"sampled"``: n samples per problem; a record is one sample: problem id, sample index,
  extracted answer (None = NA), correct, length in tokens, finished, token entropy, text.
  Pass@k is the unbiased estimator (Section 4.1), answer entropy the plug-in entropy of the n
  answers (biased low where the answers have a long tail).
* ``"exact"`` (the character-level models): each problem's completion tree expanded from the
  model's probabilities (``exact.stratified_all``), with samples only below the frontier the
  expansion could not close; a record is one problem: p (point value), its standard error and
  certified bounds p_lo <= p <= p_hi, the answer distribution, the expected token entropy, the
  mass of each of the task's trace statistics (``tasks.sums.trace``), the most probable
  completions, the prefixes expanded and the samples drawn. Pass@k = 1 - (1 - p)^k for any k,
  answer entropy the distribution's own.

One evaluation (a model, a benchmark, the settings) writes one JSON file per chunk of
problems, atomically, under ``results/<profile>/evaluation/<model>/<benchmark>-<key>/``
(``<model>`` and the key name the model by what it is, never by where it lies: ``model_key``):
an interrupted evaluation resumes at the first missing chunk, a finished one is read back,
and ``recompute=True`` starts afresh. Each chunk is sampled with its own seed, so a resumed
evaluation equals an uninterrupted one::

    model = load_model("sums-base:steps=300", profile="smoke")
    task, problems = registry.load_benchmark("sums-test")
    records = evaluate(model, task, problems, EvalSettings(n=64), run_dir(...))
    passk_per_problem(records, ks), answer_entropy_of(records), token_entropy_of(records)
"""
from __future__ import annotations

import dataclasses
import gc
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd
import torch

from rlvr_dynamics import exact, registry
from rlvr_dynamics.entropy import answer_entropy, completion_token_entropy, mean_token_entropy
from rlvr_dynamics.passk import bootstrap_ci, from_probability, pass_at_k
from rlvr_dynamics.progress import bar
from rlvr_dynamics.registry import Spec, compatible, labels, parse_spec, spec_text
from rlvr_dynamics.sampling import SamplingParams, TransformersBackend, VLLMBackend, encode
from rlvr_dynamics.store import (Entry, config_key, digest, origin, read_json, relative,
                                 results_dir, task_modules, write_json)
from rlvr_dynamics.tasks import sums
from rlvr_dynamics.tasks.base import Problem, Task
from rlvr_dynamics.tasks.choice import subsample as draw

log = logging.getLogger(__name__)

BACKENDS = ("transformers", "vllm")
ESTIMATORS = ("sampled", "exact")


# --- models ---------------------------------------------------------------------------------

@dataclass
class LoadedModel:
    """A model ready to evaluate: the transformers model (it scores token entropies), its
    tokenizer, whether prompts get a BOS token, and the generation backend."""

    spec: str  # spec_text of the spec
    model: Any
    tokenizer: Any
    add_bos: bool
    backend: Any


def load_model(spec: Spec, profile: str, backend: str = "transformers", batch_size: int = 64,
               **vllm_engine: Any) -> LoadedModel:
    """The model named by ``spec`` (``registry.load_model``), on the GPU when there is one,
    with its generation backend."""
    registry.check_model(spec)
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    name, _ = parse_spec(spec)
    model, tokenizer = registry.load_model(spec, profile)
    char = registry.model_kind(spec) == "char"  # the sums models were trained on <s>prompt
    model.to("cuda" if torch.cuda.is_available() else "cpu").eval()
    if backend == "vllm":
        if char or name == "smollm2":
            raise ValueError(f"the vllm backend needs a hub name or a checkpoint folder, "
                             f"not {spec!r}")
        engine = VLLMBackend(name, add_bos=char, **vllm_engine)
    else:
        engine = TransformersBackend(model, tokenizer, add_bos=char, batch_size=batch_size,
                                     progress=False)  # evaluate() shows progress per chunk
    return LoadedModel(spec_text(spec), model, tokenizer, char, engine)


# --- one evaluation -------------------------------------------------------------------------

@dataclass(frozen=True)
class EvalSettings:
    """How a model is sampled and scored. ``chunk`` problems are generated (and saved) at a
    time; ``entropy_temperature`` is the temperature of the distribution whose token entropy
    is measured (1: the model's own). ``estimator``: ``"sampled"`` (n samples per problem) or
    ``"exact"`` (the completion tree expanded until at most ``tol`` of its mass is left or
    ``max_nodes`` prefixes are expanded, then n samples below the frontier where more than
    ``tol`` is left; the ``keep`` most probable completions listed)."""

    n: int = 256
    temperature: float = 0.6
    top_p: float = 0.95
    max_tokens: int = 4096
    seed: int = 0
    chunk: int = 8
    entropy_temperature: float = 1.0
    estimator: str = "sampled"
    tol: float = 1e-3
    max_nodes: int = 20_000
    keep: int = 8

    def __post_init__(self) -> None:
        SamplingParams(self.n, self.temperature, self.top_p, self.max_tokens, self.seed)
        if self.chunk < 1:
            raise ValueError(f"EvalSettings.chunk must be >= 1, got {self.chunk}")
        if self.estimator not in ESTIMATORS:
            raise ValueError(f"EvalSettings.estimator must be one of {ESTIMATORS}, "
                             f"got {self.estimator!r}")
        if not 0 <= self.tol <= 1:
            raise ValueError(f"EvalSettings.tol must lie in [0, 1], got {self.tol}")
        if self.max_nodes < 1 or self.keep < 0:
            raise ValueError(f"EvalSettings.max_nodes must be >= 1 and keep >= 0, got "
                             f"{self.max_nodes}, {self.keep}")

    def sampling(self, chunk_index: int) -> SamplingParams:
        """The sampling parameters of one chunk: its own seed, drawn from (seed, index)."""
        seed = int(np.random.SeedSequence([self.seed, chunk_index]).generate_state(1)[0])
        return SamplingParams(self.n, self.temperature, self.top_p, self.max_tokens, seed)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.=-]+", "_", text).strip("_")[:80]


WEIGHTS = (".safetensors", ".bin", ".pt", ".gguf")
"""The suffixes of a model folder's weight files (what ``model_key`` hashes)."""


def model_key(spec: Spec) -> tuple[str, dict[str, Any]]:
    """The model behind ``spec`` as an evaluation's key names it: a label and an identity that
    say what the weights are, never where they lie, so that results found under one folder
    are found again under a copy or a clone elsewhere.

    A model named by the registry (``sums-base``: its ``PretrainConfig`` key; SmolLM2, a hub
    name) is its spec text and ``registry.model_identity``. A folder inside the results tree (a
    training run's ``model/``) is named by its path relative to the results root and identified
    by the result that made it (``store.origin``: the run's folder, itself named by the run's
    settings, the run's code and the checksums its done marker recorded), read from that marker
    alone. Any other folder is named by its last component and identified by the sha256 of its
    weight files (``WEIGHTS``, ``store.digest``): a touched file keeps the key, a changed byte
    moves it."""
    name, fields = parse_spec(spec)
    if name == "tiny":
        prefix, folder = "tiny:", Path(fields["path"])
    elif name not in (registry.BASE_MODEL, "smollm2") and registry.is_local_path(name):
        prefix, folder = "", Path(name)
    else:
        return spec_text(spec), registry.model_identity(spec)
    folder = folder.expanduser()
    inside = relative(folder)
    label = prefix + (f"results/{inside.as_posix()}" if inside is not None
                      else folder.resolve().name)
    made = origin(folder)
    if made is not None:
        return label, made
    weights = ({f.name: digest(f) for f in sorted(folder.iterdir()) if f.suffix in WEIGHTS}
               if folder.is_dir() else {})
    return label, {"weights": weights}


def run_dir(profile: str, model_spec: str, benchmark_spec: str, problems: Sequence[Problem],
            settings: EvalSettings, backend: str) -> Path:
    """Where one evaluation's chunks live; the key covers everything that changes them: the
    model as ``model_key`` names it (the folder's name too, so no absolute path), the problems'
    text and gold answers, the settings."""
    label, identity = model_key(model_spec)
    key = config_key({"model": label, "weights": identity,
                      "benchmark": benchmark_spec, "backend": backend,
                      "problems": [[p.id, p.prompt, p.answer] for p in problems],
                      **dataclasses.asdict(settings)})
    return results_dir(profile, "evaluation") / _slug(label) / f"{_slug(benchmark_spec)}-{key}"


def evaluate_chunk(model: LoadedModel, task: Task, problems: Sequence[Problem],
                   settings: EvalSettings, chunk_index: int = 0) -> list[dict]:
    """Evaluate one chunk of problems with the settings' estimator: one record per problem."""
    params = settings.sampling(chunk_index)
    if settings.estimator == "exact":
        return exact_chunk(model, task, problems, settings, params.seed)
    return sampled_chunk(model, task, problems, params, settings.entropy_temperature)


def sampled_chunk(model: LoadedModel, task: Task, problems: Sequence[Problem],
                  params: SamplingParams, entropy_temperature: float = 1.0) -> list[dict]:
    """Sample, grade and score one chunk of problems: one record per problem, holding its
    samples' extracted answer, correctness, length, finished flag, token entropy and text."""
    completions = model.backend.generate([p.prompt for p in problems], params,
                                         entropy_temperature)
    flat = [(i, c) for i, cs in enumerate(completions) for c in cs]
    if all(c.entropies is not None for _, c in flat):  # recorded while decoding
        entropies = [np.asarray(c.entropies) for _, c in flat]
    else:  # a backend that cannot record them (vLLM): one teacher-forced pass
        prompt_ids = [encode(model.tokenizer, p.prompt, model.add_bos) for p in problems]
        entropies = completion_token_entropy(model.model, [prompt_ids[i] for i, _ in flat],
                                             [c.token_ids for _, c in flat],
                                             temperature=entropy_temperature)
    h = iter(entropies)
    return [{"id": p.id, "gold": p.answer, "samples": [
        {"answer": task.extract(c.text), "correct": bool(task.verify(c.text, p.answer)),
         "length": c.length, "finished": c.finished,
         "token_entropy": float(e.mean()) if len(e := next(h)) else None, "text": c.text}
        for c in cs]} for p, cs in zip(problems, completions)]


def task_trace(task: Task) -> exact.Trace | None:
    """The per-completion statistics whose mass the exact estimator records (the sums
    task's paths, ``tasks.sums.trace``); None for other tasks."""
    return sums.problem_trace if isinstance(task, sums.SumTask) else None


def exact_chunk(model: LoadedModel, task: Task, problems: Sequence[Problem],
                settings: EvalSettings, seed: int) -> list[dict]:
    """One chunk's records under the exact estimator (``exact.stratified_all``: the chunk's
    trees grown together)."""
    estimates = exact.stratified_all(
        model.model, model.tokenizer, problems, task, n=settings.n, seed=seed,
        temperature=settings.temperature, top_p=settings.top_p, max_tokens=settings.max_tokens,
        tol=settings.tol, max_nodes=settings.max_nodes, add_bos=model.add_bos,
        entropy_temperature=settings.entropy_temperature, trace=task_trace(task),
        keep=settings.keep)
    return [{"id": problem.id, "gold": problem.answer, "p": e.p, "se": e.se,
             "p_lo": e.tree.p_lo, "p_hi": e.tree.p_hi,
             "answers": sorted(([a, m] for a, m in e.answers.items()), key=lambda x: -x[1]),
             "token_entropy": e.token_entropy, "traces": e.traces,
             "top": [[leaf.text, leaf.mass, leaf.correct] for leaf in e.tree.top],
             "nodes": e.tree.nodes, "samples": e.samples}
            for problem, e in zip(problems, estimates)]


def entry(out: Path, task: Task) -> Entry:
    """The store entry of an evaluation folder (made by this module's code on ``task``)."""
    return Entry(out, code=__name__, tasks=task_modules(task))


def is_done(out: Path, task: Task) -> bool:
    return entry(out, task).done


def evaluate(model: LoadedModel, task: Task, problems: Sequence[Problem],
             settings: EvalSettings, out: Path, recompute: bool = False) -> pd.DataFrame:
    """Evaluate ``model`` on ``problems``, writing one chunk file at a time into ``out``.

    Chunks already on disk from this code are kept (an interrupted evaluation resumes there);
    a finished evaluation is read back without generating; ``recompute`` starts afresh.
    Returns the per-sample records (``records``).
    """
    e = entry(out, task)
    if e.done and not recompute:
        return records(out)
    e.begin(fresh=recompute)
    chunks = [problems[i:i + settings.chunk] for i in range(0, len(problems), settings.chunk)]
    todo = [i for i in range(len(chunks)) if not _chunk_path(out, i).is_file()]
    if todo:
        log.info("%s on %s: %d of %d chunks on disk, %d to generate (n=%d)", model.spec,
                 task.name, len(chunks) - len(todo), len(chunks), len(todo), settings.n)
    for i in bar(todo, bool(todo), desc=f"{model.spec} | {task.name}"):
        write_json(_chunk_path(out, i), evaluate_chunk(model, task, chunks[i], settings, i))
    e.finish({"model": model.spec, "task": task.name, "problems": len(problems),
              "chunks": len(chunks), "settings": dataclasses.asdict(settings)})
    return records(out)


def _chunk_path(out: Path, i: int) -> Path:
    return out / f"chunk-{i:05d}.json"


EXACT_COLUMNS = ["problem", "gold", "p", "se", "p_lo", "p_hi", "answers", "token_entropy",
                 "traces", "top", "nodes", "samples"]
SAMPLED_COLUMNS = ["problem", "gold", "sample", "answer", "correct", "length", "finished",
                   "token_entropy", "text"]


def records(out: Path) -> pd.DataFrame:
    """The records of an evaluation folder: one row per sample (sampled estimator) or per
    problem (exact estimator, with a column ``p``)."""
    chunks = [read_json(path) for path in sorted(Path(out).glob("chunk-*.json"))]
    if chunks and chunks[0] and "p" in chunks[0][0]:
        rows = [{"problem": prob["id"], **{k: v for k, v in prob.items() if k != "id"}}
                for chunk in chunks for prob in chunk]
        return pd.DataFrame(rows, columns=EXACT_COLUMNS)
    rows = [{"problem": prob["id"], "gold": prob["gold"], "sample": j, **s}
            for chunk in chunks for prob in chunk for j, s in enumerate(prob["samples"])]
    return pd.DataFrame(rows, columns=SAMPLED_COLUMNS)


def is_exact(recs: pd.DataFrame) -> bool:
    """Whether ``recs`` come from the exact estimator (one row per problem)."""
    return "p" in recs.columns


# --- metrics from records (either estimator) ------------------------------------------------

def _groups(recs: pd.DataFrame) -> Iterable[pd.DataFrame]:
    keys = ["repeat", "problem"] if "repeat" in recs else ["problem"]
    return (g for _, g in recs.groupby(keys, sort=False))


def correct_counts(recs: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(n, c) per problem: samples and correct samples (sampled records)."""
    if is_exact(recs):
        raise ValueError("exact records have probabilities, not counts: use success_probability")
    groups = list(_groups(recs))
    return (np.array([len(g) for g in groups]), np.array([int(g["correct"].sum()) for g in groups]))


def success_probability(recs: pd.DataFrame) -> np.ndarray:
    """Per problem, the probability that one sample is correct: p (exact) or the share of
    correct samples (sampled)."""
    if is_exact(recs):
        return recs["p"].to_numpy(float)
    n, c = correct_counts(recs)
    return c / n


def passk_per_problem(recs: pd.DataFrame, ks: Sequence[int]) -> np.ndarray:
    """Pass@k of every problem at every k, (problems, ks): 1 - (1 - p)^k (exact), the unbiased
    estimator of Section 4.1 (sampled, k <= n)."""
    if is_exact(recs):
        p = recs["p"].to_numpy(float)[:, None]
        return from_probability(p, np.asarray(ks, float)[None, :])
    n, c = correct_counts(recs)
    return pass_at_k(n, c, list(ks))


def answer_entropy_of(recs: pd.DataFrame) -> float:
    """AnswerEntropy (Appendix C.5) averaged over problems; NA answers count as one answer
    (exact: the entropy of each problem's answer distribution)."""
    if is_exact(recs):
        return float(np.mean([exact.distribution_entropy(dict(map(tuple, pairs)))
                              for pairs in recs["answers"]]))
    return float(np.mean([answer_entropy([a if isinstance(a, str) else None for a in g["answer"]])
                          for g in _groups(recs)]))


def token_entropy_of(recs: pd.DataFrame) -> float:
    """TokenEntropy (Appendix C.5) averaged over problems (problems whose completions are all
    empty are left out; exact: each problem's expected value)."""
    if is_exact(recs):
        return float(recs["token_entropy"].mean())
    per_problem = [mean_token_entropy(list(g["token_entropy"])) for g in _groups(recs)
                   if g["token_entropy"].notna().any()]
    return float(np.mean(per_problem)) if per_problem else float("nan")


# --- a table of evaluations -----------------------------------------------------------------

def evaluate_table(models: Sequence[Spec], benchmarks: Sequence[Spec], settings: EvalSettings,
                   profile: str, *, backend: str = "transformers", batch_size: int = 64,
                   data_dir: str | None = None, problems: int | None = None,
                   subsample: dict[str, tuple[int, int]] | None = None,
                   recompute: bool = False) -> dict[tuple[str, str], pd.DataFrame]:
    """Records of every compatible (benchmark, model) pair, keyed that way.

    ``problems`` keeps the first that many problems of each benchmark; ``subsample`` maps a
    benchmark to (size, repeats): that many random problems, drawn afresh for each repeat
    (seed = repeat), each repeat sampled with seed ``settings.seed + repeat`` (the paper's 128
    questions, three times, for ARC-c and MMLU-Pro). A model is loaded only if one of its
    evaluations is not finished yet.
    """
    subsample = subsample or {}
    models, benchmarks = [spec_text(m) for m in models], [spec_text(b) for b in benchmarks]
    for m in models:
        if settings.estimator == "exact" and registry.model_kind(m) != "char":
            raise ValueError(f"estimator='exact' expands the completion tree, which only a "
                             f"character-level model keeps small; {m!r} needs 'sampled'")
    loaded = {b: registry.load_benchmark(b, data_dir) for b in benchmarks}
    results: dict[tuple[str, str], pd.DataFrame] = {}
    for model_spec in models:
        plans = []  # (benchmark, repeat, task, problems, settings, folder)
        for b in benchmarks:
            if not compatible(model_spec, b):
                continue
            task, probs = loaded[b]
            size, repeats = subsample.get(parse_spec(b)[0], (None, 1))
            for r in range(repeats):
                chosen = draw(probs, size, seed=r) if size else probs[:problems]
                s = dataclasses.replace(settings, seed=settings.seed + r)
                plans.append((b, r, task, chosen, s,
                              run_dir(profile, model_spec, b, chosen, s, backend)))
        model = None
        if not recompute and all(is_done(p[-1], p[2]) for p in plans):
            log.info("%s: every evaluation is on disk", model_spec)
        else:
            model = load_model(model_spec, profile, backend, batch_size)
        for b, r, task, chosen, s, folder in plans:
            recs = (records(folder) if model is None else
                    evaluate(model, task, chosen, s, folder, recompute))
            recs.insert(0, "repeat", r)
            results[(b, model_spec)] = pd.concat([results[(b, model_spec)], recs]) \
                if (b, model_spec) in results else recs
        del model
        gc.collect()
    return results


def passk_summary(results: dict[tuple[str, str], pd.DataFrame], ks: Sequence[int],
                  resamples: int = 1000, level: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Long table: benchmark, model (its ``label``), k, Pass@k and its bootstrap interval over
    problems (%)."""
    names = labels(list(dict.fromkeys(m for _, m in results)))
    rows = []
    for (bench, model), recs in results.items():
        model = names[model]
        per = passk_per_problem(recs, ks)
        lo, hi = bootstrap_ci(per, level, resamples, seed)
        for j, k in enumerate(ks):
            rows.append({"benchmark": bench, "model": model, "k": k, "problems": per.shape[0],
                         "pass@k": 100 * per[:, j].mean(), "low": 100 * lo[j], "high": 100 * hi[j]})
    return pd.DataFrame(rows)


def passk_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Table 1's layout: rows (benchmark, model), columns k, Pass@k in %."""
    return summary.pivot_table(index=["benchmark", "model"], columns="k", values="pass@k",
                               sort=False)


def leaders(summary: pd.DataFrame) -> pd.DataFrame:
    """The model with the highest Pass@k at each (benchmark, k): where it changes with k the
    curves cross (the shape of the shrinkage debate)."""
    best = summary.loc[summary.groupby(["benchmark", "k"], sort=False)["pass@k"].idxmax()]
    return best.pivot(index="benchmark", columns="k", values="model")


def entropy_table(results: dict[tuple[str, str], pd.DataFrame]) -> pd.DataFrame:
    """Table 4's layout: rows (metric, model), columns benchmarks, entropies in nats."""
    names = labels(list(dict.fromkeys(m for _, m in results)))
    rows = []
    for (bench, model), recs in results.items():
        model = names[model]
        rows.append({"metric": "Answer-Level Entropy", "model": model, "benchmark": bench,
                     "value": answer_entropy_of(recs)})
        rows.append({"metric": "Token-Level Entropy", "model": model, "benchmark": bench,
                     "value": token_entropy_of(recs)})
    return pd.DataFrame(rows).pivot_table(index=["metric", "model"], columns="benchmark",
                                          values="value", sort=False)
