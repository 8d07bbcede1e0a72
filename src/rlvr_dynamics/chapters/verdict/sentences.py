"""The closing chapter's words: the table's caption, the checks behind each verdict (one folded
block per claim), and what we think decides the claims that did not replicate."""
from __future__ import annotations

from html import escape

import pandas as pd

from rlvr_dynamics.chapters.verdict import not_replicated


def caption(profile: str) -> str:
    """The caption of the verdict table."""
    return f"The paper's claims against this build ({profile} profile)"


def _items(checks: list) -> str:
    return "".join(f"<li>{escape(what)}: <em>{escape(v)}</em></li>" for what, v in checks)


def checks(table: pd.DataFrame, measured: dict[str, dict]) -> str:
    """Per claim of ``table`` (``verdicts.table``), a folded block (HTML ``<details>``) that
    opens on the checks behind its verdict as ``measured`` recorded them
    (``verdicts.measured``): the deciding ones, those shown beside them, and the chapter that
    measured them."""
    blocks = []
    for key, row in table.iterrows():
        r = measured.get(key)
        if r is None:
            body = "<p>No chapter of this build measured this claim.</p>"
        else:
            body = (f"<p>Measured by the chapter <code>{escape(r['chapter'])}</code>; the checks "
                    f"that decide the verdict:</p><ul>{_items(r['checks'])}</ul>")
            if r.get("also"):
                body += f"<p>Shown beside them, not deciding:</p><ul>{_items(r['also'])}</ul>"
        blocks.append(f"<details><summary>{escape(row['claim'])} — "
                      f"<strong>{escape(row['verdict'])}</strong></summary>{body}</details>")
    return "\n".join(blocks)


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
        "*The two stages in a language model.* A hypothesis, and how the regimes chapter tests "
        "it. In the toy, the explored good action's updates against the explored bad one lower "
        "the rare action's probability through the softmax's normaliser: that is the "
        "exploitation stage, and it needs three actions at one decision. With two paths at the "
        "first character, a group in which every sample took the direct path shares that "
        "character, its advantages sum to zero, and under GRPO it leaves the path choice "
        "unmoved at first order. The chapter's three-path arm puts a bad explored path (a "
        "guess) at the same decision and sets it against a control without it, with the toy's "
        "prediction registered before the runs: if the hypothesis holds, the rare path's "
        "probability dips in the arm and not in the control; the verdict above says whether it "
        "did, and the arm's own table says by how much and when."),
    ("case_study",): (
        "*The case study.* A corrected step is our counterpart of the paper's recurring error. "
        "A corrected sample is right, so GRPO pushes it up, but where the stepwise path's clean "
        "samples are pushed up just as much and far outnumber it, GRPO gains no consistent "
        "excess of corrected steps over GRPO-N."),
}
"""What we think decides a claim that does not replicate here: each shown only when one of
its claims is among ``not_replicated`` (measured on the sums testbed, verdict other than
*replicates*), so the page never explains an outcome this build did not produce."""


def hypotheses(table: pd.DataFrame) -> str:
    """The ``HYPOTHESES`` whose claims this build did not replicate on the testbed (markdown),
    or a line that says there are none."""
    missed = set(not_replicated(table))
    shown = [text for claims, text in HYPOTHESES.items() if missed & set(claims)]
    if not shown:
        return ("Every claim that the toy or the sums testbed measured replicates in this build: "
                "there is nothing to explain.")
    return ("What we think decides the claims that do not replicate in this build:\n\n"
            + "\n".join(f"* {t}" for t in shown))
