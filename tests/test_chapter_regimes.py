"""The regimes chapter's readings on synthetic probes: a run that shrinks then expands, one that
only expands, one that stalls; each verdict reachable; the toy's inputs read from the base."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rlvr_dynamics import stats
from rlvr_dynamics.chapters import regimes as chapter
from rlvr_dynamics.chapters import toy_dynamics
from rlvr_dynamics.chapters.regimes import figures, sentences, toy_mapping
from rlvr_dynamics.tasks import sums
from rlvr_dynamics.training.probe import KEYS, SETTINGS, SPLITS

N = 6
HARD = {s: np.array([False, False, False, True, True, True]) for s in SPLITS}


def probe(stepwise: float, p_hard: float, direct_rate: float = 0.5) -> dict:
    """One probe: every problem takes the stepwise path with mass ``stepwise`` (always right);
    the direct path is right with ``direct_rate`` on the easy problems, never on the hard ones;
    the hard problems' p is ``p_hard``."""
    rows = {k: [] for k in KEYS}
    for hard in HARD["test"]:
        direct = 1 - stepwise
        dr = 0.0 if hard else direct * direct_rate
        p = p_hard if hard else stepwise + dr
        values = {"p": p, "se": 0.0, "direct_right": dr, "direct_wrong": direct - dr,
                  "stepwise_right": stepwise, "stepwise_wrong": 0.0, "corrected": 0.0,
                  "corrected_right": 0.0, "answer_entropy": 0.5, "token_entropy": 0.1}
        for k in KEYS:
            rows[k].append(values[k])
    return {s: {split: rows for split in SPLITS} for s in SETTINGS}


def run(stepwise: list[float], p_hard: list[float]) -> list[dict]:
    return [{"step": 10 * i, "probe": probe(s, p)} for i, (s, p) in enumerate(zip(stepwise, p_hard))]


SHAPES = {  # stepwise mass and the hard problems' p over 6 probes
    "shrinks then expands": ([0.05, 0.03, 0.02, 0.2, 0.7, 0.9], [0.5, 0.2, 0.1, 0.4, 0.9, 0.95]),
    "expands at once": ([0.05, 0.3, 0.6, 0.8, 0.9, 0.95], [0.5, 0.6, 0.8, 0.9, 0.95, 0.97]),
    "stalls": ([0.05, 0.03, 0.01, 0.01, 0.005, 0.004], [0.5, 0.3, 0.1, 0.05, 0.04, 0.03]),
}


def tables(shape: str, seeds: int = 3, noise: float = 0.0, k: int = 16):
    rng = np.random.default_rng(0)
    dynamics = {}
    for algo in ("grpo", "grpo_n"):
        for s in range(seeds):
            step, hard = SHAPES[shape]
            jitter = lambda v: list(np.clip(np.array(v) + noise * rng.normal(size=len(v)), 0, 1))
            dynamics[shape, algo, s] = run(jitter(step), jitter(hard))
    long = chapter.with_passk(chapter.probes(dynamics), [1, k])
    columns = ["pass@1", f"pass@{k}", f"var@{k}", "stepwise", "direct", *chapter.PATHS]
    means = chapter.per_run(long, HARD, columns)
    return long, means, chapter.stages(means, k, HARD)


def test_time_to_expansion_depth_and_stall_per_run():
    _, _, runs = tables("shrinks then expands")
    assert (runs["expansion"] == 40).all()  # stepwise 0.7 > direct 0.3 first at step 40
    assert (runs["depth_step"] == 20).all()
    expected = 100 * ((1 - 0.9 ** 16) - (1 - 0.5 ** 16))  # p_hard 0.5 -> 0.1
    assert np.allclose(runs["depth"], expected)
    assert not runs["stalled"].any()
    _, _, stall = tables("stalls")
    assert np.isinf(stall["expansion"]).all() and stall["stalled"].all()
    _, _, fast = tables("expands at once")
    assert (fast["expansion"] == 20).all() and (fast["depth"] > 0).all()


@pytest.mark.parametrize("shape, expected", [
    ("shrinks then expands", stats.REPLICATES),
    ("expands at once", "expansion only"),
    ("stalls", "shrinkage only"),
])
def test_every_reading_of_the_two_stages_is_reachable(shape, expected):
    long, _, runs = tables(shape, noise=0.01, k=4)
    verdicts = sentences.regime_verdicts(runs, chapter.final_entropy(long))
    assert verdicts.loc[shape, "GRPO: shrinkage, then expansion"] == expected, verdicts.T
    keeps = verdicts.loc[shape, "GRPO-N keeps the base's boundary"]
    assert keeps.startswith(stats.REPLICATES if shape == "expands at once" else stats.OPPOSITE)


