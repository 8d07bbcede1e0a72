"""Rung R1: the softmax toy on the language model's schedule. The surrogate's gradient against
autograd, the simulator against a literal per-sample loop, the std-scaled first update against
the toy's group gradient, what ``without`` and negative-only leave unchanged, and bad input."""
import itertools
import statistics

import numpy as np
import pytest
import torch

from rlvr_dynamics import toy
from rlvr_dynamics.theory import softmax
from rlvr_dynamics.toy_schedule import (STD_EPS, advantages, draws, sample, simulate,
                                        update_gradient)

PI0 = np.array([0.5, 0.01, 0.49])
R_EASY, R_HARD = np.array([0.5, 0.9, 0.05]), np.array([0.0, 0.9, 0.05])
SMALL = dict(G=8, groups=8, lr=0.1, steps=30, seeds=50)


def surrogate(z, pi_old, a, A, keep, tau, epsilon):
    """TRL's dapo J with one token per sample, one row: (1/N_kept) sum_kept min(rho A,
    clip(rho) A), written in torch."""
    pi = torch.softmax(z / tau, -1)
    rho = pi[a] / torch.as_tensor(pi_old)[a]
    A = torch.as_tensor(A)
    terms = torch.minimum(rho * A, torch.clamp(rho, 1 - epsilon, 1 + epsilon) * A)
    return (terms * torch.as_tensor(keep)).sum() / max(int(keep.sum()), 1)


