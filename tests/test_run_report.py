"""The run report: every build's chapter costs beside the reference build's; the damaged
results the store set aside."""
import nbformat
import pytest

from rlvr_dynamics import run


@pytest.mark.parametrize("seconds, says", [(30, "0.5 min here against 2.0 min there, 1.5 "
                                             "min (75%) less"),
                                            (300, "5.0 min here against 2.0 min there, 3.0 "
                                             "min (150%) more")])
def test_the_run_report_compares_with_the_reference_build(tmp_path, monkeypatch, seconds, says):
    """A chapter's wall time beside the reference build's, and the difference in words, either
    way."""
    reference = tmp_path / "reference.yaml"
    reference.write_text("profile: cpu\nlabel: the old one\nminutes: {theory: 2.0}\n")
    monkeypatch.setattr(run, "REFERENCE_COSTS", reference)
    nb = nbformat.v4.new_notebook(metadata={"papermill": {"duration": seconds}})
    (tmp_path / "notebooks").mkdir()
    nbformat.write(nb, tmp_path / "notebooks" / "theory.ipynb")
    report = run.run_report("cpu", tmp_path)
    assert f"| theory |  | {seconds / 60:.1f} min | 2.0 min |" in report
    assert f"Against the reference build (the old one): the chapters both ran took {says}" \
        in report
    assert "reference build" not in run.run_report("smoke", tmp_path)


def test_the_run_report_lists_damaged_results_set_aside(tmp_path, monkeypatch):
    """A result found damaged is listed with what was wrong, where it was set aside and whether
    it was computed again; without one, the report says none was found."""
    from rlvr_dynamics import store
    monkeypatch.setenv("RLVR_RESULTS", str(tmp_path))
    (tmp_path / "notebooks").mkdir()
    assert "No stored result was found damaged" in run.run_report("smoke", tmp_path)
    e = store.Entry(store.results_dir("smoke", "toy_dynamics") / "summarise-abc",
                    code="rlvr_dynamics.toy")

    def compute(folder):
        store.write_json(folder / "result.json", [1, 2, 3])
    store.obtain(e, compute)
    size = (e.path / "result.json").stat().st_size
    (e.path / "result.json").write_text("[1, 2")
    assert not e.done
    report = run.run_report("smoke", tmp_path)
    assert f"- `toy_dynamics/summarise-abc` (result.json has 5 bytes, {size} when finished)" \
        in report
    assert "set aside in `results/smoke/damaged/toy_dynamics/summarise-abc-" in report
    assert report.count("not computed again yet") == 1
    store.obtain(e, compute)
    report = run.run_report("smoke", tmp_path)
    assert ", computed again" in report and "not computed again yet" not in report
