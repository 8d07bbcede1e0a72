"""The theory chapter's checks (``rlvr_dynamics.chapters.theory``) on a small setting: each
records what the paper's result predicts and raises when the mathematics it checks is broken;
its figures, tables and words (``figures``, ``sentences``) read what the checks measured."""
import json

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from rlvr_dynamics import theory as T
from rlvr_dynamics.chapters import theory as chapter
from rlvr_dynamics.chapters.theory import figures, sentences
from rlvr_dynamics.chapters.theory import shown as displayed  # its tables for people

SMALL = dict(vocab=5, draws=50, symbolic_vocab=2, mc_samples=[100, 1000, 10000], mc_repeats=40,
             group_sizes=[2, 3], group_draws=4000, hidden=16, layers=1, lr_max=0.02,
             halvings=3, G=4, max_len=4)


pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module", autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def P():
    return chapter.Params(**SMALL)


@pytest.fixture(scope="module")
def setting(P):
    return chapter.tabular_setting(P)


@pytest.fixture(scope="module")
def net(P):
    return chapter.tiny_network(P)


@pytest.fixture(scope="module")
def prop1(net, P):
    return chapter.proposition1_check(net, P)


@pytest.fixture(scope="module")
def eq2(net, P, prop1):  # after prop1, in the notebook's order
    return chapter.equation2_check(net, P)


# --- the tabular setting, Lemma 1, Remark 2 ----------------------------------------------------

def test_tabular_setting_is_a_seeded_policy_with_half_the_actions_correct(P, setting):
    assert setting.pi.shape == setting.A.shape == (P.vocab,)
    assert abs(setting.pi.sum() - 1) < 1e-15 and (setting.pi > 0).all()
    assert setting.r.sum() == P.vocab // 2 and set(setting.r) == {0.0, 1.0}
    again = chapter.tabular_setting(P)
    np.testing.assert_array_equal(again.pi, setting.pi)
    other = chapter.tabular_setting(chapter.Params(**{**SMALL, "seed": 1}))
    assert not np.allclose(other.pi, setting.pi)
    assert sentences.setting_text(setting).splitlines()[0].startswith("policy pi: [")


def test_lemma1_checks_record_zero_residual_and_rounding_error(P):
    symbolic = chapter.lemma1_symbolic(P)
    assert symbolic.record == {"lemma1_symbolic_zero": True}
    text = sentences.lemma1_symbolic_text(symbolic, P)
    assert f"all {P.symbolic_vocab ** 2} entries" in text and text.endswith("simplify to 0")
    broken = chapter.Check({"lemma1_symbolic_zero": False})
    assert sentences.lemma1_symbolic_text(broken, P).endswith("do not all simplify to 0")
    autograd = chapter.lemma1_autograd(P)
    error = autograd.record["lemma1_autograd_max_error"]
    assert 0 <= error < chapter.AUTOGRAD_TOL
    assert f"over {P.draws} draws: {error:.1e}" in sentences.lemma1_autograd_text(autograd, P)


def test_lemma1_autograd_fails_when_the_update_is_wrong(P, monkeypatch):
    """Lemma 1 with (e_v + pi) in place of (e_v - pi) misses autograd by far more than
    rounding, and the check says so."""
    right = T.logit_update

    def wrong(pi, v, a, lr):
        return right(pi, v, a, lr) + 2 * lr * np.asarray(a)[..., None] * np.asarray(pi)

    monkeypatch.setattr(T, "logit_update", wrong)
    with pytest.raises(AssertionError, match="misses autograd"):
        chapter.lemma1_autograd(P)


def test_probability_gainers_follow_the_first_order_condition():
    """Remark 2: after a positive sample of v, u != v gains probability iff
    pi(u) + pi(v) < sum_w pi(w)^2 (first order, so a small step)."""
    pi = np.array([0.7, 0.12, 0.08, 0.06, 0.04])
    threshold = (pi ** 2).sum()
    for v in range(len(pi)):
        expected = [u for u in range(len(pi)) if u != v and pi[u] + pi[v] < threshold]
        assert chapter.probability_gainers(pi, v, 1e-4) == expected
    assert chapter.probability_gainers(pi, 0, 0.1) == []          # the likely action: none
    assert chapter.probability_gainers(pi, 3, 0.1) == [1, 2, 4]   # a rare one: the others


