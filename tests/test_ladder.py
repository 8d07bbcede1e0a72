"""The ladder's rules (issue 35) on synthetic inputs that reach each outcome: the slope of the
log-ratio changes recovers a known mechanism, the interval rule reads each of its five
outcomes, a rung's first stage and where the ladder turns, the Kaplan-Meier median that counts
runs that never crossed, and the first-character masses read per update from a run's records."""
from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from rlvr_dynamics import registry, stats
from rlvr_dynamics.regimes import ladder
from rlvr_dynamics.regimes.ladder import (BETWEEN, BEYOND, GAINS, NO, SPREAD, TOY, YES,
                                                   first_masses, mechanism, turns)
from rlvr_dynamics.regimes.toy_rungs import slope


def softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def trajectory(dz: np.ndarray, steps: int = 20, rest: float = 0.0) -> np.ndarray:
    """Masses (direct, stepwise, guess) of a softmax over the three and one more character
    (its logit ``rest``), its logits moved by ``dz`` (3,) per update from the arm's start."""
    z0 = np.log([0.5, 0.0055, 0.49, 0.0045])
    z = z0 + np.arange(steps + 1)[:, None] * np.append(dz, rest)
    return softmax(z)[:, :3]


def test_the_slope_recovers_the_tabular_and_the_proportional_mechanisms():
    # tabular: the stepwise logit still, direct and guess moving by equal and opposite amounts
    assert slope(trajectory(np.array([0.1, 0.0, -0.1]))) == pytest.approx(-0.5)
    # proportional spreading: the guess's mass leaves, every other character's ratios stay
    assert slope(trajectory(np.array([0.0, 0.0, -0.2]))) == pytest.approx(0.0, abs=1e-12)
    # the stepwise path gaining on the direct one as the guess falls
    assert slope(trajectory(np.array([0.0, 0.1, -0.2]))) == pytest.approx(0.5)
    # only the window is read
    moves = np.array([[0.1, 0.0, -0.1, 0.0]] * 20 + [[0.0, 0.5, -0.1, 0.0]] * 20)
    z = np.log([0.5, 0.0055, 0.49, 0.0045]) + np.vstack([np.zeros(4), moves.cumsum(0)])
    late = softmax(z)[:, :3]  # tabular for 20 updates, then the stepwise path climbs
    assert slope(late, window=20) == pytest.approx(-0.5)
    assert slope(late, window=40) != pytest.approx(-0.5)
    assert np.isnan(slope(trajectory(np.zeros(3))))  # nothing moved: no slope


@pytest.mark.parametrize("values,expected", [
    ([-0.52, -0.48, -0.5, -0.49, -0.51], TOY),
    ([0.01, -0.02, 0.0, 0.02, -0.01], SPREAD),
    ([0.6, 0.55, 0.62, 0.58, 0.61], GAINS),
    ([-1.1, -1.05, -0.98, -1.02, -1.0], BEYOND),
    ([-0.5, 0.0, -0.3, 0.1, -0.6], BETWEEN),   # wide: straddles the band's edge
    ([-0.26, -0.24, -0.25, -0.26, -0.24], BETWEEN),  # on the midpoint between the two
    ([-0.5], BETWEEN),  # one seed: no interval
])
def test_the_mechanism_rule_reaches_each_outcome(values, expected):
    assert mechanism(stats.one_sample(values, ladder.BAND)) == expected


def test_a_rung_shows_a_first_stage_by_the_scenarios_rule():
    assert ladder.toy_stage(-0.66) == YES and ladder.toy_stage(-0.1) == NO
    assert ladder.toy_stage(-ladder.FALL_MARGIN) == NO  # the margin itself is not a fall
    assert ladder.lm_stage(stats.one_sample([0.5, 0.55, 0.6, 0.52], ladder.FALL_MARGIN)) == YES
    assert ladder.lm_stage(stats.one_sample([0.01, -0.02, 0.0, 0.03], ladder.FALL_MARGIN)) == NO
    assert ladder.lm_stage(stats.one_sample([-0.5, -0.55, -0.6, -0.52],
                                            ladder.FALL_MARGIN)) == NO  # a rise
    assert ladder.lm_stage(stats.one_sample([0.6, -0.3, 0.4, -0.1],
                                            ladder.FALL_MARGIN)) == stats.UNDECIDED


def rows(readings: dict[str, str], algorithm: str = "GRPO") -> pd.DataFrame:
    return pd.DataFrame([{"rung": r, "algorithm": algorithm, "first stage": v}
                         for r, v in readings.items()])


def test_the_ladder_names_the_rung_where_the_first_stage_turns():
    assert turns(rows({"R0": YES, "R1": YES, "R4": NO}), "GRPO") == ("R4", NO)
    assert turns(rows({"R0": YES, "R1": NO, "R4": NO}), "GRPO") == ("R1", NO)
    assert turns(rows({"R0": NO, "R1": NO, "R4": YES}), "GRPO") == ("R4", YES)  # GRPO-N's case
    assert turns(rows({"R0": YES, "R1": YES, "R4": YES}), "GRPO") is None
    # an undecided rung is passed over, not read as a turn
    assert turns(rows({"R0": YES, "R1": stats.UNDECIDED, "R4": YES}), "GRPO") is None
    assert turns(rows({"R0": YES, "R4": NO}), "GRPO-N") is None  # no such algorithm


