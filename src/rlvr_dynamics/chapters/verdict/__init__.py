"""The closing chapter (``notebooks/verdict.md``): every claim of the paper, its numbers and
ours, with the verdict that a chapter of this build recorded (``rlvr_dynamics.verdicts``)."""
from __future__ import annotations

import pandas as pd

from rlvr_dynamics.chapters import ChapterParams


class Params(ChapterParams):
    """The verdict chapter has no parameters of its own (it reads the recorded verdicts)."""


HYPOTHESES = {
    ("large_k", "ood"): (
        "*Large k and out of distribution.* GRPO shrinks the paper's boundary because the paths "
        "it sharpens do not cover everything the base could reach. Where the path every "
        "algorithm sharpens is the rare, reliable stepwise one, it covers every problem in "
        "distribution and out of it, and there is nothing left for the negative-only variants "
        "to protect (the reproduction chapter's boundary and path shares show whether that is "
        "what happened in this build)."),
    ("entropy_collapse", "entropy_recovery", "answer_entropy"): (
        "*Entropy.* The paper's recovery of entropy under the -N variants keeps diversity "
        "*within* a model's common way of answering. Where the -N runs move onto the stepwise "
        "path as GRPO's do, that path is nearly deterministic token by token, so their entropy "
        "falls with GRPO's; and answer-level entropy cannot separate algorithms whose models "
        "are right on nearly every sample (a problem with one right answer then has zero "
        "answer entropy)."),
    ("lm_two_stages",): (
        "*The two stages in a language model.* In the toy, the explored action's own updates "
        "lower the rare action's probability through the softmax's normaliser: that is the "
        "exploitation stage. In our language model the path is chosen by the first character, "
        "and a group in which every sample took the direct path shares that character: its "
        "advantages sum to zero, so under GRPO it leaves the path choice unmoved at first order "
        "and acts on it only through the parameters it shares with the answers behind it. "
        "Under GRPO-N the kept advantages of such a group sum to less than zero, which pushes "
        "the direct path's first character down. Where the rare path, once sampled, is right, "
        "it wins its group; the regimes chapter shows per regime whether the rare-path-only "
        "problems lost Pass@k before the path took over, and for how long it waited."),
    ("case_study",): (
        "*The case study.* A corrected step is our counterpart of the paper's recurring error. "
        "A corrected sample is right, so GRPO pushes it up, but where the stepwise path's clean "
        "samples are pushed up just as much and far outnumber it, GRPO gains no consistent "
        "excess of corrected steps over GRPO-N."),
}
"""What we think decides a claim that does not replicate here: each shown only when one of
its claims' verdicts is other than *replicates* (and was measured on the sums testbed), so the
page never explains an outcome this build did not produce."""

TESTBED = ("toy_dynamics", "training", "reproduction", "regimes")
"""The chapters whose verdicts the ``HYPOTHESES`` speak of (the toy and the sums model; not
the pretrained-model chapter's SmolLM2)."""


def hypotheses(table: pd.DataFrame) -> str:
    """The ``HYPOTHESES`` whose claims this build did not replicate on the testbed (markdown),
    or a line that says there are none."""
    def explained(claim: str) -> bool:
        row = table.loc[claim]
        return (row["verdict"] not in ("replicates", "not measured")
                and row.get("chapter", TESTBED[0]) in TESTBED)
    shown = [text for claims, text in HYPOTHESES.items()
             if any(explained(c) for c in claims if c in table.index)]
    if not shown:
        return ("Every claim that the toy or the sums testbed measured replicates in this build: "
                "there is nothing to explain.")
    return ("What we think decides the claims that do not replicate in this build:\n\n"
            + "\n".join(f"* {t}" for t in shown))
