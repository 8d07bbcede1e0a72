"""The scenario chapter's decisions, from its runs alone (no page rendered): each check of
``verdict_rows`` flips with a planted outcome on either side of its margin, and the closing
chapter's record votes with GRPO's decision only."""
import numpy as np
import pandas as pd
import pytest

from rlvr_dynamics import stats
from rlvr_dynamics.chapters import scenario as chapter
from rlvr_dynamics.regimes.scenario import FALL_MARGIN, RISE_MARGIN

SEEDS = 4
JITTER = np.array([-0.01, 0.0, 0.01, 0.005])


def runs(arm_fall: float, control_fall: float, gain: float, grpo_n_gain: float = 0.0
         ) -> pd.DataFrame:
    """The stages' rows of an arm and its control, GRPO and GRPO-N, four seeds each: the arm's
    GRPO falls by ``arm_fall`` (relative) and gains ``gain`` points; GRPO-N gains
    ``grpo_n_gain``."""
    rows = []
    for regime, fall in (("arm", arm_fall), ("control", control_fall)):
        for algo, g in (("GRPO", gain), ("GRPO-N", grpo_n_gain)):
            for s in range(SEEDS):
                rows.append({"regime": regime, "algorithm": algo, "seed": s,
                             "fall": fall + JITTER[s], "gain": g + 10 * JITTER[s],
                             "k": 16, "start": 40.0, "end": 40.0 + g + 10 * JITTER[s]})
    return pd.DataFrame(rows)


INFORMS = {"arm": (True, ""), "control": (True, "")}


def decide(table: pd.DataFrame, same_start: bool = True, informs=INFORMS) -> pd.DataFrame:
    rows = chapter.verdict_rows(table, {"arm": "control"}, informs,
                                {"arm": (same_start, "" if same_start else "apart")})
    return rows.set_index(["claim", "algorithm", "check"])


def outcome(rows: pd.DataFrame, check: str, algorithm: str = "GRPO",
            claim: str = "lm_two_stages") -> str:
    return rows.loc[(claim, algorithm, check), "outcome"]


def test_every_check_carries_its_statistic_interval_margin_and_outcome():
    rows = decide(runs(0.6, 0.0, 8.0))
    assert list(chapter.verdict_rows(runs(0.6, 0.0, 8.0), {"arm": "control"}, INFORMS,
                                     {}).columns) == chapter.ROWS
    stage1 = rows.loc[("lm_two_stages", "GRPO", "stage 1")]
    assert stage1["estimate"] == pytest.approx(0.6 + JITTER.mean())
    assert stage1["low"] < stage1["estimate"] < stage1["high"]
    assert stage1["margin"] == FALL_MARGIN and stage1["outcome"] == stats.REPLICATES
    assert outcome(rows, chapter.BOTH) == stats.REPLICATES


@pytest.mark.parametrize("fall, expected", [(FALL_MARGIN + 0.3, stats.REPLICATES),
                                            (FALL_MARGIN - 0.15, stats.NO_EFFECT),
                                            (-FALL_MARGIN - 0.3, stats.OPPOSITE)])
def test_stage_one_turns_on_its_margin(fall, expected):
    rows = decide(runs(fall, 0.0, 8.0))
    assert outcome(rows, "stage 1") == expected
    assert (outcome(rows, chapter.BOTH) == stats.REPLICATES) == (expected == stats.REPLICATES)


@pytest.mark.parametrize("control, expected", [(0.0, stats.REPLICATES),
                                               (0.6, stats.NO_EFFECT)])
def test_the_fall_must_be_the_bad_paths_doing(control, expected):
    rows = decide(runs(0.6, control, 8.0))
    assert outcome(rows, "against the control") == expected
    assert (outcome(rows, chapter.BOTH) == stats.REPLICATES) == (expected == stats.REPLICATES)
    apart = decide(runs(0.6, control, 8.0), same_start=False)
    assert outcome(apart, "against the control") == stats.CANNOT_INFORM
    assert outcome(apart, chapter.BOTH) == stats.REPLICATES  # the unmatched check does not vote


