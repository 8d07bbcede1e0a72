"""The paper's claims of Section 4 checked over seeds and problems (``stats``): Pass@1's gain,
the large-k and out-of-distribution claims (at the base's mid-curve k, the paper's k beside),
answer entropy and the case study, each a difference of means against a margin declared before
the runs; a check whose measurement could not have moved either way says why (``Check.why_not``)
and reads *cannot inform*; and the setting whose verdicts decide (the one that reaches the
base's rare path)."""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rlvr_dynamics import boundary, stats
from rlvr_dynamics.comparison.case import STEPWISE_SHARE
from rlvr_dynamics.rl.algorithms import ALGORITHMS, BASE
from rlvr_dynamics.verdicts import PAPER_ALGORITHMS

PASS1_MARGIN = 5.0
"""pass1_gain: the smallest Pass@1 gain over the base that counts (points; the paper's gains
on AMC 2023 are 25-30 points)."""
PASSK_MARGIN = 2.0
"""large_k, ood: how far below the base still "holds" it, and the smallest gap between two
algorithms that counts (points of Pass@k; the paper's GRPO-N - GRPO at AIME 2025 Pass@256 is
20 points)."""
ANSWER_ENTROPY_MARGIN = 0.05
"""answer_entropy: the smallest difference that counts (nats; the paper's GRPO-N - GRPO on
AMC 2023 is about 0.4 nats, Table 4)."""
CASE_MARGIN = 1.0
"""case_study: the smallest difference in the share of correct step-by-step samples with a
corrected step that counts (points)."""


def rare_path_support(recs: dict[tuple, pd.DataFrame], bench: str, hard: set[str], n: int
                      ) -> pd.Series:
    """Per setting, the share of ``bench``'s problems beyond the direct path (``hard``) that the
    base solves at least once in ``n`` samples (mean over its evaluations; its expectation from
    exact records): 0 when the setting's nucleus cuts the rare path off, so that no sample of
    the base can reach them."""
    out = {}
    for (setting, b, label, _), r in recs.items():
        if b == bench and label == BASE:
            solved = boundary.solved(r, n)
            out.setdefault(setting, []).append(solved[solved.index.isin(list(hard))].mean())
    return pd.Series({s: float(np.mean(v)) for s, v in out.items()}, name="rare-path support")


def supports(recs: dict[tuple, pd.DataFrame], benches: list[str], hard: set[str], n: int
             ) -> dict[str, dict[str, float]]:
    """setting -> benchmark of ``benches`` -> ``rare_path_support``."""
    per = {b: rare_path_support(recs, b, hard, n) for b in benches}
    return {s: {b: float(per[b][s]) for b in benches} for s in per[benches[0]].index}


def headline_setting(support: pd.Series) -> str:
    """The setting whose support reaches furthest into the base's rare path (the first listed
    on a tie): the one under which a shrinkage or expansion of the boundary can be seen."""
    return str(support.idxmax())


@dataclass(frozen=True)
class Check:
    """mean(values[a]) - mean(values[b]) over seeds against its margin (``effect``), and why
    its measurement could not have moved (``why_not``; "" when it could)."""

    a: str
    b: str
    effect: stats.Effect
    why_not: str = ""

    @property
    def verdict(self) -> str:
        """The effect's verdict, or ``stats.CANNOT_INFORM`` when ``why_not`` says why."""
        return stats.CANNOT_INFORM if self.why_not else self.effect.verdict


@dataclass(frozen=True)
class Claimed:
    """One claim under one setting: what it reads (``what``, in words), the values it reads
    (model -> one per seed), its checks, and checks shown beside them that do not decide it
    (``beside``: the paper's fixed k)."""

    what: str
    values: dict[str, np.ndarray]
    checks: list[Check]
    beside: list[Check] = field(default_factory=list)


def rows(long: pd.DataFrame, **where) -> pd.DataFrame:
    """The rows of ``long`` where every column of ``where`` holds its value."""
    for column, v in where.items():
        long = long[long[column] == v]
    return long


