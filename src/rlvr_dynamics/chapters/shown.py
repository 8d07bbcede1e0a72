"""Tables for people that several chapters show: Tables 1 and 4 over seeds in the paper's
layouts (Pass@k with the best of each column marked, its standard deviations, the entropies),
captioned with the settings they were measured under (the reproduction chapter's and the
pretrained chapter's; their numbers are ``comparison.metrics``').

Presentation only (``imports.is_presentation``), like ``style``."""
from __future__ import annotations

from typing import Sequence

import pandas as pd

from rlvr_dynamics.chapters.sentences import table1_caption
from rlvr_dynamics.chapters.style import mark_best, styled
from rlvr_dynamics.comparison.metrics import table1, table4
from rlvr_dynamics.comparison.models import Setting


# --- Tables 1 and 4 over seeds -----------------------------------------------------------------

def passk_tables(passk: pd.DataFrame, settings: dict[str, Setting], described: str) -> list:
    """Table 1's layout per setting: the mean over seeds with the best of each column in bold
    and the second underlined (``style.mark_best``), then the standard deviations."""
    return [t for name, s in settings.items() for t in (
        mark_best(table1(passk, name), decimals=1,
                  caption=table1_caption(name, s, described)),
        styled(table1(passk, name, "sd"), decimals=1,
               caption=f"standard deviation over seeds, {name} setting"))]


def entropy_tables(entropy: pd.DataFrame, settings: Sequence[str], described: str) -> list:
    """Table 4's layout per setting (nats, mean over seeds)."""
    return [styled(table4(entropy, name), decimals=3,
                   caption=f"entropies (nats), {name} setting, mean over seeds. {described}")
            for name in settings]
