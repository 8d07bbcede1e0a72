"""When the second stage begins: the time T until the rare, better action a2 overtakes the
explored one a1 (the toy's time to expansion), as a law of pi0, the rewards, the group size G,
the learning rate and tau, derived from the mean field of the standard update under SGD.

The mean field (``toy.mean_field``, Theorem 1 with the group's factor 1 - 1/G) is gradient
ascent on the expected reward: dz_a/dt = c pi_a (r_a - rbar), c = lr (1 - 1/G) / tau, rbar =
pi . r. Write D = r1 - r3 (the explored good action against the bad one) and d = r2 - r1 (the
rare action's edge), u = z1 - z3, w = z2 - z1.

* Two paths (no a3): a1 and a2 alone follow dw/dt = 2 c d sigma(w) (1 - sigma(w)), so
  T = (e^{-w0} - e^{w0} - 2 w0) / (2 c d), about pi0(a1) / (2 c d pi0(a2)) (``two_paths``).
* Three paths, phase A (stage 1): while pi(a2) is small, a1 absorbs a3 with z1 + z3 fixed and
  du/dt = 2 c D sigma(u) (1 - sigma(u)), so t(u) = (u + sinh u - u0 - sinh u0) / (c D); a2's
  logit drifts with d e^{-z2}/dt = -c (r2 - rbar) / (e^{z1} + e^{z3}), which integrates in u to
  e^{-z2(u)} = e^{-z2(0)} - (I(u) - I(u0)) / (D e^{(z1+z3)/2}), I(u) = d e^{u/2} - (r2 - r3)
  e^{-u/2}. Phase A ends where a1's drift turns, pi(a2) d = pi(a3) D: with x = e^{u/2},
  2 d x^2 - R x - (r2 - r3) = 0, R = I(u0) + D sqrt(pi1 pi3) / pi2 (pi at the start).
* Phase B (stage 2): from there a2 overtakes a1 as in two paths, from w* = -ln(d x*^2 / D).

To leading order in pi0(a2) both phases take x*^2 / (2 c D) and x* = R / (2 d), so
T = kappa D pi1 pi3 / (c d^2 pi2^2) (``scale``): the time grows as the inverse *square* of the
rare action's start where the two-path time grows as its inverse, because stage 1 lowers
pi(a2) before it can rise. The two-phase sum gives kappa = 1/4; the mean field itself, where the
phases overlap, is shorter by a constant factor, which ``fit_kappa`` measures on a grid and
``check`` tests at fresh points.

Under Adam fed the mean field's gradient, each logit moves by about lr a step while its
gradient keeps its sign: z1 and z2 rise together and z3 falls until a1's drift turns
(pi(a2) d = pi(a3) D), then z2 - z1 closes at 2 lr a step, so T = ln(D pi1 pi3 / (d pi2^2)) /
(2 lr), and ln(pi1 / pi2) / (2 lr) with two paths (``adam_mean_field``). The simulator does
not follow it: with groups of G samples the rare action's gradient is mostly noise, which
Adam's normaliser divides it by. Adam fed the exact moments of the group's gradient instead (its
m an average of E[g], its v of E[g^2], from ``theory.group_update_moments``; ``adam_moments``)
keeps the noise in the normaliser and comes close to the runs where a group often holds a2.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from rlvr_dynamics import theory, toy


def rate(G: int, lr: float, tau: float = 1.0) -> float:
    """c = lr (1 - 1/G) / tau: the mean field's speed under SGD (Theorem 1's group factor)."""
    return lr * (1 - 1 / G) / tau


def two_paths(pi0: Sequence[float], r: Sequence[float], G: int, lr: float,
              tau: float = 1.0) -> float:
    """T with a1 and a2 alone (pi0 and r: [a1, a2], or a third entry that is ignored):
    (e^{-w0} - e^{w0} - 2 w0) / (2 c d), w0 = ln(pi0(a2) / pi0(a1))."""
    w0, d = np.log(pi0[1] / pi0[0]), r[1] - r[0]
    return float((np.exp(-w0) - np.exp(w0) - 2 * w0) / (2 * rate(G, lr, tau) * d))


def three_paths(pi0: Sequence[float], r: Sequence[float], G: int, lr: float,
                tau: float = 1.0) -> dict[str, float]:
    """The two phases of the module's derivation: ``stage 1`` (a1 absorbs a3 until a1's drift
    turns), ``stage 2`` (a2 overtakes a1 from there) and their sum ``T``."""
    (p1, p2, p3), (r1, r2, r3) = pi0, r
    D, d, c = r1 - r3, r2 - r1, rate(G, lr, tau)
    R = d * np.sqrt(p1 / p3) - (r2 - r3) * np.sqrt(p3 / p1) + D * np.sqrt(p1 * p3) / p2
    x = (R + np.sqrt(R * R + 8 * d * (r2 - r3))) / (4 * d)
    u, u0 = 2 * np.log(x), np.log(p1 / p3)
    stage1 = (u + np.sinh(u) - u0 - np.sinh(u0)) / (c * D)
    w = -np.log(d * x * x / D)
    stage2 = (np.exp(-w) - np.exp(w) - 2 * w) / (2 * c * d)
    return {"stage 1": float(stage1), "stage 2": float(stage2), "T": float(stage1 + stage2)}


def scale(pi0: Sequence[float], r: Sequence[float], G: int, lr: float,
          tau: float = 1.0) -> float:
    """The leading order's scale D pi1 pi3 / (c d^2 pi2^2): T = kappa times it."""
    (p1, p2, p3), (r1, r2, r3) = pi0, r
    return float((r1 - r3) * p1 * p3 / (rate(G, lr, tau) * (r2 - r1) ** 2 * p2 ** 2))


