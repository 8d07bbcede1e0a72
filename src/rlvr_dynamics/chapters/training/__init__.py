"""The training chapter (``notebooks/training.md``): GRPO, GRPO-N, GSPO and GSPO-N on TRL
(``rlvr_dynamics.rl``), their runs over seeds, the lambda family between GRPO and GRPO-N,
Figure 2's dynamics and the paper's four readings of it.

Figure 2's four readings (Section 4.2) are checks over seeds in the library
(``rl.readings``, importable from here as the page calls them). Figure 2 and the sweep over
lambda are drawn by ``figures``, the tables for people are in ``shown``, the sentences (the
settings, the verdict rows' "ours") written by ``sentences``.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import yaml
from pydantic import model_validator

from rlvr_dynamics import REPO, registry
from rlvr_dynamics.chapters import ChapterParams, require
from rlvr_dynamics.paper_tables import entropy_table
from rlvr_dynamics.rl.dynamics import HELDOUT_PREFIXES, summary
from rlvr_dynamics.rl.readings import (ACCURACY_MARGIN, ENTROPY, ENTROPY_MARGIN, HELD_OUT,
                                       ROLLOUT_WINDOW, VERDICT_CLAIMS, dynamics_of, end_values,
                                       reading_curve, readings, verdict_rows)
from rlvr_dynamics.rl.grid import Training, by_algorithm, by_lambda, obtain_runs


class Params(ChapterParams, Training):
    """The runs of the chapter (``rl.grid.Training``: the algorithms and seeds, the lambda
    family, the policy, every setting of a run and the base it starts from), each evaluating
    the held-out set along training (Figure 2's curves: ``eval_every`` at least 1)."""

    @model_validator(mode="after")
    def _held_out(self):
        require(self.eval_every >= 1, f"eval_every={self.eval_every} must be >= 1: this "
                                      "chapter reads the held-out curves of Figure 2")
        return self


PAPER = REPO / "configs" / "paper.yaml"
"""The ``paper`` profile: Appendix C.2's training settings are written there once (with the
ones it leaves unsaid, from verl and Zhu et al.'s scripts, and why)."""

APPENDIX_C2 = ("model", "task", "steps", "num_generations", "generation_batch", "update_batch",
               "micro_batch", "learning_rate", "weight_decay", "beta", "epsilon", "dual_clip",
               "entropy_coef", "temperature", "max_completion_length", "context", "loss_type",
               "eval_every", "eval_problems", "use_vllm", "bf16")
"""The settings shown beside the paper's (``shown.settings_table``)."""


def paper_settings() -> dict[str, Any]:
    """The paper's value of each of ``APPENDIX_C2``: the ``paper`` profile's training
    parameters, over the defaults it does not change."""
    profile = yaml.safe_load(PAPER.read_text())["notebooks"]["training"]
    return {k: profile.get(k, Params.model_fields[k].default) for k in APPENDIX_C2}


def paper_rate_travel(T: Params) -> dict[str, float] | None:
    """How far Adam would move a weight at the paper's learning rate over ``T``'s updates
    (about the rate per update) beside the base's mean absolute weight in its matrices; None
    where ``T`` runs at the paper's rate."""
    paper = paper_settings()["learning_rate"]
    if T.learning_rate == paper:
        return None
    updates = T.steps * (T.generation_batch // T.update_batch)
    model, _ = registry.load_model(T.base(), T.profile)
    matrices = [p.detach() for p in model.parameters() if p.ndim >= 2]
    scale = float(sum(p.abs().sum() for p in matrices) / sum(p.numel() for p in matrices))
    return {"paper": paper, "updates": updates, "travel": paper * updates, "weight": scale}


# --- the held-out curves in numbers ------------------------------------------------------------

SHARE, PATH_ENTROPY = HELDOUT_PREFIXES
"""The logged share of held-out greedy completions on a path (``SHARE + path``) and their
token entropy (``PATH_ENTROPY + path``), as ``rl.dynamics.heldout_entry`` writes them."""


def seed_summaries(dynamics: dict[str, list[list[dict[str, Any]]]]) -> dict[str, pd.DataFrame]:
    """label -> one row per seed of ``rl.dynamics.summary`` (the held-out curves at the
    base, at the lowest entropy and at the end)."""
    return {label: pd.DataFrame([summary(r) for r in runs]) for label, runs in dynamics.items()}


def held_out_table(dynamics: dict[str, list[list[dict[str, Any]]]]) -> pd.DataFrame:
    """Per algorithm, ``seed_summaries`` averaged over seeds, with the standard deviation over
    seeds of the final accuracy and entropy (``sd`` columns; NaN with one seed)."""
    rows = seed_summaries(dynamics)
    table = pd.DataFrame({label: df.mean() for label, df in rows.items()}).T
    for key in ("accuracy_end", "entropy_end"):
        table[f"sd {key}"] = [df[key].std(ddof=1) for df in rows.values()]
    return table


def lambda_ends(dynamics: dict[str, list[list[dict[str, Any]]]],
                sweep: dict[float, list[list[dict[str, Any]]]]) -> dict[float, list[dict]]:
    """lambda -> the last record of each seed's run: GRPO-N's at 0, the sweep's, GRPO's at 1
    (a lambda without runs left out)."""
    final = {0.0: [r[-1] for r in dynamics.get("GRPO-N", [])],
             **{lam: [r[-1] for r in runs] for lam, runs in sweep.items()},
             1.0: [r[-1] for r in dynamics.get("GRPO", [])]}
    return {lam: v for lam, v in final.items() if v}


def entropy_ratios(dynamics: dict[str, list[list[dict[str, Any]]]], profile: str
                   ) -> pd.DataFrame:
    """Per algorithm, the token entropy at the end over the base's: the paper's (Table 4, AMC
    2023 and AIME 2025; NaN for the algorithms it did not train, NSR and W-REINFORCE) beside
    ours (held-out, mean and sd over seeds)."""
    token = entropy_table().loc["Token-Level Entropy"]
    base = token.loc["Qwen2.5-Math-7B"]
    rows = seed_summaries(dynamics)

    def paper(label: str, bench: str) -> float:
        key = f"Qwen2.5-Math-7B {label}"
        return token.loc[key, bench] / base[bench] if key in token.index else np.nan

    ratios = pd.DataFrame({label: {
        "paper, AMC 2023": paper(label, "AMC 2023"),
        "paper, AIME 2025": paper(label, "AIME 2025"),
        f"ours ({profile}), mean": (rows[label]["entropy_end"] / rows[label]["entropy_base"]).mean(),
        f"ours ({profile}), sd": (rows[label]["entropy_end"] / rows[label]["entropy_base"]).std(ddof=1),
    } for label in rows}).T
    ratios.index.name = "end / base token entropy"
    return ratios


def by_path_table(dynamics: dict[str, list[list[dict[str, Any]]]]) -> pd.DataFrame:
    """Per algorithm, at the base (the first held-out record) and at the end (the last), the
    held-out greedy completions split by path (``rl.dynamics.heldout_entry``): the share
    of each path and the token entropy of the completions on it, mean over the seeds where any
    took it (the ``seeds`` columns count them); the whole held-out entropy beside. A path no
    greedy completion took is left out; empty where the task has no paths."""
    rows = []
    for label, runs in dynamics.items():
        for when, pick in (("base", 0), ("end", -1)):
            held = [[r for r in run if "heldout_entropy" in r][pick] for run in runs]
            paths = [k.removeprefix(SHARE) for k in held[0] if k.startswith(SHARE)]
            if not paths:
                continue
            row = {"algorithm": label, "at": when,
                   "entropy, all": np.mean([r["heldout_entropy"] for r in held])}
            for path in paths:
                h = [r[PATH_ENTROPY + path] for r in held if PATH_ENTROPY + path in r]
                row[f"share, {path}"] = np.mean([r[SHARE + path] for r in held])
                row[f"entropy, {path}"] = np.mean(h) if h else np.nan
                row[f"seeds, {path}"] = len(h)
            rows.append(row)
    if not rows:
        return pd.DataFrame()
    table = pd.DataFrame(rows).set_index(["algorithm", "at"])
    unused = [c.removeprefix("share, ") for c in table if c.startswith("share, ")
              and not table[c].any()]
    return table.drop(columns=[f"{q}, {p}" for p in unused for q in ("share", "entropy", "seeds")])
