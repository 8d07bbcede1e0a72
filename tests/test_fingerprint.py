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
    a module, and ``code=f"rlvr_dynamics.chapters.{chapter}"`` (the verdict records) for every
    chapter."""
    found = set()
    for name, path in imports.modules().items():
        text = path.read_text()
        if re.search(r"Entry\((?:[^()]|\([^()]*\))*code=__name__", text):
            found.add(name)
        if 'code=f"rlvr_dynamics.chapters.{chapter}"' in text:
            found |= {f"rlvr_dynamics.chapters.{c}" for c in NAMES}
    return sorted(found)


@pytest.fixture
def package_copy(tmp_path, monkeypatch):
    """A copy of the package that the import graph and the fingerprints read instead."""
    copy = tmp_path / "rlvr_dynamics"
    shutil.copytree(imports.SOURCE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(imports, "SOURCE", copy)

    def fingerprints() -> dict[str, str]:
        for cached in (imports.graph, store._module_hash, store.code_fingerprint):
            cached.cache_clear()
        return {m: store.code_fingerprint(m) for m in producers()}

    yield copy, fingerprints
    for cached in (imports.graph, store._module_hash, store.code_fingerprint):
        cached.cache_clear()


def edit(copy, module: str) -> None:
    """Add a statement to ``module`` in the copy (a colour, a word, or a computed constant)."""
    path = copy.joinpath(*module.split(".")[1:])
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    path.write_text(path.read_text() + '\nEDITED = "tab:cyan"\n')


def test_every_store_is_found():
    assert {"rlvr_dynamics.measure", "rlvr_dynamics.toy", "rlvr_dynamics.rl.runs",
            "rlvr_dynamics.pretrain", "rlvr_dynamics.path_prior",
            "rlvr_dynamics.chapters.pretrained", "rlvr_dynamics.chapters.regimes"} <= set(producers())


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
    computation or words leaves a chapter's results (the regimes chapter's registered
    predictions among them) where they were."""
    copy, fingerprints = package_copy
    before = fingerprints()
    closures = {p: set(imports.closure(p)) for p in before}
    hashes, compute = {}, store._module_hash.__wrapped__

    def module_hash(m: str) -> str:  # forgotten one module at a time (an edit adds no import)
        return hashes[m] if m in hashes else hashes.setdefault(m, compute(m))

    module_hash.cache_clear = hashes.clear
    monkeypatch.setattr(store, "_module_hash", module_hash)
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
    assert not any(imports.chapter_of(m) not in (None, "regimes")
                   for m in closures["rlvr_dynamics.chapters.regimes"])


def test_the_exact_key_check_sees_a_result_keyed_by_another_chapter(package_copy):
    """The check above can fail: with the regimes chapter importing the reproduction chapter's
    paths again, an edit there moves the regimes chapter's registrations."""
    copy, fingerprints = package_copy
    prediction = copy / "chapters" / "regimes" / "prediction.py"
    prediction.write_text(prediction.read_text()
                          + "\nfrom rlvr_dynamics.chapters.reproduction import paths\n")
    before = fingerprints()
    edit(copy, "rlvr_dynamics.chapters.reproduction.paths")
    assert fingerprints()["rlvr_dynamics.chapters.regimes.prediction"] \
        != before["rlvr_dynamics.chapters.regimes.prediction"]