def test_remark2_records_the_gainers_of_the_rare_case_and_draws_both_cases(P, setting):
    pi_sorted = np.sort(setting.pi)[::-1]
    rare = chapter.remark2_cases(P.vocab)["a rare action"]
    assert rare == P.vocab - 2
    gainers = chapter.remark2(setting, P).record["remark2_gainers_after_rare_positive"]
    assert gainers == chapter.probability_gainers(pi_sorted, rare, P.lr)
    assert all(isinstance(u, int) and u != rare for u in gainers)
    fig = figures.plot_remark2(setting, P)
    assert isinstance(fig, plt.Figure) and len(fig.axes) == 4
    assert len(fig.axes[0].patches) == 2 * P.vocab   # A(v) = +1 and -1 bars
    plt.close(fig)


# --- Theorem 1 and the group result ------------------------------------------------------------

def test_theorem1_exact_is_zero_to_rounding(P, setting):
    check = chapter.theorem1_exact(setting, P)
    assert check.record["theorem1_symbolic_zero"] is True
    assert check.record["theorem1_enumeration_max_error"] < chapter.EXACT_TOL
    text = sentences.theorem1_text(check, P)
    assert text.splitlines() == [
        f"symbolic residuals (V = {P.symbolic_vocab}) expand to 0: True",
        f"max |sum over actions - Theorem 1| = "
        f"{check.record['theorem1_enumeration_max_error']:.1e}"]


def test_monte_carlo_error_falls_like_one_over_root_n(P, setting):
    mc = chapter.monte_carlo(setting, P)
    for slope in mc.slopes:
        assert abs(slope + 0.5) < chapter.MC_SLOPE_TOL
    assert list(mc.record) == ["theorem1_mc_slope", "group_mc_slope"]
    # the RMS over R means estimates sqrt(tr Sigma / N): relative spread ~ 1/sqrt(2R)
    for rms, se in ((mc.rms_single, mc.se_single), (mc.rms_group, mc.se_group)):
        np.testing.assert_allclose(rms / se, 1, atol=5 / np.sqrt(2 * P.mc_repeats))
    fig = figures.plot_monte_carlo(mc, P)
    assert isinstance(fig, plt.Figure) and len(fig.axes) == 1
    assert any("fitted slope" in t.get_text() for t in fig.axes[0].get_legend().get_texts())
    plt.close(fig)


def test_mean_group_update_estimates_the_closed_form(setting):
    rng = np.random.default_rng(7)
    pi, r, G, lr, n = setting.pi, setting.r, 3, 0.1, 20000
    exact, cov = T.group_update_moments(pi, r, G, lr)
    z = (chapter.mean_group_update(pi, r, G, lr, n, rng) - exact) / np.sqrt(np.diag(cov) / n)
    assert np.abs(z).max() < chapter.Z_MAX


def test_group_table_has_a_row_per_group_size_and_the_one_minus_one_over_g_ratio(P, setting):
    group = chapter.group_check(setting, P)
    assert group.symbolic == {2: True, 3: True}
    assert list(group.table.index) == P.group_sizes
    np.testing.assert_allclose(group.table["‖E[U]‖ / ‖Theorem 1‖"],
                               1 - 1 / np.array(P.group_sizes), rtol=1e-12)
    assert (group.table["max |enumeration - closed form|"] < chapter.EXACT_TOL).all()
    assert (group.table[chapter.MC_SE] < chapter.Z_MAX).all()
    assert [row["G"] for row in group.record["group"]] == P.group_sizes
    assert (sentences.group_symbolic_text(group)
            == "symbolic: V = 2, G = 2, 3: every residual expands to 0")
    assert sentences.group_symbolic_text(chapter.GroupCheck({2: True, 3: False}, group.table, 2)
                                         ).endswith("not every residual expands to 0")


def test_group_check_fails_without_the_one_minus_one_over_g_factor(P, setting, monkeypatch):
    monkeypatch.setattr(T, "expected_group_logit_update",
                        lambda pi, r, G, lr: T.expected_logit_update(pi, r, lr))
    with pytest.raises(AssertionError, match="closed form"):
        chapter.group_check(setting, P)


# --- Proposition 1 and Eq. 2 on a tiny network -------------------------------------------------

def test_proposition1_remainder_is_second_order(P, prop1):
    record = prop1.record["prop1"]
    assert record["lrs"] == [P.lr_max * 2.0 ** -k for k in range(P.halvings + 1)]
    assert abs(record["slope"] - 2) < chapter.PROP1_SLOPE_TOL
    assert abs(record["halving_ratios"][-1] - 4) < 0.3
    assert record["cos_actual_predicted"] > 0.99                       # first order is right
    assert record["cos_actual_predicted"] > record["cos_actual_K_identity"]
    table = prop1.table
    assert len(table) == P.halvings + 1 and table["eta"].tolist() == record["lrs"]
    assert table["error ratio to the next smaller η"].tolist()[:-1] == record["halving_ratios"]
    shown = displayed.proposition1_table(prop1).to_html()
    assert ">-</td>" in shown and "nan" not in shown               # no ratio at the last eta
    assert len(prop1.cosines) == 4
    assert prop1.cosines.iloc[0, 0] == record["cos_actual_predicted"]
    assert "0.99" in displayed.cosines_table(prop1).to_html()
    assert sentences.network_text(prop1).startswith(
        f"model: {prop1.n_params:,} parameters, V = {len(prop1.tokens)}")


