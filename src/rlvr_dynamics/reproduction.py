"""Section 4 at CPU scale: every model of a comparison sampled as the paper samples (n answers
per problem on an in-distribution and an out-of-distribution split, Appendix C.2), the
evaluations side by side on both cores, and the paper's tables read over training seeds.

A comparison is a base model and, per algorithm, one finished run per seed. Each model is an
``evaluation`` spec (``sums-base[...]`` or ``tiny:<run>/model``), so its evaluations are keyed,
kept and resumed by the evaluation stack (``evaluation.evaluate_table``)::

    models = comparison(base_spec, {"GRPO": [run0, run1, run2], ...}, base_repeats=2)
    recs = evaluate_models(models, ["sums-test", "sums-ood"], settings, profile, problems=100)
    recs[setting, benchmark, label, seed]      # per-sample records (evaluation.records)
    long = passk_long(recs, ks)                # Pass@k (%) per model and seed
    table1(long, setting)                      # Table 1's layout: mean over seeds

The base is sampled ``base_repeats`` times with different sampling seeds: its repeats are the
noise floor of every comparison between two sets of samples (``boundary``).
"""
from __future__ import annotations

import dataclasses
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from rlvr_dynamics import boundary
from rlvr_dynamics import evaluation as ev
from rlvr_dynamics.parallel import pool_map

BASE = "Base"
"""The label of the base model in every table (the paper's "Base Model")."""

COLORS = {BASE: "black", "GRPO": "tab:blue", "GRPO-N": "tab:orange", "GSPO": "tab:green",
          "GSPO-N": "tab:red"}


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
    """The evaluation spec of a finished training run's final policy."""
    return f"tiny:{Path(run) / 'model'}"


def comparison(base_spec: str, runs: dict[str, Sequence[Path]], base_repeats: int = 1
               ) -> list[Model]:
    """The base (sampled ``base_repeats`` times) and every run of ``runs`` (label -> one run
    folder per seed, in seed order)."""
    if base_repeats < 1:
        raise ValueError(f"base_repeats must be >= 1, got {base_repeats}")
    return ([Model(BASE, j, base_spec, j) for j in range(base_repeats)]
            + [Model(label, seed, run_spec(run)) for label, folders in runs.items()
               for seed, run in enumerate(folders)])


def _settings(model: Model, settings: ev.EvalSettings) -> ev.EvalSettings:
    return dataclasses.replace(settings, seed=settings.seed + model.sampling_offset)


def _evaluate_job(job) -> None:
    """Evaluate one model under one setting on every benchmark (records land on disk)."""
    model, benchmarks, settings, profile, problems, batch_size = job
    ev.evaluate_table([model.spec], benchmarks, _settings(model, settings), profile,
                      batch_size=batch_size, problems=problems)


def evaluate_models(models: Sequence[Model], benchmarks: Sequence[str],
                    settings: dict[str, ev.EvalSettings], profile: str, *, problems: int,
                    workers: int = 2, batch_size: int = 256) -> dict[tuple, pd.DataFrame]:
    """Records of every model on every benchmark under every named setting, keyed
    ``(setting, benchmark, label, seed)``. Evaluations not on disk yet are computed ``workers``
    at a time, one job per model and setting; the rest are read back."""
    jobs = [(m, list(benchmarks), s, profile, problems, batch_size)
            for m in models for s in settings.values()]
    todo = [j for j in jobs if not all(ev.is_done(ev.run_dir(
        profile, ev.spec_text(j[0].spec), ev.spec_text(b),
        ev.load_benchmark(b)[1][:problems], _settings(j[0], j[2]), "transformers"))
        for b in benchmarks)]
    pool_map(_evaluate_job, todo, workers, desc="evaluations")
    out = {}
    for name, s in settings.items():
        for m in models:
            table = ev.evaluate_table([m.spec], benchmarks, _settings(m, s), profile,
                                      batch_size=batch_size, problems=problems)
            for (bench, _), recs in table.items():
                out[name, bench, m.label, m.seed] = recs.drop(columns="repeat")
    return out


# --- Tables 1 and 4 over seeds -------------------------------------------------------------

