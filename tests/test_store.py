"""The store: a result is found again only if the same code made it; parts of an unfinished
result resume; older results are reused only on purpose, and then listed; writes are atomic;
a result whose files no longer match its done marker is set aside, listed and computed again."""
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from rlvr_dynamics import store


def entry(path, code="made-by-this"):
    e = store.Entry(path, code="rlvr_dynamics.toy")
    e.code = code  # stands for a fingerprint of the producing code
    return e


def test_a_result_is_done_only_for_the_code_that_made_it(tmp_path, monkeypatch):
    monkeypatch.delenv("RLVR_REUSE_STALE", raising=False)
    e = entry(tmp_path / "r")
    assert not e.done
    store.write_json(e.begin() / "part-0.json", [1])
    assert not e.done                      # parts alone are not a result
    e.finish({"n": 1})
    assert e.done and store.read_json(e.path / "done.json")["n"] == 1
    assert not entry(tmp_path / "r", code="newer").done


def test_parts_of_this_code_resume_and_parts_of_other_code_are_removed(tmp_path):
    e = entry(tmp_path / "r")
    store.write_json(e.begin() / "part-0.json", [1])
    assert (entry(tmp_path / "r").begin() / "part-0.json").is_file()       # resumed
    assert not (entry(tmp_path / "r", "newer").begin() / "part-0.json").exists()
    assert not (entry(tmp_path / "r", "newer").begin(fresh=True) / "part-0.json").exists()


def test_stale_results_are_reused_only_on_purpose_and_listed(tmp_path, monkeypatch):
    monkeypatch.setenv("RLVR_RESULTS", str(tmp_path))
    path = store.results_dir("p", "chapter") / "r"
    entry(path).begin()
    entry(path).finish()
    monkeypatch.delenv("RLVR_REUSE_STALE", raising=False)
    assert not entry(path, "newer").done and store.stale_reused("p") == []
    monkeypatch.setenv("RLVR_REUSE_STALE", "1")
    assert entry(path, "newer").done
    assert store.stale_reused("p") == [{"result": "chapter/r", "made_by": "made-by-this",
                                        "current": "newer"}]


def test_docstrings_and_comments_leave_the_fingerprint_alone():
    a = "def f(x):\n    '''Old words.'''\n    return x + 1  # a comment\n"
    b = "def f(x):\n    '''New words, more of them.'''\n    # another comment\n    return x + 1\n"
    c = "def f(x):\n    '''Old words.'''\n    return x + 2\n"
    assert store._without_docstrings(a) == store._without_docstrings(b)
    assert store._without_docstrings(a) != store._without_docstrings(c)
    d = "TOL, N = 1e-3, 50\n'''What TOL and N are.'''\nclass A:\n    x = 1\n    '''x's words.'''\n"
    e = "TOL, N = 1e-3, 50\n'''Other words.'''\nclass A:\n    x = 1\n    '''More.'''\n"
    f = "TOL, N = 1e-3, 75\n'''What TOL and N are.'''\nclass A:\n    x = 1\n"
    assert store._without_docstrings(d) == store._without_docstrings(e)  # attributes' docstrings
    assert store._without_docstrings(d) != store._without_docstrings(f)
    used = "NAME = 'a'\n"  # a string that is assigned is code
    assert store._without_docstrings(used) != store._without_docstrings("NAME = 'b'\n")


def test_a_failed_write_leaves_the_old_file(tmp_path):
    path = store.write_json(tmp_path / "x.json", {"v": 1})

    def broken(f):
        f.write("{")
        raise RuntimeError("disk full")
    with pytest.raises(RuntimeError):
        store.atomic_write(path, broken, "w")
    assert store.read_json(path) == {"v": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]  # no temporary left behind


def test_a_code_change_recomputes_and_bookkeeping_does_not(monkeypatch):
    """The fingerprint follows the computing modules a result depends on (here the toy, which
    imports theory), not the bookkeeping ones (the store, the import graph) nor unrelated ones."""
    from rlvr_dynamics import store

    before = store.code_fingerprint("rlvr_dynamics.toy")
    real = store.module_hash

    def edited(name):
        def fake(module):
            return "edited" if module == name else real(module)
        return fake

    for name, changes in [("rlvr_dynamics.theory", True), ("rlvr_dynamics.store", False),
                          ("rlvr_dynamics.imports", False), ("rlvr_dynamics.passk", False)]:
        monkeypatch.setattr(store, "module_hash", edited(name))
        store.code_fingerprint.cache_clear()
        assert (store.code_fingerprint("rlvr_dynamics.toy") != before) == changes, name
    monkeypatch.setattr(store, "module_hash", real)
    store.code_fingerprint.cache_clear()


