"""The pretrained-model chapter: its parameters' checks, the rule that picks the difficulties,
and the default build's reading of another profile's results (nothing computed, nothing shown
where that profile has not run)."""
import numpy as np
import pandas as pd
import pytest

from rlvr_dynamics import profiles, registry
from rlvr_dynamics.chapters import ParameterError
from rlvr_dynamics.chapters import pretrained as chapter
from rlvr_dynamics.chapters.pretrained import sentences, shown


def params(profile: str, **overrides) -> chapter.Params:
    return chapter.Params.parse({**profiles.plan(profile, ["pretrained"])["pretrained"],
                                 **overrides})


def settled(profile: str, **overrides) -> chapter.Params:
    """A profile's parameters with the format settled (the lenient grader, the first prompt,
    unless ``overrides`` say otherwise), as ``chapter.settle`` leaves them."""
    return params(profile, **{"prompt": "instruction", "boxed_only": False, **overrides})


@pytest.mark.parametrize("change, match", [
    ({"source": "cpu"}, "source='cpu' is this build's own profile"),
    ({"ood_levels": [[1, 2]]}, "ood_levels must not repeat a training level"),
    ({"levels": [[1, 9]]}, r"levels has \[1, 9\]: ArithmeticTask.terms"),
    ({"ks": [1, 32]}, "every k must be <= n=16"),
    ({"algorithms": ["ppo"]}, "algorithms has 'ppo'"),
    ({"prompts": ["chat"]}, "prompts and prompt take"),
    ({"prompt": "chat"}, "prompts and prompt take"),
    ({"looks": [3, 4]}, r"looks must increase to the 5 seeds"),
    ({"looks": [5, 3, 5]}, r"looks must increase"),
])
def test_bad_parameters_are_named(change, match):
    with pytest.raises(ParameterError, match=match):
        params("cpu", **change)


def test_the_default_build_looks_for_the_runs_its_source_made(tmp_path, monkeypatch):
    """The source's parameters come from what its run recorded, not from its profile file."""
    monkeypatch.setenv("RLVR_RESULTS", str(tmp_path))
    here, there = params("cpu"), settled("cpu-smollm2")
    assert here.source == "cpu-smollm2" and there.source is None
    marker = chapter.marker("cpu-smollm2")
    marker.begin()
    marker.finish({"params": there.values()})
    assert chapter.runs(chapter.source_params(here)) == chapter.runs(there)
    marker.finish({"params": settled("cpu-smollm2", seeds=[5, 6], looks=[2]).values()})  # ran
    assert list(chapter.runs(chapter.source_params(here))) == [("grpo", 5), ("grpo", 6), ("grpo_n", 5), ("grpo_n", 6)]
    cfg = chapter.runs(there)["grpo_n", 2]
    assert (cfg.model, cfg.lora_rank, cfg.positive_weight, cfg.task.levels) == (
        "smollm2", 16, 0.0, ((1, 2), (1, 3)))


def test_nothing_is_shown_or_computed_where_the_source_has_not_run(tmp_path, monkeypatch):
    monkeypatch.setenv("RLVR_RESULTS", str(tmp_path))
    P = params("cpu")
    assert chapter.obtain(P) is None
    assert not [f for f in tmp_path.rglob("*") if f.is_file()]  # it wrote nothing
    from rlvr_dynamics.report import measured_cost
    words = sentences.how_to_run(P, measured_cost(P.source))
    assert "make part PROFILE=cpu-smollm2 HOURS=0.5" in words and "git add release/cpu-smollm2" in words
    assert "The whole profile took 1 h 57 min when last measured" in words


def test_the_rule_admits_mixed_rewards_with_room():
    P = params("cpu-smollm2")
    table = pd.DataFrame({"digits": [1, 1, 1, 2], "terms": [2, 3, 4, 3],
                          "Pass@1": [20.1, 2.9, 0.8, 0.0], "Pass@16": [93.8, 37.5, 12.5, 0.0],
                          "mid-curve k": [4, 16, 16, 16]}).set_index(["digits", "terms"])
    assert chapter.fits(table, P).tolist() == [True, True, False, False]
    assert not chapter.fits(table.assign(**{"mid-curve k": [2, 16, 16, 16]}), P).iloc[0]
    text = sentences.mix_text(table, P)
    assert "fit are: 1-digit × 2, 1-digit × 3." in text and "Every level" in text
    table.loc[(1, 3), "Pass@16"] = 99.0  # no room left at the training mix's second level
    assert "Of the training mix, 1-digit × 3 does not fit" in sentences.mix_text(table, P)


