"""The toy of Section 3.2: the vectorised simulator against the literal Algorithm 1, its
statistics against Theorem 1 and exact enumeration, the negative-only rule, and bad input."""
import itertools

import numpy as np
import pytest
import torch

from rlvr_dynamics import toy
from rlvr_dynamics.chapters import ParameterError
from rlvr_dynamics.profiles import resolve
from rlvr_dynamics.theory import expected_logit_update, logit_update, softmax

R3 = np.array([0.5, 1.0, 0.0])


RULES = [(False, None), (True, None), (False, 0.0), (False, 0.1)]
"""The updates: standard, negative-only, NSR and W-REINFORCE (negative_only, reinforce)."""


@pytest.mark.parametrize("optimizer", ["adam", "sgd"])
@pytest.mark.parametrize("negative_only,reinforce", RULES)
@pytest.mark.parametrize("tau,lr", [([1.0, 2.0], [0.1, 0.3]), (1.5, 0.2)])
def test_vectorised_run_matches_the_literal_loop_on_the_same_draws(optimizer, negative_only,
                                                                   reinforce, tau, lr):
    # Two settings of four actions, with their own or shared temperature and learning rate.
    z0 = toy.logits([[0.45, 0.05, 0.3, 0.2], [0.7, 0.01, 0.2, 0.09]])
    r = np.array([[0.5, 1.0, 0.0, 0.25], [0.3, 1.0, 0.0, 0.6]])
    steps, seeds, G = 150, 4, 3
    got = toy.simulate(z0, r, G=G, lr=lr, tau=tau, optimizer=optimizer,
                       negative_only=negative_only, reinforce=reinforce, steps=steps,
                       seeds=seeds, seed=11)
    rng = np.random.default_rng(11)
    u = np.stack([toy.uniforms(rng, 2, seeds, G) for _ in range(steps)])
    assert got.pi.shape == (steps + 1, 2, seeds, 4)
    tau, lr = np.broadcast_to(tau, 2), np.broadcast_to(lr, 2)
    for s, j in itertools.product(range(2), range(seeds)):
        ref = toy.algorithm1(z0[s], r[s], u[:, s, j], lr=lr[s], tau=tau[s], optimizer=optimizer,
                             negative_only=negative_only, reinforce=reinforce)
        np.testing.assert_allclose(got.pi[:, s, j], ref, rtol=0, atol=1e-9)
    assert np.ptp(got.pi[:, 0], axis=1).max() > 0.01    # the seeds did go different ways


def centred_log_ratio(pi1, pi0):
    """Delta z from two policies. The standard update moves the logits by a vector summing to
    zero (the advantages of a group sum to zero), so the shift left free by pi is fixed."""
    d = np.log(pi1) - np.log(pi0)
    return d - d.mean(-1, keepdims=True)


@pytest.mark.parametrize("G,tau", [(2, 1.0), (3, 1.0), (5, 2.0)])
def test_one_step_mean_matches_theorem1_times_one_minus_one_over_G(G, tau):
    z = np.array([0.3, -1.5, 0.1])
    lr, n = 0.5, 200_000
    tr = toy.simulate(z, R3, G=G, lr=lr, tau=tau, optimizer="sgd", steps=1, seeds=n, seed=G)
    dz = centred_log_ratio(tr.pi[1, 0], tr.pi[0, 0]) * tau     # logits of pi are z / tau
    pi = softmax(z, tau)
    expected = (1 - 1 / G) * expected_logit_update(pi, R3, lr / tau)
    se = dz.std(0, ddof=1) / np.sqrt(n)
    assert np.all(np.abs(dz.mean(0) - expected) < 4.5 * se), (dz.mean(0), expected, se)
    assert abs(expected.sum()) < 1e-15


