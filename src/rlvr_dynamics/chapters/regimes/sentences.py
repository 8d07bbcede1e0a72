"""The regimes chapter's words, written from its results: the runs' settings that its figures
state, the findings and the orderings against the toy in words, the verdicts per regime, and
the row it hands to ``verdicts.record``."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from rlvr_dynamics import stats
from rlvr_dynamics.chapters.regimes import (SHRINK_MARGIN, TOY_SAME, entropy_above,
                                            keeps_boundary, order_agreement, stage_check,
                                            stage_effects, two_stages)
from rlvr_dynamics.chapters.training.sentences import run_settings


def settings(P: Any, T: Any, hard: dict[str, np.ndarray]) -> str:
    """The settings every figure of the chapter states: the training chapter's
    (``run_settings``, with this chapter's steps and seeds), then the probes (``hard``: the
    rare-path-only problems per split)."""
    return (f"{P.profile} profile: "
            + run_settings(T.model_copy(update={"steps": P.steps, "seeds": P.seeds}))
            + f"; probes every {P.probe_every} steps on the first {P.probe_problems} problems "
              f"of sums-test (of them {hard['test'].sum()} beyond the direct path); lines: mean "
              f"over seeds, bands: min to max")


def _steps(t: Sequence[float]) -> str:
    """Times to expansion in words: "never" within the run, "outside the toy" where the toy
    has no prediction (NaN: a regime outside its scenario)."""
    return ", ".join("never" if np.isinf(x) else "outside the toy" if np.isnan(x) else f"{x:g}"
                     for x in t)


def disagreement(first: str, second: str, tie: bool) -> str:
    """A pair of regimes that the LM does not order as the toy does (``order_agreement``)."""
    return (f"the toy puts {first} before {second}, the LM "
            + ("ties them" if tie else "the other way round"))


def findings_text(table: pd.DataFrame, k: int, steps: int, probe_every: int) -> str:
    """Per regime and algorithm, in words: the base's prior, how many seeds expanded and when,
    the shrinkage depth on the rare-path-only problems, the stalls; and per algorithm, how far
    the LM orders the regimes by time to expansion as the toy does (``order_agreement``)."""
    out = []
    for (regime, algo), g in table.groupby(["regime", "algorithm"], sort=False):
        expanded = np.isfinite(g["expansion"]).sum()
        depth = g["depth"].to_numpy() + 0.0  # no -0.0
        stall = int(g["stalled"].sum())
        out.append(f"{regime}, {algo} (P(stepwise) {g['pi0(a2)'].iloc[0]:.4f} at the start): "
                   f"expanded in {expanded} of {len(g)} seeds (steps {_steps(g['expansion'])})"
                   f"; lowest Pass@{k} on the rare-path-only problems "
                   f"{depth.mean():+.1f} points against the base (seeds {depth.min():+.1f} to "
                   f"{depth.max():+.1f}; the probe's own standard error "
                   f"{g['noise'].median():.1f} points)"
                   + (f"; {stall} seed{'s' if stall != 1 else ''} stalled" if stall else "")
                   + ".")
    for algo, g in table.groupby("algorithm", sort=False):
        lm = g.groupby("regime", sort=False)["expansion"].median()
        toy_t = g.groupby("regime", sort=False)["toy expansion"].first()
        agree, pairs, other = order_agreement(lm, toy_t, probe_every)
        out.append(f"{algo}, regimes ordered by their median time to expansion (within {steps} "
                   f"steps; LM: " + ", ".join(f"{r} {_steps([v])}" for r, v in lm.items())
                   + "; toy: " + ", ".join(f"{r} {_steps([v])}" for r, v in toy_t.items())
                   + f"): of the {pairs} pairs of regimes that the toy sets apart (its times "
                   f"more than {TOY_SAME:.0%} apart), the LM orders {agree} the same way"
                   + (f" ({'; '.join(disagreement(*o) for o in other)})" if other else "")
                   + ".")
    return " ".join(out)


def ordering_table(orders: pd.DataFrame) -> pd.DataFrame:
    """``toy_mapping.orderings`` for reading: each ordering with its two times (GRPO-N vs
    GRPO), where the toy's scenario holds."""
    def shown(o: str, times: tuple[float, float]) -> str:
        return o if o == "outside the toy" else f"{o} ({_steps([times[0]])} vs {_steps([times[1]])})"
    out = pd.DataFrame(index=orders.index)
    out["LM: GRPO-N vs GRPO"] = [shown(o, t) for o, t in zip(orders["LM"], orders["LM times"])]
    for column in [c for c in orders.columns if c.startswith("toy, ")]:
        times = orders[column.replace("toy, ", "toy times, ")]
        out[column] = [shown(o, t) for o, t in zip(orders[column], times)]
    out["the LM follows"] = [" and ".join(f) or "none" for f in orders["follows"]]
    return out