def test_one_seed_is_too_few():
    long, _, runs = tables("shrinks then expands", seeds=1)
    verdicts = sentences.regime_verdicts(runs, chapter.final_entropy(long))
    assert verdicts.loc["shrinks then expands", "GRPO: shrinkage, then expansion"] == \
        stats.FEW_SEEDS


def test_two_stages_needs_the_order():
    assert chapter.two_stages(stats.REPLICATES, stats.REPLICATES, False) == \
        "both, not in that order"
    assert chapter.two_stages(stats.UNDECIDED, stats.OPPOSITE, True) == "neither"


def test_the_toy_reads_the_base_and_the_mix():
    long, _, _ = tables("shrinks then expands")
    pi0, r = chapter.toy_inputs(long, HARD, "shrinks then expands", None)
    assert np.allclose(pi0, [0.95 / (1 + 1e-4), 0.05 / (1 + 1e-4), 1e-4 / (1 + 1e-4)])
    assert np.isclose(r[0], 0.5 * 0.5) and r[1] == 1.0 and r[2] == 0.0  # half the split is hard
    _, r0 = chapter.toy_inputs(long, HARD, "shrinks then expands", 0.0)
    assert np.isclose(r0[0], 0.5)  # no rare-only problem: the direct path's own rate


def test_the_toy_prediction_is_later_for_a_rarer_path():
    D = pd.Series({"lr": 0.1, "optimizer": "adam", "tau": 1.0})
    common = chapter.toy_prediction([0.9, 0.05, 0.05], [0.5, 1.0, 0.0], 8, D, 400, 200)
    rare = chapter.toy_prediction([0.948, 0.002, 0.05], [0.5, 1.0, 0.0], 8, D, 400, 200)
    assert common["toy expansion"] < rare["toy expansion"]
    assert np.isnan(chapter.toy_prediction([0.4, 0.5, 0.1], [0.5, 1.0, 0.0], 8, D, 10,
                                           10)["toy expansion"])


def test_the_toy_predicts_both_updates_under_each_optimizer_running_each_setting_once(
        monkeypatch):
    D = toy_dynamics.Params.parse({})
    assert D.optimizer == "adam"  # the chapter's own setting is the "Adam" one: run once
    predicted = chapter.toy_predictions([0.9, 0.05, 0.05], [0.5, 1.0, 0.0], 8, D, 300, 50)
    assert set(predicted) == {chapter.OWN, "Adam", "SGD"}
    assert all(set(p) == {"GRPO", "GRPO-N"} and all(v["toy expansion"] > 0 for v in p.values())
               for p in predicted.values())
    assert predicted[chapter.OWN] == predicted["Adam"] != predicted["SGD"]
    calls = []
    monkeypatch.setattr(toy_mapping, "toy_prediction",
                        lambda *a, **kw: calls.append(a[3].optimizer) or {"toy expansion": 1.0})
    chapter.toy_predictions([0.9, 0.05, 0.05], [0.5, 1.0, 0.0], 8, D, 3, 2)
    assert sorted(calls) == ["adam", "adam", "sgd", "sgd"]
    calls.clear()
    own_sgd = D.model_copy(update={"optimizer": "sgd", "lr": D.sgd_lr / 2})
    chapter.toy_predictions([0.9, 0.05, 0.05], [0.5, 1.0, 0.0], 8, own_sgd, 3, 2)
    assert sorted(calls) == ["adam", "adam", "sgd", "sgd", "sgd", "sgd"]  # a setting of its own


def test_the_toy_beside_each_regime_reads_its_base(monkeypatch):
    long, _, _ = tables("shrinks then expands")
    monkeypatch.setattr(toy_mapping, "toy_prediction", lambda pi0, r, G, D, steps, seeds,
                        negative_only=False: {"toy expansion": 30.0 if negative_only else 20.0})
    D = toy_dynamics.Params.parse({})
    rows, times = chapter.toy_side(long, HARD, {"shrinks then expands": chapter.Regime()},
                                   ["GRPO", "GSPO-N"], 8, D, 3, 2)
    assert rows["algorithm"].tolist() == ["GRPO", "GSPO-N"]
    assert rows["toy expansion"].tolist() == [20.0, 30.0]  # GSPO-N: the negative-only update
    assert np.isclose(rows["pi0(a2)"].iloc[0], 0.05 / (1 + 1e-4))
    assert times == {"shrinks then expands": {"Adam": {"GRPO": 20.0, "GRPO-N": 30.0},
                                              "SGD": {"GRPO": 20.0, "GRPO-N": 30.0}}}


