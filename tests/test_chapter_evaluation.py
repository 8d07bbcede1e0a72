"""The evaluation chapter (``chapters.evaluation``, its ``sentences``): the estimator's checks
reproduce the arithmetic they stand for, and the estimator's sentence follows the numbers it is
given."""
from fractions import Fraction
from math import comb

import numpy as np
import pandas as pd
import pytest

from rlvr_dynamics.chapters import evaluation as chapter
from rlvr_dynamics.chapters.evaluation import sentences


def checks(ours, exact, deviations, draws=20_000):
    return chapter.EstimatorChecks(ours, exact, deviations, draws, 16, [1, 2])


def test_estimator_text_follows_the_gaps_it_is_given():
    exact = [Fraction(1, 3), Fraction(1, 2)]
    ours = [np.float64(1 / 3), np.float64(0.5)]
    small = [pd.Series([0.001, -0.002]), pd.Series([0.0005])]
    good = sentences.estimator_text(checks(ours, exact, small))
    assert "matches exact rational arithmetic to rounding error" in good
    assert "over 2 random (n, c, k)" in good
    assert "within 0.0020 of 1 − (1 − p)^k, 0.6 times the bound 0.0035" in good
    assert good.endswith("as an unbiased estimator should.")
    bad = sentences.estimator_text(checks([np.float64(0.4), np.float64(0.5)], exact,
                                          [pd.Series([0.05])]))
    assert "misses exact rational arithmetic by up to 6.7e-02" in bad
    assert "within 0.0500 of" in bad and bad.endswith("more than an unbiased estimator allows.")


def test_estimator_checks_are_the_arithmetic_they_state():
    """Both checks from one seed: the exact values are 1 - C(n-c, k)/C(n, k) of the drawn
    (n, c, k), the deviations are means over the draws minus 1 - (1 - p)^k, and the readings
    pass for the estimator and fail for a biased copy."""
    check = chapter.estimator_checks(seed=3, cases=20, n_max=40, n=8, ps=(0.1, 0.5), draws=4000)
    assert check.ks == [1, 2, 4, 8] and len(check.ours) == len(check.exact) == 20
    rng = np.random.default_rng(3)
    ns = rng.integers(1, 41, size=20)
    cs = rng.integers(0, ns + 1)
    ks = rng.integers(1, ns + 1)
    assert check.exact == [1 - Fraction(comb(n - c, k), comb(n, k)) for n, c, k in zip(ns, cs, ks)]
    assert chapter.exact_gap(check) < chapter.EXACT_TOL and chapter.matches_exact(check)
    c = rng.binomial(8, 0.1, size=4000)  # the generator goes on to the second check
    # with n = 8, Pass@1 is c / 8 and Pass@8 is whether c > 0
    assert check.deviations[0][1] == pytest.approx(c.mean() / 8 - 0.1)
    assert check.deviations[0][8] == pytest.approx((c > 0).mean() - (1 - 0.9 ** 8))
    table = chapter.deviation_table(check)
    assert list(table.index) == ["p = 0.1", "p = 0.5"] and list(table.columns) == [1, 2, 4, 8]
    assert chapter.looks_unbiased(check)
    biased = chapter.EstimatorChecks(check.ours, check.exact, [d + 0.05 for d in check.deviations],
                                     check.draws, check.n, check.ks)
    assert not chapter.looks_unbiased(biased)
    assert not chapter.matches_exact(chapter.EstimatorChecks(
        [o + 1e-9 for o in check.ours], check.exact, check.deviations, check.draws, 8, check.ks))


def test_table_settings_name_the_table():
    P = chapter.Params()
    assert chapter.table_params(P, "table2")["n"] == P.table2_n
    with pytest.raises(ValueError, match="table='table3'"):
        chapter.table_params(P, "table3")
    line = sentences.table_setting(P, "table1")
    assert f"n = {P.table1_n} samples per problem" in line
    assert f"{P.table1_problems} problems per benchmark" in line
    assert sentences.passk_caption(P, "table2").startswith("Table 2's models at CPU scale.")
    assert sentences.log_n(P) == "log n = 5.55 for n = 256, log n = 2.08 for n = 8"


def test_draws_text_states_the_draws_and_the_standard_error_bound():
    text = sentences.draws_text(checks([], [], []))
    assert text == (r"We draw $c$ 20,000 times for $n = 16$; the standard error of each mean is "
                    r"at most $0.5/\sqrt{20000} \approx 0.0035$.")


def test_models_text_names_each_model_and_where_a_sums_base_stops():
    text = sentences.models_text(chapter.Params(), "table1")
    assert "after 200 of its run's 800 steps of 64 sequences" in text
    assert "after 800 of its run's 800 steps of 64 sequences" in text
    assert sentences.models_text(chapter.Params(), "table2") == (
        "Table 2's models in this build: `smollm2`.")
    assert sentences.models_text(chapter.Params(table2_models=[]), "table2") == (
        sentences.empty_table("table2"))
