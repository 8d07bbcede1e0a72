"""The closing chapter's table: each quantitative claim of the paper, the paper's numbers, ours,
and a verdict backed by the spread over seeds.

A chapter that measures a claim records it (``record``): one row per claim with our number as
text, a verdict and the checks behind it. The closing chapter (``notebooks/verdict.md``) joins
the rows of every executed chapter with ``CLAIMS``, the paper's side; a claim that no executed
chapter measured shows as "not measured". Each check is an effect over seeds with a Student-t
interval and a declared margin (``stats``: *replicates*, *opposite*, *no effect within the
margin*, *inconclusive*, *inconclusive (too few seeds)*); ``combine`` turns a claim's checks
into its verdict.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import pandas as pd

from rlvr_dynamics import stats
from rlvr_dynamics.paper_tables import entropy_table, passk_table
from rlvr_dynamics.imports import task_scope
from rlvr_dynamics.store import Entry, read_json, results_dir, write_json

VERDICTS = ("replicates", "partly", "does not replicate", stats.OPPOSITE, stats.NO_EFFECT,
            stats.UNDECIDED, stats.FEW_SEEDS, stats.CANNOT_INFORM, "not measured")
"""A claim's verdict: every check replicates; some do; none does and some are opposite or show
no effect; every check is opposite; every check shows no effect within its margin; the
intervals are too wide to say; too few seeds for any interval; no check could inform it (each
was decided *cannot inform* before it was scored); no chapter measured it. Checks that cannot
inform do not vote among the others."""


PAPER_ALGORITHMS = ("GRPO", "GRPO-N", "GSPO", "GSPO-N")
"""The algorithms (labels) the paper's claims are about (Section 4): any other a build trains
(NSR, W-REINFORCE) is shown beside them and never votes on a claim."""


@dataclass(frozen=True)
class Claim:
    """One of the paper's claims: what it says, where, and the paper's own numbers."""

    text: str
    source: str
    paper: str


def _p(bench: str, model: str, k: int) -> str:
    return f"{passk_table(1).loc[(bench, model), k]:g}"


def _h(metric: str, model: str, bench: str = "AMC 2023") -> str:
    return f"{entropy_table().loc[(metric, model), bench]:.3f}"


def claims() -> dict[str, Claim]:
    """The claims in the order of the paper, with its numbers read from ``paper_tables``."""
    q = "Qwen2.5-Math-7B"
    return {
        "toy_two_stages": Claim(
            "In the toy bandit, the policy first concentrates on the best sampled action "
            "(exploitation: π(a1) rises), then the rare best action takes over (exploration: "
            "π(a2) rises, π(a1) falls), and the relative negative shifts from a3 to a1.",
            "Section 3.2, Figure 1", "qualitative (curves)"),
        "competitive": Claim(
            "All four algorithms reach competitive greedy accuracy on held-out problems.",
            "Section 4.2, Figure 2", "qualitative (curves)"),
        "entropy_collapse": Claim(
            "GRPO collapses the held-out entropy: it ends lowest of the four.",
            "Section 4.2, Figure 2; Table 4",
            f"token entropy, AMC 2023: base {_h('Token-Level Entropy', q)}, GRPO "
            f"{_h('Token-Level Entropy', q + ' GRPO')}, GRPO-N "
            f"{_h('Token-Level Entropy', q + ' GRPO-N')}"),
        "entropy_recovery": Claim(
            "Under GRPO-N, GSPO and GSPO-N the entropy first falls, then rises; under GRPO-N it "
            "ends above the base model's.", "Section 4.2, Figure 2", "qualitative (curves)"),
        "lm_two_stages": Claim(
            "In a language model too, RLVR goes through both stages: the boundary first shrinks "
            "(exploitation of the explored path), then expands once the rare, better path is "
            "taken up (exploration).", "Sections 1 and 3.2 (the two-stage view), Section 4",
            "qualitative (argued from the toy and from Pass@k at the end of training)"),
        "pass1_gain": Claim(
            "RLVR raises Pass@1 well above the base, for all four algorithms.", "Table 1",
            f"AMC 2023 Pass@1: base {_p('AMC 2023', 'Base Model', 1)}, GRPO "
            f"{_p('AMC 2023', 'GRPO', 1)}, GRPO-N {_p('AMC 2023', 'GRPO-N', 1)}"),
        "large_k": Claim(
            "At large k the -N variants hold or beat the base, while GRPO only matches or "
            "shrinks it (GRPO-N above GRPO at k = 256).", "Section 4.2, Table 1",
            f"AIME 2025 Pass@256: base {_p('AIME 2025', 'Base Model', 256)}, GRPO "
            f"{_p('AIME 2025', 'GRPO', 256)}, GRPO-N {_p('AIME 2025', 'GRPO-N', 256)}, GSPO-N "
            f"{_p('AIME 2025', 'GSPO-N', 256)}"),
        "ood": Claim(
            "Out of distribution, GRPO-N keeps the base's Pass@256 while GRPO falls below it.",
            "Section 4.2, Table 1 (MMLU-Pro, ARC-c)",
            f"MMLU-Pro Pass@256: base {_p('MMLU-Pro', 'Base Model', 256)}, GRPO "
            f"{_p('MMLU-Pro', 'GRPO', 256)}, GRPO-N {_p('MMLU-Pro', 'GRPO-N', 256)}"),
        "answer_entropy": Claim(
            "The -N variants keep a higher answer-level entropy than GRPO and GSPO.",
            "Appendix C.5, Table 4",
            f"AMC 2023 answer entropy: GRPO {_h('Answer-Level Entropy', q + ' GRPO')}, GRPO-N "
            f"{_h('Answer-Level Entropy', q + ' GRPO-N')}, GSPO "
            f"{_h('Answer-Level Entropy', q + ' GSPO')}, GSPO-N "
            f"{_h('Answer-Level Entropy', q + ' GSPO-N')}"),
        "case_study": Claim(
            "GRPO reinforces a recurring erroneous step carried by correct answers; GRPO-N does "
            "not.", "Figure 3, Appendix C.6", "one problem, qualitative"),
    }


def combine(checks: Sequence[str]) -> str:
    """A claim's verdict from its checks' verdicts (``stats.CHECK_VERDICTS``, ``VERDICTS``)."""
    checks = list(checks)
    if not checks:
        raise ValueError("a claim needs at least one check")
    unknown = sorted(set(checks) - set(stats.CHECK_VERDICTS))
    if unknown:
        raise ValueError(f"unknown check verdict(s) {unknown}; known: {stats.CHECK_VERDICTS}")
    checks = [c for c in checks if c != stats.CANNOT_INFORM] or [stats.CANNOT_INFORM]
    for every in (stats.REPLICATES, stats.OPPOSITE, stats.NO_EFFECT, stats.FEW_SEEDS,
                  stats.CANNOT_INFORM):
        if all(c == every for c in checks):
            return every
    if stats.REPLICATES in checks:
        return "partly"
    if stats.OPPOSITE in checks or stats.NO_EFFECT in checks:
        return "does not replicate"
    return stats.FEW_SEEDS if stats.FEW_SEEDS in checks else stats.UNDECIDED  # the rest: too wide


def scored(chapter: str, rows: Sequence[dict]) -> list[dict]:
    """``chapter``'s rows (``claim``, ``ours``, ``checks``: a list of (what, verdict) pairs that
    decide the verdict, and optionally ``also``: checks shown beside them that do not, e.g.
    under another sampling setting), each with the verdict its checks decide (``combine``)."""
    known = claims()
    out = []
    for row in rows:
        if row["claim"] not in known:
            raise ValueError(f"{chapter}: unknown claim {row['claim']!r}; known: {list(known)}")
        checks = [list(c) for c in row["checks"]]
        out.append({"claim": row["claim"], "chapter": chapter, "ours": row["ours"],
                    "checks": checks, "also": [list(c) for c in row.get("also", [])],
                    "verdict": combine([v for _, v in checks])})
    return out


def chapter_table(chapter: str, rows: Sequence[dict]) -> pd.DataFrame:
    """``scored`` rows as a table, one row per claim."""
    return pd.DataFrame(scored(chapter, rows)).set_index("claim")


def record(profile: str, chapter: str, rows: Sequence[dict]) -> pd.DataFrame:
    """Keep ``chapter``'s verdicts (``scored``) for the closing chapter; returns them as a
    table (``chapter_table``)."""
    out = scored(chapter, rows)
    entry = _entry(profile, chapter)
    write_json(entry.begin(fresh=True) / "verdicts.json", out)
    entry.finish()
    return chapter_table(chapter, rows)


def _entry(profile: str, chapter: str) -> Entry:
    """A chapter's verdicts, made by that chapter's module (``chapters.<chapter>``)."""
    module = f"rlvr_dynamics.chapters.{chapter}"
    return Entry(results_dir(profile, "verdicts") / chapter, code=module,
                 tasks=task_scope(module))


def recorded(profile: str) -> dict[str, list[dict]]:
    """chapter -> its verdict rows, for every chapter whose verdicts its current code made."""
    out = {}
    for folder in sorted(p for p in results_dir(profile, "verdicts").iterdir() if p.is_dir()):
        if _entry(profile, folder.name).done:
            out[folder.name] = read_json(folder / "verdicts.json")
    return out


def measured(profile: str) -> dict[str, dict]:
    """claim -> the row that a chapter recorded for it under ``profile`` (``record``: its
    ``chapter``, ``ours``, ``checks``, ``also`` and ``verdict``). A claim that several chapters
    recorded gets one row: their checks together, decided as one (``combine``), their numbers
    side by side and every chapter named (in the order of their folders)."""
    out: dict[str, dict] = {}
    for chapter_rows in recorded(profile).values():
        for r in chapter_rows:
            o = out.get(r["claim"])
            if o is None:
                out[r["claim"]] = r
                continue
            checks = o["checks"] + r["checks"]
            out[r["claim"]] = {**o, "chapter": f"{o['chapter']}, {r['chapter']}",
                               "ours": f"{o['ours']}; {r['ours']}", "checks": checks,
                               "also": o["also"] + r["also"],
                               "verdict": combine([v for _, v in checks])}
    return out


def table(profile: str) -> pd.DataFrame:
    """Every claim: the paper's side and, where a chapter recorded it under ``profile``, ours."""
    rows = measured(profile)
    out = []
    for key, c in claims().items():
        r = rows.get(key, {})
        out.append({"claim": c.text, "paper": f"{c.paper} ({c.source})",
                    "ours": r.get("ours", "-"), "verdict": r.get("verdict", "not measured"),
                    "checks": "; ".join(f"{what}: {v}" for what, v in r.get("checks", [])),
                    "not deciding": "; ".join(f"{what}: {v}" for what, v in r.get("also", [])),
                    "chapter": r.get("chapter", "-")})
    return pd.DataFrame(out, index=list(claims()))


