"""Evaluation: interrupted runs resume without regenerating or losing finished problems and
equal uninterrupted ones; finished runs are read back; metrics from records against hand
computation; Table 1's marks; specs and parameters checked early; the paper's numbers as the
paper prints them."""
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rlvr_dynamics import measure as ev
from rlvr_dynamics.chapters import style
from rlvr_dynamics import paper_tables, registry, store
from rlvr_dynamics.models import char_tokenizer, tiny_qwen2
from rlvr_dynamics.chapters import ParameterError
from rlvr_dynamics.passk import pass_at_k
from rlvr_dynamics.profiles import resolve
from rlvr_dynamics.tasks.sums import ALPHABET

PAPER = Path("/work/shared/paper/paper.md")


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory) -> str:
    out = tmp_path_factory.mktemp("tiny")
    tok = char_tokenizer(ALPHABET)
    tiny_qwen2(tok, hidden=32, layers=2, heads=2, seed=2).save_pretrained(out)
    tok.save_pretrained(out)
    return f"tiny:{out}"


class Interrupt(Exception):
    pass


def counting(model, fail_at):
    """Record the number of prompts of each generate call on ``model``'s backend; raise at call
    number ``fail_at["call"]`` (None: never)."""
    calls = []
    inner = model.backend.generate

    def generate(prompts, params, entropy_temperature=None):
        calls.append(len(prompts))
        if len(calls) == fail_at["call"]:
            raise Interrupt
        return inner(prompts, params, entropy_temperature)
    model.backend.generate = generate
    return calls


def test_an_interrupted_evaluation_resumes_and_equals_an_uninterrupted_one(tiny_dir, tmp_path):
    task, problems = registry.load_benchmark("sums-test")
    problems = problems[:10]
    settings = ev.EvalSettings(n=4, max_tokens=6, chunk=3, seed=1)  # 4 chunks: 3, 3, 3, 1
    model = ev.load_model(tiny_dir, "test")

    whole = ev.evaluate(model, task, problems, settings, tmp_path / "whole")
    assert len(whole) == 40 and list(whole["problem"].unique()) == [p.id for p in problems]

    fail_at = {"call": 3}
    calls = counting(model, fail_at)
    with pytest.raises(Interrupt):
        ev.evaluate(model, task, problems, settings, tmp_path / "cut")
    assert sorted(p.name for p in (tmp_path / "cut").glob("chunk-*")) == [
        "chunk-00000.json", "chunk-00001.json"]  # two chunks were finished and kept
    (tmp_path / "cut" / ".chunk-00002.json.x.tmp").write_text("{")  # a torn write is ignored
    calls.clear()
    fail_at["call"] = None
    resumed = ev.evaluate(model, task, problems, settings, tmp_path / "cut")
    assert calls == [3, 1]  # only the two missing chunks were generated
    pd.testing.assert_frame_equal(resumed, whole)

    calls.clear()
    again = ev.evaluate(model, task, problems, settings, tmp_path / "cut")
    assert calls == [] and ev.is_done(tmp_path / "cut", task)
    pd.testing.assert_frame_equal(again, whole)
    ev.evaluate(model, task, problems, settings, tmp_path / "cut", recompute=True)
    assert calls == [3, 3, 3, 1]


def test_records_hold_what_the_metrics_need(tiny_dir, tmp_path):
    task, problems = registry.load_benchmark("sums-test")
    model = ev.load_model(tiny_dir, "test")
    recs = ev.evaluate(model, task, problems[:2], ev.EvalSettings(n=3, max_tokens=5, chunk=2),
                       tmp_path)
    for _, r in recs.iterrows():
        assert r["answer"] == task.extract(r["text"]) or (pd.isna(r["answer"])
                                                          and task.extract(r["text"]) is None)
        assert r["correct"] == task.verify(r["text"], r["gold"])
        assert 1 <= r["length"] <= 5 and (r["finished"] or r["length"] == 5)
        assert r["token_entropy"] is None or 0 <= r["token_entropy"] <= math.log(18) + 1e-6


