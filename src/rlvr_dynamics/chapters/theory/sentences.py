"""The theory chapter's words: what the notebook prints of each check, and the paragraphs and
closing bullets written from the measured numbers (a sentence says what holds only where the
number says so)."""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from rlvr_dynamics.chapters.theory import (AUTOGRAD_TOL, EQ2_GAP, EQ2_REL_TOL, EXACT_TOL,
                                           MC_SE, MC_SLOPE_TOL, PROP1_SLOPE_TOL, Z_MAX, Check,
                                           PROMPT, Eq2Check, GroupCheck, MonteCarlo, Params,
                                           Prop1Check, Tabular, probability_gainers,
                                           remark2_cases)


# --- what the notebook prints of each check ----------------------------------------------------

def setting_text(setting: Tabular) -> str:
    """The tabular setting: pi, A and r, one per line."""
    return (f"policy pi: {np.round(setting.pi, 3)} \nadvantages A: {np.round(setting.A, 2)} "
            f"\nrewards r: {setting.r}")


def lemma1_symbolic_text(check: Check, P: Params) -> str:
    """``lemma1_symbolic``'s result."""
    V = P.symbolic_vocab
    return (f"V = {V}: all {V**2} entries of d log pi(v)/dz_u - (delta_uv - pi(u)) "
            + ("simplify to 0" if check.record["lemma1_symbolic_zero"] else
               "do not all simplify to 0"))


def lemma1_autograd_text(check: Check, P: Params) -> str:
    """``lemma1_autograd``'s largest error."""
    return (f"max |eta * autograd - Lemma 1| over {P.draws} draws: "
            f"{check.record['lemma1_autograd_max_error']:.1e}")


def theorem1_text(check: Check, P: Params) -> str:
    """``theorem1_exact``'s two results, one per line."""
    r = check.record
    return (f"symbolic residuals (V = {P.symbolic_vocab}) expand to 0: "
            f"{r['theorem1_symbolic_zero']}\n"
            f"max |sum over actions - Theorem 1| = {r['theorem1_enumeration_max_error']:.1e}")


def group_symbolic_text(group: GroupCheck) -> str:
    """The symbolic part of ``group_check``."""
    sizes = ", ".join(str(G) for G in group.symbolic)
    return (f"symbolic: V = {group.symbolic_vocab}, G = {sizes}: "
            + ("every residual expands to 0" if all(group.symbolic.values()) else
               "not every residual expands to 0"))


def network_text(check: Prop1Check) -> str:
    """The network of ``proposition1_check``: its size, vocabulary and eNTK spectrum."""
    eig = np.linalg.eigvalsh(check.result.K)
    return (f"model: {check.n_params:,} parameters, V = {len(check.tokens)}; eNTK eigenvalues "
            f"{eig.min():.3g} to {eig.max():.3g}")


def equation2_group_text(eq2: Eq2Check) -> str:
    """The sampled group of ``equation2_check``: lengths and rewards, the importance ratios'
    range and the cosine between the two gradients, one per line."""
    low, high = eq2.ratio_range
    return (f"completion lengths |y_i| = {eq2.lengths}, "
            f"rewards = {eq2.rewards.astype(int).tolist()}\n"
            f"importance ratios w_(i,t) range over [{low:.3f}, {high:.3f}]\n"
            f"cos(GRPO gradient, GRPO-N gradient) = {eq2.cos_full_negative_only:.3f}")


# --- prose written from the results ------------------------------------------------------------

RATIO_SPREAD_Z = 3.0
"""The text calls an RMS/SE ratio consistent with no bias within this many times its relative
spread 1/sqrt(2 R) over R repeated means."""


def _ranged(values, fmt: str = "{:.2f}") -> str:
    """'a' if all values print alike, else 'a to b'."""
    low, high = fmt.format(min(values)), fmt.format(max(values))
    return low if low == high else f"{low} to {high}"


