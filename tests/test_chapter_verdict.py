"""The closing chapter (``chapters.verdict``, its ``sentences`` and ``shown``): the page
explains only what did not replicate, counts every verdict, folds each claim's checks as they
were recorded, and shows one row per claim with its verdict in the open."""
import pandas as pd
import pytest

from rlvr_dynamics import stats, verdicts
from rlvr_dynamics.chapters import verdict as chapter
from rlvr_dynamics.chapters.verdict import sentences, shown


def test_the_verdict_page_explains_only_what_did_not_replicate():
    table = pd.DataFrame({"verdict": ["replicates", "replicates", "not measured"]},
                         index=["large_k", "ood", "case_study"])
    assert chapter.not_replicated(table) == []
    assert "nothing to explain" in sentences.hypotheses(table)
    table.loc["ood", "verdict"] = stats.OPPOSITE
    assert chapter.not_replicated(table) == ["ood"]
    text = sentences.hypotheses(table)
    assert "*Large k and out of distribution.*" in text and "case study" not in text
    table["chapter"] = "reproduction"
    assert "*Large k and out of distribution.*" in sentences.hypotheses(table)
    table["chapter"] = "pretrained"  # SmolLM2's verdicts: the testbed's explanations do not apply
    assert "nothing to explain" in sentences.hypotheses(table)


def test_a_check_is_stated_with_its_confidence():
    assert (f"with its {100 * stats.CONFIDENCE:.0f} % Student-t interval"
            in sentences.checks_text())


@pytest.fixture
def recorded(tmp_path, monkeypatch):
    """Two chapters' verdicts under the profile "t": a partly replicated claim with a check
    shown beside its deciding ones, and one that replicates; the rest not measured."""
    monkeypatch.setenv("RLVR_RESULTS", str(tmp_path))
    verdicts.record("t", "reproduction", [{"claim": "large_k", "ours": "GRPO-N < 1",
                                           "checks": [("a", stats.REPLICATES),
                                                      ("b <x>", stats.OPPOSITE)],
                                           "also": [("c", stats.NO_EFFECT)]}])
    verdicts.record("t", "training", [{"claim": "competitive", "ours": "x",
                                       "checks": [("d", stats.REPLICATES)]}])
    return verdicts.table("t"), verdicts.measured("t")


def test_tally_counts_every_verdict(recorded):
    table, _ = recorded
    counts = chapter.tally(table)["claims"]
    assert list(counts.index) == list(verdicts.VERDICTS)
    assert counts["partly"] == counts["replicates"] == 1
    assert counts["not measured"] == len(verdicts.claims()) - 2 and counts.sum() == len(table)


def test_each_claims_checks_fold_as_recorded(recorded):
    table, measured = recorded
    html = sentences.checks(table, measured)
    blocks = html.split("\n")
    assert len(blocks) == len(verdicts.claims())
    assert all(b.startswith("<details><summary>") and b.endswith("</details>") for b in blocks)
    large_k = blocks[list(table.index).index("large_k")]
    assert "— <strong>partly</strong></summary>" in large_k
    assert "<code>reproduction</code>" in large_k
    assert "<li>a: <em>replicates</em></li><li>b &lt;x&gt;: <em>opposite</em></li>" in large_k
    assert "not deciding:</p><ul><li>c: <em>no effect within the margin</em></li>" in large_k
    assert "not deciding" not in blocks[list(table.index).index("competitive")]
    assert "No chapter of this build measured this claim." in \
        blocks[list(table.index).index("ood")]


def test_the_verdict_table_has_one_row_per_claim_and_its_verdict_in_the_open(recorded):
    table, _ = recorded
    html = shown.verdict_table(table, sentences.caption("t")).to_html()
    assert html.count("<tr>") == len(table) + 1  # the heading and one row per claim
    assert "toy_two_stages" not in html            # no index: the claim is the first column
    assert ">partly</td>" in html and ">not measured</td>" in html
    assert "(t profile)" in html
    assert "&#39;" in html or "'" not in "".join(table["claim"])  # text escaped
    assert f"color: {shown.VERDICT_COLORS['partly']}" in html


def test_another_profiles_verdicts_are_shown_apart_or_how_to_make_them(recorded, monkeypatch,
                                                                       tmp_path):
    """The real model's verdicts (its own profile) are shown beside this build's when they
    were recorded with this code; otherwise the page says how to make them; an unknown profile
    is refused by name."""
    from rlvr_dynamics import store
    for name in ("t", "other", "cpu"):
        (tmp_path / f"{name}.yaml").write_text("description: x\n")
    monkeypatch.setattr(chapter, "CONFIGS", tmp_path)
    P = chapter.Params(profile="cpu", beside=["t", "other", "cpu"])
    shown = chapter.beside(P)
    assert list(shown) == ["t", "other"]  # the build's own profile is not shown twice
    assert sorted(shown["t"].index) == ["competitive", "large_k"]
    assert "2 claims" in sentences.beside_text("t", shown["t"])
    assert shown["other"].empty
    assert "make reproduce PROFILE=other" in sentences.beside_text("other", shown["other"])
    done = store.results_dir("t", "verdicts") / "training" / "done.json"
    store.write_json(done, {**store.read_json(done), "code": "older"})  # made by other code
    assert list(chapter.beside(P)["t"].index) == ["large_k"]
    with pytest.raises(Exception, match="beside has 'nope'"):
        chapter.Params(beside=["nope"])


def test_a_chapters_claims_are_scored_without_being_recorded(tmp_path, monkeypatch):
    """``chapter_table``: the verdict each claim's checks decide, shown where the page does not
    record (the default build showing another profile's results); nothing is written."""
    monkeypatch.setenv("RLVR_RESULTS", str(tmp_path))
    rows = [{"claim": "large_k", "ours": "x", "checks": [("a", stats.REPLICATES),
                                                          ("b", stats.OPPOSITE)]}]
    shown = verdicts.chapter_table("pretrained", rows)
    assert shown.loc["large_k", "verdict"] == verdicts.combine([stats.REPLICATES, stats.OPPOSITE])
    assert not any(tmp_path.iterdir())
    with pytest.raises(ValueError, match="pretrained: unknown claim 'nope'"):
        verdicts.chapter_table("pretrained", [{"claim": "nope", "ours": "x", "checks": []}])
