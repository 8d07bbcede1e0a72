"""The chapter's power plan: how many seeds and test problems its claims need, sized on the
spread of its first runs and registered before the runs it sizes.

No stored run measures this chapter's claims under its chosen format (the earlier ones were
trained under another prompt and grader), so the plan is an *internal pilot*: the protocol
(``protocol``: the headline contrasts, their margins, the confidence, the pilot's size, the
largest design the budget allows) is written into the store before any run begins, and every
run records its content hash (``rl.registration``); the first ``pilot`` seeds of each
algorithm then train and are evaluated on every test problem, and the protocol's own rule
(``size``) reads from them the *variances* of each contrast (``power.components``: the seeds',
the problems', the rest), never its mean, and takes the fewest seeds, then problems, whose
predicted half-width is within every margin it can reach (``power.needed``), the largest design
where some margin cannot be reached. The design it chose is stored beside the protocol
(``sized``, once per pilot). Sizing on variances alone leaves the contrasts' error rates close
to those of a design fixed in advance (Wittes and Brittain, 1990, an internal pilot).

The headline contrasts (``CONTRASTS``), on each training level under the chapter's first
setting: each algorithm's Pass@1 gain over the base (``PASS1_MARGIN``), each algorithm's and
GRPO-N against GRPO's Pass@k at the base's mid-curve k (``PASSK_MARGIN``), and GRPO-N against
GRPO's answer entropy (``ANSWER_ENTROPY_MARGIN``).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from typing import Any, Sequence

import numpy as np
import pandas as pd

from rlvr_dynamics import power
from rlvr_dynamics.comparison.claims import ANSWER_ENTROPY_MARGIN, PASS1_MARGIN, PASSK_MARGIN
from rlvr_dynamics.comparison.metrics import entropy_problems, mid_curve, passk_problems
from rlvr_dynamics.rl.algorithms import BASE
from rlvr_dynamics.stats import CONFIDENCE
from rlvr_dynamics.store import Entry, config_key, read_json, results_dir, write_json

PROTOCOL = "protocol.json"


@dataclass(frozen=True)
class Contrast:
    """``a`` against ``b`` (model labels) in ``quantity`` (``QUANTITIES``), judged against
    ``margin``."""

    quantity: str
    a: str
    b: str
    margin: float

    @property
    def name(self) -> str:
        return f"{self.quantity}: {self.a} - {self.b}"


QUANTITIES = ("Pass@1", "mid-curve Pass@k", "answer entropy")
"""What the contrasts read, per problem of each evaluation (``per_problem``)."""


def contrasts(labels: Sequence[str]) -> list[Contrast]:
    """The headline contrasts for the trained algorithms ``labels`` (module docstring)."""
    out = [Contrast("Pass@1", m, BASE, PASS1_MARGIN) for m in labels]
    out += [Contrast("mid-curve Pass@k", m, BASE, PASSK_MARGIN) for m in labels]
    if {"GRPO", "GRPO-N"} <= set(labels):
        out += [Contrast("mid-curve Pass@k", "GRPO-N", "GRPO", PASSK_MARGIN),
                Contrast("answer entropy", "GRPO-N", "GRPO", ANSWER_ENTROPY_MARGIN)]
    return out


def per_problem(recs: dict[tuple, pd.DataFrame], ks: Sequence[int]) -> pd.DataFrame:
    """Every problem of every evaluation in ``recs`` (keyed setting, benchmark, model, seed) in
    each of ``QUANTITIES``: columns setting, benchmark, model, seed, problem, quantity, value."""
    p1 = passk_problems(recs, [1]).assign(quantity="Pass@1")
    mid = mid_curve(recs, ks).assign(quantity="mid-curve Pass@k")
    h = entropy_problems(recs).rename(columns={"answer entropy": "value"}).assign(
        quantity="answer entropy")
    return pd.concat([p1.rename(columns={"pass@k": "value"}).drop(columns="k"),
                      mid.rename(columns={"pass@k": "value"}).drop(columns="k"),
                      h.drop(columns="token entropy")], ignore_index=True)


def matrix(table: pd.DataFrame, quantity: str, model: str) -> np.ndarray:
    """One model's values of ``quantity`` in ``table`` (one setting and benchmark of
    ``per_problem``) as (seeds, problems), the problems in their order of first appearance
    (the base's repeats are its seeds)."""
    rows = table[(table["quantity"] == quantity) & (table["model"] == model)]
    problems = list(dict.fromkeys(table["problem"]))
    wide = rows.pivot_table(index="seed", columns="problem", values="value", aggfunc="mean",
                            dropna=False)
    return wide.reindex(columns=problems).to_numpy(float)


def size(table: pd.DataFrame, cs: Sequence[Contrast], seeds: Sequence[int],
         problems: Sequence[int], confidence: float = CONFIDENCE) -> pd.DataFrame:
    """Per contrast of ``cs`` on ``table`` (the pilot's ``per_problem`` rows of one setting and
    benchmark): its variance components, the design of ``seeds`` x ``problems`` that
    ``power.needed`` gives (NaN where none reaches the margin) and the half-width predicted at
    the largest design."""
    rows = []
    for c in cs:
        comp = power.components(matrix(table, c.quantity, c.a), matrix(table, c.quantity, c.b))
        need = power.needed(comp, c.margin, seeds, problems, confidence)
        rows.append({"contrast": c.name, "margin": c.margin, **asdict(comp),
                     "seeds needed": need.seeds if need else np.nan,
                     "problems needed": need.problems if need else np.nan,
                     "half-width at the largest design": power.half_width(
                         comp, max(seeds), max(problems), confidence)})
    return pd.DataFrame(rows).set_index("contrast")


def design(sizing: dict[str, pd.DataFrame], seeds: Sequence[int], problems: Sequence[int]
           ) -> tuple[int, int]:
    """The design the protocol takes from every level's ``size`` table: the most seeds, then
    the most problems, that any reachable contrast needs; the largest where a contrast
    reaches its margin at no design."""
    tables = list(sizing.values())
    if any(t["seeds needed"].isna().any() for t in tables):
        return max(seeds), max(problems)
    return (int(max(t["seeds needed"].max() for t in tables)),
            int(max(t["problems needed"].max() for t in tables)))


def entry(profile: str, what: dict[str, Any]) -> Entry:
    """The store entry of the protocol ``what`` under ``profile`` (this module's code)."""
    return Entry(results_dir(profile, "pretrained") / "plans" / config_key(what),
                 code=__name__)


def protocol(what: dict[str, Any], profile: str) -> dict[str, Any]:
    """The registered protocol ``what`` (the contrasts, margins, confidence, the pilot and the
    designs it may choose, the runs' settings), read back where it exists, else written now
    with the time (UTC): what every run records before it begins."""
    e = entry(profile, what)
    if not e.done:
        record = {"registered": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                  **what}
        write_json(e.begin(fresh=True) / PROTOCOL, record)
        e.finish({"registered": record["registered"]})
    return read_json(e.path / PROTOCOL)


def sized(what: dict[str, Any], profile: str, sizing: dict[str, pd.DataFrame],
          chosen: tuple[int, int], pilot: dict[str, str]) -> dict[str, Any]:
    """The protocol's sizing (per level, ``size``'s table) and the design it chose, stored
    beside it once per pilot (``pilot``: each pilot run's folder name -> the code
    fingerprint of its store entry; read back afterwards, never recomputed for the same pilot:
    the later runs follow it; a pilot trained again by other code sizes again)."""
    path = entry(profile, what).path / f"sized-{config_key(pilot)}.json"
    if not path.is_file():
        write_json(path, {"time": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                          "seeds": chosen[0], "problems": chosen[1],
                          "sizing": {b: t.reset_index().to_dict("records")
                                     for b, t in sizing.items()}})
    return read_json(path)
