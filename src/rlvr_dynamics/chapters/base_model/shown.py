"""The base-model chapter's tables as displayed: the author's examples with their exact
probabilities, the splits (size, operands, the share beyond the direct path, the author's exact
Pass@1) and the closing claims beside what was measured (their cells written for people; the
numbers come from the chapter's computations and ``tasks.sums``)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from rlvr_dynamics.chapters.base_model import (PAPER_SETTING, RL_SETTING, Base, Params,
                                               stepwise_success, summary)
from rlvr_dynamics.tasks.sums import (Author, direct_distribution, direct_success,
                                      success_probability)


# --- the author and the splits -----------------------------------------------------------------

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


# --- the closing claims ------------------------------------------------------------------------

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
