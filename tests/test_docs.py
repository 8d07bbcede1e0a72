"""One home for each text: the README, CONTRIBUTING, the rerun page and the package's docstring
agree with what they repeat (``texts.disagreements``): the profiles' words in their files, the
layers in ``imports.LAYERS``, the files of ``configs/``, the default build's time in the lab
notebook. Each check is shown to fail on a copy with a planted disagreement."""
import shutil

import pytest
import yaml

from rlvr_dynamics import REPO, imports, profiles, texts
from rlvr_dynamics.book import PROFILES
from rlvr_dynamics.chapters import ParameterError
from rlvr_dynamics.report import chapters_md, profiles_md

FILES = (texts.README, texts.CONTRIBUTING, texts.RERUN, texts.LAB, texts.PACKAGE_DOC)


def test_every_text_agrees_with_its_home():
    assert texts.disagreements() == []


@pytest.fixture
def copy(tmp_path):
    """The texts ``disagreements`` reads, copied to ``tmp_path`` where they lie in the
    repository; ``plant(file, old, new)`` changes one of them (``old`` must be there)."""
    for name in FILES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, tmp_path / name)

    def plant(name: str, old: str, new: str) -> None:
        text = (tmp_path / name).read_text()
        assert old in text, f"{old!r} is not in {name}"
        (tmp_path / name).write_text(text.replace(old, new, 1))
    plant.root = tmp_path
    return plant


@pytest.fixture
def configs(tmp_path, monkeypatch):
    """A copy of ``configs/`` that the profiles are read from."""
    folder = tmp_path / "configs"
    shutil.copytree(REPO / "configs", folder)
    monkeypatch.setattr(profiles, "CONFIGS", folder)
    return folder


def test_the_copy_agrees_as_the_repository_does(copy):
    assert texts.disagreements(copy.root) == []


def test_a_summary_changed_in_its_config_is_seen_in_the_readme_and_written_there(copy, configs):
    path = configs / "smoke.yaml"
    data = yaml.safe_load(path.read_text())
    path.write_text(path.read_text().replace(data["summary"], "a quick look, for CI"))
    assert texts.disagreements(copy.root) == [
        "README.md: its profiles differ from each profile's summary in "
        "configs/<profile>.yaml (python -m rlvr_dynamics.texts writes them)"]
    block = texts.BLOCKS[0]
    readme = copy.root / texts.README
    readme.write_text(texts.written(readme.read_text(), block))
    assert "| `smoke` | all | a quick look, for CI |" in readme.read_text()
    assert texts.disagreements(copy.root) == []


def test_a_row_edited_in_the_readme_alone_is_seen(copy):
    summary = profiles.about("cpu")["summary"]
    copy(texts.README, f"| `cpu` | all but mechanism | {summary} |",
         "| `cpu` | all but mechanism | the full reproduction |")
    assert [d.split(":")[0] for d in texts.disagreements(copy.root)] == ["README.md"]


def test_a_config_the_layout_does_not_name_is_seen(copy, configs):
    shutil.copy2(configs / "cpu-map.yaml", configs / "cpu-new.yaml")
    found = texts.disagreements(copy.root)
    assert any(d.startswith("README.md: its profiles differ") for d in found)
    assert any(d.startswith("README.md: its layout's configs/ names") and "'cpu-new.yaml'" in d
               for d in found)


def test_a_config_dropped_from_the_layout_is_seen(copy):
    copy(texts.README, "cpu-ladder.yaml, ", "")
    assert any("its layout's configs/" in d for d in texts.disagreements(copy.root))


def test_a_layer_contributing_and_the_package_docstring_do_not_know_is_seen(copy, monkeypatch):
    monkeypatch.setitem(imports.LAYERS, "gauge", 3)
    found = texts.disagreements(copy.root)
    assert "docs/CONTRIBUTING.md: its layers differ from imports.LAYERS (python -m " \
           "rlvr_dynamics.texts writes them)" in found
    assert "src/rlvr_dynamics/__init__.py: its docstring does not name ['gauge'] " \
           "(imports.LAYERS)" in found


def test_the_layers_table_holds_every_layer_and_every_module_once():
    rows = texts.layers_md().splitlines()[2:]
    assert [int(r.split("|")[1]) for r in rows] == sorted(set(imports.LAYERS.values()))
    cells = " ".join(r.split("|")[2] for r in rows)
    assert all(f"`{name}`" in cells for name in imports.LAYERS if name != imports.PACKAGE)
    assert cells.count("`") == 2 * len(imports.LAYERS)  # the package's `__init__` included


