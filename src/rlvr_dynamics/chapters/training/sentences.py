"""The training chapter's words: the sentence that states a run's settings (every chapter that
trains quotes it), the settings beside the paper's, the titles of the chapter's figures, the
clip fraction, and the verdict rows' "ours" and checks (``verdict_rows``, for
``verdicts.record``), written from the parameters, the runs and the readings."""
from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

from rlvr_dynamics.chapters.training import (ENTROPY, HELD_OUT, ROLLOUT_WINDOW, VERDICT_CLAIMS,
                                             end_values, paper_settings, readings)
from rlvr_dynamics.rl.dynamics import curve


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


MATH_TRAIN = 7500
"""Problems in MATH's training set (Section 4.1), whose epochs the ``paper`` profile's steps
count."""


def paper_text(paper: dict[str, Any]) -> str:
    """The ``paper`` profile's settings that Appendix C.2 leaves unsaid, and its batches in
    TRL's terms (``paper``: ``paper_settings``; an epoch: the full batches of prompts that
    MATH's training set fills, as verl drops the last one)."""
    g, gen, update = paper["num_generations"], paper["generation_batch"], paper["update_batch"]
    prompts, steps = gen // g, paper["steps"]
    per_epoch = MATH_TRAIN // prompts
    return (f"The `paper` profile (`configs/paper.yaml`) sets weight decay "
            f"{paper['weight_decay']:g}, a dual-clip bound of {paper['dual_clip']:g} on the "
            f"ratio of negative samples, and {steps} steps evaluated every "
            f"{paper['eval_every']}: {steps / per_epoch:g} epochs of MATH's {MATH_TRAIN:,} "
            f"training problems, {per_epoch} batches of {prompts:,} prompts each. Sizes count "
            f"completions, as TRL does: {prompts:,} prompts × {g} rollouts is a generation "
            f"batch of {gen:,}, and mini-batches of {update // g:,} prompts are updates of "
            f"{update:,} completions, hence {gen // update} optimizer updates per generation "
            "batch, so that from the second update on the importance ratios and the clipping "
            "are live.")


def _in_words(s: Any) -> dict[str, str]:
    """The settings ``scale_text`` compares, each in words (``s``: a run's settings or the
    paper's)."""
    dual = "no dual clip" if s.dual_clip is None else f"dual clip {s.dual_clip:g}"
    return {"rollouts": f"{s.num_generations} rollouts per prompt",
            "updates": f"{s.generation_batch // s.update_batch} updates per generation batch",
            "clip": f"clip ratio {s.epsilon:g} ({dual})",
            "kl": f"KL coefficient {s.beta:g}",
            "entropy": f"entropy bonus {s.entropy_coef:g}",
            "temperature": f"rollout temperature {s.temperature:g}",
            "loss": f"the `{s.loss_type}` loss for GRPO and GRPO-N",
            "model": f"`{s.model}` as the base",
            "prompts": f"{s.generation_batch // s.num_generations:,} prompts per step",
            "steps": f"{s.steps} steps",
            "completions": f"completions of at most {s.max_completion_length:,} tokens",
            "held-out": f"{s.eval_problems} held-out problems every {s.eval_every} steps",
            "learning rate": f"a learning rate of {s.learning_rate:g}"}


def scale_text(T: Any) -> str:
    """Which of the paper's settings (``paper_settings``) the runs of ``T``'s profile keep and
    which they change."""
    ours, paper = _in_words(T), _in_words(SimpleNamespace(**paper_settings()))
    kept = [v for k, v in ours.items() if v == paper[k]]
    changed = [v for k, v in ours.items() if v != paper[k]]
    said = ([f"keep the paper's {', '.join(kept)}"] if kept else []) + \
        ([f"use {', '.join(changed)} in place of the paper's"] if changed else [])
    return f"Under the `{T.profile}` profile the runs {'; they '.join(said)}."


def learning_rate_text(T: Any, travel: dict[str, float] | None) -> str:
    """Why the runs' learning rate is not the paper's (``travel``: ``paper_rate_travel``;
    nothing where it is the paper's)."""
    if travel is None:
        return ""
    return (f"At the paper's learning rate of {travel['paper']:g}, Adam moves each weight by "
            f"about the learning rate per update, some {travel['travel']:.0e} over our "
            f"{travel['updates']:g} updates, against a mean absolute weight of "
            f"{travel['weight']:.0e} in the base's weight matrices: nothing would happen. The "
            f"runs use {T.learning_rate:g}.")


