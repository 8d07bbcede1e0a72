"""The reproduction chapter's arithmetic: the boundary per problem, windowed trace curves, the
claims' checks and verdicts, and the toy's two stages per seed."""
import numpy as np
import pandas as pd
import pytest

from rlvr_dynamics import boundary, stats, toy, verdicts
from rlvr_dynamics.chapters import reproduction as rp
from rlvr_dynamics.chapters import ParameterError
from rlvr_dynamics.chapters.reproduction import sentences, shown
from rlvr_dynamics.comparison import claims
from rlvr_dynamics.profiles import resolve


def recs(correct: dict[str, list[bool]], text: str = "#1") -> pd.DataFrame:
    return pd.DataFrame([{"problem": p, "correct": c, "answer": "1", "text": text,
                          "token_entropy": 0.1} for p, cs in correct.items() for c in cs])


def test_boundary_lost_and_gained_by_hand():
    base = recs({"a": [True, False], "b": [False, False], "c": [False, True]})
    model = recs({"a": [False, False], "b": [False, True], "c": [True, True]})
    diff = boundary.changes(base, model)
    assert diff["lost"].to_dict() == {"a": 1, "b": 0, "c": 0}
    assert diff["gained"].to_dict() == {"a": 0, "b": 1, "c": 0}
    assert boundary.solved_share(model) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="different problems"):
        boundary.changes(base, recs({"x": [True]}))
    with pytest.raises(ValueError, match="read at n=4"):
        boundary.solved(base, 4)
    table = boundary.table({("s", "t", "Base", 0): base, ("s", "t", "Base", 1): base,
                            ("s", "t", "GRPO", 0): model}, "Base", hard={"b"})
    grpo = table[table["model"] == "GRPO"].iloc[0]
    assert (grpo["lost"], grpo["gained"], grpo["gained, hard"], grpo["lost, hard"]) == (1, 1, 1, 0)
    floor = table[table["model"] == "Base"].iloc[0]  # the base's second sampling: no change
    assert (floor["lost"], floor["gained"]) == (0, 0)


def exact_recs(p: dict[str, float], traces: dict | None = None) -> pd.DataFrame:
    return pd.DataFrame([{"problem": k, "p": v, "se": 0.0, "p_lo": v, "p_hi": v,
                          "traces": traces or {}, "top": [["#1", 0.5, True], ["1;#2", 0.25, False]]}
                         for k, v in p.items()])


def test_the_boundary_from_probabilities_is_the_expected_count():
    """From exact records each problem is solved in n samples with probability
    s = 1 - (1 - p)^n; lost and gained are E[1{base solves} 1{model does not}] and the reverse
    over independent samplings, checked against a simulation of 0/1 samplings."""
    base, model = exact_recs({"a": 0.5, "b": 0.0, "c": 0.01}), exact_recs({"a": 0.0, "b": 0.2,
                                                                           "c": 0.01})
    n = 4
    s_b, s_m = 1 - (1 - base["p"]) ** n, 1 - (1 - model["p"]) ** n
    diff = boundary.changes(base, model, n)
    assert diff["lost"].to_numpy() == pytest.approx((s_b * (1 - s_m)).to_numpy())
    rng = np.random.default_rng(0)
    draws = 20000
    hit_b = rng.random((draws, 3, n)) < base["p"].to_numpy()[None, :, None]
    hit_m = rng.random((draws, 3, n)) < model["p"].to_numpy()[None, :, None]
    lost = (hit_b.any(2) & ~hit_m.any(2)).mean(0)
    assert lost == pytest.approx(diff["lost"].to_numpy(), abs=0.02)
    table = boundary.table({("s", "t", "Base", 0): base, ("s", "t", "Base", 1): base,
                            ("s", "t", "GRPO", 0): model}, "Base", hard={"b"}, n=n)
    floor = table[table["model"] == "Base"].iloc[0]  # the chance loss: sum s (1 - s)
    assert floor["lost"] == pytest.approx(float((s_b * (1 - s_b)).sum()))
    assert table[table["model"] == "GRPO"].iloc[0]["gained, hard"] == pytest.approx(s_m[1])
    with pytest.raises(ValueError, match="need n"):
        boundary.solved(base)


def test_case_study_readings_from_probabilities():
    r = exact_recs({"a": 0.5, "b": 0.25}, {"corrected": 0.1, "corrected_right": 0.05,
                                           "direct_right": 0.2})
    # the correct step-by-step mass: p less the direct path's right mass, 0.3 + 0.05
    assert rp.bang_share(r) == {"with !": pytest.approx(0.1),
                                "with !, of the correct": pytest.approx(0.1 / 0.75),
                                rp.STEPWISE_SHARE: pytest.approx(0.1 / 0.35)}
    top = rp.samples_of(r, "a", 1)
    assert list(top.columns) == ["text", "probability", "correct"] and len(top) == 1


