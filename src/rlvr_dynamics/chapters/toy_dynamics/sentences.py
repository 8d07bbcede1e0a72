"""The toy chapter's words: the captions that state a figure's settings and spread, the
claim's "ours" for the closing chapter, and the paragraphs and closing bullets written from the
runs (a sentence says what holds only where the numbers say so)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from rlvr_dynamics import stats, toy
from rlvr_dynamics.chapters.toy_dynamics import (EARLY_STEPS, EXPLOITATION_MARGIN, LATE_STEPS,
                                                 NEGATIVE_SHARE_MIN, SHARE_WINDOW, Params,
                                                 negative_shares, two_settings)
from rlvr_dynamics.chapters.toy_dynamics.shown import (COST_EARLY_STEP, SHARE_START_STEPS, fmt,
                                                        show)


# --- captions and printed results --------------------------------------------------------------

def spread(P: Params) -> str:
    """The spread every toy figure states: seeds, the standard error's bound, the band."""
    return (f"mean over {P.seeds} seeds (standard error ≤ 0.5/√{P.seeds} = "
            f"{0.5 / P.seeds**0.5:.3f}), band: central {P.band:.0%} of seeds")


def settings(P: Params) -> str:
    """The main setting's update, as the figures state it."""
    return f"{P.optimizer}, η={P.lr}, G={P.G}, τ={P.tau}"


def unsampled_gradient_text(g: np.ndarray) -> str:
    """``unsampled_gradient``'s g, and whether the unsampled a2's entry is exactly 0."""
    return (f"g for the group {{a1, a3}}: {g} - the entry of the unsampled a2 is "
            + ("exactly 0" if g[1] == 0 else f"{g[1]:.3g}, not 0"))


# --- the claim, as the closing chapter shows it ------------------------------------------------

def ours(P: Params, per_seed: dict[str, np.ndarray]) -> str:
    """The claim ``toy_two_stages`` measured (``claim_rows``' ``ours``): the setting, and the two
    stages in the mean over seeds (``per_seed``: ``stages``' output)."""
    return (f"π0 = {P.pi0}, r = {P.rewards}, G = {P.G}, {P.seeds} seeds, {P.steps} steps: π(a1) "
            f"peaks {per_seed['exploitation'].mean():+.2f} above its start; at the end π(a2) - "
            f"π(a1) = {per_seed['exploration'].mean():+.2f} (mean over seeds)")


def stage_checks_text() -> str:
    """How ``claim_rows`` checks the two stages per seed: the four measurements (with the
    windows ``EARLY_STEPS`` and ``LATE_STEPS``), the interval at ``stats.CONFIDENCE``, and how
    a check reads."""
    return ("The two stages per seed, in the chapter's main setting (`toy.stages`): how far "
            r"$\pi(a_1)$ rose above its start at its peak after step 0 (exploitation; negative "
            r"if it only fell), $\pi(a_2) - \pi(a_1)$ at the last step (exploration), and which "
            f"action the relative negatives are in the first {EARLY_STEPS} and the last "
            f"{LATE_STEPS} steps. Each check is a mean over seeds with its "
            f"{100 * stats.CONFIDENCE:.0f} % Student-t interval against a margin declared in "
            "`chapters/toy_dynamics/__init__.py` (printed in each check; seeds without negative "
            "samples in a window are left out of that share): it *replicates* when the whole "
            "interval clears the margin on the paper's side, is *opposite* when it clears it on "
            "the other side, and shows *no effect within the margin* when it lies inside.")


# --- prose written from the results ------------------------------------------------------------

SWITCH_LO, SWITCH_HI = 0.1, 0.9
"""A single run's switch: from its last step with pi(a2) below ``SWITCH_LO`` to its first above
``SWITCH_HI``."""
SIZEABLE = 0.1
"""A mean probability at the last step that counts as mass kept on an action."""


def _stages(mean: np.ndarray) -> tuple[bool, bool, int]:
    """For one setting's mean policy (steps+1, K): stage 1 (pi(a1) peaks above its start while
    pi(a3) falls), stage 2 (after the peak pi(a2) rises and pi(a1) falls) and the peak step."""
    peak = int(mean[:, 0].argmax())
    stage1 = bool(mean[peak, 0] > mean[0, 0] and mean[peak, 2] < mean[0, 2])
    stage2 = bool(mean[-1, 1] > mean[peak, 1] and mean[-1, 0] < mean[peak, 0])
    return stage1, stage2, peak


