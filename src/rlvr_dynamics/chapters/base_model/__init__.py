"""The chapter on the base model (``notebooks/base_model.md``): the sums task, its author, the
tiny base model pretrained on the author's corpus (``rlvr_dynamics.pretrain``), whether it
converged to its author, and the base sampled by path.

The chapter's parameters (``Params``), and its computations, tables and figures in the order the
notebook shows them: the author's exact probabilities (``author_examples``, ``plot_author``,
``split_table``), pretraining (``load_base``, ``plot_pretraining``, ``convergence_line``), the
base against its author (``author_matches``, ``match_table``, ``plot_match``), the base sampled
(``sample_base``, ``plot_passk``, ``summary_table``, ``plot_success_shares``) and the closing
``claims``."""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from pydantic import model_validator

from rlvr_dynamics.chapters import ChapterParams, Int, ListOf, NonNegative, Positive, Probability, require
from rlvr_dynamics.entropy import answer_entropy
from rlvr_dynamics.evaluation import EvalSettings, LoadedModel, evaluate, token_entropy_of
from rlvr_dynamics.passk import bootstrap_ci, ks_for, pass_at_k
from rlvr_dynamics.pretrain import (PretrainConfig, author_match, base_dir, base_model,
                                    first_char_probabilities, loss_floor, pretrain_log)
from rlvr_dynamics.sampling import TransformersBackend
from rlvr_dynamics.store import results_dir
from rlvr_dynamics.tasks.sums import (Author, SumTask, corpus, direct_distribution, direct_success,
                                      path_counts, success_probability)


class Params(ChapterParams):
    """The base model (``steps`` of ``batch`` sequences, ``hidden`` x ``layers``, AdamW at
    ``lr``, ``worked`` extra stepwise examples per step, sums of ``operands`` numbers), the
    author of its corpus (``stepwise``, ``carry_slip``, ``carry_cap``, ``step_slip``,
    ``correction``: ``tasks.sums.Author``), and how it is sampled (``samples`` per problem on
    ``problems`` problems per split, at most ``max_tokens`` tokens)."""

    seed: Int(0) = 0
    steps: Int(1) = 2000
    hidden: Int(4) = 128
    layers: Int(1) = 4
    batch: Int(1) = 128
    lr: Positive = 0.002
    worked: NonNegative = 0.25
    operands: ListOf(Int(2), 2) = [2, 9]
    stepwise: Probability = 0.05
    carry_slip: Probability = 0.3
    carry_cap: Int(0) | None = 2
    step_slip: Probability = 0.02
    correction: Probability = 0.03
    problems: Int(1, 200) = 100
    samples: Int(1) = 256
    max_tokens: Int(8) = 80

    @model_validator(mode="after")
    def _cross(self):
        require(len(self.operands) == 2 and self.operands[0] <= self.operands[1],
                "operands must be [lo, hi] with 2 <= lo <= hi")
        require(self.hidden % 4 == 0, f"hidden={self.hidden} must be divisible by the 4 heads")
        require(self.step_slip + self.correction <= 1, "step_slip + correction must be <= 1")
        return self

    def author(self) -> Author:
        return Author(stepwise=self.stepwise, carry_slip=self.carry_slip,
                      carry_cap=self.carry_cap, step_slip=self.step_slip,
                      correction=self.correction)

    def config(self) -> PretrainConfig:
        """The base model these parameters describe (its cache key)."""
        return PretrainConfig(task=SumTask(), author=self.author(),
                              operands=tuple(self.operands), hidden=self.hidden,
                              layers=self.layers, steps=self.steps, batch=self.batch,
                              lr=self.lr, seed=self.seed, worked=self.worked)


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
                     **path_counts(p.answer, list(g["text"])),
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


