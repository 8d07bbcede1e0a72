"""The training chapter's words: the settings beside the paper's, the titles of the chapter's
figures and the clip fraction, written from the parameters and the runs; the verdict rows of
Figure 2's readings are the shared ``chapters.sentences.reading_rows``, and the sentence that
states a run's settings is ``chapters.sentences.run_settings``."""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from rlvr_dynamics.chapters.sentences import reading_rows, run_settings  # noqa: F401 (the page's)
from rlvr_dynamics.chapters.training import paper_settings
from rlvr_dynamics.rl.dynamics import curve


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


def dynamics_caption(T: Any) -> str:
    """The caption of Figure 2 at our scale."""
    return (f"Figure 2's layout, its top row and more. {figure_setting(T)}; lines: mean over "
            "seeds, bands: min to max over seeds.")


def lambda_caption(T: Any) -> str:
    """The caption of the end of training against lambda; without a sweep (``T.lambdas``
    empty, as in the default build) it says so and where the sweep runs."""
    sweep = (f"λ = {', '.join(f'{lam:g}' for lam in T.lambdas)} between them" if T.lambdas else
             "no λ between them in this build: the `cpu-nsr` profile runs the sweep, and the "
             "published book takes this chapter from it")
    return (f"{figure_setting(T)}; dots: seeds, line: their mean (λ = 0: GRPO-N, 1: GRPO; "
            f"{sweep}).")