def test_windowed_means_skip_unmeasured_steps():
    run = [{"step": 1, "x": 0.0}, {"step": 2, "x": None}, {"step": 3, "x": 1.0},
           {"step": 4}, {"step": 5, "x": 0.5}, {"step": 6, "x": 0.5}]
    x, v = rp.windowed([run, run], "x", 3)
    assert list(x) == [1.5, 4.5]
    assert np.allclose(v, [[0.5, 0.5], [0.5, 0.5]])
    _, v = rp.windowed([[{"step": 1}, {"step": 6, "x": 1.0}]], "x", 3)
    assert np.isnan(v[0, 0]) and v[0, 1] == 1.0


def test_bang_share_counts_corrected_steps_among_correct_samples():
    r = pd.DataFrame({"text": ["1+2=3;#3", "1+2=4!3;#3", "#5", "1+2=4!3;#9", "#3", "=#3"],
                      "correct": [True, True, False, False, True, True]})
    assert rp.bang_share(r) == {"with !": pytest.approx(2 / 6),
                                "with !, of the correct": pytest.approx(1 / 4),
                                rp.STEPWISE_SHARE: pytest.approx(1 / 2)}
    no_steps = rp.bang_share(r[r["text"].str.startswith("#")])
    assert np.isnan(no_steps[rp.STEPWISE_SHARE])


def test_combine_checks_into_a_verdict():
    R, O, N, U, F = (stats.REPLICATES, stats.OPPOSITE, stats.NO_EFFECT, stats.UNDECIDED,
                     stats.FEW_SEEDS)
    assert verdicts.combine([R, R]) == "replicates"
    assert verdicts.combine([R, O]) == verdicts.combine([R, U]) == "partly"
    assert verdicts.combine([O, U]) == verdicts.combine([N, O]) == "does not replicate"
    assert verdicts.combine([O, O]) == O and verdicts.combine([N]) == N
    assert verdicts.combine([U]) == U and verdicts.combine([U, F]) == verdicts.combine([F]) == F
    with pytest.raises(ValueError):
        verdicts.combine([])
    with pytest.raises(ValueError, match="unknown check verdict"):
        verdicts.combine(["holds"])


def test_recorded_verdicts_reach_the_table(tmp_path, monkeypatch):
    monkeypatch.setenv("RLVR_RESULTS", str(tmp_path))
    verdicts.record("t", "reproduction", [{"claim": "large_k", "ours": "x",
                                           "checks": [("a", stats.REPLICATES),
                                                      ("b", stats.OPPOSITE)],
                                           "also": [("c", stats.NO_EFFECT)]}])
    table = verdicts.table("t")
    assert list(table.index) == list(verdicts.claims())
    assert table.loc["large_k", "verdict"] == "partly"
    assert table.loc["large_k", "checks"] == "a: replicates; b: opposite"
    assert table.loc["large_k", "not deciding"] == "c: no effect within the margin"
    assert table.loc["ood", "verdict"] == "not measured"
    assert "46.7" in table.loc["large_k", "paper"]  # AIME 2025 base Pass@256, from the paper
    with pytest.raises(ValueError, match="unknown claim 'nope'"):
        verdicts.record("t", "x", [{"claim": "nope", "ours": "", "checks": [("a", stats.REPLICATES)]}])


def test_verdicts_of_older_code_are_not_read(tmp_path, monkeypatch):
    """A chapter's recorded verdicts are shown only while its code is the code that made them."""
    from rlvr_dynamics import store
    monkeypatch.setenv("RLVR_RESULTS", str(tmp_path))
    verdicts.record("t", "reproduction", [{"claim": "large_k", "ours": "x",
                                           "checks": [("a", stats.REPLICATES)]}])
    done = tmp_path / "t" / "verdicts" / "reproduction" / "done.json"
    store.write_json(done, {**store.read_json(done), "code": "older"})
    assert verdicts.table("t").loc["large_k", "verdict"] == "not measured"


def long_table(values: dict[str, list[float]], k: int, **cols) -> pd.DataFrame:
    return pd.DataFrame([{"model": m, "seed": s, "k": k, **cols, "pass@k": v}
                         for m, vs in values.items() for s, v in enumerate(vs)])


CLEAR = {"Base": [50.0, 50.2], "GRPO": [60.0, 61.0, 59.0], "GRPO-N": [70.0, 71.0, 69.0],
         "GSPO": [60.0, 61.0, 59.0], "GSPO-N": [49.0, 70.0, 30.0]}
FLAT = {m: [100.0] * len(v) for m, v in CLEAR.items()}  # every model saturated