def adam_mean_field(pi0: Sequence[float], r: Sequence[float], lr: float) -> dict[str, float]:
    """The mean field's T under Adam (a sign-like step of ``lr`` per logit; the module's
    derivation), with a bad explored action and without (two paths)."""
    (p1, p2, p3), (r1, r2, r3) = pi0, r
    return {"three paths": float(np.log((r1 - r3) * p1 * p3 / ((r2 - r1) * p2 ** 2)) / (2 * lr)),
            "two paths": float(np.log(p1 / p2) / (2 * lr))}


def adam_moments(pi0: Sequence[float], r: Sequence[float], G: int, lr: float,
                 steps: int = 5_000) -> float:
    """T under Adam (``toy.ADAM_BETAS``, ``toy.ADAM_EPS``) fed the exact first and second
    moments of the standard update's group gradient (``theory.group_update_moments``) in place
    of one group's draw: deterministic, with the gradient's noise in Adam's normaliser (inf: not
    within ``steps``)."""
    (b1, b2), r = toy.ADAM_BETAS, np.asarray(r, dtype=float)
    z = toy.logits(pi0).astype(float)
    m, v = np.zeros_like(z), np.zeros_like(z)
    for t in range(1, steps + 1):
        pi = theory.softmax(z)
        if pi[1] > pi[0]:
            return float(t - 1)
        mean, cov = theory.group_update_moments(pi, r, G, 1.0)
        m = b1 * m + (1 - b1) * mean
        v = b2 * v + (1 - b2) * (np.diag(cov) + mean ** 2)
        z += lr * m / (1 - b1 ** t) / (np.sqrt(v / (1 - b2 ** t)) + toy.ADAM_EPS)
    return float("inf")


def adam_table(pi0: Sequence[float], r: Sequence[float], lr: float, G: Sequence[int],
               p2: Sequence[float], runs: np.ndarray, field: np.ndarray) -> pd.DataFrame:
    """The phase diagram's runs under Adam (``runs``: their median time per (G, pi0(a2)), the
    chapter's ``expansion_grids``; ``field``: the mean field's) beside ``adam_moments`` and
    ``adam_mean_field`` from the same starts."""
    rows = []
    for i, g in enumerate(G):
        for j, p in enumerate(p2):
            start = toy.with_unexplored(pi0, p)
            rows.append({"G": g, "pi0(a2)": p, "G pi0(a2)": g * p, "runs (median)": runs[i, j],
                         "Adam on the moments": adam_moments(start, r, g, lr),
                         "mean field": field[i, j],
                         "mean-field law": adam_mean_field(start, r, lr)["three paths"]})
    out = pd.DataFrame(rows)
    return out.assign(**{"moments / runs": out["Adam on the moments"] / out["runs (median)"]})


def mean_field_times(pi0s: Sequence[Sequence[float]], r: Sequence[float], G: int, lr: float,
                     tau: float = 1.0, optimizer: str = "sgd", steps: int = 20_000
                     ) -> np.ndarray:
    """The mean field's time to expansion (``toy.mean_field``) from each start of ``pi0s``,
    one vectorised run (inf: not within ``steps``)."""
    pi = toy.mean_field(toy.logits(np.asarray(pi0s, dtype=float)), r, G=G, lr=lr, tau=tau,
                        optimizer=optimizer, steps=steps)
    return toy.expansion_time(pi)


def fit_kappa(times: np.ndarray, scales: np.ndarray) -> float:
    """kappa of T = kappa scale, fitted on log T (the geometric mean of T / scale over the
    finite times)."""
    ok = np.isfinite(times)
    return float(np.exp(np.mean(np.log(times[ok] / scales[ok]))))


def grid(p2: Sequence[float], rewards: Sequence[Sequence[float]], G: Sequence[int],
         pi0: Sequence[float], lr: float, tau: float = 1.0, steps: int = 20_000
         ) -> pd.DataFrame:
    """The law beside the SGD mean field at every (G, r, pi0(a2)) of the grid
    (``toy.with_unexplored(pi0, p)``): the mean field's T, the two-phase T, the scale, and the
    two-path T from the same pi0(a1) and pi0(a2)."""
    rows = []
    for g in G:
        for r in rewards:
            starts = [toy.with_unexplored(pi0, p) for p in p2]
            field = mean_field_times(starts, r, g, lr, tau, steps=steps)
            for p, s, t in zip(p2, starts, field):
                rows.append({"G": g, "r(a1)": r[0], "r(a2)": r[1], "r(a3)": r[2],
                             "pi0(a2)": p, "mean field": float(t),
                             "two phases": three_paths(s, r, g, lr, tau)["T"],
                             "scale": scale(s, r, g, lr, tau),
                             "two paths": two_paths(s, r, g, lr, tau)})
    return pd.DataFrame(rows)


def check(table: pd.DataFrame, kappa: float) -> pd.DataFrame:
    """``table`` (``grid``) with the law kappa x scale and its ratio to the mean field."""
    out = table.assign(law=kappa * table["scale"])
    return out.assign(**{"law / mean field": out["law"] / out["mean field"]})
