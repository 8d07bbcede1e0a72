"""The training chapter's tables as displayed: the registered algorithms (where each takes its
importance ratio, its weight on positive samples, its advantage, in words) and this run's
settings beside the paper's Appendix C.2 (every value written as text; the numbers of the
held-out curves stay with the chapter's computations: ``held_out_table``, ``by_path_table``)."""
from __future__ import annotations

import pandas as pd

from rlvr_dynamics.chapters.style import number, with_legend
from rlvr_dynamics.chapters.training import Params, paper_settings
from rlvr_dynamics.rl.algorithms import ALGORITHMS


def algorithm_table() -> pd.DataFrame:
    """The registered algorithms (``rl.algorithms``): where each takes its importance
    ratio, its weight lambda on positive samples, and its advantage (group-relative, or
    REINFORCE-style mu r - (1 - r) for NSR and W-REINFORCE)."""
    return pd.DataFrame([{"algorithm": a.label, "importance ratio": a.importance_sampling_level,
                          "λ (weight on positive samples)": a.positive_weight,
                          "advantage": ("group-relative" if a.reinforce is None else
                                        f"{a.reinforce:g} r - (1 - r), no group baseline")}
                         for a in ALGORITHMS.values()]).set_index("algorithm")


def settings_table(T: Params) -> pd.DataFrame:
    """This run's settings beside the paper's (``paper_settings``)."""
    paper = paper_settings()
    return pd.DataFrame({f"this run ({T.profile})": [getattr(T, k) for k in paper],
                         "paper (Appendix C.2)": list(paper.values())},
                        index=list(paper)).astype(str)


HELD_OUT = {"accuracy_base": ("acc. base", "greedy accuracy of the base on the held-out problems"),
            "accuracy_end": ("acc. end", "the same at the end of training"),
            "entropy_base": ("H base", "token entropy of the base on them, nats"),
            "entropy_min": ("H lowest", "the lowest held-out entropy along training"),
            "step_of_min": ("at step", "the step it was reached"),
            "entropy_end": ("H end", "the held-out entropy at the end"),
            "reward_end": ("reward end", "mean reward over the last quarter of the steps"),
            "sd accuracy_end": ("sd acc. end", "standard deviation over seeds of acc. end"),
            "sd entropy_end": ("sd H end", "standard deviation over seeds of H end")}
"""The held-out table's short column labels and what each means."""


def held_out_table(table: pd.DataFrame):
    """``chapter.held_out_table`` for the page: short labels named in a legend under it,
    three significant digits, the step a whole number."""
    return with_legend(table, HELD_OUT).format(number)