def test_the_kaplan_meier_median_counts_runs_that_never_crossed():
    inf = np.inf
    # two of four crossed by step 20: the median is there; dropping the others would say 15
    assert stats.km_median([10, 20, inf, inf], [10, 20, 120, 120]) == 20
    assert np.median([10, 20]) == 15
    # one of four crossed: the median is censored
    assert stats.km_median([10, inf, inf, inf], [10, 120, 120, 120]) == inf
    # runs censored early leave the risk set: the later crossing carries more weight
    assert stats.km_median([10, inf, inf, 30], [10, 15, 15, 30]) == 30
    assert stats.km_median([5, 6, 7], [5, 6, 7]) == 6
    with pytest.raises(ValueError, match="times and last"):
        stats.km_median([1, 2], [1])


def test_first_masses_are_read_per_update_from_the_drawn_problems():
    run = [{"update": 0, "step": 0.0, "first": {"direct": [0.5, 0.3, 0.9],
                                                "stepwise": [0.1, 0.3, 0.0],
                                                "guess": [0.4, 0.4, 0.1]}},
           {"update": 4, "step": 1.0, "reward": 0.5},
           {"update": 1, "step": 0.25, "first": {"direct": [0.6, 0.4, 0.9],
                                                 "stepwise": [0.1, 0.2, 0.0],
                                                 "guess": [0.3, 0.4, 0.1]}}]
    m = first_masses(run, regular=2)  # the third problem is one of the extra, rare-only ones
    assert m.shape == (2, 3)
    assert np.allclose(m, [[0.4, 0.2, 0.4], [0.5, 0.15, 0.35]])


# --- the method, mended -------------------------------------------------------------------------

def test_an_unmatched_control_cannot_inform_and_does_not_vote():
    from rlvr_dynamics.regimes import scenario

    registered = {"arm": {"inputs": {"pi0": [0.5, 0.0055, 0.49]}},
                  "near": {"inputs": {"pi0": [0.99, 0.0060, 0.0001]}},
                  "far": {"inputs": {"pi0": [0.99, 0.0093, 0.0001]}}}
    assert scenario.matched(registered, {"arm": "near"})["arm"] == (True, "")
    ok, why = scenario.matched(registered, {"arm": "far"})["arm"]
    assert not ok and "0.0055" in why and "0.0093" in why
    arm = pd.DataFrame({"fall": [0.3, 0.32, 0.35, 0.31], "gain": [5.0, 6.0, 7.0, 5.5]})
    control = pd.DataFrame({"fall": [0.8, 0.85, 0.9, 0.82], "gain": [5.0] * 4})
    both = scenario.verdict(arm, control)
    assert both["checks"]["against the control"] == stats.OPPOSITE
    assert both["verdict"] == stats.OPPOSITE
    alone = scenario.verdict(arm, control, same_start=False)
    assert alone["checks"]["against the control"] == stats.CANNOT_INFORM
    assert alone["verdict"] == stats.REPLICATES  # the other two checks decide


def runs_of(grpo: list[float], grpo_n: list[float], end: float = 50.0) -> pd.DataFrame:
    return pd.DataFrame([{"algorithm": a, "gain": g, "end": end}
                         for a, gains in (("GRPO", grpo), ("GRPO-N", grpo_n)) for g in gains])


def test_the_large_k_checks_in_the_scenario_reach_each_outcome():
    from rlvr_dynamics.regimes.scenario import LARGE_K, large_k

    holds, base_holds, above = LARGE_K
    v = lambda e: e if isinstance(e, str) else e.verdict
    kept = large_k(runs_of([-8.0, -9.0, -7.5, -8.5], [0.5, -0.5, 1.0, 0.0]))
    assert {k: v(e) for k, e in kept.items()} == {holds: stats.REPLICATES,
                                                  base_holds: stats.REPLICATES,
                                                  above: stats.REPLICATES}
    lost = large_k(runs_of([0.0, 0.5, -0.5, 0.2], [-30.0, -35.0, -40.0, -38.0]))
    assert {k: v(e) for k, e in lost.items()} == {holds: stats.OPPOSITE,
                                                  base_holds: stats.REPLICATES,
                                                  above: stats.OPPOSITE}
    assert all(e == stats.CANNOT_INFORM for e in large_k(runs_of([0.0] * 2, [1.0] * 2),
                                                         informative=False).values())
    pinned = large_k(runs_of([0.0, 0.1], [0.0, 0.2], end=99.0))  # both at the ceiling
    assert pinned[above] == stats.CANNOT_INFORM
    assert set(large_k(runs_of([1.0, 2.0], [])[lambda f: f["algorithm"] == "GRPO"])) == \
        {base_holds}


