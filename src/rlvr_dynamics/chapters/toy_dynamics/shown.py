"""The toy chapter's tables as displayed, read from its parameters and runs: the settings
Algorithm 1 leaves unsaid (a markdown table), times to expansion per setting, the mean field
against the mean of runs, what the negative-only update gains and costs, the phase diagram's
grid, and the paper's toy claims on this build's numbers (plain DataFrames, their cells written
for people: a time to expansion that did not happen is "never")."""
from __future__ import annotations

import numpy as np
import pandas as pd

from rlvr_dynamics import toy
from rlvr_dynamics.chapters.style import with_legend
from rlvr_dynamics.chapters.toy_dynamics import (NEGATIVE_SHARE_MIN, Params, negative_shares,
                                                 two_settings)


# --- the settings Algorithm 1 leaves unsaid ----------------------------------------------------

def settings_table(P: Params) -> str:
    """The settings that Algorithm 1 leaves unsaid, as this build sets them (markdown: the
    paper's, ours, why)."""
    def listed(x: list[float]) -> str:
        return ", ".join(f"{v:g}" for v in x)
    (b1, b2), eps = toy.ADAM_BETAS, np.log10(toy.ADAM_EPS)
    rows = [
        ("rewards", r"$0<r(a_1)<r(a_2)$, $r(a_3)=0$",
         f"$r = ({listed(P.rewards)})$; Figure 1's second row varies $r(a_1)$",
         r"Adam is invariant to the scale of $\mathbf g$ (up to its $\epsilon$), so only "
         r"$r(a_1)/r(a_2)$ matters"),
        ("initial policy", r'$\pi(a_1) > \pi(a_2)$, $a_2$ "unexplored"',
         rf"$\pi_0 = ({listed(P.pi0)})$; Figure 1's first row varies it",
         "$a_2$ rare enough that most early groups miss it, common enough to be found within "
         "the run"),
        ("steps", "not stated", f"{P.steps} ({P.expansion_steps} for the phase diagram)",
         r"chosen for both stages to fit at the paper's $\eta$"),
        ("Adam", '"Adam"', rf"$\beta = ({b1:g}, {b2:g})$, $\epsilon = 10^{{{eps:.0f}}}$, bias "
         "correction, one optimiser state per run",
         "`torch.optim.Adam`'s defaults (the test suite checks our Adam against it)"),
        ("temperature", r"$\pi = \mathrm{Softmax}(\mathbf z/\tau)$",
         r"logits start at $\log\pi_0$ for every $\tau$; actions are sampled from "
         r"$\mathrm{Softmax}(\mathbf z/\tau)$ and $\mathbf g$ is the gradient of its log, which "
         r"carries a factor $1/\tau$",
         "what an LLM trainer does: the base model's logits are given, the temperature reshapes "
         "sampling and the log-probabilities are taken at that temperature"),
        ("seeds", "not stated", f"{P.seeds} runs per curve (`seeds`), {P.expansion_seeds} per "
         "cell of the phase diagram (`expansion_seeds`)",
         "to show the mean, its spread, and single runs")]
    return "\n".join(["| setting | paper | here | why |", "|---|---|---|---|",
                      *(f"| {' | '.join(row)} |" for row in rows)])


# --- times to expansion, per figure ------------------------------------------------------------

def fmt(t: float) -> str:
    """A time to expansion for a table: 'never' if it did not happen within the steps run."""
    return "never" if np.isinf(t) else f"{t:.0f}"


def show(pi, r) -> str:
    """A setting (initial policy and rewards) as a label."""
    return f"π0={tuple(pi)}, r={tuple(r)}"


def expansion_table(summary: toy.Summary, labels: list[str] | pd.Index) -> pd.DataFrame:
    """Per setting (``labels``, or an index of one row per setting): when pi(a2) overtakes
    pi(a1) (median over seeds, share of seeds that got there, the mean trajectory, the mean
    field) and the peak of the mean pi(a1)."""
    index = labels if isinstance(labels, pd.Index) else pd.Index(labels, name="setting")
    return pd.DataFrame({
        "median over seeds": [fmt(np.median(t)) for t in summary.t_expand],
        "seeds expanded": [f"{np.isfinite(t).mean():.0%}" for t in summary.t_expand],
        "mean trajectory": [fmt(t) for t in toy.expansion_time(summary.mean)],
        "mean field": [fmt(t) for t in toy.expansion_time(summary.mean_field)],
        "peak of mean π(a1) @ step": [f"{m:.3f} @ {i}" for m, i in zip(
            summary.mean[..., 0].max(0), summary.mean[..., 0].argmax(0))],
        "mean π(a2): start → lowest": [f"{a:.4f} → {b:.4f}" for a, b in zip(
            summary.mean[0, :, 1], summary.mean[..., 1].min(0))],
    }, index=index)


