"""The toy chapter (``chapters/toy_dynamics/``): its tables against hand-made summaries, its
claim checks holding and failing on synthetic seeds, its runs against the simulator's own calls
on a tiny setting, and its figures and words drawn and written from them."""
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from rlvr_dynamics import stats, toy, verdicts  # noqa: E402
from rlvr_dynamics.chapters import toy_dynamics as chapter  # noqa: E402
from rlvr_dynamics.chapters.toy_dynamics import figures, sentences, shown  # noqa: E402

TINY = dict(seeds=8, steps=40, G_sweep=[2, 4], tau_sweep=[1.0, 4.0], expansion_seeds=6,
            expansion_steps=40, expansion_p2=[0.01, 0.05], expansion_G=[2, 3])


@pytest.fixture(scope="module")
def P():
    return chapter.Params(**TINY)


def summary(mean, negatives=None, t_expand=None, mean_field=None, seeds=4):
    """A hand-made ``toy.Summary`` of one or more settings: mean (steps+1, S, K)."""
    mean = np.asarray(mean, float)
    T, S, K = mean.shape
    r = np.array([0.5, 1.0, 0.0, 0.25][:K])
    reward = np.repeat((mean @ r)[..., None], 3, -1)
    return toy.Summary(mean=mean, lo=mean, hi=mean, reward=reward,
                       examples=np.repeat(mean[:, :, None], 2, 2),
                       negatives=np.zeros((T - 1, S, K)) if negatives is None else negatives,
                       t_expand=np.full((S, seeds), np.inf) if t_expand is None else t_expand,
                       mean_field=mean if mean_field is None else mean_field)


def two_stage_mean(steps=200, peak=20, expand=True):
    """pi over steps: a1 rises to 0.9 by ``peak`` while a2 dips and a3 collapses; then (if
    ``expand``) a2 takes over linearly."""
    t = np.arange(steps + 1)
    up = np.clip(t / peak, 0, 1)
    a1 = 0.495 + (0.9 - 0.495) * up
    a2 = 0.01 - 0.005 * up
    if expand:
        down = np.clip((t - peak) / (steps - peak), 0, 1)
        a2 = a2 + (0.9 - a2) * down
        a1 = a1 - (a1 - 0.05) * down
    a3 = 1 - a1 - a2
    return np.stack([a1, a2, a3], -1)[:, None, :]


def negatives_switching(steps=200, switch=30, K=3):
    """Relative negatives: all a3 before ``switch``, all a1 from then on (one setting)."""
    neg = np.zeros((steps, 1, K))
    neg[:switch, 0, 2] = 1.0
    neg[switch:, 0, 0] = 1.0
    return neg


# --- text and tables ---------------------------------------------------------------------------

def test_fmt_and_show():
    assert shown.fmt(np.inf) == "never"
    assert shown.fmt(12.4) == "12" and shown.fmt(12.6) == "13"
    assert shown.show([0.5, 0.5], [1.0, 0.0]) == "π0=(0.5, 0.5), r=(1.0, 0.0)"


def test_spread_states_seeds_and_the_standard_error_bound(P):
    text = sentences.spread(P)
    assert f"mean over {P.seeds} seeds" in text
    assert f"= {0.5 / P.seeds ** 0.5:.3f}" in text and "central 80% of seeds" in text


def test_settings_table_states_this_builds_values():
    """The table of the settings the paper leaves unsaid reads them from the parameters and
    from the simulator's Adam, one row each."""
    P = chapter.Params(**{**TINY, "seeds": 7, "expansion_steps": 33, "pi0": [0.6, 0.1, 0.3]})
    table = shown.settings_table(P)
    rows = table.splitlines()
    assert len(rows) == 2 + 6 and all(r.startswith("| ") and r.endswith(" |") for r in rows[2:])
    assert "$\\pi_0 = (0.6, 0.1, 0.3)$" in table and "$r = (0.5, 1, 0)$" in table
    assert f"| {P.steps} (33 for the phase diagram) |" in table
    assert f"7 runs per curve (`seeds`), {P.expansion_seeds} per cell" in table
    b1, b2 = toy.ADAM_BETAS
    assert f"$\\beta = ({b1:g}, {b2:g})$, $\\epsilon = 10^{{-8}}$" in table