def author_examples(examples, author: Author) -> pd.DataFrame:
    """Per example (a tuple of terms): the author's direct answers with their exact
    probabilities (``sums.direct_distribution``) and its chance of being right directly,
    stepwise and overall."""
    return pd.DataFrame([{
        "problem": "+".join(map(str, t)) + f"={sum(t)}",
        "direct answers (probability)": ", ".join(
            f"{a} ({p:.2f})" for a, p in sorted(direct_distribution(t, author).items(),
                                                key=lambda x: -x[1])),
        "P(right | direct)": round(direct_success(t, author), 3),
        "P(right | stepwise)": round(stepwise_success(len(t), author), 3),
        "P(right)": round(success_probability(t, author), 3)} for t in examples])


def plot_author(author: Author, task: SumTask, operand_counts=(3, 6, 9)):
    """P(right | path) of the author against the sum: the direct path (exact, single-digit
    sums from the smallest to the largest any split holds) and the stepwise path for
    ``operand_counts`` operands, over the test split's sums (shaded)."""
    ranges = {s: (lo, hi) for s, lo, hi in task.operands}
    top = 10 ** task.digits - 1
    smallest = min(lo for lo, _ in ranges.values()) * 10 ** (task.digits - 1)
    sums_ = np.arange(smallest, max(hi for _, hi in ranges.values()) * top + 1)
    lo, hi = ranges["test"]
    fig, ax = plt.subplots(figsize=(6.4, 3.2))
    ax.step(sums_, direct_success_by_sum(sums_, author), where="post", label="direct")
    for m in operand_counts:
        ax.hlines(stepwise_success(m, author), m, top * m, color=f"C{m // 3}", ls="--",
                  label=f"stepwise, {m} operands")
    ax.axvspan(lo * 10 ** (task.digits - 1) - 1, hi * top, color="0.9", zorder=0,
               label=f"test sums ({lo}-{hi} operands)")
    ax.set(xlabel="the sum", ylabel="P(right | path)", ylim=(-0.02, 1.02),
           title=f"The author (exact): carry slip {author.carry_slip}, cap {author.carry_cap}, "
                 f"step slip {author.step_slip}")
    ax.legend(fontsize=8, loc="center right")
    return fig


def split_table(splits: dict[str, list], author: Author) -> pd.DataFrame:
    """Per split: its size, its operand counts, the share of problems beyond the direct path
    (``direct_success`` 0) and the author's exact Pass@1 (mean ``success_probability``)."""
    return pd.DataFrame({s: {
        "problems": len(ps),
        "operands": f"{min(len(p.meta['terms']) for p in ps)}-"
                    f"{max(len(p.meta['terms']) for p in ps)}",
        "beyond the direct path":
            f"{np.mean([direct_success(p.meta['terms'], author) == 0 for p in ps]):.0%}",
        "author's Pass@1 (exact)": round(np.mean(
            [success_probability(p.meta["terms"], author) for p in ps]), 3)}
        for s, ps in splits.items()})


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

    def describe(self) -> str:
        return (f"base {self.key}: {sum(p.numel() for p in self.model.parameters()):,} "
                f"parameters, ready in {self.seconds:.0f} s (a cached base is read back from "
                f"{self.folder})")


def load_base(cfg: PretrainConfig, profile: str) -> Base:
    """The base for ``cfg``: pretrained once under ``profile``, then read back."""
    start = time.time()
    model, tokenizer = base_model(cfg, profile)
    seconds = time.time() - start
    return Base(cfg.key, model, tokenizer, pretrain_log(cfg, profile), loss_floor(cfg), seconds,
                base_dir(cfg, profile))