# --- what is read back is checked -------------------------------------------------------------

def finished(tmp_path, monkeypatch, calls=None):
    """A result under profile ``p`` with a JSON, an npz and a nested file, made by
    ``store.obtain`` with ``compute`` (``calls`` counts its computations)."""
    monkeypatch.setenv("RLVR_RESULTS", str(tmp_path))
    e = entry(store.results_dir("p", "chapter") / "r")
    store.obtain(e, lambda folder: compute(folder, calls if calls is not None else []))
    return e


def compute(folder, calls):
    calls.append(folder)
    store.write_json(folder / "part.json", {"values": list(range(50))})
    store.write_npz(folder / "arrays.npz", x=np.arange(100.0))
    (folder / "model").mkdir()
    (folder / "model" / "weights.bin").write_bytes(bytes(range(256)) * 4)
    return {"n": 1}


def truncate(path):
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def flip_a_byte(path):
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("name, damage, wrong", [
    ("part.json", truncate, "part.json has "),
    ("arrays.npz", flip_a_byte, "arrays.npz has changed"),
    ("model/weights.bin", lambda p: p.unlink(), "model/weights.bin is missing")])
def test_a_damaged_result_is_set_aside_listed_and_computed_again(tmp_path, monkeypatch, name,
                                                                  damage, wrong):
    calls = []
    e = finished(tmp_path, monkeypatch, calls)
    assert e.done and store.obtain(e, lambda f: pytest.fail("recomputed")) == e.path  # intact
    before = {p.relative_to(e.path): p.read_bytes() for p in e.path.rglob("*") if p.is_file()}
    damage(e.path / name)
    store._digest.cache_clear()  # a later process: nothing hashed yet
    assert not e.done
    assert not e.path.exists()
    [row] = store.damaged_set_aside("p")
    assert row["result"] == "chapter/r" and not row["recomputed"]
    assert len(row["wrong"]) == 1 and row["wrong"][0].startswith(wrong)
    aside = tmp_path / "p" / row["set_aside"]
    assert aside.parent == tmp_path / "p" / "damaged" / "chapter" and aside.name.startswith("r-")
    kept = {p.relative_to(aside): p.read_bytes() for p in aside.rglob("*") if p.is_file()}
    assert kept.get(Path(name)) != before.pop(Path(name))
    assert {k: v for k, v in kept.items() if k != Path(name)} == before  # the rest as it was
    store.obtain(e, lambda folder: compute(folder, calls))
    assert len(calls) == 2 and e.done and store.damaged_set_aside("p")[0]["recomputed"]


def test_files_added_after_finishing_are_not_part_of_the_result(tmp_path, monkeypatch):
    e = finished(tmp_path, monkeypatch)
    (e.path / "notes.txt").write_text("added later")
    (e.path / "model" / "extra.bin").write_bytes(b"x")
    store._digest.cache_clear()
    assert e.done and store.damaged_set_aside("p") == []


def test_scratch_is_left_out_of_the_checksums_and_removed(tmp_path):
    e = entry(tmp_path / "r")
    store.write_json(e.begin() / "checkpoints" / "c-1" / "state.json", {"step": 1})
    store.write_json(e.path / "result.json", [1])
    e.finish(scratch=["checkpoints"])
    assert not (e.path / "checkpoints").exists()
    assert list(store.read_json(e.path / "done.json")["files"]) == ["result.json"]
    assert e.done


def test_a_marker_without_checksums_is_done_by_its_code_alone(tmp_path):
    """Results finished before the checks (no ``files`` in their marker) are kept as before."""
    e = entry(tmp_path / "r")
    store.write_json(e.begin() / "result.json", [1])
    store.write_json(e.path / "done.json", {"module": e.module, "code": e.code})
    truncate(e.path / "result.json")
    assert e.done and e.path.exists()