def test_stage_checks_text_states_the_windows_and_the_interval():
    text = sentences.stage_checks_text()
    assert (f"the first {chapter.EARLY_STEPS} and the last {chapter.LATE_STEPS} steps"
            in text)
    assert f"its {100 * stats.CONFIDENCE:.0f} % Student-t interval" in text


def test_expansion_table_reads_medians_shares_and_peaks():
    mean = np.zeros((6, 2, 3))
    mean[:, 0] = [[0.5, 0.1, 0.4], [0.7, 0.05, 0.25], [0.6, 0.3, 0.1], [0.3, 0.6, 0.1],
                  [0.2, 0.7, 0.1], [0.1, 0.8, 0.1]]            # a2 overtakes a1 at step 3
    mean[:, 1] = [0.6, 0.1, 0.3]                               # never expands
    t = np.array([[1.0, 3.0, 5.0, np.inf], [np.inf] * 4])
    table = shown.expansion_table(summary(mean, t_expand=t), ["first", "second"])
    assert table.loc["first", "median over seeds"] == "4"     # median of 1, 3, 5, inf
    assert table.loc["first", "seeds expanded"] == "75%"
    assert table.loc["second", "median over seeds"] == "never"
    assert table.loc["second", "seeds expanded"] == "0%"
    assert table.loc["first", "mean trajectory"] == "3"
    assert table.loc["second", "mean field"] == "never"
    assert table.loc["first", "peak of mean π(a1) @ step"] == "0.700 @ 1"
    assert table.loc["first", "mean π(a2): start → lowest"] == "0.1000 → 0.0500"


def test_the_unsampled_action_gets_no_gradient(P):
    # r = (0.5, 1, 0), group {a1, a3}: advantages +0.25 and -0.25, g = (1/2) sum_i A_i e_{a_i}.
    g = chapter.unsampled_gradient(P)
    assert g[1] == 0.0
    np.testing.assert_allclose(g, [0.125, 0.0, -0.125], atol=1e-12)
    assert sentences.unsampled_gradient_text(g).endswith("the unsampled a2 is exactly 0")
    moved = sentences.unsampled_gradient_text(np.array([0.1, 0.02, -0.12]))
    assert moved.endswith("the unsampled a2 is 0.02, not 0")


def test_costs_read_the_first_setting_and_clip_the_early_step():
    steps = 20
    mean = np.tile([0.4, 0.2, 0.4], (steps + 1, 1, 1))
    sm = summary(mean, t_expand=np.array([[2.0, 4.0, 6.0, 8.0, np.inf]]))
    sm.reward[:, 0, 0] = np.arange(steps + 1) / steps           # reward rises 0 -> 1
    got = shown.costs(sm)
    assert got["median time to expansion"] == "6"
    assert got["seeds expanded"] == "80%"
    assert got[f"mean π(a1) at step {steps}"] == "0.400"       # clipped to the last step
    assert got["final mean reward"] == "1.000" and got["mean reward, whole run"] == "0.500"
    assert got["time to expansion, 10% / 90% of seeds"] == "2 / never"
    table = shown.costs_table({"Adam": sm}, {"Adam": sm})
    assert list(table.columns) == [("Adam", "standard"), ("Adam", "negative-only")]


# --- the claim checks ----------------------------------------------------------------------------

def test_check_replicates_is_opposite_or_shows_no_effect():
    rng = np.random.default_rng(0)
    above = 0.2 + 0.01 * rng.standard_normal(100)
    assert chapter.check("x", above, 0, 0.05)[1] == stats.REPLICATES
    assert chapter.check("x", above, 0.3, 0.05)[1] == stats.OPPOSITE
    assert chapter.check("x", above, 0.2, 0.05)[1] == stats.NO_EFFECT
    assert chapter.check("x", rng.standard_normal(100) * 5, 0, 0.05)[1] == stats.UNDECIDED
    assert chapter.check("x", above[:1], 0, 0.05)[1] == stats.FEW_SEEDS


