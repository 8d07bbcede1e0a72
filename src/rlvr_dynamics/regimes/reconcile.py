"""What changed between cpu-map and the ladder (issue 51, item 1), read from its registered runs.

cpu-map (commit 272038a) saw the 0.02 arm's GRPO cross at steps 25, 30, 25; the ladder's R4
(9417b20), the same nominal run, crossed in none of 5 runs by step 120. A 2x2 of code x base
bytes, trained on one machine, decided it (``docs/registrations/map-ladder-reconcile.md``, its
design and rules, then ``map_ladder_reconcile.py``, its commands, each committed before any of
its runs; the script's output is ``map-ladder-reconcile-outcome.txt`` beside them). Here: that
output read back (``cells``), the cause the registered rule of its section 4 names (``cause``)
and the commits that first hold each file (``registered``).
"""
from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd

from rlvr_dynamics import REPO

FOLDER = Path("docs") / "registrations"
DESIGN, SCRIPT, OUTCOME = (FOLDER / name for name in (
    "map-ladder-reconcile.md", "map_ladder_reconcile.py", "map-ladder-reconcile-outcome.txt"))

MAP_LIKE, LADDER_LIKE = "cpu-map-like", "ladder-like"
"""The two readings the script gives a cell (section 4): cpu-map-like, at least 2 of 3 seeds
cross by step 60 and the mean change of P(stepwise) is at least +100 %; ladder-like, at least
2 of 3 never cross by step 120 and the mean change is at most +70 %; else neither."""

CELL = re.compile(r"^(?P<cell>[A-D])\.json: crossovers (?P<crossovers>\[.*?\]), change of "
                  r"P\(stepwise\) per seed (?P<change>\[.*?\]) \(mean (?P<mean>[+-]\d+)%\): "
                  r"(?P<reading>\S+)$")
BASE = re.compile(r"^\s+base (?P<base>[0-9a-f]+), refits \{'(?P<refit_of>[^']+)': "
                  r"'(?P<refit>[0-9a-f]+)'\}$")
FACTORS = re.compile(r"\(A, C: code of (?P<c0>\w+); B, D: code of (?P<c1>\w+); A, D: the "
                     r"(?P<x>[\w ]+)'s base bytes; B, C: the (?P<e>[\w ]+)'s\)")
MACHINE = re.compile(r"on Model name: (?P<machine>.*?), (?P<cores>\d+) cores.*; cells "
                     r"trained (?P<when>[\d:-]+ UTC [\d-]+)")


def _value(text: str) -> list[float]:
    """A printed list of numbers (``inf``: never crossed)."""
    return [float(x) for x in ast.literal_eval(text.replace("inf", "'inf'"))]


def cells(path: Path | None = None) -> pd.DataFrame:
    """One row per cell (A-D) of the outcome file at ``path``: its code (commit) and base
    bytes (the machine that pretrained them, sha256 prefix), the refit's sha256 prefix, each
    seed's crossover (inf: not by step 120) and change of P(stepwise) at the read step, their
    mean and the script's reading; ``attrs`` hold the machine and hours the cells ran.
    ``ValueError`` names the file and line that does not read."""
    path = path or REPO / OUTCOME
    lines = path.read_text().splitlines()
    head = " ".join(line.lstrip("# ") for line in lines if line.startswith("#"))
    factors, machine = FACTORS.search(head), MACHINE.search(head)
    if factors is None or machine is None:
        raise ValueError(f"{path}: its header names no code and base of each cell, or no machine")
    rows, row = [], None
    for n, line in enumerate(lines, 1):
        if line.startswith("#") or not line.strip():
            continue
        m, b = CELL.match(line), BASE.match(line)
        if m:
            cell = m["cell"]
            row = {"cell": cell, "code": factors["c0" if cell in "AC" else "c1"],
                   "base of": factors["x" if cell in "AD" else "e"],
                   "crossovers": _value(m["crossovers"]), "change": _value(m["change"]),
                   "mean change": float(m["mean"]) / 100, "reading": m["reading"]}
            rows.append(row)
        elif b and row is not None:
            row |= {"base": b["base"], "refit": b["refit"]}
        else:
            raise ValueError(f"{path}, line {n}: neither a cell nor its base: {line!r}")
    table = pd.DataFrame(rows).set_index("cell").sort_index()
    if list(table.index) != list("ABCD") or table["base"].isna().any():
        raise ValueError(f"{path}: holds cells {list(table.index)}, each with its base: "
                         "A, B, C and D are needed")
    table.attrs = {"machine": machine["machine"], "cores": int(machine["cores"]),
                   "when": machine["when"]}
    return table


def cause(table: pd.DataFrame) -> str:
    """The cause section 4's rule names from the cells' readings: ``"base"`` (C ladder-like, D
    cpu-map-like: the base's bytes), ``"code"`` (C cpu-map-like, D ladder-like), else
    ``"undecided"``; ``"no anchor"`` where A, cpu-map's code and base, does not read
    cpu-map-like (the runs then depend on more than the two factors)."""
    r = table["reading"]
    if r["A"] != MAP_LIKE:
        return "no anchor"
    if r["C"] == LADDER_LIKE and r["D"] == MAP_LIKE:
        return "base"
    if r["C"] == MAP_LIKE and r["D"] == LADDER_LIKE:
        return "code"
    return "undecided"


def crossed_by(table: pd.DataFrame, step: float) -> pd.Series:
    """How many of each cell's seeds crossed by ``step``."""
    return table["crossovers"].map(lambda c: int(np.sum(np.array(c) <= step)))


def registered(repo: Path = REPO) -> dict[str, str | None]:
    """The first commit (short hash) that holds each of the design, the script and the
    outcome; None where this checkout's history does not (a shallow clone)."""
    first = {}
    for name, file in (("design", DESIGN), ("script", SCRIPT), ("outcome", OUTCOME)):
        shown = subprocess.run(["git", "-C", str(repo), "log", "--reverse", "--format=%h", "--",
                                file.as_posix()], capture_output=True, text=True)
        commits = shown.stdout.split()
        first[name] = commits[0] if shown.returncode == 0 and commits else None
    return first
