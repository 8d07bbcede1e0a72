"""The transition law of the toy (``law``): the two-path time is the
mean field's, the three-path law fitted on one grid predicts the SGD mean field and the
simulator's median at points not used to fit it, and a law of the wrong power would not."""
import numpy as np
import pytest

from rlvr_dynamics import toy
from rlvr_dynamics import law

FIT = dict(p2=[0.003, 0.01], rewards=[[0.5, 1.0, 0.0], [0.3, 1.0, 0.0]], G=[2, 8],
           pi0=[0.495, 0.01, 0.495], lr=1.0, steps=30_000)


@pytest.fixture(scope="module")
def kappa():
    table = law.grid(**FIT)
    return law.fit_kappa(table["mean field"].to_numpy(), table["scale"].to_numpy())


def test_two_paths_is_the_mean_field_of_two_actions():
    for pi0, r, G in (([0.99, 0.01], [0.5, 1.0], 4), ([0.95, 0.05], [0.2, 0.9], 8)):
        t = law.mean_field_times([pi0], r, G, lr=0.1, steps=100_000)[0]
        assert law.two_paths(pi0, r, G, lr=0.1) == pytest.approx(t, rel=0.02)


def test_the_law_predicts_the_mean_field_at_fresh_points(kappa):
    """Fitted on ``FIT``; checked at other splits of pi0 between a1 and a3, other rewards (r3
    above 0), other group sizes and another learning rate."""
    assert 0.12 < kappa < 0.25  # below the two phases' 1/4 (module docstring)
    fresh = law.check(law.grid(p2=[0.004, 0.012], rewards=[[0.4, 1.0, 0.0], [0.6, 0.9, 0.1]],
                               G=[3, 16], pi0=[0.6, 0.01, 0.39], lr=0.5, steps=40_000), kappa)
    ratio = fresh["law / mean field"][np.isfinite(fresh["mean field"])]
    assert len(ratio) >= 6 and ratio.between(0.85, 1.15).all(), ratio
    beyond = fresh[~np.isfinite(fresh["mean field"])]
    assert (beyond["law"] > 40_000 * 0.85).all()  # not within the run: the law says so too
    # the two-phase sum bounds the mean field from above; the two-path time is far shorter
    within = fresh[np.isfinite(fresh["mean field"])]
    assert (within["two phases"] > within["mean field"]).all()
    assert (within["two paths"] * 5 < within["mean field"]).all()
    # a law with pi0(a2)'s first power (the two-path law's) could not fit both
    wrong = fresh["scale"] * fresh["pi0(a2)"] / fresh["mean field"]
    assert wrong.max() / wrong.min() > 2


def test_the_law_predicts_the_simulators_median(kappa):
    """Finite groups and sampled actions: the median time over seeds of Algorithm 1 under SGD
    at a point not used to fit, within a fifth of the law."""
    pi0, r, G = [0.55, 0.015, 0.435], [0.45, 1.0, 0.05], 6
    s = toy.summarise(z0=toy.logits(pi0), r=r, G=G, lr=1.0, optimizer="sgd", tau=1.0,
                      steps=2_000, seeds=200, seed=3, progress=False)
    median = float(np.median(s.t_expand[0]))
    assert kappa * law.scale(pi0, r, G, 1.0) == pytest.approx(median, rel=0.2)


def test_the_adam_mean_field_follows_its_log_law():
    """Adam fed the exact mean gradient: T = ln(D pi1 pi3 / (d pi2^2)) / (2 lr), whatever G,
    within a fifth at points of other splits, rewards and learning rates."""
    for pi0, r, G, lr in (([0.6, 0.003, 0.397], [0.4, 1.0, 0.0], 16, 0.05),
                          ([0.495, 0.01, 0.495], [0.3, 1.0, 0.0], 4, 0.1),
                          ([0.49, 0.02, 0.49], [0.5, 1.0, 0.0], 2, 0.03)):
        t = law.mean_field_times([pi0], r, G, lr, optimizer="adam", steps=5_000)[0]
        assert law.adam_mean_field(pi0, r, lr)["three paths"] == pytest.approx(t, rel=0.2)


def test_adam_fed_the_moments_comes_close_to_the_runs_where_groups_hold_a2():
    """Where a group often holds a2 (G pi0(a2) large), the runs' median under Adam is within a
    fifth of Adam fed the exact moments, and far from Adam's mean field."""
    pi0, r, G, lr = [0.48, 0.03, 0.49], [0.5, 1.0, 0.0], 8, 0.1
    s = toy.summarise(z0=toy.logits(pi0), r=r, G=G, lr=lr, optimizer="adam", tau=1.0,
                      steps=1_000, seeds=200, seed=5, progress=False)
    median = float(np.median(s.t_expand[0]))
    assert law.adam_moments(pi0, r, G, lr) == pytest.approx(median, rel=0.2)
    assert law.adam_mean_field(pi0, r, lr)["three paths"] < 0.7 * median