def claim_inputs(full: dict[str, list[float]] = FLAT, bang: dict[str, list[float]] | None = None):
    """Long tables of two settings: "paper" reads ``CLEAR``, "full" reads ``full``; Pass@k at
    k = 1 and 8 and at a mid-curve k of 32; answer entropy; the case study's shares."""
    passk = pd.concat([long_table(values, k, benchmark=b, setting=setting)
                       for setting, values in (("paper", CLEAR), ("full", full))
                       for k in (1, 8) for b in ("t", "o")])
    mid = pd.concat([long_table(values, 32, benchmark=b, setting=setting)
                     for setting, values in (("paper", CLEAR), ("full", full)) for b in ("t", "o")])
    entropy = pd.concat([long_table(values, 1, benchmark="t", setting=setting)
                         for setting, values in (("paper", CLEAR), ("full", full))]).rename(
        columns={"pass@k": "answer entropy"})
    bangs = long_table(bang or {"GRPO": [0.2, 0.21, 0.22], "GRPO-N": [0.0, 0.01, 0.0]}, 1,
                       benchmark="t", setting="full").rename(
        columns={"pass@k": rp.STEPWISE_SHARE})
    return passk, mid, entropy, bangs


def rows_of(headline: str, support=None, **kw) -> dict[str, dict]:
    passk, mid, entropy, bangs = claim_inputs(**kw)
    return {r["claim"]: r for r in sentences.comparison_rows(rp.decided(
        passk, mid, entropy, bangs, ["paper", "full"], headline, "t", "o", "full", 8, support))}


def verdicts_of(row: dict, key: str = "checks") -> list[str]:
    return [v for _, v in row[key]]


def test_claim_checks_follow_the_seeds():
    """Each claim's checks under both settings: the verdicts come from the headline setting
    at the base's mid-curve k, the paper's k and the other setting's are kept beside them;
    every outcome is reachable."""
    rows = rows_of("paper")
    R, O, N, U, C = (stats.REPLICATES, stats.OPPOSITE, stats.NO_EFFECT, stats.UNDECIDED,
                     stats.CANNOT_INFORM)
    assert verdicts_of(rows["pass1_gain"]) == [R, R, R, U]
    # GRPO-N and GSPO-N hold the base; GRPO does not stay at or below it; GRPO-N above GRPO
    assert verdicts_of(rows["large_k"]) == [R, U, O, R]
    assert verdicts_of(rows["ood"]) == [R, O]
    assert verdicts_of(rows["case_study"]) == [R]
    assert "Pass@32 (the base's mid-curve k)" in rows["large_k"]["ours"]
    assert rows["large_k"]["checks"][0][0].startswith("GRPO-N - Base = +")
    assert "(> -2?) [paper]" in rows["large_k"]["checks"][0][0]  # holding the base: > -margin
    assert "(> +2?) [paper]" in rows["large_k"]["checks"][3][0]  # beating GRPO: > +margin
    # beside: the paper's k under the headline, then the saturated setting, where every check
    # against the base and between two saturated models cannot inform
    also = rows["large_k"]["also"]
    assert [w.rsplit("[", 1)[1] for w, _ in also[:4]] == ["paper, k = 8]"] * 4
    assert [v for _, v in also[4:]] == [C] * 8
    assert "cannot inform: the base's Pass@32 on t is 100.0 %, at its ceiling" in also[4][0]
    assert "GRPO-N (100.0 %) and GRPO (100.0 %) both sit at the ceiling" in also[7][0]
    other = rows_of("full")
    assert verdicts.combine(verdicts_of(other["large_k"])) == C
    assert verdicts_of(other["pass1_gain"]) == [C] * 4
    assert verdicts_of(other["answer_entropy"]) == [N, N]  # equal entropies: no effect


def test_a_check_that_can_inform_reaches_every_verdict_and_one_that_cannot_does_not_vote():
    """Cannot inform, for each reason: a base at its floor, a setting without the rare path,
    a case study without step-by-step answers; the checks that can inform still decide."""
    R, O, N, C = stats.REPLICATES, stats.OPPOSITE, stats.NO_EFFECT, stats.CANNOT_INFORM
    floor = {m: [2.0, 2.1, 1.9][:len(v)] for m, v in CLEAR.items()}
    rows = rows_of("full", full=floor)
    assert verdicts_of(rows["large_k"]) == [C, C, C, C]  # both GRPOs at the floor too
    assert "at its floor" in rows["large_k"]["checks"][0][0]
    # no rare path under the headline: the large-k checks against the base cannot inform,
    # GRPO-N against GRPO still decides
    rows = rows_of("paper", support={"paper": {"t": 0.0, "o": 0.5}, "full": {"t": 1, "o": 1}})
    assert verdicts_of(rows["large_k"]) == [C, C, C, stats.REPLICATES]
    assert verdicts.combine(verdicts_of(rows["large_k"])) == stats.REPLICATES
    assert "reaches none of the problems beyond the direct path" in rows["large_k"]["checks"][0][0]
    assert verdicts_of(rows["ood"]) == [R, O]  # the ood split keeps its rare path
    # the case study: opposite, no effect, and cannot inform without step-by-step answers
    assert verdicts_of(rows_of("paper", bang={"GRPO": [0.0, 0.01, 0.0],
                                             "GRPO-N": [0.2, 0.21, 0.22]})["case_study"]) == [O]
    assert verdicts_of(rows_of("paper", bang={"GRPO": [0.1, 0.1, 0.1],
                                             "GRPO-N": [0.1, 0.1, 0.1]})["case_study"]) == [N]
    empty = rows_of("paper", bang={"GRPO": [0.2, float("nan"), 0.2], "GRPO-N": [0.0, 0.0, 0.0]})
    assert verdicts_of(empty["case_study"]) == [C]
    assert "GRPO gives no mass to correct step-by-step answers" in empty["case_study"]["checks"][0][0]