def test_check_leaves_out_seeds_without_negatives():
    values = np.array([0.9, 0.8, np.nan, 0.85, np.nan])
    text, v = chapter.check("share", values, 0.5, 0.05)
    assert "over 3 seeds" in text and text.startswith("share - 0.5 = +0.350 [")
    assert v == stats.REPLICATES


def per_seed(n=200, exploitation=0.4, exploration=0.5, early=0.9, late=0.8, noise=0.02, seed=1):
    rng = np.random.default_rng(seed)
    return {k: m + noise * rng.standard_normal(n) for k, m in
            (("exploitation", exploitation), ("exploration", exploration),
             ("early_worst", early), ("late_exploited", late))}


def test_claim_rows_replicate_on_two_stages(P):
    rows = chapter.claim_rows(per_seed(), sentences.ours(P, per_seed()))
    assert [r["claim"] for r in rows] == ["toy_two_stages"]
    assert [v for _, v in rows[0]["checks"]] == [stats.REPLICATES] * 4
    assert verdicts.combine([v for _, v in rows[0]["checks"]]) == "replicates"
    assert f"{P.seeds} seeds, {P.steps} steps" in rows[0]["ours"]
    assert "π(a1) peaks +0.40 above its start" in rows[0]["ours"]
    assert "π(a2) - π(a1) = +0.50 (mean over seeds)" in rows[0]["ours"]
    assert f"first {chapter.EARLY_STEPS} steps" in rows[0]["checks"][2][0]


def test_claim_rows_fail_without_exploration_or_the_shift():
    R, O, N = stats.REPLICATES, stats.OPPOSITE, stats.NO_EFFECT
    rows = chapter.claim_rows(per_seed(exploration=-0.3), "ours")
    assert [v for _, v in rows[0]["checks"]] == [R, O, R, R]
    # A late share of a1 well above 0 but below one half: the threshold is a majority.
    assert chapter.NEGATIVE_SHARE_MIN == 0.5
    rows = chapter.claim_rows(per_seed(late=0.4, early=0.3), "ours")
    assert [v for _, v in rows[0]["checks"]] == [R, R, O, O]
    assert verdicts.combine([v for _, v in rows[0]["checks"]]) == "partly"
    rows = chapter.claim_rows(per_seed(exploitation=-0.2, exploration=0.0, early=0.1,
                                       late=0.1), "ours")
    assert [v for _, v in rows[0]["checks"]] == [O, N, O, O]
    assert verdicts.combine([v for _, v in rows[0]["checks"]]) == "does not replicate"


def test_a_policy_that_never_exploits_has_a_negative_exploitation():
    """The peak of pi(a1) is taken after the start: where the better a2 is already common, a1
    loses mass from the first step, the exploitation stage reads negative, and the check can
    fail (with step 0 included it could only read >= 0)."""
    s = toy.stages(toy.logits([0.5, 0.45, 0.05]), [0.5, 1.0, 0.0], G=2, lr=0.1, steps=50,
                   seeds=50, seed=0)
    assert (s["exploitation"] < 0).mean() > 0.5


def by_G_with(medians):
    return {g: summary(two_stage_mean(), t_expand=np.full((1, 3), m))
            for g, m in zip((2, 4, 8), medians)}


def test_summary_table_holds_on_two_stages():
    main = summary(two_stage_mean(), negatives_switching())
    table = shown.summary_table(main, by_G_with([120, 80, 50]), [(0.0, -1e-3), (2e-3, -1.0)])
    assert table["holds here"].tolist() == [True] * 5
    assert "at step 20" in table.iloc[0]["this build"]
    assert table.iloc[3]["this build"] == "median time to expansion G=2: 120, G=4: 80, G=8: 50"


def test_summary_table_fails_where_the_claims_fail():
    main = summary(two_stage_mean(expand=False), negatives_switching(switch=200))
    table = shown.summary_table(main, by_G_with([50, 80, np.inf]), [(1e-3, 2e-4)])
    held = table["holds here"].tolist()
    assert held == [True, False, False, False, False]
    # pi(a2) rising in stage 1 by more than the slack breaks the first claim.
    mean = two_stage_mean()
    mean[1:21, 0, 1] = 0.02
    mean[1:21, 0, 2] = 1 - mean[1:21, 0, 0] - 0.02
    table = shown.summary_table(summary(mean, negatives_switching()), by_G_with([3, 2, 1]),
                                  [(0.0, -1.0)])
    assert table["holds here"].tolist() == [False, True, True, True, True]