# --- the front page's findings, written from the table -----------------------------------------

def findings(table: pd.DataFrame, profile: str) -> str:
    """The front page's account of this build (markdown), generated from ``table``
    (``verdicts.table``): how many claims got each verdict, then one line per claim."""
    counts = table["verdict"].value_counts()
    tally = ", ".join(f"{counts[v]} {v}" for v in VERDICTS if v in counts)
    lines = [f"Of the paper's {len(table)} claims, this build (`{profile}` profile) reads: "
             f"{tally}. Claim by claim (the closing chapter gives the numbers and the checks "
             "behind each verdict):", ""]
    lines += [f"* {row['claim']} — **{row['verdict']}**"
              + (f" (chapter: {row['chapter']})" if row["chapter"] != "-" else "")
              for _, row in table.iterrows()]
    return "\n".join(lines) + "\n"


def prose_mismatches(text: str, table: pd.DataFrame) -> list[str]:
    """The claims of ``table`` whose verdict ``text`` (a page's text) does not state next to
    the claim as ``findings`` writes it: empty when the prose follows the table."""
    bad = []
    for key, row in table.iterrows():
        at = text.find(row["claim"])
        if at < 0:
            bad.append(f"{key}: claim not on the page")
            continue
        stated = text[at + len(row["claim"]):].split("\n", 1)[0]
        if f"— {row['verdict']}" not in stated.replace("**", ""):
            bad.append(f"{key}: the page says {stated.strip()!r}, the table {row['verdict']!r}")
    return bad