def test_pass_at_k_along_training_per_level_from_the_probes_counts():
    probe = {"paper": {"ids": ["d1t2-test-0", "d1t2-test-1", "d1t3-test-0"], "n": 2,
                       "correct": [2, 0, 1]}}
    dynamics = {"GRPO": [[{"step": 0, "sampled_probe": probe}, {"step": 1}]]}
    long = chapter.probe_passk(dynamics, [1, 2, 4]).set_index(["level", "k"])["pass@k"]
    assert long.to_dict() == {("d1t2", 1): 50.0, ("d1t2", 2): 50.0,  # k = 4 > n: left out
                              ("d1t3", 1): 50.0, ("d1t3", 2): 100.0}


def test_the_probe_spreads_over_a_mix_of_levels():
    from rlvr_dynamics.tasks.arithmetic import ArithmeticMix
    from rlvr_dynamics.rl.probe import spread
    chosen = spread(ArithmeticMix(levels=((1, 2), (1, 3))).problems("test"), 16)
    assert len(chosen) == 16 and {p.meta["level"] for p in chosen} == {(1, 2), (1, 3)}
    assert sum(p.meta["level"] == (1, 2) for p in chosen) == 8


def test_a_sampled_probe_needs_its_samples():
    P = settled("cpu-smollm2")
    cfg = chapter.runs(P)["grpo", 0]
    assert (cfg.probe_every, cfg.probe_samples, cfg.steps, cfg.eval_every) == (24, 16, 96, 16)
    with pytest.raises(ValueError, match="probe_samples=0 must be >= 1"):
        cfg.replace(probe_samples=0)


def test_the_claims_are_checked_on_every_training_level(monkeypatch, tmp_path):
    """Each training level's checks decide a claim together; the harder level's claim once:
    decided in the chapter's computing code (``decided_levels``), written out by its words."""
    def per_level(passk, mid, entropy, bangs, settings, headline, test, ood, case, last,
                  confidence):
        return {"large_k": f"large_k on {test}", "ood": f"ood on {ood}"}
    monkeypatch.setattr(chapter, "decided", per_level)
    for name in ("passk_problems", "entropy_problems"):
        monkeypatch.setattr(chapter, name, lambda *a: None)
    monkeypatch.setattr(chapter, "mid_curve", lambda recs, ks: None)
    P = settled("cpu-smollm2")
    pairs, triples, harder = (f"arith:digits={d},terms={t}" for d, t in ((1, 2), (1, 3), (2, 2)))
    levels = chapter.decided_levels(P, {}, 16)
    assert levels == {"large_k": [(pairs, f"large_k on {pairs}"),
                                  (triples, f"large_k on {triples}")],
                      "ood": [(pairs, f"ood on {harder}")]}

    def words(decisions):
        ((claim, d),) = decisions.items()
        return [{"claim": claim, "ours": f"{d} ours", "checks": [("d", f"v {d}")],
                 "also": [("a", f"w {d}")]}]
    monkeypatch.setattr(sentences, "comparison_rows", words)
    monkeypatch.setattr(sentences, "reading_rows", lambda rows, dynamics: [])
    monkeypatch.setattr(sentences, "verdict_rows", lambda dynamics: None)
    looks = [{"seeds": 3, "confidence": 0.99}, {"seeds": 5, "confidence": 0.95}]
    J = chapter.Judged(looks, [{}, {}], {"large_k": 1, "ood": 1})
    R = chapter.Results("cpu-smollm2", P, None, None, chapter.Protocol(
        {"looks": looks}, tmp_path, None, {}), {}, {}, J)
    monkeypatch.setattr(sentences, "decisions", lambda P, recs, J: levels)
    rows = sentences.claim_rows(R, 16)
    assert [r["claim"] for r in rows] == ["large_k", "ood"]
    assert rows[0]["checks"] == [(f"{pairs}: d", f"v large_k on {pairs}"),
                                 (f"{triples}: d", f"v large_k on {triples}")]
    assert rows[0]["also"] == [(f"{pairs}: a", f"w large_k on {pairs}"),
                               (f"{triples}: a", f"w large_k on {triples}")]
    at = " [look 2 of 2: 5 seeds, intervals at 95.0 %]"
    assert rows[0]["ours"] == f"large_k on {pairs} ours; large_k on {triples} ours" + at
    assert rows[1] == {"claim": "ood", "ours": f"ood on {harder} ours" + at,
                       "checks": [("d", f"v ood on {harder}")],
                       "also": [("a", f"w ood on {harder}")]}