def test_plot_proposition1_draws_the_remainder_and_one_step(P, prop1):
    fig = figures.plot_proposition1(prop1, P)
    assert isinstance(fig, plt.Figure) and len(fig.axes) == 2
    assert len(fig.axes[1].patches) == 3 * len(prop1.tokens)
    plt.close(fig)


def test_equation2_matches_autograd_for_both_gradients(P, eq2):
    assert list(eq2.table.index) == ["GRPO (Eq. 2)", "GRPO-N (B.5)"]
    assert (eq2.table[chapter.EQ2_GAP] < chapter.EQ2_REL_TOL).all()
    assert eq2.rewards.sum() == P.G // 2 and len(eq2.lengths) == P.G
    assert all(1 <= n <= P.max_len for n in eq2.lengths)
    low, high = eq2.ratio_range
    assert low < high and high - low > 1e-3                            # ratios away from 1
    assert -1 <= eq2.cos_full_negative_only < 1 - 1e-6                  # a different direction
    assert len(sentences.equation2_group_text(eq2).splitlines()) == 3
    assert "GRPO-N (B.5)" in displayed.equation2_table(eq2).to_html()


# --- the summary -------------------------------------------------------------------------------

def test_summary_reads_the_collected_record(P, setting, prop1, eq2, tmp_path, monkeypatch):
    checks = [chapter.lemma1_symbolic(P), chapter.lemma1_autograd(P), chapter.remark2(setting, P),
              chapter.theorem1_exact(setting, P), chapter.group_check(setting, P), prop1, eq2]
    record = chapter.collect(*checks)
    assert list(record) == [k for c in checks for k in c.record]
    record.update(theorem1_mc_slope=-0.5, group_mc_slope=-0.5)
    rows = displayed.summary_rows(record, P)
    assert len(rows) == 11 and list(rows.columns) == ["result", "check", "expected", "measured"]
    assert rows["measured"].iloc[0] == "simplifies to 0"
    assert rows["measured"].iloc[-2] == f"{eq2.table[chapter.EQ2_GAP].iloc[0]:.1e}"
    assert rows["measured"].iloc[-4] == f"{prop1.record['prop1']['slope']:.3f}"
    assert "simplifies to 0" in displayed.summary_table(record, P).to_html()
    monkeypatch.setenv("RLVR_RESULTS", str(tmp_path))
    path = chapter.save_record(record, P)
    assert path.parent == tmp_path / P.profile / "theory"
    saved = json.loads(path.read_text())
    assert saved["parameters"] == P.values()
    assert saved["prop1"]["errors"] == prop1.record["prop1"]["errors"]


# --- the prose written from the results --------------------------------------------------------

def _mc(scale_group=1.0, slope_group=-0.5):
    n = np.array([10, 100, 1000, 10000])
    se = 1 / np.sqrt(n)
    return chapter.MonteCarlo(list(n), 2, se.copy(), scale_group * n ** slope_group, se, se)


def test_monte_carlo_text_follows_the_slopes_and_the_standard_error_lines(P):
    good = sentences.monte_carlo_text(_mc(), P)
    assert "-0.500 (Theorem 1) and -0.500 (the group update, G = 2)" in good
    assert "no bias is visible down to the smallest error measured, 1.0e-02" in good
    biased = sentences.monte_carlo_text(_mc(scale_group=3.0, slope_group=-0.3), P)
    assert "and -0.300 (the group update" in biased
    assert "do not follow the formulas' standard errors" in biased and "no bias" not in biased


def _group_check(ratio_gap=0.0, z=(1.2, 2.5)):
    table = pd.DataFrame({"G": [2, 4], "1 - 1/G": [0.5, 0.75],
                          "‖E[U]‖ / ‖Theorem 1‖": [0.5 + ratio_gap, 0.75],
                          "max |enumeration - closed form|": [0.0, 0.0],
                          chapter.MC_SE: list(z)}).set_index("G")
    return chapter.GroupCheck({2: True, 3: True}, table, 3)


def test_the_group_table_shows_rounding_residue_as_zero():
    group = _group_check()
    group.table["max |enumeration - closed form|"] = [1.7e-18, -3.5e-17]
    shown = displayed.group_table(group).to_html()
    assert "e-1" not in shown and shown.count(">0</td>") == 2
    assert ">0.75</td>" in shown and ">2.5</td>" in shown          # three significant digits


