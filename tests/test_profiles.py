"""Profiles and parameters: bad input stops with an error naming it, before any compute."""
import subprocess
import sys

import pytest

from rlvr_dynamics import REPO
from rlvr_dynamics.params import SPECS, ParameterError, distribution, validate
from rlvr_dynamics.profiles import available_profiles, load_profile, notebook_defaults, resolve
from rlvr_dynamics.run import chapters, parse_overrides


def test_the_three_profiles_exist_and_resolve_for_every_chapter():
    assert {"smoke", "cpu", "paper"} <= set(available_profiles())
    for profile in ("smoke", "cpu", "paper"):
        for nb in chapters():
            assert resolve(profile, nb)["profile"] == profile


def test_every_parameter_cell_matches_its_spec():
    for nb in chapters():
        assert set(notebook_defaults(nb)) == set(SPECS[nb]), nb


def test_unknown_profile_lists_the_available_ones():
    with pytest.raises(ParameterError, match=r"unknown profile 'gpu'.*smoke"):
        load_profile("gpu")


def test_unknown_parameter_is_named():
    with pytest.raises(ParameterError, match=r"theory: unknown parameter 'sedd'"):
        resolve("smoke", "theory", {"sedd": 1})


def test_invalid_value_is_named():
    with pytest.raises(ParameterError, match=r"theory: parameter seed=-1 must be >= 0"):
        resolve("smoke", "theory", {"seed": -1})


def test_distribution_must_sum_to_one():
    with pytest.raises(ValueError, match="sum to 0.9"):
        distribution([0.5, 0.4])
    distribution([0.5, 0.5])


def test_overrides_parse_as_yaml_and_need_a_declaring_notebook():
    out = parse_overrides(["seed=3", "theory.vocab=5"], ["theory"])
    assert out == {"theory": {"seed": 3, "vocab": 5}}
    with pytest.raises(ParameterError, match="no selected notebook has a parameter 'nope'"):
        parse_overrides(["nope=1"], ["theory"])


def test_runner_rejects_bad_input_before_executing_anything(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "rlvr_dynamics.run", "--profile", "smoke",
                           "--param", "seed=-2"], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 2
    assert "seed=-2 must be >= 0" in proc.stderr
    assert "executing" not in proc.stderr and "[1/" not in proc.stderr


def test_a_profile_can_extend_another(tmp_path, monkeypatch):
    import rlvr_dynamics.profiles as profiles
    (tmp_path / "base.yaml").write_text("notebooks:\n  theory: {seed: 1, vocab: 4}\n")
    (tmp_path / "child.yaml").write_text("extends: base\nnotebooks:\n  theory: {vocab: 9}\n")
    (tmp_path / "loop.yaml").write_text("extends: loop\nnotebooks: {}\n")
    monkeypatch.setattr(profiles, "CONFIGS", tmp_path)
    assert profiles.load_profile("child")["theory"] == {"seed": 1, "vocab": 9}
    with pytest.raises(ParameterError, match="cycle"):
        profiles.load_profile("loop")


def test_a_profile_may_run_part_of_the_book():
    from rlvr_dynamics.profiles import profile_chapters

    assert profile_chapters("cpu") is None
    assert profile_chapters("cpu-smollm2") == ["training", "verdict"]
    training = resolve("cpu-smollm2", "training")
    assert (training["model"], training["task"], training["lora_rank"]) == ("smollm2", "arith", 16)
