"""Lemma 1, Theorem 1, the group-relative expectation, Proposition 1 and Eq. 2 / B.5, each
checked against an independent computation: autograd, exact enumeration, sympy, Monte Carlo
with a standard-error tolerance, or one real gradient step on a tiny transformer."""
import numpy as np
import pytest
import sympy as sp
import torch

from rlvr_dynamics import theory as T
from rlvr_dynamics.models import char_tokenizer, tiny_qwen2
from rlvr_dynamics.chapters import ParameterError
from rlvr_dynamics.profiles import resolve
from rlvr_dynamics.tasks.sums import ALPHABET

Z_TOL = 5.0
"""Monte Carlo tolerance in standard errors (two-sided, per component: p ~ 6e-7)."""


def policy(V=7, seed=0, scale=2.0):
    return T.softmax(scale * np.random.default_rng(seed).normal(size=V))


pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def tiny():
    tok = char_tokenizer(ALPHABET)
    model = tiny_qwen2(tok, hidden=32, layers=1, seed=0).double()
    x = torch.tensor([[tok.bos_token_id, *tok.convert_tokens_to_ids(list("12+34="))]])
    return model, x


# --- Lemma 1 -----------------------------------------------------------------------------------

def test_lemma1_matches_autograd_to_float64_rounding():
    rng = np.random.default_rng(1)
    n, V, lr = 200, 7, 0.3
    z = torch.tensor(2 * rng.normal(size=(n, V)), requires_grad=True)
    v, adv = rng.integers(V, size=n), rng.normal(size=n)
    (torch.tensor(adv) * torch.log_softmax(z, -1)[torch.arange(n), v]).sum().backward()
    ours = T.logit_update(T.softmax(z.detach().numpy()), v, adv, lr)
    assert np.abs(lr * z.grad.numpy() - ours).max() < 1e-12


def test_lemma1_single_action_form_and_zero_sum():
    pi = policy(5)
    dz = T.logit_update(pi, 2, 0.7, 0.1)
    expected = -0.1 * 0.7 * pi
    expected[2] = 0.1 * 0.7 * (1 - pi[2])
    np.testing.assert_allclose(dz, expected, rtol=0, atol=1e-15)
    assert abs(dz.sum()) < 1e-15


def test_lemma1_symbolically():
    assert T.lemma1_residual(3) == sp.zeros(3, 3)


# --- Theorem 1 ---------------------------------------------------------------------------------

def test_theorem1_equals_exact_sum_over_actions_and_the_papers_bracket():
    pi, A, lr = policy(6), np.random.default_rng(2).normal(size=6), 0.1
    mean, _ = T.update_moments(pi, A, lr)
    formula = T.expected_logit_update(pi, A, lr)
    paper = [lr * pi[v] * ((1 - pi[v]) * A[v] - sum(pi[u] * A[u] for u in range(6) if u != v))
             for v in range(6)]
    np.testing.assert_allclose(mean, formula, rtol=0, atol=1e-16)
    np.testing.assert_allclose(paper, formula, rtol=0, atol=1e-16)
    assert T.theorem1_residual(4) == sp.zeros(4, 2)


def test_theorem1_is_batched_over_leading_axes():
    rng = np.random.default_rng(3)
    pis = T.softmax(rng.normal(size=(2, 3, 5)))
    A = rng.normal(size=(2, 3, 5))
    batched = T.expected_logit_update(pis, A, 0.2)
    for i in range(2):
        for j in range(3):
            np.testing.assert_allclose(batched[i, j], T.update_moments(pis[i, j], A[i, j], 0.2)[0],
                                       atol=1e-16)


def test_theorem1_against_monte_carlo_within_standard_errors():
    pi, A, lr, n = policy(6), np.random.default_rng(4).normal(size=6), 0.1, 200_000
    mean, cov = T.update_moments(pi, A, lr)
    mc = T.mean_sampled_update(pi, A, lr, n, np.random.default_rng(5), chunk=50_000)
    se = np.sqrt(np.diag(cov) / n)
    assert np.all(np.abs(mc - T.expected_logit_update(pi, A, lr)) < Z_TOL * se)
    # and the same tolerance rejects a formula 5% off (the test has power)
    assert np.any(np.abs(mc - 1.05 * mean) > Z_TOL * se)


