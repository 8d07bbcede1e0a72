"""The regime map chapter on synthetic probes and tables: its knobs reach every run; its
verdicts per regime (``verdict_rows``: each check's outcome, "cannot inform" and too few seeds
included) and the grid of them on the page (``shown.verdicts_table``); the map's summary and
findings, the orderings against the toy, each cell against its registration, the comparisons
between algorithms and the contrasts between regimes, in tables and in words. The synthetic
probes are the library's tests' (``test_regimes_library``)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rlvr_dynamics import stats
from rlvr_dynamics.chapters import ParameterError
from rlvr_dynamics.chapters import regime_map as chapter
from rlvr_dynamics.chapters import sentences as shared  # the scenario's chapters' words
from rlvr_dynamics.chapters.regime_map import sentences
from rlvr_dynamics.chapters.regime_map import shown as displayed  # its tables for people
from rlvr_dynamics.profiles import plan, resolve
from rlvr_dynamics.regimes import crossover, stages, toy_mapping
from rlvr_dynamics.tasks import sums
from test_regimes_library import informs_all, tables

GRPO_BOTH = f"GRPO: {chapter.BOTH}"
"""The verdict grid's row of GRPO's "shrinkage, then expansion" (``shown.verdict_cells``)."""


def decided(rows: pd.DataFrame) -> pd.Series:
    """``verdict_rows``' outcomes by (regime, algorithm, check)."""
    return rows.set_index(["regime", "algorithm", "check"])["outcome"]


# --- the verdicts per regime -------------------------------------------------------------------

@pytest.mark.parametrize("shape, expected", [
    ("shrinks then expands", stats.REPLICATES),
    ("expands at once", "expansion only"),
    ("stalls", "shrinkage only"),
])
def test_every_reading_of_the_two_stages_is_reachable(shape, expected):
    long, runs = tables(shape, noise=0.01)
    informs = informs_all(long)
    rows = chapter.verdict_rows(runs, stages.final_entropy(long), informs)
    outcome = decided(rows)
    assert outcome[shape, "GRPO", chapter.BOTH] == expected, rows
    keeps = outcome[shape, "", chapter.KEEPS]
    assert keeps == (stats.REPLICATES if shape == "expands at once" else stats.OPPOSITE)
    cells = displayed.verdict_cells(rows, informs)  # a check to a row, a regime to a column
    assert cells.loc[GRPO_BOTH, shape] == expected, cells
    assert cells.loc[chapter.KEEPS, shape].startswith(
        stats.REPLICATES if shape == "expands at once" else stats.OPPOSITE)


def test_a_base_at_the_ceiling_cannot_inform_and_does_not_vote():
    long, runs = tables("shrinks then expands", noise=0.01)
    ceiling = {r: (False, "its Pass@1 on the rare-only problems is 100.0 %")
               for r in runs["regime"]}
    rows = chapter.verdict_rows(runs, stages.final_entropy(long), ceiling)
    cells = displayed.verdict_cells(rows, ceiling)
    assert cells.loc[GRPO_BOTH].iloc[0].startswith(stats.CANNOT_INFORM)
    assert "100.0 %" in cells.loc[GRPO_BOTH].iloc[0]  # with why
    grpo = rows[(rows["algorithm"] == "GRPO") & (rows["check"] == chapter.BOTH)]
    assert grpo["outcome"].tolist() == [stats.CANNOT_INFORM]
    assert not rows["votes"].any()  # the map records nothing: the scenario records the claims
    from rlvr_dynamics import verdicts as v
    assert v.combine([stats.CANNOT_INFORM]) == stats.CANNOT_INFORM
    assert v.combine([stats.CANNOT_INFORM, stats.REPLICATES]) == stats.REPLICATES  # no vote


def test_one_seed_is_too_few():
    long, runs = tables("shrinks then expands", seeds=1)
    informs = informs_all(long)
    rows = chapter.verdict_rows(runs, stages.final_entropy(long), informs)
    assert decided(rows)["shrinks then expands", "GRPO", chapter.BOTH] == stats.FEW_SEEDS
    assert displayed.verdict_cells(rows, informs).loc[GRPO_BOTH, "shrinks then expands"] == \
        stats.FEW_SEEDS


def test_the_verdicts_table_shows_every_cell_in_full():
    long, runs = tables("shrinks then expands", noise=0.01)
    informs = informs_all(long)
    rows = chapter.verdict_rows(runs, stages.final_entropy(long), informs)
    html = displayed.verdicts_table(rows, informs).to_html()
    assert "text-align: left" in html and displayed.verdict_cells(rows, informs).loc[
        GRPO_BOTH, "shrinks then expands"] in html


# --- the knobs ---------------------------------------------------------------------------------

