"""The pretrained chapter's protocol (``chapters.pretrained.plan``) and its runs in parts: the
looks' bounds, the floor, the stopping rule at every outcome, a judgement refused for a run
that began without the protocol committed, and one job per run that trains it and evaluates
it, a part's time running out between them. Each check is shown false too."""
import json

import pandas as pd
import pytest

from rlvr_dynamics import power, store
from rlvr_dynamics.chapters import pretrained as chapter
from rlvr_dynamics.chapters.pretrained import plan
from rlvr_dynamics.rl.config import STARTED
from test_registration import git, repo  # noqa: F401 (the fixture)
from rlvr_dynamics.stats import FEW_SEEDS, NO_EFFECT, OPPOSITE, REPLICATES, UNDECIDED


def test_the_looks_carry_the_spending_bounds_and_their_confidence():
    three, five = plan.looks(5, [3, 5])
    assert (three["seeds"], three["fraction"], five["fraction"]) == (3, 0.6, 1.0)
    assert [three["bound"], five["bound"]] == pytest.approx(
        list(power.spending_bounds([0.6, 1.0])), abs=1e-6)
    assert three["confidence"] > 0.99 > five["confidence"] > 0.95   # 2.67 and 1.98
    assert plan.looks(3, [3]) == [{"seeds": 3, "fraction": 1.0, "bound": pytest.approx(1.96, abs=1e-3),
                                   "confidence": pytest.approx(0.95, abs=1e-5)}]
    for bad in ([3, 4], [1, 5], [5, 3, 5], []):
        with pytest.raises(ValueError, match="looks must increase"):
            plan.looks(5, bad)


def what(**changes):
    base = {"seeds": [0, 1, 2, 3, 4], "steps": 96, "mid-curve k": {"1-digit x 3": 16},
            "probe": {"samples": 16, "problems": 16, "every": 24}}
    return {**base, **changes}


def test_the_floor_is_named_where_the_protocol_falls_below_it():
    assert plan.shortfalls(what()) == []
    said = plan.shortfalls(what(seeds=[0, 1, 2], steps=24, probe={"samples": 4}))
    assert [s.split(" ")[0] for s in said] == ["3", "24", "the"]
    assert "mid-curve k of {'1-digit x 3': 16}" in said[2]


def test_the_profiles_protocol_meets_issue_52s_floor():
    """cpu-smollm2's design: at least 5 seeds and 96 steps, looks at 3 and 5, evaluation
    every 16 steps, the probe at 16 samples (the triples' mid-curve k measured in lab
    notebook 43)."""
    P = chapter.Params.parse({"prompt": "system+example", "boxed_only": True})
    table = pd.DataFrame({"mid-curve k": [2, 16]},
                         index=pd.MultiIndex.from_tuples([(1, 2), (1, 3)]))
    record = chapter.protocol_of(P, table)
    assert record["below the floor"] == [] and [x["seeds"] for x in record["looks"]] == [3, 5]
    assert (record["steps"], record["eval_every"], len(record["runs"])) == (96, 16, 10)
    with pytest.raises(chapter.ParameterError, match="parameter probe_samples=8 is below"):
        chapter.protocol_of(P.model_copy(update={"probe_samples": 8}), table)


@pytest.mark.parametrize("looks, stops, done", [
    ([{"a": REPLICATES, "b": OPPOSITE}], {"a": 0, "b": 0}, True),          # both at look 1
    ([{"a": UNDECIDED, "b": NO_EFFECT}, {"a": REPLICATES, "b": UNDECIDED}],
     {"a": 1, "b": 0}, True),                                              # a later, b first
    ([{"a": FEW_SEEDS}, {"a": UNDECIDED}], {"a": 1}, False),               # open to the end
    ([{"a": "partly"}, {"a": OPPOSITE}], {"a": 0}, True),                  # never read again
    ([{"a": "does not replicate"}], {"a": 0}, True),
])
def test_a_claim_stops_at_its_first_decided_look(looks, stops, done):
    assert plan.stopped(looks) == stops
    assert plan.every_claim_stopped(looks) is done


def test_each_claims_outcome_is_reachable_through_the_looks(monkeypatch):
    """``outcomes`` combines every level's voting checks at a look's confidence, and a planted
    verdict on either side of a claim's margin gives each outcome."""
    from rlvr_dynamics.comparison.claims import Check, Claimed, Decided
    from rlvr_dynamics.stats import Effect

    def decided_at(margin_side):
        def fake(P, recs, last, confidence):
            effect = Effect(margin_side * 3.0, 0.5 / confidence, 4, 2.0)
            d = Decided(Claimed("x", {}, []), "paper", [(Check("GRPO-N", "GRPO", effect), "")])
            return {"large_k": [("l1", d), ("l2", d)]}
        return fake

    P = chapter.Params.parse({"prompt": "system+example", "boxed_only": True})
    for side, verdict in ((1, REPLICATES), (-1, OPPOSITE), (0, NO_EFFECT)):
        monkeypatch.setattr(chapter, "decided_levels", decided_at(side))
        assert chapter.outcomes(P, {}, 3, 0.99)["large_k"] == verdict
    monkeypatch.setattr(chapter, "decided_levels", lambda P, recs, last, confidence: {
        "large_k": [("l1", Decided(Claimed("x", {}, []), "p", [(Check(
            "a", "b", Effect(1.9, 0.5, 4, 2.0)), "")]))]})
    assert chapter.outcomes(P, {}, 3, 0.99)["large_k"] == UNDECIDED  # straddles the margin


