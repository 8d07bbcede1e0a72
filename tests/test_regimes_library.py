"""The library of the scenario's runs (``rlvr_dynamics.regimes``) on synthetic probes: the
probes read as tables (``probes``), the two stages in numbers (``stages``: a run that shrinks then
expands, one that only expands, one that stalls; statistics that read no effect in noise), the
toy beside each regime (``toy_mapping``: its inputs read from the base, its prediction
registered before the runs, the orderings), each cell's crossover against its registration and
two algorithms against each other (``crossover``) and the scenario's stage 2 (``scenario``).

The synthetic probes and runs here (``probe``, ``run``, ``tables``, ``informs_all``,
``scenario_runs``) are shared with the chapters' tests (``test_regime_map``,
``test_scenario``, ``test_scenario_words``)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rlvr_dynamics import stats
from rlvr_dynamics.chapters import toy_dynamics
from rlvr_dynamics.regimes import crossover, toy_mapping
from rlvr_dynamics.regimes.probes import probes, with_passk
from rlvr_dynamics.regimes.scenario import stage2
from rlvr_dynamics.regimes.stages import (SHRINK_MARGIN, base_rows, informs, mid_curve,
                                          stage_effects, stages, two_stages)
from rlvr_dynamics.regimes.toy_mapping import (OWN, order, order_agreement, toy_inputs,
                                               toy_laws, toy_prediction, toy_predictions,
                                               toy_side, toy_update)
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
    long = with_passk(probes(dynamics), [1, 16])
    return long, stages(long, HARD, mid_curve(long, HARD))


def informs_all(long: pd.DataFrame) -> dict:
    ks = mid_curve(long, HARD)
    return {r: informs(base_rows(long, r), HARD["test"], ks[r]) for r in ks}


def test_the_mid_curve_k_is_where_the_base_is_closest_to_half():
    p = np.array([0.05, 0.01, 0.0])
    k = mid_curve(*_one_base(p))["base"]
    at = lambda k: 100 * (1 - (1 - p) ** k).mean()  # noqa: E731
    assert abs(at(k) - 50) <= min(abs(at(k - 1) - 50), abs(at(k + 1) - 50))
    assert mid_curve(*_one_base(np.array([0.9, 0.8, 0.95])))["base"] == 1  # above at k=1


def _one_base(p_hard: np.ndarray) -> tuple[pd.DataFrame, dict]:
    long = with_passk(probes({("base", "grpo", 0): run([0.05, 0.05])}), [1])
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


def test_the_dip_on_the_log_scale_and_the_median_crossover_per_cell():
    """``stages``' log-scale dip (issue 51) read back by ``dip_over_seeds``: where every seed
    falls to 0.02 from 0.05 the geometric mean is -60 % in every seed, read at step 20, not
    censored; a run still falling at its last probe is censored; the median crossover is the
    Kaplan-Meier median with its interval, open above where no seed crossed."""
    from rlvr_dynamics.regimes.stages import crossover_median, dip_over_seeds
    _, runs = tables("shrinks then expands")
    d = dip_over_seeds(runs[runs["algorithm"] == "GRPO"])
    assert d.estimate == pytest.approx(-0.6) and d.values == pytest.approx((-0.6,) * 3)
    assert d.steps == (20.0,) * 3 and (d.fell, d.rose) == (3, 0) and not d.censored
    m = crossover_median(runs[runs["algorithm"] == "GRPO"])
    assert (m.estimate, m.low, m.high) == (40, 40, 40)
    _, stall = tables("stalls", noise=0.05)
    d = dip_over_seeds(stall[stall["algorithm"] == "GRPO"])
    assert d.censored and d.step == d.last == 50 and d.fell == 3
    assert -1 < d.low < d.estimate < d.high < 0
    m = crossover_median(stall[stall["algorithm"] == "GRPO"])
    assert m.censored and m.open_above and m.horizon == 50


def test_the_gain_splits_into_path_choice_and_reliability():
    """Reliability alone moves (the path's share fixed): all of the gain is reliability's;
    the share alone moves: all of it is the path choice's; the three parts add up."""
    dynamics = {("r", "grpo", s): run([0.05, 0.05], q=[0.5, 0.9]) for s in range(2)}
    long = with_passk(probes(dynamics), [1])
    runs = stages(long, HARD, {"r": 16})
    assert np.allclose(runs["path choice"], 0) and (runs["reliability"] > 0).all()
    dynamics = {("r", "grpo", s): run([0.05, 0.2]) for s in range(2)}
    runs = stages(with_passk(probes(dynamics), [1]), HARD, {"r": 16})
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
        loo_hits += stats.one_sample(-depth, SHRINK_MARGIN).verdict == stats.REPLICATES
        lowest = curves.iloc[1:].min().to_numpy()
        min_hits += stats.one_sample(-lowest, SHRINK_MARGIN).verdict == stats.REPLICATES
    assert loo_hits <= 10 and min_hits >= 30, (loo_hits, min_hits)


def test_informs_reads_the_base():
    long, _ = tables("shrinks then expands")
    base = base_rows(long, "shrinks then expands")
    assert informs(base, HARD["test"], 16) == (True, "")
    dead = base.assign(p=0.0, stepwise_right=0.0, stepwise_wrong=0.0)
    ok, why = informs(dead, HARD["test"], 16)
    assert not ok and "0.0 %" in why
    crossed = base.assign(stepwise_right=0.6, stepwise_wrong=0.1, direct_right=0.1,
                          direct_wrong=0.2)
    ok, why = informs(crossed, HARD["test"], 2)
    assert not ok and "more often than the direct one" in why


def test_two_stages_needs_the_order_and_a_crossover_in_every_seed():
    assert two_stages(stats.REPLICATES, stats.REPLICATES, False) == "both, not in that order"
    assert two_stages(stats.UNDECIDED, stats.OPPOSITE, True) == "neither"
    _, runs = tables("shrinks then expands", noise=0.01)
    g = runs[runs["algorithm"] == "GRPO"].copy()
    assert stage_effects(g)[2]
    g.loc[g.index[0], "crossover"] = np.inf  # one seed never crossed: the order fails
    assert not stage_effects(g)[2]


def test_the_probe_noise_follows_the_standard_error_of_p():
    dynamics = {("r", "grpo", 0): run([0.05, 0.05])}
    for r in dynamics["r", "grpo", 0]:
        r["probe"]["full"]["test"]["p"] = [0.01] * N
        r["probe"]["full"]["test"]["se"] = [0.002] * N
    long = with_passk(probes(dynamics), [256])
    (noise,) = stages(long, HARD, {"r": 256})["noise"]
    one = 50 * (0.992 ** 256 - 0.988 ** 256)  # Pass@256 at p - se and p + se, halved
    assert np.isclose(noise, one / np.sqrt(3))  # the mean of 3 hard problems
    assert abs(one - 100 * 256 * 0.99 ** 255 * 0.002) < 0.1 * one  # near the delta method
    for r in dynamics["r", "grpo", 0]:
        r["probe"]["full"]["test"]["se"] = [0.5] * N  # a useless probe: bounded, not huge
    long = with_passk(probes(dynamics), [256])
    assert stages(long, HARD, {"r": 256})["noise"].iloc[0] <= 50 / np.sqrt(3) + 1e-9


def test_the_toy_reads_the_base_and_the_mix():
    base = pd.DataFrame(probe(0.05, guess=0.45)["full"]["test"])
    pi0, r = toy_inputs(base, HARD["test"], N, 0.5)
    assert np.allclose(pi0, [0.5, 0.05, 0.45])
    assert np.isclose(r[0], 0.5 * 0.5) and np.isclose(r[1], 0.9) and r[2] == 0.0
    _, r0 = toy_inputs(base, HARD["test"], N, 0.0)
    assert np.isclose(r0[0], 0.5)  # no rare-only problem: the direct path's own rate
    # problems probed beyond the first `regular` do not enter pi0 or r1
    extra = pd.concat([base, base.iloc[3:].assign(stepwise_right=0.0, stepwise_wrong=0.5,
                                                  direct_right=0.0, direct_wrong=0.05)],
                      ignore_index=True)
    pi0x, rx = toy_inputs(extra, np.r_[HARD["test"], [True] * 3], N, 0.5)
    assert np.allclose(pi0x, pi0) and np.isclose(rx[0], r[0]) and rx[1] < r[1]


def test_the_toy_prediction_is_later_for_a_rarer_path():
    D = pd.Series({"lr": 0.1, "optimizer": "adam", "tau": 1.0})
    common = toy_prediction([0.9, 0.05, 0.05], [0.5, 1.0, 0.0], 8, D, 400, 200)
    rare = toy_prediction([0.948, 0.002, 0.05], [0.5, 1.0, 0.0], 8, D, 400, 200)
    assert common["toy expansion"] < rare["toy expansion"]
    assert np.isnan(toy_prediction([0.4, 0.5, 0.1], [0.5, 1.0, 0.0], 8, D, 10,
                                   10)["toy expansion"])
    # the reviewers' case, a rare path no better than the explored one: predicted, never
    worse = toy_prediction([0.9, 0.05, 0.05], [0.9, 0.5, 0.0], 8, D, 400, 200)
    assert worse["toy expansion"] == np.inf and worse["toy expanded"] < 0.5


def test_each_algorithm_has_its_toy_update():
    assert toy_update("GRPO") == ("GRPO", {})
    assert toy_update("GSPO-N") == ("GRPO-N", {"negative_only": True})
    assert toy_update("NSR") == ("NSR", {"reinforce": 0.0})
    assert toy_update("W-REINFORCE") == ("W-REINFORCE", {"reinforce": 0.1})
    with pytest.raises(ValueError, match="no algorithm is labelled 'PPO'"):
        toy_update("PPO")


def test_the_toy_predicts_both_updates_under_each_optimizer_running_each_setting_once(
        monkeypatch):
    D = toy_dynamics.Params.parse({})
    assert D.optimizer == "adam"  # the chapter's own setting is the "Adam" one: run once
    predicted = toy_predictions([0.9, 0.05, 0.05], [0.5, 1.0, 0.0], 8, D, 300, 50)
    assert set(predicted) == {OWN, "Adam", "SGD"}
    assert all(set(p) == {"GRPO", "GRPO-N"} and all(v["toy expansion"] > 0 for v in p.values())
               for p in predicted.values())
    assert predicted[OWN] == predicted["Adam"] != predicted["SGD"]
    four = toy_predictions([0.9, 0.05, 0.05], [0.5, 1.0, 0.0], 8, D, 300, 50,
                           ["GRPO", "GSPO", "NSR", "W-REINFORCE"])
    assert set(four["SGD"]) == {"GRPO", "NSR", "W-REINFORCE"}  # GSPO's toy update is GRPO's
    assert four["SGD"]["GRPO"] == predicted["SGD"]["GRPO"] != four["SGD"]["NSR"]
    calls = []
    monkeypatch.setattr(toy_mapping, "toy_prediction",
                        lambda *a, **kw: calls.append(a[3].optimizer) or {"toy expansion": 1.0})
    toy_predictions([0.9, 0.05, 0.05], [0.5, 1.0, 0.0], 8, D, 3, 2)
    assert sorted(calls) == ["adam", "adam", "sgd", "sgd"]
    calls.clear()
    own_sgd = D.model_copy(update={"optimizer": "sgd", "lr": D.sgd_lr / 2})
    toy_predictions([0.9, 0.05, 0.05], [0.5, 1.0, 0.0], 8, own_sgd, 3, 2)
    assert sorted(calls) == ["adam", "adam", "sgd", "sgd", "sgd", "sgd"]  # a setting of its own


def test_the_toy_beside_each_regime_reads_its_registered_prediction():
    record = {"inputs": {"pi0": [0.9, 0.05, 0.05], "r": [0.25, 1.0, 0.0], "G": 8},
              "predictions": {o: {"GRPO": {"toy expansion": 20.0, "toy dip": -0.5},
                                  "GRPO-N": {"toy expansion": 30.0, "toy dip": 0.0}}
                              for o in (OWN, "Adam", "SGD")}}
    rows, times = toy_side({"r": record}, ["GRPO", "GSPO-N"])
    assert rows["algorithm"].tolist() == ["GRPO", "GSPO-N"]
    assert rows["toy expansion"].tolist() == [20.0, 30.0]  # GSPO-N: the negative-only update
    assert rows["pi0(a2)"].iloc[0] == 0.05 and rows["pi0(a3)"].iloc[0] == 0.05
    assert times == {"r": {"Adam": {"GRPO": 20.0, "GRPO-N": 30.0},
                           "SGD": {"GRPO": 20.0, "GRPO-N": 30.0}}}


def test_the_order_of_two_times_to_expansion():
    assert order(50.0, 20.0, 10) == "later" and order(20.0, 50.0, 10) == "earlier"
    assert order(25.0, 20.0, 10) == "same" and order(np.inf, 20.0, 10) == "later"
    assert order(np.inf, np.inf, 10) == "neither expands"
    assert order(np.nan, 20.0, 10) == "outside the toy"


def test_the_order_of_regimes_counts_ties_and_never():
    lm = pd.Series({"a": 20.0, "b": 25.0, "c": np.inf, "d": 80.0})
    toy_t = pd.Series({"a": 19.0, "b": 30.0, "c": 100.0, "d": np.nan})  # d: outside the toy
    agree, pairs, other = order_agreement(lm, toy_t, 10)
    # a-b: toy apart, LM within one probe (tie); a-c, b-c: the toy and the LM agree
    assert (agree, pairs) == (2, 3) and other == [("a", "b", True)]
    lm["c"] = 5.0  # now the LM puts c first: reversed against the toy, twice
    assert order_agreement(lm, toy_t, 10) == (0, 3, [("a", "b", True), ("a", "c", False),
                                                     ("b", "c", False)])


def test_the_laws_are_registered_per_update_and_read_like_the_toys_runs(monkeypatch):
    """``toy_laws``: the mean field per optimizer and update, Adam on the moments for GRPO
    alone, NaN past expansion; ``registered_pairs`` reads the toy's runs and the laws, and a
    registration without laws (older) or an update without a law adds no row."""
    monkeypatch.setattr(toy_mapping, "LAW_STEPS", 3000)
    D = toy_dynamics.Params.parse({})
    laws = toy_laws([0.6, 0.3, 0.1], [0.5, 1.0, 0.0], 8, D, ["GRPO", "NSR"])
    assert set(laws) == {"Adam, mean field", "SGD, mean field", "Adam, on the moments"}
    assert set(laws["SGD, mean field"]) == {"GRPO", "NSR"}
    assert set(laws["Adam, on the moments"]) == {"GRPO"}
    assert all(0 < p["toy expansion"] < 3000 for law in laws.values() for p in law.values())
    past = toy_laws([0.3, 0.6, 0.1], [0.5, 1.0, 0.0], 8, D)
    assert all(np.isnan(p["toy expansion"]) for law in past.values() for p in law.values())
    record = {"predictions": {o: {"GRPO": {"toy expansion": 40.0},
                                  "GRPO-N": {"toy expansion": 50.0}}
                              for o in (OWN, "Adam", "SGD")},
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


def test_each_cell_reads_agrees_slower_or_faster_than_its_registration():
    """log(measured / predicted) over seeds against log 2: within it agrees, beyond it slower
    or faster, too spread inconclusive; a toy that never crosses agrees only with runs that
    never cross, and a run that did not cross enters with its last probe."""
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


# --- the paper's scenario: an arm (with a guess) and its control (test_scenario*) ---------------

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
    """Synthetic runs of the arm and the control of ``shape`` (``SCENARIO``) for GRPO and
    GRPO-N: the per-run stages, read at k = 16."""
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
    long = with_passk(probes(dynamics), [1])
    return stages(long, HARD, {"arm": 16, "control": 16})


def test_stage_two_needs_every_seed():
    assert stage2(np.array([5.0, 6.0, 7.0])) == stats.REPLICATES
    assert stage2(np.array([-5.0, -6.0, -7.0])) == stats.OPPOSITE
    assert stage2(np.array([0.5, -0.5, 1.0])) == stats.NO_EFFECT
    assert stage2(np.array([5.0, 0.0, 7.0])) == stats.UNDECIDED
    assert stage2(np.array([5.0])) == stats.FEW_SEEDS