def test_a_claim_on_few_problems_carries_their_variance():
    """Per-problem rows: the same seed means as before, an interval that covers the problems
    too; a gain that rests on one problem of four no longer replicates."""
    def per_problem(gains: list[float]) -> pd.DataFrame:
        return pd.DataFrame([{"setting": "s", "benchmark": "t", "model": m, "seed": seed,
                              "problem": f"p{i}", "k": 1, "pass@k": 50 + g + 0.1 * seed}
                             for m, gs in (("Base", [0.0] * 4), ("GRPO", gains))
                             for seed in range(3) for i, g in enumerate(gs)])
    spread, even = per_problem([40.0, 0.0, 0.0, 0.0]), per_problem([10.0] * 4)
    for long in (spread, even):
        assert claims.values(long, "pass@k")["GRPO"] == pytest.approx([60.0, 60.1, 60.2])
    mid = pd.DataFrame({"setting": ["s"] * 2, "benchmark": ["t", "o"], "model": ["Base"] * 2,
                        "seed": [0, 0], "k": [1, 1], "pass@k": [50.0, 50.0]})
    entropy = pd.DataFrame(columns=["setting", "benchmark", "model", "seed", "answer entropy"])
    gain = {name: claims.setting_checks(long, mid, entropy, "s", "t", "o", 1)["pass1_gain"].checks[0]
            for name, long in (("spread", spread), ("even", even))}
    assert gain["even"].verdict == stats.REPLICATES
    assert gain["spread"].verdict == stats.UNDECIDED
    assert gain["spread"].effect.estimate == pytest.approx(gain["even"].effect.estimate)
    # a look of a group-sequential protocol reads its own confidence: wider, so undecided
    strict = claims.decided(even, mid, entropy, entropy, ["s"], "s", "t", "o", "", 1,
                            confidence=0.9999)["pass1_gain"].votes[0][0]
    assert strict.effect.half_width > gain["even"].effect.half_width
    assert strict.effect.estimate == pytest.approx(gain["even"].effect.estimate)


def test_grpo_n_against_nsr_reaches_every_outcome():
    """GRPO-N above NSR and W-REINFORCE at the base's mid-curve k decides; each outcome is
    reached by the numbers, both at the ceiling cannot inform, and without NSR runs the page
    says which profile trains them."""
    def tables(nsr: float, grpo_n: float = 50.0) -> tuple[pd.DataFrame, pd.DataFrame]:
        rows = [{"setting": "s", "benchmark": b, "model": m, "seed": seed, "problem": f"p{i}",
                 "k": k, "pass@k": v + 0.2 * seed + 0.1 * i}
                for b in ("t", "o") for k in (1, 8) for seed in range(3) for i in range(4)
                for m, v in (("Base", 40.0), ("GRPO-N", grpo_n), ("NSR", nsr))]
        passk = pd.DataFrame(rows)
        return passk, passk[passk["k"] == 8]
    decided = {}
    for nsr in (40.0, 50.0, 60.0):
        checks = claims.negative_checks(*tables(nsr), "s", "t", "o", 8)
        first = next(iter(checks))
        assert first == "t Pass@8 (mid-curve)" and [c.b for c in checks[first]] == ["NSR"]
        decided[nsr] = checks[first][0].verdict
        assert sentences.negative_text(checks, ["GRPO-N", "NSR"]).startswith(
            "At t Pass@8 (mid-curve): against NSR, ")
    assert decided == {40.0: stats.REPLICATES, 50.0: stats.NO_EFFECT, 60.0: stats.OPPOSITE}
    ceiling = claims.negative_checks(*tables(99.0, 99.0), "s", "t", "o", 8)
    assert {c.verdict for cs in ceiling.values() for c in cs} == {stats.CANNOT_INFORM}
    assert "the check cannot inform: GRPO-N (99.4 %) and NSR (99.4 %) both sit at the ceiling" \
        in sentences.negative_text(ceiling, ["GRPO-N", "NSR"])
    table = shown.negative_table(ceiling, "s")
    assert table.index.names == ["s setting", "against"]
    assert table.index[0][0] == "t Pass@8 (mid-curve) (decides)"
    assert (table["verdict"] == stats.CANNOT_INFORM).all()
    assert table["why it cannot inform"].str.contains("both sit at the ceiling").all()
    passk, mid = tables(50.0)
    without = claims.negative_checks(passk[passk["model"] != "NSR"], mid[mid["model"] != "NSR"],
                                     "s", "t", "o", 8)
    assert without == {}
    assert "PROFILE=cpu-nsr" in sentences.negative_text(without, ["GRPO", "GRPO-N"])
    assert shown.negative_table(without, "s") is None


