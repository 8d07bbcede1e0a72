"""Keys that travel: an evaluation is keyed by its settings and by what its model is, never by
where the model or the results folder lies nor by when a file was written. The same
evaluation asked from two results roots has one key; a touched weight file keeps it and a
changed byte moves it; a training run's model is named by its run, so a copy of the results
folder elsewhere (even one without the model's large files) finds the evaluations of the
first. Each check is paired with the change that must move the key."""
import os
import shutil
from pathlib import Path

import pytest

from rlvr_dynamics import measure as ev
from rlvr_dynamics import registry, store
from rlvr_dynamics.comparison import models as cm
from rlvr_dynamics.models import char_tokenizer, tiny_qwen2
from rlvr_dynamics.rl.grid import Training
from rlvr_dynamics.tasks.sums import ALPHABET

SETTINGS = ev.EvalSettings(n=2, max_tokens=4, chunk=2)


def save_tiny(folder: Path, seed: int = 2) -> Path:
    tok = char_tokenizer(ALPHABET)
    tiny_qwen2(tok, hidden=32, layers=2, heads=2, seed=seed).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    """A tiny model saved outside any results root."""
    return save_tiny(tmp_path_factory.mktemp("checkpoint") / "policy")


@pytest.fixture(scope="module")
def problems():
    return registry.load_benchmark("sums-test")[1][:2]


def use_root(monkeypatch, root: Path) -> Path:
    monkeypatch.setenv("RLVR_RESULTS", str(root))
    assert store.results_root() == root
    return root


def key(spec: str, problems, settings=SETTINGS) -> Path:
    """The evaluation folder of ``spec``, relative to the results root in use."""
    where = ev.run_dir("t", spec, "sums-test", problems, settings, "transformers")
    return where.relative_to(store.results_root())


def finished_run(root: Path, name: str = "grpo-seed0-0123456789ab", seed: int = 2) -> Path:
    """A finished training run under ``root`` (profile ``t``): its folder holds ``model/`` and
    a done marker with the model's checksums, as ``rl.runs.train`` leaves it."""
    run = root / "t" / "training" / name
    e = store.Entry(run, code="rlvr_dynamics.toy")
    e.code = "made-by-this"  # stands for the run's code fingerprint
    e.begin()
    save_tiny(run / "model", seed)
    store.write_json(run / "config.json", Training().run_config("grpo", seed).as_dict())
    store.write_json(run / "dynamics.json", [])
    e.finish({"label": "GRPO"})
    return run


def test_two_results_roots_give_one_key(tiny, problems, tmp_path, monkeypatch):
    spec = f"tiny:{tiny}"
    use_root(monkeypatch, tmp_path / "a")
    here = key(spec, problems)
    use_root(monkeypatch, tmp_path / "b")
    assert key(spec, problems) == here
    assert str(tmp_path) not in str(here) and here.parts[:3] == ("t", "evaluation", "tiny_policy")
    # the key still tells evaluations apart: other problems, other settings
    assert key(spec, problems[:1]) != here
    assert key(spec, problems, ev.EvalSettings(n=3, max_tokens=4, chunk=2)) != here


