"""The pretrained chapter's power plan (``chapters.pretrained.plan``): the pilot's values laid
out per seed and problem, the sizing against a design worked out by hand from ``power``, the
design rule at both of its outcomes, and the protocol registered once and read back."""
import numpy as np
import pandas as pd
import pytest

from rlvr_dynamics import power
from rlvr_dynamics.chapters.pretrained import plan
from rlvr_dynamics.rl.algorithms import BASE
from rlvr_dynamics.rl.registration import content_hash


def long(values: dict[str, np.ndarray], quantity: str = "Pass@1") -> pd.DataFrame:
    """``per_problem``'s rows of one setting and benchmark: model -> (seeds, problems)."""
    return pd.DataFrame([{"setting": "paper", "benchmark": "b", "model": m, "seed": s,
                          "problem": f"p{j}", "quantity": quantity, "value": v}
                         for m, x in values.items() for s, row in enumerate(x)
                         for j, v in enumerate(row)])


def test_the_matrix_is_seeds_by_problems_in_the_problems_order():
    x = np.arange(6.0).reshape(2, 3)
    table = long({"GRPO": x, BASE: x + 10})
    assert np.array_equal(plan.matrix(table.iloc[::-1], "Pass@1", "GRPO"), x[:, ::-1])
    assert np.array_equal(plan.matrix(table, "Pass@1", "GRPO"), x)
    assert np.array_equal(plan.matrix(table, "Pass@1", BASE), x + 10)


def test_the_sizing_is_powers_own_on_the_pilots_values():
    rng = np.random.default_rng(0)
    a = 40 + rng.normal(0, 3, (2, 1)) + rng.normal(0, 20, (2, 24))
    b = 30 + rng.normal(0, 20, (2, 24))
    c = plan.Contrast("Pass@1", "GRPO", BASE, 5.0)
    sizing = plan.size(long({"GRPO": a, BASE: b}), [c], range(2, 7), [8, 16, 24])
    comp = power.components(a, b)
    need = power.needed(comp, 5.0, range(2, 7), [8, 16, 24])
    row = sizing.loc[c.name]
    assert row["seed_a"] == pytest.approx(comp.seed_a)
    assert row["problem"] == pytest.approx(comp.problem)
    if need is None:
        assert np.isnan(row["seeds needed"])
    else:
        assert (row["seeds needed"], row["problems needed"]) == (need.seeds, need.problems)
    assert row["half-width at the largest design"] == pytest.approx(power.half_width(comp, 6, 24))


def test_the_design_is_the_most_any_contrast_needs_or_the_largest():
    reach = pd.DataFrame({"seeds needed": [2, 4], "problems needed": [32, 16]})
    assert plan.design({"x": reach}, range(2, 6), [16, 32, 64]) == (4, 32)
    beyond = reach.assign(**{"seeds needed": [2, np.nan]})
    assert plan.design({"x": reach, "y": beyond}, range(2, 6), [16, 32, 64]) == (5, 64)


def test_the_headline_contrasts_name_each_algorithm_and_the_pair():
    names = [c.name for c in plan.contrasts(["GRPO", "GRPO-N"])]
    assert "Pass@1: GRPO - Base" in names and "mid-curve Pass@k: GRPO-N - GRPO" in names
    assert "answer entropy: GRPO-N - GRPO" in names
    assert not [c for c in plan.contrasts(["GRPO"]) if c.b != BASE]


def test_the_protocol_is_registered_once_and_its_sizing_never_recomputed(tmp_path, monkeypatch):
    monkeypatch.setenv("RLVR_RESULTS", str(tmp_path))
    what = {"contrasts": ["x"], "pilot": 2}
    first = plan.protocol(what, "test")
    again = plan.protocol(what, "test")
    assert again == first and content_hash(again) == content_hash(first)
    assert plan.protocol({**what, "pilot": 3}, "test")["registered"]  # another protocol
    table = pd.DataFrame({"contrast": ["x"], "seeds needed": [3]}).set_index("contrast")
    pilot = {"grpo-seed0-abc": "code1"}
    stored = plan.sized(what, "test", {"b": table}, (3, 16), pilot)
    later = plan.sized(what, "test", {"b": table.assign(**{"seeds needed": [5]})}, (5, 32),
                       pilot)
    assert later == stored and (stored["seeds"], stored["problems"]) == (3, 16)
    retrained = plan.sized(what, "test", {"b": table}, (5, 32), {"grpo-seed0-abc": "code2"})
    assert (retrained["seeds"], retrained["problems"]) == (5, 32)  # a new pilot sizes again
    assert plan.protocol(what, "test") == first  # the sizing beside it leaves it done


def test_a_run_is_judged_when_it_began_with_the_registrations_hash(tmp_path):
    """``registration.registered_before``: the run's record of the hash decides, with a time
    not before the registration's (the same second counts: times are kept to the second); a
    run without the hash, or begun earlier, is not judged."""
    from rlvr_dynamics.rl.config import STARTED
    from rlvr_dynamics.rl.registration import registered_before
    from rlvr_dynamics.store import write_json

    record = {"registered": "2026-12-07T01:28:10+00:00", "pilot": 2}
    key = content_hash(record)
    for name, time, registration, judged in (
            ("same second", "2026-12-07T01:28:10+00:00", key, True),
            ("later", "2026-12-07T01:30:00+00:00", key, True),
            ("earlier", "2026-12-07T01:28:09+00:00", key, False),
            ("no hash", "2026-12-07T01:30:00+00:00", None, False)):
        folder = tmp_path / name
        folder.mkdir()
        write_json(folder / STARTED, {"time": time, "registration": registration})
        assert registered_before(record, [folder]) == judged, name
