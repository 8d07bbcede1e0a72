"""The statistics that fit the data (issue 51): the dip on the log scale (``dips``) and the
Kaplan-Meier median with Brookmeyer and Crowley's interval (``survival``), each against a case
computed by hand, and each check shown able to fail."""
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st

from rlvr_dynamics import dips, stats, survival

inf = math.inf


# --- the dip on the log scale --------------------------------------------------------------

def curves(values: dict[int, list[float]], steps=(0, 10, 20, 30)) -> pd.DataFrame:
    """Per-seed mass curves: seed -> masses at ``steps``."""
    return pd.DataFrame(values, index=list(steps), dtype=float)


def test_the_dip_by_hand():
    """Three seeds halve, quarter and keep their mass at step 20, where the others are lowest:
    the geometric mean of 1/2, 1/4, 1 is 2^-1, minus 1: -50 %; its interval is the Student-t
    interval of log(1/2), log(1/4), 0 turned back."""
    m = curves({0: [0.01, 0.008, 0.005, 0.006], 1: [0.02, 0.01, 0.005, 0.01],
                2: [0.01, 0.01, 0.01, 0.012]})
    d = dips.dip(m)
    logs = np.log([0.5, 0.25, 1.0])
    half = st.t.ppf(0.975, 2) * logs.std(ddof=1) / math.sqrt(3)
    assert d.steps == (20.0, 20.0, 20.0)
    assert d.estimate == pytest.approx(-0.5)
    assert d.low == pytest.approx(math.exp(logs.mean() - half) - 1)
    assert d.high == pytest.approx(math.exp(logs.mean() + half) - 1)
    assert d.values == pytest.approx((-0.5, -0.75, 0.0))
    assert (d.fell, d.rose, d.floored) == (2, 0, 0)
    assert d.step == 20 and d.last == 30 and not d.censored


def test_the_interval_stays_above_minus_100_percent_where_the_linear_one_does_not():
    """The issue's case: one seed that rises far and others that nearly vanish. The mean of the
    per-seed ratios with a symmetric t interval crosses -100 %; the log-scale interval cannot."""
    ratios = np.array([0.02, 0.05, 0.9, 0.03, 0.04])
    linear = stats.one_sample(ratios - 1, 0.0)
    assert linear.low < -1                         # the old statistic's impossible interval
    d = dips.over_seeds(np.log(ratios))
    assert -1 < d.low < d.estimate < d.high
    assert d.estimate == pytest.approx(math.exp(np.log(ratios).mean()) - 1)


def test_a_mass_of_zero_is_read_at_the_floor():
    m = curves({0: [0.01, 0.0, 0.0, 0.0], 1: [0.01, 0.0, 0.0, 0.0], 2: [0.01, 1e-9, 0.0, 0.0]})
    d = dips.dip(m)
    assert d.floored == 3
    assert d.values == pytest.approx((dips.FLOOR / 0.01 - 1,) * 3)
    assert np.isfinite(d.low) and d.low > -1


def test_a_fall_still_at_its_lowest_at_the_last_probe_is_censored():
    falling = curves({s: [0.01, 0.008, 0.006, 0.004 + 1e-4 * s] for s in range(3)})
    d = dips.dip(falling)
    assert d.censored and d.step == d.last == 30
    bottomed = curves({s: [0.01, 0.008, 0.004 + 1e-4 * s, 0.006] for s in range(3)})
    assert not dips.dip(bottomed).censored          # the check can fail
    rising = curves({s: [0.01, 0.03, 0.02, 0.015] for s in range(3)})
    assert not dips.dip(rising).censored            # lowest at the end, but no fall


def test_each_seed_is_read_where_the_others_are_lowest():
    """``lowest_steps`` on the log scale is ``stats.leave_one_out`` on log ratios."""
    rng = np.random.default_rng(1)
    m = pd.DataFrame(np.exp(rng.normal(size=(6, 4)) * 0.5) * 0.01, index=[0, 2, 4, 8, 12, 20])
    logr = dips.log_ratios(m)
    loo = stats.leave_one_out(logr)
    assert dips.lowest_steps(logr).to_numpy() == pytest.approx(loo["step"].to_numpy())
    d = dips.dip(m)
    assert np.log1p(d.values) == pytest.approx(loo["value"].to_numpy())


def test_one_seed_has_neither_step_nor_interval():
    d = dips.dip(curves({0: [0.01, 0.005, 0.004, 0.006]}))
    assert np.isnan(d.estimate) and np.isnan(d.half_width)


