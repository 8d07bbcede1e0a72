"""The mechanism chapter's tables for people: the runs judged or not, the dips per way, and
the decisions."""
from __future__ import annotations

import pandas as pd

from rlvr_dynamics.chapters.mechanism import Reading
from rlvr_dynamics.chapters.mechanism.sentences import dip_row
from rlvr_dynamics.chapters.sentences import seeds_text
from rlvr_dynamics.regimes.mechanism import rare_path


def ways_table(R: Reading | None) -> pd.DataFrame | None:
    """Per way: its dip of P(stepwise) on the log scale with its interval and signs, each
    seed's value, and what the rule reads (lost, kept, undecided)."""
    if R is None:
        return None
    rows = [{"way": w, "dip": dip_row(d), "per seed": seeds_text(d.values),
             "censored": "yes" if d.censored else "", "reading": rare_path(d)}
            for w, d in R.dips.items()]
    return pd.DataFrame(rows).set_index("way")


def decisions_table(R: Reading | None) -> pd.DataFrame | None:
    """The decisions (``mechanism.verdict_rows``) as the page shows them."""
    if R is None:
        return None
    v = R.verdicts.copy()
    v["decided"] = v["decided"].map({True: "decided", False: "shown, not judged"})
    return v.set_index("decision")


def runs_table(R: Reading | None) -> pd.DataFrame | None:
    """Every run: whether the plan was registered and committed before it, and replays."""
    if R is None:
        return None
    shown = R.runs.copy()
    for c in ("registered before", "committed before", "replay", "judged"):
        shown[c] = shown[c].map({True: "yes", False: "no", None: "no commit"})
    return shown.groupby(["way", "registered before", "committed before", "replay", "judged"]
                         )["seed"].agg(lambda s: ", ".join(map(str, s))).reset_index()
