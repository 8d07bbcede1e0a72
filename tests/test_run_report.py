"""The run report: every build's chapter costs beside the reference build's."""
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