EXPANSION_LEGEND = {
    "initial π_τ": ("π_τ at start", "the sampling policy Softmax(log π0 / τ) at step 0"),
    "median over seeds": ("median", "the median over seeds of the step at which π(a2) first "
                          "exceeds π(a1) (never: not within the run)"),
    "seeds expanded": ("expanded", "the share of seeds in which it did"),
    "mean trajectory": ("mean", "that step for the mean over seeds"),
    "mean field": ("field", "that step for the mean field (Theorem 1)"),
    "peak of mean π(a1) @ step": ("π(a1) peak", "the peak of the mean π(a1) @ its step"),
    "mean π(a2): start → lowest": ("π(a2) dip", "the mean π(a2) at the start → at its lowest")}
"""The times-to-expansion tables' short column labels and what each means, named under the
tables (``style.with_legend``)."""


def expansion_shown(table: pd.DataFrame):
    """An ``expansion_table`` for the page: short labels, a legend, cells on one line."""
    return with_legend(table, {k: v for k, v in EXPANSION_LEGEND.items() if k in table},
                       unwrapped=True)


def figure1_tables(P: Params, by_pi0: toy.Summary, by_r: toy.Summary) -> tuple:
    """The times to expansion of Figure 1's settings (``expansion_table``), a table per row of
    the figure: the initial policies at the chapter's rewards, then the rewards from its
    initial policy."""
    return (expansion_shown(expansion_table(by_pi0, pd.Index(
                [str(tuple(p)) for p in P.pi0_sweep], name=f"π0 (r = {tuple(P.rewards)})"))),
            expansion_shown(expansion_table(by_r, pd.Index(
                [str(tuple(r)) for r in P.reward_sweep], name=f"r (π0 = {tuple(P.pi0)})"))))


MEAN_FIELD_LEGEND = {
    "max |mean − mean field|": ("largest gap", "the largest |mean over seeds − mean field| "
                                "of any action's probability"),
    "at step": ("at step", "where it is"),
    "expansion of the mean trajectory": ("mean expands", "the step at which π(a2) first "
                                         "exceeds π(a1) in the mean over seeds"),
    "expansion of the mean field": ("field expands", "that step in the mean field")}
"""The mean-field table's short column labels and what each means."""


def mean_field_table(P: Params, by_opt: dict[str, toy.Summary]):
    """Per optimiser and initial policy (at the chapter's rewards): the largest gap between the
    mean trajectory and the mean field, where it is, and when each of them expands (short
    labels, ``MEAN_FIELD_LEGEND``)."""
    def gap(sm, s):
        return np.abs(sm.mean[:, s] - sm.mean_field[:, s])

    return with_legend(pd.DataFrame([
        {"optimizer": name, "π0": str(tuple(p)),
         "max |mean − mean field|": f"{gap(sm, s).max():.3f}",
         "at step": int(gap(sm, s).max(-1).argmax()),
         "expansion of the mean trajectory": fmt(toy.expansion_time(sm.mean[:, s])),
         "expansion of the mean field": fmt(toy.expansion_time(sm.mean_field[:, s]))}
        for name, sm in by_opt.items() for s, p in enumerate(two_settings(P))]
    ).set_index(["optimizer", "π0"]), MEAN_FIELD_LEGEND, unwrapped=True)


def group_size_table(by_G: dict[int, toy.Summary]):
    """The times to expansion of Figure 5's group sizes."""
    return expansion_shown(pd.concat([expansion_table(sm, [f"G = {g}"])
                                      for g, sm in by_G.items()]))


def temperature_table(P: Params, by_tau: toy.Summary):
    """The times to expansion of Figure 6's temperatures, with each one's initial sampling
    policy."""
    table = expansion_table(by_tau, [f"τ = {t:g}" for t in P.tau_sweep])
    table.insert(0, "initial π_τ", ["(" + ", ".join(f"{v:.3f}" for v in p) + ")"
                                    for p in by_tau.mean[0]])
    return expansion_shown(table)