def test_a_readme_build_time_that_is_not_the_latest_measurement_is_seen(copy):
    last = texts.build_times((REPO / texts.LAB).read_text())[-1]
    copy(texts.README, f"took {last['minutes']}", "took 64.7")
    found = texts.disagreements(copy.root)
    assert len(found) == 1 and found[0].startswith(
        "README.md: states the default build's time as {'minutes': '64.7'")


def test_a_newer_measurement_in_the_lab_notebook_is_seen_until_the_readme_states_it(copy):
    lab = (REPO / texts.LAB).read_text()
    last = texts.build_times(lab)[-1]
    row = next(line for line in lab.splitlines() if line.startswith(f"| {last['date']} | "
                                                                     f"{last['commit']} |"))
    copy(texts.LAB, row, row + "\n| 2099-01-01 | abcdef1 | 59.9 | alone | the next build | 99 |")
    found = texts.disagreements(copy.root)
    assert len(found) == 1 and "'commit': 'abcdef1'" in found[0]
    copy(texts.README, f"took {last['minutes']}", "took 59.9")
    copy(texts.README, f"(measured {last['date']} at commit {last['commit']}",
         "(measured 2099-01-01 at commit abcdef1")
    assert texts.disagreements(copy.root) == []


def test_the_default_builds_times_are_kept_with_every_commit_the_readme_listed():
    """The README's history of the default build's time moved to the lab notebook's table, every
    figure with its commit (and the five-seed build at the commit where it was measured)."""
    rows = {(r["minutes"], r["commit"]) for r in texts.build_times((REPO / texts.LAB).read_text())}
    assert {("57.6", "866300c"), ("60.2", "13f12b8"), ("63.2", "f25f8c3"), ("61.6", "207d122"),
            ("58.4", "94f3073"), ("69.2", "bab0b67"), ("64.7", "1ad9ecc"), ("81.4", "839955d"),
            ("61.3", "21ff725")} <= rows


def test_a_table_of_profiles_typed_into_the_rerun_page_is_seen(copy):
    copy(texts.RERUN, PROFILES, "| profile | purpose |\n|---|---|\n| `cpu` | the default |")
    found = texts.disagreements(copy.root)
    assert found == [f"book/rerun.md: no marker {PROFILES!r} for its table of profiles",
                     "book/rerun.md: a table of profiles of its own (['cpu']); the book writes "
                     "it from the profiles' files"]


def test_a_time_stated_in_contributing_is_seen(copy):
    copy(texts.CONTRIBUTING, "`-n 2 --dist loadfile` in",
         "`-n 2 --dist loadfile` (10.3 minutes) in")
    assert texts.disagreements(copy.root) == [
        "docs/CONTRIBUTING.md: states times (['10.3 minutes']) that nothing checks: name where "
        "they are recorded instead"]


def test_the_rerun_pages_table_is_every_profiles_description_and_chapters():
    md = profiles_md()
    for name in profiles.available_profiles():
        row = next(line for line in md.splitlines() if line.startswith(f"| `{name}` |"))
        assert row == f"| `{name}` | {chapters_md(name)} | {profiles.about(name)['description']} |"
        chosen = profiles.profile_chapters(name)
        cell = chapters_md(name)
        if chosen is None:
            assert cell == "all"
        elif cell.startswith("all but "):
            assert set(cell.removeprefix("all but ").split(", ")) == \
                set(profiles.notebook_names()) - set(chosen)
        else:
            assert cell.split(", ") == chosen


def test_a_profile_without_its_words_or_with_a_summary_over_a_line_is_refused(configs):
    path = configs / "smoke.yaml"
    text = path.read_text()
    summary = yaml.safe_load(text)["summary"]
    path.write_text(text.replace(f"summary: {summary}\n", ""))
    with pytest.raises(ParameterError, match=r"smoke.yaml: no 'summary'"):
        profiles.about("smoke")
    path.write_text(f"summary: {'word ' * 30}\n" + text.replace(f"summary: {summary}\n", ""))
    with pytest.raises(ParameterError, match=r"smoke.yaml: its summary has \d+ characters"):
        profiles.about("smoke")