def monte_carlo_text(mc: MonteCarlo, P: Params) -> str:
    """What the Monte Carlo figure shows: the fitted slopes, and how far the RMS errors sit from
    their exact standard-error lines (a bias would lift them above the lines at large N)."""
    single, group = mc.slopes
    ratios = np.concatenate([mc.rms_single / mc.se_single, mc.rms_group / mc.se_group])
    spread = 1 / math.sqrt(2 * P.mc_repeats)
    slopes_ok = all(abs(s + 0.5) < MC_SLOPE_TOL for s in (single, group))
    on_lines = bool(np.all(np.abs(ratios - 1) < RATIO_SPREAD_Z * spread))
    text = (f"The fitted slopes are {single:.3f} (Theorem 1) and {group:.3f} (the group update, "
            f"G = {mc.G}), against −1/2, and the measured RMS errors lie at {_ranged(ratios)} "
            f"times their exact standard errors (dashed) over N = {mc.samples[0]:,} to "
            f"{mc.samples[-1]:,} (an RMS over {P.mc_repeats} means scatters by about "
            f"{spread:.2f} of itself). ")
    if slopes_ok and on_lines:
        smallest = min(mc.rms_single.min(), mc.rms_group.min())
        return text + ("So the sampled averages converge to the formulas and nowhere else: no "
                       f"bias is visible down to the smallest error measured, {smallest:.1e}.")
    return text + ("So the sampled averages do not follow the formulas' standard errors "
                   "everywhere: a bias, or too few repeats, shows in this build.")


def group_text(group: GroupCheck) -> str:
    """What the group table shows: the ratio column against 1 - 1/G, and the largest Monte Carlo
    deviation in standard errors against ``Z_MAX``."""
    table = group.table
    gap = float(np.abs(table["‖E[U]‖ / ‖Theorem 1‖"] - table["1 - 1/G"]).max())
    z = table[MC_SE]
    worst = int(z.idxmax())
    ratio = ("reproduces 1 − 1/G to all printed digits" if gap < 5e-4 else
             f"misses 1 − 1/G by up to {gap:.3g}")
    return (f"The ratio column {ratio} (largest gap {gap:.1e}); the largest Monte Carlo deviation "
            f"over the V components is {z.max():.2f} standard errors (at G = {worst}; "
            f"{_ranged(z.tolist())} over G = {', '.join(str(g) for g in table.index)}), "
            + ("within the few standard errors expected of unbiased means." if z.max() < Z_MAX
               else f"beyond the {Z_MAX:g} standard errors expected of unbiased means."))


def proposition1_text(check: Prop1Check) -> str:
    """What Proposition 1's table and left panel show: the error ratio per halving of eta, the
    fitted slope, the ratio of the change itself, and the smallest error measured."""
    p1 = check.record["prop1"]
    ratios = p1["halving_ratios"]
    change = np.abs(check.result.actual).max(1)
    change_ratios = (change[:-1] / change[1:]).tolist()
    second_order = abs(p1["slope"] - 2) < PROP1_SLOPE_TOL
    text = (f"Each time η halves, the error of the prediction falls by a factor of "
            f"{_ranged(ratios)} (fitted slope {p1['slope']:.3f}; {ratios[0]:.2f} at the largest "
            f"steps, {ratios[-1]:.2f} at the smallest), while Δlog π itself falls by "
            f"{_ranged(change_ratios)}: ")
    text += ("the decomposition is right to first order and its remainder is second order, as "
             "Appendix B.3 states." if second_order else
             "the remainder is not second order in this build, against Appendix B.3.")
    return text + (f" The smallest error measured is {min(p1['errors']):.1e}, at "
                   f"η = {check.lrs[-1]:.2g}.")


