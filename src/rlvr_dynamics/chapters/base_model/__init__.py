"""The chapter on the base model (``notebooks/base_model.md``): the sums task, its author, the
tiny base model pretrained on the author's corpus (``rlvr_dynamics.pretrain``), whether it
converged to its author, and the base sampled by path.

The chapter's parameters (``Params``), and its computations and tables of numbers in the order
the notebook shows them: the author's exact probabilities (``stepwise_success``,
``direct_success_by_sum``), pretraining (``load_base``), the base against its author
(``author_matches``, ``match_table``), the base sampled (``sample_base``, ``summary_table``) and
where the paper's evaluation setting cuts the rare path (``nucleus``). Its figures are in
``figures``, its tables for people (the author's examples, the splits, the closing claims) in
``shown``, its sentences in ``sentences``."""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rlvr_dynamics.chapters import ChapterParams, Int
from rlvr_dynamics.entropy import answer_entropy
from rlvr_dynamics.measure import EvalSettings, LoadedModel, evaluate, token_entropy_of
from rlvr_dynamics.passk import from_probability, pass_at_k
from rlvr_dynamics.pretrain import (PretrainConfig, Pretraining, author_match, base_dir, base_model,
                                    first_char_probabilities, loss_floor, pretrain_log)
from rlvr_dynamics.sampling import TransformersBackend
from rlvr_dynamics.store import results_dir
from rlvr_dynamics.tasks.sums import (Author, SumTask, corpus, direct_success, path_counts,
                                      success_probability)


class Params(ChapterParams, Pretraining):
    """The base model (``pretrain.Pretraining``: its pretraining and the author of its
    corpus) and how it is sampled (``samples`` per problem on ``problems`` problems per split,
    at most ``max_tokens`` tokens)."""

    problems: Int(1, 200) = 100
    samples: Int(1) = 256
    max_tokens: Int(8) = 80


def sample_paths(model, tokenizer, task: SumTask, problems, author: Author, settings, out: Path,
                 batch_size: int = 256):
    """Sample ``settings.n`` completions per problem with the evaluation stack
    (``evaluation.evaluate``: records on disk, resumable) and tally them by path.

    Returns ``(records, table)``: the per-sample records, and one row per problem with its
    operand count ``m``, carry units, whether ``author``'s direct path can reach the answer at
    all (``direct_possible``: no column beyond the carry cap), ``n`` and ``c`` (samples,
    correct ones), the counts of ``sums.path_counts``, the answer entropy and the number of
    distinct answers (NA counting as one).
    """
    backend = TransformersBackend(model, tokenizer, add_bos=True, batch_size=batch_size,
                                  progress=False)
    recs = evaluate(LoadedModel("sums-base", model, tokenizer, True, backend), task, problems,
                    settings, out)
    rows = []
    for p, (_, g) in zip(problems, recs.groupby("problem", sort=False)):
        answers = [a if isinstance(a, str) else None for a in g["answer"]]
        rows.append({"id": p.id, "m": len(p.meta["terms"]), "units": sum(p.meta["carries"]),
                     "direct_possible": direct_success(p.meta["terms"], author) > 0,
                     "n": len(g), "c": int(g["correct"].sum()),
                     **path_counts(p.answer, list(g["text"]), p.meta["terms"]),
                     "answer_entropy": answer_entropy(answers), "distinct": len(set(answers))})
    return recs, pd.DataFrame(rows)


# --- the task and its author ----------------------------------------------------------------

def problem_splits(task: SumTask, problems: int) -> dict[str, list]:
    """The first ``problems`` problems of the test and the out-of-distribution split."""
    return {s: task.problems(s)[:problems] for s in ("test", "ood")}


def corpus_lines(author: Author, n: int, operands, digits: int, seed: int) -> str:
    """``n`` lines of ``author``'s corpus (``sums.corpus`` drawn from ``seed``), one
    ``prompt  completion`` per line."""
    pairs = corpus(author, n, tuple(operands), digits, np.random.default_rng(seed))
    return "\n".join(f"{p:<20}{c}" for p, c in pairs)