def test_the_exact_estimator_gives_the_same_metrics_from_probabilities(tiny_dir, tmp_path):
    """One record per problem; every metric reads it (Pass@k beyond n included); on trees that
    close, p and the entropies agree with a large sample's estimates; a resumed exact
    evaluation equals an uninterrupted one; a text model is refused before anything runs."""
    task, problems = registry.load_benchmark("sums-test")
    problems = problems[:4]
    model = ev.load_model(tiny_dir, "test")
    settings = ev.EvalSettings(n=8, max_tokens=3, chunk=2, temperature=1.0, top_p=1.0,
                               estimator="exact", tol=0.0, keep=3)
    recs = ev.evaluate(model, task, problems, settings, tmp_path / "exact")
    assert ev.is_exact(recs) and len(recs) == 4 and (recs["samples"] == 0).all()
    assert (recs["p_lo"] <= recs["p"]).all() and (recs["p"] <= recs["p_hi"]).all()
    assert all(len(t) == 3 for t in recs["top"])
    assert ev.passk_per_problem(recs, [1, 4096]).shape == (4, 2)
    sampled = ev.evaluate(model, task, problems, ev.EvalSettings(
        n=2048, max_tokens=3, chunk=4, temperature=1.0, top_p=1.0), tmp_path / "sampled")
    n, c = ev.correct_counts(sampled)
    assert np.abs(recs["p"].to_numpy() - c / n).max() <= 4.5 * math.sqrt(0.25 / 2048)
    assert ev.token_entropy_of(recs) == pytest.approx(ev.token_entropy_of(sampled), abs=0.02)
    assert ev.answer_entropy_of(recs) >= ev.answer_entropy_of(sampled) - 0.05  # plug-in: low
    again = ev.evaluate(model, task, problems, settings, tmp_path / "exact")
    pd.testing.assert_frame_equal(again, recs)
    with pytest.raises(ValueError, match="character-level"):
        ev.evaluate_table(["smollm2"], ["sums-test"], settings, "test")
    with pytest.raises(ValueError, match="estimator"):
        ev.EvalSettings(estimator="tree")


def hand_records() -> pd.DataFrame:
    rows = [("p1", "5", a, a == "5", 0.1 * i) for i, a in enumerate(["5", "5", "6", None])]
    rows += [("p2", "9", a, a == "9", None if a is None else 0.5) for a in [None, None, "1", "2"]]
    return pd.DataFrame([{"problem": p, "gold": g, "sample": i % 4, "answer": a, "correct": c,
                          "length": 3, "finished": True, "token_entropy": h, "text": ""}
                         for i, (p, g, a, c, h) in enumerate(rows)])


def test_metrics_from_records_by_hand():
    recs = hand_records()
    n, c = ev.correct_counts(recs)
    assert n.tolist() == [4, 4] and c.tolist() == [2, 0]
    assert np.allclose(ev.passk_per_problem(recs, [1, 2]), pass_at_k([4, 4], [2, 0], [1, 2]))
    h1 = -(0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25))  # 5,5,6,NA
    h2 = -(0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25))  # NA,NA,1,2
    assert ev.answer_entropy_of(recs) == pytest.approx((h1 + h2) / 2)
    assert ev.token_entropy_of(recs) == pytest.approx((np.mean([0, .1, .2, .3]) + 0.5) / 2)


def test_tables_layouts_and_marks():
    results = {("b1", "m1"): hand_records(), ("b1", "m2"): hand_records().assign(correct=True)}
    summary = ev.passk_summary(results, [1, 2, 4], resamples=200)
    table = ev.passk_table(summary)
    assert list(table.columns) == [1, 2, 4] and table.loc[("b1", "m2"), 1] == 100.0
    assert table.loc[("b1", "m1"), 1] == pytest.approx(25.0)
    assert ev.leaders(summary).loc["b1"].tolist() == ["m2", "m2", "m2"]
    ents = ev.entropy_table(results)
    assert list(ents.index.get_level_values(0).unique()) == ["Answer-Level Entropy",
                                                              "Token-Level Entropy"]


