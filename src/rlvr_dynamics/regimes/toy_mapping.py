"""The toy beside each regime: the toy setting read from a regime's base (pi0 and rewards), the
toy's prediction from it (its time to expansion and the dip of pi(a2), under the toy chapter's
optimizer and under each of ``toy.optimizers``; registered before the runs by ``prediction``),
and how far the LM orders regimes and algorithms as the toy does. The toy's steps are not the LM's (other learning rates, other
parameterisations): what is compared is the ordering."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from rlvr_dynamics import toy
from rlvr_dynamics import law
from rlvr_dynamics.rl.algorithms import ALGORITHMS

TOY_SAME = 0.1
"""Toy times to expansion within this fraction of each other count as the same."""

OWN = "the toy chapter's"
"""The key of the toy chapter's own optimizer and learning rate among ``toy_settings``."""


def toy_inputs(base: pd.DataFrame, hard: np.ndarray, regular: int, share: float
               ) -> tuple[list[float], list[float]]:
    """The toy setting of a base, from one exact measurement of it (``base``: one row per
    probed problem of a split, the probe's values; ``hard``: which lie beyond the direct path;
    the first ``regular`` were probed as drawn, the rest chosen beyond the direct path):
    pi0 = [P(direct), P(stepwise), P(guess)] at the first character, over the problems as
    drawn (the mass of any other first character shared out in proportion), and rewards
    r = [r1, r2, r3]: r1 the direct path's success rate on the training mix (its rate on the
    problems it can solve, times their share ``1 - share``), r2 and r3 the stepwise path's and
    the guess's over every probed problem (their right mass over their mass; 0 without mass).
    A first-order mapping: the toy's rewards are fixed per action, the LM's are Bernoulli
    with these means."""
    drawn = base.iloc[:regular]
    easy = drawn[~hard[:regular]]
    mass = {k: base[f"{k}_right"] + base[f"{k}_wrong"] for k in ("direct", "stepwise", "guess")}
    rate = float((easy["direct_right"] / mass["direct"][easy.index].clip(lower=1e-12)).mean())

    def success(path: str) -> float:
        total = float(mass[path].sum())
        return float(base[f"{path}_right"].sum()) / total if total > 1e-12 else 0.0

    pi0 = np.array([float(mass[k].iloc[:regular].mean()) for k in ("direct", "stepwise", "guess")])
    pi0 = np.maximum(pi0, 1e-4)
    return list(pi0 / pi0.sum()), [rate * (1 - share), success("stepwise"), success("guess")]


def toy_update(label: str) -> tuple[str, dict[str, Any]]:
    """The toy's update for the algorithm labelled ``label`` (the registry's): its name among
    a registration's predictions and the toy's keyword arguments. The group-relative update,
    standard or negative-only (with one action per sample the toy's GSPO is its GRPO); NSR and
    W-REINFORCE with each sample's own reward in place of the group baseline."""
    a = next((a for a in ALGORITHMS.values() if a.label == label), None)
    if a is None:
        raise ValueError(f"no algorithm is labelled {label!r}; labels: "
                         f"{[a.label for a in ALGORITHMS.values()]}")
    if a.reinforce is not None:
        return a.label, {"reinforce": a.reinforce}
    return ("GRPO-N", {"negative_only": True}) if a.positive_weight == 0 else ("GRPO", {})


def toy_prediction(pi0: Sequence[float], r: Sequence[float], G: int, D: Any, steps: int,
                   seeds: int, **update: Any) -> dict[str, float]:
    """The toy (the toy chapter's optimizer, learning rate and tau, ``D``; the algorithm's
    ``update``, ``toy_update``) from ``pi0`` with rewards ``r`` and group size ``G``: the
    median time to expansion over seeds (inf where half never expand), the share expanded, the
    depth of pi(a2)'s dip below pi0(a2) (relative: the lowest mean pi(a2) over pi0(a2), minus
    1) and the step where the mean pi(a2) is lowest (0: no dip). A rare path that is no better
    (r2 <= r1) is the reviewers' case, predicted like any other; a base already past expansion
    (pi0(a2) >= pi0(a1)) is outside the toy's scenario: NaN."""
    if not pi0[0] > pi0[1]:
        return {"toy expansion": np.nan, "toy expanded": np.nan, "toy dip": np.nan,
                "toy dip step": np.nan}
    s = toy.summarise(z0=toy.logits(pi0), r=r, G=G, lr=D.lr, optimizer=D.optimizer,
                      tau=D.tau, steps=steps, seeds=seeds, seed=0, progress=False, **update)
    t, a2 = s.t_expand[0], s.mean[:, 0, 1]
    return {"toy expansion": float(np.median(t)), "toy expanded": float(np.isfinite(t).mean()),
            "toy dip": float(a2.min() / pi0[1] - 1), "toy dip step": float(a2.argmin())}


