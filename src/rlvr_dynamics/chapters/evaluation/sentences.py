"""The evaluation chapter's words: the estimator's checks in sentences, the settings behind each
table and figure, and the captions of the tables, written from the parameters and results."""
from __future__ import annotations

import math

from rlvr_dynamics import registry
from rlvr_dynamics.chapters.evaluation import (EstimatorChecks, Params, exact_gap,
                                               looks_unbiased, matches_exact, se_bound,
                                               table_params, worst_deviation)
from rlvr_dynamics.pretrain import PretrainConfig

NO_GRADER_CHECK = ("`benchmarks_dir` is not set: the check did not run in this build (see the "
                   "note below).")

OURS_PASSK = "Ours: Pass@k (%); per benchmark and k, bold = best, underlined = second best"
PAPER_PASSK = "Paper, Table {table}: Pass@k (%)"
PAPER_ENTROPY = "Paper, Table 4: entropies in nats (n = 256)"


def empty_table(table: str) -> str:
    """The line shown for a table without models."""
    return f"`{table}_models` is empty: no Table {table[-1]} in this build."


def exact_line(check: EstimatorChecks) -> str:
    """The first check's largest gap to exact arithmetic."""
    return (f"largest |ours - exact| over {len(check.ours)} random (n, c, k): "
            f"{exact_gap(check):.1e}")


def deviation_caption(check: EstimatorChecks) -> str:
    """The caption of the second check's table."""
    return (f"mean estimate minus 1-(1-p)^k ({check.draws:,} draws of c, n = {check.n})")


def draws_text(check: EstimatorChecks) -> str:
    """The second check's draws and the bound 0.5/sqrt(draws) on each mean's standard error."""
    return (f"We draw $c$ {check.draws:,} times for $n = {check.n}$; the standard error of each "
            f"mean is at most $0.5/\\sqrt{{{check.draws}}} \\approx {se_bound(check.draws):.4f}$.")


def models_text(P: Params, table: str) -> str:
    """``table``'s models by label, a ``sums-base`` one with the step it stops at in its
    pretraining run and that run's steps and batch."""
    specs = [registry.spec_text(m) for m in table_params(P, table)["models"]]
    if not specs:
        return empty_table(table)
    names, parts = registry.labels(specs), []
    for spec in specs:
        name, fields = registry.parse_spec(spec)
        if name != registry.BASE_MODEL:
            parts.append(f"`{names[spec]}`")
            continue
        steps = fields.get("steps", PretrainConfig.steps)
        parts.append(f"`{names[spec]}`, after {fields.get('step', steps):,} of its run's "
                     f"{steps:,} steps of {fields.get('batch', PretrainConfig.batch)} sequences")
    return f"Table {table[-1]}'s models in this build: " + "; ".join(parts) + "."


def estimator_text(check: EstimatorChecks) -> str:
    """The estimator's two checks in words: its largest gap to exact arithmetic, and its mean's
    largest gap to 1 - (1 - p)^k against the bound 0.5/sqrt(draws) on the standard error."""
    gap, worst, se = exact_gap(check), worst_deviation(check), se_bound(check.draws)
    cases = len(check.ours)
    first = (f"matches exact rational arithmetic to rounding error (largest gap {gap:.1e} over "
             f"{cases} random (n, c, k))" if matches_exact(check) else
             f"misses exact rational arithmetic by up to {gap:.1e} over {cases} random "
             "(n, c, k)")
    second = (f"its mean over {check.draws:,} draws of c lies within {worst:.4f} of "
              f"1 − (1 − p)^k, {worst / se:.1f} times the bound {se:.4f} on its standard error"
              + (", as an unbiased estimator should" if looks_unbiased(check) else
                 ", more than an unbiased estimator allows"))
    return f"In this build, the Pass@k estimator {first}, and {second}."


def table_setting(P: Params, table: str) -> str:
    """How ``table``'s models were sampled and what the figure's band is."""
    t = table_params(P, table)
    return (f"{P.profile} profile, n = {t['n']} samples per problem, T = {P.temperature}, "
            f"top-p = {P.top_p}, seed {P.seed}, "
            f"{'all' if t['problems'] is None else t['problems']} problems per benchmark; "
            f"shaded: {P.bootstrap}-resample bootstrap 95% interval over problems")


def passk_caption(P: Params, table: str) -> str:
    """The caption of ``table``'s Pass@k figure (Table 1 or 2 of the paper)."""
    return f"Table {table[-1]}'s models at CPU scale. {table_setting(P, table)}"


def entropy_caption(P: Params) -> str:
    """The caption of our entropy table (Table 4's layout)."""
    return (f"Ours: entropies in nats ({P.profile} profile, T = {P.temperature}, "
            f"top-p = {P.top_p}; n = {P.table1_n} for Table 1's models, {P.table2_n} for "
            "Table 2's)")


def log_n(P: Params) -> str:
    """log n, the bound on answer entropy, for the paper's n and each of ours."""
    ns = dict.fromkeys([256, P.table1_n] + ([P.table2_n] if P.table2_models else []))
    return ", ".join(f"log n = {math.log(n):.2f} for n = {n}" for n in ns)
