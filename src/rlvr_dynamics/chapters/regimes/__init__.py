"""The regimes chapter (``notebooks/regimes.md``): where RLVR shrinks the language model's
boundary, where it expands it, and when -- the toy's phase diagram asked of the LM.

A *regime* is a base and a training mix: the base's prior on the rare (stepwise) path, set by
the dial of ``path_prior`` (None: as pretrained), and the share of training problems beyond the
direct path (``training.data.mix``; None: the train split as drawn). Each regime is trained
with each algorithm over seeds, with the training chapter's settings and the boundary probed
from the policy's probabilities along training (``training.probe``). From the probes:

* the paths' probability masses over steps (the LM's analogue of the toy's pi(a1), pi(a2));
* Pass@k over steps for any k (exact: 1 - (1 - p)^k per problem), on all problems and on the
  problems beyond the direct path (rare-path-only: only the stepwise path can solve them);
* the **time to expansion**: the first probed step at which the stepwise path carries more
  mass than the direct one (the toy's pi(a2) > pi(a1)), per seed; inf if never;
* the **shrinkage depth**: the lowest Pass@k on the rare-path-only problems over the probes
  after the start, minus the base's (negative: the boundary shrank there), per seed;
* the **toy's prediction** for the same pi0(a2), rewards and G (``toy_inputs``): its time to
  expansion and the depth of its own dip of pi(a2), from ``toy`` with the toy chapter's
  optimizer and learning rate. Its steps are not the LM's (other learning rates, other
  parameterisations): what is compared is the ordering across regimes.

A run that has not expanded by its last step is *stalled* when its stepwise mass at the end is
no higher than at the middle of the run (``stalled``), otherwise *still rising* (undecided).
"""
from __future__ import annotations

import dataclasses
import textwrap
from typing import Any, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, model_validator

from rlvr_dynamics import stats, toy
from rlvr_dynamics.chapters import Int, ListOf, NeedsParams, Real, needed, require
from rlvr_dynamics.chapters import toy_dynamics
from rlvr_dynamics.chapters.reproduction import PATHS as PATH_STYLE
from rlvr_dynamics.path_prior import Prior
from rlvr_dynamics.tasks import sums
from rlvr_dynamics.chapters.style import COLORS
from rlvr_dynamics.training.algorithms import ALGORITHMS
from rlvr_dynamics.training.config import TrainConfig
from rlvr_dynamics.training.probe import SPLITS
from rlvr_dynamics.training.run import load_dynamics, obtain_all

PATHS = tuple(PATH_STYLE)
"""The paths crossed with correctness (``tasks.sums.trace``), drawn as the reproduction
chapter draws the rollouts' shares."""
SHRINK_MARGIN = 2.0
"""Points of Pass@k on the rare-path-only problems below the base that count as shrinkage (the
reproduction chapter's large-k margin)."""
ENTROPY_MARGIN = 0.05
"""Nats of answer entropy that count as a difference (the reproduction chapter's margin)."""