def plot_pretraining(base: Base, P: Params):
    """The training loss (a running mean over a fiftieth of the steps) and the held-out loss
    against the floor, on a log scale."""
    held, losses, floor = base.held, np.array(base.log["losses"]), base.floor
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    window = max(1, len(losses) // 50)
    ax.plot(np.arange(window, len(losses) + 1),
            np.convolve(losses, np.ones(window) / window, "valid"),
            lw=1, alpha=0.6, label=f"training loss (mean of {window} steps)")
    ax.plot(held[:, 0], held[:, 1], "o-", ms=3, label="held-out loss")
    ax.axhline(floor, color="k", ls="--", label=f"floor: the author's entropy ({floor:.3f})")
    ax.set(yscale="log", xlabel="pretraining step", ylabel="nats per completion token",
           title=f"Pretraining (seed {P.seed}, batch {P.batch}, lr {P.lr}, worked {P.worked})")
    ax.legend(fontsize=8)
    return fig


def convergence_line(base: Base) -> str:
    """The final held-out loss, the KL from the author, and how much the last 20 % of the
    held-out evaluations lowered the loss."""
    held = base.held
    return (f"final held-out loss {held[-1, 1]:.3f}; KL(author || base) = {base.kl:.3f} "
            f"nats per token; last 20 % of training lowered it by "
            f"{held[int(0.8 * len(held)) - 1, 1] - held[-1, 1]:.3f}")


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


def plot_match(match: dict[str, dict[str, np.ndarray]]):
    """Each problem's P(right | direct), base against author, one panel per split."""
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.4), sharey=True)
    for ax, (s, mm) in zip(axes, match.items()):
        ax.scatter(mm["author_direct_right"], mm["direct_right"], s=10, c=mm["m"],
                   cmap="viridis")
        ax.plot([0, 1], [0, 1], "k--", lw=1)
        ax.set(xlabel="author: P(right | direct)", title=f"{s}: {len(mm['m'])} problems")
    axes[0].set_ylabel("base: P(right | direct)")
    fig.suptitle("Each problem's right direct answer, base against author (colour: operands)")
    plt.tight_layout()
    return fig


# --- the base, sampled ----------------------------------------------------------------------

def eval_settings(P: Params) -> dict[str, EvalSettings]:
    """The two settings the base is sampled at: RL's (T = 1, no top-p) and the paper's
    evaluation setting (T = 0.6, top-p 0.95, Appendix C.2)."""
    return {"T=1.0": EvalSettings(n=P.samples, temperature=1.0, top_p=1.0,
                                  max_tokens=P.max_tokens, seed=P.seed),
            "T=0.6, top-p 0.95": EvalSettings(n=P.samples, temperature=0.6, top_p=0.95,
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
    mean over problems of 1 - (1 - p) ** k, for each k of ``ks``."""
    p = np.asarray(p, dtype=float)
    return np.array([np.mean(1 - (1 - p) ** k) for k in ks])


def author_pass_at_k(problems, author: Author, ks) -> np.ndarray:
    """The author's exact Pass@k at temperature 1 (``sums.success_probability`` per problem)."""
    return exact_pass_at_k([success_probability(q.meta["terms"], author) for q in problems], ks)


def _setting_names(sampled) -> list[str]:
    return list(dict.fromkeys(name for _, name in sampled))


def plot_passk(sampled, splits: dict[str, list], author: Author, samples: int, seed: int):
    """Pass@k of the base per split and setting (unbiased estimator, 95 % bootstrap band over
    problems) beside the author's exact curve at T = 1."""
    ks = ks_for(samples)
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), sharey=True)
    for ax, s in zip(axes, splits):
        for i, name in enumerate(_setting_names(sampled)):
            table = sampled[s, name][1]
            per = pass_at_k(table["n"].to_numpy(), table["c"].to_numpy(), ks)
            lo, hi = bootstrap_ci(per)
            ax.plot(ks, per.mean(0), "o-", ms=3, color=f"C{i}", label=f"base, {name}")
            ax.fill_between(ks, lo, hi, color=f"C{i}", alpha=0.2)
        ax.plot(ks, author_pass_at_k(splits[s], author, ks), "k--", lw=1,
                label="author, T=1 (exact)")
        ax.set(xscale="log", xticks=ks, xticklabels=ks, xlabel="k",
               title=f"{s} ({len(splits[s])} problems)")
    axes[0].set_ylabel("Pass@k")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"Pass@k of the base (n = {samples}, seed {seed}; band: 95 % bootstrap over "
                 "problems)")
    plt.tight_layout()
    return fig


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