def _ordered(times: list[float]) -> bool:
    """Whether times to expansion never fall along the list (inf counts as latest)."""
    return all(a <= b for a, b in zip(times, times[1:]))


def _at(t: float) -> str:
    """'at step t', or 'never' if it did not happen within the steps run."""
    return "never" if np.isinf(t) else f"at step {t:.0f}"


def _joined(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def figure1_text(P: Params, by_pi0: toy.Summary, by_r: toy.Summary) -> str:
    """What Figure 1 and its table show: in how many panels the mean has both stages, whether
    the mean pi(a2) dips in stage 1, and how the median time to expansion orders with r(a1) and
    with a2's initial probability."""
    panels = [(by_pi0, s) for s in range(len(P.pi0_sweep))] + [(by_r, s) for s in
                                                                range(len(P.reward_sweep))]
    found = [_stages(sm.mean[:, s]) for sm, s in panels]
    both = sum(a and b for a, b, _ in found)
    dips = sum(sm.mean[:, s, 1].min() < sm.mean[0, s, 1] for sm, s in panels)
    peaks = [p for *_, p in found]
    text = (f"In the mean over seeds both stages appear in {both} of the {len(panels)} panels "
            f"(π(a1) peaks, and π(a3) falls, between steps {min(peaks)} and {max(peaks)}; after "
            "the peak, π(a1) declines as π(a2) rises). During stage 1 the mean π(a2) falls below "
            f"its start in {dips} of them (last column of the table)")
    text += (", the paper's \"or may even decrease\": a2 gets no gradient until it is sampled "
             "while the normaliser grows with z(a1). " if dips else ". ")
    med_r = [float(np.median(t)) for t in by_r.t_expand]
    order_r = np.argsort([r[0] for r in P.reward_sweep], kind="stable")
    text += ("The median time to expansion is " + _joined(
        [f"{fmt(med_r[i])} for r(a1) = {P.reward_sweep[i][0]:g}" for i in order_r]))
    med_p = [float(np.median(t)) for t in by_pi0.t_expand]
    p2 = [p[1] for p in P.pi0_sweep]
    text += "; from the initial policies it is " + _joined(
        [f"{fmt(m)} from π0 = {tuple(p)}" for m, p in zip(med_p, P.pi0_sweep)]) + ". "
    later_r = _ordered([med_r[i] for i in order_r]) and len(set(med_r)) > 1
    rarer = sorted(set(p2))
    later_p = len(rarer) > 1 and all(
        min(m for m, q in zip(med_p, p2) if q == lo) >= max(m for m, q in zip(med_p, p2) if q == hi)
        for lo, hi in zip(rarer, rarer[1:])) and len(set(med_p)) > 1
    claims = [c for c, ok in (("the closer r(a1) is to r(a2)", later_r),
                              ("the rarer a2 starts", later_p)) if ok]
    if claims:
        return text + f"Expansion comes later {' and '.join(claims)}."
    return text + ("Within these runs the median does not order clearly with r(a1) or with a2's "
                   "initial probability.")


def _switch_durations(runs: np.ndarray) -> list[int]:
    """The switch of each single run (steps+1, E, K) that reached pi(a2) > ``SWITCH_HI``: the
    steps since its last pi(a2) < ``SWITCH_LO`` before that."""
    out = []
    for e in range(runs.shape[1]):
        p2 = runs[:, e, 1]
        above = np.flatnonzero(p2 > SWITCH_HI)
        if len(above):
            below = np.flatnonzero(p2[: above[0]] < SWITCH_LO)
            out.append(int(above[0] - (below[-1] if len(below) else 0)))
    return out


def single_runs_text(P: Params, by_pi0: toy.Summary, by_r: toy.Summary) -> str:
    """How abruptly Figure 1's single runs switch, against how widely the seeds' times to
    expansion spread."""
    panels = [(by_pi0, s) for s in range(len(P.pi0_sweep))] + [(by_r, s) for s in
                                                                range(len(P.reward_sweep))]
    durations = [d for sm, s in panels for d in _switch_durations(sm.examples[:, s])]
    shown = sum(sm.examples.shape[2] for sm, _ in panels)
    sm, s = max(panels, key=lambda p: np.isfinite(p[0].t_expand[p[1]]).mean())
    t = sm.t_expand[s]
    q10, q90 = np.quantile(t, [0.1, 0.9], method="inverted_cdf")
    label = show(P.pi0_sweep[s], P.rewards) if sm is by_pi0 else show(P.pi0, P.reward_sweep[s])
    spread_text = (f"across seeds the time to expansion spreads from {fmt(q10)} (10 % of seeds) "
                   f"to {fmt(q90)} (90 %) in the panel where most seeds expand ({label}, "
                   f"{np.isfinite(t).mean():.0%} of seeds)")
    if not durations:
        return (f"None of the {shown} single runs drawn switches from π(a2) < {SWITCH_LO:g} to "
                f"π(a2) > {SWITCH_HI:g} within the horizon; {spread_text}.")
    text = (f"Of the {shown} single runs drawn, {len(durations)} switch from π(a2) < "
            f"{SWITCH_LO:g} to π(a2) > {SWITCH_HI:g} within the horizon, in "
            f"{min(durations)} to {max(durations)} steps (median {np.median(durations):.0f}), "
            f"while {spread_text}. ")
    if np.isfinite(q90) and np.median(durations) < 0.5 * (q90 - q10) or not np.isfinite(q90):
        return text + ("**Each run switches quickly, at a random time**: for a single run the "
                       "second stage is an event whose waiting time is set by how often a2 is "
                       "sampled, not a gradual drift.")
    return text + ("Here the switches take about as long as their timing varies, so the mean's "
                   "decline is not only an average of abrupt events.")


def relative_negatives_text(main: toy.Summary) -> str:
    """Who the relative negatives are at the start, after the peak of pi(a1), and at the end
    (the main setting's first setting)."""
    share = negative_shares(main)
    peak = int(main.mean[:, 0, 0].argmax())
    early_a3 = np.nanmean(share[:SHARE_START_STEPS, 2])
    late = np.nanmean(share[peak:], 0)
    a2 = np.nanmax(share[:, 1]) if np.isfinite(share[:, 1]).any() else 0.0
    text = (f"In steps 0-{SHARE_START_STEPS - 1}, {early_a3:.0%} of the negative samples are a3; "
            f"after the peak of π(a1) (step {peak}), {late[0]:.0%} are a1 and {late[2]:.0%} are "
            f"a3. ")
    text += ("The shift is there: once π(a1) has saturated, most negative samples are a1, drawn "
             "in the same group as an a2. " if early_a3 > NEGATIVE_SHARE_MIN
             and late[0] > NEGATIVE_SHARE_MIN else
             "The shift from a3 to a1 does not show in this build's windows. ")
    return text + (f"a2's share never exceeds {a2:.0%}: the best action cannot be a relative "
                   "negative (its advantage is never below zero), while a sampled a3 always is, "
                   "unless its whole group is a3.")


def mean_field_text(P: Params, by_opt: dict[str, toy.Summary]) -> str:
    """When the mean field and the mean trajectory expand, per optimiser and setting, the
    largest gap between them, and whether runs expand where the mean field never does."""
    parts, ahead = [], {}
    for name, sm in by_opt.items():
        rows = []
        for s, p in enumerate(two_settings(P)):
            field = float(toy.expansion_time(sm.mean_field[:, s]))
            mean = float(toy.expansion_time(sm.mean[:, s]))
            gap = np.abs(sm.mean[:, s] - sm.mean_field[:, s]).max()
            ahead.setdefault(name, []).append(field < mean)
            rows.append(f"from π0(a2) = {p[1]:g} the mean field expands {_at(field)}, the mean "
                        f"of runs {_at(mean)} ({np.isfinite(sm.t_expand[s]).mean():.0%} of "
                        f"runs), with gaps of up to {gap:.2f} in probability")
        parts.append(f"Under {name}, " + "; ".join(rows) + ".")
    text = " ".join(parts)
    if all(ahead.get("Adam", [False])):
        text += " **Under Adam the mean field expands before the average run in both settings.**"
    else:
        text += " Under Adam the mean field does not run ahead of the average run in both settings."
    sgd = by_opt.get("SGD")
    if sgd is not None and any(np.isfinite(toy.expansion_time(sgd.mean_field[:, s])) == False  # noqa: E712
                               and np.isfinite(sgd.t_expand[s]).any()
                               for s in range(len(two_settings(P)))):
        text += " Under SGD some runs expand within the horizon where the mean field never does."
    return text


def group_size_text(by_G: dict[int, toy.Summary]) -> str:
    """Whether both stages show at every G, and how the median time to expansion and the spread
    of the seeds' times change with G."""
    stages = [_stages(sm.mean[:, 0]) for sm in by_G.values()]
    medians = [float(np.median(sm.t_expand[0])) for sm in by_G.values()]
    both = all(a and b for a, b, _ in stages)
    text = ("Both stages are present at every G. " if both else
            "Both stages are present in the mean at " + (", ".join(
                f"G = {g}" for g, (a, b, _) in zip(by_G, stages) if a and b) or "no G") + ". ")
    text += "The median time to expansion is " + _joined(
        [f"{fmt(m)} at G = {g}" for g, m in zip(by_G, medians)]) + ", with "
    text += _joined([f"{np.isfinite(sm.t_expand[0]).mean():.0%} of seeds expanded at G = {g}"
                     for g, sm in by_G.items()]) + ". "
    falls = all(a >= b for a, b in zip(medians, medians[1:])) and medians[0] > medians[-1]
    return text + ("What G changes most is *when* stage 2 comes: more samples per step find a2 "
                   "sooner." if falls else
                   "In this build a larger G does not bring expansion sooner.")


def temperature_text(P: Params, by_tau: toy.Summary) -> str:
    """Per temperature: the median time to expansion and how far the sampling policy's pi(a1)
    rises above its start."""
    medians = [float(np.median(t)) for t in by_tau.t_expand]
    rise = [by_tau.mean[:, s, 0].max() - by_tau.mean[0, s, 0] for s in range(len(P.tau_sweep))]
    text = "The median time to expansion is " + _joined(
        [f"{fmt(m)} at τ = {t:g}" for m, t in zip(medians, P.tau_sweep)])
    text += ", and the sampling policy's π_τ(a1) rises above its start by at most " + _joined(
        [f"{r:.3f} at τ = {t:g}" for r, t in zip(rise, P.tau_sweep)]) + ". "
    order = np.argsort(P.tau_sweep)
    sooner = (all(medians[a] >= medians[b] for a, b in zip(order, order[1:]))
              and medians[order[0]] > medians[order[-1]])
    weaker = all(rise[a] >= rise[b] for a, b in zip(order, order[1:]))
    text += ("A higher temperature flattens the sampling policy, so a2 is sampled early and "
             "expansion comes sooner: the paper's case for a higher training temperature. "
             if sooner else "Here expansion does not come sooner at every higher temperature. ")
    if weaker:
        text += "The price is the exploitation stage, which weakens as τ grows"
        hottest = order[-1]
        return text + (f" and at τ = {P.tau_sweep[hottest]:g} hardly happens (π_τ(a1) rises by "
                       f"less than {EXPLOITATION_MARGIN:g})." if rise[hottest] < EXPLOITATION_MARGIN
                       else ".")
    return text + "The exploitation stage does not weaken steadily with τ here."


def four_action_text(P: Params, four: toy.Summary) -> str:
    """Per four-action setting: the mean probability of each intermediate action (a4 on) at the
    start and the end, and whether mass stays on one whose reward lies between r(a1) and
    r(a2)."""
    parts, stuck = [], False
    for s, (pi0, r) in enumerate(zip(P.pi0_four, P.rewards_four)):
        for k in range(3, len(pi0)):
            start, end = four.mean[0, s, k], four.mean[-1, s, k]
            parts.append(f"with r(a{k + 1}) = {r[k]:g}, the mean π(a{k + 1}) goes from "
                         f"{start:.3f} to {end:.3f} (π(a2) ends at {four.mean[-1, s, 1]:.3f})")
            stuck |= bool(r[0] < r[k] < r[1] and end >= SIZEABLE)
    text = "Over the run, " + "; ".join(parts) + ". "
    if stuck:
        return text + ("Where an unexplored action whose reward lies between a1's and a2's keeps "
                       "a sizeable share at the end, some runs expanded to it first and stayed "
                       "there: expansion need not reach the best action.")
    return text + "No intermediate action keeps a sizeable share at the end in this build."


def negative_only_text(by_opt: dict[str, toy.Summary], negative: dict[str, toy.Summary]) -> str:
    """Standard against negative-only, per optimiser (the main setting): when runs expand, how
    many, the reward over the run and pi(a1) early on; and pi(a2)'s fate where nothing expands."""
    out = []
    for name in by_opt:
        std, neg = by_opt[name], negative[name]
        m_std, m_neg = (float(np.median(sm.t_expand[0])) for sm in (std, neg))
        f_std, f_neg = (np.isfinite(sm.t_expand[0]).mean() for sm in (std, neg))
        r_std, r_neg = (sm.reward[:, 0, 0].mean() for sm in (std, neg))
        early = min(COST_EARLY_STEP, len(std.mean) - 1)
        q = [fmt(x) for x in np.quantile(neg.t_expand[0], [0.1, 0.9], method="inverted_cdf")]
        faster = m_neg < m_std or (m_neg == m_std and f_neg > f_std)
        verdict = "yes" if faster and r_neg > r_std else "no"
        text = (f"**Under {name}, {verdict}**: the median time to expansion is {fmt(m_neg)} "
                f"with negative-only updates and {fmt(m_std)} with standard ones ({f_neg:.0%} against {f_std:.0%} of "
                f"seeds expanded; negative-only's 10 % / 90 % quantiles {q[0]} / {q[1]}), the mean "
                f"reward over the run {r_neg:.3f} against {r_std:.3f}, and the mean π(a1) at step "
                f"{early} {neg.mean[early, 0, 0]:.3f} against {std.mean[early, 0, 0]:.3f}.")
        if f_neg == 0:
            p2 = neg.mean[:, 0, 1]
            text += (f" With negative-only updates no run expands, and the mean π(a2) goes from "
                     f"{p2[0]:.4f} to {p2[-1]:.4f}"
                     + (" (it decays)." if p2[-1] < p2[0] else "."))
        out.append(text)
    return "\n\n".join(out)


def phase_text(P: Params, grids: dict[str, toy.ExpansionGrid]) -> str:
    """The phase diagram in words: per update rule, how many cells' median run expands, how the
    median grows as a2 starts rarer (at the smallest G) and falls with G, and the mean fields'
    range."""
    order = np.argsort(P.expansion_p2)[::-1]            # from common to rare a2
    parts, grows = [], {}
    for rule, grid in grids.items():
        med = np.median(grid.t_seed, -1)
        finite = np.isfinite(med)
        row = [med[0, j] for j in order]
        grows[rule] = _ordered(row) and row[0] < row[-1]
        shorter = sum(med[i + 1, j] <= med[i, j] for i in range(len(P.expansion_G) - 1)
                      for j in range(len(P.expansion_p2)))
        pairs = (len(P.expansion_G) - 1) * len(P.expansion_p2)
        field = grid.t_field[np.isfinite(grid.t_field)]
        slowest = fmt(med[finite].max()) if finite.any() else "none"
        parts.append(
            f"With the {rule} update the median run expands within {P.expansion_steps} steps in "
            f"{finite.sum()} of {finite.size} cells (the slowest at {slowest}); at G = "
            f"{P.expansion_G[0]} its median is " + _joined(
                [f"{fmt(med[0, j])} from π0(a2) = {P.expansion_p2[j]:g}" for j in order])
            + f"; a larger G shortens or keeps the median in {shorter} of {pairs} comparisons; "
            "its mean field expands " + (f"at steps {field.min():.0f} to {field.max():.0f}"
                                         if len(field) else "nowhere") + ".")
    text = " ".join(parts)
    if grows.get("standard"):
        text += (" With the standard update the time to expansion grows as a2 starts rarer: "
                 "stage 1 drives π(a2) down further (its logit is frozen while a1's grows), so "
                 "the wait for the first useful sample of a2 lengthens. This is the paper's "
                 "shrinkage made quantitative: the rarer the better answer, the longer training "
                 "must last to find it.")
    return text


def summary_text(table: pd.DataFrame, by_opt: dict[str, toy.Summary],
                 negative: dict[str, toy.Summary], grids: dict[str, toy.ExpansionGrid]) -> str:
    """The closing bullets: which of the paper's toy claims hold here (``summary_table``), and
    this chapter's own findings with their numbers."""
    held = [c for c, ok in table["holds here"].items() if ok]
    missed = [c for c, ok in table["holds here"].items() if not ok]
    bullets = [("**Reproduced, in the mean over seeds**: " + "; ".join(held) + "."
                if held else "**None of the paper's toy claims holds here in the mean.**")
               + (f" **Not reproduced here**: {'; '.join(missed)}." if missed else "")]
    adam = by_opt.get("Adam")
    if adam is not None:
        f = [_at(float(toy.expansion_time(adam.mean_field[:, s])))
             for s in range(adam.mean.shape[1])]
        m = [_at(float(toy.expansion_time(adam.mean[:, s]))) for s in range(adam.mean.shape[1])]
        bullets.append("**The trajectory of means against the mean of trajectories** (Adam, the "
                       f"two settings): the mean field expands {' and '.join(f)}, the mean of "
                       f"runs {' and '.join(m)}. Theorem 1 is a one-step statement; iterated, it "
                       "is not a forecast of the run.")
    for name in by_opt:
        s, n = (float(np.median(sm[name].t_expand[0])) for sm in (by_opt, negative))
        bullets.append(f"**Negative-only under {name}** (beyond the paper): median time to "
                       f"expansion {fmt(n)}, against {fmt(s)} for the standard update.")
    cells = {rule: np.isfinite(np.median(g.t_seed, -1)) for rule, g in grids.items()}
    bullets.append("**Time to expansion** (beyond the paper): the median run expands in "
                   + _joined([f"{c.sum()} of {c.size} cells with the {rule} update"
                              for rule, c in cells.items()]) + " of the phase diagram.")
    return "\n".join(f"- {b}" for b in bullets)


def law_text(P: Params, kappa: float, fit: pd.DataFrame, fresh: pd.DataFrame) -> str:
    """The transition law's fit and its error at the fresh points (``chapter.transition_law``)."""
    def spread(t: pd.DataFrame) -> str:
        ok = t[np.isfinite(t["mean field"])]["law / mean field"]
        return f"{ok.min():.2f}-{ok.max():.2f} ({len(ok)} of {len(t)} points within the run)"

    within = np.isfinite(fresh["mean field"])
    beyond, longer = fresh[~within], (fresh["mean field"] / fresh["two paths"])[within]
    return (f"Fitted on {len(fit)} points ({len(P.law_G)} group sizes × {len(P.law_rewards)} "
            f"rewards × {len(P.law_p2)} starts of a2, from π0 = {tuple(P.pi0)} at learning "
            f"rate {P.sgd_lr:g}): κ = {kappa:.3f}, law over mean field {spread(fit)}. At the "
            f"{len(fresh)} fresh points (π0 split {P.fresh_pi0[0]:g} / {P.fresh_pi0[2]:g} "
            f"between a1 and a3, learning rate {P.fresh_lr:g}): law over mean field "
            f"{spread(fresh)}"
            + (f"; where the mean field had not got there within {P.law_steps:,} steps, the law "
               f"says {', '.join(fmt(t) for t in beyond['law'])}" if len(beyond) else "")
            + f". With the bad action the wait is {longer.min():.0f} to {longer.max():.0f} times "
            "the two-path law's.")


def adam_law_text(table: pd.DataFrame | None) -> str:
    """How close Adam fed the moments comes to the runs, split by how often a group holds a2
    (G pi0(a2) at least 0.1 or below), and how far the mean field is ("" where the build did
    not compute it)."""
    if table is None:
        return ""
    ok = table[np.isfinite(table["runs (median)"])]
    often = ok[ok["G pi0(a2)"] >= 0.1]["moments / runs"]
    rare = ok[ok["G pi0(a2)"] < 0.1]["moments / runs"]
    field = (ok["mean field"] / ok["runs (median)"])

    def span(x: pd.Series) -> str:
        return f"{x.min():.2f}-{x.max():.2f} ({len(x)} cells)" if len(x) else "no cell"

    return (f"Adam fed the moments over the runs' median: {span(often)} where G·π0(a2) ≥ 0.1 "
            f"(a group often holds a2), {span(rare)} below; the mean field over the runs' median: "
            f"{span(field)}.")


def rules_text(by_rule: dict[str, dict[str, toy.Summary]]) -> str:
    """Per optimizer, the update whose runs expand soonest in the main setting (the median time
    to expansion, ties broken by the share expanded), beside the negative-only update's."""
    out = []
    for opt in next(iter(by_rule.values())):
        key = {rule: (float(np.median(b[opt].t_expand[0])), -np.isfinite(b[opt].t_expand[0]).mean())
               for rule, b in by_rule.items()}
        best = min(key, key=key.get)
        neg = by_rule.get("negative-only", {}).get(opt)
        said = (f"; the negative-only update: {fmt(float(np.median(neg.t_expand[0])))}"
                if neg is not None and best != "negative-only" else "")
        out.append(f"under {opt} the {best} update expands soonest (median "
                   f"{fmt(key[best][0])}, {-key[best][1]:.0%} of seeds){said}")
    return "In the main setting, " + "; ".join(out) + "."


# --- the figures' captions: settings, seeds and spread ------------------------------------------

def figure1_caption(P: Params) -> str:
    """Figure 1's caption."""
    return (f"Panels 1-{len(P.pi0_sweep)}: r = {tuple(P.rewards)}, the initial policy varied; "
            f"then π0 = {tuple(P.pi0)}, the rewards varied. {settings(P)}; {spread(P)}; "
            "dashed: the mean field (Theorem 1).")


def relative_negatives_caption(P: Params) -> str:
    """The relative negatives' caption."""
    return (f"{show(P.pi0, P.rewards)}; {settings(P)}; {spread(P)}. Right: the shares of the "
            f"negative samples, pooled over {P.seeds} seeds in windows of {SHARE_WINDOW} steps.")


def optimizers_caption(P: Params) -> str:
    """The mean field's caption."""
    return (f"Mean over seeds (thick) and mean field (dashed) under each optimizer; "
            f"r = {tuple(P.rewards)}, G = {P.G}, τ = {P.tau}; {spread(P)}.")


def figure5_caption(P: Params) -> str:
    """Figure 5's caption."""
    return (f"{show(P.pi0, P.rewards)}; {P.optimizer}, η = {P.lr}, τ = {P.tau}; {spread(P)}; "
            "dashed: the mean field.")


def figure6_caption(P: Params) -> str:
    """Figure 6's caption."""
    return (f"Logits start at log π0, π0 = {tuple(P.pi0)}; curves: the sampling policy "
            f"Softmax(z/τ). r = {tuple(P.rewards)}; {P.optimizer}, η = {P.lr}, G = {P.G}; "
            f"{spread(P)}; dashed: the mean field.")


def figure7_caption(P: Params) -> str:
    """Figure 7's caption."""
    return f"Four actions; {settings(P)}; {spread(P)}; dashed: the mean field."


def negative_only_caption(P: Params) -> str:
    """The negative-only update's caption."""
    return (f"{show(P.pi0, P.rewards)}, G = {P.G}, τ = {P.tau}; a row per optimizer; "
            f"{spread(P)}; dashed: the mean field.")


def phase_caption(P: Params) -> str:
    """The phase diagram's caption."""
    return (f"Top: the median time to expansion per cell; bottom: its distribution over seeds "
            f"at the smallest G. π0 = {tuple(P.pi0)} with a2's mass set, r = "
            f"{tuple(P.rewards)}; {P.optimizer}, η = {P.lr}, τ = {P.tau}; "
            f"{P.expansion_seeds} seeds per cell, {P.expansion_steps} steps (grey: the median "
            "run had not expanded).")
