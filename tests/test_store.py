"""The store: a result is found again only if the same code made it; parts of an unfinished
result resume; older results are reused only on purpose, and then listed; writes are atomic."""
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
    real = store._module_hash

    def edited(name):
        def fake(module):
            return "edited" if module == name else real(module)
        return fake

    for name, changes in [("rlvr_dynamics.theory", True), ("rlvr_dynamics.store", False),
                          ("rlvr_dynamics.imports", False), ("rlvr_dynamics.passk", False)]:
        monkeypatch.setattr(store, "_module_hash", edited(name))
        store.code_fingerprint.cache_clear()
        assert (store.code_fingerprint("rlvr_dynamics.toy") != before) == changes, name
    monkeypatch.setattr(store, "_module_hash", real)
    store.code_fingerprint.cache_clear()