def brute_force_expectation(pi, r, G, tau, negative_only, reinforce=None):
    """E[g] by summing over all K^G ordered groups, each through ``group_gradient``."""
    K = len(pi)
    total = np.zeros(K)
    for group in itertools.product(range(K), repeat=G):
        n = np.bincount(group, minlength=K).astype(float)
        g, _ = toy.group_gradient(pi, n, r, tau, negative_only, reinforce)
        total += np.prod(pi[list(group)]) * g
    return total


@pytest.mark.parametrize("negative_only,reinforce", RULES)
@pytest.mark.parametrize("G", [1, 2, 3, 5])
def test_expected_gradient_is_exact(G, negative_only, reinforce):
    pi = np.array([0.5, 0.15, 0.25, 0.1])
    r = np.array([0.5, 1.0, 0.0, 0.7])
    got = toy.expected_gradient(pi, r, G, 1.5, negative_only, reinforce)
    np.testing.assert_allclose(got, brute_force_expectation(pi, r, G, 1.5, negative_only,
                                                            reinforce), rtol=0, atol=1e-14)
    if reinforce is not None:  # each sample's own advantage: Theorem 1 with A = mu r - (1 - r)
        np.testing.assert_allclose(got, expected_logit_update(pi, reinforce * r - (1 - r),
                                                              1 / 1.5), rtol=0, atol=1e-15)
    elif not negative_only:   # the mean field of the standard update is (1 - 1/G) Theorem 1
        np.testing.assert_allclose(got, (1 - 1 / G) * expected_logit_update(pi, r, 1 / 1.5),
                                   rtol=0, atol=1e-15)


def test_negative_only_one_step_mean_matches_the_enumeration():
    z, lr, G, n = np.array([0.0, -1.0, 0.5]), 1.0, 3, 200_000
    tr = toy.simulate(z, R3, G=G, lr=lr, optimizer="sgd", negative_only=True, steps=1,
                      seeds=n, seed=5)
    # Negative-only steps need not sum to zero; compare the centred parts (pi sees no more).
    dz = centred_log_ratio(tr.pi[1, 0], tr.pi[0, 0])
    expected = lr * toy.expected_gradient(softmax(z), R3, G, 1.0, True)
    expected -= expected.mean()
    se = dz.std(0, ddof=1) / np.sqrt(n)
    assert np.all(np.abs(dz.mean(0) - expected) < 4.5 * se)


def test_negative_only_updates_ignore_samples_with_non_negative_advantage():
    pi = np.array([0.5, 0.2, 0.3])
    rng = np.random.default_rng(0)
    for _ in range(50):   # g is Lemma 1 summed over the negative samples only, divided by G
        group = rng.integers(0, 3, size=4)
        A = R3[group] - R3[group].mean()
        expected = sum(logit_update(pi, a, adv, 1.0) for a, adv in zip(group, A) if adv < 0)
        g, _ = toy.group_gradient(pi, np.bincount(group, minlength=3).astype(float), R3, 1.0,
                                  True)
        np.testing.assert_allclose(g, np.zeros(3) + expected / 4, atol=1e-15)
    # Swapping which action carried a positive advantage changes nothing; it does change the
    # standard update.
    r = np.array([1.0, 1.0, 0.0])
    neg = [toy.group_gradient(pi, np.array(n), r, 1.0, True)[0] for n in ([1., 0, 1], [0, 1., 1])]
    std = [toy.group_gradient(pi, np.array(n), r, 1.0, False)[0] for n in ([1., 0, 1], [0, 1., 1])]
    np.testing.assert_array_equal(neg[0], neg[1])
    assert np.abs(std[0] - std[1]).max() > 0.1


def test_unsampled_actions_get_no_gradient_under_the_standard_update():
    pi = softmax(np.array([0.2, -3.0, 0.4]))
    g, negative = toy.group_gradient(pi, np.array([1.0, 0.0, 1.0]), R3, 1.0, False)
    assert g[1] == 0 and g[0] > 0 > g[2]
    np.testing.assert_array_equal(negative, [0, 0, 1])


