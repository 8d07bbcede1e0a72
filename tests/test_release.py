"""The results release: a tiny store released into a tmp release folder verifies; a changed byte,
an unlisted file, an unfinished or damaged result, uncommitted code, a result rewritten under a
released name and a release over budget are each refused and named; weights are withheld with
their checksums kept; a second part adds only what is new; every release in the repository
verifies; a release waits for a build of its profile."""
import gzip
import json
import random
import shutil
import subprocess

import pytest

from rlvr_dynamics import REPO, lock, release, run, store
from test_lock import hold

PROFILE = "smoke"


@pytest.fixture
def repo(tmp_path):
    """A checkout whose ``src/`` is committed (the code the results are made by)."""
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "code.py").write_text("x = 1\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "."], check=True)
    commit(root)
    return root


def commit(root):
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t",
                    "commit", "-qam", "code"], check=True)


@pytest.fixture
def roots(tmp_path, monkeypatch):
    """A tmp results root and a tmp release root."""
    monkeypatch.setenv("RLVR_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("RLVR_RELEASE", str(tmp_path / "release"))
    monkeypatch.delenv("RLVR_REUSE_STALE", raising=False)
    return tmp_path / "results" / PROFILE, tmp_path / "release" / PROFILE


def finished(rel, files, code=None):
    """A finished store entry ``results/smoke/<rel>`` holding ``files`` (name -> bytes)."""
    e = store.Entry(store.results_root() / PROFILE / rel, code="rlvr_dynamics.toy")
    if code is not None:
        e.code = code  # stands for a fingerprint of older code
    e.begin()
    for name, data in files.items():
        (e.path / name).parent.mkdir(parents=True, exist_ok=True)
        (e.path / name).write_bytes(data)
    e.finish({"n": 1})
    return e.path


def run_files():
    return {"dynamics.json": b'{"reward": [0.1, 0.5]}', "config.json": b"{}",
            "model/model.safetensors": b"W" * 300, "model/config.json": b"{}",
            "optimizer.pt": b"O" * 200, "checkpoints/checkpoint-2/x.json": b"[]"}


def test_a_store_is_released_without_weights_and_verifies(roots, repo):
    results, out = roots
    finished("training/grpo-seed0", run_files())
    finished("evaluation/base/sums-1", {"passk.json": b"[1, 2]"}, code="older")
    finished("pretrained", {"plans/a/protocol.json": b"{}"})
    (results / "theory").mkdir()
    (results / "theory" / "checks_1.json").write_text("{}")   # not a store entry
    part = release.add(PROFILE, repo=repo)
    release.verify(PROFILE)
    head = subprocess.run(["git", "-C", repo, "rev-parse", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    assert part["part"] == 1 and part["commit"] == head
    assert part["entries"] == ["evaluation/base/sums-1", "pretrained", "training/grpo-seed0"]
    assert part["not_results"] == ["theory/checks_1.json"] and part["left_for_later"] == []
    assert part["machine"]["cores"] >= 1 and part["machine"]["cpu"]
    assert part["parameters"]["training"]["profile"] == PROFILE
    assert part["start"] <= part["end"] and part["wall_s"] >= 0
    m = json.loads((out / "manifest.json").read_text())
    run_ = m["entries"]["training/grpo-seed0"]
    # the commit is named only where the checkout's code has the result's fingerprint
    assert run_["commit"] == head and m["entries"]["evaluation/base/sums-1"]["commit"] is None
    assert run_["code"] == store.Entry(results, code="rlvr_dynamics.toy").code
    released = sorted(p.relative_to(out / "training/grpo-seed0").as_posix()
                      for p in (out / "training/grpo-seed0").rglob("*") if p.is_file())
    assert released == ["code.json", "config.json.gz", "done.json", "dynamics.json.gz"]
    assert gzip.decompress((out / "training/grpo-seed0/dynamics.json.gz").read_bytes()) == \
        run_files()["dynamics.json"]                           # records kept gzipped
    marker = json.loads((out / "training/grpo-seed0/done.json").read_text())
    assert set(run_["withheld"]) == {"model/model.safetensors", "model/config.json",
                                     "optimizer.pt", "checkpoints/checkpoint-2/x.json"}
    assert all(run_["withheld"][n] == marker["files"][n] for n in run_["withheld"])
    assert (out / "training/grpo-seed0/done.json").read_bytes() == \
        (results / "training/grpo-seed0/done.json").read_bytes()
    assert (out / "theory").exists() is False
    for name, f in m["files"].items():
        assert f["sha256"] == store.digest(out / name) and f["size"] == (out / name).stat().st_size


def test_what_is_withheld_is_decided_by_name():
    for name in ("model.safetensors", "model/config.json", "a/pytorch_model.bin", "optimizer.pt",
                 "rng_state.pth", "base.gguf", "checkpoints/state.json",
                 "checkpoint-40/trainer_state.json", "global_step4/x.json"):
        assert release.withheld(name), name
    for name in ("dynamics.json", "model.json", "models/a.json", "probe.npz", "config.json",
                 "tokenizer.json", "step-100/config.json"):
        assert not release.withheld(name), name


def test_a_changed_byte_or_an_unlisted_file_is_named_and_refused(roots, repo):
    results, out = roots
    finished("training/grpo-seed0", run_files())
    release.add(PROFILE, repo=repo)
    release.verify(PROFILE)                                  # as released: it verifies
    path = out / "training/grpo-seed0/dynamics.json.gz"
    data = path.read_bytes()
    path.write_bytes(data[:5] + bytes([data[5] ^ 1]) + data[6:])
    with pytest.raises(release.ReleaseError, match="grpo-seed0/dynamics.json.gz has changed"):
        release.verify(PROFILE)
    finished("training/grpo-seed1", run_files())
    with pytest.raises(release.ReleaseError, match="grpo-seed0/dynamics.json.gz has changed"):
        release.add(PROFILE, repo=repo)                      # nothing added to it
    assert not (out / "training/grpo-seed1").exists()
    path.write_bytes(data)
    release.verify(PROFILE)
    path.with_name("extra.json").write_text("{}")
    with pytest.raises(release.ReleaseError, match="grpo-seed0/extra.json is not in its manifest"):
        release.verify(PROFILE)
    path.with_name("extra.json").unlink()
    path.unlink()
    with pytest.raises(release.ReleaseError, match="grpo-seed0/dynamics.json.gz is missing"):
        release.verify(PROFILE)


def test_unfinished_and_damaged_results_are_refused(roots, repo):
    results, out = roots
    finished("training/grpo-seed0", run_files())
    begun = store.Entry(results / "training/grpo-seed1", code="rlvr_dynamics.toy")
    store.write_json(begun.begin() / "part-0.json", [1])
    with pytest.raises(release.ReleaseError, match="training/grpo-seed1 is unfinished"):
        release.add(PROFILE, repo=repo)
    assert not out.exists()
    part = release.add(PROFILE, part=True, repo=repo)       # what finished, as a part
    assert part["entries"] == ["training/grpo-seed0"]
    assert part["left_for_later"] == ["training/grpo-seed1"]
    assert not (out / "training/grpo-seed1").exists()
    finished("evaluation/e", {"passk.json": b"[1, 2]"})
    (results / "evaluation/e/passk.json").write_bytes(b"[1, 3]")
    with pytest.raises(release.ReleaseError,
                       match=r"results/smoke/evaluation/e is damaged: passk.json has changed"):
        release.add(PROFILE, part=True, repo=repo)
    assert not (out / "evaluation").exists()
    assert (results / "evaluation/e/done.json").is_file()    # refused, not set aside


def test_results_of_uncommitted_code_are_refused(roots, repo):
    finished("training/grpo-seed0", run_files())
    (repo / "src" / "code.py").write_text("x = 2\n")
    with pytest.raises(release.ReleaseError, match=r"uncommitted changes under src/ \(src/code.py\)"):
        release.add(PROFILE, repo=repo)
    commit(repo)
    assert release.add(PROFILE, repo=repo)["entries"] == ["training/grpo-seed0"]


def test_a_second_part_adds_only_new_results_and_rewrites_none(roots, repo):
    results, out = roots
    finished("training/grpo-seed0", run_files())
    release.add(PROFILE, repo=repo)
    first = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()
             and p.name != "manifest.json"}
    assert release.add(PROFILE, repo=repo) is None           # nothing new: no part
    finished("training/grpo-seed1", run_files())
    part = release.add(PROFILE, repo=repo)
    assert part["part"] == 2 and part["entries"] == ["training/grpo-seed1"]
    assert all(p.stat().st_mtime_ns == t for p, t in first.items())
    m = json.loads((out / "manifest.json").read_text())
    assert [p["part"] for p in m["parts"]] == [1, 2]
    assert {r: e["part"] for r, e in m["entries"].items()} == {"training/grpo-seed0": 1,
                                                               "training/grpo-seed1": 2}
    release.verify(PROFILE)
    shutil.rmtree(results / "training/grpo-seed0")            # computed again, otherwise
    finished("training/grpo-seed0", {**run_files(), "dynamics.json": b'{"reward": [0.2]}'})
    with pytest.raises(release.ReleaseError, match="training/grpo-seed0 differs from what part 1 "
                                                   "released"):
        release.add(PROFILE, repo=repo)
    release.verify(PROFILE)


def test_the_budget_is_enforced_naming_the_largest_files(roots, repo, monkeypatch):
    results, out = roots
    noise = random.Random(0).randbytes                        # bytes gzip cannot shrink
    finished("evaluation/big", {"passk.json": noise(5000), "small.json": b"2"})
    finished("evaluation/small", {"passk.json": noise(100)})
    monkeypatch.setattr(release, "PROFILE_BUDGET", 4000)
    with pytest.raises(release.ReleaseError, match=r"release/smoke would hold .* over its budget.*"
                                                   r"largest files: smoke/evaluation/big/passk.json.gz"):
        release.add(PROFILE, repo=repo)
    assert not out.exists()
    monkeypatch.setattr(release, "PROFILE_BUDGET", 10_000)
    release.add(PROFILE, repo=repo)
    other = out.parent / "cpu"                                # another profile's release
    other.mkdir()
    (other / "a.json").write_bytes(b"4" * 6000)
    store.write_json(other / "manifest.json", {"files": {"a.json": {"size": 6000, "sha256": "-"}}})
    monkeypatch.setattr(release, "TOTAL_BUDGET", 12_000)
    finished("evaluation/more", {"passk.json": noise(1000)})
    with pytest.raises(release.ReleaseError, match=r"release/ would hold .* largest files: "
                                                   r"cpu/a.json"):
        release.add(PROFILE, repo=repo)


def test_every_release_in_the_repository_verifies(roots, repo, tmp_path):
    """The check ``make test`` runs on every build: each ``release/<profile>/`` against its
    manifest (none yet is fine); shown to fail on a planted mismatch in a tmp copy."""
    assert release.verify_all(REPO / "release") == {}
    copy = tmp_path / "copy"
    if (REPO / "release").is_dir():
        shutil.copytree(REPO / "release", copy)
    finished("training/grpo-seed0", run_files())
    release.add(PROFILE, repo=repo, root=copy)
    assert release.verify_all(copy) == {}
    path = next(p for p in sorted((copy / PROFILE).rglob("*.json")) if p.name != "manifest.json")
    path.write_text(path.read_text() + " ")
    assert list(release.verify_all(copy)) == [PROFILE]
    assert path.relative_to(copy).as_posix() in release.verify_all(copy)[PROFILE]
    begun = copy / "cpu-begun"                       # a first part begun: its ledger alone
    release.start_part("cpu-begun", repo=repo, root=copy)
    assert PROFILE in release.verify_all(copy) and "cpu-begun" not in release.verify_all(copy)
    (begun / "stray.json").write_text("{}")          # anything beside it is a release to check
    assert "has no manifest.json" in release.verify_all(copy)["cpu-begun"]


def test_a_release_waits_for_a_build_of_its_profile(roots, capsys):
    first = hold(PROFILE)
    assert first.stdout.readline() == "held\n"
    with pytest.raises(lock.Busy, match=f"pid {first.pid}"):
        release.add(PROFILE, wait=False)
    assert run.main(["release", "--profile", PROFILE, "--no-wait"]) == lock.EXIT_BUSY
    assert f"profile smoke is being built by pid {first.pid} (command holder nowait)" \
        in capsys.readouterr().err
    first.stdin.close()
    assert first.wait() == 0


def test_a_base_keeps_its_weights_in_the_release():
    """The bases' weights are released (parts resume from them, pages load them); every other
    result's are not."""
    assert not release.withheld("model.safetensors", "rlvr_dynamics.pretrain")
    assert not release.withheld("step-30/model.safetensors", "rlvr_dynamics.pretrain")
    assert release.withheld("model.safetensors", "rlvr_dynamics.path_prior")
    assert release.withheld("model/model.safetensors", "rlvr_dynamics.rl.runs")


def test_a_base_keeps_its_weights_until_its_profile_is_complete_and_no_page_loads_them(
        roots, repo, monkeypatch):
    """A part keeps a base's weights (a later part resumes from them); the release of the
    complete profile withdraws them where none of its chapters loads a base (the manifest
    then lists them as withheld, with the checksums the done marker records, and the part
    names them), and keeps them where one does."""
    results, out = roots

    def base(rel):
        e = store.Entry(results / rel, code="rlvr_dynamics.pretrain")
        e.begin()
        (e.path / "model.safetensors").write_bytes(b"B" * 400)
        (e.path / "log.json").write_bytes(b"{}")
        return e.finish({})

    base("base_models/a")
    release.add(PROFILE, part=True, repo=repo)
    assert (out / "base_models/a/model.safetensors").is_file()
    assert release.add(PROFILE, complete=True, repo=repo) is None   # smoke's pages load bases
    assert (out / "base_models/a/model.safetensors").is_file()
    monkeypatch.setattr(release, "profile_chapters", lambda profile: ["mechanism"])
    base("base_models/b")
    finished("training/grpo-seed0", run_files())
    part = release.add(PROFILE, complete=True, repo=repo)
    release.verify(PROFILE)
    assert part["withdrawn"] == ["base_models/a/model.safetensors"]
    assert not (out / "base_models/a/model.safetensors").exists()
    assert not (out / "base_models/b/model.safetensors").exists()
    assert (out / "base_models/b/log.json.gz").is_file()
    m = json.loads((out / "manifest.json").read_text())
    for rel in ("base_models/a", "base_models/b"):
        marker = json.loads((out / rel / "done.json").read_text())
        assert m["entries"][rel]["withheld"] == {
            "model.safetensors": marker["files"]["model.safetensors"]}
        assert "model.safetensors" not in m["entries"][rel]["released"]
    shutil.rmtree(results)
    release.restore(PROFILE)
    a = store.Entry(results / "base_models/a", code="rlvr_dynamics.pretrain")
    assert a.done and not a.whole and a.withheld == ["model.safetensors"]


def test_a_result_remade_for_its_withheld_weights_is_recorded_not_rewritten(roots, repo):
    """A refit released without its weights, restored, and computed again for a later run
    with other weights: the next part records the remake (both markers' sha256, the weights
    as released and as remade) and releases the new results beside it, keeping the released
    refit as it was; provenance names it. A released file that differs is still refused."""
    results, out = roots

    def refit(weights: bytes, log: bytes = b"{}"):
        e = store.Entry(results / "base_models/b-prior-x", code="rlvr_dynamics.path_prior")
        e.begin(fresh=True)
        (e.path / "model.safetensors").write_bytes(weights)
        (e.path / "log.json").write_bytes(log)
        return e.finish({"losses": [len(weights)]})

    refit(b"R" * 100)
    release.add(PROFILE, part=True, repo=repo)
    before = (out / "base_models/b-prior-x/done.json").read_bytes()
    shutil.rmtree(results)
    release.restore(PROFILE)
    refit(b"S" * 101)                                          # remade: other weights
    finished("training/grpo-seed0", run_files())
    part = release.add(PROFILE, part=True, repo=repo)
    release.verify(PROFILE)
    assert part["entries"] == ["training/grpo-seed0"]
    remade = part["remade"]["base_models/b-prior-x"]
    assert list(remade["files"]) == ["model.safetensors"]
    assert remade["files"]["model.safetensors"]["remade"]["size"] == 101
    assert (out / "base_models/b-prior-x/done.json").read_bytes() == before
    assert release.provenance(PROFILE)["remade"]["base_models/b-prior-x"]["in part"] == 2
    assert release.add(PROFILE, part=True, repo=repo) is None   # recorded once
    refit(b"S" * 101, log=b'{"other": 1}')                      # a released file differs
    with pytest.raises(release.ReleaseError, match="b-prior-x differs from what part 1"):
        release.add(PROFILE, part=True, repo=repo)


def test_a_restored_result_is_read_without_its_weights_and_remade_for_them(roots, repo):
    """Restored into an empty results folder, a run is done for what reads its dynamics, not
    whole for what loads its model; loading the model names the release and the remedy; the
    store sets aside a restored file that changed; a recompute starts the folder afresh."""
    from rlvr_dynamics import registry
    results, out = roots
    finished("training/grpo-seed0", run_files())
    finished("evaluation/e", {"passk.json": b"[1, 2]"})
    release.add(PROFILE, repo=repo)
    shutil.rmtree(results)
    assert release.restore(PROFILE) == ["evaluation/e", "training/grpo-seed0"]
    assert release.restore(PROFILE) == []                     # nothing restored twice
    run_ = store.Entry(results / "training/grpo-seed0", code="rlvr_dynamics.toy")
    assert run_.done and not run_.whole
    assert run_.withheld == ["checkpoints/checkpoint-2/x.json", "model/config.json",
                             "model/model.safetensors", "optimizer.pt"]
    assert store.Entry(results / "evaluation/e", code="rlvr_dynamics.toy").whole
    assert store.withheld_from(run_.path / "model") == "smoke/training/grpo-seed0"
    assert store.withheld_from(results / "evaluation/e" / "x") is None
    with pytest.raises(FileNotFoundError, match="results/smoke/training/grpo-seed0 was restored "
                                                "from it without them"):
        registry.check_model(f"tiny:{run_.path / 'model'}")
    (run_.path / "dynamics.json").write_bytes(b'{"reward": [0.1, 0.6]}')  # a changed byte
    assert not run_.done and not (results / "training/grpo-seed0").exists()
    assert release.restore(PROFILE) == ["training/grpo-seed0"]
    run_.begin()                                              # computed again: afresh
    assert sorted(p.name for p in run_.path.iterdir()) == ["code.json"]


def test_reading_only_refuses_to_compute_a_result_of_the_library(roots, monkeypatch):
    results, _ = roots
    monkeypatch.setenv("RLVR_READ_ONLY", "1")
    with pytest.raises(store.NotStored, match="training/grpo-seed0 .rlvr_dynamics.toy. is not "
                                              "stored"):
        store.Entry(results / "training/grpo-seed0", code="rlvr_dynamics.toy").begin()
    assert not (results / "training").exists()
    store.Entry(results / "verdicts/theory", code="rlvr_dynamics.chapters.theory").begin()
    monkeypatch.setenv("RLVR_READ_ONLY", "0")
    store.Entry(results / "training/grpo-seed0", code="rlvr_dynamics.toy").begin()


def test_provenance_names_the_parts_and_the_results_of_older_code(roots, repo, monkeypatch):
    """Current results are not listed; a result whose module's code changed since its part is
    listed with the changed modules; one its part's commit did not make, with None."""
    results, _ = roots
    finished("training/grpo-seed0", run_files())
    finished("evaluation/e", {"passk.json": b"[1, 2]"}, code="older")
    release.add(PROFILE, repo=repo)
    info = release.provenance(PROFILE)
    assert [p["part"] for p in info["parts"]] == [1] and info["results"] == 2
    assert info["wall_s"] == info["parts"][0]["wall_s"] and info["parts"][0]["cpu"]
    assert info["older"] == {"evaluation/e": None}
    now = release.module_hashes()
    monkeypatch.setattr(release, "module_hashes", lambda: {**now, "rlvr_dynamics.toy": "edited"})
    monkeypatch.setattr(release, "commit_of", lambda module, code, head: None)
    assert release.provenance(PROFILE)["older"] == {"evaluation/e": None,
                                                    "training/grpo-seed0": ["rlvr_dynamics.toy"]}
    assert release.provenance("cpu-nothing") is None


def test_the_ledger_records_every_part_started_and_closes_those_released(roots, repo):
    """A part started is on record before it computes anything; ``add`` closes it with its end
    and its number in the manifest; a part cut off stays open; the ledger is not a released
    file, so the release still verifies."""
    results, out = roots
    first = release.start_part(PROFILE, repo=repo)
    assert first["started"] == 1 and first["end"] is None and first["machine"]["cpu"]
    finished("training/grpo-seed0", run_files())
    part = release.add(PROFILE, part=True, repo=repo)
    assert part["started_as"] == 1
    release.start_part(PROFILE, repo=repo)                   # cut off: never released
    release.start_part(PROFILE, repo=repo)
    finished("training/grpo-seed1", run_files())
    assert release.add(PROFILE, part=True, repo=repo)["started_as"] == 3
    rows = release.ledger_of(PROFILE)
    assert [(r["started"], r["released_as"]) for r in rows] == [(1, 1), (2, None), (3, 2)]
    assert rows[1]["end"] is None and rows[2]["end"] >= rows[2]["start"]
    release.verify(PROFILE)
    (repo / "src" / "code.py").write_text("x = 3\n")
    with pytest.raises(release.ReleaseError, match="uncommitted changes under src/"):
        release.start_part(PROFILE, repo=repo)


def test_a_chapter_is_drawn_from_its_profile_else_from_the_default(tmp_path, monkeypatch):
    """``publish.shown``: the chosen profile where it has a build here or a release, else the
    default where that has either (``assemble`` falls back the same way), else the chosen."""
    from rlvr_dynamics import publish
    monkeypatch.setenv("RLVR_BUILD", str(tmp_path / "build"))
    monkeypatch.setenv("RLVR_RELEASE", str(tmp_path / "release"))

    def source():
        return dict(publish.shown("cpu", {"training": "cpu-nsr"}, {}))["training"]
    assert source() == "cpu-nsr"                              # neither: named as missing
    store.write_json(tmp_path / "release" / "cpu" / "manifest.json", {"parts": [{"part": 1}]})
    assert source() == "cpu"                                  # the default's release
    assert dict(publish.shown("cpu", {"mechanism": "cpu-mechanism"}, {}))["mechanism"] == \
        "cpu-mechanism"                                       # not a chapter the default runs
    (tmp_path / "build" / "cpu-nsr" / "book" / "notebooks").mkdir(parents=True)
    (tmp_path / "build" / "cpu-nsr" / "book" / "notebooks" / "training.ipynb").write_text("{}")
    assert source() == "cpu-nsr"                              # its own build


def test_reading_only_makes_a_chapters_stale_record_again_and_keeps_the_librarys(roots,
                                                                                 monkeypatch):
    """Publishing (read only, results of older code kept) keeps a library result of older code
    but not a chapter's own record, which it writes again."""
    results, _ = roots
    for module in ("rlvr_dynamics.toy", "rlvr_dynamics.chapters.theory"):
        e = store.Entry(results / module, code=module)
        e.code = "older"
        e.begin()
        e.finish()
    monkeypatch.setenv("RLVR_READ_ONLY", "1")
    monkeypatch.setenv("RLVR_REUSE_STALE", "1")
    assert store.Entry(results / "rlvr_dynamics.toy", code="rlvr_dynamics.toy").done
    chapter = "rlvr_dynamics.chapters.theory"
    assert not store.Entry(results / chapter, code=chapter).done
    monkeypatch.setenv("RLVR_READ_ONLY", "0")
    assert store.Entry(results / chapter, code=chapter).done           # --reuse-stale alone