def test_the_verdict_rule_states_the_level_of_the_verdicts_interval(monkeypatch):
    assert "its 95 % interval" in sentences.verdict_rule()
    monkeypatch.setattr(sentences, "CONFIDENCE", 0.9)
    assert "its 90 % interval" in sentences.verdict_rule()


def test_the_grader_says_where_it_found_the_right_answers():
    """Right answers found in a box, found by the fallback (the last integer), and the Pass@1
    that a boxed-only grader would give; a model that never boxes gets none."""
    import pandas as pd
    boxes = pd.DataFrame({"text": ["so \\boxed{7}", "it is 7", "\\boxed{8}", "8"],
                          "correct": [True, True, False, False]})
    never = pd.DataFrame({"text": ["7", "7"], "correct": [True, True]})
    t = chapter.answer_sources({("s", "b", "Base", 0): boxes, ("s", "b", "GRPO", 0): never})
    first, second = t.iloc[0], t.iloc[1]
    assert (first["right"], first["boxed, of the right"], first["Pass@1, boxed only"]) == \
        (0.5, 0.5, 0.25)
    assert first["fallback, of the right"] == 0.5
    assert (second["boxed, of the right"], second["Pass@1, boxed only"]) == (0.0, 0.0)
    styled = shown.sources_table(t, "d")
    assert "Where the grader found the right answers" in styled.to_html()
    said = sentences.sources_text(t, params("cpu-smollm2"))
    assert "the base boxed at most 50.0 % and the trained models at most 0.0 %" in said
    assert "a Pass@1 of at most 25.0 % and the trained models at most 0.0 %" in said
    assert "a group of 8 rollouts would seldom hold a rewarded sample" not in said  # base: 50 %
    t.loc[0, "boxed, of the right"] = 0.1
    assert "a group of 8 rollouts would seldom hold a rewarded sample" in \
        sentences.sources_text(t, params("cpu-smollm2"))
    assert sentences.sources_text(t, settled("cpu-smollm2", boxed_only=True)) == ""


def test_boxed_only_reaches_the_training_task_the_benchmarks_and_the_page():
    """``boxed_only`` grades training rewards, the difficulty table and the evaluation alike,
    and the page states the rule that graded; the default keeps the specs as they were."""
    lenient, strict = settled("cpu-smollm2"), settled("cpu-smollm2", boxed_only=True)
    assert not lenient.mix().boxed_only and strict.mix().boxed_only
    assert all("boxed_only" not in b for b in lenient.benchmarks())
    assert all(b["boxed_only"] is True for b in strict.benchmarks())
    assert "the fallback" in sentences.grader_text(lenient)
    assert "a completion without one is wrong" in sentences.grader_text(strict)
    with pytest.raises(ParameterError, match="boxed_only"):
        params("cpu-smollm2", boxed_only="sometimes")


def test_the_format_is_settled_before_the_task_is_built():
    """Until the measurement has chosen the prompt and the grader, no task or benchmark can
    be made from the parameters (a run would otherwise start under a format never chosen)."""
    P = params("cpu-smollm2")
    assert (P.prompt, P.boxed_only) == (None, None)
    for use in (P.mix, P.benchmarks, lambda: chapter.runs(P)):
        with pytest.raises(ValueError, match="chosen by the format's measurement first"):
            use()
    strict = settled("cpu-smollm2", prompt="example", boxed_only=True)
    assert (strict.mix().prompt, strict.mix().boxed_only) == ("example", True)
    assert all(b["prompt"] == "example" for b in strict.benchmarks())