def passk_long(recs: dict[tuple, pd.DataFrame], ks: Sequence[int]) -> pd.DataFrame:
    """Pass@k (%) of every evaluation: columns setting, benchmark, model, seed, k, pass@k."""
    rows = []
    for (setting, bench, label, seed), r in recs.items():
        per = ev.passk_per_problem(r, ks).mean(0)
        rows += [{"setting": setting, "benchmark": bench, "model": label, "seed": seed, "k": k,
                  "pass@k": 100 * v} for k, v in zip(ks, per)]
    return pd.DataFrame(rows)


def entropy_long(recs: dict[tuple, pd.DataFrame]) -> pd.DataFrame:
    """Answer- and token-level entropy (Appendix C.5) of every evaluation, one row each."""
    return pd.DataFrame([{"setting": s, "benchmark": b, "model": m, "seed": seed,
                          "answer entropy": ev.answer_entropy_of(r),
                          "token entropy": ev.token_entropy_of(r)}
                         for (s, b, m, seed), r in recs.items()])


def over_seeds(long: pd.DataFrame, value: str, by: Sequence[str]) -> pd.DataFrame:
    """Mean, standard deviation (ddof 1), min and max of ``value`` over seeds, per ``by``."""
    g = long.groupby(list(by), sort=False)[value]
    return pd.DataFrame({"mean": g.mean(), "sd": g.std(ddof=1), "min": g.min(), "max": g.max(),
                         "seeds": g.size()})


def table1(long: pd.DataFrame, setting: str, stat: str = "mean") -> pd.DataFrame:
    """Table 1's layout for one setting: rows (benchmark, model), columns k, Pass@k (%) as the
    ``stat`` ("mean" or "sd") over seeds."""
    part = long[long["setting"] == setting]
    return over_seeds(part, "pass@k", ["benchmark", "model", "k"])[stat].unstack("k")


def table4(long: pd.DataFrame, setting: str, stat: str = "mean") -> pd.DataFrame:
    """Table 4's layout for one setting: rows (metric, model), columns benchmarks."""
    part = long[long["setting"] == setting].melt(
        id_vars=["benchmark", "model", "seed"], value_vars=["answer entropy", "token entropy"],
        var_name="metric")
    table = over_seeds(part, "value", ["metric", "model", "benchmark"])[stat]
    return table.unstack("benchmark")


def plot_passk(long: pd.DataFrame, title: str) -> plt.Figure:
    """Pass@k against k: one panel per (setting, benchmark), one line per model (mean over
    seeds, shaded from the lowest to the highest seed)."""
    panels = list(dict.fromkeys(zip(long["setting"], long["benchmark"])))
    fig, axes = plt.subplots(1, len(panels), figsize=(3.6 * len(panels), 3.5), squeeze=False,
                             sharey=True)
    for ax, (setting, bench) in zip(axes[0], panels):
        part = long[(long["setting"] == setting) & (long["benchmark"] == bench)]
        stats = over_seeds(part, "pass@k", ["model", "k"]).reset_index()
        for label, g in stats.groupby("model", sort=False):
            color = COLORS.get(label)
            ax.plot(g["k"], g["mean"], marker="o", ms=2.5, lw=1.3, color=color, label=label)
            ax.fill_between(g["k"], g["min"], g["max"], color=color, alpha=0.15, lw=0)
        ax.set_xscale("log", base=2)
        ax.set(xlabel="k", title=f"{bench}, {setting}")
        ax.title.set_fontsize(9)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("Pass@k (%)")
    axes[0][0].legend(fontsize=7)
    fig.suptitle(textwrap.fill(title, 150), fontsize=8)
    fig.tight_layout()
    return fig


def leaders(long: pd.DataFrame, setting: str, k: int) -> dict[str, pd.DataFrame]:
    """Per benchmark, Pass@k over seeds at one k (mean, sd, min, max), one row per model."""
    part = long[(long["setting"] == setting) & (long["k"] == k)]
    return {b: over_seeds(g, "pass@k", ["model"]) for b, g in part.groupby("benchmark", sort=False)}


# --- the two stages inside the language model ------------------------------------------------

PATHS = {"direct_right": ("direct, right", "tab:blue", "-"),
         "direct_wrong": ("direct, wrong", "tab:blue", ":"),
         "stepwise_right": ("stepwise, right", "tab:red", "-"),
         "stepwise_wrong": ("stepwise, wrong", "tab:red", ":")}