def toy_settings(D: Any) -> dict[str, dict[str, Any]]:
    """The toy's optimizers beside a regime: the toy chapter's own (``OWN``, the phase
    diagram's) and each of ``toy.optimizers`` (Adam at its lr, SGD at its ``sgd_lr``;
    the toy chapter shows the negative-only speed-up to be Adam's doing)."""
    return {OWN: dict(optimizer=D.optimizer, lr=D.lr), **toy.optimizers(D.lr, D.sgd_lr)}


def toy_predictions(pi0: Sequence[float], r: Sequence[float], G: int, D: Any, steps: int,
                    seeds: int, labels: Sequence[str] = ("GRPO", "GRPO-N")
                    ) -> dict[str, dict[str, dict[str, float]]]:
    """``{optimizer: {update: prediction}}``: ``toy_prediction`` with the toy's update of each
    algorithm of ``labels`` (``toy_update``; two that share one run once) under each of
    ``toy_settings``; a setting that two names share (the chapter's own is usually Adam) runs
    once."""
    updates = dict(toy_update(label) for label in labels)
    done: dict[tuple, dict[str, dict[str, float]]] = {}
    for name, kw in toy_settings(D).items():
        key = tuple(sorted(kw.items()))
        if key not in done:
            done[key] = {u: toy_prediction(pi0, r, G, D.model_copy(update=kw), steps, seeds, **a)
                         for u, a in updates.items()}
    return {name: done[tuple(sorted(kw.items()))] for name, kw in toy_settings(D).items()}


LAW_STEPS = 20_000
"""How far the laws' deterministic trajectories are followed (inf beyond)."""


def toy_laws(pi0: Sequence[float], r: Sequence[float], G: int, D: Any,
             labels: Sequence[str] = ("GRPO", "GRPO-N")) -> dict[str, dict[str, dict[str, float]]]:
    """The deterministic laws' time to crossover (toy steps), in ``toy_predictions``' layout
    ``{law: {update: {"toy expansion": T}}}``: the mean field (Theorem 1's expected update,
    ``toy.mean_field``) under each of ``toy.optimizers`` for each algorithm's update, and
    Adam fed the exact moments of the standard update's group gradient
    (``law.adam_moments``, the standard update only). NaN outside the toy's
    scenario (``toy_prediction``), inf where not within ``LAW_STEPS``."""
    updates = dict(toy_update(label) for label in labels)
    out: dict[str, dict[str, dict[str, float]]] = {}
    for name, kw in toy.optimizers(D.lr, D.sgd_lr).items():
        out[f"{name}, mean field"] = {u: {"toy expansion": float(toy.expansion_time(
            toy.mean_field(toy.logits(pi0)[None], r, G=G, tau=D.tau, steps=LAW_STEPS,
                           **kw, **a))[0]) if pi0[0] > pi0[1] else np.nan}
            for u, a in updates.items()}
    if "GRPO" in updates:
        adam = toy.optimizers(D.lr, D.sgd_lr)["Adam"]["lr"]
        out["Adam, on the moments"] = {"GRPO": {"toy expansion": law.adam_moments(
            pi0, r, G, adam, LAW_STEPS) if pi0[0] > pi0[1] else np.nan}}
    return out


def toy_side(registered: dict[str, dict[str, Any]], labels: Sequence[str]
             ) -> tuple[pd.DataFrame, dict[str, dict[str, dict[str, float]]]]:
    """The toy beside each regime, from its registered prediction (``prediction.register``:
    name -> record): one row per regime and algorithm label of ``labels`` whose toy update
    (``toy_update``) the record predicted, with
    pi0(a2), pi0(a3), r(a1), r(a2) and the prediction under the toy chapter's own optimizer
    (for the phase diagram), and ``{regime: {optimizer: {label: time to expansion}}}`` under
    each of ``toy.optimizers`` (for ``orderings``)."""
    rows, times = [], {}
    for name, record in registered.items():
        pi0, r = record["inputs"]["pi0"], record["inputs"]["r"]
        predicted = record["predictions"]
        rows += [{"regime": name, "algorithm": label, "pi0(a2)": pi0[1], "pi0(a3)": pi0[2],
                  "r(a1)": r[0], "r(a2)": r[1], **predicted[OWN][toy_update(label)[0]]}
                 for label in labels if toy_update(label)[0] in predicted[OWN]]
        times[name] = {opt: {label: p["toy expansion"] for label, p in by_label.items()}
                       for opt, by_label in predicted.items() if opt != OWN}
    return pd.DataFrame(rows), times


