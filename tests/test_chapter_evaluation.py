"""The evaluation chapter's prose (``chapters/evaluation.py``): the estimator's sentence follows
the numbers it is given."""
from fractions import Fraction

import numpy as np
import pandas as pd

from rlvr_dynamics.chapters import evaluation as chapter


def test_estimator_text_follows_the_gaps_it_is_given():
    exact = [Fraction(1, 3), Fraction(1, 2)]
    ours = [np.float64(1 / 3), np.float64(0.5)]
    small = [pd.Series([0.001, -0.002]), pd.Series([0.0005])]
    good = chapter.estimator_text(ours, exact, small, 20_000)
    assert "matches exact rational arithmetic to rounding error" in good
    assert "over 2 random (n, c, k)" in good
    assert "within 0.0020 of 1 − (1 − p)^k, 0.6 times the bound 0.0035" in good
    assert good.endswith("as an unbiased estimator should.")
    bad = chapter.estimator_text([np.float64(0.4), np.float64(0.5)], exact,
                                 [pd.Series([0.05])], 20_000)
    assert "misses exact rational arithmetic by up to 6.7e-02" in bad
    assert "within 0.0500 of" in bad and bad.endswith("more than an unbiased estimator allows.")