"""The rollouts' paths crossed with correctness (``tasks.sums.trace``), as drawn."""


def windowed(runs: list[list[dict]], key: str, window: int) -> tuple[np.ndarray, np.ndarray]:
    """(window centres, values[seed, window]): ``key`` averaged over the records of each run in
    windows of ``window`` steps (NaN where a run logged none). Trace statistics are logged once
    per generation batch, the hard-problem ones only when the batch held a hard problem."""
    last = max(r["step"] for run in runs for r in run)
    edges = np.arange(0, last + window, window)
    values = np.full((len(runs), len(edges) - 1), np.nan)
    for i, run in enumerate(runs):
        kept = [r for r in run if r.get(key) is not None]  # None: nothing measured
        steps = np.array([r["step"] for r in kept])
        v = np.array([r[key] for r in kept], dtype=float)
        for j in range(len(edges) - 1):
            inside = (steps > edges[j]) & (steps <= edges[j + 1])
            if inside.any():
                values[i, j] = v[inside].mean()
    return (edges[:-1] + edges[1:]) / 2, values


def plot_paths(dynamics: dict[str, list[list[dict]]], prefix: str, window: int, title: str,
               toy_summary=None, toy_title: str = "") -> plt.Figure:
    """The share of rollouts on each path (``PATHS``) over training, one panel per algorithm
    (mean over seeds, band from the lowest to the highest seed), with the toy's mean policy
    in a first panel when ``toy_summary`` (``toy.Summary``) is given."""
    from rlvr_dynamics import toy

    n = len(dynamics) + (toy_summary is not None)
    fig, axes = plt.subplots(1, n, figsize=(3.1 * n, 3.0), squeeze=False)
    axes = list(axes[0])
    if toy_summary is not None:
        ax = axes.pop(0)
        toy.plot_policy(ax, toy_summary, 0, toy_title)
        ax.legend(fontsize=7)  # a1: explored, partly right; a2: rare, right; a3: wrong
    for ax, (label, runs) in zip(axes, dynamics.items()):
        for key, (name, color, style) in PATHS.items():
            x, v = windowed(runs, prefix + key, window)
            if np.isnan(v).all():
                continue
            ax.plot(x, np.nanmean(v, 0), color=color, ls=style, lw=1.4, label=name)
            ax.fill_between(x, np.nanmin(v, 0), np.nanmax(v, 0), color=color, alpha=0.12, lw=0)
        ax.set(title=label, xlabel="training step", ylim=(-0.02, 1.02))
        ax.title.set_fontsize(9)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("share of rollouts")
    axes[-1].legend(fontsize=7)
    fig.suptitle(textwrap.fill(title, 160), fontsize=8)
    fig.tight_layout()
    return fig


# --- the case study --------------------------------------------------------------------------

def bang_share(recs: pd.DataFrame) -> dict[str, float]:
    """Of a model's samples: the share that holds a corrected step (``!``), and the share of
    its correct samples that does (an erroneous step carried along by a rewarded answer)."""
    bang = recs["text"].str.contains("!", regex=False)
    right = recs["correct"].astype(bool)
    return {"with !": float(bang.mean()),
            "with !, of the correct": float(bang[right].mean()) if right.any() else np.nan}


def case_problem(recs: dict[tuple, pd.DataFrame], setting: str, bench: str, a: str, b: str,
                 hard: set[str]) -> str:
    """The problem on which models ``a`` and ``b`` (seed 0) differ most in their share of
    correct samples, preferring problems beyond the direct path (``hard``)."""
    share = {m: boundary.counts(recs[setting, bench, m, 0]) for m in (a, b)}
    gap = (share[a]["c"] / share[a]["n"] - share[b]["c"] / share[b]["n"]).abs()
    gap = gap + gap.index.isin(list(hard))  # hard problems first
    return str(gap.idxmax())


def samples_of(recs: pd.DataFrame, problem: str, count: int) -> pd.DataFrame:
    """The first ``count`` samples of one problem: text, answer, correct."""
    r = recs[recs["problem"] == problem].head(count)
    return r[["text", "answer", "correct"]].reset_index(drop=True)