def test_a_claim_two_chapters_recorded_is_decided_by_all_their_checks(monkeypatch):
    from rlvr_dynamics import verdicts

    rows = {"scenario": [{"claim": "large_k", "chapter": "scenario", "ours": "a",
                         "checks": [["arm: GRPO-N holds the base", stats.OPPOSITE]], "also": [],
                         "verdict": stats.OPPOSITE}],
            "reproduction": [{"claim": "large_k", "chapter": "reproduction", "ours": "b",
                              "checks": [["test: GRPO-N holds the base", stats.CANNOT_INFORM]],
                              "also": [["x", stats.REPLICATES]],
                              "verdict": stats.CANNOT_INFORM},
                             {"claim": "ood", "chapter": "reproduction", "ours": "c",
                              "checks": [["y", stats.REPLICATES]], "also": [],
                              "verdict": stats.REPLICATES}]}
    monkeypatch.setattr(verdicts, "recorded", lambda profile: rows)
    got = verdicts.measured("any")
    assert got["large_k"]["chapter"] == "scenario, reproduction"
    assert got["large_k"]["ours"] == "a; b" and len(got["large_k"]["checks"]) == 2
    assert got["large_k"]["verdict"] == stats.OPPOSITE  # cannot inform does not vote
    assert got["ood"]["verdict"] == stats.REPLICATES
    from rlvr_dynamics.chapters.verdict import not_replicated
    assert not_replicated(verdicts.table("any")) == ["large_k"]


def test_an_arms_ladder_reads_each_rung_in_order():
    """``rung_rows``: R0 and R1 from the registration, the model's rungs from their runs (the
    fall over seeds against the stage-1 margin, the Kaplan-Meier crossover, the slope's
    check), in the ladder's order; ``turns`` then names the rung where the stage goes."""
    from rlvr_dynamics.regimes.toy_mapping import OWN

    record = {"predictions": {OWN: {"GRPO": {"toy dip": -0.66, "toy dip step": 48.0,
                                             "toy expansion": 253.0},
                                    "GRPO-N": {"toy dip": 0.0, "toy dip step": 0.0,
                                               "toy expansion": 99.0}}},
              "ladder": {"R0": {"GRPO": {"slope": -0.5}, "GRPO-N": {"slope": -0.1}},
                         "R1": {"GRPO": {"dip": -0.56, "dip step": 10.75, "crossover": 61.0,
                                         "slope": -0.48},
                                "GRPO-N": {"dip": -0.05, "dip step": 2.0, "crossover": 40.0,
                                           "slope": -0.2}}}}

    def runs(falls, crossovers):
        return pd.DataFrame({"regime": "arm", "algorithm": "GRPO", "seed": range(len(falls)),
                             "fall": falls, "fall step": 5.0, "crossover": crossovers,
                             "last step": 120.0})

    measured = {"R4": runs([0.02, -0.05, 0.01, 0.0], [np.inf] * 4),
                "R3": runs([0.5, 0.55, 0.6, 0.52], [30.0, 40.0, np.inf, 35.0])}
    slopes = pd.DataFrame([{"regime": "arm", "algorithm": "GRPO", "how": how, "slope": s,
                            "low": s - 0.1, "high": s + 0.1}
                           for how, s in (("as built", 0.02), ("R3", -0.45))])
    rows = ladder.rung_rows(record, measured, slopes, "arm")
    grpo = rows[rows["algorithm"] == "GRPO"]
    assert list(grpo["rung"]) == ["R0", "R1", "R3", "R4"]
    assert list(grpo["first stage"]) == [YES, YES, YES, NO]
    assert grpo.set_index("rung").loc["R3", "crossover"] == 35.0  # two of four crossed by 35
    assert grpo.set_index("rung").loc["R4", "crossover"] == np.inf
    assert grpo.set_index("rung").loc["R4", "slope"] == 0.02
    assert turns(rows, "GRPO") == ("R4", NO)
    assert list(rows[rows["algorithm"] == "GRPO-N"]["first stage"]) == [NO, NO]
    assert turns(rows, "GRPO-N") is None