class Regime(BaseModel):
    """A base (its path prior refitted, or None: as pretrained; pretrained from seed
    ``base_seed``, or None: the base-model chapter's seed) and a training mix (the share of
    problems beyond the direct path, or None: as drawn)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    prior: Prior | None = None
    hard_share: Real(0, 1) | None = None
    base_seed: Int(0) | None = None

    def base(self, T: Any):
        """The ``PretrainConfig`` this regime's runs start from (``T``: the training chapter's
        parameters)."""
        cfg = T.base()
        return cfg if self.base_seed is None else dataclasses.replace(cfg, seed=self.base_seed)


class Params(NeedsParams):
    """The ``regimes`` (name -> prior and mix), trained with ``algorithms`` x ``seeds`` for
    ``steps`` generation steps with the training chapter's other settings, the boundary probed
    every ``probe_every`` steps on ``probe_problems`` problems per split; the boundary read at
    k = ``k`` (Pass@k shown at ``ks``); the toy's prediction from ``toy_seeds`` runs of
    ``toy_steps`` steps; ``workers`` runs side by side."""

    needs = ("training", "toy_dynamics")

    regimes: dict[str, Regime] = {"as pretrained": {}, "prior 0.01": {"prior": 0.01},
                                  "prior 0.002": {"prior": 0.002}}
    algorithms: ListOf(str) = ["grpo", "grpo_n"]
    seeds: ListOf(Int(0)) = [0, 1, 2]
    steps: Int(1) = 100
    probe_every: Int(1) = 10
    probe_problems: Int(1) = 20
    k: Int(1) = 256
    ks: ListOf(Int(1)) = [1, 16, 256, 4096]
    toy_seeds: Int(1) = 1000
    toy_steps: Int(1) = 2000
    workers: Int(1) = 2

    @model_validator(mode="after")
    def _cross(self):
        require(len(self.regimes) >= 1, "regimes must name at least one regime")
        for name in self.algorithms:
            require(name in ALGORITHMS, f"algorithms has {name!r}; valid: {sorted(ALGORITHMS)}")
        require(self.k in self.ks, f"ks must hold k={self.k}, got {self.ks}")
        require(self.probe_every <= self.steps, f"probe_every={self.probe_every} must be <= "
                                                f"steps={self.steps}")
        if "training" in self.upstream or self.profile == "cpu":
            self.runs()  # every run must make a valid TrainConfig (where the settings are known)
        return self

    def runs(self) -> dict[tuple[str, str, int], TrainConfig]:
        """(regime, algorithm, seed) -> its run: the training chapter's settings with this
        chapter's steps, knobs and probes."""
        T = needed(self, "training")
        require(T.model == "sums-base", "the regimes are dials of the sums base: the training "
                                        f"chapter's model must be 'sums-base', got {T.model!r}")
        return {(name, a, s): T.run_config(a, s).replace(
                    model=r.base(T), steps=self.steps, path_prior=r.prior,
                    hard_share=r.hard_share, probe_every=self.probe_every,
                    probe_problems=self.probe_problems)
                for name, r in self.regimes.items() for a in self.algorithms for s in self.seeds}


def train_all(P: Params) -> dict[tuple[str, str, int], list[dict]]:
    """Every run of ``P`` (trained where missing, ``P.workers`` at a time): its dynamics."""
    runs = P.runs()
    T = needed(P, "training")
    folders = obtain_all(list(runs.values()), P.profile, inline=T.train_inline,
                         workers=P.workers)
    return {key: load_dynamics(f) for key, f in zip(runs, folders)}


# --- the probes as tables ----------------------------------------------------------------------

def hard_problems(task: sums.SumTask, author: sums.Author, count: int) -> dict[str, np.ndarray]:
    """Per split, which of its first ``count`` problems lie beyond the direct path (no direct
    answer can be right: only the stepwise path solves them)."""
    return {s: np.array([sums.direct_success(p.meta["terms"], author) == 0.0
                         for p in task.problems(s)[:count]]) for s in SPLITS}


def probes(dynamics: dict[tuple[str, str, int], list[dict]]) -> pd.DataFrame:
    """One row per (regime, algorithm, seed, step, setting, split, problem) with the probe's
    values (``training.probe.KEYS``)."""
    frames = []
    for (regime, algorithm, seed), run in dynamics.items():
        for r in run:
            for setting, splits in r.get("probe", {}).items():
                for split, values in splits.items():
                    f = pd.DataFrame(values)
                    f["problem"] = np.arange(len(f))
                    f[["regime", "algorithm", "seed", "step", "setting", "split"]] = (
                        regime, ALGORITHMS[algorithm].label, seed, r["step"], setting, split)
                    frames.append(f)
    return pd.concat(frames, ignore_index=True)


