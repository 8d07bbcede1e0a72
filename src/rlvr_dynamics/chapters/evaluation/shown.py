"""The evaluation chapter's tables as displayed: the estimator's check, the grader's check per
benchmark, our Pass@k in Table 1's layout with its marks and the paper's Tables 1 and 2 quoted
with the same marking rule, our entropies in Table 4's layout and the paper's Table 4 (styled
with ``style.styled`` and ``style.mark_best``, captioned by ``sentences``; the numbers are
``rlvr_dynamics.measure``'s, ``paper_tables``' and the chapter's checks)."""
from __future__ import annotations

import pandas as pd
from IPython.display import Markdown

from rlvr_dynamics import measure as ev
from rlvr_dynamics import paper_tables
from rlvr_dynamics.chapters.evaluation import EstimatorChecks, Params, deviation_table
from rlvr_dynamics.chapters.evaluation.sentences import (NO_GRADER_CHECK, OURS_PASSK,
                                                         PAPER_ENTROPY, PAPER_PASSK,
                                                         deviation_caption, entropy_caption)
from rlvr_dynamics.chapters.style import mark_best, styled


# --- the estimator and the grader --------------------------------------------------------------

def deviations(check: EstimatorChecks):
    """The estimator's second check as a table: mean estimate minus 1 - (1 - p)^k."""
    return styled(deviation_table(check), 4, deviation_caption(check))


def grader_report(report: pd.DataFrame | None):
    """The grader's check per benchmark, or a line saying that it did not run."""
    return Markdown(NO_GRADER_CHECK) if report is None else report


# --- Tables 1, 2 and 4: ours and the paper's ---------------------------------------------------

def passk_marks(summary: pd.DataFrame):
    """Our Pass@k in Table 1's layout, with its marks (``style.mark_best``)."""
    return mark_best(ev.passk_table(summary), caption=OURS_PASSK)


def paper_passk(table: int):
    """The paper's Table ``table`` (1 or 2), quoted, with our marking rule."""
    return mark_best(paper_tables.passk_table(table), caption=PAPER_PASSK.format(table=table))


def entropies(P: Params, records: dict[tuple[str, str], pd.DataFrame]):
    """Our entropies in Table 4's layout."""
    return styled(ev.entropy_table(records), 3, entropy_caption(P))


def paper_entropies():
    """The paper's Table 4, quoted."""
    return styled(paper_tables.entropy_table(), 3, PAPER_ENTROPY)