def test_extremes_have_appendix_c4_signs_along_a_mean_field(P):
    field = toy.mean_field(toy.logits(P.pi0_four), P.rewards_four, G=P.G, lr=P.lr, tau=P.tau,
                           optimizer=P.optimizer, steps=30)
    ext = chapter.extremes(SimpleNamespace(mean_field=field), P.rewards_four, P.G, P.tau)
    assert len(ext) == len(P.rewards_four)
    for (best, worst), s, r in zip(ext, range(len(ext)), P.rewards_four):
        Eg = toy.expected_gradient(field[:, s], np.array(r), P.G, P.tau)
        assert best == Eg[:, np.argmax(r)].min() and worst == Eg[:, np.argmin(r)].max()
        assert best >= 0 > worst
    table = shown.extremes_table(P, ext)
    assert len(table) == len(ext)
    assert table.iloc[0]["min over steps of E[g(a_max)]"] == f"{ext[0][0]:.2e}"


# --- the runs, on a tiny setting ------------------------------------------------------------------

def test_runs_are_the_simulators_calls(P):
    kw = dict(lr=P.lr, tau=P.tau, optimizer=P.optimizer, steps=P.steps, seeds=P.seeds,
              seed=P.seed, band=P.band)
    main = chapter.main_run(P)
    ref = toy.summarise(z0=toy.logits(P.pi0), r=P.rewards, G=P.G, **kw)
    np.testing.assert_array_equal(main.mean, ref.mean)
    np.testing.assert_array_equal(main.t_expand, ref.t_expand)
    by_G = chapter.group_size_runs(P)
    assert list(by_G) == P.G_sweep
    np.testing.assert_array_equal(by_G[P.G].mean, main.mean)   # the same seeds
    standard, negative = chapter.optimizer_runs(P), chapter.negative_only_runs(P)
    assert list(standard) == ["Adam", "SGD"] and standard["Adam"].mean.shape[1] == 2
    ref = toy.summarise(z0=toy.logits([P.pi0, P.pi0_sweep[0]]), r=P.rewards, G=P.G, **kw)
    np.testing.assert_array_equal(standard["Adam"].mean, ref.mean)
    ref = toy.summarise(z0=toy.logits(chapter.two_settings(P)), r=P.rewards, G=P.G,
                        negative_only=True, **dict(kw, optimizer="sgd", lr=P.sgd_lr))
    np.testing.assert_array_equal(negative["SGD"].mean, ref.mean)
    assert not np.array_equal(negative["Adam"].mean, standard["Adam"].mean)


def test_runs_are_cached(P, tmp_path):
    first = chapter.figure1_runs(P, tmp_path)
    assert len(list(tmp_path.iterdir())) == 2
    again = chapter.figure1_runs(P, tmp_path)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a.mean, b.mean)
    assert first[0].mean.shape == (P.steps + 1, len(P.pi0_sweep), 3)
    assert first[1].mean.shape == (P.steps + 1, len(P.reward_sweep), 3)


