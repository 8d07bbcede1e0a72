"""The pretrained chapter's tables as displayed: the base under each candidate prompt, the base per difficulty with the rule's verdict
on each, Tables 1 and 4 over seeds (shared with the reproduction chapter: ``chapters.shown``),
and where the grader found the right answers (styled with ``style.styled`` and captioned with
the settings; the numbers are the chapter's ``difficulty``, ``fits`` and ``answer_sources``)."""
from __future__ import annotations

import pandas as pd
from IPython.display import Markdown

from rlvr_dynamics.chapters.pretrained import Params, Results, fits
from rlvr_dynamics.chapters.pretrained import sentences
from rlvr_dynamics.chapters.shown import entropy_tables, passk_tables  # noqa: F401 (the page's)
from rlvr_dynamics.chapters.style import grouped, styled, with_legend


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


PLAN_LEGEND = {
    "margin": ("margin", "the contrast's margin (points; nats for the entropy)"),
    "half-width at the largest design": ("half-width", "the interval's half-width that the "
                                         "pilot's spread predicts at the most seeds and problems "
                                         "the plan may take"),
    "seeds needed": ("seeds", "the fewest seeds a side that bring it within the margin "
                     "(blank: none does)"),
    "problems needed": ("problems", "with those seeds, the fewest test problems"),
    "sd seeds, a": ("sd seed (a)", "the spread of the first model's runs (standard deviation)"),
    "sd seeds, b": ("sd seed (b)", "the same of the second (the base's: its repeats)"),
    "sd rest, a": ("sd rest (a)", "what varies with both seed and problem, sampling included"),
    "sd rest, b": ("sd rest (b)", "the same of the second"),
    "sd problems": ("sd problems", "the spread over problems of the two models' difference"),
}


def plan_shown(R: Results) -> list:
    """The plan's section: its table where this build sized one, and its words."""
    words = Markdown(sentences.plan_text(R))
    return [words] if R.plan is None else [plan_table(R.plan.sized), words]


def plan_table(sized: dict):
    """The plan's sizing (``chapter.planned``): per training level and headline contrast, the
    pilot's spread as standard deviations, the design that reaches the margin and the
    half-width at the largest design."""
    rows = pd.concat({sentences.level_name(b): pd.DataFrame(t).set_index("contrast")
                      for b, t in sized["sizing"].items()}, names=["level", "contrast"])
    sd = {f"sd {what}": rows[name] ** 0.5 for what, name in (
        ("seeds, a", "seed_a"), ("seeds, b", "seed_b"), ("rest, a", "residual_a"),
        ("rest, b", "residual_b"), ("problems", "problem"))}
    table = rows[["margin", "half-width at the largest design", "seeds needed",
                  "problems needed"]].assign(**sd)
    return with_legend(table, PLAN_LEGEND, unwrapped=True).format(
        "{:.2f}", subset=[s for long, (s, _) in PLAN_LEGEND.items()
                          if long not in ("seeds needed", "problems needed")]).format(
        "{:.0f}", subset=["seeds", "problems"], na_rep="")
