"""The regimes chapter's readings on synthetic probes: a run that shrinks then expands, one that
only expands, one that stalls; each verdict reachable, "cannot inform" included; statistics that
read no effect in noise; the paper's scenario decided by its declared rules; the toy's inputs
read from the base and its prediction registered before the runs."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rlvr_dynamics import stats
from rlvr_dynamics.chapters import regimes as chapter
from rlvr_dynamics.chapters import ParameterError, toy_dynamics
from rlvr_dynamics.chapters.regimes import figures, sentences, toy_mapping
from rlvr_dynamics.chapters.regimes import shown as displayed  # its tables for people
from rlvr_dynamics.profiles import resolve
from rlvr_dynamics.tasks import sums
from rlvr_dynamics.rl.probe import KEYS, SETTINGS, SPLITS

N = 6
HARD = {s: np.array([False, False, False, True, True, True]) for s in SPLITS}


def probe(stepwise: float, q: float = 0.9, direct_rate: float = 0.5, guess: float = 0.0
          ) -> dict:
    """One probe: every problem takes the stepwise path with mass ``stepwise``, right with
    ``q``; the guess takes ``guess``, never right; the direct path the rest, right with
    ``direct_rate`` on the easy problems and never on the hard ones."""
    rows = {k: [] for k in KEYS}
    for hard in HARD["test"]:
        direct = 1 - stepwise - guess
        dr = 0.0 if hard else direct * direct_rate
        values = {"p": stepwise * q + dr, "se": 0.0, "direct_right": dr,
                  "direct_wrong": direct - dr, "stepwise_right": stepwise * q,
                  "stepwise_wrong": stepwise * (1 - q), "guess_right": 0.0,
                  "guess_wrong": guess, "corrected": 0.0, "corrected_right": 0.0,
                  "answer_entropy": 0.5, "token_entropy": 0.1}
        for k in KEYS:
            rows[k].append(values[k])
    return {s: {split: rows for split in SPLITS} for s in SETTINGS}


def run(stepwise: list[float], q: list[float] | None = None, guess: float = 0.0) -> list[dict]:
    q = q or [0.9] * len(stepwise)
    return [{"step": 10 * i, "probe": probe(s, r, guess=guess)}
            for i, (s, r) in enumerate(zip(stepwise, q))]


SHAPES = {  # the stepwise mass over 6 probes (right with 0.9 on every problem)
    "shrinks then expands": [0.05, 0.03, 0.02, 0.2, 0.7, 0.9],
    "expands at once": [0.05, 0.3, 0.6, 0.8, 0.9, 0.95],
    "stalls": [0.05, 0.03, 0.01, 0.01, 0.005, 0.004],
}


def tables(shape: str, seeds: int = 3, noise: float = 0.0, regime: str | None = None):
    """Synthetic runs of ``shape`` for GRPO and GRPO-N: (long, per-run stages)."""
    rng = np.random.default_rng(0)
    dynamics = {}
    for algo in ("grpo", "grpo_n"):
        for s in range(seeds):
            jitter = list(np.clip(np.array(SHAPES[shape]) * (1 + noise * rng.normal(size=6)),
                                  1e-4, 1))
            dynamics[regime or shape, algo, s] = run(jitter)
    long = chapter.with_passk(chapter.probes(dynamics), [1, 16])
    return long, chapter.stages(long, HARD, chapter.mid_curve(long, HARD))


def informs_all(long: pd.DataFrame) -> dict:
    ks = chapter.mid_curve(long, HARD)
    return {r: chapter.informs(chapter.base_rows(long, r), HARD["test"], ks[r]) for r in ks}


def test_the_mid_curve_k_is_where_the_base_is_closest_to_half():
    p = np.array([0.05, 0.01, 0.0])
    k = chapter.mid_curve(*_one_base(p))["base"]
    at = lambda k: 100 * (1 - (1 - p) ** k).mean()  # noqa: E731
    assert abs(at(k) - 50) <= min(abs(at(k - 1) - 50), abs(at(k + 1) - 50))
    assert chapter.mid_curve(*_one_base(np.array([0.9, 0.8, 0.95])))["base"] == 1  # above at k=1


def _one_base(p_hard: np.ndarray) -> tuple[pd.DataFrame, dict]:
    long = chapter.with_passk(chapter.probes({("base", "grpo", 0): run([0.05, 0.05])}), [1])
    hard_rows = (long["split"] == "test") & HARD["test"][long["problem"].to_numpy()]
    long.loc[hard_rows, "p"] = np.tile(p_hard, hard_rows.sum() // len(p_hard))
    return long, HARD


def test_crossover_fall_depth_gain_and_stall_per_run():
    _, runs = tables("shrinks then expands")
    assert (runs["crossover"] == 40).all()  # stepwise 0.7 > direct 0.3 first at step 40
    assert (runs["fall step"] == 20).all() and (runs["depth step"] == 20).all()
    assert np.allclose(runs["fall"], 1 - 0.02 / 0.05)
    k = runs["k"].iloc[0]
    passk = lambda s: 100 * (1 - (1 - 0.9 * s) ** k)  # noqa: E731
    assert np.allclose(runs["depth"], passk(0.02) - passk(0.05))
    assert np.allclose(runs["gain"], passk(0.9) - passk(0.05))
    assert np.allclose(runs["gain"], runs["path choice"] + runs["reliability"] + runs["rest"])
    assert np.allclose(runs["reliability"], 0) and not runs["stalled"].any()
    _, stall = tables("stalls")
    assert np.isinf(stall["crossover"]).all() and stall["stalled"].all()
    _, fast = tables("expands at once")
    assert (fast["crossover"] == 20).all() and (fast["depth"] > 0).all()


def test_the_gain_splits_into_path_choice_and_reliability():
    """Reliability alone moves (the path's share fixed): all of the gain is reliability's;
    the share alone moves: all of it is the path choice's; the three parts add up."""
    dynamics = {("r", "grpo", s): run([0.05, 0.05], q=[0.5, 0.9]) for s in range(2)}
    long = chapter.with_passk(chapter.probes(dynamics), [1])
    runs = chapter.stages(long, HARD, {"r": 16})
    assert np.allclose(runs["path choice"], 0) and (runs["reliability"] > 0).all()
    dynamics = {("r", "grpo", s): run([0.05, 0.2]) for s in range(2)}
    runs = chapter.stages(chapter.with_passk(chapter.probes(dynamics), [1]), HARD, {"r": 16})
    assert np.allclose(runs["reliability"], 0) and (runs["path choice"] > 0).all()


def test_a_seeds_deepest_point_is_chosen_by_the_others():
    curves = pd.DataFrame({0: [0.0, -1.0, -5.0, 0.0], 1: [0.0, -3.0, -1.0, 0.0],
                           2: [0.0, -3.0, -1.0, 0.0]}, index=[0, 10, 20, 30])
    loo = stats.leave_one_out(curves)
    assert loo.loc[0, "step"] == 10 and loo.loc[0, "value"] == -1.0  # not its own -5 at 20
    assert loo.loc[1, "step"] == 20 and loo.loc[1, "value"] == -1.0  # seeds 0 and 2: step 20
    assert np.isnan(stats.leave_one_out(curves[[0]]).loc[0, "step"])  # one seed: none to ask


def test_the_depth_reads_no_effect_in_noise_where_the_lowest_probe_would_not():
    """The null check: runs that never move, probed with the noise of the probe at prior
    0.002 (2.2 points on 15 probes), three seeds. Read at the leave-one-out step, shrinkage
    replicates in at most the 5 % an interval allows; the lowest probe of each seed (the old
    statistic) finds it in a quarter of the experiments (50 of 200 with this stream)."""
    rng = np.random.default_rng(1)
    loo_hits = min_hits = 0
    for _ in range(200):
        curves = pd.DataFrame(rng.normal(0, 2.2, size=(15, 3)), index=range(0, 150, 10))
        curves.iloc[0] = 0.0
        depth = stats.leave_one_out(curves)["value"].to_numpy()
        loo_hits += stats.one_sample(-depth, chapter.SHRINK_MARGIN).verdict == stats.REPLICATES
        lowest = curves.iloc[1:].min().to_numpy()
        min_hits += stats.one_sample(-lowest, chapter.SHRINK_MARGIN).verdict == stats.REPLICATES
    assert loo_hits <= 10 and min_hits >= 30, (loo_hits, min_hits)


@pytest.mark.parametrize("shape, expected", [
    ("shrinks then expands", stats.REPLICATES),
    ("expands at once", "expansion only"),
    ("stalls", "shrinkage only"),
])
def test_every_reading_of_the_two_stages_is_reachable(shape, expected):
    long, runs = tables(shape, noise=0.01)
    verdicts = displayed.regime_verdicts(runs, chapter.final_entropy(long), informs_all(long))
    assert verdicts.loc[shape, "GRPO: shrinkage, then expansion"] == expected, verdicts.T
    keeps = verdicts.loc[shape, "GRPO-N keeps the base's boundary"]
    assert keeps.startswith(stats.REPLICATES if shape == "expands at once" else stats.OPPOSITE)


def test_a_base_at_the_ceiling_cannot_inform_and_does_not_vote():
    long, runs = tables("shrinks then expands", noise=0.01)
    ceiling = {r: (False, "its Pass@1 on the rare-only problems is 100.0 %") for r in runs["regime"]}
    verdicts = displayed.regime_verdicts(runs, chapter.final_entropy(long), ceiling)
    assert verdicts.iloc[0]["GRPO: shrinkage, then expansion"].startswith(stats.CANNOT_INFORM)
    (row,) = sentences.claim_rows(runs, ceiling, {})
    assert [v for _, v in row["checks"]] == [stats.CANNOT_INFORM]
    from rlvr_dynamics import verdicts as v
    assert v.combine([stats.CANNOT_INFORM]) == stats.CANNOT_INFORM
    assert v.combine([stats.CANNOT_INFORM, stats.REPLICATES]) == stats.REPLICATES  # no vote


def test_informs_reads_the_base():
    long, _ = tables("shrinks then expands")
    base = chapter.base_rows(long, "shrinks then expands")
    assert chapter.informs(base, HARD["test"], 16) == (True, "")
    dead = base.assign(p=0.0, stepwise_right=0.0, stepwise_wrong=0.0)
    ok, why = chapter.informs(dead, HARD["test"], 16)
    assert not ok and "0.0 %" in why
    crossed = base.assign(stepwise_right=0.6, stepwise_wrong=0.1, direct_right=0.1,
                          direct_wrong=0.2)
    ok, why = chapter.informs(crossed, HARD["test"], 2)
    assert not ok and "more often than the direct one" in why


def test_one_seed_is_too_few():
    long, runs = tables("shrinks then expands", seeds=1)
    verdicts = displayed.regime_verdicts(runs, chapter.final_entropy(long), informs_all(long))
    assert verdicts.loc["shrinks then expands", "GRPO: shrinkage, then expansion"] == \
        stats.FEW_SEEDS


def test_two_stages_needs_the_order_and_a_crossover_in_every_seed():
    assert chapter.two_stages(stats.REPLICATES, stats.REPLICATES, False) == \
        "both, not in that order"
    assert chapter.two_stages(stats.UNDECIDED, stats.OPPOSITE, True) == "neither"
    _, runs = tables("shrinks then expands", noise=0.01)
    g = runs[runs["algorithm"] == "GRPO"].copy()
    assert chapter.stage_effects(g)[2]
    g.loc[g.index[0], "crossover"] = np.inf  # one seed never crossed: the order fails
    assert not chapter.stage_effects(g)[2]


def test_the_toy_reads_the_base_and_the_mix():
    base = pd.DataFrame(probe(0.05, guess=0.45)["full"]["test"])
    pi0, r = chapter.toy_inputs(base, HARD["test"], N, 0.5)
    assert np.allclose(pi0, [0.5, 0.05, 0.45])
    assert np.isclose(r[0], 0.5 * 0.5) and np.isclose(r[1], 0.9) and r[2] == 0.0
    _, r0 = chapter.toy_inputs(base, HARD["test"], N, 0.0)
    assert np.isclose(r0[0], 0.5)  # no rare-only problem: the direct path's own rate
    # problems probed beyond the first `regular` do not enter pi0 or r1
    extra = pd.concat([base, base.iloc[3:].assign(stepwise_right=0.0, stepwise_wrong=0.5,
                                                  direct_right=0.0, direct_wrong=0.05)],
                      ignore_index=True)
    pi0x, rx = chapter.toy_inputs(extra, np.r_[HARD["test"], [True] * 3], N, 0.5)
    assert np.allclose(pi0x, pi0) and np.isclose(rx[0], r[0]) and rx[1] < r[1]


def test_the_toy_prediction_is_later_for_a_rarer_path():
    D = pd.Series({"lr": 0.1, "optimizer": "adam", "tau": 1.0})
    common = chapter.toy_prediction([0.9, 0.05, 0.05], [0.5, 1.0, 0.0], 8, D, 400, 200)
    rare = chapter.toy_prediction([0.948, 0.002, 0.05], [0.5, 1.0, 0.0], 8, D, 400, 200)
    assert common["toy expansion"] < rare["toy expansion"]
    assert np.isnan(chapter.toy_prediction([0.4, 0.5, 0.1], [0.5, 1.0, 0.0], 8, D, 10,
                                           10)["toy expansion"])
    # the reviewers' case, a rare path no better than the explored one: predicted, never
    worse = chapter.toy_prediction([0.9, 0.05, 0.05], [0.9, 0.5, 0.0], 8, D, 400, 200)
    assert worse["toy expansion"] == np.inf and worse["toy expanded"] < 0.5


def test_each_algorithm_has_its_toy_update():
    assert chapter.toy_update("GRPO") == ("GRPO", {})
    assert chapter.toy_update("GSPO-N") == ("GRPO-N", {"negative_only": True})
    assert chapter.toy_update("NSR") == ("NSR", {"reinforce": 0.0})
    assert chapter.toy_update("W-REINFORCE") == ("W-REINFORCE", {"reinforce": 0.1})
    with pytest.raises(ValueError, match="no algorithm is labelled 'PPO'"):
        chapter.toy_update("PPO")


def test_the_toy_predicts_both_updates_under_each_optimizer_running_each_setting_once(
        monkeypatch):
    D = toy_dynamics.Params.parse({})
    assert D.optimizer == "adam"  # the chapter's own setting is the "Adam" one: run once
    predicted = chapter.toy_predictions([0.9, 0.05, 0.05], [0.5, 1.0, 0.0], 8, D, 300, 50)
    assert set(predicted) == {chapter.OWN, "Adam", "SGD"}
    assert all(set(p) == {"GRPO", "GRPO-N"} and all(v["toy expansion"] > 0 for v in p.values())
               for p in predicted.values())
    assert predicted[chapter.OWN] == predicted["Adam"] != predicted["SGD"]
    four = chapter.toy_predictions([0.9, 0.05, 0.05], [0.5, 1.0, 0.0], 8, D, 300, 50,
                                   ["GRPO", "GSPO", "NSR", "W-REINFORCE"])
    assert set(four["SGD"]) == {"GRPO", "NSR", "W-REINFORCE"}  # GSPO's toy update is GRPO's
    assert four["SGD"]["GRPO"] == predicted["SGD"]["GRPO"] != four["SGD"]["NSR"]
    calls = []
    monkeypatch.setattr(toy_mapping, "toy_prediction",
                        lambda *a, **kw: calls.append(a[3].optimizer) or {"toy expansion": 1.0})
    chapter.toy_predictions([0.9, 0.05, 0.05], [0.5, 1.0, 0.0], 8, D, 3, 2)
    assert sorted(calls) == ["adam", "adam", "sgd", "sgd"]
    calls.clear()
    own_sgd = D.model_copy(update={"optimizer": "sgd", "lr": D.sgd_lr / 2})
    chapter.toy_predictions([0.9, 0.05, 0.05], [0.5, 1.0, 0.0], 8, own_sgd, 3, 2)
    assert sorted(calls) == ["adam", "adam", "sgd", "sgd", "sgd", "sgd"]  # a setting of its own


def test_the_toy_beside_each_regime_reads_its_registered_prediction():
    record = {"inputs": {"pi0": [0.9, 0.05, 0.05], "r": [0.25, 1.0, 0.0], "G": 8},
              "predictions": {o: {"GRPO": {"toy expansion": 20.0, "toy dip": -0.5},
                                  "GRPO-N": {"toy expansion": 30.0, "toy dip": 0.0}}
                              for o in (chapter.OWN, "Adam", "SGD")}}
    rows, times = chapter.toy_side({"r": record}, ["GRPO", "GSPO-N"])
    assert rows["algorithm"].tolist() == ["GRPO", "GSPO-N"]
    assert rows["toy expansion"].tolist() == [20.0, 30.0]  # GSPO-N: the negative-only update
    assert rows["pi0(a2)"].iloc[0] == 0.05 and rows["pi0(a3)"].iloc[0] == 0.05
    assert times == {"r": {"Adam": {"GRPO": 20.0, "GRPO-N": 30.0},
                           "SGD": {"GRPO": 20.0, "GRPO-N": 30.0}}}


def test_the_order_of_two_times_to_expansion():
    assert chapter.order(50.0, 20.0, 10) == "later" and chapter.order(20.0, 50.0, 10) == "earlier"
    assert chapter.order(25.0, 20.0, 10) == "same" and chapter.order(np.inf, 20.0, 10) == "later"
    assert chapter.order(np.inf, np.inf, 10) == "neither expands"
    assert chapter.order(np.nan, 20.0, 10) == "outside the toy"


def test_the_lm_follows_the_optimizer_whose_ordering_it_shares():
    rows = [{"regime": regime, "algorithm": algo, "seed": s, "crossover": t}
            for regime, times in (("a", {"GRPO": 20.0, "GRPO-N": 50.0}),
                                  ("b", {"GRPO": np.inf, "GRPO-N": np.inf}))
            for algo, t in times.items() for s in range(3)]
    toy_times = {"a": {"Adam": {"GRPO": 30.0, "GRPO-N": 20.0},
                       "SGD": {"GRPO": 30.0, "GRPO-N": 60.0}},
                 "b": {"Adam": {"GRPO": np.inf, "GRPO-N": np.inf},
                       "SGD": {"GRPO": 30.0, "GRPO-N": 31.0}}}
    orders = chapter.orderings(pd.DataFrame(rows), toy_times, 10)
    assert orders.loc["a", "LM"] == "later" and orders.loc["a", "LM times"] == (50.0, 20.0)
    assert orders.loc["a", "toy, Adam"] == "earlier"
    assert orders["follows"].tolist() == [("SGD",), ("Adam",)]
    shown = displayed.ordering_table(orders)
    assert shown.loc["a", "LM: GRPO-N vs GRPO"] == "later (50 vs 20)"
    assert shown.loc["b", "toy, Adam"] == "neither expands (never vs never)"
    assert shown["the LM follows"].tolist() == ["SGD", "Adam"]
    assert sentences.ordering_text(orders) == (
        "GRPO-N's time to crossover against GRPO's, the LM's ordering matches the toy's under "
        "Adam in 1 of 2, under SGD in 1 of 2 regimes.")
    toy_times["a"]["SGD"]["GRPO-N"] = 10.0  # now neither optimizer's ordering is the LM's
    orders = chapter.orderings(pd.DataFrame(rows), toy_times, 10)
    assert orders.loc["a", "follows"] == ()
    assert displayed.ordering_table(orders).loc["a", "the LM follows"] == "none"
    assert sentences.ordering_text(orders).startswith(
        "GRPO-N's time to crossover against GRPO's, the LM's ordering matches the toy's under "
        "Adam in 1 of 2, under SGD in 0 of 2")
    toy_times["b"] = {o: {"GRPO": np.nan, "GRPO-N": np.nan} for o in ("Adam", "SGD")}
    orders = chapter.orderings(pd.DataFrame(rows), toy_times, 10)
    assert orders.loc["b", "follows"] == ()  # a base outside the toy's scenario follows none
    assert displayed.ordering_table(orders).loc["b", "toy, SGD"] == "outside the toy"
    assert sentences.ordering_text(orders).endswith(
        "under SGD in 0 of 2 regimes (1 outside the toy's scenario).")


def test_the_knobs_reach_every_run():
    P = chapter.Params.parse({"regimes": {"a": {"prior": 0.01, "guess": 0.3, "hard_share": 0.0,
                                                "base_seed": 1}},
                              "controls": {}, "seeds": [0], "steps": 30, "probe_every": 5,
                              "probe_early_every": 1, "probe_early_until": 4, "probe_hard": 7,
                              "stop_after_crossover": 3})
    (cfg,) = [c for (r, a, s), c in P.runs().items() if a == "grpo"]
    assert (cfg.path_prior, cfg.path_guess, cfg.hard_share, cfg.probe_every, cfg.steps) == \
        (0.01, 0.3, 0.0, 5, 30)
    assert (cfg.probe_early_every, cfg.probe_early_until, cfg.probe_hard,
            cfg.stop_after_crossover, cfg.probe_paper) == (1, 4, 7, 3, False)
    assert cfg.policy["guess"] == 0.3 and cfg.model.seed == 1
    assert cfg.model.author == sums.Author()
    with pytest.raises(Exception, match="probe_every=50 must be <= steps=30"):
        chapter.Params.parse({"steps": 30, "probe_every": 50})


def test_group_size_and_algorithms_per_regime_reach_the_runs():
    """A regime's G changes the group and keeps the rollouts per step; its algorithms replace
    the chapter's; a G that does not divide the rollouts, or an unknown algorithm, is named."""
    P = chapter.Params.parse({"regimes": {"a": {"prior": 0.02, "guess": 0.4, "G": 16,
                                                "algorithms": ["nsr", "w_reinforce"]},
                                          "b": {"prior": 0.02, "guess": 0.4}},
                              "controls": {}, "seeds": [0], "steps": 30})
    runs = P.runs()
    assert sorted(a for r, a, _ in runs if r == "a") == ["nsr", "w_reinforce"]
    assert sorted(a for r, a, _ in runs if r == "b") == ["grpo", "grpo_n"]
    a, b = runs["a", "nsr", 0], runs["b", "grpo", 0]
    assert (a.num_generations, b.num_generations) == (16, 8)
    assert a.generation_batch == b.generation_batch
    with pytest.raises(Exception, match=r"(?s)regimes\['a'\]: .*num_generations=5"):
        chapter.Params.parse({"regimes": {"a": {"prior": 0.02, "G": 5}}, "controls": {}})
    with pytest.raises(Exception, match=r"regimes\['a'\].algorithms has 'ppo'"):
        chapter.Params.parse({"regimes": {"a": {"prior": 0.02, "algorithms": ["ppo"]}},
                              "controls": {}})


@pytest.mark.parametrize("regimes, controls, match", [
    ({"a": {"prior": 0.01, "guess": 0.5}}, {}, None),
    ({"a": {"prior": 0.6, "guess": 0.5}}, {}, "prior \\+ guess < 1"),
    ({"a": {"guess": 0.5}}, {}, "needs a prior"),
    ({"a": {"prior": 0.01, "guess": 0.5}, "b": {"prior": 0.01}}, {"a": "c"}, "both must be"),
    ({"a": {"prior": 0.01, "guess": 0.5}, "b": {"prior": 0.02}}, {"a": "b"}, "without its guess"),
    ({"a": {"prior": 0.01, "guess": 0.5}, "b": {"prior": 0.01}}, {"b": "a"}, "without its guess"),
])
def test_the_scenario_is_checked_before_any_run(regimes, controls, match):
    kw = {"regimes": regimes, "controls": controls, "seeds": [0], "steps": 30}
    if match is None:
        chapter.Params.parse(kw)
    else:
        with pytest.raises(Exception, match=match):
            chapter.Params.parse(kw)


def test_the_findings_follow_the_table():
    """Four findings, each counted from the table and reaching its other outcome when the
    table changes: the takeover (which cells crossed, the first), the dip on the way (only
    cells whose mean falls beyond the margin), the end (above, below, the stalls) and the
    toy's order (the pairs in ``shown.order_table``)."""
    rows = []
    for regime, t, toy_t in (("common", [5.0, 6.0, 7.0], 10.0), ("rare", [40.0, np.inf, 50.0], 80.0)):
        for algo in ("GRPO", "GRPO-N"):
            for s, x in enumerate(t):
                rows.append({"regime": regime, "algorithm": algo, "seed": s, "crossover": x,
                             "depth": -3.0 * s, "gain": 1.0 * s, "stalled": np.isinf(x),
                             "pi0(a2)": 0.05, "k": 64, "toy expansion": toy_t, "noise": 1.5})
    table = pd.DataFrame(rows)
    text = sentences.findings_text(table, 100, 10)
    assert len(text.splitlines()) == 4 and all(l.startswith("- **") for l in text.splitlines())
    assert ("The stepwise path overtook the direct one in the median run of 4 of 4 cells within "
            "100 steps, first in common, GRPO (step 6); no seed crossed in 0: none.") in text
    assert ("Pass@64 on the rare-path-only problems fell more than 2 points below the base (mean "
            "over seeds) in 4 of 4 cells: common, GRPO (-3.0)") in text
    assert "above the base in 0 cells and below it in 0; 2 runs stalled (rare, GRPO; rare, GRPO-N)" in text
    assert "the LM orders the same way: GRPO 1 of 1; GRPO-N 1 of 1" in text
    shallow = table.assign(depth=-1.0, gain=-5.0, crossover=np.inf, stalled=False)
    text = sentences.findings_text(shallow, 100, 10)
    assert "in the median run of 0 of 4 cells within 100 steps; no seed crossed in 4:" in text
    assert "in 0 of 4 cells: none." in text and "below it in 4 (common, GRPO (-5.0);" in text
    assert "0 runs stalled." in text
    table.loc[table["regime"] == "rare", "toy expansion"] = 1.0  # the toy says: rare first
    assert "GRPO 0 of 1" in sentences.findings_text(table, 100, 10)
    pairs = displayed.order_table(table, 10)
    assert pairs[["the toy: first", "then", "the LM"]].values.tolist() == [
        ["rare", "common", displayed.REVERSED]] * 2
    table.loc[table["regime"] == "rare", "toy expansion"] = 10.5  # within 10 %: not apart
    assert "GRPO 0 of 0" in sentences.findings_text(table, 100, 10)
    assert displayed.order_table(table, 10).empty
    table.loc[table["regime"] == "rare", "toy expansion"] = 80.0  # as the LM: no exception
    assert displayed.order_table(table, 10).empty


def test_the_order_of_regimes_counts_ties_and_never():
    lm = pd.Series({"a": 20.0, "b": 25.0, "c": np.inf, "d": 80.0})
    toy_t = pd.Series({"a": 19.0, "b": 30.0, "c": 100.0, "d": np.nan})  # d: outside the toy
    agree, pairs, other = chapter.order_agreement(lm, toy_t, 10)
    # a-b: toy apart, LM within one probe (tie); a-c, b-c: the toy and the LM agree
    assert (agree, pairs) == (2, 3) and other == [("a", "b", True)]
    lm["c"] = 5.0  # now the LM puts c first: reversed against the toy, twice
    assert chapter.order_agreement(lm, toy_t, 10) == (0, 3, [("a", "b", True), ("a", "c", False),
                                                             ("b", "c", False)])


@pytest.mark.parametrize("shape, expected", [("shrinks then expands", stats.REPLICATES),
                                             ("expands at once", stats.OPPOSITE),
                                             ("stalls", stats.OPPOSITE)])
def test_the_recorded_claim_takes_every_verdict(shape, expected):
    long, runs = tables(shape, noise=0.01)
    (row,) = sentences.claim_rows(runs, informs_all(long), {})
    assert row["claim"] == "lm_two_stages" and [v for _, v in row["checks"]] == [expected]
    assert chapter.stage_check(stats.REPLICATES, stats.REPLICATES, False) == stats.OPPOSITE
    assert chapter.stage_check(stats.UNDECIDED, stats.REPLICATES, True) == stats.UNDECIDED


def test_the_probe_noise_follows_the_standard_error_of_p():
    dynamics = {("r", "grpo", 0): run([0.05, 0.05])}
    for r in dynamics["r", "grpo", 0]:
        r["probe"]["full"]["test"]["p"] = [0.01] * N
        r["probe"]["full"]["test"]["se"] = [0.002] * N
    long = chapter.with_passk(chapter.probes(dynamics), [256])
    (noise,) = chapter.stages(long, HARD, {"r": 256})["noise"]
    one = 50 * (0.992 ** 256 - 0.988 ** 256)  # Pass@256 at p - se and p + se, halved
    assert np.isclose(noise, one / np.sqrt(3))  # the mean of 3 hard problems
    assert abs(one - 100 * 256 * 0.99 ** 255 * 0.002) < 0.1 * one  # near the delta method
    for r in dynamics["r", "grpo", 0]:
        r["probe"]["full"]["test"]["se"] = [0.5] * N  # a useless probe: bounded, not huge
    long = chapter.with_passk(chapter.probes(dynamics), [256])
    assert chapter.stages(long, HARD, {"r": 256})["noise"].iloc[0] <= 50 / np.sqrt(3) + 1e-9


def test_the_summary_counts_the_seeds_and_shows_numbers_for_people():
    """Per regime and algorithm: seeds crossed over out of all and their steps; on the page,
    floating-point residue (a standard error of 1.9e-123, a toy dip of -1.1e-16) reads 0 and a
    toy that never crosses reads ∞, while a real number keeps its digits."""
    _, runs = tables("shrinks then expands")
    table = runs.assign(**{"pi0(a2)": 0.05, "pi0(a3)": 0.0001, "r(a1)": 0.25, "r(a2)": 1.0,
                           "toy expansion": np.inf, "toy dip": -1.110e-16})
    table.loc[table["algorithm"] == "GRPO", "noise"] = 1.887e-123
    table.loc[(table["algorithm"] == "GRPO-N") & (table["seed"] == 0), "crossover"] = np.inf
    summary = chapter.summary(table)
    grpo, grpo_n = summary.loc["shrinks then expands", "GRPO"], summary.loc[
        "shrinks then expands", "GRPO-N"]
    assert (grpo["crossed"], grpo["seeds"], grpo_n["crossed"]) == (3, 3, 2)
    assert grpo_n["step of crossover"] == (np.inf, 40.0, 40.0)
    shown = displayed.summary_table(summary).to_string(delimiter="|",
                                                       sparse_index=False).splitlines()
    header = shown[0].split("|")
    cells = {row.split("|")[1]: dict(zip(header[2:], row.split("|")[2:])) for row in shown[2:]}
    label = {long: short for long, (short, _) in displayed.SUMMARY_LEGEND.items()}
    assert cells["GRPO"][label["probe's standard error (points)"]] == "0"
    assert cells["GRPO"][label["toy: dip of π(a2)"]] == "0"
    assert cells["GRPO"][label["toy: crossover"]] == "∞"
    assert cells["GRPO-N"][label["crossed over (seeds)"]] == "2/3"
    assert cells["GRPO-N"][label["step of crossover"]] == "∞, 40, 40"
    assert cells["GRPO"][label["depth (mean)"]] == f"{grpo['depth (mean)']:.3g}"
    assert "<b>se</b>: the probe's own standard error, points" in \
        displayed.summary_table(summary).to_html()  # the legend under the table
    assert "e-" not in shown[2] + shown[3]


# --- the paper's scenario ------------------------------------------------------------------------

SCENARIO = {  # stepwise mass over 6 probes in the arm (with a guess) and in the control
    "dips, then grows": ([0.05, 0.03, 0.02, 0.1, 0.5, 0.9], [0.05, 0.05, 0.06, 0.2, 0.6, 0.9]),
    "no dip": ([0.05, 0.08, 0.12, 0.2, 0.5, 0.9], [0.05, 0.05, 0.06, 0.2, 0.6, 0.9]),
    "dips in both": ([0.05, 0.03, 0.02, 0.1, 0.5, 0.9], [0.05, 0.03, 0.02, 0.1, 0.5, 0.9]),
    "dips, never grows": ([0.05, 0.03, 0.02, 0.02, 0.02, 0.02], [0.05, 0.05, 0.06, 0.2, 0.6, 0.9]),
    "dips, back to the start": ([0.05, 0.03, 0.02, 0.03, 0.04, 0.05],
                                [0.05, 0.05, 0.06, 0.2, 0.6, 0.9]),
    "dips, then mixed": ([0.05, 0.03, 0.02, 0.1, 0.5, 0.9], [0.05, 0.05, 0.06, 0.2, 0.6, 0.9]),
}


def scenario_runs(shape: str, seeds: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(2)
    arm, control = SCENARIO[shape]
    dynamics = {}
    for s in range(seeds):
        a = np.clip(np.array(arm) * (1 + 0.02 * rng.normal(size=6)), 1e-4, 1)
        if shape == "dips, then mixed" and s == 0:
            a[-1] = a[0]  # one seed ends where it began
        for algo in ("grpo", "grpo_n"):
            dynamics["arm", algo, s] = run(list(a), guess=0.45)
            dynamics["control", algo, s] = run(list(np.array(control) * (1 + 0.02 * rng.normal(size=6))))
    long = chapter.with_passk(chapter.probes(dynamics), [1])
    return chapter.stages(long, HARD, {"arm": 16, "control": 16})


@pytest.mark.parametrize("shape, checks, expected", [
    ("dips, then grows", (stats.REPLICATES, stats.REPLICATES, stats.REPLICATES), stats.REPLICATES),
    ("no dip", (stats.OPPOSITE, stats.OPPOSITE, stats.REPLICATES), stats.OPPOSITE),
    ("dips in both", (stats.REPLICATES, stats.NO_EFFECT, stats.REPLICATES), stats.NO_EFFECT),
    ("dips, never grows", (stats.REPLICATES, stats.REPLICATES, stats.OPPOSITE), stats.OPPOSITE),
    ("dips, back to the start", (stats.REPLICATES, stats.REPLICATES, stats.NO_EFFECT),
     stats.NO_EFFECT),
    ("dips, then mixed", (stats.REPLICATES, stats.REPLICATES, stats.UNDECIDED), stats.UNDECIDED),
])
def test_the_scenario_rules_reach_every_verdict(shape, checks, expected):
    runs = scenario_runs(shape)
    grpo = runs["algorithm"] == "GRPO"
    v = chapter.verdict(runs[(runs["regime"] == "arm") & grpo],
                        runs[(runs["regime"] == "control") & grpo])
    assert tuple(v["checks"].values()) == checks and v["verdict"] == expected, v
    blind = chapter.verdict(runs[runs["regime"] == "arm"], runs[runs["regime"] == "control"],
                            informative=False)
    assert blind["verdict"] == stats.CANNOT_INFORM
    informs = {"arm": (True, ""), "control": (True, "")}
    row, large_k = sentences.claim_rows(runs, informs, {"arm": "control"})
    assert large_k["claim"] == "large_k" and len(large_k["checks"]) == 3
    assert [v for _, v in row["checks"]] == [expected]  # GRPO decides, GRPO-N beside it
    assert len(row["also"]) == 1 and row["also"][0][0].startswith("arm against control, GRPO-N")
    shown = displayed.scenario_verdict_table(sentences.scenario_verdicts(runs, {"arm": "control"},
                                                                         informs))
    assert shown.loc[("arm", "GRPO"), "verdict"] == expected


def test_stage_two_needs_every_seed():
    assert chapter.stage2(np.array([5.0, 6.0, 7.0])) == stats.REPLICATES
    assert chapter.stage2(np.array([-5.0, -6.0, -7.0])) == stats.OPPOSITE
    assert chapter.stage2(np.array([0.5, -0.5, 1.0])) == stats.NO_EFFECT
    assert chapter.stage2(np.array([5.0, 0.0, 7.0])) == stats.UNDECIDED
    assert chapter.stage2(np.array([5.0])) == stats.FEW_SEEDS


def test_the_scenario_in_words_follows_its_numbers():
    runs = scenario_runs("dips, then grows")
    pred = {"toy expansion": 200.0, "toy dip": -0.6, "toy dip step": 40.0, "toy expanded": 1.0}
    record = {"registered": "2026-12-05T08:00:00+00:00",
              "inputs": {"pi0": [0.5, 0.05, 0.45], "r": [0.3, 0.9, 0.01], "G": 8},
              "predictions": {o: {"GRPO": pred, "GRPO-N": pred} for o in ("Adam", "SGD")}}
    registered = {"arm": record, "control": record}
    informs = {"arm": (True, ""), "control": (True, "")}
    scenario = sentences.scenario_verdicts(runs, {"arm": "control"}, informs)
    text = sentences.scenario_text(runs, scenario, registered, {"arm": "control"})
    g = runs[(runs["regime"] == "arm") & (runs["algorithm"] == "GRPO")]
    assert f"fell by {scenario['arm', 'GRPO']['fall'].text('{:.2f}')}" in text
    assert "predicted a fall of π(a2) by 60 % under Adam (crossover 200)" in text
    assert f"gained {g['gain'].mean():+.1f} points" in text and "**replicates**" in text
    table = displayed.against_prediction(runs, registered, {"arm": "control"})
    assert table.loc[("arm", "GRPO"), ("Adam", "dip as the LM's")] == "yes"
    assert table.loc[("control", "GRPO"), ("Adam", "dip as the LM's")] == "no"
    assert list(table.columns.levels[0]) == ["Adam", "LM", "SGD"]  # two header rows
    shown = displayed.prediction_table(registered)
    assert shown.loc[("arm", "SGD, GRPO"), "dip of π(a2)"] == "-60 %"
    inputs = displayed.prediction_inputs(registered)
    assert inputs.loc["arm", "π0 (direct / stepwise / guess)"] == "0.5 / 0.05 / 0.45"
    assert inputs.loc["arm", "registered (UTC)"] == "2026-12-05T08:00:00"


def test_the_intro_says_whether_the_runs_can_say_never():
    pred = {"GRPO": {"toy expansion": 100.0}, "GRPO-N": {"toy expansion": np.inf}}
    registered = {"arm": {"predictions": {"Adam": pred}}}
    ks = {"arm": 40, "control": 12}
    text = sentences.scenario_intro({"arm": "control"}, ks, registered, 450)
    assert "read at k = 40" in text and "mid-curve k is 12" in text
    assert "4.5 times the toy's crossover under Adam for GRPO (100)." in text
    short = sentences.scenario_intro({"arm": "control"}, ks, registered, 250)
    assert "2.5 times" in short and "not to say never" in short
    assert "runs no arm" in sentences.scenario_intro({}, ks, registered, 450)


def test_the_verdict_rules_and_the_ordering_state_their_constants():
    """The rules of the verdicts per regime and of the ordering against the toy, stated with
    the values of the constants that decide them."""
    rules = sentences.verdict_rules()
    assert f"a {100 * stats.CONFIDENCE:.0f} % Student-t interval" in rules
    assert f"({chapter.SHRINK_MARGIN:g} points of Pass@k, `SHRINK_MARGIN`;" in rules
    assert f"{chapter.ENTROPY_MARGIN:g} nats, `ENTROPY_MARGIN`" in rules
    assert f"outside {stats.BOUNDS[0]:g}-{stats.BOUNDS[1]:g} %" in rules
    assert (f"the toy's within {100 * chapter.TOY_SAME:.0f} %."
            in sentences.same_ordering_text())


def test_predicted_against_measured_crossovers_per_run():
    """Each run beside the toy's registered crossover for its update; a run that did not cross
    is censored at its last probe; the sentence says which optimizer's toy lies closer, and
    counts the runs that had not crossed although the toy had."""
    from rlvr_dynamics.chapters.regimes import sentences as rs
    table = pd.DataFrame({"regime": ["arm", "arm", "arm", "control"],
                          "algorithm": ["GRPO", "GRPO", "GRPO-N", "GRPO"], "seed": [0, 1, 0, 0],
                          "crossover": [100.0, float("inf"), 50.0, 20.0],
                          "last step": [120.0, 300.0, 70.0, 40.0]})
    registered = {"arm": {"predictions": {"Adam": {"GRPO": {"toy expansion": 100.0},
                                                   "GRPO-N": {"toy expansion": 25.0}},
                                          "SGD": {"GRPO": {"toy expansion": 400.0},
                                                  "GRPO-N": {"toy expansion": float("inf")}}}},
                  "control": {"predictions": {"Adam": {"GRPO": {"toy expansion": 20.0}},
                                              "SGD": {"GRPO": {"toy expansion": 80.0}}}}}
    adam = chapter.predicted_vs_measured(table, registered, "Adam")
    assert list(adam["predicted"]) == [100.0, 100.0, 25.0, 20.0]
    assert list(adam["measured"]) == [100.0, 300.0, 50.0, 20.0]  # censored at the last probe
    assert list(adam["censored"]) == [False, True, False, False]
    assert adam["measured / predicted"].tolist()[:1] == [1.0]
    assert np.isnan(adam["measured / predicted"].iloc[1])
    sgd = chapter.predicted_vs_measured(table, registered, "SGD")
    assert np.isnan(sgd["measured / predicted"].iloc[2])  # the toy never crossed
    text = rs.predicted_text({"Adam": adam, "SGD": sgd})
    assert "under Adam: measured over predicted 1.00 (median of 3 runs that crossed" in text
    assert "1 of 4 runs had not crossed by their last probe although the toy had" in text
    assert text.endswith("closer to the toy under Adam (the smaller median distance on a log "
                         "scale).")
    fig = figures.plot_predicted({"Adam": adam, "SGD": sgd}, ["arm"])
    assert len(fig.axes) == 2
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert labels == ["GRPO, three paths", "GRPO, three paths, not crossed",
                      "GRPO-N, three paths", "GRPO, two paths"]  # by the regime, not its name
    P = chapter.Params.parse(resolve("smoke", "regimes", {}))
    assert P.three() == ["three paths", "G 8, NSR"]


def test_each_cell_reads_agrees_slower_or_faster_than_its_registration():
    """log(measured / predicted) over seeds against log 2: within it agrees, beyond it slower
    or faster, too spread inconclusive; a toy that never crosses agrees only with runs that
    never cross, and a run that did not cross enters with its last probe."""
    from rlvr_dynamics.chapters.regimes import crossover

    def cell(name, predicted, measured, censored=(False, False, False)):
        return pd.DataFrame({"regime": name, "algorithm": "GRPO", "seed": [0, 1, 2],
                             "predicted": predicted, "measured": measured,
                             "censored": list(censored)})
    pairs = pd.concat([cell("agree", 100, [90, 110, 100]), cell("slow", 100, [400, 380, 420]),
                       cell("fast", 100, [20, 25, 22]), cell("wide", 100, [20, 400, 100]),
                       cell("never", np.inf, [300, 300, 300], (True,) * 3),
                       cell("crossed anyway", np.inf, [50, 300, 300], (False, True, True)),
                       cell("lower bound", 100, [300, 320, 300], (True, True, True)),
                       cell("too short", 100, [50, 50, 50], (True, True, True)),
                       cell("one too short", 100, [90, 110, 100], (False, True, False))])
    got = crossover.prediction_checks(pairs).set_index("regime")["reading"]
    assert got.to_dict() == {"agree": crossover.AGREES, "slow": crossover.SLOWER,
                             "fast": crossover.FASTER, "wide": stats.UNDECIDED,
                             "never": crossover.AGREES, "crossed anyway": crossover.FASTER,
                             "lower bound": crossover.SLOWER,
                             "too short": stats.CANNOT_INFORM,
                             "one too short": stats.CANNOT_INFORM}
    assert crossover.prediction_checks(pairs).set_index("regime").loc["lower bound",
                                                                      "not crossed"] == 3


def test_two_algorithms_are_compared_on_the_regimes_both_ran():
    from rlvr_dynamics.chapters.regimes import crossover

    def rows(regime, algo, crossovers, gains, last=300.0):
        return pd.DataFrame({"regime": regime, "algorithm": algo, "crossover": crossovers,
                             "last step": last, "gain": gains,
                             "end": 50 + np.asarray(gains)})  # mid-range: the gains can show
    table = pd.concat([rows("r", "NSR", [20.0, 22, 25], [50.0, 49, 50]),
                       rows("r", "GRPO-N", [60.0, 55, np.inf], [20.0, 25, 10], [80, 80, 65]),
                       rows("only GRPO-N", "GRPO-N", [60.0, 55, 50], [1.0, 2, 3])])
    t = crossover.compare(table, "NSR", "GRPO-N")
    assert list(t["regime"].unique()) == ["r"]
    log_t, gain = t.iloc[0], t.iloc[1]
    assert log_t["estimate"] < 0 and log_t["verdict"] == stats.OPPOSITE  # NSR earlier
    assert log_t["not crossed"] == "0 / 1"
    assert gain["verdict"] == stats.REPLICATES and gain["estimate"] > 0
    same = crossover.compare(pd.concat([rows("r", "NSR", [50.0, 52, 55], [0.0, 0.1, 0]),
                                        rows("r", "GRPO-N", [51.0, 50, 56], [0.1, 0, 0])]),
                             "NSR", "GRPO-N")
    assert set(same["verdict"]) == {stats.NO_EFFECT}
    never = crossover.compare(pd.concat([rows("r", "NSR", [np.inf] * 3, [0.0, 0.1, 0], 120),
                                         rows("r", "GRPO-N", [np.inf] * 3, [0.1, 0, 0], 120)]),
                              "NSR", "GRPO-N")
    assert never["verdict"].tolist() == [stats.CANNOT_INFORM, stats.NO_EFFECT]
    V = crossover.censored_verdict
    assert V(stats.REPLICATES, True, False) == stats.REPLICATES  # later, from a lower bound
    assert V(stats.OPPOSITE, True, False) == stats.CANNOT_INFORM
    assert V(stats.OPPOSITE, False, True) == stats.OPPOSITE      # earlier, from an upper bound
    assert V(stats.NO_EFFECT, False, True) == stats.CANNOT_INFORM
    assert V(stats.NO_EFFECT, False, False) == stats.NO_EFFECT


def test_the_cell_checks_and_comparisons_in_words_follow_their_numbers():
    from rlvr_dynamics.chapters.regimes import crossover

    pairs = pd.DataFrame({"regime": "r", "algorithm": "GRPO", "seed": [0, 1, 2],
                          "predicted": 100.0, "measured": [90.0, 110, 100],
                          "censored": False})
    checks = {"Adam": crossover.prediction_checks(pairs),
              "SGD": crossover.prediction_checks(pairs.assign(predicted=10.0))}
    table = displayed.prediction_check_table(checks)
    assert table.loc[("r", "GRPO"), ("Adam", "reading")] == crossover.AGREES
    assert table.loc[("r", "GRPO"), ("SGD", "reading")] == crossover.SLOWER
    assert table.loc[("r", "GRPO"), ("Adam", "LM / toy")].startswith("1 [")
    assert table.loc[("r", "GRPO"), ("LM", "crossover")] == "90, 110, 100"
    assert table.loc[("r", "GRPO"), ("", "not crossed")] == 0
    text = sentences.prediction_check_text(checks)
    assert "under Adam, of 1 cells: 1 agrees" in text and "1 slower than the toy" in text
    runs = pd.DataFrame({"regime": "r", "algorithm": ["NSR"] * 3 + ["GRPO-N"] * 3,
                         "crossover": [20.0, 22, 25, 60, 55, 50], "last step": 300.0,
                         "gain": [50.0, 49, 50, 20, 25, 10],
                         "end": [99.0, 98, 99, 70, 75, 60]})
    shown = displayed.comparison_table(crossover.comparisons(runs))
    assert list(shown.index.get_level_values("comparison").unique()) == ["NSR - GRPO-N"]
    assert shown["value"].iloc[1].startswith("+31.3 [")  # 49.67 - 18.33
    assert shown["verdict"].iloc[1] == stats.REPLICATES
    ceiling = runs.assign(end=99.5, gain=50.0)  # both end at the ceiling: no gap can show
    assert crossover.comparisons(ceiling)["verdict"].iloc[1] == stats.CANNOT_INFORM
    assert displayed.comparison_table(crossover.comparisons(runs[runs["algorithm"] == "NSR"])
                                      ).empty


def test_regimes_set_against_each_other_read_a_direction_and_score_each_registration():
    """``contrasts``: the LM's direction from its crossovers over seeds (later, the same,
    earlier; a run that did not cross leaves only "later" to the first regime), each
    registered prediction's direction from its two times, and the agreement counted only
    where the LM decided; a contrast naming an unknown regime is refused by name."""
    from rlvr_dynamics.chapters.regimes import crossover

    def runs(first: list[float]) -> pd.DataFrame:
        return pd.DataFrame({"regime": ["a"] * 3 + ["b"] * 3, "algorithm": "GRPO",
                             "crossover": [*first, 40.0, 45, 50], "last step": 300.0})
    pairs = {"Adam": pd.DataFrame({"regime": ["a", "b"], "algorithm": "GRPO",
                                   "predicted": [200.0, 50.0]}),
             "SGD": pd.DataFrame({"regime": ["a", "b"], "algorithm": "GRPO",
                                  "predicted": [60.0, 50.0]})}
    read = {name: crossover.contrasts(runs(first), pairs, [("a", "b")]).iloc[0]
            for name, first in (("later", [100.0, 110, 120]), ("same", [42.0, 45, 48]),
                                ("earlier", [10.0, 11, 12]),
                                ("censored", [np.inf, 280, 290]),
                                ("wide", [20.0, 200, 45]))}
    assert {k: r["LM"] for k, r in read.items()} == {
        "later": crossover.LATER, "same": crossover.SAME, "earlier": crossover.EARLIER,
        "censored": crossover.LATER, "wide": stats.UNDECIDED}
    assert read["later"]["Adam"] == crossover.LATER and read["later"]["SGD"] == crossover.SAME
    assert read["later"]["agrees (Adam)"] and not read["later"]["agrees (SGD)"]
    assert read["wide"]["agrees (Adam)"] is None
    assert crossover.direction(np.inf, 50.0) == crossover.LATER
    assert crossover.direction(np.inf, np.inf) == crossover.SAME
    both = crossover.contrasts(pd.concat([runs([100.0, 110, 120]), runs([10.0, 11, 12]).assign(
        regime=lambda d: d["regime"].map({"a": "c", "b": "d"}))]), pairs,
        [("a", "b"), ("c", "d")])
    text = sentences.contrast_text(both)
    assert "decided a direction in 2 of the 2 contrasts" in text
    assert "Adam 1 of 1" in text and "SGD 0 of 1" in text  # c, d have no registration
    table = displayed.contrast_table(both)
    assert table.loc[("a - b", "GRPO"), "Adam"] == "later (yes)"
    assert table.loc[("c - d", "GRPO"), "Adam"] == "-"
    assert "none of the 1 contrasts" in sentences.contrast_text(
        crossover.contrasts(runs([20.0, 200, 45]), pairs, [("a", "b")]))
    with pytest.raises(ParameterError, match=r"contrasts has \['G 4', 'nowhere'\]"):
        resolve("smoke", "regimes", {"contrasts": [["G 4", "nowhere"]]})


def test_the_laws_are_registered_per_update_and_read_like_the_toys_runs(monkeypatch):
    """``toy_laws``: the mean field per optimizer and update, Adam on the moments for GRPO
    alone, NaN past expansion; ``registered_pairs`` reads the toy's runs and the laws, and a
    registration without laws (older) or an update without a law adds no row."""
    from rlvr_dynamics.chapters.regimes import crossover, toy_mapping

    monkeypatch.setattr(toy_mapping, "LAW_STEPS", 3000)
    D = toy_dynamics.Params.parse({})
    laws = chapter.toy_laws([0.6, 0.3, 0.1], [0.5, 1.0, 0.0], 8, D, ["GRPO", "NSR"])
    assert set(laws) == {"Adam, mean field", "SGD, mean field", "Adam, on the moments"}
    assert set(laws["SGD, mean field"]) == {"GRPO", "NSR"}
    assert set(laws["Adam, on the moments"]) == {"GRPO"}
    assert all(0 < p["toy expansion"] < 3000 for law in laws.values() for p in law.values())
    past = chapter.toy_laws([0.3, 0.6, 0.1], [0.5, 1.0, 0.0], 8, D)
    assert all(np.isnan(p["toy expansion"]) for law in past.values() for p in law.values())
    record = {"predictions": {o: {"GRPO": {"toy expansion": 40.0},
                                  "GRPO-N": {"toy expansion": 50.0}}
                              for o in (chapter.OWN, "Adam", "SGD")},
              "laws": {"Adam, on the moments": {"GRPO": {"toy expansion": 20.0}}}}
    older = {"predictions": record["predictions"]}
    runs = pd.DataFrame({"regime": ["new", "new", "old"], "algorithm": ["GRPO", "GRPO-N", "GRPO"],
                         "seed": 0, "crossover": [30.0, np.inf, 30.0], "last step": 60.0})
    pairs = crossover.registered_pairs(runs, {"new": record, "old": older})
    assert list(pairs) == ["Adam", "SGD", "Adam, on the moments"]
    law = pairs["Adam, on the moments"]
    assert law[["regime", "algorithm"]].values.tolist() == [["new", "GRPO"]]
    assert law["measured / predicted"].iloc[0] == 1.5
    assert pairs["Adam"]["censored"].tolist() == [False, True, False]


def test_the_figures_settings_name_each_regimes_own_group_size():
    from rlvr_dynamics.chapters import needed
    from rlvr_dynamics.profiles import plan
    P = chapter.Params.parse(plan("smoke", ["regimes"])["regimes"])
    T = needed(P, "training")
    hard = {"test": np.array([True, False, True])}
    text = sentences.settings(P, T, hard)
    assert (f"(G per regime where it differs: 8 in 'G 8, NSR', at the same {T.generation_batch} "
            "rollouts per step)") in text
    plain = P.model_copy(update={"regimes": {k: v for k, v in P.regimes.items() if v.G is None}})
    assert "G per regime" not in sentences.settings(plain, T, hard)


def test_a_change_that_rounds_to_nothing_has_no_minus_sign():
    from rlvr_dynamics.chapters.style import rounded
    assert "{:+.0f} %".format(-0.3) == "-0 %"  # what the page showed
    assert rounded("{:+.0f} %", -0.3) == "+0 %" and rounded("{:.0f}", -0.2) == "0"
    assert rounded("{:+.1f}", -0.04) == "+0.0" and rounded("{:+.0f} %", -0.6) == "-1 %"
    assert rounded("{:.2f}", -12.0) == "-12.00"