def test_a_second_base_is_shown_beside_the_first_and_never_scored_as_trained():
    """Another base of the recipe joins the comparison once, is a base (not an algorithm) for
    the claims and the sentences, and its distance from the first is said at the mid-curve k;
    a base that is not the book's own is refused, naming the parameter."""
    other = rp.other_base_label(1)
    assert rp.is_base(other) and rp.is_base("Base") and not rp.is_base("GRPO-N")
    models = rp.comparison("sums-base", {"GRPO": ["r0"]}, base_repeats=2,
                           others={other: "sums-base:seed=1"})
    assert [(m.label, m.seed) for m in models] == [("Base", 0), ("Base", 1), (other, 0),
                                                   ("GRPO", 0)]
    with pytest.raises(ValueError, match=r"other_bases=\[1\] needs the book's own base"):
        rp.other_bases("smollm2", [1], "t")
    assert rp.other_bases("smollm2", [], "t") == {}
    rows = [{"setting": "s", "benchmark": b, "model": m, "seed": 0, "problem": f"p{i}", "k": 8,
             "pass@k": v + i} for b in ("t", "o") for i in range(2)
            for m, v in (("Base", 50.0), (other, 40.0), ("GRPO", 70.0))]
    mid = pd.DataFrame(rows)
    text = sentences.bases_text(mid, [other])
    assert "t, s, Pass@8: 50.5 % against 40.5 % (Base, pretraining seed 1; -10.0 points)" in text
    assert "other_bases = []" in sentences.bases_text(mid, [])
    entropy = pd.DataFrame(columns=["setting", "benchmark", "model", "seed", "problem",
                                    "answer entropy"])
    passk = mid.assign(k=1)
    gain = claims.setting_checks(passk, mid, entropy, "s", "t", "o", 8)["pass1_gain"]
    assert [c.a for c in gain.checks] == ["GRPO"]  # the second base is not a trained model
    nsr = pd.concat([passk, passk[passk["model"] == "GRPO"].assign(model="NSR")])
    gain = claims.setting_checks(nsr, mid, entropy, "s", "t", "o", 8)["pass1_gain"]
    assert [c.a for c in gain.checks] == ["GRPO"]  # nor NSR: the paper's claims are its own


def test_the_mid_curve_k_is_where_the_base_is_closest_to_half():
    base = exact_recs({"a": 0.01, "b": 0.5})
    k = rp.base_mid_k([base], [1, 2, 4])
    curve = lambda k: 100 * np.mean([1 - 0.99 ** k, 1 - 0.5 ** k])  # noqa: E731
    assert abs(curve(k) - 50) <= min(abs(curve(k - 1) - 50), abs(curve(k + 1) - 50))
    assert curve(k) > 50 > curve(1)
    mid = rp.mid_curve({("s", "t", rp.BASE, 0): base, ("s", "t", "GRPO", 0): exact_recs(
        {"a": 1.0, "b": 0.5})}, [1])
    assert set(mid["k"]) == {k}
    assert mid.groupby("model")["pass@k"].mean()["GRPO"] == pytest.approx(
        100 * np.mean([1.0, 1 - 0.5 ** k]))  # one row per problem
    sampled = recs({"a": [True, False, False, False], "b": [False] * 4})  # 4 samples each
    assert rp.base_mid_k([sampled], [1, 2, 4, 8]) == 4  # 12.5, 25, 50 %; 8 > n is not usable


def test_the_headline_setting_is_the_one_that_reaches_the_rare_path():
    def base(solved_hard: bool) -> pd.DataFrame:
        return recs({"easy": [True], "hard1": [solved_hard], "hard2": [False]})
    records = {("paper", "t", rp.BASE, 0): base(False), ("paper", "t", rp.BASE, 1): base(False),
               ("full", "t", rp.BASE, 0): base(True), ("full", "t", rp.BASE, 1): base(False)}
    support = rp.rare_path_support(records, "t", {"hard1", "hard2"}, 1)
    assert support.to_dict() == {"paper": 0.0, "full": 0.25}
    assert rp.headline_setting(support) == "full"


def test_toy_stages_per_seed():
    s = toy.stages(toy.logits([0.495, 0.01, 0.495]), [0.5, 1.0, 0.0], G=2, lr=0.1,
                   steps=300, seeds=200, seed=0)
    assert set(s) == {"exploitation", "exploration", "early_worst", "late_exploited"}
    assert all(v.shape == (200,) for v in s.values())
    assert s["exploitation"].mean() > 0.3
    early = s["early_worst"][~np.isnan(s["early_worst"])]
    assert ((0 <= early) & (early <= 1)).all() and early.mean() > 0.5
    with pytest.raises(ValueError, match="one setting"):
        toy.stages(toy.logits([[0.5, 0.5], [0.4, 0.6]]), [1.0, 0.0], steps=2, seeds=2)


