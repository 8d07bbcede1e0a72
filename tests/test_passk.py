"""Pass@k: the product form against exact rational arithmetic, hand-computed cases, its
expectation under a binomial model, errors for impossible inputs, and bootstrap intervals."""
from fractions import Fraction
from math import comb

import numpy as np
import pytest

from rlvr_dynamics.passk import bootstrap_ci, ks_for, pass_at_k, pass_at_k_curve


def exact(n: int, c: int, k: int) -> Fraction:
    return 1 - Fraction(comb(n - c, k), comb(n, k))


def test_matches_exact_rational_arithmetic_for_n_up_to_1024():
    rng = np.random.default_rng(0)
    n = np.concatenate([rng.integers(1, 1025, size=400), [1024, 1024, 1024, 1, 256]])
    c = np.concatenate([rng.integers(0, n[:400] + 1), [0, 1024, 1023, 1, 17]])
    ks = [1, 2, 3, 7, 64, 255, 256]
    keep = n >= max(ks)  # every k must be <= n; the rest are checked one by one below
    got = pass_at_k(n[keep], c[keep], ks)
    want = np.array([[float(exact(ni, ci, k)) for k in ks] for ni, ci in zip(n[keep], c[keep])])
    assert np.abs(got - want).max() < 1e-12
    for ni, ci in zip(n[~keep], c[~keep]):
        k = int(rng.integers(1, ni + 1))
        assert abs(pass_at_k(ni, ci, k)[0, 0] - float(exact(ni, ci, k))) < 1e-12


def test_hand_computed_cases():
    assert pass_at_k(4, 1, 1)[0, 0] == pytest.approx(1 / 4)
    assert pass_at_k(4, 1, 2)[0, 0] == pytest.approx(1 - 3 / 6)  # 1 - C(3,2)/C(4,2)
    assert pass_at_k(10, 3, 2)[0, 0] == pytest.approx(1 - 21 / 45)  # 1 - C(7,2)/C(10,2)
    assert pass_at_k(5, 2, 4)[0, 0] == 1.0  # n - c < k: some correct sample is always drawn
    assert pass_at_k(8, 0, 8)[0, 0] == 0.0
    assert pass_at_k(8, 8, 1)[0, 0] == 1.0


def test_vectorised_over_problems_and_k_with_mixed_n():
    n, c, ks = np.array([4, 10, 4]), np.array([1, 3, 0]), [1, 2, 4]
    got = pass_at_k(n, c, ks)
    assert got.shape == (3, 3)
    for i in range(3):
        for j, k in enumerate(ks):
            assert got[i, j] == pytest.approx(float(exact(n[i], c[i], k)), abs=1e-15)
    assert pass_at_k_curve(n, c, ks) == pytest.approx(got.mean(axis=0))


def test_expectation_under_a_binomial_model_is_one_minus_miss_probability():
    """Unbiasedness, exactly: sum_c Binom(c; n, p) Pass@k(n, c) = 1 - (1 - p)^k for all k <= n."""
    n, ks = 32, ks_for(32)
    c = np.arange(n + 1)
    for p in (0.01, 0.3, 0.9):
        pmf = np.array([comb(n, ci) * p ** ci * (1 - p) ** (n - ci) for ci in c])
        expected = pmf @ pass_at_k(n, c, ks)
        assert expected == pytest.approx(1 - (1 - p) ** np.array(ks), abs=1e-12)


@pytest.mark.parametrize("n, c, k, match", [
    (4, 1, 5, "k must be <= n"), (4, 5, 1, "c must be <= n"), (4, -1, 1, "non-negative"),
    (-4, 0, 1, "non-negative"), (4, 1, 0, "k must be >= 1"), (4, 1.5, 1, "integers"),
])
def test_impossible_inputs_are_errors(n, c, k, match):
    with pytest.raises(ValueError, match=match):
        pass_at_k(n, c, k)


def test_n_and_c_lengths_must_agree():
    with pytest.raises(ValueError, match="same length"):
        pass_at_k([4, 4], [1, 2, 3], 1)


def test_ks_for_is_powers_of_two_up_to_n():
    assert ks_for(256) == [1, 2, 4, 8, 16, 32, 64, 128, 256]
    assert ks_for(12) == [1, 2, 4, 8, 12]
    assert ks_for(1) == [1]


def test_bootstrap_interval_brackets_the_mean_and_has_the_normal_width():
    rng = np.random.default_rng(1)
    x = rng.binomial(1, 0.5, size=(400, 1)).astype(float)
    lo, hi = bootstrap_ci(x, level=0.95, resamples=4000, seed=0)
    assert lo[0] < x.mean() < hi[0]
    # The width of a 95% interval of a mean of 400 Bernoulli(1/2): 2 * 1.96 * 0.5 / 20 = 0.098.
    # Percentile bootstrap quantiles from 4,000 resamples are within a few percent of it.
    assert hi[0] - lo[0] == pytest.approx(2 * 1.96 * x.std() / np.sqrt(400), rel=0.1)
    const = np.full((50, 3), 0.25)
    lo, hi = bootstrap_ci(const, resamples=200)
    assert np.allclose(lo, 0.25) and np.allclose(hi, 0.25)


def test_bootstrap_is_reproducible_and_rejects_bad_levels():
    x = np.random.default_rng(2).random((30, 4))
    a, b = bootstrap_ci(x, seed=3), bootstrap_ci(x, seed=3)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    with pytest.raises(ValueError, match="level"):
        bootstrap_ci(x, level=1.0)