def with_passk(long: pd.DataFrame, ks: Sequence[int]) -> pd.DataFrame:
    """``long`` with Pass@k (%) = 100 (1 - (1 - p)^k) per problem for each k, and its variance
    from the probe's standard error of p (``var@k``: half the change of Pass@k between
    p - se and p + se, clipped to [0, 1], squared; the delta method's derivative where se is
    small, and bounded where it is not)."""
    out = long.copy()
    p = out["p"].clip(0, 1)
    lo, hi = (p - out["se"]).clip(0, 1), (p + out["se"]).clip(0, 1)
    for k in ks:
        out[f"pass@{k}"] = 100 * (1 - (1 - p) ** k)
        out[f"var@{k}"] = (50 * ((1 - lo) ** k - (1 - hi) ** k)) ** 2
    out["stepwise"] = out["stepwise_right"] + out["stepwise_wrong"]
    out["direct"] = out["direct_right"] + out["direct_wrong"]
    return out


def per_run(long: pd.DataFrame, hard: dict[str, np.ndarray], columns: Sequence[str]
            ) -> pd.DataFrame:
    """Means over problems per (regime, algorithm, seed, setting, split, step): over all of
    them, and over the rare-path-only ones (``hard_<column>``)."""
    keys = ["regime", "algorithm", "seed", "setting", "split", "step"]
    flag = np.array([hard[s][i] for s, i in zip(long["split"], long["problem"])])
    out = long.groupby(keys)[list(columns)].mean()
    h = long[flag].groupby(keys)[list(columns)].mean().add_prefix("hard_")
    return out.join(h).reset_index()


# --- the two stages in numbers -----------------------------------------------------------------

def time_to_expansion(run: pd.DataFrame) -> float:
    """The first probed step at which the stepwise path carries more mass than the direct one
    (one run's rows of ``per_run`` for one setting and split); inf if it never does."""
    run = run.sort_values("step")
    over = run[run["stepwise"] > run["direct"]]
    return float(over["step"].iloc[0]) if len(over) else float("inf")


def shrinkage(run: pd.DataFrame, k: int) -> tuple[float, float]:
    """(depth, step): the lowest Pass@k on the rare-path-only problems after the start, minus
    its value at the start (points; negative: shrank), and the step where it was lowest."""
    run = run.sort_values("step")
    start, later = run.iloc[0][f"hard_pass@{k}"], run.iloc[1:]
    low = later[f"hard_pass@{k}"].idxmin()
    return float(later.loc[low, f"hard_pass@{k}"] - start), float(later.loc[low, "step"])


