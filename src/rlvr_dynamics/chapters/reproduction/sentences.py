"""The reproduction chapter's words, written from its results: the settings its figures state,
its sentences about Tables 1 and 4, the base's stepwise path and the two stages, the boundary
and the knob (its cost), and the rows it hands to ``verdicts.record`` (our values and each
check in words)."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd
import yaml

from rlvr_dynamics import stats
from rlvr_dynamics import measure as ev
from rlvr_dynamics.chapters import REFERENCE_COSTS
from rlvr_dynamics.chapters.reproduction import (ANSWER_ENTROPY_MARGIN, CASE_MARGIN,
                                                 PASS1_MARGIN, PASSK_MARGIN, Check, Setting,
                                                 base_stepwise, rare_path_support,
                                                 train_beyond_direct)
from rlvr_dynamics.chapters.sentences import (check_text, comparison_rows,  # noqa: F401
                                              passk_caption, run_settings)
from rlvr_dynamics.comparison.models import is_base
from rlvr_dynamics.comparison.metrics import Z
from rlvr_dynamics.rl.algorithms import BASE


# --- the settings the figures and tables state -----------------------------------------------

def described(P: Any, T: Any) -> str:
    """What every figure and table of the chapter measured (``P``: the chapter's parameters,
    ``T``: the training chapter's)."""
    measured = (f"exact (tree to {P.tol:g} or {P.max_nodes} prefixes, {P.frontier_samples} "
                f"samples below)" if P.estimator == "exact" else f"n = {P.n} samples")
    return (f"{P.profile} profile; {P.problems} problems per benchmark, {measured}; "
            f"{len(T.seeds)} training seeds per algorithm, base measured {P.base_repeats} times")


def runs_text(P: Any, T: Any, labels: Sequence[str], base_spec: str) -> str:
    """The training runs compared (``run_settings``), with this chapter's own bits: the
    algorithms, the base they start from and the temperature of their rollouts."""
    return (f"The training runs ({P.profile} profile): {', '.join(labels)} from `{base_spec}`; "
            f"{run_settings(T)}; rollouts at temperature {T.temperature:g}.")


def benchmarks_text(chosen: dict[str, list], hard: set[str]) -> str:
    """How many problems of each benchmark are measured, and how many of them lie beyond the
    direct path."""
    return "Measured: " + "; ".join(
        f"{b}, {len(ps)} problems, {len(hard & {p.id for p in ps})} beyond the direct path"
        for b, ps in chosen.items()) + "."


def operands_text(chosen: dict[str, list]) -> str:
    """How many operands the problems of each benchmark have (``chosen``: benchmark -> its
    measured problems)."""
    return "Operands per problem: " + "; ".join(
        f"{b}, {_range([len(p.meta['terms']) for p in ps], '{:d}')}"
        for b, ps in chosen.items()) + "."


def window_text(window: int) -> str:
    """How the curves over training are drawn."""
    return f"windows of {window} steps; lines: mean over seeds, bands: min to max"


def agreement_caption(n: int, described: str) -> str:
    return (f"The base: exact measurement against n = {n} samples (Pass@k in %); last column: "
            f"share of problems whose sampled share lies within {Z:g} standard errors of the "
            f"exact p. {described}")


def case_text(problem: str, problems: Sequence, hard: set[str]) -> str:
    """The case study's problem: its prompt and answer, and whether it lies beyond the direct
    path (``problems``: the benchmark's problems)."""
    prompt = next(p for p in problems if p.id == problem)
    return (f"Problem {problem}: `{prompt.prompt}` (answer {prompt.answer}, "
            f"{'beyond' if problem in hard else 'within'} the direct path).")


def margins_text() -> str:
    """The margins of the chapter's checks (``claims``)."""
    return (f"Margins: Pass@1 gain {PASS1_MARGIN:g} points, large k {PASSK_MARGIN:g} points, "
            f"answer entropy {ANSWER_ENTROPY_MARGIN:g} nats, corrected steps {CASE_MARGIN:g} "
            "points.")


# --- the sentences about the results -----------------------------------------------------------

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
            f"{n} samples{' (in expectation)' if _exact(recs) else ''}: " + "; ".join(parts)
            + ". A setting at 0 % cannot see the rare path at all: there, any trained model "
            "that takes it looks like an expansion.")