def stepwise_success(m: int, author: Author) -> float:
    """P(the author's stepwise answer to a sum of ``m`` numbers is right): no kept slip in its
    ``m - 1`` steps (the stepwise term of ``sums.success_probability``)."""
    return (1 - author.step_slip) ** (m - 1)


def terms_with_sum(s: int) -> tuple[int, ...]:
    """Single digits that sum to ``s >= 1`` (nines, then the remainder)."""
    return (9,) * (s // 9) + ((s % 9,) if s % 9 else ())


def direct_success_by_sum(sums, author: Author) -> list[float]:
    """``sums.direct_success`` as a function of the sum, for sums of single digits: the units
    column's sum is then the whole sum, so its carry units are the sum's tens and any
    single-digit terms with that sum give the same value."""
    return [direct_success(terms_with_sum(int(s)), author) for s in sums]


# --- pretraining ----------------------------------------------------------------------------

@dataclass
class Base:
    """A pretrained base (``pretrain.base_model``) with its training log, the loss floor
    (``pretrain.loss_floor``), the seconds it took to obtain and the folder it lives in."""

    key: str
    model: Any
    tokenizer: Any
    log: dict
    floor: float
    seconds: float
    folder: Path

    @property
    def held(self) -> np.ndarray:
        """The held-out losses, rows of (step, loss)."""
        return np.array(self.log["held_out"])

    @property
    def kl(self) -> float:
        """Final held-out loss minus the floor: the per-token KL(author || base)."""
        return self.held[-1, 1] - self.floor

    @property
    def size(self) -> int:
        """The number of parameters."""
        return sum(p.numel() for p in self.model.parameters())


def load_base(cfg: PretrainConfig, profile: str) -> Base:
    """The base for ``cfg``: pretrained once under ``profile``, then read back."""
    start = time.time()
    model, tokenizer = base_model(cfg, profile)
    seconds = time.time() - start
    return Base(cfg.key, model, tokenizer, pretrain_log(cfg, profile), loss_floor(cfg), seconds,
                base_dir(cfg, profile))


# --- does the base reproduce its author? ----------------------------------------------------

def author_matches(model, tokenizer, splits: dict[str, list], author: Author
                   ) -> dict[str, dict[str, np.ndarray]]:
    """``pretrain.author_match`` on each split's problems."""
    return {s: author_match(model, tokenizer, [p.meta["terms"] for p in ps], author)
            for s, ps in splits.items()}


MATCHED = [("P(stepwise)", "stepwise", "author_stepwise"),
           ("P(right | direct)", "direct_right", "author_direct_right"),
           ("P(slip-free | stepwise)", "clean_stepwise", "author_clean_stepwise")]
"""The decisions of ``match_table``: label, the base's key, the author's key in ``author_match``."""


def match_table(match: dict[str, dict[str, np.ndarray]]) -> pd.DataFrame:
    """Per split and decision, the base's and the author's mean probability over problems, and
    the mean total-variation distance of the direct answers (the author's: 0)."""
    rows = []
    for s, mm in match.items():
        for label, ours, theirs in MATCHED:
            rows.append({"split": s, "decision": label, "base": mm[ours].mean(),
                         "author": mm[theirs].mean()})
        rows.append({"split": s, "decision": "TV(direct answers), base vs author",
                     "base": mm["direct_tv"].mean(), "author": 0.0})
    return pd.DataFrame(rows).set_index(["split", "decision"]).round(3)


# --- the base, sampled ----------------------------------------------------------------------

RL_SETTING, PAPER_SETTING = "T=1.0", "T=0.6, top-p 0.95"
"""The names of the two settings of ``eval_settings``."""


def eval_settings(P: Params) -> dict[str, EvalSettings]:
    """The two settings the base is sampled at: RL's (T = 1, no top-p) and the paper's
    evaluation setting (T = 0.6, top-p 0.95, Appendix C.2)."""
    return {RL_SETTING: EvalSettings(n=P.samples, temperature=1.0, top_p=1.0,
                                     max_tokens=P.max_tokens, seed=P.seed),
            PAPER_SETTING: EvalSettings(n=P.samples, temperature=0.6, top_p=0.95,
                                        max_tokens=P.max_tokens, seed=P.seed)}


def samples_dir(cfg: PretrainConfig, profile: str) -> Path:
    """Where the base's samples are kept: ``results/<profile>/base_model/<base key>``."""
    return results_dir(profile, "base_model") / cfg.key


def sample_base(model, tokenizer, task: SumTask, splits: dict[str, list], author: Author,
                settings: dict[str, EvalSettings], out: Path
                ) -> dict[tuple[str, str], tuple[pd.DataFrame, pd.DataFrame]]:
    """``sample_paths`` for every split and setting, keyed ``(split, setting name)``, each in
    its own folder under ``out``; prints how long each took."""
    sampled = {}
    for s, ps in splits.items():
        for name, st in settings.items():
            start = time.time()
            sampled[s, name] = sample_paths(model, tokenizer, task, ps, author, st,
                                            out / f"{s}-{st.temperature}-{st.top_p}")
            print(f"{s}, {name}: {len(ps)} problems x {st.n} samples in "
                  f"{time.time() - start:.0f} s")
    return sampled


def exact_pass_at_k(p, ks) -> np.ndarray:
    """Pass@k of a sampler that is right with probability ``p[i]`` on problem i, exactly: the
    mean over problems of ``passk.from_probability``, for each k of ``ks``."""
    return np.array([np.mean(from_probability(p, k)) for k in ks])


def author_pass_at_k(problems, author: Author, ks) -> np.ndarray:
    """The author's exact Pass@k at temperature 1 (``sums.success_probability`` per problem)."""
    return exact_pass_at_k([success_probability(q.meta["terms"], author) for q in problems], ks)


def setting_names(sampled) -> list[str]:
    """The settings of ``sampled`` (keyed ``(split, setting name)``), in order."""
    return list(dict.fromkeys(name for _, name in sampled))


def summary(recs: pd.DataFrame, table: pd.DataFrame, samples: int) -> dict[str, float]:
    """One split and setting in numbers: Pass@1 and Pass@``samples``, the entropies, distinct
    answers, the paths (shares and accuracies pooled over samples), corrections, and the shares
    of problems beyond the direct path, solved only rarely (0 < c <= 1 % of n) and never."""
    n, c = table["n"].to_numpy(), table["c"].to_numpy()
    per = pass_at_k(n, c, [1, samples])
    beyond = ~table["direct_possible"].to_numpy()
    return {"Pass@1": per[:, 0].mean(), f"Pass@{samples}": per[:, 1].mean(),
            "answer entropy": table["answer_entropy"].mean(),
            "token entropy": token_entropy_of(recs),
            "distinct answers": table["distinct"].mean(),
            "stepwise share": table["stepwise"].sum() / n.sum(),
            "P(right | direct)": table["direct_right"].sum() / max(table["direct"].sum(), 1),
            "P(right | stepwise)": table["stepwise_right"].sum() / max(table["stepwise"].sum(), 1),
            "samples with a correction": table["corrected"].sum() / n.sum(),
            "problems beyond the direct path": beyond.mean(),
            "solved rarely (0 < c ≤ 1 %)": ((c > 0) & (c <= 0.01 * n)).mean(),
            "never solved": (c == 0).mean()}


def summary_table(sampled, samples: int) -> pd.DataFrame:
    """``summary`` of every (split, setting), one column each."""
    return pd.DataFrame({(s, name): summary(*sampled[s, name], samples)
                         for s, name in sampled}).round(3)


# --- the paper's evaluation setting and the rare path -------------------------------------

def nucleus(model, tokenizer, splits: dict[str, list], setting: EvalSettings
            ) -> dict[str, np.ndarray]:
    """Per split, the base's exact probability of a direct first character (``#``) at
    ``setting``'s temperature, per problem: where it is above ``setting.top_p`` the nucleus
    holds ``#`` alone and the stepwise path is never sampled."""
    return {split: first_char_probabilities(model, tokenizer, [q.prompt for q in problems],
                                            setting.temperature)
            for split, problems in splits.items()}
