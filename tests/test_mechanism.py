"""The mechanism chapter (issue 51, items 3-6): the clock and the second stage's reading, the
hypotheses' rules, the attribution's reading and the remedy rule, each outcome planted on
synthetic dynamics on either side of its margin; the two-phase registration (phase 1 trains no
run that it judges; phase 2 judges a run only where the plan was committed before it, a replay
labelled); fresh seeds; the parameters' errors. The page runs under the smoke profile in
``test_book``."""
import json

import numpy as np
import pandas as pd
import pytest

from rlvr_dynamics import dips, stats, store
from rlvr_dynamics.chapters import ParameterError
from rlvr_dynamics.chapters import mechanism as chapter
from rlvr_dynamics.chapters.mechanism import sentences
from rlvr_dynamics.profiles import plan as resolve
from rlvr_dynamics.regimes import clock, mechanism, plan
from rlvr_dynamics.rl.config import STARTED
from test_registration import git, repo  # noqa: F401 (the fixture)

M = mechanism.MARGIN


def masses(y, start=(0.6, 0.01, 0.39)):
    """First-character masses (direct, stepwise, guess) whose stepwise log-ratio changes by
    ``y`` after each update (the guess absorbing the rest)."""
    d0, s0, _ = start
    rows = [start]
    for v in y:
        s = s0 * np.exp(v)
        rows.append((d0, s, 1 - d0 - s))
    return np.array(rows)


# --- the clock -----------------------------------------------------------------------------------

def test_the_rate_is_the_slope_of_the_stepwise_log_ratio_and_the_clock_their_ratio():
    u = np.arange(1, 21)
    assert clock.rate(masses(-0.02 * u)) == pytest.approx(-0.02)
    toy = np.stack([masses(-0.08 * u), masses(-0.08 * u)])
    model = [masses(-0.02 * u), masses(-0.03 * u), masses(-0.01 * u)]
    c = clock.clock(model, toy)
    assert c.state == "read" and c.estimate == pytest.approx(0.25)
    assert c.low < 0.25 < c.high
    assert clock.rescaled(46.0, c) == pytest.approx(184.0)
    assert clock.needed_steps(184.0) == 552
    # opposite signs, and an R1 that does not move: no clock
    assert clock.clock([masses(0.02 * u)], toy).state == clock.CANNOT_CALIBRATE
    still = np.stack([masses(0 * u)])
    assert "does not move" in clock.clock(model, still).why
    assert np.isnan(clock.rescaled(46.0, clock.clock(model, still)))


def test_every_reading_of_the_second_stage_is_reachable():
    inf = np.inf
    # half or more crossed: a finite median, stage 2 slow
    s = clock.stage_two([300, 420, inf], [320, 440, 600], [False, False, False], 184.0)
    assert s.outcome == clock.SLOW and s.median.estimate == 420
    # none crossed, every run followed to 3x and stalled
    s = clock.stage_two([inf] * 3, [552] * 3, [True] * 3, 184.0)
    assert s.outcome == clock.STALLED
    # one run still rising: undecided
    assert clock.stage_two([inf] * 3, [552] * 3, [True, True, False], 184.0).outcome \
        == stats.UNDECIDED
    # a run without a crossover that ended one step before 3x: cannot inform
    s = clock.stage_two([inf] * 3, [552, 552, 551], [True] * 3, 184.0)
    assert s.outcome == stats.CANNOT_INFORM and "ended before" in s.why
    assert clock.stage_two([inf] * 3, [552] * 3, [True] * 3, float("nan")).outcome \
        == stats.CANNOT_INFORM


# --- the hypotheses ------------------------------------------------------------------------------

def dip(*values):
    """A dip over seeds whose per-seed relative changes are ``values``."""
    return dips.over_seeds(np.log1p(np.asarray(values, dtype=float)))


LOST, KEPT, MIDDLE = dip(-0.6, -0.5, -0.55), dip(0.1, 0.0, 0.05), dip(-0.6, 0.3, -0.1)


