"""The reproduction chapter (``notebooks/reproduction.md``), Section 4 at CPU scale: every model
of a comparison measured on an in-distribution and an out-of-distribution split under the
paper's sampling setting and the full distribution (Appendix C.2), from its own probabilities
(``exact``: Pass@k for any k, answer entropy of the whole distribution) or from n samples, the
evaluations side by side on both cores, and the paper's tables read over training seeds.

A comparison is a base model and, per algorithm, one finished run per seed. Each model is an
``evaluation`` spec (``sums-base[...]`` or ``tiny:<run>/model``), so its evaluations are keyed,
kept and resumed by the evaluation stack (``evaluation.evaluate_table``)::

    models = comparison(base_spec, {"GRPO": [run0, run1, run2], ...}, base_repeats=2)
    recs = evaluate_models(models, ["sums-test", "sums-ood"], settings, profile, problems=100)
    recs[setting, benchmark, label, seed]      # per-sample records (evaluation.records)
    long = passk_long(recs, ks)                # Pass@k (%) per model and seed
    table1(long, setting)                      # Table 1's layout: mean over seeds

The base is evaluated ``base_repeats`` times with different sampling seeds: its repeats are the
noise floor of every comparison between two sets of samples (``boundary``; from exact records
the floor is the expected chance loss itself).
"""
from __future__ import annotations

import dataclasses
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, model_validator

from rlvr_dynamics import boundary, registry, stats, toy
from rlvr_dynamics import evaluation as ev
from rlvr_dynamics.chapters import Int, ListOf, NeedsParams, NonNegative, Real, Spec, Text, require
from rlvr_dynamics.chapters.toy_dynamics import figures as toy_figures
from rlvr_dynamics.parallel import pool_map
from rlvr_dynamics.chapters.style import COLORS
from rlvr_dynamics.training.algorithms import ALGORITHMS, BASE
from rlvr_dynamics.training.run import obtain_all