def format_table(rows: dict[str, list[tuple[int, float, float]]]) -> pd.DataFrame:
    """``chapter.formats``' layout: per prompt, (right answers, boxed share of them,
    boxed-only Pass@1) at the levels (1, 2) and (1, 3)."""
    return pd.DataFrame([{"prompt": prompt, "digits": 1, "terms": terms, "right answers": n,
                          "boxed, of the right": boxed, "Pass@1, boxed only": pass1}
                         for prompt, levels in rows.items()
                         for terms, (n, boxed, pass1) in zip((2, 3), levels)]
                        ).set_index(["prompt", "digits", "terms"])


def test_the_format_rule_takes_the_qualified_prompt_with_the_most_signal():
    """A prompt qualifies where it boxes at least ``min_boxed`` of the right answers pooled
    over the training levels (a level with few right answers weighs little); among those the
    highest boxed-only Pass@1 wins (not the highest boxed share), graded as the paper grades.
    Where none qualifies, the one that boxes the most, graded leniently."""
    P = params("cpu-smollm2")
    table = format_table({"instruction": [(100, 2.0, 0.1), (10, 0.0, 0.0)],
                          "system": [(100, 75.0, 30.0), (100, 79.0, 12.0)],  # 77 % pooled
                          "example": [(90, 85.0, 20.0), (10, 50.0, 8.0)],    # 81.5 % pooled
                          "system+example": [(50, 99.0, 9.0), (50, 99.0, 7.0)]})
    assert chapter.boxed_share(table)["example"] == pytest.approx(81.5)
    assert chapter.chosen(table, P) == ("example", True)
    Q = chapter.settle(P, table)
    assert (Q.prompt, Q.boxed_only) == ("example", True)
    assert "boxes 81.5 % of the base's right answers" in sentences.format_text(table, Q)
    assert chapter.chosen(table, params("cpu-smollm2", min_boxed=0.9)) == \
        ("system+example", True)
    nobody = params("cpu-smollm2", min_boxed=0.995)
    assert chapter.chosen(table, nobody) == ("system+example", False)
    Q = chapter.settle(nobody, table)
    words = sentences.format_text(table, Q)
    assert "No prompt qualified: the most any boxes is 99.0 %" in words
    assert "keeps the lenient grader" in words
    # a prompt given is judged alone; a grader given is kept
    assert chapter.chosen(table, params("cpu-smollm2", prompt="system")) == ("system", False)
    assert chapter.settle(P.parse({**P.values(), "boxed_only": False}), table).boxed_only \
        is False


def test_the_format_measurement_counts_the_boxed_right_answers(monkeypatch):
    """``formats`` against counts made by hand: per prompt and level, the boxed share of the
    right answers, and Pass@k under both graders (the paper's: right and boxed)."""
    P = params("smoke", prompts=["instruction", "example"], format_n=2)
    texts = {"instruction": ["it is 7", "\\boxed{7}", "9", "no"],   # 2 right, 1 boxed
             "example": ["\\boxed{7}", "\\boxed{7}", "\\boxed{8}", "8"]}
    asked = []

    def evaluate_table(models, specs, s, profile, **kw):
        asked.append((specs, s.n, kw["problems"]))
        out = {}
        for spec in specs:
            prompt = spec.get("prompt", "instruction")
            out[registry.spec_text(spec), registry.spec_text(models[0])] = pd.DataFrame({
                "repeat": 0, "problem": ["a", "a", "b", "b"], "sample": [0, 1, 0, 1],
                "text": texts[prompt], "correct": [t in ("it is 7", "\\boxed{7}")
                                                   for t in texts[prompt]],
                "finished": [True, True, True, False]})
        return out

    monkeypatch.setattr(chapter.ev, "evaluate_table", evaluate_table)
    table = chapter.formats(P, "smoke")
    (specs, n, problems), = asked
    assert all(s["split"] == "train" for s in specs) and (n, problems) == (2, P.format_problems)
    first = table.loc[("instruction", 1, 2)]
    assert (first["right answers"], first["boxed, of the right"]) == (2, 50.0)
    assert (first["Pass@1"], first["Pass@2"]) == (50.0, 50.0)         # a: 2/2 right, b: 0/2
    assert (first["Pass@1, boxed only"], first["Pass@2, boxed only"]) == (25.0, 50.0)  # a: 1/2
    second = table.loc[("example", 1, 2)]
    assert second["boxed, of the right"] == 100.0 and second["Pass@1"] == 50.0
    assert first["cut at the budget (%)"] == 25.0
    assert chapter.chosen(table, P) == ("example", True)