def values(long: pd.DataFrame, value: str, **where) -> dict[str, np.ndarray]:
    """model -> ``value`` per seed (its mean over problems where ``long`` holds one row per
    problem), of the rows where every column of ``where`` holds its value."""
    part = rows(long, **where)
    if "problem" in part:
        part = part.groupby(["model", "seed"], sort=False)[value].mean().reset_index()
    return {m: g[value].to_numpy(float) for m, g in part.groupby("model", sort=False)}


def problem_values(long: pd.DataFrame, value: str, **where) -> dict[str, np.ndarray]:
    """model -> ``value`` as an array (seeds, problems), problems in one order for every model
    (repeats of a problem averaged); empty where ``long`` holds no problems."""
    part = rows(long, **where)
    if "problem" not in part:
        return {}
    return {m: g.pivot_table(index="seed", columns="problem", values=value).to_numpy(float)
            for m, g in part.groupby("model", sort=False)}


def check(v: dict[str, np.ndarray], a: str, b: str, margin: float,
          kind: str = stats.SUPERIORITY, why_not: str = "",
          problems: dict[str, np.ndarray] | None = None,
          confidence: float = stats.CONFIDENCE) -> Check | None:
    """mean(v[a]) - mean(v[b]), its interval (at ``confidence``) over seeds and problems where
    ``problems`` (``problem_values``) holds both (``stats.two_sample_problems``), else over
    seeds (``stats.two_sample``); None if either model is missing."""
    if a not in v or b not in v:
        return None
    if problems and a in problems and b in problems:
        return Check(a, b, stats.two_sample_problems(problems[a], problems[b], margin, kind,
                                                     confidence), why_not)
    return Check(a, b, stats.two_sample(v[a], v[b], margin, kind, confidence), why_not)


_check_at = check


def _present(checks: list[Check | None]) -> list[Check]:
    return [c for c in checks if c is not None]


def can_move(v: dict[str, np.ndarray], what: str, support: float | None = None) -> str:
    """Why checks against the base's ``v`` (a share in per cent) cannot inform: the rare path
    cut off (``support``: the share of the problems beyond the direct path that the base
    reaches under the setting; 0: none), or the base's mean at its floor or ceiling
    (``stats.outside``); "" when they can."""
    if support is not None and support <= 0:
        return "under this setting the base reaches none of the problems beyond the direct path"
    return stats.outside(float(v[BASE].mean()), f"the base's {what}") if BASE in v else ""


def pinned(v: dict[str, np.ndarray], a: str, b: str) -> str:
    """Why ``a`` against ``b`` (shares in per cent) cannot inform: both means at the same
    floor or ceiling (``stats.bound``), where no difference can show; "" otherwise."""
    if a not in v or b not in v:
        return ""
    x, y = float(v[a].mean()), float(v[b].mean())
    side = stats.bound(x)
    return (f"{a} ({x:.1f} %) and {b} ({y:.1f} %) both sit at the {side}"
            if side and side == stats.bound(y) else "")


def mid_k(mid: pd.DataFrame, **where) -> int:
    """The base's mid-curve k (``metrics.mid_curve``) of the rows of ``mid`` where ``where``
    holds."""
    return int(rows(mid, **where)["k"].iloc[0])


