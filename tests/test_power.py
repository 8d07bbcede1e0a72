"""The power plan (``power``): the variance parts estimated from a pilot, the half-width they
predict against the interval the verdicts compute (``stats.two_sample_problems``) on data drawn
from the model, and the design it asks for."""
import numpy as np
import pytest

from rlvr_dynamics import power, stats


def draw(rng, S, N, seed_sd, residual_sd, problems):
    """Values of one model: mu + tau_s + p_j + e_sj, ``problems`` the p_j."""
    return (rng.normal(0, seed_sd, (S, 1)) + problems[None, :]
            + rng.normal(0, residual_sd, (S, N)))


def pair(rng, S, N, truth):
    p_a = rng.normal(0, 1.0, N)
    p_b = p_a - rng.normal(0, np.sqrt(truth["problem"]), N)  # the difference's own spread
    return (draw(rng, S, N, np.sqrt(truth["seed_a"]), np.sqrt(truth["residual_a"]), p_a),
            draw(rng, S, N, np.sqrt(truth["seed_b"]), np.sqrt(truth["residual_b"]), p_b))


TRUTH = {"seed_a": 4.0, "seed_b": 1.0, "residual_a": 100.0, "residual_b": 64.0, "problem": 9.0}


def test_the_parts_are_recovered_from_a_large_pilot():
    rng = np.random.default_rng(0)
    estimates = [power.components(*pair(rng, 40, 400, TRUTH)) for _ in range(20)]
    for name, value in TRUTH.items():
        mean = np.mean([getattr(c, name) for c in estimates])
        assert mean == pytest.approx(value, rel=0.15), name


def test_the_predicted_half_width_is_the_intervals_at_another_design():
    """Pilots at 3 x 32 predict the mean half-width of the verdicts' interval at 5 x 64 (and
    at 3 x 32 itself); a prediction that ignored the residual's share of each part would not."""
    rng = np.random.default_rng(1)
    c = power.Components(**TRUTH)
    for S, N in ((3, 32), (5, 64), (8, 16)):
        seen = np.mean([stats.two_sample_problems(*pair(rng, S, N, TRUTH), 1.0).half_width
                        for _ in range(400)])
        assert power.half_width(c, S, N) == pytest.approx(seen, rel=0.12), (S, N)
        crude = power.Components(TRUTH["seed_a"], TRUTH["seed_b"], 0.0, 0.0, TRUTH["problem"])
        assert power.half_width(crude, S, N) < 0.8 * seen


def test_the_plan_asks_for_what_the_spread_needs():
    """Spread between runs asks for seeds; spread between problems, for problems; a margin no
    design in range reaches gives None."""
    runs = power.Components(seed_a=9.0, seed_b=9.0, residual_a=1.0, residual_b=1.0, problem=0.0)
    problems = power.Components(0.0, 0.0, 1.0, 1.0, problem=100.0)
    a = power.needed(runs, 3.0, range(2, 21), [16, 32, 64, 128])
    b = power.needed(problems, 3.0, range(2, 21), [16, 32, 64, 128])
    assert a.seeds > b.seeds and a.problems <= b.problems
    assert a.half_width <= 3.0 and power.half_width(runs, a.seeds - 1, 128) > 3.0
    assert power.needed(runs, 0.1, range(2, 6), [16, 32]) is None
    with pytest.raises(ValueError, match="at least 2 seeds and 2 problems"):
        power.components(np.zeros((1, 5)), np.zeros((1, 5)))


# --- what a pilot sizes, and group-sequential bounds -------------------------------------------

def test_a_two_seed_pilots_variance_is_known_to_within_0_27x_to_39x():
    """Issue 52: two seeds per model, pooled over two models (two degrees of freedom): the true
    variance lies within 0.27x to 39x the estimate (95 %); one degree of freedom is wider."""
    lo, hi = power.variance_range(2)
    assert (round(lo, 2), round(hi, 1)) == (0.27, 39.5)
    lo1, hi1 = power.variance_range(1)
    assert lo1 < lo and hi1 > 1000 * lo  # the check can fail: one df is not two
    many = power.variance_range(200)
    assert 0.8 < many[0] < 1 < many[1] < 1.3
    with pytest.raises(ValueError, match="df must be > 0"):
        power.variance_range(0)


LDBOUNDS_OBF_5 = [4.8769, 3.3569, 2.6803, 2.2898, 2.0310]
"""Lan-DeMets O'Brien-Fleming-type bounds, five equally spaced looks, two-sided alpha 0.05
(R package ldbounds' example; Jennison and Turnbull, 2000, Table 7.6's design)."""


def test_obrien_fleming_spending_bounds_are_the_published_ones():
    t = [0.2, 0.4, 0.6, 0.8, 1.0]
    assert power.spending_bounds(t) == pytest.approx(LDBOUNDS_OBF_5, abs=2e-3)
    assert power.spending_bounds([0.5, 1.0]) == pytest.approx([2.9626, 1.9686], abs=2e-3)
    # each look spends what the function allots, and the whole of alpha is spent
    spent = power.crossing_probabilities(power.spending_bounds(t), t)
    assert spent == pytest.approx(np.diff([0, *power.obrien_fleming_spending(t)]), abs=1e-6)
    assert spent.sum() == pytest.approx(0.05, abs=1e-5)
    # a single look is the fixed design's 1.96
    assert power.spending_bounds([1.0]) == pytest.approx([1.95996], abs=1e-4)
    # the check can fail: Pocock-type spending gives other bounds
    pocock = lambda t, a: a * np.log(1 + (np.e - 1) * np.asarray(t))  # noqa: E731
    assert power.spending_bounds(t, spending=pocock)[0] < 3.0 < LDBOUNDS_OBF_5[0]


@pytest.mark.parametrize("bounds, size", [
    (2.040 * np.sqrt(5 / np.arange(1, 6)), 0.05),  # O'Brien and Fleming's C_B(5) = 2.040
    ([2.413] * 5, 0.05),                            # Pocock's C_P(5) = 2.413
    ([1.96] * 5, 0.142)])                           # five unadjusted looks: about 14 %
def test_the_size_of_published_designs_is_recovered(bounds, size):
    """Jennison and Turnbull (2000), Tables 2.1 and 2.3, two-sided alpha 0.05, K = 5 looks;
    the unadjusted five looks' 0.142 from Armitage, McPherson and Rowe (1969)."""
    total = power.crossing_probabilities(bounds, [0.2, 0.4, 0.6, 0.8, 1.0]).sum()
    assert total == pytest.approx(size, abs=1.5e-3)


def test_a_bound_reads_as_its_intervals_confidence_and_bad_looks_are_named():
    assert power.nominal_confidence(1.959964) == pytest.approx(0.95, abs=1e-6)
    with pytest.raises(ValueError, match="fractions must increase"):
        power.spending_bounds([0.6, 0.6, 1.0])
    with pytest.raises(ValueError, match="alpha must lie"):
        power.spending_bounds([1.0], alpha=0)