def test_the_protocol_outlives_the_chapters_marker(tmp_path, monkeypatch):
    """The chapter's marker begins afresh when it finishes: the protocol the runs recorded must
    still be read back (not registered again with a new time and hash)."""
    monkeypatch.setenv("RLVR_RESULTS", str(tmp_path))
    record, path = plan.register(what(), "p")
    marker = chapter.marker("p")
    marker.begin(fresh=True)
    marker.finish({})
    assert plan.entry("p", what()).done and plan.register(what(), "p")[0] == record
    assert not path.is_relative_to(marker.path)


def test_a_run_begun_before_the_protocol_was_committed_is_refused(repo):
    """Phase 2 judges only runs that recorded the protocol's hash and began from a commit whose
    results release held it byte for byte; the others are named and the judgement refused."""
    record, path = plan.register(what(), "p")
    before = git(repo, "rev-parse", "HEAD")
    assert not plan.committed_at(path, before, repo)          # phase 1: no run may begin
    copy = repo / "release" / path.relative_to(store.results_root())
    copy.parent.mkdir(parents=True)
    copy.write_bytes(path.read_bytes())
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "the protocol")
    after = git(repo, "rev-parse", "HEAD")
    assert plan.committed_at(path, after, repo) and plan.committed_in(path, repo) == after

    def run(name, commit, key=plan.hash_of(record)):
        folder = store.results_root() / "p" / "training" / name
        folder.mkdir(parents=True)
        (folder / STARTED).write_text(json.dumps({"time": "2100-01-01T00:00:00+00:00",
                                                  "registration": key, "commit": commit}))
        return folder

    good, early, dirty, other = (run("good", after), run("early", before),
                                 run("dirty", after + "+changes"), run("other", after, "k"))
    reasons = plan.admitted(record, path, [good, early, dirty, other], True, repo)
    assert reasons["good"] == ""
    assert "whose results release did not hold the protocol" in reasons["early"]
    assert "uncommitted changes" in reasons["dirty"]
    assert "did not record this protocol's hash" in reasons["other"]
    plan.judge({"good": ""})
    with pytest.raises(plan.Refused, match="3 run"):
        plan.judge(reasons)
    # by the store's times alone (committed False: a smoke build) the early run is admitted
    assert plan.admitted(record, path, [early], False, repo) == {"early": ""}


def test_a_part_evaluates_every_run_it_finished_and_begins_none_after_its_time(monkeypatch,
                                                                                tmp_path):
    """One job per run: train, then evaluate. A part whose time runs out after the first run
    evaluates that run, begins no other, and stops with PartOver once every job is done."""
    P = chapter.Params.parse({"prompt": "system+example", "boxed_only": True, "workers": 1,
                              "seeds": [0, 1], "looks": [2]})
    grid = chapter.ordered(chapter.runs(P, "k"))
    assert list(grid) == [("grpo", 0), ("grpo_n", 0), ("grpo", 1), ("grpo_n", 1)]
    trained, evaluated = [], []

    def obtain_run(cfg, where, inline):
        if trained:       # the first run took the part's time
            raise store.PartOver(f"{cfg.algorithm} seed {cfg.seed} not begun")
        trained.append((cfg.algorithm, cfg.seed))
        return tmp_path / f"{cfg.algorithm}-{cfg.seed}"

    monkeypatch.setattr(chapter, "obtain_run", obtain_run)
    monkeypatch.setattr(chapter, "evaluate_models",
                        lambda models, *a, **k: evaluated.extend((m.label, m.seed) for m in models))
    with pytest.raises(store.PartOver, match="3 of 4 runs not begun: grpo_n seed 0"):
        chapter.train_and_evaluate(P, grid, "p", inline=True)
    assert trained == [("grpo", 0)] and evaluated == [("GRPO", 0)]
    # with time left every run is trained and evaluated (the check can fail)
    trained.clear(), evaluated.clear()
    monkeypatch.setattr(chapter, "obtain_run", lambda cfg, where, inline: (
        trained.append((cfg.algorithm, cfg.seed)), tmp_path / cfg.algorithm)[1])
    folders = chapter.train_and_evaluate(P, grid, "p", inline=True)
    assert len(trained) == len(evaluated) == len(folders) == 4


def test_the_other_grader_reads_the_same_texts_again():
    recs = {("paper", "b", "GRPO", 0): pd.DataFrame({
        "text": ["so 7", "\\boxed{7}", "\\boxed{8} 7"], "gold": ["7", "7", "7"],
        "answer": [None, "7", "8"], "correct": [False, True, False]})}
    again = chapter.regraded(recs, False)[("paper", "b", "GRPO", 0)]
    assert again["correct"].tolist() == [True, True, False]
    assert again["answer"].tolist() == ["7", "7", "8"]
    paper = chapter.regraded(recs, True)[("paper", "b", "GRPO", 0)]
    assert paper["correct"].tolist() == [False, True, False]


def test_a_look_reads_the_base_and_the_first_seeds():
    recs = {(s, "b", m, seed): None for s in ("paper",) for m, n in (("Base", 2), ("GRPO", 5))
            for seed in range(n)}
    assert sorted(k[2:] for k in chapter.at_look(recs, 3)) == [
        ("Base", 0), ("Base", 1), ("GRPO", 0), ("GRPO", 1), ("GRPO", 2)]