def test_the_registered_accounts_are_read_and_judged_rung_by_rung(tmp_path):
    """Every registered account has a prediction (yes, no or "-") for every rung of both
    phenomena and a reference in the bibliography where it cites one; an account is borne out
    where a decided rung reads as it said, and not where it reads otherwise (a made-up ladder
    reaches both), undecided rungs and rungs that did not run left out."""
    import re

    from rlvr_dynamics import REPO

    registered = ladder.accounts()
    keys = set(re.findall(r"@\w+\{(\w+),", (REPO / "book" / "references.bib").read_text()))
    for a in registered:
        for phenomenon in ladder.PHENOMENA:
            assert set(a[phenomenon]) == set(ladder.LADDER), (a["name"], phenomenon)
            assert set(a[phenomenon].values()) <= {YES, NO, "-"}, a[phenomenon]
        assert a["cite"] is None or a["cite"] in keys, a["cite"]
    rows = pd.DataFrame([{"rung": r, "algorithm": alg, "first stage": v}
                         for r, alg, v in [("R0", "GRPO", YES), ("R1", "GRPO", YES),
                                           ("R4", "GRPO", NO), ("R0", "GRPO-N", NO),
                                           ("R4", "GRPO-N", YES),
                                           ("R1", "GRPO-N", stats.UNDECIDED)]])
    toy_only = {"name": "toy", "cite": None, "dip": {r: YES for r in ladder.LADDER},
                "minus_n_loses": {r: NO for r in ladder.LADDER}}
    sharing = {"name": "sharing", "cite": None,
               "dip": {**{r: YES for r in ladder.LADDER}, "R4": NO},
               "minus_n_loses": {**{r: NO for r in ladder.LADDER}, "R4": YES}}
    table = ladder.against_accounts([toy_only, sharing], rows).set_index("account")
    assert table.loc["toy", "borne out"] == 3 and table.loc["toy", "not borne out"] == 2
    assert table.loc["toy", "where not"] == "R4 dip, R4 minus_n_loses"
    assert table.loc["sharing", "borne out"] == 5 and table.loc["sharing", "not borne out"] == 0
    path = tmp_path / "a.yaml"
    path.write_text("accounts:\n  - {name: x, cite: null, source: s, reading: r,\n"
                    "     dip: {R0: yes, R1: no}, minus_n_loses: {R0: '-'}}\n")
    (x,) = ladder.accounts(path)
    assert x["dip"] == {"R0": YES, "R1": NO} and x["minus_n_loses"] == {"R0": "-"}


def test_the_variants_of_an_arms_runs_carry_their_knobs():
    """``Params.variant``: the arms' runs as built (each recording its arm's registration);
    the arms' GRPO runs without stepwise groups, short and probed at both ends; each model
    rung's knobs on every run; an unknown rung or way of training is named; a regime without a
    guess is refused (the ladder climbs from the scenario's arms)."""
    from rlvr_dynamics.chapters import ladder as chapter

    P = chapter.Params.parse({"seeds": [0, 1], "without_stepwise_steps": 3,
                              "ladder": ["R2", "R3"]})
    hashes = {"three paths": "abc"}
    built = P.variant("as built", hashes)
    assert {c.registration for c in built.values()} == {"abc"} and len(built) == 4
    without = P.variant("without stepwise", hashes)
    assert sorted(without) == [("three paths", "grpo", 0), ("three paths", "grpo", 1)]
    cfg = without["three paths", "grpo", 0]
    assert (cfg.without_stepwise, cfg.steps, cfg.probe_every, cfg.stop_after_crossover,
            cfg.registration) == (True, 3, 3, None, "abc")
    r2, r3, r5 = (P.variant(rung, hashes) for rung in ("R2", "R3", "R5"))
    assert all(c.model == dataclasses.replace(built[key].model, first_tokens=True, tied=False)
               and not c.first_character_only and c.registration == "abc"
               for key, c in r5.items()) and len(r5) == 4
    assert {c.path_prior for c in r5.values()} == {P.regimes["three paths"].prior}
    moved = P.model_copy(update={"rung_priors": {"R5": {"three paths": 0.03}}})
    assert {c.path_prior for c in moved.variant("R5").values()} == {0.03}
    assert moved.variant("R3") == P.variant("R3")  # the other rungs keep the arm's prior
    with pytest.raises(Exception, match=r"rung_priors\['R5'\]: a rung of ladder"):
        chapter.Params.parse({"ladder": ["R5"], "rung_priors": {"R5": {"two paths": 0.03}}})
    with pytest.raises(Exception, match=r"regimes \['two paths'\] have no guess"):
        chapter.Params.parse({"regimes": {"three paths": {"prior": 0.01, "guess": 0.495},
                                          "two paths": {"prior": 0.01}}})
    assert {r for r, _, _ in r2} == {"three paths"} and len(r2) == 4
    assert all(c.readout_only and c.first_character_only for c in r2.values())
    assert all(c.first_character_only and not c.readout_only for c in r3.values())
    assert not any(c.first_character_only for c in built.values())
    # no run of the chapter evaluates the held-out set (it reads the probes alone); the
    # training chapter, which reads it, refuses to go without
    assert {c.eval_every for v in (built, without, r2, r3, r5) for c in v.values()} == {0}
    from rlvr_dynamics.chapters import training
    with pytest.raises(Exception, match="eval_every=0 must be >= 1"):
        training.Params.parse({"eval_every": 0})


def fake_registration(monkeypatch, made: list | None = None):
    """The grid's registrations replaced by a record of the policy they were made from (made:
    each registration's policy, in order)."""
    from rlvr_dynamics.regimes import grid

    def register(cfg, share, D, steps, seeds, profile, labels):
        if made is not None:
            made.append(registry.spec_text(cfg.policy))
        return {"policy": registry.spec_text(cfg.policy)}

    monkeypatch.setattr(grid, "register", register)
    monkeypatch.setattr(grid, "train_share", lambda *a: 0.1)
    return grid


