"""The training chapter's words: the sentence that states a run's settings (every chapter that
trains quotes it), the titles of the chapter's figures, and the verdict rows' "ours" and checks
(``verdict_rows``, for ``verdicts.record``), written from the parameters and the readings."""
from __future__ import annotations

import math
from typing import Any

from rlvr_dynamics.chapters.training import (ENTROPY, HELD_OUT, ROLLOUT_WINDOW, VERDICT_CLAIMS,
                                             end_values, readings)


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
