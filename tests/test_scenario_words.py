"""The scenario chapter's words, tables and figures, written from its numbers (synthetic probes
of an arm and its control, ``test_regimes_library.scenario_runs``): the scenario in words
against its verdict rows, the toy's registered prediction beside the LM, the intro's reading of
the runs' length, and each run's crossover against the toy's registered one."""
from __future__ import annotations

import numpy as np
import pandas as pd

from rlvr_dynamics.chapters import scenario as chapter
from rlvr_dynamics.chapters import shown as shared  # the scenario's chapters' tables
from rlvr_dynamics.chapters.scenario import figures, sentences
from rlvr_dynamics.chapters.scenario import shown as displayed  # its tables for people
from rlvr_dynamics.profiles import resolve
from rlvr_dynamics.regimes.scenario import verdict
from rlvr_dynamics.regimes.stages import predicted_vs_measured
from test_regimes_library import scenario_runs


def test_the_scenario_in_words_follows_its_numbers():
    runs = scenario_runs("dips, then grows")
    pred = {"toy expansion": 200.0, "toy dip": -0.6, "toy dip step": 40.0, "toy expanded": 1.0}
    record = {"registered": "2026-12-05T08:00:00+00:00",
              "inputs": {"pi0": [0.5, 0.05, 0.45], "r": [0.3, 0.9, 0.01], "G": 8},
              "predictions": {o: {"GRPO": pred, "GRPO-N": pred} for o in ("Adam", "SGD")}}
    registered = {"arm": record, "control": record}
    informs = {"arm": (True, ""), "control": (True, "")}
    rows = chapter.verdict_rows(runs, {"arm": "control"}, informs, {})
    text = sentences.scenario_text(runs, rows, registered, {"arm": "control"})
    g = runs[(runs["regime"] == "arm") & (runs["algorithm"] == "GRPO")]
    c = runs[(runs["regime"] == "control") & (runs["algorithm"] == "GRPO")]
    assert f"fell by {verdict(g, c)['fall'].text('{:.2f}')}" in text
    assert "predicted a fall of π(a2) by 60 % under Adam (crossover 200)" in text
    assert f"gained {g['gain'].mean():+.1f} points" in text and "**replicates**" in text
    table = displayed.against_prediction(runs, registered, {"arm": "control"})
    assert table.loc[("arm", "GRPO"), ("Adam", "dip as the LM's")] == "yes"
    assert table.loc[("control", "GRPO"), ("Adam", "dip as the LM's")] == "no"
    assert list(table.columns.levels[0]) == ["Adam", "LM", "SGD"]  # two header rows
    shown = shared.prediction_table(registered)
    assert shown.loc[("arm", "SGD, GRPO"), "dip of π(a2)"] == "-60 %"
    inputs = shared.prediction_inputs(registered)
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


def test_predicted_against_measured_crossovers_per_run():
    """Each run beside the toy's registered crossover for its update; a run that did not cross
    is censored at its last probe; the sentence says which optimizer's toy lies closer, and
    counts the runs that had not crossed although the toy had."""
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
    adam = predicted_vs_measured(table, registered, "Adam")
    assert list(adam["predicted"]) == [100.0, 100.0, 25.0, 20.0]
    assert list(adam["measured"]) == [100.0, 300.0, 50.0, 20.0]  # censored at the last probe
    assert list(adam["censored"]) == [False, True, False, False]
    assert adam["measured / predicted"].tolist()[:1] == [1.0]
    assert np.isnan(adam["measured / predicted"].iloc[1])
    sgd = predicted_vs_measured(table, registered, "SGD")
    assert np.isnan(sgd["measured / predicted"].iloc[2])  # the toy never crossed
    pairs = chapter.predicted(table, registered)  # what the page reads: both optimizers
    assert list(pairs) == ["Adam", "SGD"] and pairs["Adam"].equals(adam)
    text = sentences.predicted_text({"Adam": adam, "SGD": sgd})
    assert "under Adam: measured over predicted 1.00 (median of 3 runs that crossed" in text
    assert "1 of 4 runs had not crossed by their last probe although the toy had" in text
    assert text.endswith("closer to the toy under Adam (the smaller median distance on a log "
                         "scale).")
    fig = figures.plot_predicted({"Adam": adam, "SGD": sgd}, ["arm"])
    assert len(fig.axes) == 2
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert labels == ["GRPO, three paths", "GRPO, three paths, not crossed",
                      "GRPO-N, three paths", "GRPO, two paths"]  # by the regime, not its name
    P = chapter.Params.parse(resolve("smoke", "scenario", {}))
    assert P.arms() == ["three paths"]  # what the page hands plot_predicted (the map's:
    # test_regime_map.test_the_figures_settings_name_each_regimes_own_group_size)


def test_the_scenario_shows_the_log_scale_dip_the_signs_and_the_censored_median():
    """Issue 51 on the scenario's page: the dip of P(stepwise) on the log scale with its
    interval and sign count, each seed's value, the median crossover with its interval, each
    run that did not cross as "> N" (censored), never "never"; each verdict row carries its
    per-seed values and sign count, shown in its cell."""
    from rlvr_dynamics.regimes.stages import crossover_median, dip_over_seeds

    runs = scenario_runs("dips, then grows")
    runs.loc[(runs["regime"] == "arm") & (runs["seed"] == 0), "crossover"] = np.inf
    g = runs[(runs["regime"] == "arm") & (runs["algorithm"] == "GRPO")]
    d, m = dip_over_seeds(g), crossover_median(g)
    first, _ = displayed.scenario_tables(runs, {"arm": "control"})
    html = first.to_html()
    assert f"{d.fell} of {d.seeds} seeds fell, {d.rose} rose" in html
    assert f"[{100 * d.low:+.0f} %, {100 * d.high:+.0f} %]" in html and d.low > -1
    assert f"> {g['last step'].iloc[0]:g}" in html and "never" not in html
    assert f"{m.estimate:g} [{m.low:g}" in html
    informs = {"arm": (True, ""), "control": (True, "")}
    rows = chapter.verdict_rows(runs, {"arm": "control"}, informs, {})
    stage1 = rows[(rows["check"] == "stage 1") & (rows["algorithm"] == "GRPO")].iloc[0]
    assert stage1["per seed"] == tuple(g["fall"]) and stage1["signs"] == (d.fell, d.rose)
    cell = displayed.verdict_table(rows, "lm_two_stages").data.loc[("arm", "GRPO"), "stage 1"]
    assert cell.endswith(f"; fell in {d.fell} of {d.seeds} seeds, rose in {d.rose}")
    assert rows[rows["check"] == "against the control"]["per seed"].isna().all()
    pred = {"toy expansion": 200.0, "toy dip": -0.6, "toy dip step": 40.0, "toy expanded": 1.0}
    registered = {r: {"predictions": {o: {"GRPO": pred, "GRPO-N": pred} for o in ("Adam", "SGD")}}
                  for r in ("arm", "control")}
    text = sentences.scenario_text(runs, rows, registered, {"arm": "control"})
    assert (f"on the log scale, P(stepwise) at its lowest changed by "
            f"{100 * d.estimate:+.0f} %") in text
    table = displayed.against_prediction(runs, registered, {"arm": "control"})
    assert table.loc[("arm", "GRPO"), ("LM", "fell, rose")] == f"{d.fell}, {d.rose} of {d.seeds}"