def test_the_rare_path_reading_turns_at_its_margin():
    assert mechanism.rare_path(LOST) == mechanism.LOSES
    assert mechanism.rare_path(KEPT) == mechanism.KEEPS
    assert mechanism.rare_path(MIDDLE) == stats.UNDECIDED
    assert mechanism.rare_path(dip(-0.3)) == stats.FEW_SEEDS
    assert mechanism.rare_path(None) == stats.CANNOT_INFORM
    tight = dip(-(M + 0.02), -(M + 0.021), -(M + 0.019))    # just below the margin: lost
    assert mechanism.rare_path(tight) == mechanism.LOSES
    above = dip(-(M - 0.02), -(M - 0.021), -(M - 0.019))    # just above: kept
    assert mechanism.rare_path(above) == mechanism.KEEPS


def test_every_outcome_of_the_optimizer_hypothesis_is_reachable():
    f = mechanism.optimizer
    assert f(-0.9, 0.0, LOST, KEPT) == mechanism.BORNE_OUT
    assert f(-0.9, 0.0, KEPT, KEPT) == mechanism.NOT_BORNE_OUT
    assert f(-0.9, 0.0, LOST, LOST) == mechanism.NOT_BORNE_OUT
    assert f(-0.9, 0.0, MIDDLE, KEPT) == stats.UNDECIDED
    assert f(-0.9, 0.0, dip(-0.5), KEPT) == stats.FEW_SEEDS
    assert f(-0.1, 0.0, LOST, KEPT) == stats.CANNOT_INFORM   # the toy under SGD keeps it
    assert f(-0.9, -0.5, LOST, KEPT) == stats.CANNOT_INFORM  # the toy under Adam loses it


def test_every_outcome_of_the_later_tokens_hypothesis_is_reachable():
    f = mechanism.later_tokens
    built = {"R4": LOST, "R5": LOST}
    assert f({"R4": LOST, "R5": LOST}, built) == mechanism.BORNE_OUT
    assert f({"R4": LOST, "R5": KEPT}, built) == mechanism.NOT_BORNE_OUT
    assert f({"R4": LOST, "R5": MIDDLE}, built) == stats.UNDECIDED
    assert f({"R4": KEPT, "R5": LOST}, {"R4": KEPT, "R5": LOST}) == mechanism.BORNE_OUT
    assert f({"R4": LOST, "R5": LOST}, {"R4": KEPT, "R5": KEPT}) == stats.CANNOT_INFORM


def test_every_outcome_of_the_whose_negatives_hypothesis_is_reachable():
    f = mechanism.whose
    assert f({"stepwise_wrong": LOST, "guess_wrong": KEPT}, LOST) == (mechanism.BORNE_OUT,
                                                                       ("guess_wrong",))
    assert f({"stepwise_wrong": LOST, "guess_wrong": LOST}, LOST) == (mechanism.NOT_BORNE_OUT,
                                                                       ())
    assert f({"stepwise_wrong": LOST, "guess_wrong": MIDDLE}, LOST)[0] == stats.UNDECIDED
    assert f({"guess_wrong": KEPT}, KEPT) == (stats.CANNOT_INFORM, ())


def attributed(parts):
    return [{"step": 0, "attribution": {"stepwise": {"parts": parts, "before": -4.0,
                                                     "after": -4.1, "total": -0.11}}}]


def test_the_attribution_names_a_culprit_only_below_zero_for_certain():
    runs = [mechanism.parts(attributed({"guess_wrong": -0.3 - e, "stepwise_wrong": -0.1 + e,
                                        "momentum": 0.01}) * 2) for e in (0.0, 0.01, 0.02)]
    assert runs[0]["guess_wrong"] == pytest.approx(-0.6)     # summed over attributed updates
    found, effects = mechanism.culprit(runs)
    assert found == "guess_wrong" and effects["guess_wrong"].high < 0
    assert mechanism.fidelity(attributed({}))[0] == pytest.approx(1.1)
    spread = [{"guess_wrong": v} for v in (-0.3, 0.2, -0.1)]  # interval across zero
    assert mechanism.culprit(spread)[0] is None
    assert mechanism.agreement("b", "guess_wrong") == mechanism.AGREES
    assert mechanism.agreement("a", "guess_wrong") == mechanism.DISAGREES
    assert mechanism.agreement("c", "guess_wrong", ("guess_wrong",)) == mechanism.AGREES
    assert mechanism.agreement("c", "guess_wrong", ()) == mechanism.CANNOT_TELL
    assert mechanism.agreement("a", None) == mechanism.CANNOT_TELL
    assert mechanism.explains(mechanism.BORNE_OUT, mechanism.AGREES)
    assert not mechanism.explains(mechanism.BORNE_OUT, mechanism.DISAGREES)
    assert not mechanism.explains(stats.UNDECIDED, mechanism.AGREES)