def base_stepwise_text(recs: dict[tuple, pd.DataFrame], bench: str, name: str,
                       s: Setting) -> str:
    """``base_stepwise`` in words, under the setting ``name`` (``s``)."""
    share, right = base_stepwise(recs, bench, name)
    return (f"Under the {name} setting (T = {s.temperature:g}, top-p {s.top_p:g}) the base "
            f"takes the stepwise path {share:.1%} of the time on {bench}"
            f"{' (from its probabilities)' if _exact(recs) else ''}"
            + (f", and is right {right:.0%} of the time when it does." if share else "."))


def stages_text(recs: dict[tuple, pd.DataFrame], bench: str, name: str, T: Any) -> str:
    """Why the rare path is in play from the first step: the share of the training problems
    beyond the direct path (``models.train_beyond_direct``; ``T``: the training chapter's
    parameters), and how often a group of ``T.num_generations`` rollouts holds a stepwise
    sample and how often that sample is right, at the base's stepwise share under the setting
    ``name`` (``metrics.base_stepwise``)."""
    share, right = base_stepwise(recs, bench, name)
    hard = train_beyond_direct(T)
    g = T.num_generations
    return (f"{hard:.0%} of the training problems lie beyond the direct path; on those a "
            "stepwise sample is the only right answer its group can have, so it is pushed up "
            "from the first step, whatever happens to the direct path on the easy problems. "
            f"With {g} rollouts per prompt and a stepwise share of {share:.3f} (the base under "
            f"the {name} setting, above), a group holds a stepwise sample "
            f"{1 - (1 - share) ** g:.0%} of the time ($1 - (1 - {share:.3f})^{{{g}}}$)"
            + (f", and the stepwise path is right {right:.0%} of the time when taken."
               if share else "."))


def saturation_text(passk: pd.DataFrame, benchmarks: Sequence[str], last: int) -> str:
    """The trained models' Pass@1 against their Pass@``last``, per setting and benchmark."""
    trained = passk[~passk["model"].map(is_base)]
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
        lost = g[~g["model"].map(is_base)].groupby("model", sort=False)["lost"].mean()
        beyond = [m for m, v in lost.items() if round(v, 1) > round(floor, 1)]
        verdict = ("no algorithm loses more than chance does" if not beyond else
                   f"{', '.join(beyond)} lose{'s' if len(beyond) == 1 else ''} more than chance")
        sentences.append(f"{bench}, {setting} setting: the trained models lose "
                         f"{_range(lost.tolist())} problems on average, the base's second "
                         f"evaluation {floor:.1f} ({verdict})")
    return "; ".join(sentences) + "."


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


# --- the knob: the group size --------------------------------------------------------------------


def knob_cost_text(P: Any, T: Any) -> str:
    """What the knob costs: its runs per group size (``P.knob_algorithms`` x the training
    seeds; ``T``: the training chapter's parameters) and, where the reference build
    (``REFERENCE_COSTS``) ran this profile, their minutes at the training chapter's measured
    cost per run there (its minutes over the runs it trained)."""
    per_g = len(P.knob_algorithms) * len(T.seeds)
    text = (f"The knob trains {per_g} more runs per group size ({len(P.knob_algorithms)} "
            f"algorithms × {len(T.seeds)} seeds)")
    ref = yaml.safe_load(REFERENCE_COSTS.read_text())
    if ref["profile"] == P.profile:
        minutes, runs = ref["minutes"]["training"], ref["training_runs"]
        text += (f": about {minutes * per_g / runs:.0f} minutes per group size at the training "
                 f"chapter's cost per run in the reference build (`book/reference_costs.yaml`: "
                 f"{minutes:g} minutes for its {runs} runs)")
    return text + "."


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