def cosines_text(check: Prop1Check) -> str:
    """What the cosines table shows: whether the measured changes follow Proposition 1 better
    than K = I, and the logits K Delta z better than Delta z."""
    p1 = check.record["prop1"]
    text = (f"The measured Δlog π has cosine {p1['cos_actual_predicted']:.5f} with Proposition "
            f"1's prediction and {p1['cos_actual_K_identity']:.5f} with K = I; the measured "
            f"change of the logits has cosine {p1['cos_logit_change_K_dz']:.5f} with KΔz and "
            f"{p1['cos_logit_change_dz']:.5f} with Lemma 1's Δz. ")
    if p1["cos_logit_change_K_dz"] > p1["cos_logit_change_dz"]:
        return text + ("So the network's logits do not move along Theorem 1's Δz but along "
                       "KΔz, as Proposition 1 says.")
    return text + "So here the network's logits follow Δz at least as closely as KΔz."


def equation2_text(eq2: Eq2Check) -> str:
    """What the Eq. 2 table shows: each gradient's gap to autograd, the importance ratios, and
    how far apart the full and the negative-only gradients point."""
    gaps = eq2.table[EQ2_GAP]
    low, high = eq2.ratio_range
    agree = bool((gaps < EQ2_REL_TOL).all())
    text = ("Both gradients " + ("agree" if agree else "do not agree") + " with autograd: "
            + ", ".join(f"{name} to {gap:.1e} of its size" for name, gap in gaps.items())
            + f", with importance ratios from {low:.3f} to {high:.3f} and completion lengths "
            f"{_ranged(eq2.lengths, '{:d}')}. ")
    cos = eq2.cos_full_negative_only
    if cos < 1 - 1e-6:
        return text + (f"The negative-only gradient points in a different direction from the "
                       f"full one (cosine {cos:.3f}), since the positive responses' terms are "
                       "gone.")
    return text + f"The negative-only gradient points along the full one (cosine {cos:.6f})."


def summary_text(record: dict[str, Any], P: Params) -> str:
    """The closing bullets, from the ``collect``ed record alone: what holds, with its numbers."""
    s, p1 = record, record["prop1"]
    gap = [row[EQ2_GAP] for row in record["eq2"]["table"]]
    slopes = (s["theorem1_mc_slope"], s["group_mc_slope"])
    exact = (s["lemma1_symbolic_zero"] and s["theorem1_symbolic_zero"]
             and s["lemma1_autograd_max_error"] < AUTOGRAD_TOL
             and s["theorem1_enumeration_max_error"] < EXACT_TOL)
    rate = all(abs(x + 0.5) < MC_SLOPE_TOL for x in slopes)
    group = s["group"]
    ratio_gap = max(abs(row["‖E[U]‖ / ‖Theorem 1‖"] - row["1 - 1/G"]) for row in group)
    z = max(row[MC_SE] for row in group)
    group_ok = all(s["group_symbolic_zero"].values()) and ratio_gap < 5e-4 and z < Z_MAX
    gainers = s["remark2_gainers_after_rare_positive"]
    second = abs(p1["slope"] - 2) < PROP1_SLOPE_TOL
    kdz = p1["cos_logit_change_K_dz"] > p1["cos_logit_change_dz"]
    low, high = record["eq2"]["ratio_range"]
    lengths = record["eq2"]["lengths"]
    bullets = [
        ("**Lemma 1 and Theorem 1 hold exactly** for a softmax policy" if exact and rate else
         "**Lemma 1 and Theorem 1 do not pass every check here**")
        + f": symbolically, against autograd to {s['lemma1_autograd_max_error']:.0e}, and "
        f"against Monte Carlo averages whose error falls with slopes {slopes[0]:.3f} and "
        f"{slopes[1]:.3f} in N (the rate N^-1/2 predicts −0.5).",
        ("**Algorithm 1's expected step is $(1-1/G)$ times Theorem 1**" if group_ok else
         "**Algorithm 1's expected step misses $(1-1/G)$ times Theorem 1 in some check**")
        + r" with $\hat A(u)=r(u)-\mathbb E_\pi[r]$: proved above, and checked symbolically, "
        f"exactly (the ratio column within {ratio_gap:.0e} of 1 − 1/G) and by Monte Carlo "
        f"(at most {z:.2f} standard errors off) for G = "
        f"{', '.join(str(row['G']) for row in group)}. For the paper's $G=2$ the toy moves at "
        "half the speed of the formula, in the same direction.",
        "**Remark 2 holds for logits, not always for probabilities**: after a positive sample "
        r"of a rare action, other rare actions gain probability whenever "
        r"$\pi(u)+\pi(v)<\sum_w\pi(w)^2$, because the dominant action's logit falls most; on "
        f"this build's policy, after a positive sample of action {P.vocab - 2} (sorted), "
        + (f"actions {', '.join(str(u) for u in gainers)} gain probability." if gainers else
           "no other action gains probability."),
        ("**Proposition 1 holds to first order on a real transformer**, with an "
         r"$\mathcal O(\eta^2)$ remainder" if second else
         "**Proposition 1's remainder is not second order here**")
        + f" (error slope {p1['slope']:.3f} in η, ratio {p1['halving_ratios'][-1]:.2f} at the "
        "last halving). "
        + (r"The logits move along $K\Delta\mathbf z$ rather than Lemma 1's $\Delta\mathbf z$ "
           f"(cosines {p1['cos_logit_change_K_dz']:.4f} against "
           f"{p1['cos_logit_change_dz']:.4f}); the tabular picture is the $K\\approx cI$ case."
           if kdz else
           r"Here the logits follow Lemma 1's $\Delta\mathbf z$ at least as closely as "
           r"$K\Delta\mathbf z$."),
        ("**Eq. 2 and the negative-only gradient of B.5** are the gradients of the unclipped "
         "objective" if max(gap) < EQ2_REL_TOL else
         "**Eq. 2 or the negative-only gradient of B.5 misses autograd**")
        + f" (relative gaps {gap[0]:.0e} and {gap[1]:.0e}), checked with importance ratios from "
        f"{low:.3f} to {high:.3f} and responses of {_ranged(lengths, '{:d}')} tokens.",
    ]
    return "\n".join(f"* {b}" for b in bullets)


