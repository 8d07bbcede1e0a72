"""Words that several chapters write: the settings every trained run shares, Table 1's caption,
and the rows that ``verdicts.record`` keeps for the claims of Figure 2 (``rl.readings``) and of
Section 4 (``comparison.claims``), each check in words.

Presentation only (``imports.is_presentation``), like ``style``: no stored result depends on it.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
import pandas as pd

from rlvr_dynamics import stats
from rlvr_dynamics.chapters.style import rounded
from rlvr_dynamics.comparison.claims import Check, Decided
from rlvr_dynamics.comparison.models import Setting
from rlvr_dynamics.rl.readings import (ENTROPY, HELD_OUT, ROLLOUT_WINDOW, VERDICT_CLAIMS,
                                       end_values)


def run_settings(T: Any) -> str:
    """The settings every trained run shares, as a clause of a caption: model and task, prompts
    x rollouts per step, updates per step, learning rate, KL and entropy coefficients, steps
    and seeds (``T``: the training chapter's ``Params``, or any object with its fields)."""
    parts = [f"{T.model}" + (f" (LoRA rank {T.lora_rank})" if T.lora_rank else "")
             + (f" on {T.task}" if getattr(T, "task", None) else ""),
             f"{T.generation_batch // T.num_generations} prompts × {T.num_generations} rollouts "
             f"per step, {T.generation_batch // T.update_batch} updates per step",
             f"lr {T.learning_rate:g}, KL {T.beta:g}, entropy bonus {T.entropy_coef:g}",
             f"{T.steps} steps, seeds {list(T.seeds)}"]
    return ", ".join(parts)


def table1_caption(name: str, s: Setting, described: str) -> str:
    return (f"Pass@k (%), {name} setting (T = {s.temperature:g}, top-p {s.top_p:g}): mean over "
            f"seeds. {described}")


# --- Figure 2's readings as verdict rows ---------------------------------------------------

QUANTITIES = {"greedy_accuracy": "held-out greedy accuracy",
              ENTROPY: f"token entropy of the rollouts (mean of the last {ROLLOUT_WINDOW} steps or "
                       "fewer)",
              HELD_OUT: "held-out token entropy"}
"""The quantities of ``VERDICT_CLAIMS`` in words."""


def passk_caption(described: str) -> str:
    """The caption of ``chapters.figures.plot_passk`` (the base's and the trained models'
    Pass@k over seeds), after what the runs were (``described``)."""
    return f"{described}; lines: mean over seeds, bands: min to max over seeds."


def ends_text(dynamics: dict[str, list[list[dict[str, Any]]]], key: str) -> str:
    """``key`` at the end of training per algorithm: mean ± sd over seeds (the mean alone with
    one seed)."""
    return ", ".join(f"{label} {v.mean():.3f}" + (f" ± {v.std(ddof=1):.3f}" if len(v) > 1
                                                  else "")
                     for label, v in end_values(dynamics, key).items())


def interval(low: float, high: float) -> str:
    """A check's 95 % interval, " [low, high]", or nothing where it has none (one seed)."""
    return "" if math.isnan(low) or math.isnan(high) else f" [{low:+.3f}, {high:+.3f}]"


def reading_rows(rows: pd.DataFrame, dynamics: dict[str, list[list[dict[str, Any]]]]
                 ) -> list[dict[str, Any]]:
    """``rl.readings.verdict_rows`` as ``verdicts.record`` keeps them: per claim, each check in
    words (the quantity, its effect with its interval (``interval``) and the paper's side),
    those that vote as ``checks`` and the rest (the held-out entropy) as ``also``; ``ours``: the
    end-of-training values (``ends_text``), mean ± sd over seeds."""
    key = {claim: k for claim, k, _ in VERDICT_CLAIMS}
    out = []
    for claim, part in rows.groupby("claim", sort=False):
        said = [(f"{r.quantity}: {r.estimate:+.3f}{interval(r.low, r.high)} ({r.paper}?)"
                 + ("" if r.votes else f" [{QUANTITIES[r.read]}]"), r.outcome, r.votes)
                for r in part.itertuples()]
        out.append({"claim": claim, "ours": f"{QUANTITIES[key[claim]]} at the end: "
                                            f"{ends_text(dynamics, key[claim])}",
                    "checks": [(t, v) for t, v, votes in said if votes],
                    "also": [(t, v) for t, v, votes in said if not votes]})
    return out


# --- Section 4's claims as verdict rows ----------------------------------------------------

DIGITS = {"answer_entropy": (3, 3)}
"""Decimals of a claim's values and of its differences, where not (1, 2) (points of Pass@k)."""


def ours(values: dict[str, np.ndarray], digits: int = 1) -> str:
    """Each model's value: mean ± sd over seeds (the mean alone for one seed)."""
    return ", ".join(f"{m} {x.mean():.{digits}f}" + (f" ± {x.std(ddof=1):.1f}"
                                                      if len(x) > 1 else "")
                     for m, x in values.items())


def check_text(c: Check, digits: int = 2) -> str:
    """A check in words: the difference, its interval and the side of the margin it must be
    on, and why it cannot inform where it cannot."""
    e = c.effect
    side = f"> -{e.margin:g}" if e.kind == stats.NON_INFERIORITY else f"> +{e.margin:g}"
    text = f"{c.a} - {c.b} = {e.text(f'{{:+.{digits}f}}')} ({side}?)"
    return f"{text}, cannot inform: {c.why_not}" if c.why_not else text


def comparison_rows(decisions: dict[str, Decided]) -> list[dict]:
    """``comparison.claims.decided`` as ``verdicts.record`` keeps it: per claim our values in
    words (mean ± sd over seeds; the base's evaluations count as its seeds) and each check in
    words (``check_text``) with where it was read, those that vote as ``checks`` and the rest
    as ``also``."""
    rows = []
    for claim, d in decisions.items():
        v, digits = DIGITS.get(claim, (1, 2))

        def said(checks: Sequence[tuple[Check, str]]) -> list[tuple[str, str]]:
            return [(check_text(x, digits) + (f" [{where}]" if where else ""), x.verdict)
                    for x, where in checks]

        c = d.claimed
        ours_ = (f"{c.what}: {ours(c.values, v)} ({d.setting} setting)" if d.setting
                 else f"{c.what}: {ours(c.values, v)} %")
        row = {"claim": claim, "ours": ours_, "checks": said(d.votes)}
        if d.setting:
            row["also"] = said(d.beside)
        rows.append(row)
    return rows


# --- the paper's scenario in the LM (the scenario, ladder and regime map chapters) ---------------

def regime_settings(P: Any, hard: dict[str, np.ndarray]) -> str:
    """The settings every figure of the scenario's chapters states: the training chapter's
    (``run_settings``, with this chapter's steps and seeds; the regimes that set their own
    group size named with it, at the same rollouts per step), then the probes (``hard``: the
    rare-path-only problems per split)."""
    T = P.training
    stop = ("" if P.stop_after_crossover is None else
            f", each run ending {P.stop_after_crossover} steps after its crossover")
    own = {name: r.G for name, r in P.regimes.items() if r.G is not None}
    if own:
        stop += (" (G per regime where it differs: "
                 + ", ".join(f"{G} in '{name}'" for name, G in own.items())
                 + f", at the same {T.generation_batch} rollouts per step)")
    early = (f" (every {P.probe_early_every} up to step {P.probe_early_until})"
             if P.probe_early_every else "")
    return (f"{P.profile} profile: "
            + run_settings(T.model_copy(update={"steps": P.steps, "seeds": P.seeds}))
            + f"{stop}; probes every {P.probe_every} steps{early} on {len(hard['test'])} "
              f"problems of sums-test (the first {P.probe_problems} and {P.probe_hard} more "
              f"beyond the direct path: {hard['test'].sum()} rare-path-only in all); lines: mean "
              f"over seeds, bands: min to max")


def time_text(t: float) -> str:
    """One time to crossover in words (``times_text``)."""
    return "never" if np.isinf(t) else "outside the toy" if np.isnan(t) else f"{t:g}"


# --- the statistics that fit the data (``dips``, ``survival``; issue 51) -------------------------

def percent(x: float) -> str:
    """A relative change as a signed whole percentage ("-" where there is none)."""
    return "-" if x is None or np.isnan(x) else rounded("{:+.0f} %", 100 * x)


def dip_text(estimate: float, interval: Sequence[float] | None = None) -> str:
    """A dip on the log scale (``dips.Dip``'s estimate and interval) as percentages:
    ``-55 % [-80 %, -3 %]`` (its interval stays above -100 %), the estimate alone without one."""
    if interval is None or any(v is None or np.isnan(v) for v in interval):
        return percent(estimate)
    return f"{percent(estimate)} [{percent(interval[0])}, {percent(interval[1])}]"


def signs_text(fell: int, rose: int, seeds: int) -> str:
    """How many seeds fell and rose: ``4 of 5 seeds fell, 1 rose``."""
    return f"{fell} of {seeds} seed{'s' * (seeds != 1)} fell, {rose} rose"


def seeds_text(values: Sequence[float]) -> str:
    """Each seed's relative change: ``-61, -40, +5 %``."""
    return ", ".join(rounded("{:+.0f}", 100 * v) for v in values) + " %" if len(values) else "-"


def censored_fall_text(step: float) -> str:
    """A fall still at its lowest at the last probe (``dips.Dip.censored``), in words."""
    return f"censored: still at its lowest at the last probe (step {step:g})"


def within_text(horizon: float) -> str:
    """A time that did not come within the runs: "not within N steps (censored)", never
    "never"."""
    return f"not within {horizon:g} steps (censored)"


def toy_time_text(t: float, steps: float | None) -> str:
    """The toy's registered crossover: the step, or "not within N toy steps (censored)" where
    its median run did not cross within its ``steps`` (unknown: ``time_text``'s "never")."""
    if np.isinf(t) and steps:
        return f"not within {steps:g} toy steps (censored)"
    return time_text(t)


def run_time_text(t: float, last: float) -> str:
    """One run's time to crossover, short: the step, or "> N" (censored at its last probe N)."""
    return f"> {last:g}" if np.isinf(t) else time_text(t)


def median_text(estimate: float, interval: Sequence[float] | None, horizon: float | None
                ) -> str:
    """A Kaplan-Meier median crossover with Brookmeyer and Crowley's interval
    (``survival.Median``): ``35 [30, 40]``, ``35 [30, open above]``; a censored median "not
    within N steps (censored)", with where its interval begins where it does."""
    if np.isnan(estimate):
        return time_text(estimate)
    if interval is None or any(v is None or np.isnan(v) for v in interval):
        return within_text(horizon) if np.isinf(estimate) and horizon else time_text(estimate)
    low, high = interval
    if np.isinf(estimate):
        return within_text(horizon) + (f"; interval from {low:g}, open above"
                                       if np.isfinite(low) else "")
    return f"{estimate:g} [{low:g}, {'open above' if np.isinf(high) else f'{high:g}'}]"


def times_text(t: Sequence[float]) -> str:
    """Times to crossover in words: "never" within the run, "outside the toy" where the toy
    has no prediction (NaN: a regime outside its scenario)."""
    return ", ".join(time_text(x) for x in t)


def registration_text(checks: dict[str, dict[str, bool]]) -> str:
    """``prediction.checks`` in words: for every regime, whether its prediction came before
    its runs and its runs from the base it was made for; the regimes where not, named."""
    lines = []
    for what in ("registered before every run", "every run starts from the registered base"):
        failed = [r for r, c in checks.items() if not c[what]]
        said = {"registered before every run": "was registered before every one of its runs "
                                               "began",
                "every run starts from the registered base": "was made for the base its runs "
                                                             "start from (their first probe "
                                                             "measures it to 1e-4)"}[what]
        lines.append(f"Every regime's prediction {said}." if not failed else
                     f"**Not** every regime's prediction {said}: not for "
                     + ", ".join(failed) + "; its verdicts below do not read a registered "
                     "prediction.")
    return " ".join(lines)


def regimes_caption(regimes: dict[str, Any], setting: str) -> str:
    """The caption of ``figures.plot_regimes``: each regime's knobs and the runs' settings."""
    def knobs(regime: Any) -> str:
        set_ = regime.model_dump(exclude_none=True)
        return ", ".join(f"{key} {v}" for key, v in set_.items()) or "as pretrained, as drawn"

    rows = "; ".join(f"{name}: {knobs(r)}" for name, r in regimes.items())
    return (f"A row per regime ({rows}). Paths: solid right, dotted wrong, grey the guess; "
            f"Pass@k: solid the full distribution, dashed the paper's setting; mean over seeds, "
            f"band min to max. {setting}")