def test_each_rung_is_registered_from_the_base_its_runs_start_from(monkeypatch):
    """``register(P, how)``: R5's arms are registered from R5's own base at the rung's prior
    (the policy its runs start from), R2's, R3's and the runs without stepwise groups from the
    arm's (the same registration as the scenario's); and the runs of each way record the hash
    of the registration made for it."""
    from rlvr_dynamics.chapters import ladder as chapter
    from rlvr_dynamics.rl.registration import content_hash

    grid = fake_registration(monkeypatch)
    monkeypatch.setattr(grid, "obtain_all", lambda runs, *a, **k: runs)
    monkeypatch.setattr(grid, "load_dynamics", lambda cfg: cfg)
    P = chapter.Params.parse({"seeds": [0], "ladder": ["R2", "R5"],
                              "rung_priors": {"R5": {"three paths": 0.03}}})
    arm = chapter.register(P)
    for how in ("R2", "without stepwise"):
        assert chapter.register(P, how) == arm
    r5 = chapter.register(P, "R5")
    assert r5["three paths"] != arm["three paths"]
    assert r5["three paths"]["policy"] == registry.spec_text(
        P.variant("R5")["three paths", "grpo", 0].policy)
    assert "0.03" in r5["three paths"]["policy"]
    dynamics = chapter.train_ways(P)["R5"].dynamics
    assert {cfg.registration for cfg in dynamics.values()} == {content_hash(r5["three paths"])}
    assert P.model_copy(update={"without_stepwise_steps": 0}).variant("without stepwise") \
        == {}
    with pytest.raises(Exception, match="ladder has 'R9'"):
        chapter.Params.parse({"ladder": ["R9"]})
    with pytest.raises(Exception, match="how='R7'"):
        P.variant("R7")


def test_every_run_of_every_way_trains_in_one_pool_longest_first(monkeypatch):
    """``train_ways``: one call of ``obtain_all`` with the runs of every way (as built, without
    stepwise groups, each rung of the ladder), each recording its way's registration, made
    before the pool starts; the longest first: the most steps, then the whole loss before the
    first character's, then GRPO before GRPO-N; each way's runs handed back as its own."""
    from rlvr_dynamics.chapters import ladder as chapter
    from rlvr_dynamics.rl.registration import content_hash

    calls, made = [], []
    grid = fake_registration(monkeypatch, made)

    def obtain_all(runs, *a, **k):
        calls.append((list(runs), len(made)))
        return list(runs)

    monkeypatch.setattr(grid, "obtain_all", obtain_all)
    monkeypatch.setattr(grid, "load_dynamics", lambda cfg: cfg)
    P = chapter.Params.parse({"seeds": [0, 1], "ladder": ["R3", "R5"],
                              "without_stepwise_steps": 3})
    got = chapter.train_ways(P)
    assert len(calls) == 1
    runs, registered = calls[0]
    assert registered == len(made)  # every registration made before the pool
    ways = {how: P.variant(how, {name: content_hash(record) for name, record in
                                    chapter.register(P, how).items()})
            for how in ("as built", "without stepwise", "R3", "R5")}
    assert sorted(map(repr, runs)) == sorted(repr(c) for v in ways.values() for c in v.values())
    assert {how: got[how].dynamics for how in ways} == ways  # each way gets its own runs back
    key = [(-c.steps, c.first_character_only, c.algorithm != "grpo") for c in runs]
    assert key == sorted(key) and key != key[::-1]
    assert runs[0].steps == P.steps and not runs[0].first_character_only
    assert runs[0].algorithm == "grpo" and runs[-1].without_stepwise


def test_the_slopes_figure_draws_every_run_beside_both_mechanisms():
    import matplotlib
    matplotlib.use("Agg")
    from rlvr_dynamics.chapters.ladder import figures

    moves = {"GRPO": [0.1, 0.0, -0.1], "GRPO-N": [0.0, 0.0, -0.2]}
    runs = {("arm", label, seed, how): [{"update": u, "first": dict(zip(
                ("direct", "stepwise", "guess"), ([float(v)] for v in m)))}
             for u, m in enumerate(trajectory(np.array(dz) * (1 + 0.1 * seed), 5))]
            for label, dz in moves.items() for seed in (0, 1)
            for how in ("as built", "without stepwise")}
    t = ladder.log_trajectories(runs, regular=1, window=5)
    assert len(t) == 8 * 5 and t["update"].min() == 1
    tab = t[(t["algorithm"] == "GRPO") & (t["seed"] == 0) & (t["how"] == "as built")]
    assert np.allclose(tab["y"], -0.5 * tab["x"])  # the tabular run lies on its line
    fig = figures.plot_slopes(t, "a title that states the settings")
    assert len(fig.axes) == 2
    for ax in fig.axes:
        assert len(ax.lines) == 4 + 2  # a line a run, and the two mechanisms
    assert "states the settings" in fig._suptitle.get_text()
    other = t[t["how"] == "as built"].assign(regime="arm 2")
    fig = figures.plot_slopes(pd.concat([t, other]), "two arms")
    shown = [ax for ax in fig.axes if ax.get_visible()]
    assert len(fig.axes) == 4 and len(shown) == 3  # a row an arm, a column a way of training
    assert [ax.get_title() for ax in shown] == ["as built", "without stepwise", "as built"]
    assert [ax.get_ylabel().split("\n")[0] for ax in fig.axes[::2]] == ["arm", "arm 2"]


