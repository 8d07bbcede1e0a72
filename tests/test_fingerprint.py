"""A colour or a sentence never recomputes a stored result; a computation does.

Every module that stores results (``store.Entry(..., code=...)``) is fingerprinted with the
source of everything it imports (``store.code_fingerprint``). The checks edit a copy of the
package: a statement added to every presentation module (``imports.is_presentation``: figures,
sentences, ``chapters.style``) leaves every such fingerprint as it was; the same statement
added to a computing module changes the fingerprints of the results that depend on it."""
import re
import shutil

import pytest

from rlvr_dynamics import imports, store
from rlvr_dynamics.chapters import NAMES


def producers() -> list[str]:
    """The modules whose code keys stored results, read from the source: ``code=__name__`` in
    a module, and an ``Entry`` of ``f"rlvr_dynamics.chapters.{chapter}"`` (the verdict
    records) for every chapter."""
    found = set()
    for name, path in imports.modules().items():
        text = path.read_text()
        if re.search(r"Entry\((?:[^()]|\([^()]*\))*code=__name__", text):
            found.add(name)
        if re.search(r'f"rlvr_dynamics\.chapters\.\{chapter\}"(?:.|\n)*Entry\(', text):
            found |= {f"rlvr_dynamics.chapters.{c}" for c in NAMES}
    return sorted(found)