class Setting(BaseModel):
    """A sampling setting: temperature and top-p."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    temperature: NonNegative
    top_p: Real(0, 1, open_lo=True)


class Params(NeedsParams):
    """Which models (the training chapter's runs and their base) are measured where: the first
    ``problems`` of each of ``benchmarks`` ([in-distribution, out-of-distribution]) under each of
    ``settings``, completions of at most ``max_tokens``; ``estimator`` "exact" (each problem's
    completion tree expanded until ``tol`` of its mass is left or ``max_nodes`` prefixes are
    expanded, ``frontier_samples`` samples below what is left) or "sampled" (``n`` samples per
    problem); the boundary and the large-k claims read at ``n`` samples; Pass@k at ``ks`` (beyond
    ``n`` only when exact); the base evaluated ``base_repeats`` times (the noise floor) and, once,
    sampled beside the exact measurement (``check_sampled``); ``workers`` evaluations side by
    side in batches of ``batch_size`` rows. ``case_setting``: the setting the case study reads;
    ``trace_window``: steps per window of the path shares; ``case_samples``: completions shown;
    ``toy_seeds``/``toy_steps``: the toy panel; the knob: GRPO and GRPO-N
    (``knob_algorithms``) with other group sizes (``knob_generations``)."""

    needs = ("training", "toy_dynamics")

    benchmarks: ListOf(Spec, 2) = ["sums-test", "sums-ood"]
    problems: Int(1, 200) = 40
    estimator: Text = "exact"
    tol: Real(0, 1) = 1e-3
    max_nodes: Int(1) = 75
    frontier_samples: Int(1) = 16
    n: Int(1) = 256
    ks: ListOf(Int(1)) = [1, 2, 4, 8, 16, 32, 64, 128, 256, 1024, 4096]
    settings: dict[str, Setting] = {"paper": {"temperature": 0.6, "top_p": 0.95},
                                    "full": {"temperature": 1.0, "top_p": 1.0}}
    max_tokens: Int(1) = 72
    base_repeats: Int(2) = 2
    check_sampled: bool = True
    workers: Int(1) = 2
    batch_size: Int(1) = 1024
    case_setting: Text = "full"
    trace_window: Int(1) = 10
    case_samples: Int(1) = 6
    toy_seeds: Int(1) = 1000
    toy_steps: Int(1) = 400
    knob_generations: ListOf(Int(2), 0) = []
    knob_algorithms: ListOf(str, 0) = ["grpo", "grpo_n"]

    @model_validator(mode="after")
    def _cross(self):
        require(self.estimator in ev.ESTIMATORS,
                f"estimator must be one of {ev.ESTIMATORS}, got {self.estimator!r}")
        require(len(self.settings) >= 1, "settings must name at least one setting")
        require(self.case_setting in self.settings, f"case_setting={self.case_setting!r} must "
                                                    f"be one of the settings {list(self.settings)}")
        require(self.n in self.ks, f"ks must hold n={self.n} (the boundary's k), got {self.ks}")
        require(self.estimator == "exact" or max(self.ks) <= self.n,
                f"with estimator='sampled' every k must be <= n={self.n}, got ks={self.ks}")
        require(len(self.benchmarks) == 2,
                "benchmarks must be [in-distribution, out-of-distribution]")
        for spec in self.benchmarks:
            registry.check_benchmark(spec)
        for name in self.knob_algorithms:
            require(name in ALGORITHMS, f"knob_algorithms has {name!r}; valid: {sorted(ALGORITHMS)}")
        return self

    def eval_settings(self, estimator: str | None = None) -> dict[str, ev.EvalSettings]:
        """Each named setting as the evaluation stack's settings, for ``estimator`` (default:
        the chapter's); an exact evaluation holds all of a benchmark's problems in one chunk
        (their trees grown together)."""
        estimator = estimator or self.estimator
        kind = (dict(n=self.frontier_samples, estimator="exact", tol=self.tol,
                     max_nodes=self.max_nodes, chunk=self.problems, keep=self.case_samples)
                if estimator == "exact" else dict(n=self.n))
        return {name: ev.EvalSettings(temperature=s.temperature, top_p=s.top_p,
                                      max_tokens=self.max_tokens, **kind)
                for name, s in self.settings.items()}


def toy_main(D: Any, steps: int, seeds: int) -> toy.Summary:
    """The toy chapter's main setting (``D``: its parameters), ``seeds`` runs of ``steps``."""
    return toy.summarise(z0=toy.logits(D.pi0), r=D.rewards, G=D.G, lr=D.lr, steps=steps,
                         seeds=seeds, seed=0, progress=False)


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
    character-level sums model, the folder itself for a pretrained one (SmolLM2)."""
    folder = Path(run) / "model"
    return f"tiny:{folder}" if registry.is_char_model(folder) else str(folder)


def comparison(base_spec: Any, runs: dict[str, Sequence[Path]], base_repeats: int = 1
               ) -> list[Model]:
    """The base (a registry spec or ``PretrainConfig``, sampled ``base_repeats`` times) and
    every run of ``runs`` (label -> one run folder per seed, in seed order)."""
    base_spec = registry.spec_text(base_spec)
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
    chosen = {b: registry.load_benchmark(b)[1][:problems] for b in benchmarks}  # loaded once
    todo = [j for j in jobs if not all(ev.is_done(ev.run_dir(
        profile, registry.spec_text(j[0].spec), registry.spec_text(b), chosen[b],
        _settings(j[0], j[2]), "transformers")) for b in benchmarks)]
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


def agreement(exact_recs: dict[tuple, pd.DataFrame], sampled_recs: dict[tuple, pd.DataFrame],
              ks: Sequence[int], z: float = 4.5) -> pd.DataFrame:
    """The exact measurement beside n samples of the same model, per (setting, benchmark):
    mean Pass@k of each at ``ks``, and the share of problems whose sampled share of correct
    samples lies within ``z`` combined standard errors of the exact p (the exact part's: its
    standard error, or half its certified width where the tree closed)."""
    rows = []
    for key, s in sampled_recs.items():
        e = exact_recs[key]
        p = e["p"].to_numpy(float)
        se_e = np.where(e["se"] > 0, e["se"], (e["p_hi"] - e["p_lo"]) / 2)
        n, c = ev.correct_counts(s)
        share = c / n
        se_s = np.sqrt(np.clip(share * (1 - share), 1 / n, None) / n)
        row = {"setting": key[0], "benchmark": key[1], "model": key[2]}
        for k, a, b in zip(ks, ev.passk_per_problem(e, ks).mean(0),
                           ev.passk_per_problem(s, ks).mean(0)):
            row[f"Pass@{k} exact"], row[f"Pass@{k} sampled"] = 100 * a, 100 * b
        row[f"within {z:g} se"] = float(np.mean(np.abs(p - share) <= z * np.hypot(se_e, se_s)))
        rows.append(row)
    return pd.DataFrame(rows).set_index(["setting", "benchmark", "model"])


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
    n = len(dynamics) + (toy_summary is not None)
    fig, axes = plt.subplots(1, n, figsize=(3.1 * n, 3.0), squeeze=False)
    axes = list(axes[0])
    if toy_summary is not None:
        ax = axes.pop(0)
        toy_figures.plot_policy(ax, toy_summary, 0, toy_title)
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
    its correct samples that does (an erroneous step carried along by a rewarded answer); from
    exact records the probabilities themselves (the ``corrected`` traces' masses), averaged
    over problems and weighted by each problem's p for the second."""
    if ev.is_exact(recs):
        bang = np.array([t.get("corrected", 0.0) for t in recs["traces"]])
        right = np.array([t.get("corrected_right", 0.0) for t in recs["traces"]])
        p = recs["p"].to_numpy(float)
        return {"with !": float(bang.mean()),
                "with !, of the correct": float(right.sum() / p.sum()) if p.sum() > 0 else np.nan}
    bang = recs["text"].str.contains("!", regex=False)
    right = recs["correct"].astype(bool)
    return {"with !": float(bang.mean()),
            "with !, of the correct": float(bang[right].mean()) if right.any() else np.nan}


def case_problem(recs: dict[tuple, pd.DataFrame], setting: str, bench: str, a: str, b: str,
                 hard: set[str]) -> str:
    """The problem on which models ``a`` and ``b`` (seed 0) differ most in their share of
    correct samples, preferring problems beyond the direct path (``hard``)."""
    share = boundary.per_problem({k: v for k, v in recs.items() if k[3] == 0}, setting, bench,
                                 [a, b])
    gap = (share[a] - share[b]).abs()
    gap = gap + gap.index.isin(list(hard))  # hard problems first
    return str(gap.idxmax())


def samples_of(recs: pd.DataFrame, problem: str, count: int) -> pd.DataFrame:
    """One problem's completions: the first ``count`` samples (text, answer, correct), or from
    exact records its ``count`` most probable completions with their probabilities."""
    r = recs[recs["problem"] == problem]
    if ev.is_exact(recs):
        top = r["top"].iloc[0][:count]
        return pd.DataFrame([{"text": t, "probability": m, "correct": c} for t, m, c in top])
    return r.head(count)[["text", "answer", "correct"]].reset_index(drop=True)


# --- the paper's claims, checked over seeds ------------------------------------------------

PASS1_MARGIN = 5.0
"""pass1_gain: the smallest Pass@1 gain over the base that counts (points; the paper's gains
on AMC 2023 are 25-30 points)."""
PASSK_MARGIN = 2.0
"""large_k, ood: how far below the base still "holds" it, and the smallest gap between two
algorithms that counts (points of Pass@k; the paper's GRPO-N - GRPO at AIME 2025 Pass@256 is
20 points)."""
ANSWER_ENTROPY_MARGIN = 0.05
"""answer_entropy: the smallest difference that counts (nats; the paper's GRPO-N - GRPO on
AMC 2023 is about 0.4 nats, Table 4)."""
CASE_MARGIN = 1.0
"""case_study: the smallest difference in the share of correct samples with a corrected step
that counts (points)."""


def rare_path_support(recs: dict[tuple, pd.DataFrame], bench: str, hard: set[str], n: int
                      ) -> pd.Series:
    """Per setting, the share of ``bench``'s problems beyond the direct path (``hard``) that the
    base solves at least once in ``n`` samples (mean over its evaluations; its expectation from
    exact records): 0 when the setting's nucleus cuts the rare path off, so that no sample of
    the base can reach them."""
    out = {}
    for (setting, b, label, _), r in recs.items():
        if b == bench and label == BASE:
            solved = boundary.solved(r, n)
            out.setdefault(setting, []).append(solved[solved.index.isin(list(hard))].mean())
    return pd.Series({s: float(np.mean(v)) for s, v in out.items()}, name="rare-path support")


def headline_setting(support: pd.Series) -> str:
    """The setting whose support reaches furthest into the base's rare path (the first listed
    on a tie): the one under which a shrinkage or expansion of the boundary can be seen."""
    return str(support.idxmax())


def _values(long: pd.DataFrame, value: str, **where) -> dict[str, np.ndarray]:
    part = long
    for column, v in where.items():
        part = part[part[column] == v]
    return {m: g[value].to_numpy(float) for m, g in part.groupby("model", sort=False)}


def _check(v: dict[str, np.ndarray], a: str, b: str, margin: float,
           kind: str = stats.SUPERIORITY, fmt: str = "{:+.2f}") -> tuple[str, str] | None:
    """(what, verdict) of mean(v[a]) - mean(v[b]) (``stats.two_sample``), or None if either
    model is missing."""
    if a not in v or b not in v:
        return None
    e = stats.two_sample(v[a], v[b], margin, kind)
    claim = f"> -{margin:g}" if kind == stats.NON_INFERIORITY else f"> +{margin:g}"
    return (f"{a} - {b} = {e.text(fmt)} ({claim}?)", e.verdict)


def _ours(v: dict[str, np.ndarray], fmt: str = "{:.1f}") -> str:
    return ", ".join(f"{m} {fmt.format(x.mean())}" + (f" ± {x.std(ddof=1):.1f}"
                                                      if len(x) > 1 else "")
                     for m, x in v.items())


def setting_checks(passk: pd.DataFrame, entropy: pd.DataFrame, setting: str, test: str,
                   ood: str, last: int) -> dict[str, tuple[str, list[tuple[str, str]]]]:
    """claim -> (our values, its checks) for the Pass@k and entropy claims under ``setting``,
    the large-k claims at k = ``last``."""
    p1 = _values(passk, "pass@k", setting=setting, benchmark=test, k=1)
    pk = _values(passk, "pass@k", setting=setting, benchmark=test, k=last)
    po = _values(passk, "pass@k", setting=setting, benchmark=ood, k=last)
    h = _values(entropy, "answer entropy", setting=setting, benchmark=test)
    algos = [m for m in p1 if m != BASE]
    ni = stats.NON_INFERIORITY
    out = {
        "pass1_gain": (f"{test} Pass@1: {_ours(p1)}",
                       [_check(p1, m, BASE, PASS1_MARGIN) for m in algos]),
        "large_k": (f"{test} Pass@{last}: {_ours(pk)}",
                    [_check(pk, "GRPO-N", BASE, PASSK_MARGIN, ni),
                     _check(pk, "GSPO-N", BASE, PASSK_MARGIN, ni),
                     _check(pk, "GRPO-N", "GRPO", PASSK_MARGIN)]),
        "ood": (f"{ood} Pass@{last}: {_ours(po)}",
                [_check(po, "GRPO-N", BASE, PASSK_MARGIN, ni),
                 _check(po, BASE, "GRPO", PASSK_MARGIN)]),
        "answer_entropy": (f"{test} answer entropy: {_ours(h, '{:.3f}')}",
                           [_check(h, "GRPO-N", "GRPO", ANSWER_ENTROPY_MARGIN, fmt="{:+.3f}"),
                            _check(h, "GSPO-N", "GSPO", ANSWER_ENTROPY_MARGIN, fmt="{:+.3f}")]),
    }
    return {c: (ours, [x for x in checks if x is not None]) for c, (ours, checks) in out.items()}


def claim_rows(passk: pd.DataFrame, entropy: pd.DataFrame, bangs: pd.DataFrame,
               settings: Sequence[str], headline: str, test: str, ood: str, bang_setting: str,
               last: int) -> list[dict]:
    """The rows this chapter records for ``verdicts``: the Pass@k and entropy claims scored
    under every setting (the large-k ones at k = ``last``), the verdict taken under
    ``headline`` (the others shown beside it as ``also``), and the case study's corrected steps
    under ``bang_setting``. Values: mean ± sd over seeds (the base's evaluations count as its
    seeds)."""
    scored = {s: setting_checks(passk, entropy, s, test, ood, last) for s in settings}
    rows = []
    for claim, (ours, checks) in scored[headline].items():
        if checks:
            rows.append({"claim": claim, "ours": f"{ours} ({headline} setting)", "checks":
                         [(f"{what} [{headline}]", v) for what, v in checks],
                         "also": [(f"{what} [{s}]", v) for s in settings if s != headline
                                  for what, v in scored[s][claim][1]]})
    b = _values(bangs, "with !, of the correct", setting=bang_setting, benchmark=test)
    case = _check({m: 100 * x for m, x in b.items()}, "GRPO", "GRPO-N", CASE_MARGIN)
    if case is not None:
        rows.append({"claim": "case_study", "ours": f"{test}, share of correct samples with a "
                     f"corrected step ({bang_setting}): "
                     f"{_ours({m: 100 * x for m, x in b.items()})} %", "checks": [case]})
    return rows


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


# --- a knob: the group size ------------------------------------------------------------------

def knob_runs(T: Any, names: Sequence[str], generations: Sequence[int], profile: str,
              workers: int) -> dict[str, list[Path]]:
    """The training chapter's runs (``T``: its parameters) of the algorithms ``names`` with
    ``G`` rollouts per prompt for each G of ``generations``, the completions per step kept:
    ``"<label>, G = <G>"`` -> one run per seed."""
    grid = {(a, g, s): T.model_copy(update={"num_generations": g}).run_config(a, s)
            for a in names for g in generations for s in T.seeds}
    folders = dict(zip(grid, obtain_all(list(grid.values()), profile, inline=T.train_inline,
                                        workers=workers)))
    return {f"{ALGORITHMS[a].label}, G = {g}": [folders[a, g, s] for s in T.seeds]
            for a in names for g in generations}


def takeover_steps(T: Any, dynamics: dict[str, list[list[dict]]],
                   knob_dynamics: dict[str, list[list[dict]]], names: Sequence[str]
                   ) -> dict[tuple[str, int], list[float]]:
    """(algorithm label, G) -> the step at which each seed's stepwise path first carries half
    of the rollouts (inf: never), for the chapter's own G and the knob's."""
    out = {}
    for a in names:
        label = ALGORITHMS[a].label
        if label in dynamics:
            out[label, T.num_generations] = [takeover_step(r) for r in dynamics[label]]
        for key, runs in knob_dynamics.items():
            name, _, g = key.partition(", G = ")
            if name == label:
                out[label, int(g)] = [takeover_step(r) for r in runs]
    return out


def takeover_table(T: Any, steps: dict[tuple[str, int], list[float]]) -> pd.DataFrame:
    """``takeover_steps`` as a table: one row per (algorithm, G), one column per seed."""
    return pd.DataFrame({f"{label}, G = {g}": [fmt_takeover(t, T.steps) for t in v]
                         for (label, g), v in steps.items()},
                        index=[f"seed {s}" for s in T.seeds]).T.rename_axis(
        "step at which the stepwise path first carries half of the rollouts")


# --- the chapter's sentences about its results, written from the results ------------------------

def _exact(recs: dict[tuple, pd.DataFrame]) -> bool:
    return all(ev.is_exact(r) for r in recs.values())


def _range(values: Sequence[float], fmt: str = "{:.1f}") -> str:
    lo, hi = min(values), max(values)
    return fmt.format(lo) if fmt.format(lo) == fmt.format(hi) else \
        f"{fmt.format(lo)}-{fmt.format(hi)}"


def ceiling_text(recs: dict[tuple, pd.DataFrame], benchmarks: Sequence[str], hard: set[str],
                 n: int) -> str:
    """Which settings let the base reach the problems beyond the direct path."""
    parts = []
    for bench in benchmarks:
        support = rare_path_support(recs, bench, hard, n)
        parts.append(f"on {bench}, " + ", ".join(f"{v:.0%} under the {s} setting"
                                                for s, v in support.items()))
    return ("Of the problems beyond the direct path, the base solves at least once in "
            f"{n} samples{' (in expectation)' if _exact(recs) else ''}: " + "; ".join(parts) + ". A setting at 0 % cannot see the rare "
            "path at all: there, any trained model that takes it looks like an expansion.")


def saturation_text(passk: pd.DataFrame, benchmarks: Sequence[str], last: int) -> str:
    """The trained models' Pass@1 against their Pass@``last``, per setting and benchmark."""
    trained = passk[passk["model"] != BASE]
    means = trained.groupby(["setting", "benchmark", "model", "k"], sort=False)["pass@k"].mean()
    parts = []
    for setting in dict.fromkeys(trained["setting"]):
        for bench in benchmarks:
            p1 = means.loc[setting, bench, :, 1].tolist()
            pn = means.loc[setting, bench, :, last].tolist()
            parts.append(f"{bench}, {setting} setting: Pass@1 {_range(p1)} %, "
                         f"Pass@{last} {_range(pn)} %")
    return ("The trained models (mean over seeds, the range over algorithms): "
            + "; ".join(parts) + ".")


def shrinkage_text(btable: pd.DataFrame) -> str:
    """Per setting and benchmark: how many problems the trained models lose against the base's
    first evaluation, beside what the base's second evaluation loses by chance alone (counts
    or, from exact records, expectations; compared at the 0.1 they are printed to)."""
    sentences = []
    for (setting, bench), g in btable.groupby(["setting", "benchmark"], sort=False):
        floor = g[g["model"] == BASE]["lost"].max()
        lost = g[g["model"] != BASE].groupby("model", sort=False)["lost"].mean()
        beyond = [m for m, v in lost.items() if round(v, 1) > round(floor, 1)]
        verdict = ("no algorithm loses more than chance does" if not beyond else
                   f"{', '.join(beyond)} lose{'s' if len(beyond) == 1 else ''} more than chance")
        sentences.append(f"{bench}, {setting} setting: the trained models lose "
                         f"{_range(lost.tolist())} problems on average, the base's second "
                         f"evaluation {floor:.1f} ({verdict})")
    return "; ".join(sentences) + "."


def takeover_text(steps: dict[tuple[str, int], list[float]], G0: int) -> str:
    """Whether each algorithm's stepwise path takes over later with smaller groups (the toy's
    prediction), seed by seed, and how GRPO-N compares with GRPO at each group size."""
    parts = []
    for (label, g), v in steps.items():
        if g == G0 or (label, G0) not in steps:
            continue
        base = steps[label, G0]
        later = sum(t > b for t, b in zip(v, base))
        gap = np.mean([t - b for t, b in zip(v, base) if np.isfinite(t) and np.isfinite(b)] or
                      [np.nan])
        by = "" if np.isnan(gap) else f" (by {gap:.1f} steps on average where both took over)"
        parts.append(f"{label} with G = {g} takes over later than with G = {G0} in {later} of "
                     f"{len(v)} seeds{by}")
    for g in sorted({g for _, g in steps}):
        if ("GRPO", g) in steps and ("GRPO-N", g) in steps:
            a, b = steps["GRPO-N", g], steps["GRPO", g]
            parts.append(f"at G = {g}, GRPO-N takes over later than GRPO in "
                         f"{sum(x > y for x, y in zip(a, b))} of {len(a)} seeds")
    return ("; ".join(parts) + ".") if parts else "The knob was not run under this profile."


def answer_entropy_text(entropy: pd.DataFrame, setting: str) -> str:
    """Whether each -N variant's answer entropy is above its counterpart's under ``setting``,
    per benchmark (means over seeds)."""
    part = entropy[entropy["setting"] == setting]
    m = part.groupby(["benchmark", "model"], sort=False)["answer entropy"].mean()
    out = []
    for bench in dict.fromkeys(part["benchmark"]):
        for neg, pos in (("GRPO-N", "GRPO"), ("GSPO-N", "GSPO")):
            if (bench, neg) in m and (bench, pos) in m:
                a, b = m[bench, neg], m[bench, pos]
                out.append(f"{neg} {a:.3f} {'above' if a > b else 'not above'} {pos} {b:.3f} "
                           f"({bench})")
    return f"Answer entropy under the {setting} setting: " + "; ".join(out) + "."