def test_adam_matches_torch():
    rng = np.random.default_rng(1)
    grads = rng.normal(size=(60, 3)) * rng.uniform(0, 1, size=(60, 1))
    z = np.zeros(3)
    ours = toy.Adam(z, 0.1)
    zt = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([zt], lr=0.1, maximize=True)
    for g in grads:
        z = z + ours.step(g)
        zt.grad = torch.as_tensor(g)
        opt.step()
        np.testing.assert_allclose(z, zt.detach().numpy(), rtol=1e-12, atol=1e-14)


def test_counts_are_inverse_cdf_draws():
    pi = np.array([0.2, 0.3, 0.5])
    u = np.array([0.0, 0.1999, 0.2, 0.4999, 0.5, 0.9999])   # boundaries go right
    np.testing.assert_array_equal(toy.counts(pi, u), [2, 2, 2])


def test_summary_is_the_statistics_of_the_full_trajectories():
    z0 = toy.logits([[0.495, 0.01, 0.495], [0.45, 0.1, 0.45]])
    kw = dict(G=2, lr=0.1, steps=120, seeds=60, seed=3)
    tr = toy.simulate(z0, R3, **kw)
    sm = toy.summarise(z0=z0, r=R3, band=0.5, examples=2, **kw)
    np.testing.assert_allclose(sm.mean, tr.pi.mean(2), atol=1e-15)
    np.testing.assert_allclose(sm.lo, np.quantile(tr.pi, 0.25, axis=2), atol=1e-15)
    np.testing.assert_allclose(sm.reward[..., 0], (tr.pi @ R3).mean(2), atol=1e-15)
    np.testing.assert_allclose(sm.negatives, tr.negative.mean(2))
    np.testing.assert_array_equal(sm.t_expand, toy.expansion_time(tr.pi))
    np.testing.assert_array_equal(sm.examples, tr.pi[:, :, :2])
    np.testing.assert_allclose(sm.mean_field, toy.mean_field(z0, R3, G=2, lr=0.1, steps=120))


def test_expansion_time():
    pi = np.array([[0.6, 0.3, 0.1], [0.5, 0.4, 0.1], [0.4, 0.5, 0.1], [0.6, 0.3, 0.1]])
    assert toy.expansion_time(pi) == 2
    assert np.isinf(toy.expansion_time(pi[:2]))


def test_expansion_grid_agrees_with_single_runs():
    pi0, p2, G = [0.495, 0.01, 0.495], [0.05, 0.2], [2, 3]
    grid = toy.expansion_grid(pi0=pi0, r=R3, p2=p2, G=G, steps=400, seeds=30, seed=2)
    for i, g in enumerate(G):
        tr = toy.simulate(toy.logits([toy.with_unexplored(pi0, p) for p in p2]), R3, G=g,
                          steps=400, seeds=30, seed=2)
        np.testing.assert_array_equal(grid.t_seed[i], toy.expansion_time(tr.pi))
        np.testing.assert_array_equal(grid.t_mean[i], toy.expansion_time(tr.pi.mean(2)))


def test_results_are_cached_by_their_arguments(tmp_path, monkeypatch):
    kw = dict(z0=toy.logits([0.495, 0.01, 0.495]), r=R3, steps=30, seeds=10)
    first = toy.summarise(cache=tmp_path, **kw)
    assert len(list(tmp_path.glob("summarise-*/result.npz"))) == 1

    def no_run(*a, **k):
        raise AssertionError("recomputed")
    monkeypatch.setattr(toy, "run", no_run)
    again = toy.summarise(cache=tmp_path, **kw)
    np.testing.assert_array_equal(again.mean, first.mean)
    with pytest.raises(AssertionError, match="recomputed"):
        toy.summarise(cache=tmp_path, **dict(kw, seeds=11))


