"""Profiles and parameters: one declaration per chapter, bad input stops with an error naming
it before any compute, and the runner hands each chapter the parameters of those it reads."""
import subprocess
import sys

import pytest

from rlvr_dynamics import REPO
from rlvr_dynamics.chapters import NAMES, ParameterError
from rlvr_dynamics.chapters import reproduction as rp
from rlvr_dynamics.chapters import toy_dynamics
from rlvr_dynamics.profiles import (available_profiles, load_profile, notebook_defaults,
                                    params_class, parse_overrides, plan, resolve)
from rlvr_dynamics.execution import chapters


def test_the_book_and_the_declarations_list_the_same_chapters():
    assert chapters() == list(NAMES)


def test_the_three_profiles_exist_and_resolve_for_every_chapter_they_run():
    from rlvr_dynamics.profiles import profile_chapters
    assert {"smoke", "cpu", "paper"} <= set(available_profiles())
    for profile in ("smoke", "cpu", "paper"):
        for nb, values in plan(profile, profile_chapters(profile) or chapters()).items():
            assert values["profile"] == profile, nb


def test_a_chapter_a_profile_cannot_run_is_refused_before_it_starts():
    """The regimes are dials of the sums base: under the paper's model they are an error at
    resolution (the chapter builds its runs there), not inside the notebook."""
    with pytest.raises(ParameterError, match="dials of the sums base"):
        plan("paper", ["scenario"])


def test_every_parameter_cell_names_its_profile_only():
    """A notebook's ``parameters`` cell holds the profile and nothing its ``Params`` declares:
    the defaults are written once, in the declaration."""
    for nb in chapters():
        assert notebook_defaults(nb) == {"profile": "cpu"}, nb


def test_a_cell_that_repeats_a_declared_default_is_caught(monkeypatch, tmp_path):
    import rlvr_dynamics.profiles as profiles
    text = (REPO / "notebooks" / "theory.md").read_text().replace(
        'profile = "cpu"\n', 'profile = "cpu"\nseed = 0\n', 1)
    (tmp_path / "theory.md").write_text(text)
    monkeypatch.setattr(profiles, "NOTEBOOKS", tmp_path)
    assert notebook_defaults("theory") == {"profile": "cpu", "seed": 0}


def test_papermill_sees_every_declared_parameter():
    """The copy papermill executes has the declared defaults in its ``parameters`` cell (so it
    knows every name it injects), generated from ``Params``."""
    import ast

    import jupytext

    from rlvr_dynamics.execution import declared
    for nb in chapters():
        cell, = [c for c in declared(jupytext.read(REPO / "notebooks" / f"{nb}.md"), nb).cells
                 if "parameters" in c.metadata.get("tags", [])]
        values = {n.targets[0].id: ast.literal_eval(n.value) for n in ast.parse(cell.source).body}
        assert values == params_class(nb)().values(), nb


def test_a_chapter_without_its_results_is_run_without_the_cells_that_need_them(tmp_path,
                                                                               monkeypatch):
    """The pretrained chapter under the default profile, whose source profile has not run here,
    is executed without its ``needs-results`` cells (so no cell branches on the results and no
    section stands empty) and with the one that says how to make them; with its results, the
    other way round. Its ``available`` reads the source profile's marker."""
    import jupytext

    from rlvr_dynamics.chapters import pretrained
    from rlvr_dynamics.execution import NEEDS_RESULTS, WITHOUT_RESULTS, available, declared

    monkeypatch.setenv("RLVR_RESULTS", str(tmp_path))
    source = jupytext.read(REPO / "notebooks" / "pretrained.md")
    tags = [c.metadata.get("tags", []) for c in source.cells]
    assert sum(NEEDS_RESULTS in t for t in tags) >= 10 and sum(WITHOUT_RESULTS in t for t in tags)
    P = pretrained.Params.parse(resolve("cpu", "pretrained", {}))
    assert P.source == "cpu-smollm2" and not available("pretrained", P.values())
    for present, kept, dropped in ((False, WITHOUT_RESULTS, NEEDS_RESULTS),
                                   (True, NEEDS_RESULTS, WITHOUT_RESULTS)):
        cells = declared(jupytext.read(REPO / "notebooks" / "pretrained.md"), "pretrained",
                         present).cells
        left = [c.metadata.get("tags", []) for c in cells]
        assert not any(dropped in t for t in left) and any(kept in t for t in left)
        assert any("how_to_run" in c.source for c in cells) == (not present)
    assert available("pretrained", {**P.values(), "source": None})  # it computes its own
    assert available("theory", {})  # a chapter without the hook always has its results