def test_the_ladders_words_name_the_turn_and_what_did_not_run():
    from rlvr_dynamics.chapters.ladder import sentences

    rows = pd.DataFrame([{"rung": r, "algorithm": "GRPO-N", "dip": d, "first stage": v}
                         for r, d, v in (("R0", 0.0, NO), ("R1", 0.0, NO), ("R4", -0.55, YES))])
    slopes = pd.DataFrame([{"regime": "arm", "algorithm": "GRPO-N", "how": "without stepwise",
                            "seeds": 4, "mechanism": TOY,
                            "effect": stats.one_sample([-0.5, -0.45, -0.55, -0.5], 0.25)}])
    text = sentences.ladder_text({"arm": rows}, slopes)
    assert "R4 -55 % (a first stage); the first stage turns at R4, where it appears; slopes:" \
        in text
    pending = rows.assign(**{"first stage": [YES, YES, stats.UNDECIDED]})
    assert ("no decided rung reads otherwise than the first (the rule decides nothing at R4, "
            "where the stage is neither shown nor excluded); slopes:") in sentences.ladder_text(
                {"arm": pending}, slopes)
    assert text.startswith("Slopes are over the first 20 updates, mean over seeds")
    assert "* **arm, GRPO-N**: the dip of P(stepwise), rung by rung: R0 +0 % (none)" in text
    assert f"; slopes: without stepwise groups -0.50 [" in text and f"] *{TOY}*." in text
    assert len([l for l in text.splitlines() if l.startswith("* ")]) == 1  # one per algorithm
    assert "Not run in this build: R2, R3 and R5" in text and "is not answered here" in text
    full = pd.concat([rows, rows.assign(rung="R2"), rows.assign(rung="R3")])
    assert "Not run in this build: R5 (the `cpu-ladder` profile runs it)" in \
        sentences.ladder_text({"arm": full}, slopes)
    assert sentences.ladder_text({}, slopes.iloc[:0]) == ""
    # R5 answers whether a network whose paths share no first token shows both stages
    grpo = dict(rung="R5", algorithm="GRPO", dip=-0.4, crossover=60.0)
    for stage, crossover, said in [(YES, 60.0, "shows both stages: P(stepwise) -40 % at its "
                                                "lowest, then the stepwise path overtakes the "
                                                "direct one at a median step of 60."),
                                   (YES, np.inf, "does not show both stages within its run: "
                                                 "it shows the first stage (P(stepwise) -40 %), "
                                                 "and the median run had not crossed over "
                                                 "within its run (censored); a censored reading, "
                                                 "not a finding that the second stage never "
                                                 "comes."),
                                   (NO, 60.0, "does not show both stages: it shows no first "
                                              "stage"),
                                   (stats.UNDECIDED, np.inf, "does not show both stages within "
                                                             "its run: it may or may not show a "
                                                             "first stage "
                                                             "(its check reads *inconclusive*"),
                                   (stats.UNDECIDED, 60.0, "GRPO may or may not show a first "
                                                           "stage (its check reads "
                                                           "*inconclusive*; P(stepwise) -40 %); "
                                                           "the stepwise path overtakes")]:
        r5 = pd.DataFrame([{**grpo, "first stage": stage, "crossover": crossover}])
        assert ladder.both_stages(r5) == (NO if stage == NO or crossover == np.inf else
                                          YES if stage == YES else stage)
        words = sentences.ladder_text({"arm": pd.concat([full, r5])}, slopes)
        assert "Not run in this build" not in words and said in words, words
        assert "Registered from that base" not in words
    record = {"ladder": {"R1": {"GRPO": {"dip": -0.52, "dip step": 9.0, "crossover": np.inf}}}}
    words = sentences.ladder_text({"arm": pd.concat([full, r5])}, slopes,
                                  {("arm", "R5"): record, ("arm", "R2"): {}})
    assert ("Registered from that base before its runs, the toy on the model's schedule (R1) "
            "predicted P(stepwise) -52 % at step 9 (a first stage by the same rule) and no "
            "crossover within its run (censored).") in words
    assert ladder.both_stages(full) is None


