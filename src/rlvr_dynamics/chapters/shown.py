"""Tables for people that several chapters show: Tables 1 and 4 over seeds in the paper's
layouts (Pass@k with the best of each column marked, its standard deviations, the entropies),
captioned with the settings they were measured under (the reproduction chapter's and the
pretrained chapter's; their numbers are ``comparison.metrics``').

Presentation only (``imports.is_presentation``), like ``style``."""
from __future__ import annotations

from typing import Any, Sequence

import pandas as pd

from rlvr_dynamics.chapters.sentences import table1_caption, time_text
from rlvr_dynamics.chapters.style import mark_best, number, rounded, styled
from rlvr_dynamics.comparison.metrics import table1, table4
from rlvr_dynamics.comparison.models import Setting
from rlvr_dynamics.regimes.toy_mapping import OWN


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


# --- the paper's scenario in the LM (the scenario, ladder and regime map chapters) ---------------

def dial_table(dial: pd.DataFrame):
    """``path_prior.dial_check``'s table (``regimes.dial``) with its numbers for people
    (``style.number``)."""
    return dial.style.format(number)


def prediction_inputs(registered: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """The toy's inputs as each regime's base gave them (``prediction.register``, regime ->
    record): π0 of the three paths, the rewards r, G, and when the record was written."""
    return pd.DataFrame([{"regime": regime,
                          "π0 (direct / stepwise / guess)":
                              " / ".join(f"{x:.3g}" for x in rec["inputs"]["pi0"]),
                          "r (direct / stepwise / guess)":
                              " / ".join(f"{x:.2f}" for x in rec["inputs"]["r"]),
                          "G": rec["inputs"]["G"],
                          "registered (UTC)": rec["registered"].replace("+00:00", "")}
                         for regime, rec in registered.items()]).set_index("regime")


def prediction_table(registered: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """The registered predictions, one row per regime, optimizer and update: the depth and
    step of the dip of the toy's mean π(a2), its median time to crossover and the share of toy
    seeds that crossed (the inputs: ``prediction_inputs``)."""
    rows = []
    for regime, rec in registered.items():
        for opt, by_label in rec["predictions"].items():
            if opt == OWN:
                continue
            for label, p in by_label.items():
                rows.append({"regime": regime, "toy": f"{opt}, {label}",
                             "dip of π(a2)": rounded("{:+.0f} %", 100 * p['toy dip']),
                             "at step": time_text(p["toy dip step"]),
                             "crossover (median)": time_text(p["toy expansion"]),
                             "seeds crossed": f"{100 * p['toy expanded']:.0f} %"})
    return pd.DataFrame(rows).set_index(["regime", "toy"])