def extremes_table(P: Params, ext: list[tuple[float, float]]) -> pd.DataFrame:
    """``chapter.extremes`` per setting of Figure 7: the smallest expected logit change of the
    best action and the largest of the worst, over the steps of the mean field."""
    return pd.DataFrame(
        [{"setting": show(P.pi0_four[s], P.rewards_four[s]),
          "min over steps of E[g(a_max)]": f"{best:.2e}",
          "max over steps of E[g(a_min)]": f"{worst:.2e}"} for s, (best, worst) in enumerate(ext)]
    ).set_index("setting")


# --- beyond the paper: what the negative-only update gains and costs ---------------------------

COST_EARLY_STEP = 50
"""The step at which the negative-only update's early cost (pi(a1), reward) is read."""
COST_FIRST_STEPS = 100
"""The stretch over which the early reward is averaged (steps 0 to this)."""


def costs(sm: toy.Summary) -> dict[str, str]:
    """What an update rule gains and costs in the first setting of ``sm``: when the runs
    expand, pi(a1) and the reward early on, the reward over the run and at its end."""
    reward = sm.reward[:, 0, 0]
    early = min(COST_EARLY_STEP, len(reward) - 1)
    return {"median time to expansion": fmt(np.median(sm.t_expand[0])),
            "seeds expanded": f"{np.isfinite(sm.t_expand[0]).mean():.0%}",
            f"mean π(a1) at step {early}": f"{sm.mean[early, 0, 0]:.3f}",
            f"mean reward at step {early}": f"{reward[early]:.3f}",
            f"mean reward, first {COST_FIRST_STEPS} steps":
                f"{reward[:COST_FIRST_STEPS + 1].mean():.3f}",
            "mean reward, whole run": f"{reward.mean():.3f}",
            "time to expansion, 10% / 90% of seeds": " / ".join(
                fmt(q) for q in np.quantile(sm.t_expand[0], [0.1, 0.9], method="inverted_cdf")),
            "final mean reward": f"{reward[-1]:.3f}"}


def costs_table(by_opt: dict[str, toy.Summary], negative: dict[str, toy.Summary]
                ) -> pd.DataFrame:
    """``costs`` per optimiser, standard and negative-only side by side."""
    return pd.DataFrame({(name, rule): costs(sm) for name in by_opt
                         for rule, sm in (("standard", by_opt[name]),
                                          ("negative-only", negative[name]))})


# --- beyond the paper: the phase diagram's grid ------------------------------------------------

def expansion_grid_table(P: Params, grids: dict[str, toy.ExpansionGrid]) -> pd.DataFrame:
    """The time to expansion of the mean trajectory and of the mean field on the grid."""
    index = pd.Index([f"G={g}" for g in P.expansion_G], name="G")
    columns = pd.Index([f"{p:g}" for p in P.expansion_p2], name="initial π(a2)")
    return pd.concat({(rule, what): pd.DataFrame(np.vectorize(fmt)(t), index=index,
                                                 columns=columns)
                      for rule, grid in grids.items()
                      for what, t in (("mean trajectory", grid.t_mean),
                                      ("mean field", grid.t_field))},
                     names=["update", "time to expansion of"])


# --- the summary: the paper's toy claims on this build's numbers -------------------------------

STAGE1_A2_SLACK = 1.05
"""Stage 1's "pi(a2) stays put or falls": the mean pi(a2) at the peak of pi(a1) is at most
this times its start."""
SHARE_START_STEPS = 10
"""The first steps over which a3's share of the relative negatives is read (steps 0-9)."""


