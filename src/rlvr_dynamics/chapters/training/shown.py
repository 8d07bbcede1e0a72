"""The training chapter's tables as displayed: the registered algorithms (where each takes its
importance ratio, its weight on positive samples, its advantage, in words) and this run's
settings beside the paper's Appendix C.2 (every value written as text; the numbers of the
held-out curves stay with the chapter's computations: ``held_out_table``, ``by_path_table``)."""
from __future__ import annotations

import pandas as pd

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