def test_reproduction_parameters_are_checked():
    with pytest.raises(ParameterError, match="case_setting='hot'"):
        resolve("smoke", "reproduction", {"case_setting": "hot"})
    with pytest.raises(ParameterError, match="n=8"):
        resolve("smoke", "reproduction", {"ks": [1, 16]})
    with pytest.raises(ParameterError, match="settings"):
        resolve("smoke", "reproduction", {"settings": {"paper": {"temperature": 0.6}}})


def test_takeover_is_the_first_step_with_half_the_rollouts_stepwise():
    run = [{"step": 0}, {"step": 1, "trace_stepwise_right": 0.2, "trace_stepwise_wrong": 0.1},
           {"step": 2, "trace_stepwise_right": None, "trace_stepwise_wrong": None},
           {"step": 3, "trace_stepwise_right": 0.4, "trace_stepwise_wrong": 0.1}]
    assert rp.takeover_step(run) == 3.0
    assert rp.takeover_step(run[:3]) == float("inf")
    assert shown.fmt_takeover(float("inf"), 100) == "≥ 100"
    assert shown.fmt_takeover(3.0, 100) == "3"


def test_models_evaluated_side_by_side_equal_one_by_one_and_fill_the_tables(tmp_path,
                                                                           monkeypatch):
    """Two workers give the records one process gives; the base's repeats are sampled with
    other seeds; Table 1's and Table 4's layouts have a row per (benchmark, model)."""
    from rlvr_dynamics import measure as ev
    from rlvr_dynamics.models import char_tokenizer, tiny_qwen2
    from rlvr_dynamics.tasks.sums import ALPHABET

    run = tmp_path / "run"  # a training run's folder holds its final policy in model/
    tok = char_tokenizer(ALPHABET)
    tiny_qwen2(tok, hidden=32, layers=2, heads=2, seed=2).save_pretrained(run / "model")
    tok.save_pretrained(run / "model")
    models = rp.comparison(f"tiny:{run / 'model'}", {"GRPO": [run]}, base_repeats=2)
    assert [(m.label, m.seed, m.sampling_offset) for m in models] == [
        ("Base", 0, 0), ("Base", 1, 1), ("GRPO", 0, 0)]
    settings = {"paper": ev.EvalSettings(n=4, max_tokens=6)}
    out = {}
    for workers in (2, 1):
        monkeypatch.setenv("RLVR_RESULTS", str(tmp_path / f"w{workers}"))
        out[workers] = rp.evaluate_models(models, ["sums-test", "sums-ood"], settings, "t",
                                          problems=2, workers=workers, batch_size=8)
    assert out[1].keys() == out[2].keys() and len(out[1]) == 2 * 3
    for key in out[1]:
        pd.testing.assert_frame_equal(out[1][key], out[2][key])
    base0, base1 = (out[1]["paper", "sums-test", "Base", s]["text"].tolist() for s in (0, 1))
    assert base0 != base1  # the second sampling of the base is a fresh one
    passk = rp.passk_long(out[1], [1, 2, 4])
    t1 = rp.table1(passk, "paper")
    assert t1.shape == (4, 3) and list(t1.columns) == [1, 2, 4]
    t4 = rp.table4(rp.entropy_long(out[1]), "paper")
    assert set(t4.columns) == {"sums-test", "sums-ood"} and len(t4) == 4


def test_the_chapters_sentences_follow_the_numbers():
    """The generated sentences name what the numbers say, and change when the numbers do."""
    rows = [{"setting": "full", "benchmark": "t", "model": rp.BASE, "seed": 1, "lost": 1},
            {"setting": "full", "benchmark": "t", "model": "GRPO", "seed": 0, "lost": 0},
            {"setting": "full", "benchmark": "t", "model": "GRPO-N", "seed": 0, "lost": 1}]
    assert "no algorithm loses more than chance does" in sentences.shrinkage_text(pd.DataFrame(rows))
    rows[1]["lost"] = 5
    text = sentences.shrinkage_text(pd.DataFrame(rows))
    assert "(GRPO loses more than chance)" in text and "lose 1.0-5.0 problems" in text
    steps = {("GRPO", 8): [10.0, 12.0], ("GRPO", 2): [15.0, 11.0],
             ("GRPO-N", 8): [14.0, 15.0], ("GRPO-N", 2): [20.0, 25.0]}
    text = sentences.takeover_text(steps, 8)
    assert "GRPO with G = 2 takes over later than with G = 8 in 1 of 2 seeds (by 2.0 steps" in text
    assert "GRPO-N with G = 2 takes over later than with G = 8 in 2 of 2 seeds" in text
    assert "at G = 8, GRPO-N takes over later than GRPO in 2 of 2 seeds" in text
    e = pd.DataFrame([{"setting": "full", "benchmark": "t", "model": m, "seed": 0,
                       "answer entropy": h} for m, h in (("GRPO", 0.2), ("GRPO-N", 0.1))])
    assert "GRPO-N 0.100 not above GRPO 0.200" in sentences.answer_entropy_text(e, "full")