@pytest.mark.parametrize("gain, expected", [(RISE_MARGIN + 3, stats.REPLICATES),
                                            (0.0, stats.NO_EFFECT),
                                            (-RISE_MARGIN - 3, stats.OPPOSITE)])
def test_stage_two_turns_on_its_margin(gain, expected):
    rows = decide(runs(0.6, 0.0, gain))
    assert outcome(rows, "stage 2") == expected
    assert (outcome(rows, chapter.BOTH) == stats.REPLICATES) == (expected == stats.REPLICATES)


@pytest.mark.parametrize("grpo_n, expected", [(0.0, stats.REPLICATES),
                                              (-RISE_MARGIN - 6, stats.OPPOSITE)])
def test_grpo_n_holds_the_base_turns_on_its_margin(grpo_n, expected):
    rows = decide(runs(0.6, 0.0, 8.0, grpo_n))
    assert outcome(rows, "GRPO-N holds the base", "", "large_k") == expected


def test_a_base_that_cannot_inform_votes_on_nothing():
    rows = decide(runs(0.6, 0.0, 8.0), informs={"arm": (False, "at the ceiling"),
                                                 "control": (True, "")})
    assert outcome(rows, chapter.BOTH) == stats.CANNOT_INFORM
    assert set(rows.xs("large_k")["outcome"]) == {stats.CANNOT_INFORM}


def test_the_record_votes_with_grpos_decision_and_shows_grpo_ns_beside():
    table = runs(0.6, 0.0, 8.0)
    rows = chapter.verdict_rows(table, {"arm": "control"}, INFORMS, {})
    record = {r["claim"]: r for r in chapter.record_rows(rows, {"lm_two_stages": "x",
                                                                "large_k": "y"})}
    two = record["lm_two_stages"]
    assert [v for _, v in two["checks"]] == [stats.REPLICATES]
    assert two["checks"][0][0].startswith("arm, GRPO: ")
    assert [n.split(":")[0] for n, _ in two["also"]] == ["arm, GRPO-N"]
    assert {n.split(": ")[1] for n, _ in record["large_k"]["checks"]} == {
        "GRPO-N holds the base", "the base holds GRPO", "GRPO-N above GRPO"}
    # a planted opposite stage 1 in GRPO's rows flips the recorded verdict
    flipped = chapter.verdict_rows(runs(-0.6, 0.0, 8.0), {"arm": "control"}, INFORMS, {})
    again = {r["claim"]: r for r in chapter.record_rows(flipped, {"lm_two_stages": "x",
                                                                  "large_k": "y"})}
    assert [v for _, v in again["lm_two_stages"]["checks"]] == [stats.OPPOSITE]


def test_each_claim_is_decided_on_each_base_and_a_base_that_disagrees_is_seen():
    """Two bases, each an arm and its control: where both bases' runs show the two stages the
    claim replicates on each; where the second base's stage 1 is opposite, its column says so
    and the base-0 column is unchanged (the check can fail)."""
    from rlvr_dynamics.chapters.scenario import sentences

    def two_bases(second_fall: float) -> pd.DataFrame:
        a, b = runs(0.6, 0.0, 8.0), runs(second_fall, 0.0, 8.0)
        b["regime"] = b["regime"].map({"arm": "arm 1", "control": "control 1"})
        both = pd.concat([a, b])
        return chapter.verdict_rows(both, {"arm": "control", "arm 1": "control 1"},
                                    {**INFORMS, "arm 1": (True, ""), "control 1": (True, "")},
                                    {})

    seeds = {"arm": 0, "arm 1": 1}
    agree = chapter.by_base(two_bases(0.6), seeds)
    assert list(agree.columns) == [0, 1]
    assert agree.loc["lm_two_stages"].tolist() == [stats.REPLICATES, stats.REPLICATES]
    assert "the same on every base" in sentences.bases_text(agree)
    differ = chapter.by_base(two_bases(-0.6), seeds)
    assert differ.loc["lm_two_stages"].tolist() == [stats.REPLICATES, stats.OPPOSITE]
    assert "does not hold on every base" in sentences.bases_text(differ)
    one = chapter.by_base(two_bases(-0.6)[lambda r: r["arm"] == "arm"], seeds)
    assert list(one.columns) == [0] and "one base" in sentences.bases_text(one)


