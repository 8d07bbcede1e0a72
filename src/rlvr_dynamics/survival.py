"""Times to an event over runs, some of which end without it: the Kaplan-Meier median and its
interval (issue 51).

Each run has its time of the event (inf: none by its last observation) and its last
observation; a run without the event is *censored* there, at risk up to it, inclusive
(``stats.km_median``'s convention). At each event time t_j with n_j runs at risk and d_j events,
the Kaplan-Meier survival is S(t) = prod_{t_j <= t} (1 - d_j / n_j) and Greenwood's sum
G(t) = sum_{t_j <= t} d_j / (n_j (n_j - d_j)) (so that Var S(t) = S(t)^2 G(t)).

* The **median** is the first event time at which S falls to 1/2 or below (``stats.km_median``'s
  value); inf where it never does within the runs: the median is censored, "not within N
  steps", N the latest observation (``horizon``), never "never".
* Its **interval** is Brookmeyer and Crowley's (1982): the times at which a test of
  S(t) = 1/2 is not rejected, read off pointwise intervals of S. The pointwise intervals are
  Greenwood's on the log(-log) scale (Kalbfleisch and Prentice), which stay inside [0, 1]:
  with sigma(t) = sqrt(G(t)) / |log S(t)|, S(t)^exp(+z sigma) to S(t)^exp(-z sigma), z the
  normal quantile at ``stats.CONFIDENCE`` (both 0 where S(t) = 0). The interval's lower end is
  the first event time at which the lower band falls to 1/2 or below, its upper end the first
  at which the upper band does; inf where a band never does within the runs (open above).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as st

from rlvr_dynamics.stats import CONFIDENCE


@dataclass(frozen=True)
class Median:
    """A Kaplan-Meier median over runs (module docstring): ``estimate``, ``low``, ``high`` (inf:
    beyond every run's last observation), ``horizon`` the latest observation, ``runs`` and
    ``events`` (runs that had the event)."""

    estimate: float
    low: float
    high: float
    horizon: float
    runs: int
    events: int

    @property
    def censored(self) -> bool:
        """The median itself lies beyond the runs: fewer than half had the event."""
        return bool(np.isinf(self.estimate))

    @property
    def open_above(self) -> bool:
        """The interval has no upper end within the runs."""
        return bool(np.isinf(self.high))


def _checked(times, last) -> tuple[np.ndarray, np.ndarray]:
    t, c = np.asarray(times, dtype=float), np.asarray(last, dtype=float)
    if t.shape != c.shape or not len(t) or t.ndim != 1:
        raise ValueError(f"times and last must be non-empty, one-dimensional and of one "
                         f"length, got {t.shape} and {c.shape}")
    if np.isnan(t).any() or np.isnan(c).any() or (np.isfinite(t) & (t > c)).any():
        raise ValueError("every time must be a number (inf: no event) no later than its "
                         f"run's last observation, got {t} and {c}")
    return t, c


def kaplan_meier(times, last, confidence: float = CONFIDENCE) -> pd.DataFrame:
    """One row per event time (module docstring): ``time``, ``at risk``, ``events``,
    ``survival`` S(t), ``greenwood`` G(t), and the log(-log) pointwise band ``low``, ``high``."""
    t, c = _checked(times, last)
    observed = np.where(np.isfinite(t), t, c)
    z = float(st.norm.ppf(0.5 + confidence / 2))
    rows, s, g = [], 1.0, 0.0
    for at in np.unique(t[np.isfinite(t)]):
        n, d = int((observed >= at).sum()), int((t == at).sum())
        s *= 1 - d / n
        g = g + d / (n * (n - d)) if d < n else np.inf
        if s > 0:
            spread = z * np.sqrt(g) / abs(np.log(s))
            band = (s ** np.exp(spread), s ** np.exp(-spread))
        else:
            band = (0.0, 0.0)
        rows.append({"time": float(at), "at risk": n, "events": d, "survival": s,
                     "greenwood": g, "low": float(band[0]), "high": float(band[1])})
    return pd.DataFrame(rows, columns=["time", "at risk", "events", "survival", "greenwood",
                                       "low", "high"])


def median(times, last, confidence: float = CONFIDENCE) -> Median:
    """The Kaplan-Meier median of ``times`` (inf: no event by the run's ``last``
    observation) with Brookmeyer and Crowley's interval (module docstring)."""
    t, c = _checked(times, last)
    km = kaplan_meier(t, c, confidence)

    def first(column: str) -> float:
        hit = km[km[column] <= 0.5]
        return float(hit["time"].iloc[0]) if len(hit) else float("inf")

    return Median(first("survival"), first("low"), first("high"),
                  float(np.where(np.isfinite(t), t, c).max()), len(t),
                  int(np.isfinite(t).sum()))