def test_the_order_of_two_times_to_expansion():
    assert chapter.order(50.0, 20.0, 10) == "later" and chapter.order(20.0, 50.0, 10) == "earlier"
    assert chapter.order(25.0, 20.0, 10) == "same" and chapter.order(np.inf, 20.0, 10) == "later"
    assert chapter.order(np.inf, np.inf, 10) == "neither expands"
    assert chapter.order(np.nan, 20.0, 10) == "outside the toy"


def test_the_lm_follows_the_optimizer_whose_ordering_it_shares():
    rows = [{"regime": regime, "algorithm": algo, "seed": s, "expansion": t}
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
    shown = sentences.ordering_table(orders)
    assert shown.loc["a", "LM: GRPO-N vs GRPO"] == "later (50 vs 20)"
    assert shown.loc["b", "toy, Adam"] == "neither expands (never vs never)"
    assert shown["the LM follows"].tolist() == ["SGD", "Adam"]
    assert sentences.ordering_text(orders) == (
        "GRPO-N's time to expansion against GRPO's, the LM's ordering matches the toy's under "
        "Adam in 1 of 2, under SGD in 1 of 2 regimes.")
    toy_times["a"]["SGD"]["GRPO-N"] = 10.0  # now neither optimizer's ordering is the LM's
    orders = chapter.orderings(pd.DataFrame(rows), toy_times, 10)
    assert orders.loc["a", "follows"] == ()
    assert sentences.ordering_table(orders).loc["a", "the LM follows"] == "none"
    assert sentences.ordering_text(orders).startswith(
        "GRPO-N's time to expansion against GRPO's, the LM's ordering matches the toy's under "
        "Adam in 1 of 2, under SGD in 0 of 2")
    toy_times["b"] = {o: {"GRPO": np.nan, "GRPO-N": np.nan} for o in ("Adam", "SGD")}
    orders = chapter.orderings(pd.DataFrame(rows), toy_times, 10)
    assert orders.loc["b", "follows"] == ()  # a base outside the toy's scenario follows none
    assert sentences.ordering_table(orders).loc["b", "toy, SGD"] == "outside the toy"
    assert sentences.ordering_text(orders).endswith(
        "under SGD in 0 of 2 regimes (1 outside the toy's scenario).")


def test_the_knobs_reach_every_run():
    P = chapter.Params.parse({"regimes": {"a": {"prior": 0.01, "hard_share": 0.0,
                                                "base_seed": 1}},
                              "seeds": [0], "steps": 30, "probe_every": 5})
    (cfg,) = [c for (r, a, s), c in P.runs().items() if a == "grpo"]
    assert (cfg.path_prior, cfg.hard_share, cfg.probe_every, cfg.steps) == (0.01, 0.0, 5, 30)
    assert cfg.model.seed == 1 and cfg.model.author == sums.Author()
    with pytest.raises(Exception, match="probe_every=50 must be <= steps=30"):
        chapter.Params.parse({"steps": 30, "probe_every": 50})


def test_the_findings_follow_the_table():
    rows = []
    for regime, t, toy_t in (("common", [5.0, 6.0, 7.0], 10.0), ("rare", [40.0, np.inf, 50.0], 80.0)):
        for algo in ("GRPO", "GRPO-N"):
            for s, x in enumerate(t):
                rows.append({"regime": regime, "algorithm": algo, "seed": s, "expansion": x,
                             "depth": -3.0 * s, "stalled": np.isinf(x), "pi0(a2)": 0.05,
                             "toy expansion": toy_t, "noise": 1.5})
    table = pd.DataFrame(rows)
    text = sentences.findings_text(table, 256, 100, 10)
    assert "rare, GRPO (P(stepwise) 0.0500 at the start): expanded in 2 of 3 seeds (steps 40, " \
           "never, 50)" in text
    assert ("-3.0 points against the base (seeds -6.0 to +0.0; the probe's own standard error "
            "1.5 points); 1 seed stalled") in text
    assert "of the 1 pairs of regimes that the toy sets apart (its times more than 10% apart), " \
           "the LM orders 1 the same way." in text
    table.loc[table["regime"] == "rare", "toy expansion"] = 1.0  # the toy says: rare first
    assert "the LM orders 0 the same way (the toy puts rare before common, the LM the other " \
           "way round)" in sentences.findings_text(table, 256, 100, 10)
    table.loc[table["regime"] == "rare", "toy expansion"] = 10.5  # within 10 %: not apart
    assert "of the 0 pairs" in sentences.findings_text(table, 256, 100, 10)


def test_the_order_of_regimes_counts_ties_and_never():
    lm = pd.Series({"a": 20.0, "b": 25.0, "c": np.inf, "d": 80.0})
    toy_t = pd.Series({"a": 19.0, "b": 30.0, "c": 100.0, "d": np.nan})  # d: outside the toy
    agree, pairs, other = chapter.order_agreement(lm, toy_t, 10)
    # a-b: toy apart, LM within one probe (tie); a-c, b-c: the toy and the LM agree
    assert (agree, pairs) == (2, 3) and other == [("a", "b", True)]
    assert sentences.disagreement(*other[0]) == "the toy puts a before b, the LM ties them"


@pytest.mark.parametrize("shape, expected", [("shrinks then expands", stats.REPLICATES),
                                             ("expands at once", stats.OPPOSITE),
                                             ("stalls", stats.OPPOSITE)])
def test_the_recorded_claim_takes_every_verdict(shape, expected):
    _, _, runs = tables(shape, noise=0.01, k=4)
    (row,) = sentences.claim_rows(runs, 4)
    assert row["claim"] == "lm_two_stages" and [v for _, v in row["checks"]] == [expected]
    assert chapter.stage_check(stats.REPLICATES, stats.REPLICATES, False) == stats.OPPOSITE
    assert chapter.stage_check(stats.UNDECIDED, stats.REPLICATES, True) == stats.UNDECIDED


def test_the_probe_noise_follows_the_standard_error_of_p():
    dynamics = {("r", "grpo", 0): run([0.05, 0.05], [0.01, 0.01])}
    for r in dynamics["r", "grpo", 0]:
        r["probe"]["full"]["test"]["se"] = [0.002] * N
    long = chapter.with_passk(chapter.probes(dynamics), [256])
    means = chapter.per_run(long, HARD, ["pass@256", "var@256", "stepwise", "direct"])
    (noise,) = chapter.stages(means, 256, HARD)["noise"]
    one = 50 * (0.992 ** 256 - 0.988 ** 256)  # Pass@256 at p - se and p + se, halved
    assert np.isclose(noise, one / np.sqrt(3))  # the mean of 3 hard problems
    assert abs(one - 100 * 256 * 0.99 ** 255 * 0.002) < 0.1 * one  # near the delta method
    for r in dynamics["r", "grpo", 0]:
        r["probe"]["full"]["test"]["se"] = [0.5] * N  # a useless probe: bounded, not huge
    long = chapter.with_passk(chapter.probes(dynamics), [256])
    means = chapter.per_run(long, HARD, ["pass@256", "var@256", "stepwise", "direct"])
    assert chapter.stages(means, 256, HARD)["noise"].iloc[0] <= 50 / np.sqrt(3) + 1e-9


def test_the_summary_counts_the_seeds_and_shows_numbers_for_people():
    """Per regime and algorithm: seeds expanded out of all and their steps; on the page,
    floating-point residue (a standard error of 1.9e-123, a toy dip of -1.1e-16) reads 0 and a
    toy that never expands reads ∞, while a real number keeps its digits."""
    _, _, runs = tables("shrinks then expands")
    table = runs.assign(**{"pi0(a2)": 0.05, "r(a1)": 0.25, "r(a2)": 1.0,
                           "toy expansion": np.inf, "toy dip": -1.110e-16})
    table.loc[table["algorithm"] == "GRPO", "noise"] = 1.887e-123
    table.loc[(table["algorithm"] == "GRPO-N") & (table["seed"] == 0), "expansion"] = np.inf
    summary = chapter.summary(table)
    grpo, grpo_n = summary.loc["shrinks then expands", "GRPO"], summary.loc[
        "shrinks then expands", "GRPO-N"]
    assert (grpo["expanded"], grpo["seeds"], grpo_n["expanded"]) == (3, 3, 2)
    assert grpo_n["step of expansion"] == (np.inf, 40.0, 40.0)
    shown = figures.summary_table(summary).to_string(delimiter="|", sparse_index=False).splitlines()
    header = shown[0].split("|")
    cells = {row.split("|")[1]: dict(zip(header[2:], row.split("|")[2:])) for row in shown[2:]}
    assert cells["GRPO"]["probe's standard error (points)"] == "0"
    assert cells["GRPO"]["toy: dip of π(a2)"] == "0"
    assert cells["GRPO"]["toy: steps to expansion"] == "∞"
    assert cells["GRPO-N"]["expanded (seeds)"] == "2/3"
    assert cells["GRPO-N"]["step of expansion"] == "∞, 40, 40"
    assert cells["GRPO"]["shrinkage depth (mean)"] == f"{grpo['shrinkage depth (mean)']:.3g}"
    assert "e-" not in shown[2] + shown[3]
