"""The two stages in numbers, per run and per regime: the crossover (the first probed step at
which the stepwise path carries more mass than the direct one, the toy's pi(a2) > pi(a1)),
the fall of P(stepwise) and the shrinkage and gain of Pass@k on the rare-path-only problems at
the k where the base sits mid-curve (each read at a step the other seeds choose), stalls, and
the paper's LM claims as checks over seeds (``stats``) against margins shared with the
reproduction chapter; a base that cannot show its boundary move (``informs``) does not
vote."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from rlvr_dynamics import dips, stats, survival
from rlvr_dynamics.comparison.claims import ANSWER_ENTROPY_MARGIN, PASSK_MARGIN
from rlvr_dynamics.regimes.probes import with_passk
from rlvr_dynamics.regimes.toy_mapping import toy_update
from rlvr_dynamics.passk import from_probability, mid_curve_k

SHRINK_MARGIN = PASSK_MARGIN
"""Points of Pass@k on the rare-path-only problems below the base that count as shrinkage (the
reproduction chapter's large-k margin)."""
ENTROPY_MARGIN = ANSWER_ENTROPY_MARGIN
"""Nats of answer entropy that count as a difference (the reproduction chapter's margin)."""


def time_to_crossover(run: pd.DataFrame) -> float:
    """The crossover: the first probed step at which the stepwise path carries more
    first-character mass than the direct one (one run's rows, ``step``, ``stepwise``,
    ``direct``); inf if it never does. Named apart from expansion of the boundary, which is
    measured by Pass@k."""
    run = run.sort_values("step")
    over = run[run["stepwise"] > run["direct"]]
    return float(over["step"].iloc[0]) if len(over) else float("inf")


def stalled(run: pd.DataFrame) -> bool:
    """No crossover, and the stepwise mass at the last probe no higher than at mid-run."""
    run = run.sort_values("step")
    mid = run.iloc[len(run) // 2]["stepwise"]
    return bool(np.isinf(time_to_crossover(run)) and run.iloc[-1]["stepwise"] <= mid)


def base_rows(long: pd.DataFrame, regime: str, setting: str = "full", split: str = "test"
              ) -> pd.DataFrame:
    """A regime's base as its first run's first probe measured it: one row per problem."""
    part = long[(long["regime"] == regime) & (long["setting"] == setting)
                & (long["split"] == split)]
    first = part.iloc[0]
    return part[(part["algorithm"] == first["algorithm"]) & (part["seed"] == first["seed"])
                & (part["step"] == part["step"].min())].sort_values("problem")


def mid_curve(long: pd.DataFrame, hard: dict[str, np.ndarray], setting: str = "full",
              split: str = "test") -> dict[str, int]:
    """Per regime, the k at which its base's Pass@k on the rare-only problems is closest to
    50 % (``passk.mid_curve_k``)."""
    out = {}
    for regime in long["regime"].unique():
        base = base_rows(long, regime, setting, split)
        out[regime] = mid_curve_k(base["p"].to_numpy()[hard[split][base["problem"]]])
    return out


def informs(base: pd.DataFrame, hard: np.ndarray, k: int) -> tuple[bool, str]:
    """Whether a base (``base_rows``) can show its boundary move at ``k``: its rare-only
    Pass@k within ``stats.BOUNDS`` (no k brings it near the middle when every such problem sits
    at p = 0, or all near 1), the stepwise path rarer than the direct one at the first
    character, and present on the rare-only problems. Returns (informs, why not)."""
    flag = hard[base["problem"].to_numpy()]
    passk = float(100 * from_probability(base["p"].clip(0, 1)[flag], k).mean())
    stepwise = base["stepwise_right"] + base["stepwise_wrong"]
    direct = base["direct_right"] + base["direct_wrong"]
    why = stats.outside(passk, f"its Pass@{k} on the rare-only problems")
    if why:
        return False, why
    if stepwise.mean() >= direct.mean():
        return False, "it takes the stepwise path more often than the direct one already"
    if not (stepwise[flag] > 0).any():
        return False, "it gives the stepwise path no mass on the rare-only problems"
    return True, ""


def stepwise_mass(part: pd.DataFrame, hard: np.ndarray) -> pd.DataFrame:
    """One regime's and algorithm's rows of a split (``probes.with_passk``'s): P(stepwise) on
    its rare-only problems (``hard``), the mean per step (rows) and seed (columns)."""
    rare = part[hard[part["problem"].to_numpy()]]
    return rare["stepwise"].groupby([rare["step"], rare["seed"]]).mean().unstack("seed")


def relative_stepwise(part: pd.DataFrame, hard: np.ndarray) -> pd.DataFrame:
    """``stepwise_mass`` relative to the start."""
    mass = stepwise_mass(part, hard)
    return mass / mass.iloc[0]


def decompose(start: pd.DataFrame, end: pd.DataFrame, k: int) -> dict[str, float]:
    """Mean Pass@k change (points) over problems (``start``, ``end``: the same problems, one
    row each, the probe's values) split exactly into the path choice s = P(stepwise), the
    path's reliability q = P(right | stepwise) and the rest c (the other paths' right mass):
    with f(s, q, c) = 100 (1 - (1 - (s q + c))^k) averaged over problems, the first two are
    the Shapley shares of f(., ., c0) from (s0, q0) to (s1, q1); the rest is
    f(s1, q1, c1) - f(s1, q1, c0)."""
    def parts(x: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        s = (x["stepwise_right"] + x["stepwise_wrong"]).to_numpy(dtype=float)
        q = np.divide(x["stepwise_right"].to_numpy(dtype=float), s, out=np.zeros_like(s),
                      where=s > 1e-12)
        return s, q, x["p"].clip(0, 1).to_numpy(dtype=float) - s * q

    (s0, q0, c0), (s1, q1, c1) = parts(start), parts(end)

    def f(s: np.ndarray, q: np.ndarray, c: np.ndarray) -> float:
        return float(100 * from_probability(np.clip(s * q + c, 0, 1), k).mean())

    return {"path choice": 0.5 * (f(s1, q0, c0) - f(s0, q0, c0) + f(s1, q1, c0) - f(s0, q1, c0)),
            "reliability": 0.5 * (f(s0, q1, c0) - f(s0, q0, c0) + f(s1, q1, c0) - f(s1, q0, c0)),
            "rest": f(s1, q1, c1) - f(s1, q1, c0)}


def stages(long: pd.DataFrame, hard: dict[str, np.ndarray], ks: dict[str, int],
           setting: str = "full", split: str = "test") -> pd.DataFrame:
    """Per run (regime, algorithm, seed; ``long``: ``probes.with_passk``'s rows), on the
    probed rare-only problems of ``split`` at its regime's mid-curve k (``ks``):

    * ``fall``: the relative fall of P(stepwise), 1 - mass(t) / mass(0), and ``depth``: Pass@k
      minus the base's (points), each read at the step where the mean of the regime's and
      algorithm's *other* seeds is lowest (``stats.leave_one_out``, ``fall step`` and
      ``depth step``, over the probes every one of those runs has), so that a run's own noise
      does not pick its deepest point;
    * ``crossover`` (``time_to_crossover``, over every probed problem of ``split``), whether
      it ``stalled``, the ``last step`` probed;
    * ``start``, ``end``: Pass@k at the first and last probe; ``gain``: their difference, and
      ``decompose``'s split of it into path choice, reliability and the rest;
    * ``noise``: the median over probes of the standard error of the rare-only mean Pass@k
      that the probe's own estimate carries (from each p's standard error);
    * the dip on the log scale (``dips``, issue 51): ``log dip``, log of P(stepwise) over its
      start (floored at ``dips.FLOOR``) at ``log dip step``, where the mean log ratio of the
      other seeds is lowest, and whether it sat at the floor (``log dip floored``); for the
      regime and algorithm, ``log dip lowest``, where their pooled curve is lowest, and
      ``log dip last``, their last common probe (``dip_over_seeds`` reads them back)."""
    part = long[(long["setting"] == setting) & (long["split"] == split)]
    rows = []
    for (regime, algorithm), g in part.groupby(["regime", "algorithm"], sort=False):
        k = ks[regime]
        rare = with_passk(g[hard[split][g["problem"].to_numpy()]], [k])
        rare = rare.rename(columns={f"pass@{k}": "passk", f"var@{k}": "var"})
        passk = rare.groupby(["step", "seed"])["passk"].mean().unstack("seed")
        fall = stats.leave_one_out(relative_stepwise(g, hard[split]))
        logdip, lowest, last = dips.per_seed(stepwise_mass(g, hard[split]))
        depth = stats.leave_one_out(passk)
        for seed, run in g.groupby("seed"):
            own = rare[rare["seed"] == seed]
            steps = sorted(own["step"].unique())
            r0, r1 = (own[own["step"] == s].sort_values("problem") for s in (steps[0], steps[-1]))
            paths = run.groupby("step")[["stepwise", "direct"]].mean().reset_index()
            start, end = float(r0["passk"].mean()), float(r1["passk"].mean())
            noise = own.groupby("step")["var"].mean() / max(len(r0), 1)
            rows.append({"regime": regime, "algorithm": algorithm, "seed": seed, "k": k,
                         "crossover": time_to_crossover(paths), "stalled": stalled(paths),
                         "last step": float(steps[-1]),
                         "fall": 1 - fall.loc[seed, "value"], "fall step": fall.loc[seed, "step"],
                         "depth": depth.loc[seed, "value"] - start,
                         "depth step": depth.loc[seed, "step"],
                         "start": start, "end": end, "gain": end - start,
                         **decompose(r0, r1, k),
                         "noise": float(np.median(np.sqrt(noise))),
                         "log dip": logdip.loc[seed, "log ratio"],
                         "log dip step": logdip.loc[seed, "step"],
                         "log dip floored": bool(logdip.loc[seed, "floored"]),
                         "log dip lowest": lowest, "log dip last": last})
    return pd.DataFrame(rows)


def dip_over_seeds(runs: pd.DataFrame) -> dips.Dip:
    """The dip of P(stepwise) on the log scale over one regime's and algorithm's seeds (rows of
    ``stages``; ``dips.over_seeds``): the geometric mean with its interval, each seed's value,
    the sign count, and censored where the fall is still at its lowest at the last common
    probe."""
    lowest, last = float(runs["log dip lowest"].iloc[0]), float(runs["log dip last"].iloc[0])
    return dips.over_seeds(runs["log dip"].to_numpy(), runs["log dip step"].to_numpy(),
                           int(runs["log dip floored"].sum()), lowest, last, lowest == last)


def crossover_median(runs: pd.DataFrame) -> survival.Median:
    """The Kaplan-Meier median crossover over one regime's and algorithm's seeds (rows of
    ``stages``: a run that did not cross is censored at its last probe) with Brookmeyer and
    Crowley's interval (``survival.median``)."""
    return survival.median(runs["crossover"].to_numpy(), runs["last step"].to_numpy())


def predicted_vs_measured(table: pd.DataFrame, registered: dict[str, dict[str, Any]],
                          optimizer: str, source: str = "predictions") -> pd.DataFrame:
    """Per run of a regime with a registered prediction (``table``: ``stages``' rows;
    ``registered``: regime -> ``prediction.register``'s record): the registered time to
    crossover under ``optimizer`` of ``source`` (the toy's runs, ``"predictions"``, or the
    deterministic laws, ``"laws"``; a record or an update without one is left out) for the
    run's update (``toy_mapping.toy_update``), the LM's measured crossover (censored at the
    run's last probe where it did not cross: ``censored``), and measured over predicted (NaN
    where either is not finite)."""
    rows = []
    for _, run in table[table["regime"].isin(list(registered))].iterrows():
        update = toy_update(run["algorithm"])[0]
        entry = registered[run["regime"]].get(source, {}).get(optimizer, {}).get(update)
        if entry is None:
            continue
        predicted = entry["toy expansion"]
        censored = bool(np.isinf(run["crossover"]))
        measured = run["last step"] if censored else run["crossover"]
        ratio = measured / predicted if not censored and np.isfinite(predicted) else np.nan
        rows.append({"regime": run["regime"], "algorithm": run["algorithm"], "seed": run["seed"],
                     "predicted": float(predicted), "measured": float(measured),
                     "censored": censored, "measured / predicted": float(ratio)})
    return pd.DataFrame(rows, columns=["regime", "algorithm", "seed", "predicted", "measured",
                                       "censored", "measured / predicted"])


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per regime and algorithm (``table``: ``stages`` joined with ``toy_mapping.toy_side``'s
    rows): the base's first-character masses and the toy's rewards, the mid-curve k, how many
    seeds crossed over and at which steps (and each run's last probe), the depth and gain of
    mid-curve Pass@k on the rare-only problems (means), the probe's standard error (median),
    the stalled seeds, and the toy's prediction (its crossover and the dip of pi(a2)); beside
    them the dip of P(stepwise) on the log scale (``dip_over_seeds``: a ``dips.Dip``) and the
    Kaplan-Meier median crossover with its interval (``crossover_median``: a
    ``survival.Median``)."""
    cells = table.groupby(["regime", "algorithm"], sort=False)
    fitted = pd.DataFrame.from_dict(
        {key: {"dip of P(stepwise)": dip_over_seeds(g), "median crossover": crossover_median(g)}
         for key, g in cells}, orient="index")
    fitted.index.names = ["regime", "algorithm"]
    return cells.agg(
        **{"P(stepwise) at start": ("pi0(a2)", "first"), "P(guess) at start": ("pi0(a3)", "first"),
           "r(a1)": ("r(a1)", "first"), "r(a2)": ("r(a2)", "first"), "k": ("k", "first"),
           "crossed": ("crossover", lambda t: int((t < np.inf).sum())),
           "seeds": ("crossover", "size"),
           "step of crossover": ("crossover", tuple),
           "last steps": ("last step", tuple),
           "depth (mean)": ("depth", "mean"), "gain (mean)": ("gain", "mean"),
           "probe's standard error (points)": ("noise", "median"),
           "stalled (seeds)": ("stalled", "sum"),
           "toy: crossover": ("toy expansion", "first"),
           "toy: dip of π(a2)": ("toy dip", "first")}).join(fitted)


# --- the paper's claims per regime ---------------------------------------------------------------

def stage_effects(runs: pd.DataFrame) -> tuple[stats.Effect, stats.Effect, bool]:
    """Over one regime's and algorithm's seeds (rows of ``stages``): the shrinkage (minus the
    depth, against ``SHRINK_MARGIN``), the expansion (the gain, against the same margin), and
    whether every seed crossed over, after its deepest point (a seed that never crossed
    fails the order)."""
    return (stats.one_sample(-runs["depth"].to_numpy(), SHRINK_MARGIN),
            stats.one_sample(runs["gain"].to_numpy(), SHRINK_MARGIN),
            bool((runs["depth step"] < runs["crossover"]).all()
                 and np.isfinite(runs["crossover"]).all()))


def two_stages(shrink: str, expand: str, ordered: bool) -> str:
    """The verdict on "shrinkage, then expansion" from the verdicts of the two stages and
    whether, in every seed, the deepest point came before the expansion."""
    if stats.FEW_SEEDS in (shrink, expand):
        return stats.FEW_SEEDS
    if shrink == expand == stats.REPLICATES:
        return stats.REPLICATES if ordered else "both, not in that order"
    if shrink == stats.REPLICATES:
        return "shrinkage only"
    if expand == stats.REPLICATES:
        return "expansion only"
    return "neither"


def keeps_boundary(runs: pd.DataFrame) -> stats.Effect | None:
    """*GRPO-N keeps the base's boundary*, over one regime's rows of ``stages``: GRPO-N's depth
    not below -``SHRINK_MARGIN`` (non-inferiority); None without GRPO-N."""
    depth = {a: h["depth"].to_numpy() for a, h in runs.groupby("algorithm")}
    if "GRPO-N" not in depth:
        return None
    return stats.one_sample(depth["GRPO-N"], SHRINK_MARGIN, stats.NON_INFERIORITY)


def entropy_above(entropy: pd.DataFrame, regime: str) -> stats.Effect | None:
    """*GRPO-N's answer entropy above GRPO's* at the end, by more than ``ENTROPY_MARGIN``, in
    ``regime`` (``entropy``: ``final_entropy``'s rows); None without both."""
    h = entropy[entropy["regime"] == regime]
    ent = {a: x["answer entropy"].to_numpy() for a, x in h.groupby("algorithm")}
    if not {"GRPO", "GRPO-N"} <= set(ent):
        return None
    return stats.two_sample(ent["GRPO-N"], ent["GRPO"], ENTROPY_MARGIN)


def final_entropy(long: pd.DataFrame, setting: str = "full", split: str = "test"
                  ) -> pd.DataFrame:
    """Per run, the answer and token entropy at its last probe (means over problems)."""
    part = long[(long["setting"] == setting) & (long["split"] == split)]
    last = part.groupby(["regime", "algorithm", "seed"])["step"].transform("max")
    return (part[part["step"] == last].groupby(["regime", "algorithm", "seed"])
            [["answer_entropy", "token_entropy"]].mean().rename(
                columns={"answer_entropy": "answer entropy", "token_entropy": "token entropy"})
            .reset_index())