def test_update_gradient_is_the_autograd_gradient_of_the_clipped_surrogate():
    rng = np.random.default_rng(3)
    rows, K, N, tau, epsilon = 6, 5, 12, 0.7, 0.2
    z_old = rng.normal(size=(rows, K))
    z = z_old + rng.normal(scale=0.4, size=(rows, K))     # rho spread across the clip range
    pi_old, pi = softmax(z_old, tau), softmax(z, tau)
    a = rng.integers(K, size=(rows, N))
    A = rng.normal(size=(rows, N))
    keep = rng.random((rows, N)) < 0.7
    keep[-1] = False                                       # a row with no kept sample
    got = update_gradient(pi, pi_old, a, A, keep, tau=tau, epsilon=epsilon)
    rho = np.take_along_axis(pi, a, -1) / np.take_along_axis(pi_old, a, -1)
    outside = keep & (((A > 0) & (rho > 1 + epsilon)) | ((A < 0) & (rho < 1 - epsilon)))
    inside = keep & (np.abs(rho - 1) < epsilon)
    assert outside.any() and inside.any() and (keep & ~outside & ~inside).any()
    for j in range(rows):
        zt = torch.tensor(z[j], requires_grad=True)
        surrogate(zt, pi_old[j], torch.as_tensor(a[j]), A[j], keep[j], tau, epsilon).backward()
        np.testing.assert_allclose(got[j], zt.grad.numpy(), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(got[-1], 0.0)


def test_first_update_is_the_toy_group_gradient_over_the_unbiased_group_std():
    # One group per update, deterministic rewards: rho = 1 and A_i = (r_i - mean) / (s + 1e-4)
    # with s^2 = m (G - m) / (G (G - 1)) for m correct answers of G (TRL's unbiased nanstd).
    rng = np.random.default_rng(5)
    seeds, G, tau = 400, 8, 1.3
    r = np.array([1.0, 0.0, 1.0, 0.0])
    pi = softmax(rng.normal(size=(seeds, 4)))
    u_a, u_p, u_r = draws(rng, seeds, 1, G)
    a, rewards = sample(pi, u_a, u_p, u_r, r, r, 0.5)
    n = toy.counts(pi, u_a[:, 0])
    np.testing.assert_array_equal(n, (a[:, 0, :, None] == np.arange(4)).sum(-2))
    np.testing.assert_array_equal(rewards[:, 0], r[a[:, 0]])
    m = n @ r
    s = np.sqrt(m * (G - m) / (G * (G - 1)))
    assert ((0 < m) & (m < G)).sum() > seeds / 2 and (m == 0).any()
    got = update_gradient(pi, pi, a[:, 0], advantages(rewards[:, 0]), np.ones((seeds, G), bool),
                          tau=tau)
    g, _ = toy.group_gradient(pi, n, r, tau, negative_only=False)
    np.testing.assert_allclose(got, g / (s + STD_EPS)[:, None], rtol=1e-12, atol=1e-15)


def literal(pi0, r_easy, r_hard, share, u, *, groups, updates, lr, epsilon, tau,
            negative_only, without):
    """The schedule for one seed, one sample at a time: u holds each step's (u_a, u_p, u_r)
    for this seed; each update's gradient by autograd of ``surrogate``. Returns pi per update."""
    z = tau * np.log(pi0)
    opt = toy.Adam(z, lr)
    out = [softmax(z, tau)]
    for u_a, u_p, u_r in u:
        pi_old = out[-1]
        cdf = list(itertools.accumulate(pi_old))
        a, A, keep = [], [], []
        for g in range(groups):
            r_mean = r_hard if u_p[g] < share else r_easy
            acts = [next((k for k in range(len(z) - 1) if x < cdf[k]), len(z) - 1)
                    for x in u_a[g]]
            r = [float(x < r_mean[k]) for x, k in zip(u_r[g], acts)]
            mu, sd = statistics.mean(r), statistics.stdev(r)
            adv = [(x - mu) / (sd + 1e-4) for x in r]
            a += acts
            A += [min(x, 0.0) if negative_only else x for x in adv]
            keep += [without not in acts] * len(acts)
        a, A, keep = (np.array(x).reshape(updates, -1) for x in (a, A, keep))
        for j in range(updates):
            zt = torch.tensor(z, requires_grad=True)
            surrogate(zt, pi_old, torch.as_tensor(a[j]), A[j], keep[j], tau, epsilon).backward()
            z = z + opt.step(zt.grad.numpy())
            out.append(softmax(z, tau))
    return np.array(out)


@pytest.mark.parametrize("negative_only,without,tau", [(False, None, 1.0), (True, None, 0.8),
                                                       (False, 1, 1.0), (True, 2, 1.2)])
def test_simulate_matches_the_literal_loop_on_the_same_draws(negative_only, without, tau):
    kw = dict(groups=4, updates=2, lr=0.1, epsilon=0.2, tau=tau, negative_only=negative_only,
              without=without)
    steps, seeds, G, share = 12, 3, 4, 0.3
    pi0 = np.array([0.4, 0.25, 0.35])
    got = simulate(pi0, R_EASY, R_HARD, share, G=G, steps=steps, seeds=seeds,
                   window=steps * 2, seed=9, **kw)
    rng = np.random.default_rng(9)
    u = [draws(rng, seeds, 4, G) for _ in range(steps)]
    for j in range(seeds):
        ref = literal(pi0, R_EASY, R_HARD, share, [(x[j], y[j], w[j]) for x, y, w in u], **kw)
        np.testing.assert_allclose(got.early[j], ref, rtol=0, atol=1e-9)
    np.testing.assert_allclose(got.mean, got.early.mean(0), rtol=0, atol=1e-12)


def spread(pi, i, rest):
    """log pi(a_i) - mean over ``rest`` of log pi(a_k), per seed and update."""
    return np.log(pi[..., i]) - np.log(pi[..., rest]).mean(-1)


def test_without_leaves_the_left_out_action_still_while_rho_is_one():
    # Kept groups lack a2 (action 1): with rho = 1 their advantages sum to zero, so dz(a2) = 0
    # and dz(a1) = -dz(a3). With four updates a step rho != 1 from the second, and z(a2) moves.
    def moved(updates, without):
        out = simulate(PI0, R_EASY, R_HARD, 0.2, updates=updates, without=without,
                       window=SMALL["steps"] * updates, **SMALL)
        q = spread(out.early, 1, [0, 2])
        assert np.ptp(out.early[..., 0], axis=1).max() > 0.05       # pi itself moves
        return np.abs(q - q[:, :1]).max()

    assert moved(1, 1) < 1e-9
    assert moved(4, 1) > 1e-3
    assert moved(1, None) > 1e-3


def test_negative_only_pushes_only_the_wrong_action_down():
    # Rewards 1, 0, 1: the only negative advantages are on a2's samples, so every gradient is
    # a multiple of (e_2 - pi) and log pi(a1) - log pi(a3) stays put; positive advantages on a1
    # and a3 (the standard update) move it.
    r = [1.0, 0.0, 1.0]

    def moved(negative_only):
        out = simulate([0.5, 0.3, 0.2], r, r, 0.5, updates=4, negative_only=negative_only,
                       window=SMALL["steps"] * 4, **SMALL)
        assert np.ptp(out.early[..., 1], axis=1).min() > 0.05
        q = spread(out.early, 0, [2])
        return np.abs(q - q[:, :1]).max()

    assert moved(True) < 1e-5
    assert moved(False) > 1e-2


def test_same_seed_same_run_and_another_seed_another():
    kw = dict(updates=4, negative_only=True, **SMALL)
    a, b = (simulate(PI0, R_EASY, R_HARD, 0.2, seed=4, **kw) for _ in range(2))
    for x, y in [(a.mean, b.mean), (a.crossover, b.crossover), (a.early, b.early)]:
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a.early, simulate(PI0, R_EASY, R_HARD, 0.2, seed=5, **kw).early)