def test_the_scenario_needs_its_arms_and_controls():
    with pytest.raises(Exception, match="controls must name at least one arm"):
        chapter.Params.parse({"controls": {}})
    with pytest.raises(Exception, match=r"regimes \['extra'\] are neither an arm"):
        chapter.Params.parse({"regimes": {"three paths": {"prior": 0.01, "guess": 0.495},
                                          "two paths": {"prior": 0.01},
                                          "extra": {"prior": 0.02}}})


# --- the rules on synthetic probes (``test_regimes_library.scenario_runs``) --------------------

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
    """``regimes.scenario.verdict`` reaches every verdict from probes of an arm and its
    control; ``verdict_rows`` decides with it, GRPO's decision recorded (``record_rows``) and
    GRPO-N's beside it, and the page's table shows the same outcome."""
    from rlvr_dynamics.chapters.scenario import sentences, shown
    from rlvr_dynamics.regimes.scenario import verdict
    from test_regimes_library import scenario_runs

    table = scenario_runs(shape)
    grpo = table["algorithm"] == "GRPO"
    v = verdict(table[(table["regime"] == "arm") & grpo],
                table[(table["regime"] == "control") & grpo])
    assert tuple(v["checks"].values()) == checks and v["verdict"] == expected, v
    blind = verdict(table[table["regime"] == "arm"], table[table["regime"] == "control"],
                    informative=False)
    assert blind["verdict"] == stats.CANNOT_INFORM
    rows = chapter.verdict_rows(table, {"arm": "control"}, INFORMS, {})
    row, large_k = chapter.record_rows(rows, sentences.ours(table, {"arm": "control"}))
    assert large_k["claim"] == "large_k" and len(large_k["checks"]) == 3
    assert [v for _, v in row["checks"]] == [expected]  # GRPO decides, GRPO-N beside it
    assert len(row["also"]) == 1 and row["also"][0][0].startswith("arm, GRPO-N")
    assert shown.verdict_table(rows, "lm_two_stages").data.loc[("arm", "GRPO"), chapter.BOTH] \
        == f"{expected} (votes)"


@pytest.mark.parametrize("regimes, controls, match", [
    ({"a": {"prior": 0.01, "guess": 0.5}, "b": {"prior": 0.01}}, {"a": "b"}, None),
    ({"a": {"prior": 0.01, "guess": 0.5}, "b": {"prior": 0.01}}, {"a": "c"}, "both must be"),
    ({"a": {"prior": 0.01, "guess": 0.5}, "b": {"prior": 0.02}}, {"a": "b"}, "without its guess"),
    ({"a": {"prior": 0.01, "guess": 0.5}, "b": {"prior": 0.01}}, {"b": "a"}, "without its guess"),
])
def test_the_scenario_is_checked_before_any_run(regimes, controls, match):
    """Each arm's control is a regime, the arm's without its guess (a regime's own habits are
    checked by every chapter's grid: ``test_regime_map``)."""
    kw = {"regimes": regimes, "controls": controls, "seeds": [0], "steps": 30}
    if match is None:
        chapter.Params.parse(kw)
    else:
        with pytest.raises(Exception, match=match):
            chapter.Params.parse(kw)


def test_both_stages_claims_no_margin_of_its_own():
    """The decisive check combines the checks above it: its row carries no margin, and the
    page's legend says it reads theirs (it once gave it stage 1's)."""
    from rlvr_dynamics.chapters.scenario import BOTH
    from rlvr_dynamics.chapters.scenario.shown import verdict_table
    rows = chapter.verdict_rows(runs(0.6, 0.0, 8.0), {"arm": "control"}, INFORMS, {})
    both = rows[rows["check"] == BOTH]
    assert len(both) and both["margin"].isna().all()
    legend = verdict_table(rows, "lm_two_stages").to_html()
    assert "the margins of those checks" in legend
    assert f"margin {FALL_MARGIN:g}" in legend                    # stage 1 keeps its own