def test_group_text_reads_the_ratio_column_and_the_deviations():
    good = sentences.group_text(_group_check())
    assert good.startswith("The ratio column reproduces 1 − 1/G to all printed digits")
    assert "2.50 standard errors (at G = 4; 1.20 to 2.50 over G = 2, 4)" in good
    assert good.endswith("within the few standard errors expected of unbiased means.")
    bad = sentences.group_text(_group_check(ratio_gap=0.1, z=(7.0, 2.5)))
    assert "misses 1 − 1/G by up to 0.1" in bad and "(at G = 2;" in bad
    assert bad.endswith("beyond the 5 standard errors expected of unbiased means.")


def _prop1(power):
    lrs = np.array([0.04, 0.02, 0.01])
    V = 3
    actual = np.outer(lrs, [1.0, -0.5, -0.5])
    predicted = actual + np.outer(lrs ** power, [1.0, 0.0, 0.0])
    K = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.0], [0.0, 0.0, 1.0]])
    grad_z = np.array([1.0, 0.0, -1.0])
    logit_change = np.outer(lrs, K @ grad_z)
    result = T.Proposition1(lrs, np.full(V, 1 / 3), K, grad_z, actual, predicted,
                            actual, logit_change)
    return chapter.Prop1Check(result, lrs.tolist(), 10, ["a", "b", "c"])


def test_proposition1_text_reads_the_halving_ratios():
    second = sentences.proposition1_text(_prop1(2))
    assert "falls by a factor of 4.00 (fitted slope 2.000" in second
    assert "Δlog π itself falls by 2.00" in second and "second order, as Appendix B.3" in second
    assert "smallest error measured is 1.0e-04, at η = 0.01" in second
    first = sentences.proposition1_text(_prop1(1))
    assert "falls by a factor of 2.00 (fitted slope 1.000" in first
    assert "not second order in this build" in first


def test_cosines_text_says_which_direction_the_logits_follow():
    along = sentences.cosines_text(_prop1(2))
    assert "do not move along Theorem 1's Δz but along KΔz" in along
    check = _prop1(2)
    check.result.logit_change[:] = check.result.grad_z * check.result.lrs[:, None]
    follows = sentences.cosines_text(check)
    assert "with Lemma 1's Δz" in follows and "1.00000 with Lemma 1's Δz" in follows
    assert "follow Δz at least as closely as KΔz" in follows


def _eq2(gaps=(1e-8, 2e-8), cos=0.5):
    table = pd.DataFrame({"gradient": ["GRPO (Eq. 2)", "GRPO-N (B.5)"], "‖autograd‖": [1.0, 0.5],
                          chapter.EQ2_GAP: list(gaps)}).set_index("gradient")
    return chapter.Eq2Check(table, np.array([1.0, 0.0, 0.0, 1.0]), [2, 4, 4, 3], [0.9, 1.2], cos)


def test_equation2_text_reads_the_gaps_and_the_cosine():
    good = sentences.equation2_text(_eq2())
    assert good.startswith("Both gradients agree with autograd: GRPO (Eq. 2) to 1.0e-08")
    assert "lengths 2 to 4" in good and "different direction from the full one (cosine 0.500)" in good
    bad = sentences.equation2_text(_eq2(gaps=(1e-3, 2e-8), cos=1.0))
    assert bad.startswith("Both gradients do not agree") and "to 1.0e-03 of its size" in bad
    assert "points along the full one" in bad


def test_summary_text_is_written_from_the_record(P, setting, prop1, eq2):
    checks = [chapter.lemma1_symbolic(P), chapter.lemma1_autograd(P), chapter.remark2(setting, P),
              chapter.theorem1_exact(setting, P), chapter.group_check(setting, P), prop1, eq2]
    record = chapter.collect(*checks)
    record.update(theorem1_mc_slope=-0.5, group_mc_slope=-0.49)
    text = sentences.summary_text(record, P)
    assert text.count("\n* ") == 4
    assert "**Lemma 1 and Theorem 1 hold exactly**" in text and "slopes -0.500 and -0.490" in text
    assert f"slope {record['prop1']['slope']:.3f} in η" in text
    record = {**record, "theorem1_mc_slope": -0.2,
              "remark2_gainers_after_rare_positive": [1, 2],
              "prop1": {**record["prop1"], "slope": 1.0}}
    text = sentences.summary_text(record, P)
    assert "**Lemma 1 and Theorem 1 do not pass every check here**" in text
    assert f"action {P.vocab - 2} (sorted), actions 1, 2 gain probability." in text
    assert "**Proposition 1's remainder is not second order here**" in text