def summary_table(main: toy.Summary, by_G: dict[int, toy.Summary],
                  ext: list[tuple[float, float]]) -> pd.DataFrame:
    """Each toy claim of the paper (Figure 1's two stages, the shift of the relative negative,
    Figure 5's group sizes, Figure 7's signs from ``extremes``), what this build shows, and
    whether it holds here (in the mean over seeds)."""
    share = negative_shares(main)
    steps = len(main.mean) - 1
    peak = int(main.mean[:, 0, 0].argmax())
    start, top, end = main.mean[0, 0], main.mean[peak, 0], main.mean[-1, 0]
    medians = [np.median(sm.t_expand[0]) for sm in by_G.values()]
    early_a3 = np.nanmean(share[:SHARE_START_STEPS, 2])
    late_a1 = np.nanmean(share[peak:, 0])
    return pd.DataFrame([
        ("stage 1: π(a1) rises, π(a3) falls, π(a2) stays or falls",
         f"mean π {np.round(start, 3).tolist()} → {np.round(top, 3).tolist()} at step {peak}",
         top[0] > start[0] and top[2] < start[2] and top[1] <= STAGE1_A2_SLACK * start[1]),
        ("stage 2: π(a2) rises, π(a1) falls",
         f"mean π {np.round(end, 3).tolist()} at step {steps}",
         end[1] > top[1] and end[0] < top[0]),
        ("the relative negative shifts from a3 to a1",
         f"a3's share {early_a3:.2f} in steps 0-{SHARE_START_STEPS - 1}, "
         f"a1's share {late_a1:.2f} after step {peak}",
         early_a3 > NEGATIVE_SHARE_MIN and late_a1 > NEGATIVE_SHARE_MIN),
        ("a larger G keeps both stages (and expands sooner)",
         "median time to expansion " + ", ".join(f"G={g}: {fmt(m)}"
                                                 for g, m in zip(by_G, medians)),
         all(a >= b for a, b in zip(medians, medians[1:]))),
        ("four actions: E[Δz(a_max)] ≥ 0, E[Δz(a_min)] < 0",
         "along the mean field of both settings",
         all(best >= 0 > worst for best, worst in ext)),
    ], columns=["claim (paper)", "this build", "holds here"]).set_index("claim (paper)")


def law_table(fresh: pd.DataFrame) -> pd.DataFrame:
    """The transition law at the fresh points (``chapter.transition_law``): the setting, the SGD
    mean field's time, the law's, their ratio, the two stages in sequence, and the time
    without the bad action (two paths); "never" where the mean field did not get there."""
    return pd.DataFrame({
        "G": fresh["G"], "r": [f"{a:g} / {b:g} / {c:g}" for a, b, c in
                               fresh[["r(a1)", "r(a2)", "r(a3)"]].to_numpy()],
        "π0(a2)": fresh["pi0(a2)"], "mean field": fresh["mean field"].map(fmt),
        "law": fresh["law"].map(fmt),
        "law / mean field": [f"{x:.2f}" if np.isfinite(t) else "-"
                             for x, t in zip(fresh["law / mean field"], fresh["mean field"])],
        "two stages in sequence": fresh["two phases"].map(fmt),
        "two paths": fresh["two paths"].map(fmt)}).set_index(["G", "r", "π0(a2)"])


def adam_law_table(table: pd.DataFrame | None) -> pd.DataFrame | None:
    """``chapter.adam_law`` for people: per (G, pi0(a2)), the runs' median time, Adam fed the
    moments, their ratio, and the mean field with its law; "never" where none got there (None
    where the build did not compute it)."""
    if table is None:
        return None
    return pd.DataFrame({
        "G": table["G"], "π0(a2)": table["pi0(a2)"],
        "runs (median)": table["runs (median)"].map(fmt),
        "Adam on the moments": table["Adam on the moments"].map(fmt),
        "moments / runs": [f"{x:.2f}" if np.isfinite(t) else "-"
                           for x, t in zip(table["moments / runs"], table["runs (median)"])],
        "mean field": table["mean field"].map(fmt),
        "its law": table["mean-field law"].map(fmt)}).set_index(["G", "π0(a2)"])


def rules_table(by_rule: dict[str, dict[str, toy.Summary]]) -> pd.DataFrame:
    """Per update rule and optimizer, in the main setting: the median time to expansion, the
    share of seeds expanded, the mean reward over the run and the mean π(a2) at the end."""
    return pd.DataFrame([{"update": rule, "optimizer": opt,
                          "median time to expansion": fmt(float(np.median(sm.t_expand[0]))),
                          "expanded": f"{np.isfinite(sm.t_expand[0]).mean():.0%}",
                          "mean reward over the run": f"{sm.reward[:, 0, 0].mean():.3f}",
                          "π(a2) at the end": f"{sm.mean[-1, 0, 1]:.3f}"}
                         for rule, by_opt in by_rule.items() for opt, sm in by_opt.items()]
                        ).set_index(["update", "optimizer"])