def setting_checks(passk: pd.DataFrame, mid: pd.DataFrame, entropy: pd.DataFrame, setting: str,
                   test: str, ood: str, last: int, support: dict[str, float] | None = None,
                   confidence: float = stats.CONFIDENCE) -> dict[str, Claimed]:
    """claim -> what it reads and its checks, for the Pass@k and entropy claims under
    ``setting``: Pass@1 on ``test`` (pass1_gain), Pass@k at the base's mid-curve k (``mid``:
    ``metrics.mid_curve``) on ``test`` (large_k) and on ``ood`` (ood), with Pass@``last`` (the
    paper's k) beside them, and answer entropy on ``test`` (answer_entropy). The tables hold one
    row per problem (``metrics.passk_problems``, ``metrics.entropy_problems``): each interval
    covers the problems as well as the seeds (``check``). A check against the base cannot
    inform where the base's share sits at its floor or ceiling or, for the large-k claims,
    where ``support`` (benchmark -> share of the problems beyond the direct path that the base
    reaches under ``setting``) is 0. Every interval is at ``confidence`` (a look of a
    group-sequential protocol reads its own, ``power.nominal_confidence``)."""
    support = support or {}
    check = functools.partial(_check_at, confidence=confidence)
    read = {"p1": (passk, "pass@k", dict(benchmark=test, k=1)),
            "pm": (mid, "pass@k", dict(benchmark=test)), "om": (mid, "pass@k", dict(benchmark=ood)),
            "pk": (passk, "pass@k", dict(benchmark=test, k=last)),
            "po": (passk, "pass@k", dict(benchmark=ood, k=last)),
            "h": (entropy, "answer entropy", dict(benchmark=test))}
    v = {key: values(t, col, setting=setting, **w) for key, (t, col, w) in read.items()}
    pp = {key: problem_values(t, col, setting=setting, **w) for key, (t, col, w) in read.items()}
    km, ko = mid_k(mid, setting=setting, benchmark=test), mid_k(mid, setting=setting, benchmark=ood)
    algos = [m for m in v["p1"] if m in PAPER_ALGORITHMS]
    ni = stats.NON_INFERIORITY
    why1 = can_move(v["p1"], f"Pass@1 on {test}")
    why = {key: can_move(v[key], f"Pass@{k} on {b}", support.get(b))
           for key, k, b in (("pm", km, test), ("om", ko, ood), ("pk", last, test),
                             ("po", last, ood))}

    def large_k(key: str) -> list[Check]:
        x, p, w = v[key], pp[key], why[key]
        return _present([check(x, "GRPO-N", BASE, PASSK_MARGIN, ni, w, p),
                         check(x, "GSPO-N", BASE, PASSK_MARGIN, ni, w, p),
                         check(x, BASE, "GRPO", PASSK_MARGIN, ni, w, p),
                         check(x, "GRPO-N", "GRPO", PASSK_MARGIN,
                               why_not=pinned(x, "GRPO-N", "GRPO"), problems=p)])

    def ood_checks(key: str) -> list[Check]:
        x, p, w = v[key], pp[key], why[key]
        return _present([check(x, "GRPO-N", BASE, PASSK_MARGIN, ni, w, p),
                         check(x, BASE, "GRPO", PASSK_MARGIN, why_not=w, problems=p)])

    return {
        "pass1_gain": Claimed(f"{test} Pass@1", v["p1"], _present(
            [check(v["p1"], m, BASE, PASS1_MARGIN, why_not=why1, problems=pp["p1"])
             for m in algos])),
        "large_k": Claimed(f"{test} Pass@{km} (the base's mid-curve k)", v["pm"],
                           large_k("pm"), large_k("pk")),
        "ood": Claimed(f"{ood} Pass@{ko} (the base's mid-curve k)", v["om"],
                       ood_checks("om"), ood_checks("po")),
        "answer_entropy": Claimed(f"{test} answer entropy", v["h"], _present(
            [check(v["h"], "GRPO-N", "GRPO", ANSWER_ENTROPY_MARGIN, problems=pp["h"]),
             check(v["h"], "GSPO-N", "GSPO", ANSWER_ENTROPY_MARGIN, problems=pp["h"])])),
    }


NEGATIVE_ONLY = tuple(a.label for a in ALGORITHMS.values() if a.reinforce is not None)
"""The REINFORCE-style negative-sample algorithms GRPO-N is set against (``negative_checks``):
NSR and W-REINFORCE."""


