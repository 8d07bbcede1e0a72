"""The pretrained chapter's words: the settings its figures state, the rule's verdict on the
training mix, what to do where the source profile has not run, what a verdict weighs, and the
rows it hands to ``verdicts.record``."""
from __future__ import annotations

from typing import Any

import pandas as pd

from rlvr_dynamics import registry
from rlvr_dynamics.chapters.pretrained import (Params, Results, boxed_share, decisions, fits,
                                               looked, training_params, verdict_rows)
from rlvr_dynamics.chapters.sentences import (comparison_rows, passk_caption,  # noqa: F401
                                              reading_rows, run_settings)
from rlvr_dynamics.rl.algorithms import BASE
from rlvr_dynamics.stats import CONFIDENCE


def described(where: str, Q: Params, T: Any) -> str:
    """What the chapter's figures and tables measured: the runs (``run_settings``; ``T``: their
    training parameters) and the evaluation, from the profile ``where`` (``Q``: its
    parameters)."""
    grader = "the paper's grader (boxed only)" if Q.boxed_only else "the lenient grader"
    return (f"{where} profile: {run_settings(T)}; prompt {Q.prompt}, {grader}; {Q.problems} "
            f"test problems per difficulty, n = {Q.n}, at most {T.max_completion_length} tokens")


def by_level(long: pd.DataFrame, Q: Params) -> pd.DataFrame:
    """``long`` (a Pass@k or entropy table of ``comparison.metrics``) with each benchmark named
    by its difficulty ("1-digit × 2") rather than by its spec."""
    names = {registry.spec_text(b): level_name(registry.spec_text(b)) for b in Q.benchmarks()}
    return long.replace({"benchmark": names})


def level_name(spec: str) -> str:
    """A level named by its difficulty (``difficulty_name``) from its benchmark spec."""
    fields = registry.parse_spec(spec)[1]
    return difficulty_name(fields["digits"], fields["terms"])


def difficulty_name(digits: int, terms: int) -> str:
    """A difficulty in words: "1-digit × 2"."""
    return f"{digits}-digit × {terms}"


def dynamics_caption(Q: Params, described: str) -> str:
    """The caption of the chapter's Figure 2: the training mix and ``described``."""
    return (f"Trained on the mix {Q.levels}. {described}; lines: mean over seeds, bands: min "
            "to max.")


def probe_caption(Q: Params, described: str) -> str:
    """The caption of Pass@k along training: the probe and ``described``."""
    return (f"{Q.probe_samples} samples of {Q.probe_problems} test problems every "
            f"{Q.probe_every} steps. {described}; lines: mean over seeds, bands: min to max.")


def difficulty_caption(P: Params, described: str) -> str:
    return (f"The base per difficulty, {P.difficulty_n} samples at T = 1 on {P.problems} test "
            f"problems each. {described}")


def mix_text(table: pd.DataFrame, P: Params) -> str:
    """The rule's verdict on the training mix, in words."""
    ok = fits(table, P)
    admitted = [difficulty_name(d, t) for (d, t), v in ok.items() if v]
    outside = [difficulty_name(d, t) for d, t in P.levels if not ok.get((d, t), False)]
    return (f"By the rule (Pass@1 at least {100 * P.min_pass1:g} %, Pass@{P.difficulty_n} at "
            f"most {100 * P.max_passn:g} %, the base mid-curve at a k of at least "
            f"{P.min_mid_k}), the difficulties that fit are: "
            f"{', '.join(admitted) or 'none'}. "
            + ("Every level of the training mix fits." if not outside else
               f"Of the training mix, {', '.join(outside)} does not fit: its result below "
               f"says less about a boundary than the rule asks."))


def formats_caption(P: Params, described: str) -> str:
    return (f"The base under each candidate prompt, {P.format_n} samples at T = 1 on the first "
            f"{P.format_problems} training problems of each training level (problems no "
            f"evaluation reads). Boxed-only Pass@k grades the last \\boxed{{}} alone, as the "
            f"paper does. {described}")


def format_text(table: pd.DataFrame, Q: Params) -> str:
    """The format rule's outcome (``chapter.chosen``; ``Q``: the settled parameters), in
    words: the prompt taken, the share of the base's right answers it boxes, and the grader
    the chapter therefore trains and evaluates with."""
    share = boxed_share(table)
    rule = (f"The rule, fixed before any run: a prompt qualifies where the base boxes at least "
            f"{100 * Q.min_boxed:g} % of its right answers on the training levels, and of "
            f"those the one with the highest boxed-only Pass@1 is taken.")
    if Q.boxed_only:
        return (f"{rule} The prompt *{Q.prompt}* boxes {share.get(Q.prompt, float('nan')):.1f} "
                f"% of the base's right answers, so this chapter trains and grades with the "
                f"paper's grader: the last `\\boxed{{}}` alone.")
    best = share.fillna(0.0)
    return (f"{rule} No prompt qualified: the most any boxes is {best.max():.1f} % "
            f"(*{best.idxmax()}*). This chapter keeps the lenient grader (the last "
            f"`\\boxed{{}}`, else the last integer) under the prompt *{Q.prompt}*, and its "
            f"rewards are not the paper's.")