def test_the_front_page_findings_follow_the_verdict_table():
    table = pd.DataFrame({"claim": ["A claim.", "Another claim."],
                          "verdict": ["replicates", stats.OPPOSITE], "chapter": ["toy", "-"]},
                         index=["a", "b"])
    text = verdicts.findings(table, "t")
    assert "1 replicates, 1 opposite" in text
    assert verdicts.prose_mismatches(text, table) == []
    flipped = table.copy()
    flipped.loc["b", "verdict"] = "replicates"
    assert verdicts.prose_mismatches(text, flipped) == [
        "b: the page says '— **opposite**', the table 'replicates'"]


def test_the_problems_beyond_the_direct_path_carry_more_than_the_author_can():
    """A problem lies beyond the direct path exactly when one of its columns carries more units
    than the author's direct answer passes on; both kinds occur among the first problems."""
    from rlvr_dynamics.tasks import sums

    chosen = rp.chosen(["sums-test", "sums-ood"], 30)
    assert list(chosen) == ["sums-test", "sums-ood"] and all(len(p) == 30 for p in chosen.values())
    hard = rp.beyond_direct(chosen)
    every = {p.id for ps in chosen.values() for p in ps}
    assert hard and hard < every
    cap = sums.Author().carry_cap
    assert all((p.id in hard) == (max(sums.carry_units(p.meta["terms"])) > cap)
               for ps in chosen.values() for p in ps)


def test_the_ceiling_sets_what_the_direct_path_can_solve_beside_the_base():
    from types import SimpleNamespace

    chosen = {"t": [SimpleNamespace(id=i) for i in "abcd"]}
    passk = pd.concat([long_table({rp.BASE: [40.0, 60.0], "GRPO": [90.0, 90.0]}, 8,
                                  benchmark="t", setting=s) for s in ("paper", "full")])
    passk.loc[passk["setting"] == "full", "pass@k"] += 10
    table = rp.ceiling(passk, chosen, {"d", "x"}, 8)  # x: a problem of another benchmark
    assert table.loc["t"].to_dict() == {"problems the direct path can solve (%)": 75.0,
                                        "base Pass@8 (%), paper setting": 50.0,
                                        "base Pass@8 (%), full setting": 60.0}


def test_each_path_is_a_trace_and_is_drawn():
    from rlvr_dynamics.chapters.style import PATH_STYLE
    from rlvr_dynamics.tasks import sums

    assert set(sums.PATH_TRACES) <= set(sums.TRACES)
    assert list(PATH_STYLE) == list(sums.PATH_TRACES)
    assert len({(c, ls) for _, c, ls in PATH_STYLE.values()}) == len(sums.PATH_TRACES)


def test_the_stepwise_path_the_stages_and_the_knob_in_words(monkeypatch, tmp_path):
    """The base's stepwise share and its accuracy when taken, from probabilities (the traces'
    masses, every base evaluation and no other model) or from samples' texts; the share of
    training problems beyond the direct path and a group's chance of a stepwise sample; the
    measured problems' operands; the knob's runs and, where the reference build ran the
    profile, their minutes at its training chapter's cost per run."""
    from types import SimpleNamespace

    from rlvr_dynamics import registry
    from rlvr_dynamics.chapters import training as tr
    from rlvr_dynamics.tasks import sums

    walk = {"stepwise_right": 0.04, "stepwise_wrong": 0.01}
    exact = {("full", "t", rp.BASE, 0): exact_recs({"a": 0.5, "b": 0.5}, walk),
             ("full", "t", rp.BASE, 1): exact_recs({"a": 0.5}, {"stepwise_right": 0.1}),
             ("full", "t", "GRPO", 0): exact_recs({"a": 1.0}, {"stepwise_right": 1.0})}
    assert rp.base_stepwise(exact, "t", "full") == pytest.approx((0.2 / 3, 0.18 / 0.2))
    sampled = {("full", "t", rp.BASE, 0): pd.DataFrame(
        {"text": ["1+2=3;#3", "1+2=4;#4", "#3", "#3"], "correct": [True, False, True, False]})}
    assert rp.base_stepwise(sampled, "t", "full") == (0.5, 0.5)
    s = rp.Setting(temperature=1.0, top_p=1.0)
    assert sentences.base_stepwise_text(sampled, "t", "full", s) == (
        "Under the full setting (T = 1, top-p 1) the base takes the stepwise path 50.0% of the "
        "time on t, and is right 50% of the time when it does.")
    direct = {("full", "t", rp.BASE, 0): pd.DataFrame({"text": ["#3"], "correct": [True]})}
    assert sentences.base_stepwise_text(direct, "t", "full", s).endswith(
        "stepwise path 0.0% of the time on t.")
    T = tr.Params.check({})
    train = registry.training_task(None, T.base()).problems("train")
    hard = np.mean([sums.direct_success(p.meta["terms"], sums.Author()) == 0 for p in train])
    text = sentences.stages_text(sampled, "t", "full", T)
    assert text.startswith(f"{hard:.0%} of the training problems lie beyond the direct path")
    assert (f"With {T.num_generations} rollouts per prompt and a stepwise share of 0.500 (the "
            f"base under the full setting, above), a group holds a stepwise sample "
            f"{1 - 0.5 ** T.num_generations:.0%} of the time") in text
    chosen = {"t": [SimpleNamespace(meta={"terms": t}) for t in ((1, 2, 3), (1, 2, 3, 4))],
              "o": [SimpleNamespace(meta={"terms": (1,) * 7})]}
    assert sentences.operands_text(chosen) == "Operands per problem: t, 3-4; o, 7."
    costs = tmp_path / "costs.yaml"
    costs.write_text("profile: cpu\nminutes: {training: 9.0}\ntraining_runs: 18\n")
    monkeypatch.setattr(sentences, "REFERENCE_COSTS", costs)
    P = rp.Params(knob_algorithms=["grpo", "grpo_n"])
    assert len(T.seeds) == 4 and len(T.runs()) == 16  # 4 algorithms x 4 seeds, no lambda sweep
    assert sentences.knob_cost_text(P, T) == (
        "The knob trains 8 more runs per group size (2 algorithms × 4 seeds): about 4 minutes "
        "per group size at the training chapter's cost per run in the reference build "
        "(`book/reference_costs.yaml`: 9 minutes for its 18 runs).")
    assert sentences.knob_cost_text(rp.Params(profile="smoke"), T).endswith("× 4 seeds).")


