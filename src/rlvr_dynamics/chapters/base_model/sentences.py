"""The base-model chapter's words: the author's habits and the sums beyond its direct path, the
base's size and schedule, the base as loaded, how far pretraining converged, how much longer the
rare path is and where the paper's evaluation setting cuts it, written from the chapter's
parameters and results (its tables for people, the closing claims among them, are in
``shown``)."""
from __future__ import annotations

import numpy as np

from rlvr_dynamics.chapters.base_model import Base, Params, direct_success_by_sum
from rlvr_dynamics.measure import EvalSettings
from rlvr_dynamics.pretrain import PretrainConfig
from rlvr_dynamics.tasks.sums import Author, stepwise_completion


def author_text(author: Author) -> str:
    """The author's habits in numbers: how often it takes each path, how it carries on the
    direct one and how it slips on the stepwise one."""
    cap = ("passes on every carry unit of a column" if author.carry_cap is None else
           f"passes on at most {author.carry_cap} carry units out of a column")
    return (f"This author answers directly {100 * (1 - author.stepwise):g} % of the time and "
            f"works stepwise {100 * author.stepwise:g} %. Answering directly it {cap} and "
            f"forgets each unit it passes on with probability {author.carry_slip:g}; working "
            f"stepwise it keeps a wrong partial sum with probability {author.step_slip:g} per "
            f"step and corrects one in place (`!`) with probability {author.correction:g}.")


def beyond_text(splits: dict[str, list], author: Author) -> str:
    """The smallest sum of single digits that the direct path never gets right
    (``direct_success_by_sum`` 0), up to the largest sum of ``splits``."""
    sums = range(1, max(sum(p.meta["terms"]) for ps in splits.values() for p in ps) + 1)
    beyond = [s for s, p in zip(sums, direct_success_by_sum(sums, author)) if p == 0]
    if not beyond:
        return ("No sum of these splits is beyond the direct path: its answers can be right "
                "on every problem, if rarely.")
    units = beyond[0] // 10
    return (f"Every sum of {beyond[0]} or more needs at least {units} "
            f"carr{'y' if units == 1 else 'ies'} out of the units column and is beyond the "
            "direct path; only the stepwise path, which never carries more than one, reaches it.")


def pretraining_text(cfg: PretrainConfig) -> str:
    """The base's size and schedule as configured: layers, width and heads, the lines of each
    step (the author's and the worked stepwise ones), the peak learning rate and warm-up."""
    return (f"This base has {cfg.layers} layers of width {cfg.hidden} with {cfg.heads} heads "
            f"and trains for {cfg.steps:,} steps, each of {cfg.batch} corpus lines and "
            f"{round(cfg.worked * cfg.batch)} worked stepwise solutions, at a peak learning "
            f"rate of {cfg.lr:g} reached after {cfg.warmup} warm-up steps.")


def lengths_text(splits: dict[str, list]) -> str:
    """How many times as long as the direct completion (``#`` and the answer) a slip-free
    stepwise one (``sums.stepwise_completion``) is, on average over each split's problems, in
    characters (the base's tokens)."""
    clean, no_rng = Author(step_slip=0.0, correction=0.0), np.random.default_rng(0)
    ratios = {s: np.mean([len(stepwise_completion(p.meta["terms"], clean, no_rng))
                          / len(f"#{p.answer}") for p in ps]) for s, ps in splits.items()}
    return ("In characters (the base's tokens), a slip-free stepwise completion is longer than "
            "a direct one by a factor of " + " and ".join(f"{r:.1f} on {s}"
                                                           for s, r in ratios.items())
            + " on average.")


def describe(base: Base) -> str:
    """The base's key, size, how long it took to obtain and where it lives."""
    return (f"base {base.key}: {base.size:,} parameters, ready in {base.seconds:.0f} s (a "
            f"cached base is read back from {base.folder})")


def convergence_line(base: Base) -> str:
    """The final held-out loss, the KL from the author, and how much the last 20 % of the
    held-out evaluations lowered the loss."""
    held = base.held
    return (f"final held-out loss {held[-1, 1]:.3f}; KL(author || base) = {base.kl:.3f} "
            f"nats per token; last 20 % of training lowered it by "
            f"{held[int(0.8 * len(held)) - 1, 1] - held[-1, 1]:.3f}")


def nucleus_text(nucleus: dict[str, np.ndarray], setting: EvalSettings) -> str:
    """Whether the stepwise path survives ``setting`` (``nucleus``: per split, each problem's
    probability of a direct first character at its temperature, ``chapters.base_model.nucleus``):
    on how many problems ``setting.top_p`` leaves the stepwise path out of the nucleus."""
    t, top_p = setting.temperature, setting.top_p
    return "; ".join(
        f"on {split}, P(#) at temperature {t:g} is {p.mean():.3f} on average (lowest "
        f"{p.min():.3f}), so top-p {top_p:g} leaves the stepwise path out of the nucleus on "
        f"{int((p > top_p).sum())} of {len(p)} problems" for split, p in nucleus.items()) + "."


# --- the figures' captions ---------------------------------------------------------------------

def author_caption(author: Author) -> str:
    """The author's figure's caption: its slips."""
    return (f"The direct path exact per sum, the stepwise path per operand count (dashed); "
            f"carry slip {author.carry_slip}, cap {author.carry_cap}, step slip "
            f"{author.step_slip}; shaded: the test split's sums.")


def pretraining_caption(P: Params) -> str:
    """Pretraining's caption: its settings."""
    return (f"Seed {P.seed}, batch {P.batch}, learning rate {P.lr}, share of worked "
            f"completions {P.worked}; the floor is the author's entropy per completion token.")


MATCH_CAPTION = ("Each point a problem; colour: its operand count; dashed: the base equal to its "
                 "author.")
"""The match figure's caption."""


def passk_caption(samples: int, seed: int) -> str:
    """The base's Pass@k caption: samples, seed, band."""
    return (f"The unbiased estimator from n = {samples} samples per problem (seed {seed}); band: "
            "95 % bootstrap over problems; dashed: the author at T = 1, exact.")


def success_caption(samples: int, seed: int) -> str:
    """The per-problem success caption."""
    return (f"Each problem's share of right samples out of n = {samples} (seed {seed}); solid: "
            "the test split, dashed: the other; blue: within the direct path's reach, red: "
            "beyond it.")
