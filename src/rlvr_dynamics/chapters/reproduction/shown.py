"""The reproduction chapter's tables as displayed: the sampled shares against the exact ones,
Tables 1 and 4 over seeds (shared with the pretrained chapter: ``chapters.shown``), the base's
ceiling and mid-curve k, token entropy by path, the steps of takeover per seed, the case
study's corrected steps, the rare path's support and the negative-only checks (styled with
``style.styled`` and captioned, or their cells written for people: a takeover that never came
is "≥ steps"; the numbers come from ``comparison.metrics``, ``comparison.claims``,
``comparison.case`` and ``paths``)."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from IPython.display import Markdown, display

from rlvr_dynamics.chapters.reproduction import Check, seed_means, side_by_side
from rlvr_dynamics.chapters.reproduction import sentences
from rlvr_dynamics.chapters.shown import entropy_tables, passk_tables  # noqa: F401 (the page's)
from rlvr_dynamics.chapters.style import styled


# --- Tables 1 and 4, the base's ceiling and mid-curve k ----------------------------------------

def agreement_table(check: pd.DataFrame | None, n: int, described: str):
    """``metrics.agreement`` for the page (None where the build made no such check)."""
    if check is None:
        return None
    return styled(check, decimals=2, caption=sentences.agreement_caption(n, described))


def ceiling_table(ceiling: pd.DataFrame, described: str):
    """``metrics.ceiling`` for the page."""
    return styled(ceiling, decimals=1, caption=f"The base's ceiling. {described}")


def mid_curve_table(mid: pd.DataFrame, described: str):
    """``metrics.mid_curve`` per setting and benchmark: the base's mid-curve k and every
    model's Pass@k there (mean and sd over seeds)."""
    g = seed_means(mid, ["pass@k"], ["k"]).groupby(["setting", "benchmark", "k", "model"],
                                                   sort=False)["pass@k"]
    table = pd.DataFrame({"mean": g.mean(), "sd": g.std(ddof=1)}).unstack("model")
    table.columns = [f"{m} {stat}" for stat, m in table.columns]
    order = [c for m in dict.fromkeys(mid["model"]) for c in (f"{m} mean", f"{m} sd")]
    return styled(table[order], decimals=1,
                  caption="Pass@k (%) at the k where the base's is closest to 50 % (its "
                          f"setting's and benchmark's): mean and sd over seeds. {described}")


def by_path_table(by_path: pd.DataFrame, described: str):
    """``metrics.entropy_by_path``, mean over seeds: rows (setting, benchmark, model), columns
    each path's share and token entropy (paths no completion took left out)."""
    mean = by_path.groupby(["setting", "benchmark", "model", "path"], sort=False)[
        ["share", "token entropy"]].mean()
    taken = mean.groupby("path", sort=False)["share"].max()
    wide = mean.unstack("path").reindex(columns=[p for p in taken.index if taken[p] > 0],
                                        level="path")
    return styled(wide, decimals=3, caption=f"Token entropy (nats) by path and each path's "
                                            f"share, mean over seeds. {described}")


# --- the two stages inside the LM: the knob, the case study ------------------------------------

def fmt_takeover(t: float, steps: int) -> str:
    """A step of takeover; one that never came shows as "≥ ``steps``" (the run's length)."""
    return f"≥ {steps}" if np.isinf(t) else f"{t:g}"


def case_study(recs: dict[tuple, pd.DataFrame], setting: str, benchmark: str, hard: set[str],
               samples: int, chosen: dict[str, list], runs: dict[str, Any]) -> None:
    """The case study (Figure 3's counterpart) where GRPO and GRPO-N both ran: the problem on
    which their first seeds differ most (``chapter.side_by_side``), in words and side by
    side; nothing otherwise."""
    if not {"GRPO", "GRPO-N"} <= set(runs):
        return
    problem, side = side_by_side(recs, setting, benchmark, "GRPO", "GRPO-N", hard, samples)
    display(Markdown(sentences.case_text(problem, chosen[benchmark], hard)), side)


def takeover_table(T: Any, steps: dict[tuple[str, int], list[float]]) -> pd.DataFrame:
    """``paths.takeover_steps`` as a table: one row per (algorithm, G), one column per seed
    (``T``: the training chapter's parameters)."""
    return pd.DataFrame({f"{label}, G = {g}": [fmt_takeover(t, T.steps) for t in v]
                         for (label, g), v in steps.items()},
                        index=[f"seed {s}" for s in T.seeds]).T.rename_axis(
        "step at which the stepwise path first carries half of the rollouts")


def corrected_table(means: pd.DataFrame):
    """``case.bang_means`` for the page."""
    return styled(means, decimals=2,
                  caption="share of samples with a corrected step (%), mean over seeds")


def support_table(support: pd.Series, headline: str):
    """``claims.rare_path_support`` as percentages, the headline setting named."""
    return support.to_frame().style.format("{:.0%}").set_caption(
        f"headline setting: {headline}")


# --- the negative-only checks ------------------------------------------------------------------

def negative_table(checks: dict[str, list[Check]], setting: str) -> pd.DataFrame | None:
    """``claims.negative_checks`` as a table: per quantity under ``setting`` (the first
    decides) and algorithm GRPO-N is set against, the difference with its interval (points),
    the verdict, and why the check cannot inform where it cannot; None when the build
    trained neither NSR nor W-REINFORCE."""
    if not checks:
        return None
    rows = [{"quantity": f"{what}{' (decides)' if i == 0 else ''}", "against": c.b,
             "GRPO-N - it (points)": c.effect.text("{:+.2f}"), "verdict": c.verdict,
             "why it cannot inform": c.why_not or "-"}
            for i, (what, cs) in enumerate(checks.items()) for c in cs]
    table = pd.DataFrame(rows, columns=["quantity", "against", "GRPO-N - it (points)",
                                        "verdict", "why it cannot inform"])
    return table.set_index(["quantity", "against"]).rename_axis(
        index={"quantity": f"{setting} setting"})