def saved_text(path: Path, profile: str) -> str:
    """Where the chapter's record of every number was saved."""
    return f"all numbers saved to results/{profile}/theory/{path.name}"


# --- the figures' captions ---------------------------------------------------------------------

def remark2_caption(setting: Tabular, P: Params) -> str:
    """Remark 2's caption: the policy, the step and, per sampled action, the other actions that
    gain probability after a positive sample (``probability_gainers``)."""
    pi = setting.pi[np.argsort(-setting.pi)]
    gains = "; ".join(f"after A(v) = +1 on action {v} ({name}), the others that gain "
                      f"probability: {_listed(probability_gainers(pi, v, P.lr))}"
                      for name, v in remark2_cases(P.vocab).items())
    return (f"Lemma 1's logit change (top) and the exact probability change (bottom) on the "
            f"seed-{P.seed} policy over {P.vocab} actions, η = {P.lr}, |A(v)| = 1 (exact, no "
            f"sampling); green: A(v) = +1, red: A(v) = −1; dashed: the sampled action. {gains}.")


def _listed(actions: list[int]) -> str:
    return ", ".join(map(str, actions)) or "none"


def monte_carlo_caption(P: Params, G: int) -> str:
    """Theorem 1's Monte Carlo caption."""
    return (f"V = {P.vocab}, η = {P.lr}, seed {P.seed}; each point the RMS error over "
            f"{P.mc_repeats} independent means of N sampled actions (blue) or N groups of "
            f"G = {G} (orange); dashed: the exact standard error; dotted: slope −1/2.")


def proposition1_caption(check: Prop1Check, P: Params) -> str:
    """Proposition 1's caption."""
    return (f"A tiny Qwen2 (hidden {P.hidden}, {P.layers} layers, {check.n_params:,} "
            f"parameters, random init seed {P.seed}, float64), prompt `{PROMPT}`, one "
            "deterministic step. Left: the remainder against η (dotted: slope 2) beside the "
            "change itself; right: one step's change per next token.")