def test_a_file_is_hashed_once_while_unchanged(tmp_path):
    path = tmp_path / "big.bin"
    path.write_bytes(b"a" * 1000)
    store._digest.cache_clear()
    first = store.digest(path)
    assert store.digest(path) == first and store._digest.cache_info().misses == 1
    path.write_bytes(b"b" * 1000)
    os.utime(path, ns=(0, path.stat().st_mtime_ns + 1))
    assert store.digest(path) != first and store._digest.cache_info().misses == 2


def test_a_result_is_set_aside_once_by_processes_finding_the_same_damage(tmp_path,
                                                                        monkeypatch):
    """Two processes (ranks of one launch) find the same damage: the later one moves nothing,
    not even the fresh folder the first one began meanwhile."""
    e = finished(tmp_path, monkeypatch)
    assert store.set_aside(e.path, ["part.json is missing"]) is not None
    e.begin()
    assert store.set_aside(e.path, ["part.json is missing"]) is None
    assert (e.path / "code.json").is_file() and len(store.damaged_set_aside("p")) == 1


def test_an_unreadable_stored_json_names_the_file_and_the_remedy(tmp_path):
    path = store.write_json(tmp_path / "r" / "dynamics.json", [{"step": 0}] * 20)
    truncate(path)
    with pytest.raises(store.Damaged, match=rf"{path} cannot be read back .*delete that folder"):
        store.read_json(path)
    with pytest.raises(store.Damaged, match="missing.json cannot be read back"):
        store.read_json(tmp_path / "r" / "missing.json")


@pytest.mark.slow
def test_a_training_run_with_a_truncated_dynamics_file_is_trained_again(tmp_path, monkeypatch):
    """The issue's case through the real producer and reader: the training chapter's run, its
    ``dynamics.json`` cut short with the done marker intact, is trained again (to the same
    dynamics) instead of stopping the chapter, and the ledger names it."""
    from test_training import config

    from rlvr_dynamics.models import char_tokenizer, tiny_qwen2
    from rlvr_dynamics.tasks.sums import ALPHABET
    import rlvr_dynamics.rl.runs as run

    tok = char_tokenizer(ALPHABET)
    tiny_qwen2(tok, hidden=32, layers=2, seed=0).save_pretrained(tmp_path / "tiny")
    tok.save_pretrained(tmp_path / "tiny")
    monkeypatch.setenv("RLVR_RESULTS", str(tmp_path / "results"))
    cfg = config(str(tmp_path / "tiny"), "grpo", steps=1)
    out = run.train(cfg, "smoke")
    dynamics = run.load_dynamics(out)
    truncate(out / "dynamics.json")
    store._digest.cache_clear()
    assert run.load_dynamics(run.train(cfg, "smoke")) == dynamics
    [row] = store.damaged_set_aside("smoke")
    assert row["result"] == f"training/{out.name}" and row["recomputed"]
    assert row["wrong"][0].startswith("dynamics.json has ")
    truncated = tmp_path / "results" / "smoke" / row["set_aside"] / "dynamics.json"
    with pytest.raises(store.Damaged, match="dynamics.json cannot be read back"):
        store.read_json(truncated)


def test_origin_names_a_file_by_the_result_that_holds_it_not_by_where_it_lies(tmp_path,
                                                                           monkeypatch):
    e = finished(tmp_path, monkeypatch)
    made = store.origin(e.path / "model")
    assert made == {"result": "p/chapter/r", "code": "made-by-this", "path": "model",
                    "files": {"model/weights.bin": store.manifest(e.path)["model/weights.bin"][
                        "sha256"]}}
    assert store.origin(e.path)["files"].keys() == store.manifest(e.path).keys()
    copy = tmp_path.parent / f"{tmp_path.name}-copy"
    shutil.copytree(tmp_path, copy)
    monkeypatch.setenv("RLVR_RESULTS", str(copy))
    shutil.rmtree(copy / "p" / "chapter" / "r" / "model")  # read from the marker alone
    assert store.origin(copy / "p" / "chapter" / "r" / "model") == made
    assert store.origin(tmp_path / "p" / "chapter" / "r" / "model") is None  # outside the root
    assert store.origin(copy / "p" / "chapter" / "r" / "notes") is None  # not of the result
    assert store.origin(copy / "p" / "chapter" / "other") is None  # no finished result holds it