# --- the rows for the closing chapter ----------------------------------------------------------


def negative_text(checks: dict[str, list[Check]], trained: Sequence[str]) -> str:
    """What the deciding check (the first quantity of ``claims.negative_checks``) says, per
    algorithm GRPO-N is set against, in words; or, when ``trained`` (the labels of the runs)
    holds neither, which profile trains them."""
    if not checks:
        return ("This build trains neither NSR nor W-REINFORCE (the training chapter's "
                f"`algorithms`: {', '.join(trained)}); `make reproduce PROFILE=cpu-nsr` trains "
                "both beside the four and fills this section.")
    what, cs = next(iter(checks.items()))
    said = {stats.REPLICATES: "GRPO-N is above it by more than the margin",
            stats.OPPOSITE: "GRPO-N is below it by more than the margin",
            stats.NO_EFFECT: "the two are the same within the margin",
            stats.FEW_SEEDS: "one seed gives no interval"}
    parts = [f"against {c.b}, the check cannot inform: {c.why_not}" if c.why_not else
             f"against {c.b}, {said.get(c.verdict, 'the interval is too wide to say')} "
             f"({check_text(c)})" for c in cs]
    return f"At {what}: " + "; ".join(parts) + "."


def bases_text(mid: pd.DataFrame, others: Sequence[str]) -> str:
    """How far each base of ``others`` (labels of ``models.other_bases``) lies from the first at
    the first base's mid-curve k, per setting and benchmark (``metrics.mid_curve``: means over
    problems and the first base's evaluations); or, without others, how to measure one."""
    if not others:
        return ("This build measures one base (`other_bases = []`); the `cpu-nsr` profile "
                "measures a second, pretrained from another seed, beside it.")
    means = mid.groupby(["setting", "benchmark", "model", "k"], sort=False)["pass@k"].mean()
    parts = []
    for (setting, bench, k), g in means.groupby(level=["setting", "benchmark", "k"], sort=False):
        first = g.xs(BASE, level="model").iloc[0]
        for label in others:
            other = g.xs(label, level="model").iloc[0]
            parts.append(f"{bench}, {setting}, Pass@{k}: {first:.1f} % against {other:.1f} % "
                         f"({label}; {other - first:+.1f} points)")
    return ("At the first base's mid-curve k the bases read " + "; ".join(parts) + ". The checks "
            "below compare the trained models with the first base, the one they start from.")


# --- the figures' captions ---------------------------------------------------------------------

def per_problem_caption(setting: str, described: str) -> str:
    """The caption of the per-problem scatter."""
    return (f"Each dot a problem under the {setting} setting: its share of correct samples "
            f"under the base (x) and the trained model (y, mean over seeds); grey: no change. "
            f"{described}")


def paths_caption(window: str, D: Any, seeds: int | None = None) -> str:
    """The caption of the paths' shares over training (``window``: ``window_text``'s), with the
    toy's main setting ``D`` and its ``seeds`` where its panel is drawn."""
    toy = (f" Toy: π0 = {D.pi0}, r = {D.rewards}, G = {D.G}, {seeds} seeds; "
           "a1 the direct path, a2 the stepwise one, a3 a wrong answer." if seeds else "")
    return f"Solid: right, dotted: wrong; {window}." + toy


def knob_paths_caption(generations: int, window: str) -> str:
    """The caption of the paths' shares with fewer rollouts per prompt."""
    return f"{generations} completions per step. {paths_caption(window, None)}"


def corrected_caption(window: str) -> str:
    """The caption of the corrected steps over training (``window``: ``window_text``'s)."""
    return f"Rollouts in {window}."
