"""The pretrained chapter's tables as displayed: the base under each candidate prompt, the base per difficulty with the rule's verdict
on each, the protocol's looks and rules, Tables 1 and 4 over seeds (shared with the
reproduction chapter: ``chapters.shown``), where the grader found the right answers, the claims
under both graders and the parts that made the results (styled with ``style.styled`` and captioned with
the settings; the numbers are the chapter's ``difficulty``, ``fits`` and ``answer_sources``)."""
from __future__ import annotations

import pandas as pd
from IPython.display import Markdown

from rlvr_dynamics.chapters.pretrained import Params, Results, fits
from rlvr_dynamics.chapters.pretrained import sentences
from rlvr_dynamics.chapters.shown import entropy_tables, passk_tables  # noqa: F401 (the page's)
from rlvr_dynamics.chapters.style import grouped, styled


def difficulty_table(table: pd.DataFrame, P: Params, described: str):
    """``difficulty``'s table with the rule's verdict on each difficulty (``fits``)."""
    return styled(table.join(fits(table, P)), decimals=1,
                  caption=sentences.difficulty_caption(P, described))


def formats_table(table: pd.DataFrame, P: Params, described: str):
    """``chapter.formats``: per prompt and training level, the right answers and shares in %,
    the two graders' Pass@k grouped."""
    n = P.format_n
    names = {"boxed, of the right": "boxed, of the right", "Pass@1": "lenient: Pass@1",
             f"Pass@{n}": f"lenient: Pass@{n}", "Pass@1, boxed only": "paper's: Pass@1",
             f"Pass@{n}, boxed only": f"paper's: Pass@{n}",
             "cut at the budget (%)": "cut at the budget"}
    return styled(grouped(table.rename(columns=names)), decimals=1,
                  caption=sentences.formats_caption(P, described)).format(
        "{:.0f}", subset=[("", "right answers")])


def sources_table(sources: pd.DataFrame, described: str):
    """``chapter.answer_sources`` per setting, benchmark and model: shares in %, mean over
    seeds."""
    columns = ["right", "boxed, of the right", "fallback, of the right", "Pass@1, boxed only"]
    means = sources.groupby(["setting", "benchmark", "model"], sort=False)[columns].mean()
    return styled(100 * means, decimals=1,
                  caption=f"Where the grader found the right answers (%), mean over seeds. "
                          f"{described}")


def protocol_table(R: Results):
    """The protocol's looks: seeds per algorithm, information fraction, bound, the confidence
    of the intervals read there; and each rule in words below."""
    r = R.protocol.record
    looks = pd.DataFrame(r["looks"]).rename(columns={
        "seeds": "seeds per algorithm", "fraction": "information",
        "confidence": "interval confidence"}).set_index("seeds per algorithm")
    return styled(looks, decimals=3, caption=f"The protocol's looks: {r['spending']}.")


def rules_table(R: Results):
    """The protocol's rules in words, and each claim's margin."""
    r = R.protocol.record
    rows = pd.DataFrame([{"rule": k, "margin": r["margins"].get(k, ""), "what it says": v}
                         for k, v in r["rules"].items()]).set_index("rule")
    return styled(rows, caption="The rules that judge each claim, registered with the protocol.")


def claims_shown(R: Results, table: pd.DataFrame, beside: dict[str, str]) -> list:
    """The claims' verdicts under the chapter's grader with the other grader's beside
    (``chapter.beside_outcomes``, at the same looks; the training claims read the training
    reward alone), or the words that say why none is judged."""
    words = Markdown(sentences.judgement_text(R))
    if R.judged is None:
        return [words]
    other = [beside.get(c, "(the training reward's)") for c in table.index]
    return [words, table[["ours", "verdict"]].assign(**{sentences.grader_name(
        not R.P.boxed_only): other})]


def parts_table(provenance: dict | None):
    """The released parts (``release.provenance``): commit, start, end, hours, CPU."""
    if not provenance:
        return Markdown("")
    parts = pd.DataFrame(provenance["parts"]).assign(
        hours=lambda t: t["wall_s"] / 3600, commit=lambda t: t["commit"].str[:12]
    ).set_index("part")[["commit", "start", "end", "hours", "cpu", "cores", "avx512"]]
    return styled(parts, decimals=2, caption="The parts that made this chapter's results "
                                             "(the results release's manifest).")