def test_a_styled_table_rounds_its_numbers_and_keeps_its_text_whole():
    import pandas as pd

    from rlvr_dynamics.chapters import style
    reason = "GRPO-N (99.9 %) and NSR (99.9 %) both sit at the ceiling, " * 2
    html = style.styled(pd.DataFrame({"x": [1.23456, None], "why": [reason, "-"]}), 2).to_html()
    assert "1.23" in html and "1.2346" not in html and reason in html


def test_mark_best_bolds_the_best_and_underlines_the_second_with_ties():
    table = pd.DataFrame([[1.0, 5.0], [3.0, 5.0], [2.0, 4.0], [9.0, 0.0]],
                         index=pd.MultiIndex.from_tuples([("A", "x"), ("A", "y"), ("A", "z"),
                                                          ("B", "x")]), columns=[1, 2])
    html = style.mark_best(table).to_html()
    styles = {}
    for rule in re.findall(r"(#T_\w+_row\d+_col\d+(?:, #T_\w+_row\d+_col\d+)*) \{\s*([^}]*)\}",
                           html):
        for cell in rule[0].split(", "):
            styles[re.search(r"row(\d+)_col(\d+)", cell).groups()] = rule[1].strip()
    bold, under = "font-weight: bold;", "text-decoration: underline;"
    assert styles[("1", "0")] == bold and styles[("2", "0")] == under and ("0", "0") not in styles
    assert styles[("0", "1")] == styles[("1", "1")] == bold and styles[("2", "1")] == under
    assert styles[("3", "0")] == bold  # alone in its benchmark


def test_specs_parse_check_and_label():
    name, fields = registry.parse_spec("sums-base:steps=3000,snapshots=(1000, 2000),step=1000")
    assert name == "sums-base" and fields == {"steps": 3000, "snapshots": (1000, 2000),
                                              "step": 1000}
    as_dict = {"name": "sums-base", "steps": 3000, "snapshots": [1000, 2000], "step": 1000}
    assert registry.spec_text(as_dict) == registry.spec_text("sums-base:steps=3000,snapshots=(1000, 2000),"
                                                  "step=1000")
    assert registry.parse_spec(registry.spec_text(as_dict)) == (name, fields)
    assert registry.parse_spec("tiny:/a/b:c") == ("tiny", {"path": "/a/b:c"})
    assert registry.compatible("sums-base", "sums-ood") and not registry.compatible("smollm2", "sums-test")
    assert registry.compatible("Qwen/Qwen2.5-Math-7B", {"name": "arith", "digits": 2})
    assert registry.labels(["sums-base:snapshots=(5,),step=5", "smollm2", "org/m"]) == {
        "sums-base:snapshots=(5,),step=5": "sums-base@5", "smollm2": "smollm2", "org/m": "m"}
    for bad, match in [("sums-base:stepz=1", "unknown field"), ("sums-base:step=7", "snapshots"),
                       ("smollm2:x=1", "only sums-base takes fields"), ("tiny:", "needs a folder")]:
        with pytest.raises(ValueError, match=match):
            registry.check_model(bad)
    for bad, match in [("gsm8k", "unknown benchmark"), ("arith:digits=0", "digits"),
                       ("math500:x=1", "takes no fields")]:
        with pytest.raises(ValueError, match=match):
            registry.check_benchmark(bad)


def test_bad_parameters_stop_before_anything_runs():
    with pytest.raises(ParameterError, match="unknown field.*stepz"):
        resolve("smoke", "evaluation", {"table1_models": ["sums-base:stepz=1"]})
    with pytest.raises(ParameterError, match="reads none of table1_benchmarks"):
        resolve("smoke", "evaluation", {"table1_models": ["smollm2"]})
    with pytest.raises(ParameterError, match="data_dir='/nonexistent' is not a folder"):
        resolve("smoke", "evaluation", {"data_dir": "/nonexistent"})
    with pytest.raises(ParameterError, match=r"subsample\[arc-c\]\[0\].*greater than or equal to 1"):
        resolve("smoke", "evaluation", {"subsample": {"arc-c": [0, 3]}})
    paper = resolve("paper", "evaluation")
    assert paper["backend"] == "vllm" and paper["table1_n"] == 256
    assert (paper["temperature"], paper["top_p"]) == (0.6, 0.95)