@pytest.mark.parametrize("profile", ["cpu", "smoke"])
def test_a_page_run_by_hand_gets_its_profiles_values(profile):
    """In JupyterLab (no papermill) the ``parameters`` cell names a profile; the page's first
    call resolves it as the runner does, with what the reader assigned on top, and sets the
    names papermill would have set."""
    from rlvr_dynamics import page
    for nb in chapters():
        namespace = {"profile": profile}
        P = page.opened(namespace, nb)
        assert P.values() == plan(profile, [nb])[nb], nb
        assert {k: namespace[k] for k in P.values()} == P.values()
    assert page.parameters({"profile": profile, "seed": 7}, "theory").seed == 7
    with pytest.raises(ParameterError, match="seed"):
        page.parameters({"profile": profile, "seed": -1}, "theory")


def test_the_cpu_profile_is_the_declared_defaults():
    """Every chapter's defaults are the cpu profile's, the parameters it reads of other chapters
    (``dependencies``) included: they default to those chapters' defaults."""
    for nb, values in plan("cpu", chapters()).items():
        assert values == params_class(nb)().values(), nb


def test_unknown_profile_lists_the_available_ones():
    with pytest.raises(ParameterError, match=r"unknown profile 'gpu'.*smoke"):
        load_profile("gpu")


def test_unknown_parameter_is_named():
    with pytest.raises(ParameterError, match=r"theory: unknown parameter 'sedd'"):
        resolve("smoke", "theory", {"sedd": 1})


@pytest.mark.parametrize("override,message", [
    ({"seed": -1}, r"theory: parameter seed=-1: Input should be greater than or equal to 0"),
    ({"seed": 1.5}, r"theory: parameter seed=1.5: Input should be a valid integer"),
    ({"mc_samples": [10, 0, 100]}, r"theory: parameter mc_samples\[1\]="),
    ({"hidden": 12}, r"theory: hidden=12 must be a multiple of 8"),
])
def test_invalid_value_is_named(override, message):
    with pytest.raises(ParameterError, match=message):
        resolve("smoke", "theory", override)


def test_distribution_must_sum_to_one():
    with pytest.raises(ParameterError, match="pi0/rewards: probabilities must sum to 1, they sum "
                                             "to 0.9"):
        toy_dynamics.Params.parse({"pi0": [0.5, 0.3, 0.1]})


def test_overrides_parse_as_yaml_and_need_a_declaring_chapter():
    out = parse_overrides(["seed=3", "theory.vocab=5"], ["theory"])
    assert out == {"theory": {"seed": 3, "vocab": 5}}
    with pytest.raises(ParameterError, match="no selected chapter has a parameter 'nope'"):
        parse_overrides(["nope=1"], ["theory"])


def test_an_override_of_the_training_chapter_reaches_the_reproduction_chapter():
    """The runs the reproduction chapter evaluates are the training chapter's, overrides
    included -- whether both chapters run or only the reproduction one."""
    default = params_class("reproduction").parse(
        plan("smoke", ["reproduction"])["reproduction"]).training
    for selected in (chapters(), ["reproduction"]):
        P = params_class("reproduction").parse(
            plan("smoke", selected, ["learning_rate=0.002"])["reproduction"])
        T = P.training
        runs = T.runs()
        assert {cfg.learning_rate for cfg in runs.values()} == {0.002}
        assert set(runs) == set(default.runs())
        assert all(runs[k] != default.runs()[k] for k in runs)


def test_the_training_chapter_starts_from_the_base_model_chapters_base():
    T = params_class("reproduction").parse(
        plan("smoke", chapters(), ["base_model.steps=150"])["reproduction"]).training
    assert {cfg.model.steps for cfg in T.runs().values()} == {150}
    assert T.runs()[("grpo", 0, None)].model == T.pretraining.config()


def test_what_a_chapter_reads_of_another_is_a_typed_field_filled_by_the_runner():
    """A chapter reads another's parameters through a field of a library type that the other's
    ``Params`` is (no chapter name in a string): the runner fills it from that chapter's
    resolved values, a profile cannot set it behind that chapter's back, and the default is
    that chapter's defaults (the cpu profile)."""
    from rlvr_dynamics.profiles import dependencies
    from rlvr_dynamics.rl.grid import Training
    from rlvr_dynamics.toy import ToySettings
    assert {f: (c, k) for f, (c, k) in dependencies("scenario").items()} == {
        "training": ("training", Training), "toy": ("toy_dynamics", ToySettings)}
    assert dependencies("training") == {"pretraining": ("base_model", type(
        params_class("training")().pretraining))}
    assert dependencies("theory") == {}
    smoke = params_class("scenario").parse(plan("smoke", ["scenario"])["scenario"])
    assert smoke.training == Training.model_validate(
        {k: v for k, v in plan("smoke", ["training"])["training"].items()
         if k in Training.model_fields})
    assert smoke.training != Training() and smoke.toy.optimizer == "adam"
    with pytest.raises(ParameterError, match="'training' .* holds the parameters of the chapter "
                                             "'training': set them there"):
        resolve("smoke", "scenario", {"training": {"steps": 3}})
    assert rp.Params().training.runs() == params_class("training")().runs()


