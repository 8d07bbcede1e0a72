"""The pretrained chapter's tables as displayed: the base per difficulty with the rule's verdict
on each, Tables 1 and 4 over seeds (shared with the reproduction chapter: ``chapters.shown``),
and where the grader found the right answers (styled with ``style.styled`` and captioned with
the settings; the numbers are the chapter's ``difficulty``, ``fits`` and ``answer_sources``)."""
from __future__ import annotations

import pandas as pd

from rlvr_dynamics.chapters.pretrained import Params, fits
from rlvr_dynamics.chapters.pretrained import sentences
from rlvr_dynamics.chapters.shown import entropy_tables, passk_tables  # noqa: F401 (the page's)
from rlvr_dynamics.chapters.style import styled


def difficulty_table(table: pd.DataFrame, P: Params, described: str):
    """``difficulty``'s table with the rule's verdict on each difficulty (``fits``)."""
    return styled(table.join(fits(table, P)), decimals=1,
                  caption=sentences.difficulty_caption(P, described))


def sources_table(sources: pd.DataFrame, described: str):
    """``chapter.answer_sources`` per setting, benchmark and model: shares in %, mean over
    seeds."""
    columns = ["right", "boxed, of the right", "fallback, of the right", "Pass@1, boxed only"]
    means = sources.groupby(["setting", "benchmark", "model"], sort=False)[columns].mean()
    return styled(100 * means, decimals=1,
                  caption=f"Where the grader found the right answers (%), mean over seeds. "
                          f"{described}")