def test_token_entropy_by_path_from_exact_and_sampled_records():
    """Exact: two problems, the direct path 0.6 and 0.2 of the mass with entropy-weighted
    masses 0.6 and 0.1 (entropies 1.0 and 0.5), pooled 0.7 / 0.8; the stepwise path 0.4 and
    0.8 at entropy 0.25. Sampled: the shares per problem, then their mean; the entropy of the
    samples on the path; a path nobody took has share 0 and no entropy."""
    from rlvr_dynamics.exact import ENTROPY_SUFFIX as w

    exact_r = pd.DataFrame({"problem": ["a", "b"], "p": [0.5, 0.5], "traces": [
        {"direct_right": 0.6, "direct_right" + w: 0.6, "stepwise_right": 0.4,
         "stepwise_right" + w: 0.1},
        {"direct_wrong": 0.2, "direct_wrong" + w: 0.1, "stepwise_right": 0.8,
         "stepwise_right" + w: 0.2}]})
    sampled = pd.DataFrame({"problem": ["a", "a", "b", "b"], "correct": [True] * 4,
                            "text": ["#3", "1+2=3#3", "#5", "#5"],
                            "token_entropy": [1.0, 0.2, 0.6, 0.8]})
    t = rp.entropy_by_path({("s", "t", "Base", 0): exact_r, ("s", "t", "GRPO", 0): sampled})
    at = t.set_index(["model", "path"])
    assert at.loc[("Base", "direct"), "share"] == pytest.approx(0.4)
    assert at.loc[("Base", "direct"), "token entropy"] == pytest.approx(0.7 / 0.8)
    assert at.loc[("Base", "stepwise"), "token entropy"] == pytest.approx(0.25)
    assert at.loc[("GRPO", "direct"), "share"] == pytest.approx(0.75)
    assert at.loc[("GRPO", "direct"), "token entropy"] == pytest.approx(0.8)
    assert at.loc[("GRPO", "stepwise"), "token entropy"] == pytest.approx(0.2)
    assert at.loc[("GRPO", "guess"), "share"] == 0 and np.isnan(at.loc[("GRPO", "guess"),
                                                                       "token entropy"])
    html = shown.by_path_table(t, "d").to_html()
    assert "stepwise" in html and "guess" not in html


def test_the_headline_setting_decides_and_a_planted_outcome_flips_the_record():
    """``comparison.claims.decided`` decides in computing code which checks vote (the headline
    setting's) and which are shown beside (the other setting's, the paper's k), no page
    rendered: a planted Pass@1 loss of GRPO under the headline setting flips pass1_gain's
    recorded verdict; the same loss under the other setting moves only a check beside it."""
    def pass1(headline: str, **kw) -> tuple[str, list[str]]:
        d = rp.decided(*claim_inputs(**kw), ["paper", "full"], headline, "t", "o", "full", 8)
        votes = d["pass1_gain"].votes
        assert {where for _, where in votes} == {headline}
        assert all(where != headline for _, where in d["pass1_gain"].beside)
        return verdicts.combine([x.verdict for x, _ in votes]), [x.verdict for x, _ in
                                                                  d["pass1_gain"].beside]

    gain, _ = pass1("full")
    loss = {"Base": [60.0, 61.0, 59.0], "GRPO": [20.0, 21.0, 19.0],
            "GRPO-N": [20.0, 22.0, 18.0]}
    lost, _ = pass1("full", full=loss)
    beside_only, beside = pass1("paper", full=loss)
    assert gain != lost and lost != "replicates"
    assert beside_only == pass1("paper")[0] and stats.OPPOSITE in beside