def test_the_remedy_rule_follows_its_order_and_its_remedy_every_outcome():
    rule = {"c": "spare", "b": "first", mechanism.NONE: "nthr"}
    assert mechanism.choose_remedy(["b", "c"], rule) == "spare"
    assert mechanism.choose_remedy(["b"], rule) == "first"
    assert mechanism.choose_remedy(["a"], rule) == "nthr"
    assert mechanism.choose_remedy([], {"c": "spare"}) is None
    assert mechanism.remedy({"R4": KEPT, "R5": KEPT}) == mechanism.KEEPS
    assert mechanism.remedy({"R4": KEPT, "R5": LOST}) == mechanism.LOSES
    assert mechanism.remedy({"R4": KEPT, "R5": MIDDLE}) == stats.UNDECIDED
    assert mechanism.remedy({}) == stats.CANNOT_INFORM
    changes = {"spared_negatives": [mechanism.CULPRIT]}
    assert mechanism.resolve(changes, "guess_wrong", ())["spared_negatives"] == ("guess_wrong",)
    assert mechanism.resolve(changes, "guess_wrong", ("direct_wrong",))["spared_negatives"] \
        == ("direct_wrong",)
    with pytest.raises(ValueError, match="named no kind"):
        mechanism.resolve(changes, None, ())


# --- the chapter's runs and parameters -----------------------------------------------------------

@pytest.fixture(scope="module")
def P():
    return chapter.Params.parse(resolve("smoke", ["mechanism"])["mechanism"])


def test_each_item_trains_what_its_hypothesis_needs(P):
    four = chapter.item_four(P, "h")
    assert {k[0] for k in four} >= {"R3 GRPO-N, SGD", "R4 GRPO-N, tokens 2..L",
                                    "R5 GRPO-N, guess_wrong spared"}
    assert four["R3 GRPO-N, SGD", "grpo_n", 7].optimizer == "sgd"
    assert four["R3 GRPO-N, SGD", "grpo_n", 7].first_character_only
    assert four["R5 GRPO-N, tokens 2..L", "grpo_n", 7].after_first_character
    assert four["R5 GRPO-N", "grpo_n", 7].attribution_steps == (0,)
    assert four["R5 GRPO-N", "grpo_n", 7].path_prior == P.r5_prior
    assert all(c.registration == "h" for c in four.values())
    two = chapter.stage_two(P, "h")
    assert {c.steps for c in two.values()} == {P.stage_two_steps}
    cal = chapter.calibration(P)
    assert {c.seed for c in cal.values()} == set(P.calibration_seeds)
    assert all(c.registration is None for c in cal.values())
    five = chapter.item_five(P, {"spared_negatives": ["guess_wrong"]}, "h")
    assert {c.spared_negatives for c in five.values()} == {("guess_wrong",)}


@pytest.mark.parametrize("bad, name", [
    ({"calibration_seeds": [7]}, "calibration_seeds"),
    ({"spared": ["guess_right"]}, "spared"),
    ({"remedy_rule": {"d": "the first character alone"}}, "remedy_rule"),
    ({"remedies": {"x": {"first_character_only": True, "after_first_character": True}}},
     "remedies"),
    ({"attribution_at": [9]}, "attribution_at"),
    ({"phase": "later"}, "phase")])
def test_a_bad_parameter_is_named(bad, name):
    with pytest.raises(ParameterError, match=name):
        chapter.Params.parse(resolve("smoke", ["mechanism"], [f"{k}={json.dumps(v)}"
                                                                for k, v in bad.items()])
                             ["mechanism"])


