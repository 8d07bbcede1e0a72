"""Checks over seeds: Student-t intervals of the right width and coverage, and every verdict
reachable (holds, opposite, no effect within the margin, inconclusive, too few seeds)."""
import math

import numpy as np
import pytest

from rlvr_dynamics import stats


def test_three_seeds_use_two_degrees_of_freedom():
    e = stats.one_sample([1.0, 2.0, 3.0], margin=0.0)
    assert e.df == 2 and e.estimate == 2.0
    assert e.half_width == pytest.approx(4.302653 * 1.0 / math.sqrt(3), rel=1e-6)


def test_welch_degrees_of_freedom_by_hand():
    a, b = np.array([1.0, 2.0, 4.0]), np.array([0.0, 0.5, 0.6, 0.9])
    va, vb = a.var(ddof=1) / 3, b.var(ddof=1) / 4
    e = stats.two_sample(a, b, margin=0.0)
    assert e.df == pytest.approx((va + vb) ** 2 / (va ** 2 / 2 + vb ** 2 / 3))
    assert e.estimate == pytest.approx(a.mean() - b.mean())


def test_intervals_cover_the_truth_at_their_level():
    """3 seeds from N(mu, 1): the 95 % interval holds mu in 95 % of 4000 experiments (within 4
    binomial standard deviations); the old band of two standard errors covers only ~82 %."""
    rng = np.random.default_rng(0)
    x = rng.normal(0.3, 1.0, size=(4000, 3))
    covered = np.mean([abs(stats.one_sample(r, 0.0).estimate - 0.3)
                       <= stats.one_sample(r, 0.0).half_width for r in x])
    assert abs(covered - 0.95) < 4 * math.sqrt(0.95 * 0.05 / 4000)
    se = x.std(1, ddof=1) / math.sqrt(3)
    assert np.mean(abs(x.mean(1) - 0.3) <= 2 * se) < 0.85


@pytest.mark.parametrize("values,margin,verdict", [
    ([0.50, 0.52, 0.51], 0.1, stats.REPLICATES),          # clearly above the margin
    ([-0.50, -0.52, -0.51], 0.1, stats.OPPOSITE),         # clearly on the other side
    ([0.01, -0.01, 0.0], 0.1, stats.NO_EFFECT),           # tight, inside the margin
    ([0.5, -0.4, 0.2], 0.1, stats.UNDECIDED),             # too noisy to say
    ([0.5], 0.1, stats.FEW_SEEDS),                        # one seed: no interval
    ([0.003, 0.003, 0.003], 0.01, stats.NO_EFFECT),       # saturated: zero width, below margin
    ([0.05, 0.05, 0.05], 0.01, stats.REPLICATES),         # saturated and beyond the margin
])
def test_every_superiority_verdict_is_reachable(values, margin, verdict):
    assert stats.one_sample(values, margin).verdict == verdict


@pytest.mark.parametrize("a,b,verdict", [
    ([99.0, 100.0, 99.5], [99.5, 100.0, 99.0], stats.REPLICATES),   # holds the base
    ([80.0, 81.0, 80.5], [99.5, 100.0, 99.0], stats.OPPOSITE),      # clearly below
    ([90.0, 100.0, 99.0], [99.5, 100.0, 99.0], stats.UNDECIDED),    # could be either
    ([99.0], [99.5, 100.0], stats.FEW_SEEDS),
])
def test_every_non_inferiority_verdict_is_reachable(a, b, verdict):
    assert stats.two_sample(a, b, margin=2.0, kind=stats.NON_INFERIORITY).verdict == verdict


def test_a_bad_check_is_refused():
    with pytest.raises(ValueError, match="margin must be >= 0"):
        stats.one_sample([1.0, 2.0], margin=-1)
    with pytest.raises(ValueError, match="kind must be"):
        stats.one_sample([1.0, 2.0], margin=0.1, kind="better")


def test_an_interval_over_seeds_and_problems_covers_the_problems_too():
    """Models that differ on a few problems only: over seeds alone (every seed sees the same
    problems) the interval is narrow and claims an effect; over seeds and problems it is wide
    enough to cover a redraw of the problems. Its coverage is checked by simulation."""
    import numpy as np
    from rlvr_dynamics import stats

    rng = np.random.default_rng(0)
    theta = rng.normal(0, 20, size=8)  # per-problem gaps between the models, mean 0
    a = 50 + theta[None, :] + rng.normal(0, 1, size=(3, 8))
    b = 50 + rng.normal(0, 1, size=(3, 8))
    seeds = stats.two_sample(a.mean(1), b.mean(1), 2.0)
    both = stats.two_sample_problems(a, b, 2.0)
    assert both.estimate == pytest.approx(seeds.estimate)
    assert both.half_width > 3 * seeds.half_width
    covered = 0
    for _ in range(400):  # fresh problems and seeds: the true mean gap is 0
        t = rng.normal(0, 20, size=8)
        x = 50 + t[None, :] + rng.normal(0, 1, size=(3, 8))
        y = 50 + rng.normal(0, 1, size=(3, 8))
        e = stats.two_sample_problems(x, y, 2.0)
        covered += e.low <= 0 <= e.high
    assert covered / 400 >= 0.93
    one = stats.two_sample_problems(a[:, :1], b[:, :1], 2.0)
    assert one.half_width == pytest.approx(stats.two_sample(a[:, 0], b[:, 0], 2.0).half_width)
    with pytest.raises(ValueError, match="same problems"):
        stats.two_sample_problems(a, b[:, :3], 2.0)