def test_figures_and_tables_of_a_tiny_build(P):
    by_pi0, by_r = chapter.figure1_runs(P)
    fig = figures.plot_figure1(P, by_pi0, by_r)
    assert len(fig.axes) == len(P.pi0_sweep) + len(P.reward_sweep)
    by_policy, by_reward = shown.figure1_tables(P, by_pi0, by_r)
    table = by_policy
    assert (len(by_policy.data), len(by_reward.data)) == (len(P.pi0_sweep), len(P.reward_sweep))
    assert by_policy.data.index[0] == str(tuple(P.pi0_sweep[0]))
    assert by_reward.data.index.name == f"r (π0 = {tuple(P.pi0)})"
    assert list(table.data.columns) == ["median", "expanded", "mean", "field", "π(a1) peak",
                                        "π(a2) dip"]
    assert "white-space: nowrap" in table.to_html() and "<b>π(a2) dip</b>" in table.to_html()
    main = chapter.main_run(P)
    share = chapter.negative_shares(main)
    assert share.shape == (P.steps, 3)
    np.testing.assert_allclose(np.nansum(share, -1)[~np.isnan(share).all(-1)], 1)
    assert len(figures.plot_relative_negatives(P, main).axes) == 2
    by_opt = chapter.optimizer_runs(P)
    assert len(figures.plot_optimizers(P, by_opt).axes) == 4
    mf = shown.mean_field_table(P, by_opt).data
    assert mf.index.names == ["optimizer", "π0"] and len(mf) == 4
    by_tau = chapter.temperature_runs(P)
    t = shown.temperature_table(P, by_tau).data
    assert t["π_τ at start"].iloc[0] == "(" + ", ".join(f"{v:.3f}" for v in P.pi0) + ")"  # τ=1
    assert len(figures.plot_figure6(P, by_tau).axes) == len(P.tau_sweep)
    four = chapter.four_action_runs(P)
    assert four.mean.shape[-1] == 4 and len(figures.plot_figure7(P, four).axes) == 2
    grids = chapter.expansion_grids(P)
    assert set(grids) == {"standard", "negative-only"}
    assert grids["standard"].t_seed.shape == (2, 2, P.expansion_seeds)
    assert len(figures.plot_phase_diagram(P, grids).axes) == 5    # four panels and a colour bar
    g = shown.expansion_grid_table(P, grids)
    assert g.shape == (4 * len(P.expansion_G), len(P.expansion_p2))   # 2 rules x 2 times
    assert g.index.names == ["update", "time to expansion of", "G"]
    plt.close("all")


def test_stages_feed_the_claim_rows(P):
    per = chapter.stages(P)
    assert set(per) == {"exploitation", "exploration", "early_worst", "late_exploited"}
    assert all(v.shape == (P.seeds,) for v in per.values())
    assert (per["exploitation"] >= 0).all()                    # the peak is at least the start
    rows = chapter.claim_rows(per, sentences.ours(P, per))
    assert len(rows[0]["checks"]) == 4


# --- the prose written from the results --------------------------------------------------------

def settings_of(means, times, seeds=4):
    """A summary of several settings: one (steps+1, 1, K) mean and one time to expansion each."""
    return summary(np.concatenate(means, axis=1),
                   t_expand=np.array([np.full(seeds, t, float) for t in times]))


def abrupt_mean(steps=200, at=100):
    """a1 at 0.9 until ``at``, then a2 takes over within 4 steps."""
    pi = np.tile([0.9, 0.005, 0.095], (steps + 1, 1))
    pi[at:at + 4] = [[0.6, 0.3, 0.1], [0.3, 0.6, 0.1], [0.1, 0.85, 0.05], [0.02, 0.95, 0.03]]
    pi[at + 4:] = [0.02, 0.95, 0.03]
    pi[:5, 0] = np.linspace(0.495, 0.9, 5)
    pi[:5, 2] = 1 - pi[:5, 0] - 0.005
    return pi[:, None, :]


def test_figure1_text_counts_stages_and_orders_the_medians(P):
    by_pi0 = settings_of([two_stage_mean()] * 4, [50, 100, 120, 110])
    by_r = settings_of([two_stage_mean()] * 4, [40, 80, 150, np.inf])
    text = sentences.figure1_text(P, by_pi0, by_r)
    assert text.startswith("In the mean over seeds both stages appear in 8 of the 8 panels")
    assert "falls below its start in 8 of them" in text and "or may even decrease" in text
    assert "40 for r(a1) = 0.1, 80 for r(a1) = 0.3, 150 for r(a1) = 0.7 and never for r(a1) = 0.9; from the initial policies it is 50 from" in text
    assert text.endswith("Expansion comes later the closer r(a1) is to r(a2) and the rarer a2 "
                         "starts.")
    flat = two_stage_mean(expand=False)
    text = sentences.figure1_text(P, settings_of([flat] * 4, [np.inf] * 4),
                                settings_of([flat] * 4, [np.inf] * 4))
    assert text.startswith("In the mean over seeds both stages appear in 0 of the 8 panels")
    assert text.endswith("does not order clearly with r(a1) or with a2's initial probability.")