@pytest.mark.parametrize("kwargs,message", [
    (dict(G=0), "G .*must be an integer >= 1"),
    (dict(G=1.5), "G .*must be an integer >= 1"),
    (dict(r=[0.5, 1.0]), "r has 2 actions but z0 has 3"),
    (dict(tau=0.0), "tau must be positive"),
    (dict(tau=[1.0, -2.0]), "tau must be positive"),
    (dict(lr=-0.1), "lr must be positive"),
    (dict(lr=0), "lr must be positive"),
    (dict(optimizer="rmsprop"), "optimizer must be one of"),
    (dict(steps=-1), "steps must be an integer >= 0"),
    (dict(seeds=0), "seeds must be an integer >= 1"),
    (dict(z0=[[0.0, 0.0, 0.0]] * 2, tau=[1.0, 2.0, 3.0]), "settings do not broadcast"),
])
def test_bad_input_is_named_before_any_work(kwargs, message):
    args = dict(z0=np.zeros(3), r=R3)
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        toy.run(args.pop("z0"), args.pop("r"), **args)
    if not {"steps", "seeds"} & set(kwargs):
        args = dict(z0=np.zeros(3), r=R3)
        args.update(kwargs)
        with pytest.raises(ValueError, match=message):
            toy.mean_field(args.pop("z0"), args.pop("r"), **args)


def test_initial_probabilities_are_checked():
    with pytest.raises(ValueError, match="pi0 must sum to 1"):
        toy.logits([0.5, 0.4, 0.2])
    with pytest.raises(ValueError, match="pi0 must have positive entries"):
        toy.logits([0.5, 0.0, 0.5])
    np.testing.assert_allclose(softmax(toy.logits([0.2, 0.3, 0.5])), [0.2, 0.3, 0.5])


@pytest.mark.parametrize("override,message", [
    ({"G": 0}, "G=0: Input should be greater than or equal to 2"),
    ({"tau": 0}, "tau=0: Input should be greater than 0"),
    ({"lr": -0.1}, "lr=-0.1: Input should be greater than 0"),
    ({"pi0": [0.5, 0.4, 0.2]}, "pi0/rewards: probabilities must sum to 1, they sum to 1.1"),
    ({"rewards": [0.5, 1.0]}, "pi0/rewards: 3 initial probabilities but 2 rewards"),
    ({"pi0": [0.01, 0.495, 0.495]}, "needs pi\\(a1\\) > pi\\(a2\\)"),
    ({"reward_sweep": [[1.0, 0.5, 0.0]]}, "reward_sweep\\[0\\]"),
    ({"tau_sweep": [1.0, 0.0]}, r"tau_sweep\[1\]=0.0: Input should be greater than 0"),
    ({"expansion_p2": [0.6]}, "expansion_p2 has 0.6"),
    ({"band": 1.0}, "band must be < 1"),
])
def test_notebook_parameters_are_checked(override, message):
    with pytest.raises(ParameterError, match=f"toy_dynamics: .*{message}"):
        resolve("smoke", "toy_dynamics", override)


def test_nsr_moves_a_group_that_is_all_wrong_and_grpo_n_does_not():
    """A group of G samples of the bad action a3 (reward 0): GRPO-N's advantages are all zero,
    NSR's all -1, which lowers a3 and lifts the others in proportion to pi."""
    pi, n = np.array([0.5, 0.1, 0.4]), np.array([0.0, 0.0, 3.0])
    g_n, _ = toy.group_gradient(pi, n, R3, 1.0, True)
    g_nsr, neg = toy.group_gradient(pi, n, R3, 1.0, False, 0.0)
    assert not g_n.any()
    np.testing.assert_allclose(g_nsr, -(np.array([0.0, 0.0, 1.0]) - pi))
    assert neg.tolist() == [0.0, 0.0, 3.0]
    with pytest.raises(ValueError, match="reinforce must be >= 0"):
        toy.setting(toy.logits(pi), R3, reinforce=0.1, negative_only=True)