def stalled(run: pd.DataFrame) -> bool:
    """No expansion, and the stepwise mass at the last probe no higher than at mid-run."""
    run = run.sort_values("step")
    mid = run.iloc[len(run) // 2]["stepwise"]
    return bool(np.isinf(time_to_expansion(run)) and run.iloc[-1]["stepwise"] <= mid)


def stages(means: pd.DataFrame, k: int, hard: dict[str, np.ndarray], setting: str = "full",
           split: str = "test") -> pd.DataFrame:
    """Per run (regime, algorithm, seed): time to expansion, shrinkage depth and its step,
    the change of Pass@k on the rare-path-only problems from the start to the end (``gain``),
    whether it stalled, and ``noise``: the
    median over probes of the standard error of the rare-path-only problems' mean Pass@k that
    the probe's own estimate carries (``means`` needs ``hard_var@k``). The depth is a minimum
    over probes, so where the noise is not small against it, it is biased downward by about
    one to two noise units."""
    part = means[(means["setting"] == setting) & (means["split"] == split)]
    rows = []
    for (regime, algorithm, seed), run in part.groupby(["regime", "algorithm", "seed"],
                                                       sort=False):
        depth, at = shrinkage(run, k)
        run = run.sort_values("step")
        rows.append({"regime": regime, "algorithm": algorithm, "seed": seed,
                     "expansion": time_to_expansion(run), "depth": depth, "depth_step": at,
                     "gain": float(run.iloc[-1][f"hard_pass@{k}"] - run.iloc[0][f"hard_pass@{k}"]),
                     "noise": float(np.median(np.sqrt(run[f"hard_var@{k}"]
                                                      / max(hard[split].sum(), 1)))),
                     "stalled": stalled(run)})
    return pd.DataFrame(rows)


# --- the toy's prediction ----------------------------------------------------------------------

def toy_inputs(long: pd.DataFrame, hard: dict[str, np.ndarray], regime: str,
               hard_share: float | None, setting: str = "full", split: str = "test"
               ) -> tuple[list[float], list[float]]:
    """The toy setting of a regime, read from its base (the probes at step 0, over algorithms
    and seeds): pi0 = [P(direct), P(stepwise), P(neither)] and rewards r = [r1, r2, 0], where
    r1 is the direct path's success rate on the training mix (its rate on the problems it can
    solve, times their share: ``1 - hard_share``, or the split's own share for None) and r2 the
    stepwise path's. A first-order mapping: the toy's rewards are fixed per action, the LM's
    are Bernoulli with these means."""
    part = long[(long["regime"] == regime) & (long["setting"] == setting)
                & (long["split"] == split) & (long["step"] == 0)]
    flag = hard[split][part["problem"].to_numpy()]
    direct = part["direct_right"] + part["direct_wrong"]
    stepwise = part["stepwise_right"] + part["stepwise_wrong"]
    easy = part[~flag]
    rate = float((easy["direct_right"] / direct[~flag].clip(lower=1e-12)).mean())
    share = float(flag.mean()) if hard_share is None else hard_share
    r1 = rate * (1 - share)
    r2 = float(part["stepwise_right"].sum() / max(stepwise.sum(), 1e-12))
    p_direct, p_step = float(direct.mean()), float(stepwise.mean())
    pi0 = np.array([p_direct, p_step, max(1e-4, 1 - p_direct - p_step)])
    return list(pi0 / pi0.sum()), [r1, r2, 0.0]


def toy_prediction(pi0: Sequence[float], r: Sequence[float], G: int, D: Any, steps: int,
                   seeds: int, negative_only: bool = False) -> dict[str, float]:
    """The toy (the toy chapter's optimizer, learning rate and tau, ``D``; the negative-only
    update for the -N algorithms) from ``pi0`` with rewards ``r`` and group size ``G``: the
    median time to expansion over seeds (inf where half never expand), the share expanded, and
    the depth of pi(a2)'s dip below pi0(a2) (relative: the lowest mean pi(a2) over pi0(a2),
    minus 1). A base already past expansion (pi0(a2) >= pi0(a1)) or whose rare path is not
    better (r2 <= r1) is outside the toy's scenario: NaN."""
    if not (pi0[0] > pi0[1] and r[0] < r[1]):
        return {"toy expansion": np.nan, "toy expanded": np.nan, "toy dip": np.nan}
    s = toy.summarise(z0=toy.logits(pi0), r=r, G=G, lr=D.lr, optimizer=D.optimizer,
                      tau=D.tau, negative_only=negative_only, steps=steps, seeds=seeds,
                      seed=0, progress=False)
    t = s.t_expand[0]
    return {"toy expansion": float(np.median(t)), "toy expanded": float(np.isfinite(t).mean()),
            "toy dip": float(s.mean[:, 0, 1].min() / pi0[1] - 1)}


TOY_SAME = 0.1
"""Toy times to expansion within this fraction of each other count as the same."""


OWN = "the toy chapter's"
"""The key of the toy chapter's own optimizer and learning rate among ``toy_settings``."""


def toy_settings(D: Any) -> dict[str, dict[str, Any]]:
    """The toy's optimizers beside a regime: the toy chapter's own (``OWN``, the phase
    diagram's) and each of ``toy.optimizers`` (Adam at its lr, SGD at its ``sgd_lr``;
    the toy chapter shows the negative-only speed-up to be Adam's doing)."""
    return {OWN: dict(optimizer=D.optimizer, lr=D.lr), **toy.optimizers(D.lr, D.sgd_lr)}


def toy_predictions(pi0: Sequence[float], r: Sequence[float], G: int, D: Any, steps: int,
                    seeds: int) -> dict[str, dict[str, dict[str, float]]]:
    """``{optimizer: {"GRPO": prediction, "GRPO-N": prediction}}``: ``toy_prediction`` with
    the standard and the negative-only update under each of ``toy_settings``; a setting that
    two names share (the chapter's own is usually Adam) runs once."""
    done: dict[tuple, dict[str, dict[str, float]]] = {}
    for name, kw in toy_settings(D).items():
        key = tuple(sorted(kw.items()))
        if key not in done:
            done[key] = {label: toy_prediction(pi0, r, G, D.model_copy(update=kw), steps, seeds,
                                               negative_only=neg)
                         for label, neg in (("GRPO", False), ("GRPO-N", True))}
    return {name: done[tuple(sorted(kw.items()))] for name, kw in toy_settings(D).items()}


def toy_side(long: pd.DataFrame, hard: dict[str, np.ndarray], regimes: dict[str, Regime],
             labels: Sequence[str], G: int, D: Any, steps: int, seeds: int
             ) -> tuple[pd.DataFrame, dict[str, dict[str, dict[str, float]]]]:
    """The toy beside each regime, from its base (``toy_inputs``) and ``toy_predictions``:
    one row per regime and algorithm label of ``labels`` (a "-N" label: the toy's
    negative-only update; with one action per sample the toy's GSPO is its GRPO) with pi0(a2),
    r(a1), r(a2) and the prediction under the toy chapter's own optimizer (for the phase
    diagram), and ``{regime: {optimizer:
    {label: time to expansion}}}`` under each of ``toy.optimizers`` (for
    ``orderings``)."""
    rows, times = [], {}
    for name, regime in regimes.items():
        pi0, r = toy_inputs(long, hard, name, regime.hard_share)
        predicted = toy_predictions(pi0, r, G, D, steps, seeds)
        rows += [{"regime": name, "algorithm": label, "pi0(a2)": pi0[1], "r(a1)": r[0],
                  "r(a2)": r[1], **predicted[OWN]["GRPO-N" if label.endswith("-N") else "GRPO"]}
                 for label in labels]
        times[name] = {opt: {label: p["toy expansion"] for label, p in by_label.items()}
                       for opt, by_label in predicted.items() if opt != OWN}
    return pd.DataFrame(rows), times


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
    """Per regime that ran both GRPO and GRPO-N: GRPO-N's time to expansion against GRPO's in
    the LM (``LM``: the ``order`` of the medians over seeds, the same within one probe
    interval, ``probe_every``; ``LM times``: (GRPO-N, GRPO)) and in the toy under each
    optimizer (``toy_times[regime]``, from ``toy_side``; the same within ``TOY_SAME``), and
    ``follows``: the optimizers whose ordering the LM's matches."""
    rows = []
    for regime, g in table.groupby("regime", sort=False):
        t = {a: float(np.median(x["expansion"])) for a, x in g.groupby("algorithm")}
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


def ordering_table(orders: pd.DataFrame) -> pd.DataFrame:
    """``orderings`` for reading: each ordering with its two times (GRPO-N vs GRPO), where the
    toy's scenario holds."""
    def shown(o: str, times: tuple[float, float]) -> str:
        return o if o == "outside the toy" else f"{o} ({_steps([times[0]])} vs {_steps([times[1]])})"
    out = pd.DataFrame(index=orders.index)
    out["LM: GRPO-N vs GRPO"] = [shown(o, t) for o, t in zip(orders["LM"], orders["LM times"])]
    for column in [c for c in orders.columns if c.startswith("toy, ")]:
        times = orders[column.replace("toy, ", "toy times, ")]
        out[column] = [shown(o, t) for o, t in zip(orders[column], times)]
    out["the LM follows"] = [" and ".join(f) or "none" for f in orders["follows"]]
    return out


# --- figures -----------------------------------------------------------------------------------

def _band(ax, g: pd.DataFrame, column: str, **style) -> None:
    s = g.groupby("step")[column].agg(["mean", "min", "max"])
    ax.plot(s.index, s["mean"], lw=1.4, **style)
    ax.fill_between(s.index, s["min"], s["max"], color=style.get("color"), alpha=0.12, lw=0)


def plot_regime(means: pd.DataFrame, regime: str, k: int, ks: Sequence[int], title: str,
                split: str = "test") -> plt.Figure:
    """One regime: per algorithm, the paths' masses over steps (the toy's Figure 1 layout),
    then Pass@k over steps on all problems and on the rare-path-only ones, under the full
    distribution (solid) and the paper's setting (dashed); mean over seeds, band min-max."""
    part = means[(means["regime"] == regime) & (means["split"] == split)]
    algos = list(dict.fromkeys(part["algorithm"]))
    fig, axes = plt.subplots(1, len(algos) + 2, figsize=(3.2 * (len(algos) + 2), 3.1),
                             squeeze=False)
    axes = axes[0]
    full = part[part["setting"] == "full"]
    for ax, a in zip(axes, algos):
        for key, (name, color, style) in PATH_STYLE.items():
            _band(ax, full[full["algorithm"] == a], key, color=color, ls=style, label=name)
        ax.set(title=f"{a}: paths (full)", xlabel="training step", ylim=(-0.02, 1.02))
    axes[0].set_ylabel("probability mass")
    axes[len(algos) - 1].legend(fontsize=7)
    for ax, prefix, name in ((axes[-2], "", "all problems"),
                             (axes[-1], "hard_", "rare-path-only problems")):
        for a in algos:
            for setting, ls in (("full", "-"), ("paper", "--")):
                g = part[(part["algorithm"] == a) & (part["setting"] == setting)]
                _band(ax, g, f"{prefix}pass@{k}", color=COLORS.get(a), ls=ls,
                      label=f"{a}, {setting}")
        ax.set(title=f"Pass@{k}, {name}", xlabel="training step", ylim=(-2, 102))
    axes[-2].set_ylabel("Pass@k (%)")
    axes[-1].legend(fontsize=7)
    for ax in axes:
        ax.title.set_fontsize(9)
        ax.grid(alpha=0.3)
    fig.suptitle(textwrap.fill(title, 170), fontsize=8)
    fig.tight_layout()
    return fig


MIX_MARKERS = ("o", "s", "^", "D")
"""The marker of each training mix in the phase diagram, in the order the regimes name them."""


def plot_phase(table: pd.DataFrame, regimes: dict[str, Regime], steps: int, title: str
               ) -> plt.Figure:
    """The LM's phase diagram beside the toy's prediction: per regime (x: its base's measured
    P(stepwise); marker: its training mix) and algorithm, the time to expansion (left; seeds
    as dots, never expanded drawn at the top) and the shrinkage depth (right; mean and seeds'
    range), the toy's predicted time to expansion on a second axis, one line per mix."""
    mixes = list(dict.fromkeys(r.hard_share for r in regimes.values()))
    mix_marker = {m: MIX_MARKERS[i % len(MIX_MARKERS)] for i, m in enumerate(mixes)}
    marker = {name: mix_marker[r.hard_share] for name, r in regimes.items()}
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.6))
    ax_toy = a1.twinx()
    for i, (algo, g) in enumerate(table.groupby("algorithm", sort=False)):
        c = COLORS.get(algo)
        for regime, h in g.groupby("regime", sort=False):
            x = h["pi0(a2)"].iloc[0] * (1 + 0.04 * (i - 0.5))  # the algorithms side by side
            t = np.where(np.isinf(h["expansion"]), steps * 1.15, h["expansion"])
            a1.scatter([x] * len(t), t, color=c, marker=marker[regime], s=16, alpha=0.7)
            d = h["depth"]
            a2.errorbar([x], [d.mean()], yerr=[[d.mean() - d.min()], [d.max() - d.mean()]],
                        color=c, marker=marker[regime], ms=4, capsize=3)
    for mix in mixes:
        names = [n for n, r in regimes.items() if r.hard_share == mix]
        toy = table[table["regime"].isin(names)].groupby("regime")[["pi0(a2)", "toy expansion"]]
        toy = toy.first().sort_values("pi0(a2)")
        ax_toy.plot(toy["pi0(a2)"], toy["toy expansion"].replace(np.inf, np.nan), "k--", lw=0.9,
                    marker=mix_marker[mix], mfc="none", ms=5)
    handles = [plt.Line2D([], [], color=COLORS.get(a), marker="o", ls="", label=a)
               for a in table["algorithm"].unique()]
    handles += [plt.Line2D([], [], color="0.3", marker=mix_marker[m], ls="", mfc="none",
                           label="mix: as drawn" if m is None else f"mix: rare-only share {m:g}")
                for m in mixes]
    handles.append(plt.Line2D([], [], color="k", ls="--", label="toy's prediction"))
    ax_toy.set_ylabel("toy: steps to expansion (its own scale)", fontsize=8)
    a1.axhline(steps * 1.15, color="0.6", lw=0.8)
    a1.set(xlabel="base's P(stepwise) (toy: initial π(a2))", ylabel="LM: step of expansion",
           title="time to expansion (above the line: never)")
    a2.axhline(0, color="0.6", lw=0.8)
    a2.axhspan(-SHRINK_MARGIN, SHRINK_MARGIN, color="0.9")
    a2.set(xlabel="base's P(stepwise)", ylabel="points of Pass@k vs the base",
           title="shrinkage depth on rare-path-only problems")
    priors = sorted(table["pi0(a2)"].unique())
    for ax in (a1, a2):
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(plt.NullFormatter())
        ax.set_xticks(priors, [f"{p:.3g}" for p in priors], fontsize=7, rotation=35)
        ax.title.set_fontsize(9)
        ax.grid(alpha=0.3)
    a2.legend(handles=handles, fontsize=7, loc="lower right")
    fig.suptitle(textwrap.fill(title, 150), fontsize=8)
    fig.tight_layout()
    return fig