def test_single_runs_text_compares_switches_with_their_timing(P):
    spread = np.array([[20.0, 60.0, 100.0, 150.0]])
    fast = summary(abrupt_mean(), t_expand=spread)
    by_pi0 = toy.Summary(**{**fast.__dict__, "mean": np.repeat(fast.mean, 4, 1),
                            "examples": np.repeat(fast.examples, 4, 1),
                            "t_expand": np.repeat(spread, 4, 0)})
    text = sentences.single_runs_text(P, by_pi0, by_pi0)
    assert text.startswith("Of the 16 single runs drawn, 16 switch from π(a2) < 0.1 to π(a2) > 0.9")
    assert "in 4 to 4 steps (median 4)" in text and "from 20 (10 % of seeds) to 150 (90 %)" in text
    assert "**Each run switches quickly, at a random time**" in text
    slow = settings_of([two_stage_mean()] * 4, [100] * 4)
    text = sentences.single_runs_text(P, slow, slow)
    assert text.startswith("None of the 16 single runs drawn switches")


def test_relative_negatives_text_sees_the_shift_or_its_absence():
    text = sentences.relative_negatives_text(summary(two_stage_mean(), negatives_switching()))
    assert text.startswith("In steps 0-9, 100% of the negative samples are a3; after the peak of "
                           "π(a1) (step 20), ")
    assert "The shift is there" in text and "a2's share never exceeds 0%" in text
    text = sentences.relative_negatives_text(summary(two_stage_mean(),
                                                   negatives_switching(switch=200)))
    assert "0% are a1 and 100% are a3" in text and "does not show" in text


def test_mean_field_text_says_whether_the_mean_field_runs_ahead(P):
    field = np.concatenate([two_stage_mean(peak=5)] * 2, 1)
    ahead = summary(np.concatenate([two_stage_mean()] * 2, 1), t_expand=np.full((2, 4), 150.0),
                    mean_field=field)
    text = sentences.mean_field_text(P, {"Adam": ahead, "SGD": ahead})
    assert "Under Adam, from π0(a2) = 0.01 the mean field expands at step" in text
    assert "**Under Adam the mean field expands before the average run in both settings.**" in text
    same = settings_of([two_stage_mean()] * 2, [150, 150])
    text = sentences.mean_field_text(P, {"Adam": same, "SGD": same})
    assert "with gaps of up to 0.00 in probability" in text
    assert "does not run ahead of the average run" in text


def test_group_size_text_follows_the_medians():
    text = sentences.group_size_text(by_G_with([120, 80, 50]))
    assert text.startswith("Both stages are present at every G. The median time to expansion "
                           "is 120 at G = 2, 80 at G = 4 and 50 at G = 8")
    assert text.endswith("find a2 sooner.")
    text = sentences.group_size_text(by_G_with([50, 80, np.inf]))
    assert "never at G = 8" in text and text.endswith("does not bring expansion sooner.")


def test_temperature_text_reads_expansion_and_exploitation(P):
    flat = np.tile([0.35, 0.3, 0.35], (201, 1))[:, None, :]
    text = sentences.temperature_text(P, settings_of([two_stage_mean(), flat], [200, 10]))
    assert "200 at τ = 1 and 10 at τ = 4" in text and "0.405 at τ = 1 and 0.000 at τ = 4" in text
    assert "expansion comes sooner" in text and "at τ = 4 hardly happens" in text
    text = sentences.temperature_text(P, settings_of([flat, two_stage_mean()], [10, 200]))
    assert "does not come sooner" in text and "does not weaken steadily" in text


def four_mean(end_a4, steps=50):
    starts = np.array([[0.4, 0.01, 0.3, 0.29], [0.49, 0.01, 0.49, 0.01]])
    ends = np.array([[0.05, 0.9, 0.0, 0.05], [0.05, 0.9 - end_a4, 0.05, end_a4]])
    w = np.linspace(0, 1, steps + 1)[:, None, None]
    return summary((1 - w) * starts + w * ends)