def test_subsampled_benchmarks_repeat_with_fresh_problems_and_seeds(tiny_dir, monkeypatch, tmp_path):
    monkeypatch.setenv("RLVR_RESULTS", str(tmp_path))
    settings = ev.EvalSettings(n=2, max_tokens=4, chunk=4)
    res = ev.evaluate_table([tiny_dir], ["sums-test"], settings, "test",
                            subsample={"sums-test": (3, 2)})
    recs = res[("sums-test", tiny_dir)]
    assert recs.groupby("repeat")["problem"].nunique().tolist() == [3, 3]
    assert set(recs[recs.repeat == 0].problem) != set(recs[recs.repeat == 1].problem)
    assert len(ev.passk_per_problem(recs, [1])) == 6
    again = ev.evaluate_table([tiny_dir], ["sums-test"], settings, "test",
                              subsample={"sums-test": (3, 2)})  # all on disk: no model loaded
    pd.testing.assert_frame_equal(again[("sums-test", tiny_dir)], recs)


def test_paper_numbers_as_transcribed():
    t1 = paper_tables.passk_table(1)
    assert t1.loc[("AMC 2023", "GSPO-N"), 1] == 61.5 and t1.shape == (25, 9)
    assert paper_tables.entropy_table().loc[("Token-Level Entropy", "Qwen2.5-Math-7B"),
                                            "AIME 2024"] is None or math.isnan(
        paper_tables.entropy_table().loc[("Token-Level Entropy", "Qwen2.5-Math-7B"), "AIME 2024"])
    if not PAPER.is_file():
        pytest.skip(f"{PAPER} is not on this machine; the transcription was checked where it was")
    text = PAPER.read_text()
    for number in (1, 2, 3):
        for (bench, model), row in paper_tables.passk_table(number).iterrows():
            line = "\t".join([model] + [f"{v:.1f}" for v in row])
            block = text[text.index(f"\t{bench}\n" if f"\t{bench}\n" in text else bench):]
            assert line in block, (number, bench, model)
    for (metric, model), row in paper_tables.entropy_table().iterrows():
        values = "\t".join("-" if v is None or (isinstance(v, float) and math.isnan(v))
                           else f"{v:.3f}" for v in row)
        assert f"{model.split(' ')[-1]}\t{values}" in text, (metric, model)


def test_the_results_key_follows_the_weights_and_the_problems(tiny_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("RLVR_RESULTS", str(tmp_path))
    task, problems = registry.load_benchmark("sums-test")
    settings = ev.EvalSettings(n=2)
    where = ev.run_dir("test", tiny_dir, "sums-test", problems[:3], settings, "transformers")
    assert where == ev.run_dir("test", tiny_dir, "sums-test", problems[:3], settings, "transformers")
    weights = Path(tiny_dir.removeprefix("tiny:")) / "model.safetensors"
    weights.touch()  # rewritten with the same bytes: the same model (tests/test_keys.py)
    assert where == ev.run_dir("test", tiny_dir, "sums-test", problems[:3], settings, "transformers")
    data = weights.read_bytes()
    try:
        weights.write_bytes(data[:-1] + bytes([data[-1] ^ 0xFF]))  # the checkpoint was retrained
        store._digest.cache_clear()
        assert where != ev.run_dir("test", tiny_dir, "sums-test", problems[:3], settings,
                                   "transformers")
    finally:
        weights.write_bytes(data)  # the module's other tests read this model
        store._digest.cache_clear()
    moved = [type(p)(p.id, p.prompt + "0", p.answer, p.meta) for p in problems[:3]]
    assert ev.run_dir("test", tiny_dir, "sums-test", moved, settings, "transformers") != \
        ev.run_dir("test", tiny_dir, "sums-test", problems[:3], settings, "transformers")
    from rlvr_dynamics.pretrain import PretrainConfig
    assert registry.model_identity("sums-base:steps=700") == {
        "pretrain": PretrainConfig(steps=700).key, "step": None}