def test_rms_error_shrinks_like_one_over_sqrt_n():
    pi, A, lr = policy(5), np.random.default_rng(6).normal(size=5), 0.1
    mean, cov = T.update_moments(pi, A, lr)
    ns = [10, 100, 1000, 10_000]
    rms = T.rms_error(lambda n, g: T.mean_sampled_update(pi, A, lr, n, g), mean, ns, 50,
                      np.random.default_rng(7))
    assert abs(T.loglog_slope(ns, rms) + 0.5) < 0.1
    # each point within 30% of sqrt(tr Sigma / N) (50 repeats: relative sd ~ 10%)
    np.testing.assert_allclose(rms, np.sqrt(np.trace(cov) / np.array(ns)), rtol=0.3)


# --- group-relative advantages (Algorithm 1) ---------------------------------------------------

def algorithm1_step(pi, actions, r, lr):
    """Algorithm 1's inner loops, literally, for one group (the reference implementation)."""
    A = [r[a] - np.mean([r[b] for b in actions]) for a in actions]
    g = np.zeros(len(pi))
    for a_i, A_i in zip(actions, A):
        g[a_i] += (1 - pi[a_i]) * A_i
        for a_j in range(len(pi)):
            if a_j != a_i:
                g[a_j] -= pi[a_j] * A_i
    return lr * g / len(actions)


def test_group_logit_update_is_algorithm1():
    rng = np.random.default_rng(8)
    pi, r = policy(5), np.array([1.0, 0, 1, 0, 0])
    groups = rng.choice(5, size=(20, 3), p=pi)
    ours = T.group_logit_update(pi, groups, r, 0.1)
    for g, u in zip(groups, ours):
        np.testing.assert_allclose(u, algorithm1_step(pi, g, r, 0.1), atol=1e-15)


@pytest.mark.parametrize("G", [2, 3, 5])
def test_group_expectation_is_one_minus_one_over_G_times_theorem1(G):
    pi, r, lr = policy(5), np.array([1.0, 0, 1, 0, 0]), 0.1
    closed = T.expected_group_logit_update(pi, r, G, lr)
    exact, cov = T.group_update_moments(pi, r, G, lr)
    np.testing.assert_allclose(exact, closed, rtol=0, atol=1e-16)
    np.testing.assert_allclose(closed, (1 - 1 / G) * T.expected_logit_update(pi, r - pi @ r, lr),
                               atol=1e-16)
    n = 100_000
    rng = np.random.default_rng(9)
    mc = T.group_logit_update(pi, rng.choice(5, size=(n, G), p=pi), r, lr).mean(0)
    se = np.sqrt(np.diag(cov) / n)
    assert np.all(np.abs(mc - closed) < Z_TOL * se)
    if G == 2:  # Theorem 1 without the factor is rejected: the factor is real
        assert np.any(np.abs(mc - T.expected_logit_update(pi, r, lr)) > Z_TOL * se)


def test_group_expectation_symbolically():
    assert T.group_residual(3, 2) == sp.zeros(3, 1)
    assert T.group_residual(3, 3) == sp.zeros(3, 1)


def test_group_advantages():
    np.testing.assert_allclose(T.group_advantages([1, 0, 0, 1]), [0.5, -0.5, -0.5, 0.5])
    std = np.std([1, 0, 0, 0], ddof=1)
    np.testing.assert_allclose(T.group_advantages([1, 0, 0, 0], normalise=True),
                               np.array([0.75, -0.25, -0.25, -0.25]) / (std + 1e-6))
    assert np.all(T.group_advantages([1, 1, 1], normalise=True) == 0)


def test_group_enumeration_refuses_huge_groups():
    with pytest.raises(ValueError, match="use Monte Carlo"):
        T.group_update_moments(policy(60), np.ones(60), 8, 0.1)


# --- Remark 2 ----------------------------------------------------------------------------------