def test_the_tables_name_each_benchmark_by_its_difficulty():
    Q = settled("cpu-smollm2", prompt="example", boxed_only=True)
    specs = [registry.spec_text(b) for b in Q.benchmarks()]
    long = pd.DataFrame({"benchmark": specs + ["other"], "pass@k": [1.0, 2.0, 3.0, 4.0]})
    assert sentences.by_level(long, Q)["benchmark"].tolist() == \
        ["1-digit × 2", "1-digit × 3", "2-digit × 2", "other"]


def test_the_mid_curve_k_is_the_one_closest_to_half():
    """Against a curve by hand: Pass@k of one problem with p = 0.2 (exact, k = 1..16)."""
    curve = 100 * (1 - 0.8 ** np.arange(1, 17))
    assert chapter.mid_k(curve) == 3  # 48.8 % at 3, 59.0 % at 4
    assert chapter.mid_k(np.full(16, 10.0)) == 1  # flat: the smallest k
    assert chapter.mid_k(np.linspace(0, 40, 16)) == 16  # never reaches half: n


def test_a_mid_curve_k_beyond_the_samples_is_refused():
    with pytest.raises(ParameterError, match="min_mid_k=32 must be <= difficulty_n=16"):
        params("cpu-smollm2", min_mid_k=32)


def test_smollm2_is_dequantised_once_and_read_back_the_same(tmp_path, monkeypatch):
    """``models.load_smollm2`` keeps the dequantised weights and the tokenizer after the first
    load; what it reads back is the GGUF's dequantisation to the bit, the chat template and the
    tokens included. The comparison can fail: a weight changed in the kept copy is seen."""
    import torch

    from rlvr_dynamics import models

    monkeypatch.setattr(models, "SMOLLM2_CACHE", tmp_path)
    made = []

    def dequantised(gguf):
        made.append(dequantise(gguf))
        return made[-1]

    dequantise = models.dequantised_smollm2
    monkeypatch.setattr(models, "dequantised_smollm2", dequantised)
    kept, _ = models.load_smollm2()  # dequantises, keeps the copy and reads it back
    again, again_tok = models.load_smollm2()  # reads the copy back
    (fresh, fresh_tok), = made  # dequantised once
    (folder,) = [p for p in tmp_path.iterdir() if not p.name.startswith(".")]

    def same(a, b) -> bool:
        x, y = a.state_dict(), b.state_dict()
        return x.keys() == y.keys() and all(torch.equal(x[k], y[k]) for k in x)

    assert same(fresh, kept) and same(fresh, again)
    chat = [{"role": "user", "content": "What is 12 + 35? Put the answer in \\boxed{}."}]
    prompts = [t.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
               for t in (fresh_tok, again_tok)]
    assert prompts[0] == prompts[1] and "12 + 35" in prompts[0]
    assert fresh_tok(prompts[0])["input_ids"] == again_tok(prompts[1])["input_ids"]
    assert (again_tok.padding_side, again_tok.eos_token, again_tok.pad_token) == \
        ("left", fresh_tok.eos_token, fresh_tok.pad_token)
    with torch.no_grad():
        next(again.parameters()).view(-1)[0] += 1e-3
    assert not same(fresh, again)
    assert sorted(p.name for p in folder.iterdir() if p.suffix == ".safetensors")