def test_the_accounts_are_counted_apart_where_their_rungs_outcomes_were_known():
    """``against_all``: an account's entries for the rungs nobody had seen (``STRICT``) are
    tallied apart from those it was written knowing, so that a post-hoc entry never counts as
    a prediction borne out; the words say which is which."""
    from rlvr_dynamics.chapters.ladder import sentences

    rows = pd.DataFrame([{"rung": r, "algorithm": "GRPO", "first stage": v}
                         for r, v in (("R0", YES), ("R2", NO), ("R4", NO))])
    account = {"name": "a", "cite": None, "source": "s", "reading": "r.",
               "dip": {r: YES for r in ladder.LADDER}, "minus_n_loses": {}}
    split = ladder.against_all([account], {"arm": rows})["arm"]
    strict, known = split[True].iloc[0], split[False].iloc[0]
    assert (strict["borne out"], strict["not borne out"], strict["where not"]) == (0, 1, "R2 dip")
    assert (known["borne out"], known["not borne out"], known["where not"]) == (1, 1, "R4 dip")
    text = sentences.accounts_text([account], {"arm": split})
    assert "on the rungs nobody had seen: arm: 0 of 1 (not at R2 dip)" in text
    assert "on the rungs it was written knowing: arm: 1 of 2 (not at R4 dip)" in text
    none_strict = ladder.against_all([account], {"arm": rows[rows["rung"] != "R2"]})
    assert "nobody had seen: none of them ran" in sentences.accounts_text([account],
                                                                          none_strict)


def toy_record(steps: int = 60, seeds: int = 40, model_steps: int = 12) -> dict:
    """A registration record as ``prediction.register`` writes its toy parts, made by the
    registration's own functions (``toy_mapping.toy_predictions``, ``toy_rungs.r1``) at a
    small size: the paper's scenario start, G 4, four updates a step."""
    from rlvr_dynamics import toy
    from rlvr_dynamics.regimes import toy_mapping, toy_rungs

    D = toy.ToySettings()
    pi0, r, G, share = [0.6, 0.01, 0.39], [0.45, 0.93, 0.01], 4, 0.5
    batch, per_update, epsilon = 32, 8, 0.2
    return {"inputs": {"pi0": pi0, "r": r, "G": G}, "share": share,
            "toy": {**toy_mapping.toy_settings(D), "tau": D.tau}, "steps": steps,
            "seeds": seeds, "schedule": [batch, per_update, epsilon, model_steps],
            "predictions": toy_mapping.toy_predictions(pi0, r, G, D, steps, seeds),
            "ladder": {"R0": {"GRPO": {"slope": -0.5}, "GRPO-N": {"slope": -0.1}},
                       "R1": toy_rungs.r1(pi0, r, share, G, batch // G, batch // per_update,
                                          epsilon, D, model_steps, seeds, ["GRPO", "GRPO-N"])}}


def test_the_toys_dips_are_read_again_on_the_registered_draws_by_the_models_statistic():
    """``toy_curves`` runs R0 and R1 again from a registration's inputs on the same draws: the
    lowest of their mean over seeds is the registered dip to the last digit, its step the
    registered step. ``toy_dips`` then reads them by ``dips.dip``, the model's statistic: the
    geometric mean of each seed's ratio at its leave-one-out lowest probe, which is not the
    registered statistic (the lowest of the arithmetic mean) -- the check can tell them apart."""
    from rlvr_dynamics import dips
    from rlvr_dynamics.regimes.toy_mapping import OWN

    record = toy_record()
    for label in ("GRPO", "GRPO-N"):
        curves = ladder.toy_curves(record, label)
        mean0 = curves["R0"].mean(axis=1)
        registered = record["predictions"][OWN][label]
        assert mean0.min() / mean0.iloc[0] - 1 == pytest.approx(registered["toy dip"], abs=1e-12)
        assert float(mean0.idxmin()) == registered["toy dip step"]
        mean1 = curves["R1"].mean(axis=1)
        r1 = record["ladder"]["R1"][label]
        assert mean1.min() / mean1.iloc[0] - 1 == pytest.approx(r1["dip"], abs=1e-12)
        assert float(mean1.idxmin()) == r1["dip step"]
        assert curves["R0"].shape == (61, 40) and curves["R1"].shape == (12 * 4 + 1, 40)
    read = ladder.toy_dips(record)
    grpo = read["R0"]["GRPO"]
    assert grpo == dips.dip(ladder.toy_curves(record, "GRPO")["R0"])
    assert grpo.seeds == 40 and -1 < grpo.low <= grpo.estimate <= grpo.high
    assert grpo.fell + grpo.rose <= 40
    assert grpo.estimate != pytest.approx(record["predictions"][OWN]["GRPO"]["toy dip"], abs=1e-3)


