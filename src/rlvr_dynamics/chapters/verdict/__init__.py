"""The closing chapter (``notebooks/verdict.md``): every claim of the paper, its numbers and
ours, with the verdict that a chapter of this build recorded (``rlvr_dynamics.verdicts``).

What the page reads from the verdict table: how many claims got each verdict (``tally``),
which claims measured on the testbed did not replicate (``not_replicated``), and the verdicts
other profiles recorded (``beside``: the real pretrained model's). The table as the
page shows it is styled by ``shown``; the checks behind each verdict and what we think decides
the claims that did not replicate are written by ``sentences``."""
from __future__ import annotations

import pandas as pd
from pydantic import model_validator

from rlvr_dynamics import verdicts
from rlvr_dynamics.chapters import CONFIGS, ChapterParams, ListOf, Text, require


class Params(ChapterParams):
    """``beside``: other profiles whose recorded verdicts the page shows beside this build's,
    each marked as that profile's (the real pretrained model's, ``cpu-smollm2``, and the
    profiles whose chapters the published book shows: ``book/publish.yaml``), where their
    chapters ran with this code."""

    beside: ListOf(Text, 0) = ["cpu-smollm2", "cpu-nsr", "cpu-map", "cpu-grid", "cpu-ladder",
                                "cpu-mechanism", "cpu-bases"]

    @model_validator(mode="after")
    def _known(self):
        for name in self.beside:
            require((CONFIGS / f"{name}.yaml").is_file(),
                    f"beside has {name!r}, which is not a profile (no configs/{name}.yaml)")
        return self


def beside(P: Params) -> dict[str, pd.DataFrame]:
    """Profile of ``P.beside`` (other than the build's own) -> the rows of its verdict table
    (``verdicts.table``) that one of its chapters recorded with this code (empty: none)."""
    out = {}
    for name in dict.fromkeys(P.beside):
        if name != P.profile:
            table = verdicts.table(name)
            out[name] = table[table["verdict"] != "not measured"]
    return out


TESTBED = ("toy_dynamics", "training", "reproduction", "scenario")
"""The chapters that measure on the toy and the sums model (not the pretrained-model chapter's
SmolLM2): the ones whose outcomes ``sentences.HYPOTHESES`` speak of."""


def tally(table: pd.DataFrame) -> pd.DataFrame:
    """How many claims of ``table`` (``verdicts.table``) got each verdict, in the order of
    ``verdicts.VERDICTS`` (zeros kept)."""
    return (table["verdict"].value_counts().reindex(verdicts.VERDICTS, fill_value=0)
            .to_frame("claims"))


def not_replicated(table: pd.DataFrame) -> list[str]:
    """The claims of ``table`` measured on the testbed (``TESTBED``; a table without a
    ``chapter`` column counts as the testbed's; one that several chapters measured, as the
    testbed's where one of them is) whose verdict is other than *replicates*."""
    return [claim for claim, row in table.iterrows()
            if row["verdict"] not in ("replicates", "not measured")
            and any(c in TESTBED for c in row.get("chapter", TESTBED[0]).split(", "))]