def grader_text(Q: Params) -> str:
    """The grading rule these results were graded under (``Params.boxed_only``)."""
    if Q.boxed_only:
        return ("The grader counts an answer right when the last `\\boxed{}` of the completion "
                "holds the sum, as the paper grades; a completion without one is wrong "
                "(`boxed_only: true`). Of the answers counted right, the share that was boxed "
                "(all of them) and the Pass@1 of the boxed answers (mean over seeds):")
    return ("The grader counts an answer right when the last `\\boxed{}` of the completion "
            "holds the sum or, where the completion has no `\\boxed{}`, when its last integer "
            "does (the fallback). The paper grades the boxed answer alone (`boxed_only: true` "
            "grades so, and trains on that reward). Of the answers counted right, the share "
            "that was boxed, the share the fallback found, and the Pass@1 a boxed-only grader "
            "would give (mean over seeds):")


def sources_text(sources: pd.DataFrame, Q: Params) -> str:
    """What ``chapter.answer_sources`` says of the rewards, in words: the largest share of right
    answers that the base and the trained models boxed, and the largest Pass@1 a boxed-only
    grader would give each (per setting and level, mean over seeds); "" under ``boxed_only``,
    where every right answer is boxed."""
    if Q.boxed_only:
        return ""
    means = sources.groupby(["setting", "benchmark", "model"])[
        ["boxed, of the right", "Pass@1, boxed only"]].mean().reset_index()
    base = means["model"] == BASE
    most = {who: (100 * part["boxed, of the right"].max(), 100 * part["Pass@1, boxed only"].max())
            for who, part in (("base", means[base]), ("trained", means[~base]))}
    (b_box, b_pass), (t_box, t_pass) = most["base"], most["trained"]
    text = (f"Of its right answers the base boxed at most {b_box:.1f} % and the trained models "
            f"at most {t_box:.1f} % (per setting and level, mean over seeds); the fallback found "
            f"the rest. A boxed-only grader, as the paper grades, gives the base a Pass@1 of at "
            f"most {b_pass:.1f} % and the trained models at most {t_pass:.1f} %.")
    if max(b_box, t_box) < 50:
        G = training_params(Q).num_generations
        text += (" Most of this chapter's rewards are rewards the paper's grader would not give: "
                 "its results are those of a lenient reward, and under the paper's a group of "
                 f"{G} rollouts would seldom hold a rewarded sample.")
    return text


def how_to_run(P: Params, cost: str) -> str:
    """The page of a build where ``P.source`` has not made this chapter's results on this
    machine: what the chapter would show, the commands that make them in parts and what it
    cost when last measured (``cost``: ``report.measured_cost``'s sentence)."""
    return (f"The `{P.source}` profile has not run this chapter on this machine (or ran it with "
            f"other code), so this page shows none of its results. Run, it shows the base's "
            f"answers under candidate chat prompts (the share it boxes, and the prompt and "
            f"grader chosen from them), its Pass@k per difficulty, the protocol committed "
            f"before the runs, the training dynamics of GRPO and GRPO-N over seeds "
            f"(Figure 2's layout), Pass@k along training at the mid-curve k and of the base and "
            f"the trained models (Table 2's layout), the entropies (Table 4's), where the grader "
            f"found the answers it counted, the boundary problem by problem, and the verdict on "
            f"each of the paper's claims that this model can decide, with its cost as the sum "
            f"of its parts. It runs in parts of a few hours (the lab notebook's section 52): "
            f"the first registers the protocol, which is committed before any run begins:\n\n"
            f"    make part PROFILE={P.source} HOURS=0.5   # phase 1: the protocol\n"
            f"    git add release/{P.source} && git commit -m 'protocol'\n"
            f"    make part PROFILE={P.source} HOURS=0.5   # again, committing release/ after "
            f"each, until it finishes\n\nthen `make publish` draws this chapter from the "
            f"release without computing anything." + cost)


def verdict_rule() -> str:
    """What a verdict of the closing chapter weighs, with the level of its interval."""
    return (f"A verdict weighs an effect over seeds, its {100 * CONFIDENCE:g} % interval and a "
            "declared margin.")