def test_the_knobs_reach_every_run():
    P = chapter.Params.parse({"regimes": {"a": {"prior": 0.01, "guess": 0.3, "hard_share": 0.0,
                                                "base_seed": 1}},
                              "seeds": [0], "steps": 30, "probe_every": 5,
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
                              "seeds": [0], "steps": 30})
    runs = P.runs()
    assert sorted(a for r, a, _ in runs if r == "a") == ["nsr", "w_reinforce"]
    assert sorted(a for r, a, _ in runs if r == "b") == ["grpo", "grpo_n"]
    a, b = runs["a", "nsr", 0], runs["b", "grpo", 0]
    assert (a.num_generations, b.num_generations) == (16, 8)
    assert a.generation_batch == b.generation_batch
    with pytest.raises(Exception, match=r"(?s)regimes\['a'\]: .*num_generations=5"):
        chapter.Params.parse({"regimes": {"a": {"prior": 0.02, "G": 5}}})
    with pytest.raises(Exception, match=r"regimes\['a'\].algorithms has 'ppo'"):
        chapter.Params.parse({"regimes": {"a": {"prior": 0.02, "algorithms": ["ppo"]}}})


@pytest.mark.parametrize("regimes, match", [
    ({"a": {"prior": 0.01, "guess": 0.5}}, None),
    ({"a": {"prior": 0.6, "guess": 0.5}}, "prior \\+ guess < 1"),
    ({"a": {"guess": 0.5}}, "needs a prior"),
])
def test_a_regimes_habits_are_checked_before_any_run(regimes, match):
    """A regime's guess needs a prior, and the two leave the direct path some mass (the checks
    of an arm against its control are the scenario chapter's: ``test_scenario``)."""
    kw = {"regimes": regimes, "seeds": [0], "steps": 30}
    if match is None:
        chapter.Params.parse(kw)
    else:
        with pytest.raises(Exception, match=match):
            chapter.Params.parse(kw)


def test_the_figures_settings_name_each_regimes_own_group_size():
    P = chapter.Params.parse(plan("smoke", ["regime_map"])["regime_map"])
    T = P.training  # the training chapter's settings, which the grid runs with
    hard = {"test": np.array([True, False, True])}
    text = shared.regime_settings(P, hard)
    assert (f"(G per regime where it differs: 8 in 'G 8, NSR', at the same {T.generation_batch} "
            "rollouts per step)") in text
    plain = P.model_copy(update={"regimes": {k: v for k, v in P.regimes.items() if v.G is None}})
    assert "G per regime" not in shared.regime_settings(plain, hard)
    assert P.arms() == ["three paths", "G 8, NSR"]  # the regimes with a guess, in order


# --- the map, the orderings, each cell against its registration, the contrasts -----------------

def test_the_summary_counts_the_seeds_and_shows_numbers_for_people():
    """Per regime and algorithm: seeds crossed over out of all and their steps; on the page,
    floating-point residue (a standard error of 1.9e-123, a toy dip of -1.1e-16) reads 0 and a
    toy that never crosses reads ∞, while a real number keeps its digits."""
    _, runs = tables("shrinks then expands")
    table = runs.assign(**{"pi0(a2)": 0.05, "pi0(a3)": 0.0001, "r(a1)": 0.25, "r(a2)": 1.0,
                           "toy expansion": np.inf, "toy dip": -1.110e-16})
    table.loc[table["algorithm"] == "GRPO", "noise"] = 1.887e-123
    table.loc[(table["algorithm"] == "GRPO-N") & (table["seed"] == 0), "crossover"] = np.inf
    summary = stages.summary(table)
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
    # a run that did not cross reads as censored at its last probe, not as "never" (issue 51)
    assert cells["GRPO-N"][label["step of crossover"]] == "> 50, 40, 40"
    assert cells["GRPO-N"][label["median crossover"]] == "40 [40, open above]"
    assert cells["GRPO"][label["median crossover"]] == "40 [40, 40]"
    assert cells["GRPO"][label["dip of P(stepwise)"]] == "-60 % [-60 %, -60 %]"
    assert cells["GRPO"][label["fell, rose (seeds)"]] == "3, 0"
    assert cells["GRPO"][label["depth (mean)"]] == f"{grpo['depth (mean)']:.3g}"
    assert "<b>se</b>: the probe's own standard error, points" in \
        displayed.summary_table(summary).to_html()  # the legend under the table
    assert "e-" not in shown[2] + shown[3]


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
            "100 steps, first in common, GRPO (step 6); no seed crossed within its run (censored) "
            "in 0: none.") in text
    assert ("Pass@64 on the rare-path-only problems fell more than 2 points below the base (mean "
            "over seeds) in 4 of 4 cells: common, GRPO (-3.0)") in text
    assert "above the base in 0 cells and below it in 0; 2 runs stalled (rare, GRPO; rare, GRPO-N)" in text
    assert "the LM orders the same way: GRPO 1 of 1; GRPO-N 1 of 1" in text
    shallow = table.assign(depth=-1.0, gain=-5.0, crossover=np.inf, stalled=False)
    text = sentences.findings_text(shallow, 100, 10)
    assert ("in the median run of 0 of 4 cells within 100 steps; no seed crossed within its run "
            "(censored) in 4:") in text
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