def plot_success_shares(sampled, splits: dict[str, list], samples: int, seed: int):
    """Histograms of each problem's share of right samples, one panel per setting, split by
    whether the direct path can reach the problem."""
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4), sharey=True)
    bins = np.linspace(0, 1, 21)
    for ax, name in zip(axes, _setting_names(sampled)):
        for s, ls in zip(splits, ("-", "--")):
            table = sampled[s, name][1]
            share = table["c"] / table["n"]
            for possible, color in ((True, "C0"), (False, "C3")):
                sel = share[table["direct_possible"] == possible]
                if len(sel):
                    ax.hist(sel, bins=bins, histtype="step", ls=ls, color=color,
                            label=f"{s}, {'within' if possible else 'beyond'} the direct path")
        ax.set(xlabel="share of a problem's samples that are right", title=name, yscale="log")
    axes[0].set_ylabel("problems")
    axes[0].legend(fontsize=7)
    fig.suptitle(f"Per-problem success of the base (n = {samples}, seed {seed})")
    plt.tight_layout()
    return fig


# --- summary --------------------------------------------------------------------------------

def claims(base: Base, match, sampled, P: Params) -> pd.DataFrame:
    """The chapter's claims beside what was measured (at T = 1 and at the paper's setting)."""
    samples = P.samples
    splits = list(dict.fromkeys(s for s, _ in sampled))
    t1 = {s: summary(*sampled[s, "T=1.0"], samples) for s in splits}
    t6 = {s: summary(*sampled[s, "T=0.6, top-p 0.95"], samples) for s in splits}
    return pd.DataFrame([
        ("pretraining converged: held-out loss near the author's entropy",
         f"KL(author || base) = {base.kl:.3f} nats/token (floor {base.floor:.3f})"),
        ("the base chooses the rare path as often as the author",
         f"P(stepwise) test {match['test']['stepwise'].mean():.3f}, "
         f"ood {match['ood']['stepwise'].mean():.3f} (author {P.stepwise})"),
        (f"Pass@1 well below Pass@{samples} (T=1)",
         "; ".join(f"{s} {t1[s]['Pass@1']:.2f} vs {t1[s][f'Pass@{samples}']:.2f}"
                   for s in splits)),
        ("many distinct answers (T=1)",
         "; ".join(f"{s} {t1[s]['distinct answers']:.1f} per problem, entropy "
                   f"{t1[s]['answer entropy']:.2f}" for s in splits)),
        ("problems solved only rarely (T=1)",
         "; ".join(f"{s} {t1[s]['solved rarely (0 < c ≤ 1 %)']:.0%}" for s in splits)),
        ("at T=0.6, top-p 0.95 the rare path is cut",
         "; ".join(f"{s}: stepwise share {t6[s]['stepwise share']:.3f}, never solved "
                   f"{t6[s]['never solved']:.0%}" for s in splits)),
    ], columns=["claim", "measured"]).set_index("claim")


def nucleus_text(model, tokenizer, splits: dict[str, list], temperature: float = 0.6,
                 top_p: float = 0.95) -> str:
    """Whether the stepwise path survives the paper's evaluation setting: the base's exact
    probability of a direct first character (``#``) at ``temperature``, per split; where it is
    above ``top_p`` the nucleus holds ``#`` alone and the stepwise path is never sampled."""
    parts = []
    for split, problems in splits.items():
        p = first_char_probabilities(model, tokenizer, [q.prompt for q in problems], temperature)
        cut = int((p > top_p).sum())
        parts.append(f"on {split}, P(#) at temperature {temperature:g} is {p.mean():.3f} on "
                     f"average (lowest {p.min():.3f}), so top-p {top_p:g} leaves the stepwise "
                     f"path out of the nucleus on {cut} of {len(p)} problems")
    return "; ".join(parts) + "."