def test_four_action_text_sees_mass_kept_on_an_intermediate_action(P):
    text = sentences.four_action_text(P, four_mean(0.3))
    assert "with r(a4) = 0.75, the mean π(a4) goes from 0.010 to 0.300" in text
    assert text.endswith("expansion need not reach the best action.")
    text = sentences.four_action_text(P, four_mean(0.01))
    assert "goes from 0.010 to 0.010" in text and text.endswith("in this build.")


def test_negative_only_text_weighs_the_two_updates():
    expands = summary(two_stage_mean(), t_expand=np.array([[60.0, 70.0, 80.0, 90.0]]))
    stuck = summary(two_stage_mean(expand=False))
    text = sentences.negative_only_text({"Adam": stuck}, {"Adam": expands})
    assert text.startswith("**Under Adam, yes**: the median time to expansion is 75 "
                           "with negative-only updates and never with standard ones (100% against 0% of seeds expanded")
    text = sentences.negative_only_text({"Adam": expands}, {"Adam": stuck})
    assert text.startswith("**Under Adam, no**")
    assert "no run expands, and the mean π(a2) goes from 0.0100 to 0.0050 (it decays)." in text


def grid(times):
    t = np.array(times, float)                       # (nG, nP)
    return toy.ExpansionGrid(np.repeat(t[..., None], 3, -1), t, np.full(t.shape, 30.0))


def test_phase_text_reads_the_grid(P):
    grows = {"standard": grid([[200, 50], [150, 40]]), "negative-only": grid([[60, 30], [50, 20]])}
    text = sentences.phase_text(P, grows)
    assert "standard update the median run expands within 40 steps in 4 of 4 cells" in text
    assert "its median is 50 from π0(a2) = 0.05 and 200 from π0(a2) = 0.01" in text
    assert "shortens or keeps the median in 2 of 2 comparisons" in text
    assert text.endswith("the longer training must last to find it.")
    flat = {"standard": grid([[np.inf, np.inf], [np.inf, np.inf]]),
            "negative-only": grid([[60, 30], [50, 20]])}
    text = sentences.phase_text(P, flat)
    assert "in 0 of 4 cells (the slowest at none)" in text and "shrinkage" not in text


def test_summary_text_lists_what_holds_and_what_does_not(P):
    main = summary(two_stage_mean(), negatives_switching())
    table = shown.summary_table(main, by_G_with([120, 80, 50]), [(0.0, -1e-3)])
    opt = {"Adam": settings_of([two_stage_mean()] * 2, [100, 100])}
    grids = {"standard": grid([[200, 50], [150, 40]])}
    text = sentences.summary_text(table, opt, opt, grids)
    assert text.startswith("- **Reproduced, in the mean over seeds**: stage 1") and "Not reproduced" not in text
    assert "4 of 4 cells with the standard update" in text
    main = summary(two_stage_mean(expand=False), negatives_switching(switch=200))
    table = shown.summary_table(main, by_G_with([50, 80, np.inf]), [(1e-3, 2e-4)])
    text = sentences.summary_text(table, opt, opt, grids)
    assert "**Not reproduced here**: stage 2: π(a2) rises, π(a1) falls;" in text


def test_the_rules_sentence_names_the_update_that_expands_soonest():
    import numpy as np
    from types import SimpleNamespace
    from rlvr_dynamics.chapters.toy_dynamics import sentences as ts

    def sm(times):
        return SimpleNamespace(t_expand=np.array([times], dtype=float))
    by_rule = {"standard": {"Adam": sm([100, 120]), "SGD": sm([np.inf, np.inf])},
               "negative-only": {"Adam": sm([80, 90]), "SGD": sm([np.inf, 500])},
               "NSR": {"Adam": sm([40, 50]), "SGD": sm([np.inf, np.inf])}}
    text = ts.rules_text(by_rule)
    assert "under Adam the NSR update expands soonest (median 45, 100% of seeds); the " \
           "negative-only update: 85" in text
    assert "under SGD the negative-only update expands soonest (median never, 50% of seeds)" in text