GOOD = dict(pi0=PI0, r_easy=R_EASY, r_hard=R_HARD, share=0.2, G=8, groups=8, updates=4, lr=0.1,
            steps=3, seeds=2, window=4)


@pytest.mark.parametrize("name,value", [
    ("pi0", [0.5, 0.6, 0.1]), ("pi0", [[0.5, 0.5]]), ("pi0", [1.0]), ("pi0", [1.0, 0.0, 0.0]),
    ("r_easy", [0.5, 1.0]), ("r_hard", [0.0, 1.5, 0.0]), ("share", 1.2), ("share", np.nan),
    ("G", 1), ("groups", 0), ("groups", 6), ("updates", 0), ("steps", 0), ("seeds", 0),
    ("window", 0), ("window", 13), ("lr", 0.0), ("epsilon", -0.1), ("tau", 0.0),
    ("without", 3), ("without", True), ("without", -1)])
def test_bad_input_names_its_parameter(name, value):
    kw = {**GOOD, name: value}
    with pytest.raises(ValueError, match=name):
        simulate(kw.pop("pi0"), kw.pop("r_easy"), kw.pop("r_hard"), kw.pop("share"), **kw)


def test_sanity_run_on_the_lm_schedule():
    pi0 = np.array([0.505, 0.0055, 0.49])
    pi0 = pi0 / pi0.sum()                    # as given it sums to 1.0005
    steps, seeds, updates = 200, 300, 4
    out = simulate(pi0, [0.5, 0.9, 0.005], [0.0, 0.9, 0.005], 0.2, G=8, groups=8,
                   updates=updates, lr=0.1, steps=steps, seeds=seeds, window=steps * updates)
    assert out.mean.shape == (steps * updates + 1, 3) and np.isfinite(out.mean).all()
    assert out.early.shape == (seeds, steps * updates + 1, 3) and np.isfinite(out.early).all()
    np.testing.assert_allclose(out.mean, out.early.mean(0), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(
        out.crossover, toy.expansion_time(out.early[:, ::updates].swapaxes(0, 1)))
    assert out.crossover.shape == (seeds,) and np.all((out.crossover >= 0)
                                                      & (out.crossover <= steps)
                                                      | np.isinf(out.crossover))
    np.testing.assert_allclose(out.mean.sum(-1), 1.0)
    low = int(np.argmin(out.mean[:, 1]))
    print(f"\ndip of mean pi(a2): {out.mean[low, 1] / pi0[1] - 1:+.4f} at update {low} "
          f"(step {low / updates:g}); median crossover step {np.median(out.crossover)}; "
          f"crossed by the end: {np.isfinite(out.crossover).mean():.3f}")