# --- verdicts per regime -----------------------------------------------------------------------

def stage_effects(runs: pd.DataFrame) -> tuple[stats.Effect, stats.Effect, bool]:
    """Over one regime's and algorithm's seeds (rows of ``stages``): the shrinkage (minus the
    depth, against ``SHRINK_MARGIN``), the expansion (the gain, against the same margin), and
    whether in every seed the deepest point came before the step of expansion."""
    return (stats.one_sample(-runs["depth"].to_numpy(), SHRINK_MARGIN),
            stats.one_sample(runs["gain"].to_numpy(), SHRINK_MARGIN),
            bool((runs["depth_step"] < runs["expansion"]).all()))


def regime_verdicts(table: pd.DataFrame, entropy: pd.DataFrame) -> pd.DataFrame:
    """Per regime, the paper's LM claims as checks over seeds (``stats``), on the
    rare-path-only problems at the chapter's k (points of Pass@k against the base):

    * per algorithm, *shrinkage*: the depth below -``SHRINK_MARGIN``; *expansion*: the gain
      from start to end above +``SHRINK_MARGIN``; *shrinkage, then expansion*: both replicate
      and in every seed the deepest point comes before the step of expansion;
    * *GRPO-N keeps the base's boundary*: GRPO-N's depth not below -``SHRINK_MARGIN``
      (non-inferiority), read beside GRPO's shrinkage;
    * *GRPO-N's answer entropy above GRPO's* at the end (``entropy``: regime, algorithm, seed,
      answer entropy), by more than ``ENTROPY_MARGIN``."""
    rows = []
    for regime, g in table.groupby("regime", sort=False):
        row = {"regime": regime}
        for algo, h in g.groupby("algorithm", sort=False):
            shrink, grow, ordered = stage_effects(h)
            both = two_stages(shrink.verdict, grow.verdict, ordered)
            row[f"{algo}: shrinkage"] = f"{shrink.verdict} (depth {_neg(shrink)})"
            row[f"{algo}: expansion"] = f"{grow.verdict} (gain {grow.text('{:+.1f}')})"
            row[f"{algo}: shrinkage, then expansion"] = both
        depth = {a: h["depth"].to_numpy() for a, h in g.groupby("algorithm")}
        if "GRPO-N" in depth:
            e = stats.one_sample(depth["GRPO-N"], SHRINK_MARGIN, stats.NON_INFERIORITY)
            row["GRPO-N keeps the base's boundary"] = f"{e.verdict} (depth {e.text('{:+.1f}')})"
        h = entropy[entropy["regime"] == regime]
        ent = {a: x["answer entropy"].to_numpy() for a, x in h.groupby("algorithm")}
        if {"GRPO", "GRPO-N"} <= set(ent):
            e = stats.two_sample(ent["GRPO-N"], ent["GRPO"], ENTROPY_MARGIN)
            row["GRPO-N answer entropy above GRPO"] = f"{e.verdict} ({e.text()})"
        rows.append(row)
    return pd.DataFrame(rows).set_index("regime")


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