def clip_text(dynamics: dict[str, list[list[dict[str, Any]]]]) -> str:
    """How often each algorithm's clip held its ratio (TRL's ``clip_ratio/region_mean``, the
    clip-fraction panel), mean over the logged steps and the seeds."""
    means = {label: curve(runs, "clip_fraction")[1].mean() for label, runs in dynamics.items()
             if all(any("clip_fraction" in r for r in run) for run in runs)}
    return ("Clip fraction (the share of tokens whose ratio the clip held), mean over the steps "
            "and seeds: " + ", ".join(f"{label} {v:.2%}" for label, v in means.items()) + ".")


def figure_setting(T: Any) -> str:
    """The chapter's runs as its figures state them: the profile, ``run_settings`` and the
    held-out set."""
    return f"{T.profile} profile: {run_settings(T)}, {T.eval_problems} held-out problems"


def dynamics_title(T: Any) -> str:
    """The title of Figure 2 at our scale."""
    return (f"Training dynamics (Figure 2's layout, top row). {figure_setting(T)}; lines: mean "
            "over seeds, bands: min to max over seeds")


def lambda_title(T: Any) -> str:
    """The title of the end of training against lambda."""
    return f"End of training against λ. {figure_setting(T)}; dots: seeds, line: their mean"


QUANTITIES = {"greedy_accuracy": "held-out greedy accuracy",
              ENTROPY: f"token entropy of the rollouts (mean of the last {ROLLOUT_WINDOW} steps or "
                       "fewer)",
              HELD_OUT: "held-out token entropy"}
"""The quantities of ``VERDICT_CLAIMS`` in words."""


def ours(dynamics: dict[str, list[list[dict[str, Any]]]], key: str) -> str:
    """``key`` at the end of training per algorithm: mean ± sd over seeds (the mean alone with
    one seed)."""
    return ", ".join(f"{label} {v.mean():.3f}" + (f" ± {v.std(ddof=1):.3f}" if len(v) > 1
                                                  else "")
                     for label, v in end_values(dynamics, key).items())


def interval(low: float, high: float) -> str:
    """A check's 95 % interval, " [low, high]", or nothing where it has none (one seed)."""
    return "" if math.isnan(low) or math.isnan(high) else f" [{low:+.3f}, {high:+.3f}]"


def verdict_rows(dynamics: dict[str, list[list[dict[str, Any]]]]) -> list[dict[str, Any]]:
    """The readings as rows for ``verdicts.record`` (``VERDICT_CLAIMS``: reading 1 is the claim
    ``competitive``, 2 ``entropy_collapse``, 3 and 4 ``entropy_recovery``); ``ours``: the
    end-of-training values, mean ± sd over seeds; ``checks``: each reading's effect, its
    interval (``interval``) and the paper's side, with its verdict; ``also``: the entropy
    readings on the held-out entropy (``HELD_OUT``), not deciding. A claim none of whose
    readings could be taken is left out."""
    tables = {key: readings(dynamics, key).reset_index() for key in (ENTROPY, HELD_OUT)}

    def said(table, prefixes: tuple[str, ...], where: str = "") -> list[tuple[str, str]]:
        part = table[table["reading"].str.startswith(prefixes)]
        return [(f"{q}: {e:+.3f}{interval(lo, hi)} ({p}?){where}", v)
                for q, e, lo, hi, p, v in
                part[["quantity", "estimate", "low", "high", "paper", "verdict"]].itertuples(
                    index=False)]

    rows = []
    for claim, key, prefixes in VERDICT_CLAIMS:
        checks = said(tables[ENTROPY], prefixes)
        if checks:
            also = (said(tables[HELD_OUT], prefixes, f" [{QUANTITIES[HELD_OUT]}]")
                    if key == ENTROPY else [])
            rows.append({"claim": claim, "ours": f"{QUANTITIES[key]} at the end: "
                                                 f"{ours(dynamics, key)}", "checks": checks,
                         "also": also})
    return rows