def test_a_touched_weight_file_keeps_the_key_and_a_changed_byte_moves_it(tmp_path, problems,
                                                                       monkeypatch):
    use_root(monkeypatch, tmp_path / "results")
    folder = save_tiny(tmp_path / "outside" / "policy")
    spec = f"tiny:{folder}"
    weights = folder / "model.safetensors"
    before, mtimes = key(spec, problems), registry.model_identity(spec)
    st = weights.stat()
    os.utime(weights, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # rewritten, same bytes
    assert registry.model_identity(spec) != mtimes  # a key by modification time would move
    assert key(spec, problems) == before
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0xFF  # one byte of the weights, the size unchanged
    weights.write_bytes(bytes(data))
    store._digest.cache_clear()  # a later process: nothing hashed yet
    assert key(spec, problems) != before
    data[-1] ^= 0xFF
    weights.write_bytes(bytes(data))
    store._digest.cache_clear()
    assert key(spec, problems) == before  # the same bytes again: the same evaluation


def test_a_folder_elsewhere_with_the_same_weights_is_the_same_model(tiny, tmp_path, problems,
                                                                   monkeypatch):
    use_root(monkeypatch, tmp_path / "results")
    copy = shutil.copytree(tiny, tmp_path / "moved" / tiny.name)
    assert key(f"tiny:{copy}", problems) == key(f"tiny:{tiny}", problems)
    other = save_tiny(tmp_path / "other" / tiny.name, seed=3)  # same name, other weights
    assert key(f"tiny:{other}", problems) != key(f"tiny:{tiny}", problems)


def test_a_runs_model_is_keyed_by_its_run(tmp_path, problems, monkeypatch):
    a = use_root(monkeypatch, tmp_path / "a")
    run = finished_run(a)
    spec = cm.run_spec(run)
    assert spec == f"tiny:{run / 'model'}"
    label, identity = ev.model_key(spec)
    assert label == "tiny:results/t/training/grpo-seed0-0123456789ab/model"
    assert identity["result"] == "t/training/grpo-seed0-0123456789ab"
    assert identity["code"] == "made-by-this" and identity["path"] == "model"
    assert identity["files"] == {name: f["sha256"] for name, f in
                                 store.read_json(run / "done.json")["files"].items()
                                 if name.startswith("model/")}
    here = key(spec, problems)
    # another run (another name: other settings) with the same bytes is another model ...
    twin = a / "t" / "training" / "grpo-seed1-0123456789ab"
    shutil.copytree(run, twin)
    assert key(cm.run_spec(twin), problems) != here
    # ... and the same run made by other code, or with other weights, too
    marker = store.read_json(twin / "done.json")
    store.write_json(twin / "done.json", {**marker, "code": "newer"})
    moved = key(cm.run_spec(twin), problems)
    store.write_json(twin / "done.json", {**marker, "files": {
        **marker["files"], "model/model.safetensors": {"size": 1, "sha256": "0" * 64}}})
    assert len({here, moved, key(cm.run_spec(twin), problems)}) == 3
    # its key needs the run's marker alone, not the model's large files
    shutil.rmtree(run / "model")
    assert key(spec, problems) == here


def test_a_copy_of_the_results_finds_the_evaluations_of_the_first(tmp_path, problems,
                                                                  monkeypatch, one_thread):
    """The reproduction chapter's path: ``comparison`` names each run by ``run_spec``,
    ``evaluate_models`` evaluates under one root; a copy of that root elsewhere reads every
    evaluation back without loading a model, even with the runs' model folders gone."""
    a = use_root(monkeypatch, tmp_path / "a")
    runs = [finished_run(a, f"grpo-seed{s}-0123456789ab", seed=2 + s) for s in (0, 1)]
    settings = {"paper": SETTINGS}

    def evaluated(root: Path):
        models = cm.comparison("sums-base", {"GRPO": [
            root / "t" / "training" / r.name for r in runs]})[1:]  # the runs, not the base
        return cm.evaluate_models(models, ["sums-test"], settings, "t", problems=2, workers=1,
                                  batch_size=8)

    first = evaluated(a)
    assert len(first) == 2
    b = use_root(monkeypatch, tmp_path / "elsewhere" / "b")
    shutil.copytree(a, b)
    for r in runs:
        shutil.rmtree(b / "t" / "training" / r.name / "model")  # a release without the models

    def no_model(*args, **kwargs):
        raise AssertionError("an evaluation stored under the first root was not found")

    monkeypatch.setattr(ev, "load_model", no_model)
    again = evaluated(b)
    assert again.keys() == first.keys()
    for k in first:
        assert again[k].equals(first[k])
    # the same request under a root that lacks the evaluations does load a model
    c = use_root(monkeypatch, tmp_path / "c")
    for r in runs:
        shutil.copytree(r, c / "t" / "training" / r.name)
    with pytest.raises(AssertionError, match="was not found"):
        evaluated(c)
