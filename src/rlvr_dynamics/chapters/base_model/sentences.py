"""The base-model chapter's words: the base as loaded, how far pretraining converged, where the
paper's evaluation setting cuts the rare path, and the closing claims beside what was measured,
written from the chapter's results."""
from __future__ import annotations

import numpy as np
import pandas as pd

from rlvr_dynamics.chapters.base_model import (PAPER_SETTING, RL_SETTING, Base, Params,
                                               summary)
from rlvr_dynamics.evaluation import EvalSettings


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


def claims(base: Base, match, sampled, P: Params) -> pd.DataFrame:
    """The chapter's claims beside what was measured (at T = 1 and at the paper's setting)."""
    samples = P.samples
    splits = list(dict.fromkeys(s for s, _ in sampled))
    t1 = {s: summary(*sampled[s, RL_SETTING], samples) for s in splits}
    t6 = {s: summary(*sampled[s, PAPER_SETTING], samples) for s in splits}
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
        (f"at {PAPER_SETTING} the rare path is cut",
         "; ".join(f"{s}: stepwise share {t6[s]['stepwise share']:.3f}, never solved "
                   f"{t6[s]['never solved']:.0%}" for s in splits)),
    ], columns=["claim", "measured"]).set_index("claim")