def ordering_text(orders: pd.DataFrame) -> str:
    """``toy_mapping.orderings`` in words: in how many regimes the LM's ordering of GRPO-N
    against GRPO matches the toy's under each optimizer."""
    if orders.empty:
        return "No regime ran both GRPO and GRPO-N."
    names = [c.removeprefix("toy, ") for c in orders.columns if c.startswith("toy, ")]
    parts = [f"under {name} in {sum(name in f for f in orders['follows'])} of {len(orders)}"
             for name in names]
    outside = int((orders[[f"toy, {n}" for n in names]] == "outside the toy").any(axis=1).sum())
    return ("GRPO-N's time to expansion against GRPO's, the LM's ordering matches the toy's "
            + ", ".join(parts) + " regimes"
            + (f" ({outside} outside the toy's scenario)" if outside else "") + ".")


# --- the verdicts --------------------------------------------------------------------------------

def phase_title(setting: str, D: Any, toy_seeds: int) -> str:
    """The title of the LM's regime map beside the toy's prediction (``D``: the toy chapter's
    parameters)."""
    return (f"The LM's regime map. {setting}; the toy's prediction from the same π0(a2), "
            f"rewards and G, the toy chapter's optimizer ({D.optimizer}, lr {D.lr:g}), "
            f"{toy_seeds} seeds")


def _neg(e: stats.Effect) -> str:
    """An effect estimated on negated values, shown on the original scale."""
    def signed(x: float) -> str:
        return f"{-x + 0.0:+.1f}"  # + 0.0: no "-0.0"
    if np.isnan(e.half_width):
        return f"{signed(e.estimate)} (one seed: no interval)"
    return f"{signed(e.estimate)} [{signed(e.high)}, {signed(e.low)}]"


def regime_verdicts(table: pd.DataFrame, entropy: pd.DataFrame) -> pd.DataFrame:
    """Per regime, the paper's LM claims as checks over seeds, on the rare-path-only problems
    at the chapter's k (points of Pass@k against the base), each verdict with its effect:

    * per algorithm, *shrinkage* and *expansion* (``stages.stage_effects``) and *shrinkage,
      then expansion* (``stages.two_stages``);
    * *GRPO-N keeps the base's boundary* (``stages.keeps_boundary``), read beside GRPO's
      shrinkage;
    * *GRPO-N's answer entropy above GRPO's* at the end (``stages.entropy_above``;
      ``entropy``: regime, algorithm, seed, answer entropy)."""
    rows = []
    for regime, g in table.groupby("regime", sort=False):
        row = {"regime": regime}
        for algo, h in g.groupby("algorithm", sort=False):
            shrink, grow, ordered = stage_effects(h)
            row[f"{algo}: shrinkage"] = f"{shrink.verdict} (depth {_neg(shrink)})"
            row[f"{algo}: expansion"] = f"{grow.verdict} (gain {grow.text('{:+.1f}')})"
            row[f"{algo}: shrinkage, then expansion"] = two_stages(shrink.verdict,
                                                                   grow.verdict, ordered)
        e = keeps_boundary(g)
        if e is not None:
            row["GRPO-N keeps the base's boundary"] = f"{e.verdict} (depth {e.text('{:+.1f}')})"
        e = entropy_above(entropy, regime)
        if e is not None:
            row["GRPO-N answer entropy above GRPO"] = f"{e.verdict} ({e.text()})"
        rows.append(row)
    return pd.DataFrame(rows).set_index("regime")


def claim_rows(table: pd.DataFrame, k: int) -> list[dict]:
    """The row this chapter records for ``verdicts`` (claim ``lm_two_stages``): per regime,
    GRPO's "shrinkage, then expansion" (``stages.stage_check``) decides, GRPO-N's is shown
    beside it."""
    checks, also, ours = [], [], []
    for regime, g in table.groupby("regime", sort=False):
        for algo, h in g.groupby("algorithm", sort=False):
            shrink, grow, ordered = stage_effects(h)
            check = (f"{regime}, {algo}: Pass@{k} on the rare-path-only problems falls more "
                     f"than {SHRINK_MARGIN:g} points, then rises above the base",
                     stage_check(shrink.verdict, grow.verdict, ordered))
            (checks if algo == "GRPO" else also).append(check)
            ours.append(f"{regime}, {algo}: depth {h['depth'].mean():+.1f}, gain "
                        f"{h['gain'].mean():+.1f} points, expanded in "
                        f"{int(np.isfinite(h['expansion']).sum())}/{len(h)} seeds")
    if not checks:
        return []
    return [{"claim": "lm_two_stages", "ours": "; ".join(ours), "checks": checks,
             "also": also}]