# --- the paper's claims, checked over seeds ------------------------------------------------

TOLERANCE = 2.0
"""How many points of Pass@k below the base still count as "holding" it (large k)."""


def _values(long: pd.DataFrame, value: str, **where) -> dict[str, np.ndarray]:
    part = long
    for column, v in where.items():
        part = part[part[column] == v]
    return {m: g[value].to_numpy(float) for m, g in part.groupby("model", sort=False)}


def _check(v: dict[str, np.ndarray], a: str, b: str, threshold: float = 0.0
           ) -> tuple[str, str] | None:
    """(what, verdict) for mean(v[a]) - mean(v[b]) > threshold, or None if either is missing."""
    from rlvr_dynamics.training.claims import two_sample_band, verdict

    if a not in v or b not in v:
        return None
    d, w = v[a].mean() - v[b].mean(), two_sample_band(v[a], v[b])
    band = "" if np.isnan(w) else f" ± {w:.1f}"
    return (f"{a} - {b} = {d:+.2f}{band} (> {threshold:g}?)", verdict(d, w, threshold))


def _ours(v: dict[str, np.ndarray], fmt: str = "{:.1f}") -> str:
    return ", ".join(f"{m} {fmt.format(x.mean())}" + (f" ± {x.std(ddof=1):.1f}"
                                                      if len(x) > 1 else "")
                     for m, x in v.items())


def claim_rows(passk: pd.DataFrame, entropy: pd.DataFrame, bangs: pd.DataFrame, setting: str,
               test: str, ood: str, bang_setting: str) -> list[dict]:
    """The rows this chapter records for ``verdicts``: Pass@1 gains, large k, out of
    distribution, answer entropy (all under ``setting``) and the case study's corrected steps
    (under ``bang_setting``). Values: mean ± sd over seeds."""
    def row(claim, ours, *checks):
        checks = [c for c in checks if c is not None]
        return [{"claim": claim, "ours": ours, "checks": checks}] if checks else []

    last = int(passk["k"].max())
    p1 = _values(passk, "pass@k", setting=setting, benchmark=test, k=1)
    pk = _values(passk, "pass@k", setting=setting, benchmark=test, k=last)
    po = _values(passk, "pass@k", setting=setting, benchmark=ood, k=last)
    h = _values(entropy, "answer entropy", setting=setting, benchmark=test)
    b = _values(bangs, "with !, of the correct", setting=bang_setting, benchmark=test)
    algos = [m for m in p1 if m != BASE]
    return (row("pass1_gain", f"{test} Pass@1 ({setting}): {_ours(p1)}",
                *[_check(p1, m, BASE) for m in algos])
            + row("large_k", f"{test} Pass@{last} ({setting}): {_ours(pk)}",
                  _check(pk, "GRPO-N", BASE, -TOLERANCE), _check(pk, "GSPO-N", BASE, -TOLERANCE),
                  _check(pk, "GRPO-N", "GRPO"))
            + row("ood", f"{ood} Pass@{last} ({setting}): {_ours(po)}",
                  _check(po, "GRPO-N", BASE, -TOLERANCE), _check(po, BASE, "GRPO"))
            + row("answer_entropy", f"{test} answer entropy ({setting}): {_ours(h, '{:.3f}')}",
                  _check(h, "GRPO-N", "GRPO"), _check(h, "GSPO-N", "GSPO"))
            + row("case_study", f"{test}, share of correct samples with a corrected step "
                  f"({bang_setting}): {_ours({m: 100 * x for m, x in b.items()})} %",
                  _check(b, "GRPO", "GRPO-N")))


def takeover_step(run: list[dict], threshold: float = 0.5) -> float:
    """The first training step at which the stepwise path carries at least ``threshold`` of
    the rollouts (``trace_stepwise_right + trace_stepwise_wrong``); inf if it never does."""
    for r in run:
        if r.get("trace_stepwise_right") is not None and (
                r["trace_stepwise_right"] + r["trace_stepwise_wrong"] >= threshold):
            return float(r["step"])
    return float("inf")


def fmt_takeover(t: float, steps: int) -> str:
    return f"≥ {steps}" if np.isinf(t) else f"{t:g}"