def negative_checks(passk: pd.DataFrame, mid: pd.DataFrame, setting: str, test: str, ood: str,
                    last: int) -> dict[str, list[Check]]:
    """Is GRPO-N more than negative sample reinforcement? Under ``setting``, per model of
    ``NEGATIVE_ONLY`` that was trained: GRPO-N above it (superiority, ``PASSK_MARGIN``, over
    seeds and problems) at Pass@k on ``test`` at the base's mid-curve k (the deciding check),
    and beside it Pass@1 and Pass@``last`` on ``test`` and the mid-curve Pass@k on ``ood``; a
    check where both sit at the same floor or ceiling cannot inform (``pinned``). The rule was
    declared before the runs that carry NSR and W-REINFORCE (lab notebook 34)."""
    km, ko = mid_k(mid, setting=setting, benchmark=test), mid_k(mid, setting=setting, benchmark=ood)
    read = {f"{test} Pass@{km} (mid-curve)": (mid, dict(benchmark=test)),
            f"{test} Pass@1": (passk, dict(benchmark=test, k=1)),
            f"{test} Pass@{last}": (passk, dict(benchmark=test, k=last)),
            f"{ood} Pass@{ko} (mid-curve)": (mid, dict(benchmark=ood))}
    out: dict[str, list[Check]] = {}
    for what, (table, where) in read.items():
        v = values(table, "pass@k", setting=setting, **where)
        p = problem_values(table, "pass@k", setting=setting, **where)
        checks = _present([check(v, "GRPO-N", other, PASSK_MARGIN,
                                 why_not=pinned(v, "GRPO-N", other), problems=p)
                           for other in NEGATIVE_ONLY])
        if checks:
            out[what] = checks
    return out


def case_check(bangs: pd.DataFrame, setting: str, test: str) -> Claimed | None:
    """The case study under ``setting`` on ``test``: GRPO's share of correct step-by-step
    samples with a corrected step (%, ``case.STEPWISE_SHARE``) above GRPO-N's; it cannot inform
    where a seed of either gives no mass to correct step-by-step answers; None without both."""
    b = {m: 100 * x for m, x in values(bangs, STEPWISE_SHARE, setting=setting,
                                       benchmark=test).items()}
    empty = [m for m in ("GRPO", "GRPO-N") if m in b and np.isnan(b[m]).any()]
    why = (f"{' and '.join(empty)} gives no mass to correct step-by-step answers in some seed"
           if empty else "")
    c = check(b, "GRPO", "GRPO-N", CASE_MARGIN, why_not=why)
    return None if c is None else Claimed(f"{test}, share of correct step-by-step samples with "
                                          f"a corrected step ({setting})", b, [c])


@dataclass(frozen=True)
class Decided:
    """A claim as the closing chapter decides it: what it reads and its values (``claimed``,
    under ``setting``), the checks that vote (``votes``) and those shown beside them
    (``beside``), each with where it was read ("" where there is one place only)."""

    claimed: Claimed
    setting: str
    votes: list[tuple[Check, str]]
    beside: list[tuple[Check, str]] = field(default_factory=list)


def decided(passk: pd.DataFrame, mid: pd.DataFrame, entropy: pd.DataFrame, bangs: pd.DataFrame,
            settings: list[str], headline: str, test: str, ood: str, bang_setting: str,
            last: int, support: dict[str, dict[str, float]] | None = None,
            confidence: float = stats.CONFIDENCE) -> dict[str, Decided]:
    """claim -> its decision: the Pass@k and entropy claims scored under every setting
    (``setting_checks``: the large-k ones at the base's mid-curve k, ``mid``, with k = ``last``
    beside them; ``support``: setting -> benchmark -> the share of the problems beyond the
    direct path that the base reaches), the checks under ``headline`` voting and the rest
    beside them; and the case study's corrected steps under ``bang_setting`` (``case_check``).
    A claim without a check under ``headline`` is left out. The Pass@k and entropy claims'
    intervals are at ``confidence``."""
    support = support or {}
    scored = {s: setting_checks(passk, mid, entropy, s, test, ood, last, support.get(s),
                                confidence) for s in settings}
    out = {}
    for claim, c in scored[headline].items():
        if c.checks:
            beside = [(x, f"{headline}, k = {last}") for x in c.beside]
            for s in settings:
                if s != headline:
                    other = scored[s][claim]
                    beside += ([(x, s) for x in other.checks]
                               + [(x, f"{s}, k = {last}") for x in other.beside])
            out[claim] = Decided(c, headline, [(x, headline) for x in c.checks], beside)
    case = case_check(bangs, bang_setting, test)
    if case is not None:
        out["case_study"] = Decided(case, "", [(x, "") for x in case.checks])
    return out