def test_remark2_probabilities_follow_the_first_order_rule():
    pi = np.array([0.9, 0.05, 0.03, 0.02])
    v, lr = 1, 1e-3
    dpi = T.probability_change(pi, v, +1.0, lr)
    assert dpi[v] > 0
    rule = -(pi + pi[v] - pi @ pi)           # sign of Delta log pi(u), u != v, for A = +1
    for u in range(4):
        if u != v:
            assert np.sign(dpi[u]) == np.sign(rule[u])
    # a positive sample of a rare action raises the other rare actions' probabilities
    assert dpi[2] > 0 and dpi[3] > 0 and dpi[0] < 0
    # while every other logit falls (Lemma 1)
    assert np.all(np.delete(T.logit_update(pi, v, 1.0, lr), v) < 0)
    # after a positive sample of the most likely action every other probability falls
    assert np.all(np.delete(T.probability_change(pi, 0, 1.0, lr), 0) < 0)


# --- Proposition 1 -----------------------------------------------------------------------------

def test_logit_jacobian_matches_torch_functional_jacobian():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Tanh(), torch.nn.Linear(5, 4)).double()
    x = torch.randn(3, dtype=torch.float64)
    params = T.parameters(net)
    J = T.logit_jacobian(net(x), params)
    names = list(params)
    jac = torch.autograd.functional.jacobian(
        lambda *ps: torch.func.functional_call(net, dict(zip(names, ps)), (x,)),
        tuple(params.values()))
    reference = torch.cat([j.reshape(4, -1) for j in jac], dim=1)
    assert torch.allclose(J, reference, atol=1e-14)
    K = T.entk(J)
    assert torch.allclose(K, K.T) and torch.linalg.eigvalsh(K).min() > -1e-12


def test_proposition1_error_falls_fourfold_when_eta_halves(tiny):
    model, x = tiny
    V = model.config.vocab_size
    r = np.zeros(V)
    r[np.random.default_rng(0).permutation(V)[: V // 2]] = 1
    res = T.proposition1(model, x, r, [0.02 * 2.0 ** -k for k in range(6)])
    ratios = res.errors[:-1] / res.errors[1:]
    assert 3.6 < ratios[-1] < 4.4 and 3.6 < ratios[-2] < 4.4
    assert abs(T.loglog_slope(res.lrs[2:], res.errors[2:]) - 2) < 0.15
    # first order: the error is small relative to the change itself at the smallest step
    assert res.errors[-1] < 0.01 * np.abs(res.actual[-1]).max()
    # the network's logits move along K dz, not along Lemma 1's dz
    kdz = res.K @ res.grad_z
    cos = res.logit_change[-1] @ kdz / np.linalg.norm(res.logit_change[-1]) / np.linalg.norm(kdz)
    assert cos > 0.9999


# --- Eq. 2 and B.5 -----------------------------------------------------------------------------

def test_grpo_objective_by_hand():
    logp = torch.log(torch.tensor([[0.5, 0.2, 0.9], [0.4, 0.3, 0.1]], dtype=torch.float64))
    logp_old = torch.log(torch.tensor([[0.25, 0.4, 0.9], [0.2, 0.6, 0.5]], dtype=torch.float64))
    mask = torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]], dtype=torch.float64)
    A = torch.tensor([1.5, -2.0], dtype=torch.float64)
    full = 0.5 * ((2.0 + 0.5) * 1.5 / 2 + (2.0 + 0.5 + 0.2) * -2.0 / 3)
    negative = 0.5 * ((2.0 + 0.5 + 0.2) * -2.0 / 3)
    assert torch.isclose(T.grpo_objective(logp, logp_old, A, mask), torch.tensor(full, dtype=torch.float64))
    assert torch.isclose(T.grpo_objective(logp, logp_old, A, mask, negative_only=True),
                         torch.tensor(negative, dtype=torch.float64))
    c = T.grpo_coefficients(logp, logp_old, A, mask, negative_only=True)
    assert torch.all(c[0] == 0) and torch.isclose(c[1, 0], torch.tensor(2.0 * -2.0 / 3 / 2, dtype=torch.float64))


def test_completion_mask_ends_at_the_first_eos():
    eos = 2
    y = torch.tensor([[5, 0, 2, 0, 0], [3, 2, 2, 7, 0], [4, 4, 4, 4, 4]])
    expected = [[1, 1, 1, 0, 0], [1, 1, 0, 0, 0], [1, 1, 1, 1, 1]]
    assert T.completion_mask(y, eos).tolist() == expected