def test_the_interval_covers_the_geometric_mean_at_its_level():
    """Log-normal ratios, 4 seeds: the interval holds the true geometric mean in 95 % of 3000
    experiments (within 4 binomial standard deviations)."""
    rng = np.random.default_rng(2)
    mu = math.log(0.4)
    hits = [(d := dips.over_seeds(rng.normal(mu, 1.0, 4))).low <= math.exp(mu) - 1 <= d.high
            for _ in range(3000)]
    assert abs(np.mean(hits) - 0.95) < 4 * math.sqrt(0.95 * 0.05 / 3000)


# --- the Kaplan-Meier median and its interval ------------------------------------------------

def test_kaplan_meier_by_hand():
    """Five runs: events at 10, 20 and 30, censored at 25 and 40. By hand: S = 0.8, 0.6, 0.3;
    Greenwood's sums 1/20, 1/20 + 1/12, 1/20 + 1/12 + 1/2; the median 30. The log(-log) bands:
    at 10 the lower one is 0.8^exp(1.96 sqrt(0.05) / |log 0.8|) = 0.204 (<= 1/2: the interval
    starts at 10), the upper one at 30 is 0.3^exp(-1.96 sqrt(0.6333) / |log 0.3|) = 0.719
    (> 1/2: it never falls to 1/2, the interval is open above)."""
    times, last = [10, 20, 30, inf, inf], [10, 20, 30, 25, 40]
    km = survival.kaplan_meier(times, last)
    assert km["time"].tolist() == [10, 20, 30]
    assert km["at risk"].tolist() == [5, 4, 2]
    assert km["survival"].to_numpy() == pytest.approx([0.8, 0.6, 0.3])
    assert km["greenwood"].to_numpy() == pytest.approx([0.05, 0.05 + 1 / 12, 0.05 + 1 / 12 + 0.5])
    assert km["low"].iloc[0] == pytest.approx(0.2038, abs=1e-4)
    assert km["high"].iloc[0] == pytest.approx(0.9692, abs=1e-4)
    assert km["high"].iloc[2] == pytest.approx(0.7193, abs=1e-4)
    m = survival.median(times, last)
    assert (m.estimate, m.low, m.high) == (30, 10, inf)
    assert m.open_above and not m.censored and m.horizon == 40 and m.events == 3


def test_a_finite_upper_end_by_hand():
    """Twenty runs with an event at steps 1..20: S(t) = 1 - t/20, the median 10. The upper band
    first falls to 1/2 or below at the t whose S^exp(-z sigma) <= 1/2, computed here from the
    formula term by term; the lower band at the first t whose S^exp(z sigma) <= 1/2."""
    t = np.arange(1, 21, dtype=float)
    m = survival.median(t, t)
    z = st.norm.ppf(0.975)
    s = 1 - t / 20
    n = 20 - t + 1
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.cumsum(1 / (n * (n - 1)))
        sigma = np.sqrt(g) / np.abs(np.log(s))
        lo, hi = s ** np.exp(z * sigma), s ** np.exp(-z * sigma)
    lo[-1] = hi[-1] = 0.0
    assert m.estimate == 10
    assert m.low == t[np.argmax(lo <= 0.5)] and m.high == t[np.argmax(hi <= 0.5)]
    assert m.low < 10 < m.high < 20


def test_a_censored_median_is_open_above():
    """A planted dataset: two of five runs cross (50, 60), three do not by step 120. The median
    is censored, the interval begins where the lower band reaches 1/2 and is open above."""
    m = survival.median([50, 60, inf, inf, inf], [50, 60, 120, 120, 120])
    assert m.censored and m.open_above and m.horizon == 120
    assert m.low == 50
    assert not survival.median([50, 60, 70, inf, inf], [50, 60, 70, 120, 120]).censored


def test_no_event_at_all():
    m = survival.median([inf, inf], [100, 120])
    assert m.censored and np.isinf(m.low) and m.horizon == 120 and m.events == 0


def test_the_median_is_stats_km_median():
    rng = np.random.default_rng(3)
    for _ in range(300):
        n = int(rng.integers(1, 9))
        last = rng.choice([40.0, 80.0, 120.0], n)
        times = np.where(rng.random(n) < 0.6, np.floor(rng.random(n) * last) + 1, inf)
        assert survival.median(times, last).estimate == stats.km_median(times, last)


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError):
        survival.median([1, 2], [1])
    with pytest.raises(ValueError):
        survival.median([30], [20])                 # an event after the run's end
