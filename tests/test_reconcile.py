"""The map and the ladder reconciled: the registered cells read back from their outcome file,
and the cause section 4's rule names, for each way the cells could have come out."""
import pytest

from rlvr_dynamics.regimes import reconcile


def test_the_committed_outcome_reads_the_base_as_the_cause():
    cells = reconcile.cells()
    assert list(cells.index) == list("ABCD")
    assert cells.loc["A", "crossovers"] == [25, 30, 25]
    assert reconcile.crossed_by(cells, 120).to_dict() == {"A": 3, "B": 0, "C": 1, "D": 3}
    assert cells.loc["A", "base"] == cells.loc["D", "base"] != cells.loc["B", "base"]
    assert cells.attrs["cores"] == 2 and "Xeon" in cells.attrs["machine"]
    assert reconcile.cause(cells) == "base"


@pytest.mark.parametrize("readings, cause", [
    ("cpu-map-like ladder-like ladder-like cpu-map-like", "base"),
    ("cpu-map-like ladder-like cpu-map-like ladder-like", "code"),
    ("cpu-map-like ladder-like cpu-map-like cpu-map-like", "undecided"),
    ("neither ladder-like ladder-like cpu-map-like", "no anchor"),
])
def test_the_rule_names_each_cause_from_the_readings(readings, cause):
    cells = reconcile.cells()
    cells["reading"] = readings.split()
    assert reconcile.cause(cells) == cause


def test_a_line_that_does_not_read_is_named(tmp_path):
    text = (reconcile.REPO / reconcile.OUTCOME).read_text()
    bad = tmp_path / "outcome.txt"
    bad.write_text(text.replace("B.json: crossovers", "B.json: crossings"))
    with pytest.raises(ValueError, match=r"outcome.txt, line \d+: neither a cell"):
        reconcile.cells(bad)
    bad.write_text("\n".join(line for line in text.splitlines() if not line.startswith("C")
                             and "2009a7390032" not in line or line.startswith("#")))
    with pytest.raises(ValueError, match="A, B, C and D are needed"):
        reconcile.cells(bad)