def test_runner_rejects_bad_input_before_executing_anything(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "rlvr_dynamics.run", "--profile", "smoke",
                           "--param", "seed=-2"], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 2
    assert "seed=-2: Input should be greater than or equal to 0" in proc.stderr
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

    assert profile_chapters("smoke") is None
    assert "mechanism" not in profile_chapters("cpu") and "ladder" in profile_chapters("cpu")
    assert profile_chapters("cpu-smollm2") == ["pretrained", "verdict"]
    from rlvr_dynamics.chapters import pretrained
    P = pretrained.Params.parse({**plan("cpu-smollm2", ["pretrained"])["pretrained"],
                                 "prompt": "instruction", "boxed_only": True})
    cfg = pretrained.runs(P)["grpo", 0]
    assert (cfg.model, cfg.lora_rank, cfg.task.levels) == ("smollm2", 16, ((1, 2), (1, 3)))


def test_the_paper_profile_runs_appendix_c2():
    """Appendix C.2's values, written once in configs/paper.yaml, are what the paper profile
    runs and what the training chapter shows beside a run's own."""
    from rlvr_dynamics.chapters.training import APPENDIX_C2, paper_settings
    paper = plan("paper", ["training"])["training"]
    shown = paper_settings()
    assert {k: paper[k] for k in APPENDIX_C2} == shown
    # the paper's own words: 1,024 prompts x 8 rollouts, mini-batches of 256 prompts,
    # lr 1e-6, KL 1e-3, clip 0.2, entropy bonus 1e-4, temperature 1
    assert (shown["generation_batch"], shown["num_generations"], shown["update_batch"]) == (
        1024 * 8, 8, 256 * 8)
    assert (shown["learning_rate"], shown["beta"], shown["epsilon"], shown["entropy_coef"],
            shown["temperature"]) == (1e-6, 1e-3, 0.2, 1e-4, 1.0)


def test_a_path_prior_has_one_range_everywhere():
    """P(stepwise) must lie strictly inside (0, 1) wherever it is set: a regime of a profile
    (refused at resolution, before anything runs), a run, a refit."""
    from rlvr_dynamics.path_prior import Refit
    for bad in (1.0, 0.0):
        with pytest.raises(ParameterError, match=r"regimes\[x\]\[prior\]"):
            plan("cpu", ["regime_map"], [f"regimes={{x: {{prior: {bad}}}}}"])
        with pytest.raises(ValueError, match="prior"):
            Refit(prior=bad)
    cfg = params_class("training")().run_config("grpo", 0)
    with pytest.raises(ValueError, match="TrainConfig.path_prior=1.0"):
        cfg.replace(path_prior=1.0)
    ok = plan("cpu", ["regime_map"], ["regimes={x: {prior: 0.5}}"])["regime_map"]
    assert ok["regimes"] == {"x": {"prior": 0.5, "guess": None, "hard_share": None,
                                   "base_seed": None, "G": None, "algorithms": None}}
    with pytest.raises(ParameterError, match=r"controls\['three paths'\]='two paths': both must"):
        plan("cpu", ["scenario"], ["regimes={x: {prior: 0.5}}"])  # the arm named, not run
    assert cfg.replace(path_prior=0.5).path_prior == Refit(prior=0.5).prior


@pytest.mark.parametrize("profile", ["cpu", "smoke", "cpu-ladder"])
def test_the_rerun_box_gives_a_command_that_reruns_the_chapter_as_built(profile):
    """Each chapter's rerun box (``execution.rerun_md``) holds the exact ``make reproduce``
    command: its PARAMS, split as the Makefile splits them and parsed as the runner parses
    them, give the values this build ran with; the box sits right under the page's title,
    once however often it is added."""
    import re
    import shlex

    import nbformat

    from rlvr_dynamics.execution import BOX, RERUN, rerun_md, with_rerun_box

    selected = [nb for nb in chapters() if nb in RERUN]
    assert selected == chapters()
    resolved = plan(profile, selected)
    for nb in selected:
        box = rerun_md(nb, profile, resolved[nb], 1.5)
        (command,) = re.findall(r"^make reproduce.*$", box, flags=re.M)
        words = dict(w.split("=", 1) for w in shlex.split(command)[2:])
        assert words["NB"] == nb and words.get("PROFILE", "cpu") == profile
        pairs = words.get("PARAMS", "").split()
        assert plan(profile, [nb], pairs)[nb] == resolved[nb], (nb, pairs)
        assert {p.split("=")[0] for p in pairs} == {n for n in RERUN[nb] if n in resolved[nb]}
        assert "in 1.5 min in this build" in box
    page = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Title\n\nText."),
                                           nbformat.v4.new_code_cell("x = 1")])
    page.metadata["papermill"] = {"parameters": resolved["theory"], "duration": 60.0}
    for _ in range(2):
        with_rerun_box(page, "theory", profile)
    assert [c.source.strip().splitlines()[0] for c in page.cells] == [
        "# Title", ":::{admonition} Rerun this chapter", "Text.", "x = 1"]
    assert sum(BOX in c.metadata.get("tags", []) for c in page.cells) == 1