def test_phase_one_trains_no_run_it_judges_and_refuses_what_it_cannot_register(
        P, tmp_path, monkeypatch):
    monkeypatch.setenv("RLVR_RESULTS", str(tmp_path / "results"))
    asked = []
    record = {"ladder": {"R1": {"GRPO": {"crossover": 46.0}}},
              "predictions": {n: {"GRPO-N": {"toy dip": d}} for n, d in
                              (("SGD", -0.9), ("Adam", 0.0))}, "registered": "x"}
    monkeypatch.setattr(chapter, "predictions", lambda P: {"R5": record, "R4": record})
    monkeypatch.setattr(chapter, "trained", lambda runs, P: asked.extend(runs) or {
        k: tmp_path / f"run{i}" for i, k in enumerate(runs)})
    slow = clock.Clock((-0.01,), -0.04, 0.25, 0.2, 0.3, "read")
    monkeypatch.setattr(chapter, "clocks", lambda P, r, f: {"R5": slow, "R2": slow})
    phase1 = P.model_copy(update={"phase": chapter.REGISTER})
    with pytest.raises(ParameterError, match=r"stage_two_steps=4: .* at least 552"):
        chapter.register(phase1)
    plans = tmp_path / "results" / phase1.profile / chapter.CHAPTER / "plan"
    assert not list(plans.glob("*/plan.json"))                      # nothing registered
    long = phase1.model_copy(update={"stage_two_steps": 552})
    monkeypatch.setattr(plan, "run_before", lambda *a, **k: {7: ["cpu-ladder: ladder"]})
    with pytest.raises(ParameterError, match=r"seeds=\[7\]: seeds run or declared before"):
        chapter.register(long)
    monkeypatch.setattr(plan, "run_before", lambda *a, **k: {})
    recorded, where = chapter.register(long)
    assert where.is_file() and recorded["rescaled crossover"] == {"R5": 184.0, "R2": 184.0}
    assert recorded["run before"] == {} and chapter.seeds_fresh(recorded)
    # phase 1 asked for the calibration runs alone, and reads nothing
    assert {k[0] for k in asked} == {"R5 GRPO, calibration", "R2 GRPO, calibration"}
    assert chapter.read(long, recorded, where) is None
    assert {k[0] for k in asked} == {"R5 GRPO, calibration", "R2 GRPO, calibration"}
    # registered once: read back, never again, whatever is found later
    monkeypatch.setattr(plan, "run_before", lambda *a, **k: {7: ["later"]})
    assert chapter.register(long)[0] == recorded


def test_a_rung_left_out_of_stage_two_is_calibrated_sets_no_horizon_and_trains_nothing(
        P, tmp_path, monkeypatch):
    monkeypatch.setenv("RLVR_RESULTS", str(tmp_path / "results"))
    record = {"ladder": {"R1": {"GRPO": {"crossover": 46.0}}},
              "predictions": {n: {"GRPO-N": {"toy dip": d}} for n, d in
                              (("SGD", -0.9), ("Adam", 0.0))}, "registered": "x"}
    monkeypatch.setattr(chapter, "predictions", lambda P: {"R5": record, "R4": record})
    monkeypatch.setattr(chapter, "trained", lambda runs, P: {
        k: tmp_path / f"run{i}" for i, k in enumerate(runs)})
    monkeypatch.setattr(plan, "run_before", lambda *a, **k: {})
    fast = clock.Clock((-0.04,), -0.04, 1.0, 0.9, 1.1, "read")
    slow = clock.Clock((-0.001,), -0.04, 0.025, 0.02, 0.03, "read")
    monkeypatch.setattr(chapter, "clocks", lambda P, r, f: {"R5": fast, "R2": slow})
    phase1 = P.model_copy(update={"phase": chapter.REGISTER, "stage_two_steps": 138})
    with pytest.raises(ParameterError, match=r"at least 5520 .* stage_two_rungs"):
        chapter.register(phase1)                                    # R2's horizon: refused
    only = phase1.model_copy(update={"stage_two_rungs": ["R5"]})
    recorded, _ = chapter.register(only)
    assert recorded["needed steps"] == {"R5": 138, "R2": 5520}     # R2's need on record
    assert {k[0] for k in chapter.stage_two(only, "h")} == {"R5 GRPO"}
    assert "calibrates R2 only and gives it no time" in sentences.plan_text(recorded, None)
    rows = chapter.verdict_rows({}, pd.DataFrame({"hypothesis": list("abc"), "outcome": "x"}), None,
                                None, "", pd.DataFrame({"way": ["R5 GRPO"], "judged": [True],
                                                          "replay": [False]}))
    assert rows.set_index("decision").loc["3: R2", "outcome"] == chapter.NOT_RUN
    with pytest.raises(ParameterError, match="stage_two_rungs"):
        chapter.Params.parse(resolve("smoke", ["mechanism"], ['stage_two_rungs=["R4"]'])
                             ["mechanism"])