def test_the_lm_follows_the_optimizer_whose_ordering_it_shares():
    rows = [{"regime": regime, "algorithm": algo, "seed": s, "crossover": t}
            for regime, times in (("a", {"GRPO": 20.0, "GRPO-N": 50.0}),
                                  ("b", {"GRPO": np.inf, "GRPO-N": np.inf}))
            for algo, t in times.items() for s in range(3)]
    toy_times = {"a": {"Adam": {"GRPO": 30.0, "GRPO-N": 20.0},
                       "SGD": {"GRPO": 30.0, "GRPO-N": 60.0}},
                 "b": {"Adam": {"GRPO": np.inf, "GRPO-N": np.inf},
                       "SGD": {"GRPO": 30.0, "GRPO-N": 31.0}}}
    orders = toy_mapping.orderings(pd.DataFrame(rows), toy_times, 10)
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
    orders = toy_mapping.orderings(pd.DataFrame(rows), toy_times, 10)
    assert orders.loc["a", "follows"] == ()
    assert displayed.ordering_table(orders).loc["a", "the LM follows"] == "none"
    assert sentences.ordering_text(orders).startswith(
        "GRPO-N's time to crossover against GRPO's, the LM's ordering matches the toy's under "
        "Adam in 1 of 2, under SGD in 0 of 2")
    toy_times["b"] = {o: {"GRPO": np.nan, "GRPO-N": np.nan} for o in ("Adam", "SGD")}
    orders = toy_mapping.orderings(pd.DataFrame(rows), toy_times, 10)
    assert orders.loc["b", "follows"] == ()  # a base outside the toy's scenario follows none
    assert displayed.ordering_table(orders).loc["b", "toy, SGD"] == "outside the toy"
    assert sentences.ordering_text(orders).endswith(
        "under SGD in 0 of 2 regimes (1 outside the toy's scenario).")


def test_the_cell_checks_and_comparisons_in_words_follow_their_numbers():
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
        resolve("smoke", "regime_map", {"contrasts": [["G 4", "nowhere"]]})


def test_the_verdict_rules_and_the_ordering_state_their_constants():
    """The rules of the verdicts per regime and of the ordering against the toy, stated with
    the values of the constants that decide them."""
    rules = sentences.verdict_rules()
    assert f"a {100 * stats.CONFIDENCE:.0f} % Student-t interval" in rules
    assert f"({stages.SHRINK_MARGIN:g} points of Pass@k, `SHRINK_MARGIN`;" in rules
    assert f"{stages.ENTROPY_MARGIN:g} nats, `ENTROPY_MARGIN`" in rules
    assert f"outside {stats.BOUNDS[0]:g}-{stats.BOUNDS[1]:g} %" in rules
    assert (f"the toy's within {100 * toy_mapping.TOY_SAME:.0f} %."
            in sentences.same_ordering_text())


def test_a_change_that_rounds_to_nothing_has_no_minus_sign():
    from rlvr_dynamics.chapters.style import rounded
    assert "{:+.0f} %".format(-0.3) == "-0 %"  # what the page showed
    assert rounded("{:+.0f} %", -0.3) == "+0 %" and rounded("{:.0f}", -0.2) == "0"
    assert rounded("{:+.1f}", -0.04) == "+0.0" and rounded("{:+.0f} %", -0.6) == "-1 %"
    assert rounded("{:.2f}", -12.0) == "-12.00"



def test_each_verdict_carries_its_seeds_and_their_signs():
    """Issue 51: beside each interval, the per-seed values the check reads and how many lie
    above and below 0, in the row and in its cell; a check without per-seed values (the
    two stages together) shows none."""
    long, runs = tables("shrinks then expands", noise=0.01)
    informs = informs_all(long)
    rows = chapter.verdict_rows(runs, stages.final_entropy(long), informs)
    grpo = runs[runs["algorithm"] == "GRPO"]
    shrink = rows[(rows["algorithm"] == "GRPO") & (rows["check"] == chapter.SHRINKAGE)].iloc[0]
    assert shrink["per seed"] == tuple(grpo["depth"]) and shrink["signs"] == (0, 3)
    both = rows[(rows["algorithm"] == "GRPO") & (rows["check"] == chapter.BOTH)].iloc[0]
    assert both["per seed"] is None and both["signs"] is None
    cells = displayed.verdict_cells(rows, informs)
    assert cells.loc[f"GRPO: {chapter.SHRINKAGE}"].iloc[0].endswith(
        "; seeds above 0: 0, below: 3)")
    assert "seeds above 0" not in cells.loc[GRPO_BOTH].iloc[0]
    up = runs.assign(depth=runs["depth"].abs())
    rows = chapter.verdict_rows(up, stages.final_entropy(long), informs)
    shrink = rows[(rows["algorithm"] == "GRPO") & (rows["check"] == chapter.SHRINKAGE)].iloc[0]
    assert shrink["signs"] == (3, 0)  # the count follows the values
