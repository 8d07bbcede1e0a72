"""Tables 1 and 4 over seeds (Section 4.1, Appendix C.5): Pass@k and the entropies of every
evaluation in long form, their spread over seeds in the paper's layouts, the base's ceiling,
and the exact measurement beside n samples of the same model."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from rlvr_dynamics import measure as ev
from rlvr_dynamics.comparison.models import Model, evaluate_models
from rlvr_dynamics.exact import ENTROPY_SUFFIX
from rlvr_dynamics.passk import mid_curve_k
from rlvr_dynamics.tasks import sums
from rlvr_dynamics.rl.algorithms import BASE

Z = 4.5
"""``agreement``: a sampled share agrees with the exact p within this many combined standard
errors."""


KEYS = ["setting", "benchmark", "model", "seed"]
"""The columns that name one evaluation in the long tables."""


def passk_problems(recs: dict[tuple, pd.DataFrame], ks: Sequence[int]) -> pd.DataFrame:
    """Pass@k (%) of every problem of every evaluation: columns setting, benchmark, model,
    seed, problem, k, pass@k (one row per repeat of a problem where sampled records hold
    several)."""
    rows = []
    for (setting, bench, label, seed), r in recs.items():
        per = ev.passk_per_problem(r, ks)
        groups = r.drop_duplicates([c for c in ("repeat", "problem") if c in r])  # per's rows
        rows += [{"setting": setting, "benchmark": bench, "model": label, "seed": seed,
                  "problem": problem, "k": k, "pass@k": 100 * v}
                 for problem, values in zip(groups["problem"], per) for k, v in zip(ks, values)]
    return pd.DataFrame(rows)


def seed_means(long: pd.DataFrame, values: Sequence[str], by: Sequence[str] = ()) -> pd.DataFrame:
    """A per-problem long table averaged over its problems: one row per evaluation (and per
    ``by``), the mean of each of ``values`` (problems without a value left out)."""
    return long.groupby([*KEYS, *by], sort=False)[list(values)].mean().reset_index()


def passk_long(recs: dict[tuple, pd.DataFrame], ks: Sequence[int]) -> pd.DataFrame:
    """Pass@k (%) of every evaluation: columns setting, benchmark, model, seed, k, pass@k."""
    return seed_means(passk_problems(recs, ks), ["pass@k"], ["k"])


def base_mid_k(base: Sequence[pd.DataFrame], ks: Sequence[int], target: float = 50.0) -> int:
    """The k at which the base's Pass@k (mean over problems and over its evaluations ``base``)
    is closest to ``target`` per cent: any k from exact records (``passk.mid_curve_k`` of each
    problem's mean p), one of ``ks`` up to the fewest samples of a problem from sampled ones
    (the unbiased estimator needs k <= n)."""
    if all(ev.is_exact(r) for r in base):
        return mid_curve_k(np.mean([r["p"].to_numpy(float) for r in base], axis=0), target)
    n = min(int(ev.correct_counts(r)[0].min()) for r in base)
    usable = [k for k in ks if k <= n]
    curve = np.mean([ev.passk_per_problem(r, usable).mean(0) for r in base], axis=0)
    return int(usable[int(np.argmin(np.abs(100 * curve - target)))])


def mid_curve(recs: dict[tuple, pd.DataFrame], ks: Sequence[int]) -> pd.DataFrame:
    """Pass@k (%) of every problem of every evaluation at the base's mid-curve k
    (``base_mid_k``) of its setting and benchmark, where a change of the boundary can show
    either way: columns setting, benchmark, model, seed, problem, k, pass@k."""
    parts = []
    for setting, bench in dict.fromkeys((s, b) for s, b, _, _ in recs):
        here = {key: r for key, r in recs.items() if key[:2] == (setting, bench)}
        k = base_mid_k([r for (_, _, m, _), r in here.items() if m == BASE], ks)
        parts.append(passk_problems(here, [k]))
    return pd.concat(parts, ignore_index=True)


def entropy_problems(recs: dict[tuple, pd.DataFrame]) -> pd.DataFrame:
    """Answer- and token-level entropy (Appendix C.5) of every problem of every evaluation
    (NaN where a problem's completions are all empty): columns setting, benchmark, model,
    seed, problem, answer entropy, token entropy."""
    rows = []
    for (s, b, m, seed), r in recs.items():
        for problem, one in r.groupby("problem", sort=False):
            rows.append({"setting": s, "benchmark": b, "model": m, "seed": seed,
                         "problem": problem, "answer entropy": ev.answer_entropy_of(one),
                         "token entropy": ev.token_entropy_of(one)})
    return pd.DataFrame(rows)


def entropy_long(recs: dict[tuple, pd.DataFrame]) -> pd.DataFrame:
    """Answer- and token-level entropy (Appendix C.5) of every evaluation, averaged over
    problems, one row each."""
    return seed_means(entropy_problems(recs), ["answer entropy", "token entropy"])


def entropy_by_path(recs: dict[tuple, pd.DataFrame]) -> pd.DataFrame:
    """Token entropy split by the path a completion takes, so that a switch of path is told
    apart from a sharpening along one: per evaluation and path of ``sums.PATHS`` (exact records
    have no ``other``: its share reads 0), the path's share of the completions (mean over
    problems) and the token entropy of the completions on it
    (pooled over problems; NaN where none took it). From exact records the traces' masses and
    their entropy-weighted masses (``exact.ENTROPY_SUFFIX``), from sampled ones the samples'
    texts. Columns: setting, benchmark, model, seed, path, share, token entropy."""
    rows = []
    for (s, b, m, seed), r in recs.items():
        for path in sums.PATHS:
            if ev.is_exact(r):
                keys = (f"{path}_right", f"{path}_wrong")
                mass = np.array([sum(t.get(k, 0.0) for k in keys) for t in r["traces"]])
                weighted = sum(t.get(k + ENTROPY_SUFFIX, 0.0) for t in r["traces"]
                               for k in keys)
                share, total = float(mass.mean()), float(mass.sum())
            else:
                on = r["text"].astype(str).map(sums.path) == path
                share = float(on.groupby(r["problem"], sort=False).mean().mean())
                h = r.loc[on, "token_entropy"].dropna()
                weighted, total = float(h.sum()), float(len(h))
            rows.append({"setting": s, "benchmark": b, "model": m, "seed": seed, "path": path,
                         "share": share,
                         "token entropy": weighted / total if total > 0 else np.nan})
    return pd.DataFrame(rows)


def base_stepwise(recs: dict[tuple, pd.DataFrame], bench: str, setting: str
                  ) -> tuple[float, float]:
    """How often the base (all its evaluations) takes the stepwise path on ``bench`` under
    ``setting``, and how often it is right when it does: from exact records the traces'
    masses (mean over problems; pooled for the second), from sampled ones the samples' texts
    (``sums.path``)."""
    base = pd.concat([r for (s, b, m, _), r in recs.items()
                      if (s, b, m) == (setting, bench, BASE)])
    if ev.is_exact(base):
        right = np.array([t.get("stepwise_right", 0.0) for t in base["traces"]])
        taken = right + np.array([t.get("stepwise_wrong", 0.0) for t in base["traces"]])
    else:
        taken = (base["text"].astype(str).map(sums.path) == "stepwise").to_numpy(float)
        right = taken * base["correct"].to_numpy(float)
    return float(taken.mean()), float(right.sum() / taken.sum()) if taken.sum() else np.nan



def over_seeds(long: pd.DataFrame, value: str, by: Sequence[str]) -> pd.DataFrame:
    """Mean, standard deviation (ddof 1), min and max of ``value`` over seeds, per ``by``."""
    g = long.groupby(list(by), sort=False)[value]
    return pd.DataFrame({"mean": g.mean(), "sd": g.std(ddof=1), "min": g.min(), "max": g.max(),
                         "seeds": g.size()})


def table1(long: pd.DataFrame, setting: str, stat: str = "mean") -> pd.DataFrame:
    """Table 1's layout for one setting: rows (benchmark, model), columns k, Pass@k (%) as the
    ``stat`` ("mean" or "sd") over seeds."""
    part = long[long["setting"] == setting]
    return over_seeds(part, "pass@k", ["benchmark", "model", "k"])[stat].unstack("k")


def table4(long: pd.DataFrame, setting: str, stat: str = "mean") -> pd.DataFrame:
    """Table 4's layout for one setting: rows (metric, model), columns benchmarks."""
    part = long[long["setting"] == setting].melt(
        id_vars=["benchmark", "model", "seed"], value_vars=["answer entropy", "token entropy"],
        var_name="metric")
    table = over_seeds(part, "value", ["metric", "model", "benchmark"])[stat]
    return table.unstack("benchmark")


def ceiling(passk: pd.DataFrame, chosen: dict[str, list], hard: set[str], k: int
            ) -> pd.DataFrame:
    """Per benchmark of ``chosen`` (spec text -> its problems), the share of its problems that
    the direct path can solve (those not in ``hard``) beside the base's Pass@``k`` under each
    setting (%, mean over its evaluations): what the base can reach."""
    ids = {b: {p.id for p in ps} for b, ps in chosen.items()}
    out = pd.DataFrame({"problems the direct path can solve (%)":
                        {b: 100 * (1 - len(hard & ids[b]) / len(ids[b])) for b in ids}})
    for name in dict.fromkeys(passk["setting"]):
        out[f"base Pass@{k} (%), {name} setting"] = \
            table1(passk, name).xs(BASE, level="model")[k]
    return out


def agreement(exact_recs: dict[tuple, pd.DataFrame], sampled_recs: dict[tuple, pd.DataFrame],
              ks: Sequence[int], z: float = Z) -> pd.DataFrame:
    """The exact measurement beside n samples of the same model, per (setting, benchmark):
    mean Pass@k of each at ``ks``, and the share of problems whose sampled share of correct
    samples lies within ``z`` combined standard errors of the exact p (the exact part's: its
    standard error, or half its certified width where the tree closed)."""
    rows = []
    for key, s in sampled_recs.items():
        e = exact_recs[key]
        p = e["p"].to_numpy(float)
        se_e = np.where(e["se"] > 0, e["se"], (e["p_hi"] - e["p_lo"]) / 2)
        n, c = ev.correct_counts(s)
        share = c / n
        se_s = np.sqrt(np.clip(share * (1 - share), 1 / n, None) / n)
        row = {"setting": key[0], "benchmark": key[1], "model": key[2]}
        for k, a, b in zip(ks, ev.passk_per_problem(e, ks).mean(0),
                           ev.passk_per_problem(s, ks).mean(0)):
            row[f"Pass@{k} exact"], row[f"Pass@{k} sampled"] = 100 * a, 100 * b
        row[f"within {z:g} se"] = float(np.mean(np.abs(p - share) <= z * np.hypot(se_e, se_s)))
        rows.append(row)
    return pd.DataFrame(rows).set_index(["setting", "benchmark", "model"])


def sampled_check(P: Any, models: Sequence[Model], recs: dict[tuple, pd.DataFrame]
                  ) -> pd.DataFrame | None:
    """The base's first evaluation sampled (``P.n`` samples per problem) beside its exact
    records ``recs`` (``agreement`` at k = 1, 16 and n), where ``P`` (the chapter's parameters)
    measures exactly and asks for the check (``check_sampled``); else None."""
    if not (P.check_sampled and P.estimator == "exact"):
        return None
    base = [m for m in models if m.label == BASE][:1]
    sampled = evaluate_models(base, P.benchmarks, P.eval_settings("sampled"), P.profile,
                              problems=P.problems, workers=P.workers, batch_size=P.batch_size)
    return agreement(recs, sampled, sorted({1, min(16, P.n), P.n}))