def stage_check(shrink: str, expand: str, ordered: bool) -> str:
    """"Shrinkage, then expansion" as one check verdict (``stats.CHECK_VERDICTS``, for the
    closing chapter): replicates when both stages replicate in that order in every seed,
    opposite when both replicate in the other order, else the verdict of the first stage that
    did not replicate."""
    if shrink == expand == stats.REPLICATES:
        return stats.REPLICATES if ordered else stats.OPPOSITE
    return shrink if shrink != stats.REPLICATES else expand


def claim_rows(table: pd.DataFrame, k: int) -> list[dict]:
    """The row this chapter records for ``verdicts`` (claim ``lm_two_stages``): per regime,
    GRPO's "shrinkage, then expansion" decides, GRPO-N's is shown beside it."""
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


def _neg(e: stats.Effect) -> str:
    """An effect estimated on negated values, shown on the original scale."""
    if np.isnan(e.half_width):
        return f"{-e.estimate:+.1f} (one seed: no interval)"
    return f"{-e.estimate:+.1f} [{-e.high:+.1f}, {-e.low:+.1f}]"


def final_entropy(long: pd.DataFrame, setting: str = "full", split: str = "test"
                  ) -> pd.DataFrame:
    """Per run, the answer and token entropy at its last probe (means over problems)."""
    part = long[(long["setting"] == setting) & (long["split"] == split)]
    last = part.groupby(["regime", "algorithm", "seed"])["step"].transform("max")
    return (part[part["step"] == last].groupby(["regime", "algorithm", "seed"])
            [["answer_entropy", "token_entropy"]].mean().rename(
                columns={"answer_entropy": "answer entropy", "token_entropy": "token entropy"})
            .reset_index())


