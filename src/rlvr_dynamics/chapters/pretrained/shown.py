"""The pretrained chapter's tables as displayed: the base under each candidate prompt, the base per difficulty with the rule's verdict
on each, Tables 1 and 4 over seeds (shared with the reproduction chapter: ``chapters.shown``),
and where the grader found the right answers (styled with ``style.styled`` and captioned with
the settings; the numbers are the chapter's ``difficulty``, ``fits`` and ``answer_sources``)."""
from __future__ import annotations

import pandas as pd

from rlvr_dynamics.chapters.pretrained import Params, fits
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
