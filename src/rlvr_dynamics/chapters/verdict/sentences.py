"""The closing chapter's words: the table's caption, the checks behind each verdict (one folded
block per claim), and what we think decides the claims that did not replicate."""
from __future__ import annotations

from html import escape

import pandas as pd

from rlvr_dynamics import stats
from rlvr_dynamics.chapters.verdict import not_replicated


def caption(profile: str) -> str:
    """The caption of the verdict table."""
    return f"The paper's claims against this build ({profile} profile)"


def checks_text() -> str:
    """What a check is: an effect over seeds with its interval at ``stats.CONFIDENCE`` and a
    margin declared before the runs."""
    return (f"Each check is an effect over seeds with its {100 * stats.CONFIDENCE:.0f} % "
            "Student-t interval and a margin, the smallest effect that counts, declared in the "
            "chapter's module before the runs (`rlvr_dynamics.stats`).")


def beside_text(name: str, table: pd.DataFrame) -> str:
    """What the page says of profile ``name``'s verdicts (``chapter.beside``): where they come
    from, or how to make them when this machine holds none for this code."""
    if table.empty:
        return (f"The `{name}` profile's verdicts are not on this machine for this code (it has "
                f"not run, or ran with other code). To add them (the book's page on rerunning "
                f"gives the cost):\n\n    make reproduce PROFILE={name}\n\nthen `make publish` "
                "(or `make reproduce` for this build): this page reads them back without "
                "computing anything.")
    return (f"The verdicts recorded by the `{name}` profile ({len(table)} claims), kept apart "
            f"from this build's: other settings (`configs/{name}.yaml` says which). The checks "
            "behind them are on that profile's chapter pages.")


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
        "*Large k and out of distribution.* Hypothesis: GRPO shrinks the paper's boundary "
        "because the path it sharpens does not cover everything the base could reach; where "
        "every algorithm sharpens the rare, reliable stepwise path, that path covers the "
        "problems in distribution and out of it, and the negative-only variants have nothing "
        "left to protect. What would test it: the boundary per problem split by path (the "
        "reproduction chapter's lost and gained problems beside the path shares), and a task "
        "whose rare path covers only part of the problems, where the hypothesis predicts that "
        "GRPO loses the rest and GRPO-N keeps them."),
    ("entropy_collapse", "entropy_recovery", "answer_entropy"): (
        "*Entropy.* Hypothesis: the paper's recovery of entropy under the -N variants is "
        "diversity kept *within* a model's common way of answering; where the -N runs move "
        "onto the stepwise path as GRPO's do, a path nearly deterministic token by token, "
        "their entropy falls with GRPO's, and answer-level entropy cannot separate models that "
        "are right on nearly every sample. What would test it: the token entropy split by path "
        "(not measured yet: the reading mixes the share of each path with the sharpness along "
        "it), and runs on a base whose common path stays the better one, where the hypothesis "
        "predicts that the -N variants keep more entropy than GRPO."),
    ("lm_two_stages",): (
        "*The two stages in a language model.* Hypothesis: in the toy, the explored good "
        "action's updates against the explored bad one lower the rare action's probability "
        "through the softmax's normaliser (the exploitation stage), which needs three actions "
        "at one decision; with two paths at the first character, a group in which every "
        "sample took the direct path shares that character, its advantages sum to zero, and "
        "under GRPO it leaves the path choice unmoved at first order. What tests it: the "
        "scenario chapter's three-path arm, a bad explored path (a guess) at the same decision "
        "set against a control without it, with the toy's prediction registered before the "
        "runs; the hypothesis predicts a dip of the rare path's probability in the arm and not "
        "in the control. The verdict above says whether it did, and the arm's own table by how "
        "much and when."),
    ("case_study",): (
        "*The case study.* Hypothesis: a corrected step (our counterpart of the paper's "
        "recurring error) rides on a right answer, so GRPO pushes it up, but the stepwise "
        "path's clean samples are pushed up as much and far outnumber it, so GRPO gains no "
        "consistent excess of corrected steps over GRPO-N. What would test it: a base whose "
        "corrected steps are as common as its clean ones among right stepwise answers, where "
        "the hypothesis predicts that GRPO's share of corrected steps rises above GRPO-N's."),
}
"""What we think decides a claim that does not replicate here, each a hypothesis with what
would test it: shown only when one of its claims is among ``not_replicated`` (measured on the sums testbed, verdict other than
*replicates*), so the page never explains an outcome this build did not produce."""


def hypotheses(table: pd.DataFrame) -> str:
    """The ``HYPOTHESES`` whose claims this build did not replicate on the testbed (markdown),
    or a line that says there are none."""
    missed = set(not_replicated(table))
    shown = [text for claims, text in HYPOTHESES.items() if missed & set(claims)]
    if not shown:
        return ("Every claim that the toy or the sums testbed measured replicates in this build: "
                "there is nothing to explain.")
    return ("What we think decides the claims that do not replicate in this build, each a "
            "hypothesis with what would test it:\n\n"
            + "\n".join(f"* {t}" for t in shown))
