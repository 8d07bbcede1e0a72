"""The theory chapter's tables as displayed: the group result per G, Proposition 1's error per
step size and its cosines, Eq. 2's and B.5's gaps to autograd, and the closing table of every
check (styled: numbers through ``style.number``, so rounding residue shows as 0; the numbers are
the chapter's checks, ``GroupCheck``, ``Prop1Check``, ``Eq2Check``, and its ``collect``ed
record)."""
from __future__ import annotations

from typing import Any

import pandas as pd
from pandas.io.formats.style import Styler

from rlvr_dynamics.chapters.style import number
from rlvr_dynamics.chapters.theory import (EQ2_GAP, MC_SE, Z_MAX, Eq2Check, GroupCheck, Params,
                                           Prop1Check)


def group_table(group: GroupCheck) -> Styler:
    """The group result's table (``GroupCheck.table``), one row per G."""
    return group.table.style.format(number)


def proposition1_table(check: Prop1Check) -> Styler:
    """Proposition 1's error per step size (``Prop1Check.table``)."""
    return check.table.style.format(number).hide(axis="index")


def cosines_table(check: Prop1Check) -> Styler:
    """The cosines of ``Prop1Check.cosines``, to five decimals (they differ near 1)."""
    return check.cosines.style.format("{:.5f}")


def equation2_table(eq2: Eq2Check) -> Styler:
    """Eq. 2's and B.5's gaps to autograd (``Eq2Check.table``)."""
    return eq2.table.style.format(number)


def summary_rows(record: dict[str, Any], P: Params) -> pd.DataFrame:
    """One row per result checked: what was checked, what theory expects, what was measured
    (read from the ``collect``ed record alone)."""
    s, p1 = record, record["prop1"]
    gap = [row[EQ2_GAP] for row in record["eq2"]["table"]]
    rows = [
        ("Lemma 1", "symbolic: d log π/dz − (I − eπᵀ)", "0",
         "simplifies to 0" if s["lemma1_symbolic_zero"] else "FAILS"),
        ("Lemma 1", f"autograd vs formula, {P.draws} draws (float64)", "rounding",
         f"{s['lemma1_autograd_max_error']:.1e}"),
        ("Remark 2", "other actions gaining probability after a rare positive sample",
         "none (paper)", str(s["remark2_gainers_after_rare_positive"])),
        ("Theorem 1", "symbolic, and exact sum over actions", "0",
         f"{s['theorem1_enumeration_max_error']:.1e}"),
        ("Theorem 1", "Monte Carlo error slope in N", "−0.5", f"{s['theorem1_mc_slope']:.3f}"),
        ("group (1 − 1/G)", f"Monte Carlo slope, G = {P.group_sizes[0]}", "−0.5",
         f"{s['group_mc_slope']:.3f}"),
        ("group (1 − 1/G)", f"max |MC − closed form| / SE, G in {P.group_sizes}",
         f"< {Z_MAX:g}", f"{max(row[MC_SE] for row in s['group']):.2f}"),
        ("Proposition 1", "error slope in η", "2", f"{p1['slope']:.3f}"),
        ("Proposition 1", "error ratio at the smallest η halving", "4",
         f"{p1['halving_ratios'][-1]:.3f}"),
        ("Eq. 2", "relative gap to autograd, ratios ≠ 1", "float32 rounding", f"{gap[0]:.1e}"),
        ("B.5 (GRPO-N)", "relative gap to autograd", "float32 rounding", f"{gap[1]:.1e}"),
    ]
    return pd.DataFrame(rows, columns=["result", "check", "expected", "measured"])


def summary_table(record: dict[str, Any], P: Params) -> Styler:
    """The closing table (``summary_rows``), without its index."""
    return summary_rows(record, P).style.hide(axis="index")