# --- the LM's orderings against the toy's ----------------------------------------------------------

def order(t_n: float, t: float, same: float) -> str:
    """GRPO-N's time to expansion ``t_n`` against GRPO's ``t``: "later", "earlier", "same"
    (within ``same``), "neither expands", or "outside the toy" (NaN: the toy's scenario does
    not hold)."""
    if np.isnan(t_n) or np.isnan(t):
        return "outside the toy"
    if np.isinf(t_n) and np.isinf(t):
        return "neither expands"
    if abs(t_n - t) <= same:
        return "same"
    return "later" if t_n > t else "earlier"


def orderings(table: pd.DataFrame, toy_times: dict[str, dict[str, dict[str, float]]],
              probe_every: int) -> pd.DataFrame:
    """Per regime that ran both GRPO and GRPO-N: GRPO-N's time to crossover against GRPO's in
    the LM (``LM``: the ``order`` of the medians over seeds, the same within one probe
    interval, ``probe_every``; ``LM times``: (GRPO-N, GRPO)) and in the toy under each
    optimizer (``toy_times[regime]``, from ``toy_side``; the same within ``TOY_SAME``), and
    ``follows``: the optimizers whose ordering the LM's matches."""
    rows = []
    for regime, g in table.groupby("regime", sort=False):
        t = {a: float(np.median(x["crossover"])) for a, x in g.groupby("algorithm")}
        if not {"GRPO", "GRPO-N"} <= set(t):
            continue
        row = {"regime": regime, "LM": order(t["GRPO-N"], t["GRPO"], probe_every),
               "LM times": (t["GRPO-N"], t["GRPO"]), "follows": ()}
        for name, times in toy_times[regime].items():
            toy_order = order(times["GRPO-N"], times["GRPO"],
                              TOY_SAME * min(times["GRPO-N"], times["GRPO"]))
            row[f"toy, {name}"], row[f"toy times, {name}"] = \
                toy_order, (times["GRPO-N"], times["GRPO"])
            if toy_order == row["LM"] != "outside the toy":
                row["follows"] += (name,)
        rows.append(row)
    return pd.DataFrame(rows, columns=["regime", "LM", "LM times", "follows"] + sorted(
        {k for r in rows for k in r} - {"regime", "LM", "LM times", "follows"})
                        ).set_index("regime")


def _direction(a: float, b: float, same: float) -> int:
    """-1 if ``a`` comes first, +1 if ``b`` does, 0 if neither (within ``same``, or both
    never)."""
    if np.isinf(a) and np.isinf(b):
        return 0
    if np.isinf(a) or np.isinf(b):
        return 1 if np.isinf(a) else -1
    return 0 if abs(a - b) <= same else (-1 if a < b else 1)


def order_agreement(lm: pd.Series, toy_t: pd.Series, probe_every: int
                    ) -> tuple[int, int, list[tuple[str, str, bool]]]:
    """(agree, pairs, the others): of the pairs of regimes whose toy times to expansion
    (``toy_t``) are more than ``TOY_SAME`` apart (relative; NaN: outside the toy, left out),
    how many the LM's median times (``lm``) order the same way, more than one probe interval
    apart; each other pair as (the toy's first, its second, whether the LM ties them rather
    than reversing them)."""
    agree, pairs, other = 0, 0, []
    names = [r for r in lm.index if not np.isnan(toy_t[r])]
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            same = TOY_SAME * min(toy_t[a], toy_t[b])
            toy_dir = _direction(toy_t[a], toy_t[b], same if np.isfinite(same) else 0.0)
            if toy_dir == 0:
                continue
            pairs += 1
            lm_dir = _direction(lm[a], lm[b], probe_every)
            if lm_dir == toy_dir:
                agree += 1
            else:
                first, second = (a, b) if toy_dir < 0 else (b, a)
                other.append((first, second, lm_dir == 0))
    return agree, pairs, other