def claim_rows(R: Results, last: int) -> list[dict]:
    """The rows this chapter records, written from its decisions: the training claims from the
    held-out dynamics at the look where the protocol stopped (``rl.readings.verdict_rows``,
    ``looked``) and the large-k and entropy claims of every level at the look where each
    stopped (``decisions``), each level's checks named by its level and each claim by its look;
    none where the protocol refused a run (``R.judged`` None)."""
    if R.judged is None:
        return []
    rows, K = [], len(R.protocol.record["looks"])
    for claim, levels in decisions(R.P, R.recs, R.judged).items():
        i = R.judged.stops[claim]
        look = R.judged.looks[i]
        at = (f" [look {i + 1} of {K}: {look['seeds']} seeds, intervals at "
              f"{100 * look['confidence']:.1f} %]")
        said = [(b, row) for b, d in levels for row in comparison_rows({claim: d})]
        if claim == "ood":  # one harder level, read once
            rows.append({**said[0][1], "ours": said[0][1]["ours"] + at})
            continue
        rows.append({"claim": claim, "ours": "; ".join(r["ours"] for _, r in said) + at,
                     **{key: [(f"{b}: {what}", v) for b, r in said for what, v in r[key]]
                        for key in ("checks", "also")}})
    S = looked(R)
    return reading_rows(verdict_rows(S.dynamics), S.dynamics) + rows


def protocol_text(R: Results) -> str:
    """The protocol in words: when it was registered and in which commit its results release
    first held it, its design, where it falls below issue 52's floor, and whether every run
    was admitted (or why the claims are not judged)."""
    r = R.protocol.record
    commit = (f"committed in `{R.protocol.commit[:12]}`" if R.protocol.commit else
              "not yet in any commit's results release")
    looks = ", ".join(f"{x['seeds']} seeds (bound {x['bound']:.2f}, intervals at "
                      f"{100 * x['confidence']:.1f} %)" for x in r["looks"])
    text = (f"The protocol was registered at {r['registered'][:16].replace('T', ' ')} UTC and "
            f"is {commit}. It fixes {len(r['seeds'])} seeds per algorithm of "
            f"{', '.join(r['algorithms'])}, {r['steps']} steps, held-out evaluation every "
            f"{r['eval_every']} steps, the probe ({r['probe']['samples']} samples of "
            f"{r['probe']['problems']} test problems every {r['probe']['every']} steps, read at "
            f"the mid-curve k {r['mid-curve k']}), the grader ({r['grader']}), and looks at "
            f"{looks}: {r['spending']}.")
    if r["below the floor"]:
        text += f" Below issue 52's floor: {'; '.join(r['below the floor'])}."
    refused = R.protocol.refused
    if refused:
        run, why = next(iter(refused.items()))
        return text + (f" {len(refused)} of {len(R.protocol.admitted)} runs are not admitted, so "
                       f"no claim is judged (first: {run}, {why}).")
    how = ("began from a commit whose results release held it" if r["committed"] else
           "recorded its hash after its registration (by the store's times alone: this "
           "profile does not ask for the commit)")
    return text + f" Every one of the {len(R.protocol.admitted)} runs {how}."


def grader_name(boxed_only: bool) -> str:
    """A grader by name: the paper's (the boxed answer alone) or the lenient one."""
    return "paper's grader (boxed only)" if boxed_only else "lenient grader"


def judgement_text(R: Results) -> str:
    """Why the claims are not judged (a run the protocol refused), or what the table below
    them holds."""
    if R.judged is None:
        return (f"No claim is judged: {len(R.protocol.refused)} run(s) began without the "
                "protocol committed before them (above).")
    return (f"Each claim under the {grader_name(R.P.boxed_only)}, which trained and decides, "
            f"at the look where the protocol's rule stopped it, with the "
            f"{grader_name(not R.P.boxed_only)}'s verdict on the same samples at the same look "
            "beside it:")


def cost_text(provenance: dict | None, ledger: list[dict]) -> str:
    """This profile's cost as the sum of its release's parts (``release.provenance``) and the
    parts started (``release.ledger_of``)."""
    if not provenance:
        return "No part of this profile has been released yet."
    open_ = sum(1 for row in ledger if row.get("end") is None)
    return (f"Its cost is the sum of its {len(provenance['parts'])} released parts: "
            f"{provenance['wall_s'] / 3600:.2f} hours of wall time, from the results' own files"
            + (f"; {open_} part(s) started are not closed (cut off, or running)." if open_
               else "."))
