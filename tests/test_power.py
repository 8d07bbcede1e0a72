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