def test_every_rung_reads_its_dip_by_one_statistic_and_the_rules_theirs():
    """``rung_rows`` with the toy's dips (``toy_dips``) and model runs that carry the log-scale
    readings (``stages``): each row's ``dip`` is ``dips``' geometric mean with its interval, sign
    count and censoring; the first stage is still read by the registered rules (the toy's
    registered dip, the model's mean fall), shown beside; a median that no run reached is
    censored at the runs' horizon, open above, and R5's ``NO`` rests on it alone."""
    from rlvr_dynamics import dips

    record = toy_record()
    toy_dip = ladder.toy_dips(record)
    logs = np.log([0.3, 0.5, 0.4, 0.35])

    def runs(crossovers, censored_at_last=False):
        return pd.DataFrame({"regime": "arm", "algorithm": "GRPO", "seed": range(4),
                             "fall": 1 - np.exp(logs), "fall step": 20.0,
                             "crossover": crossovers, "last step": 120.0,
                             "log dip": logs, "log dip step": 20.0, "log dip floored": False,
                             "log dip lowest": 120.0 if censored_at_last else 20.0,
                             "log dip last": 120.0})

    measured = {"R5": runs([np.inf, 80.0, np.inf, np.inf], censored_at_last=True),
                "R3": runs([30.0, 40.0, np.inf, 35.0])}
    slopes = pd.DataFrame(columns=["regime", "algorithm", "how", "slope", "low", "high"])
    rows = ladder.rung_rows(record, measured, slopes, "arm", toy_dip).set_index(
        ["rung", "algorithm"])
    assert rows.loc[("R0", "GRPO"), "dip"] == toy_dip["R0"]["GRPO"].estimate
    assert rows.loc[("R1", "GRPO-N"), "dip seeds"] == toy_dip["R1"]["GRPO-N"].values
    assert rows.loc[("R0", "GRPO"), "registered dip"] == record["predictions"][
        ladder.OWN]["GRPO"]["toy dip"]
    r5 = rows.loc[("R5", "GRPO")]
    expected = dips.over_seeds(logs)
    assert r5["dip"] == pytest.approx(expected.estimate)
    assert r5["dip interval"] == pytest.approx((expected.low, expected.high))
    assert (r5["fell"], r5["rose"], r5["dip censored"]) == (4, 0, True)
    assert r5["rule's fall"].estimate == pytest.approx(np.mean(1 - np.exp(logs)))
    assert r5["first stage"] == YES
    assert np.isinf(r5["crossover"]) and np.isinf(r5["crossover interval"][1])
    assert r5["horizon"] == 120.0
    flat = rows.reset_index()
    assert ladder.both_stages(flat) == NO and ladder.censored_no(flat)
    assert not rows.loc[("R3", "GRPO"), "dip censored"]
    assert rows.loc[("R3", "GRPO"), "crossover"] == 35.0
    lo, hi = rows.loc[("R3", "GRPO"), "crossover interval"]
    assert lo <= 35.0 and hi >= 35.0
    finite = measured | {"R5": runs([30.0, 40.0, 50.0, 35.0])}
    flat = ladder.rung_rows(record, finite, slopes, "arm", toy_dip)
    assert ladder.both_stages(flat) == YES and not ladder.censored_no(flat)  # it can fail


def test_the_ladders_table_and_words_show_the_interval_the_signs_and_the_censoring():
    """The page shows what the statistics carry: the log-scale dip with its interval inside
    (-100 %, inf), the sign count and each seed's value, "censored" where the fall was still at
    its lowest at the last probe, the median crossover with its interval or "not within N
    steps (censored)", and R5's NO read as a censored reading; nothing reads "never"."""
    from rlvr_dynamics.chapters.ladder import sentences, shown

    record = toy_record()
    logs = np.log([0.3, 0.5, 0.4, 1.2])
    runs = pd.DataFrame({"regime": "arm", "algorithm": "GRPO", "seed": range(4),
                         "fall": 1 - np.exp(logs), "fall step": 20.0,
                         "crossover": [np.inf, 80.0, np.inf, np.inf], "last step": 120.0,
                         "log dip": logs, "log dip step": 120.0, "log dip floored": False,
                         "log dip lowest": 120.0, "log dip last": 120.0})
    slopes = pd.DataFrame(columns=["regime", "algorithm", "how", "slope", "low", "high",
                                   "effect", "mechanism", "seeds"])
    rows = ladder.rung_rows(record, {"R5": runs}, slopes, "arm", ladder.toy_dips(record))
    html = shown.ladder_table({"arm": rows}).to_html()
    r5 = rows[(rows["rung"] == "R5")].iloc[0]
    low, high = r5["dip interval"]
    assert -1 < low
    assert f"[{100 * low:+.0f} %, {100 * high:+.0f} %]" in html
    assert "3, 1 of 4" in html and "-70, -50, -60, +20 %" in html
    assert "120 (censored)" in html
    assert "not within 120 steps (censored); interval from 80, open above" in html
    assert "never" not in html
    words = sentences.ladder_text({"arm": rows}, slopes)
    assert "3 of 4 seeds fell, 1 rose; censored: still at its lowest at the last probe" in words
    assert "the median run had not crossed over: not within 120 steps (censored)" in words
    assert "never crossed" not in words
