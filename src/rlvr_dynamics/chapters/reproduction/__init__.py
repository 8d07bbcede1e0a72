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

This module holds the chapter's parameters and the knob's runs; ``paths`` follows the two stages
inside the LM. The comparison itself is the library's (``rlvr_dynamics.comparison``: the models
and their problems, Tables 1 and 4 over seeds, the claims checked over seeds, the case study),
importable from here as the page calls it. Its figures are in ``figures``, its tables for people
in ``shown``, its words in ``sentences``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from pydantic import model_validator

from rlvr_dynamics import registry
from rlvr_dynamics import measure as ev
from rlvr_dynamics.chapters import ChapterParams, Int, ListOf, Real, Spec, Text, require
from rlvr_dynamics.chapters.reproduction.paths import (takeover_step, takeover_steps, toy_main,
                                                       windowed)
from rlvr_dynamics.comparison.case import (STEPWISE_SHARE, bang_long, bang_means, bang_share,
                                           case_problem, samples_of, side_by_side)
from rlvr_dynamics.comparison.claims import (ANSWER_ENTROPY_MARGIN, CASE_MARGIN, PASS1_MARGIN,
                                             PASSK_MARGIN, Check, Claimed, case_check, decided,
                                             headline_setting, negative_checks,
                                             rare_path_support, setting_checks, supports)
from rlvr_dynamics.comparison.models import (Model, Setting, beyond_direct, chosen, comparison,
                                             evaluate_models, is_base, other_base_label,
                                             other_bases, run_spec, train_beyond_direct)
from rlvr_dynamics.comparison.metrics import (agreement, base_mid_k, base_stepwise, ceiling,
                                              entropy_by_path, entropy_long, entropy_problems,
                                              mid_curve, over_seeds, passk_long, passk_problems,
                                              sampled_check, seed_means, table1, table4)
from rlvr_dynamics.rl.algorithms import ALGORITHMS, BASE
from rlvr_dynamics.rl.grid import Training, by_algorithm, obtain_runs
from rlvr_dynamics.rl.readings import dynamics_of
from rlvr_dynamics.rl.runs import obtain_all
from rlvr_dynamics.toy import ToySettings


class Params(ChapterParams):
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
    (``knob_algorithms``) with other group sizes (``knob_generations``); ``other_bases``: the
    pretraining seeds of more bases of the same recipe, measured beside the first (nothing
    is trained from them). ``training``: the training chapter's runs that it measures;
    ``toy``: the toy chapter's setting, for the toy's panel."""

    training: Training = Training()
    toy: ToySettings = ToySettings()

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
    other_bases: ListOf(Int(0), 0) = []

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