# --- the chapter's sentences about its results, written from the results ---------------------

def _steps(t: Sequence[float]) -> str:
    return ", ".join("never" if np.isinf(x) else f"{x:g}" for x in t)


def _direction(a: float, b: float, same: float) -> int:
    """-1 if ``a`` comes first, +1 if ``b`` does, 0 if neither (within ``same``, or both
    never)."""
    if np.isinf(a) and np.isinf(b):
        return 0
    if np.isinf(a) or np.isinf(b):
        return 1 if np.isinf(a) else -1
    return 0 if abs(a - b) <= same else (-1 if a < b else 1)


def order_agreement(lm: pd.Series, toy_t: pd.Series, probe_every: int
                    ) -> tuple[int, int, list[str]]:
    """(agree, pairs, the others in words): of the pairs of regimes whose toy times to
    expansion (``toy_t``) are more than ``TOY_SAME`` apart (relative; NaN: outside the toy,
    left out), how many the LM's median times (``lm``) order the same way, more than one
    probe interval apart."""
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
                other.append(f"the toy puts {first} before {second}, the LM "
                             + ("ties them" if lm_dir == 0 else "the other way round"))
    return agree, pairs, other


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
                   + (f" ({'; '.join(other)})" if other else "") + ".")
    return " ".join(out)


def ordering_text(orders: pd.DataFrame) -> str:
    """``orderings`` in words: in how many regimes the LM's ordering of GRPO-N against GRPO
    matches the toy's under each optimizer."""
    if orders.empty:
        return "No regime ran both GRPO and GRPO-N."
    names = [c.removeprefix("toy, ") for c in orders.columns if c.startswith("toy, ")]
    parts = [f"under {name} in {sum(name in f for f in orders['follows'])} of {len(orders)}"
             for name in names]
    outside = int((orders[[f"toy, {n}" for n in names]] == "outside the toy").any(axis=1).sum())
    return ("GRPO-N's time to expansion against GRPO's, the LM's ordering matches the toy's "
            + ", ".join(parts) + " regimes"
            + (f" ({outside} outside the toy's scenario)" if outside else "") + ".")