def test_seeds_run_or_declared_before_are_found(tmp_path):
    release, configs, results = tmp_path / "release", tmp_path / "configs", tmp_path / "results"
    run = release / "cpu-ladder" / "training" / "grpo-seed3-abc"
    run.mkdir(parents=True)
    (run / "config.json").write_text(json.dumps({"seed": 3, "model": {"type": "PretrainConfig"}}))
    configs.mkdir()
    (configs / "cpu-x.yaml").write_text("notebooks:\n  ladder: {seeds: [4]}\n"
                                        "  mechanism: {seeds: [5]}\n")
    found = plan.run_before([3, 4, 5, 6], "mechanism", [6], release, configs, results)
    assert found == {3: ["cpu-ladder/training/grpo-seed3-abc"], 4: ["cpu-x: ladder"],
                     6: ["the grid's default seeds"]}
    assert plan.run_before([5, 9], "mechanism", [], release, configs, results) == {}


def test_phase_two_judges_a_run_only_where_the_plan_was_committed_before_it(repo):
    record = plan.register("cpu-mechanism", "mechanism", {"rule": "loses below -20 %"})
    file = plan.record_file("cpu-mechanism", "mechanism", {"rule": "loses below -20 %"})
    before = git(repo, "rev-parse", "HEAD")
    released = repo / "release" / store.relative(file)
    released.parent.mkdir(parents=True)
    released.write_bytes(file.read_bytes())
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "the plan, released")
    after = git(repo, "rev-parse", "HEAD")
    assert plan.committed_in(file, repo) == git(repo, "rev-parse", "--short", "HEAD")

    def begun(name, commit, registration=plan.plan_hash(record)):
        run = store.results_root() / "cpu-mechanism" / "training" / name
        run.mkdir(parents=True)
        (run / STARTED).write_text(json.dumps({"time": "2099-01-01T00:00:00+00:00",
                                               "registration": registration, "commit": commit}))
        return run

    ok = plan.judge(record, file, begun("r1", after), repo)
    assert ok["judged"] and not ok["replay"]
    early = plan.judge(record, file, begun("r0", before), repo)     # the plan not yet committed
    assert early["registered before"] and early["committed before"] is False
    assert not early["judged"]
    dirty = plan.judge(record, file, begun("r2", after + "+changes"), repo)
    assert dirty["committed before"] is None and not dirty["judged"]
    other = plan.judge(record, file, begun("r3", after, "another plan"), repo)
    assert not other["judged"]
    (repo / "release" / "cpu-mechanism/training/r4").mkdir(parents=True)
    (repo / "release" / "cpu-mechanism/training/r4/done.json").write_text("{}")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "r4 released")
    replay = plan.judge(record, file, begun("r4", git(repo, "rev-parse", "HEAD")), repo)
    assert replay["judged"] and replay["replay"]
    # a decision is decided only where every run it reads is judged
    runs = pd.DataFrame([{"way": "R5 GRPO", "judged": True, "replay": False},
                         {"way": "R5 GRPO", "judged": False, "replay": False},
                         {"way": "R2 GRPO", "judged": True, "replay": True}])
    two = {r: clock.stage_two([np.inf], [600], [True], 184.0) for r in ("R5", "R2")}
    hyp = pd.DataFrame({"hypothesis": ["a", "b", "c"], "outcome": [stats.UNDECIDED] * 3})
    rows = chapter.verdict_rows(two, hyp, None, None, stats.CANNOT_INFORM, runs).set_index(
        "decision")
    assert not rows.loc["3: R5", "decided"] and rows.loc["3: R5", "judged"] == 1
    assert rows.loc["3: R2", "decided"] and rows.loc["3: R2", "replays"] == 1
    assert not rows.loc["4 (a)", "decided"]                         # no runs: not decided