@pytest.fixture
def package_copy(tmp_path, monkeypatch):
    """A copy of the package that the import graph and the fingerprints read instead."""
    copy = tmp_path / "rlvr_dynamics"
    shutil.copytree(imports.SOURCE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(imports, "SOURCE", copy)

    def fingerprints() -> dict[str, str]:
        for cached in (imports.graph, store.module_hash, store.code_fingerprint):
            cached.cache_clear()
        return {m: store.code_fingerprint(m) for m in producers()}

    yield copy, fingerprints
    for cached in (imports.graph, store.module_hash, store.code_fingerprint):
        cached.cache_clear()


def edit(copy, module: str) -> None:
    """Add a statement to ``module`` in the copy (a colour, a word, or a computed constant)."""
    path = copy.joinpath(*module.split(".")[1:])
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    path.write_text(path.read_text() + '\nEDITED = "tab:cyan"\n')


def test_every_store_is_found():
    assert {"rlvr_dynamics.measure", "rlvr_dynamics.toy", "rlvr_dynamics.rl.runs",
            "rlvr_dynamics.pretrain", "rlvr_dynamics.path_prior",
            "rlvr_dynamics.chapters.pretrained", "rlvr_dynamics.chapters.scenario",
            "rlvr_dynamics.regimes.prediction"} <= set(producers())


def test_a_colour_or_a_sentence_leaves_every_result_as_it_was(package_copy):
    copy, fingerprints = package_copy
    before = fingerprints()
    presentation = [m for m in imports.modules() if imports.is_presentation(m)]
    assert "rlvr_dynamics.chapters.style" in presentation
    assert any(m.endswith(".sentences") for m in presentation)
    for module in presentation:
        edit(copy, module)
    assert fingerprints() == before


@pytest.mark.parametrize("module, affected", [
    ("rlvr_dynamics.passk", ["rlvr_dynamics.measure", "rlvr_dynamics.chapters.pretrained"]),
    ("rlvr_dynamics.rl.algorithms", ["rlvr_dynamics.rl.runs"]),
    ("rlvr_dynamics.toy", ["rlvr_dynamics.toy"]),
])
def test_a_computation_recomputes_what_depends_on_it(package_copy, module, affected):
    copy, fingerprints = package_copy
    before = fingerprints()
    edit(copy, module)
    after = fingerprints()
    assert [m for m in affected if after[m] == before[m]] == []
    assert after["rlvr_dynamics.pretrain"] == before["rlvr_dynamics.pretrain"]  # not its input


def test_a_result_is_keyed_by_exactly_the_code_it_imports(package_copy, monkeypatch):
    """Each module edited alone moves the fingerprints of exactly the stored results whose
    computation imports it (``imports.closure``) and no other: an edit of another chapter's
    computation or words leaves a chapter's results (the scenario's registered predictions
    among them) where they were."""
    copy, fingerprints = package_copy
    before = fingerprints()
    closures = {p: set(imports.closure(p)) for p in before}
    hashes, compute = {}, store.module_hash.__wrapped__

    def module_hash(m: str) -> str:  # forgotten one module at a time (an edit adds no import)
        return hashes[m] if m in hashes else hashes.setdefault(m, compute(m))

    module_hash.cache_clear = hashes.clear
    monkeypatch.setattr(store, "module_hash", module_hash)
    wrong = []
    for module in imports.modules():
        if module in store.BOOKKEEPING:
            continue
        path = copy.joinpath(*module.split(".")[1:])
        path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        source = path.read_text()
        path.write_text(source + "\nEDITED = 1\n")
        hashes.pop(module, None)
        store.code_fingerprint.cache_clear()
        after = {p: store.code_fingerprint(p) for p in before}
        path.write_text(source)
        hashes.pop(module, None)
        moved = {p for p in before if after[p] != before[p]}
        expected = {p for p in before if module in closures[p]}
        if moved != expected:
            wrong.append(f"{module}: moved {sorted(moved ^ expected)} wrongly")
    assert not wrong, "\n".join(wrong)
    assert not any(imports.chapter_of(m) not in (None, "scenario")
                   for m in closures["rlvr_dynamics.chapters.scenario"])
    assert not any(imports.chapter_of(m) for m in closures["rlvr_dynamics.regimes.prediction"])


def test_the_exact_key_check_sees_a_result_keyed_by_another_chapter(package_copy):
    """The check above can fail: with the registrations importing the reproduction chapter's
    paths, an edit there moves the scenario's registrations."""
    copy, fingerprints = package_copy
    prediction = copy / "regimes" / "prediction.py"
    prediction.write_text(prediction.read_text()
                          + "\nfrom rlvr_dynamics.chapters.reproduction import paths\n")
    before = fingerprints()
    edit(copy, "rlvr_dynamics.chapters.reproduction.paths")
    assert fingerprints()["rlvr_dynamics.regimes.prediction"] \
        != before["rlvr_dynamics.regimes.prediction"]


def test_a_task_re_keys_only_the_results_computed_on_it(package_copy):
    """A run or an evaluation is fingerprinted with the task modules it meets
    (``TrainConfig.tasks``, ``store.task_modules``): an edit of the chat arithmetic moves the
    SmolLM2 runs' key and leaves the sums runs' (the ladder's) where they were. Without
    the task scope (``tasks=None``, every task the code imports) the same edit moves both: the
    check can fail."""
    from rlvr_dynamics.profiles import params_class
    from rlvr_dynamics.tasks.arithmetic import ArithmeticMix

    sums_run = params_class("training")().run_config("grpo", 0)
    arith_run = sums_run.replace(model="smollm2", task=ArithmeticMix(levels=((1, 3),)))
    assert sums_run.tasks == ("rlvr_dynamics.tasks.sums",)
    assert arith_run.tasks == ("rlvr_dynamics.tasks.arithmetic",)
    assert store.task_modules({"a": [ArithmeticMix(levels=((1, 3),))]}, "sums", None) \
        == ("rlvr_dynamics.tasks.arithmetic",)
    copy, _ = package_copy

    def keys() -> dict[str, str]:
        for cached in (imports.graph, store.module_hash, store.code_fingerprint):
            cached.cache_clear()
        return {name: store.code_fingerprint("rlvr_dynamics.rl.runs", tasks)
                for name, tasks in (("sums", sums_run.tasks), ("arith", arith_run.tasks),
                                    ("every task", None))}

    before = keys()
    edit(copy, "rlvr_dynamics.tasks.arithmetic")
    after = keys()
    assert after["sums"] == before["sums"]
    assert after["arith"] != before["arith"]
    assert after["every task"] != before["every task"]
    edit(copy, "rlvr_dynamics.tasks.math")  # arithmetic grades with it: its runs move again
    again = keys()
    assert again["arith"] != after["arith"] and again["sums"] == before["sums"]


def test_a_task_re_keys_only_the_chapters_that_compute_on_it(package_copy):
    """A chapter's pages and verdicts are keyed by its code on the tasks its own imports reach
    (``store.scoped_fingerprint``, ``imports.task_scope``: not through the registry's list of
    every task): an edit of the chat arithmetic moves the pretrained chapter and leaves the
    ladder chapter as it was; its unscoped fingerprint would move (the
    check can fail)."""
    assert "rlvr_dynamics.tasks.arithmetic" in imports.task_scope("rlvr_dynamics.chapters.pretrained")
    assert imports.task_scope("rlvr_dynamics.chapters.ladder") \
        == ("rlvr_dynamics.tasks.base", "rlvr_dynamics.tasks.choice", "rlvr_dynamics.tasks.math",
            "rlvr_dynamics.tasks.sums")
    copy, _ = package_copy
    chapters = ("rlvr_dynamics.chapters.ladder", "rlvr_dynamics.chapters.pretrained")

    def keys() -> dict[tuple[str, bool], str]:
        for cached in (imports.graph, store.module_hash, store.code_fingerprint):
            cached.cache_clear()
        return {**{(c, True): store.scoped_fingerprint(c) for c in chapters},
                **{(c, False): store.code_fingerprint(c) for c in chapters}}

    before = keys()
    edit(copy, "rlvr_dynamics.tasks.arithmetic")
    after = keys()
    assert after[chapters[0], True] == before[chapters[0], True]
    assert after[chapters[1], True] != before[chapters[1], True]
    assert after[chapters[0], False] != before[chapters[0], False]