def test_equation2_and_negative_only_match_autograd(tiny):
    model, x = tiny
    old = {k: p.detach().clone() for k, p in T.parameters(model).items()}
    completions, mask = T.sample_group(model, char_tokenizer(ALPHABET), x, G=4, max_len=5, seed=3)
    advantages = torch.tensor(T.group_advantages([1.0, 0.0, 0.0, 1.0], normalise=True))
    logp = T.completion_logprobs(model, T.parameters(model), x, completions)
    step = T.flat_grad(T.grpo_objective(logp, logp.detach(), advantages, mask), T.parameters(model))
    params = T.stepped(T.parameters(model), step, 0.05)
    out = T.equation2_gradients(model, params, old, x, completions, mask, advantages)
    w = out.ratios[mask.bool()]
    assert (w - 1).abs().max() > 0.05                   # off-policy: the ratios matter
    for name in T.VARIANTS:
        auto, eq2 = out.autograd[name], out.assembled[name]
        # float32 rounding inside Qwen2's RMSNorm bounds the agreement near 1e-8
        assert (auto - eq2).abs().max() < 1e-6 * auto.abs().max(), name
    # dropping the ratio from the coefficient (on-policy Eq. 2) is detectably wrong
    logp_new = T.completion_logprobs(model, params, x, completions)
    with torch.no_grad():
        logp_old = T.completion_logprobs(model, old, x, completions)
    c_no_w = T.grpo_coefficients(logp_old, logp_old, advantages, mask)
    wrong = T.flat_grad((c_no_w * logp_new).sum(), params)
    assert (wrong - out.autograd["GRPO"]).abs().max() > 1e-3 * out.autograd["GRPO"].abs().max()
    # without the positive responses the gradient changes (GRPO-N is not GRPO here)
    gap = (out.autograd["GRPO-N"] - out.autograd["GRPO"]).abs().max()
    assert gap > 1e-3 * out.autograd["GRPO"].abs().max()


# --- parameters --------------------------------------------------------------------------------

@pytest.mark.parametrize("override, message", [
    ({"mc_samples": [10, 10, 100]}, "mc_samples needs at least 3 distinct"),
    ({"hidden": 12}, "hidden=12 must be a multiple of 8"),
    ({"group_sizes": [2, 30], "vocab": 40}, "G=30"),
    ({"lr_max": 0}, "lr_max=0: Input should be greater than 0"),
])
def test_bad_theory_parameters_are_named(override, message):
    with pytest.raises(ParameterError, match=message):
        resolve("smoke", "theory", override)


def test_with_a_float64_rmsnorm_both_network_checks_are_exact(tiny, monkeypatch):
    """Qwen2's RMSNorm computes in float32 even in a float64 model; computed in float64, Eq. 2
    matches autograd to rounding and Proposition 1's error ratio is 4 to four digits."""
    from transformers.models.qwen2 import modeling_qwen2

    def rmsnorm_float64(self, h):
        return self.weight * h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.variance_epsilon)
    monkeypatch.setattr(modeling_qwen2.Qwen2RMSNorm, "forward", rmsnorm_float64)
    model, x = tiny
    old = {k: p.detach().clone() for k, p in T.parameters(model).items()}
    completions, mask = T.sample_group(model, char_tokenizer(ALPHABET), x, G=4, max_len=5, seed=3)
    advantages = torch.tensor(T.group_advantages([1.0, 0.0, 0.0, 1.0], normalise=True))
    logp = T.completion_logprobs(model, T.parameters(model), x, completions)
    step = T.flat_grad(T.grpo_objective(logp, logp.detach(), advantages, mask), T.parameters(model))
    out = T.equation2_gradients(model, T.stepped(T.parameters(model), step, 0.05), old, x,
                                completions, mask, advantages)
    for name in T.VARIANTS:
        auto = out.autograd[name]
        assert (auto - out.assembled[name]).abs().max() < 1e-13 * auto.abs().max(), name
    V = model.config.vocab_size
    r = np.zeros(V)
    r[::2] = 1
    res = T.proposition1(model, x, r, [0.02 * 2.0 ** -k for k in range(8, 12)])
    np.testing.assert_allclose(res.errors[:-1] / res.errors[1:], 4, rtol=1e-3)
