"""The run report: every build's chapter costs beside the reference build's; the damaged
results the store set aside."""
import nbformat
import pytest
import yaml

from rlvr_dynamics import REPO, profiles
from rlvr_dynamics.book import MEASURED, OTHER_PROFILES, toc_without
from rlvr_dynamics.chapters import ParameterError
from rlvr_dynamics.execution import BOOK, STAMP, chapter_of, pages, stamp, with_rerun_box
from rlvr_dynamics.publish import assemble, colab_url, published_from
from rlvr_dynamics.report import (PROFILE_COSTS, executions, measured_cost, profile_costs_md,
                                  run_report)


@pytest.mark.parametrize("seconds, says", [(30, "0.5 min here against 2.0 min there, 1.5 "
                                             "min (75%) less"),
                                            (300, "5.0 min here against 2.0 min there, 3.0 "
                                             "min (150%) more")])
def test_the_run_report_compares_with_the_reference_build(tmp_path, monkeypatch, seconds, says):
    """A chapter's wall time beside the reference build's, and the difference in words, either
    way."""
    reference = tmp_path / "reference.yaml"
    reference.write_text("profile: cpu\nlabel: the old one\nminutes: {theory: 2.0}\n")
    monkeypatch.setattr("rlvr_dynamics.report.REFERENCE_COSTS", reference)
    nb = nbformat.v4.new_notebook(metadata={"papermill": {"duration": seconds}})
    (tmp_path / "notebooks").mkdir()
    nbformat.write(nb, tmp_path / "notebooks" / "theory.ipynb")
    report = run_report("cpu", tmp_path)
    assert f"| theory | cpu | - |  | {seconds / 60:.1f} min | 2.0 min |" in report
    assert f"Against the reference build (the old one): the chapters both ran took {says}" \
        in report
    assert "reference build" not in run_report("smoke", tmp_path)


def test_the_run_report_lists_damaged_results_set_aside(tmp_path, monkeypatch):
    """A result found damaged is listed with what was wrong, where it was set aside and whether
    it was computed again; without one, the report says none was found."""
    from rlvr_dynamics import store
    monkeypatch.setenv("RLVR_RESULTS", str(tmp_path))
    (tmp_path / "notebooks").mkdir()
    assert "No stored result was found damaged" in run_report("smoke", tmp_path)
    e = store.Entry(store.results_dir("smoke", "toy_dynamics") / "summarise-abc",
                    code="rlvr_dynamics.toy")

    def compute(folder):
        store.write_json(folder / "result.json", [1, 2, 3])
    store.obtain(e, compute)
    size = (e.path / "result.json").stat().st_size
    (e.path / "result.json").write_text("[1, 2")
    assert not e.done
    report = run_report("smoke", tmp_path)
    assert f"- `toy_dynamics/summarise-abc` (result.json has 5 bytes, {size} when finished)" \
        in report
    assert "set aside in `results/smoke/damaged/toy_dynamics/summarise-abc-" in report
    assert report.count("not computed again yet") == 1
    store.obtain(e, compute)
    report = run_report("smoke", tmp_path)
    assert ", computed again" in report and "not computed again yet" not in report


def test_the_rerun_page_gets_the_other_profiles_costs_from_their_measurements(tmp_path):
    """Each measured profile's row: when, at which commit and how it was measured (with its
    section of the lab notebook), what ran, its wall time (in hours to a tenth where it was
    approximate) and its timed parts with the range of their single runs."""
    record = tmp_path / "costs.yaml"
    record.write_text(
        "- {profile: cpu-map, date: 2026-12-04, commit: abc1234, lab_notebook: 27, how: on 2 "
        "cores, what: a grid, minutes: 162, about: true}\n"
        "- {profile: cpu-smollm2, date: 2026-12-05, commit: def5678, lab_notebook: 28, how: "
        "alone, what: six runs, minutes: 117, parts: [{part: the runs, minutes: 98, runs: "
        "{GRPO: [29.5, 27.7]}}, {part: the rest, minutes: 11.4}]}\n")
    md = profile_costs_md(record)
    assert ("| `cpu-map` | 2026-12-04, code of commit abc1234, on 2 cores (lab notebook, section "
            "27) | a grid | about 2.7 h | - |") in md
    assert ("| six runs | 1 h 57 min | the runs 98 min (GRPO 27.7-29.5 min a run); the rest "
            "11.4 min |") in md


def test_every_measured_profile_cost_names_a_profile_its_commit_and_its_lab_notebook_section():
    """The record the rerun page's costs come from: known profiles, each measurement dated,
    with its commit and a section of the lab notebook that exists; the page has the marker."""
    lab = (REPO / "docs" / "experiments" / "cpu_scale.md").read_text()
    for e in yaml.safe_load(PROFILE_COSTS.read_text()):
        assert e["profile"] in profiles.available_profiles()
        assert e["date"] and e["commit"] and e["minutes"] > 0
        assert f"\n## {e['lab_notebook']}. " in lab
    assert MEASURED in (BOOK / "rerun.md").read_text()


def executed(builds, profile: str, name: str, **made) -> None:
    """An executed notebook of chapter ``name`` under ``profile`` in ``builds``, stamped as
    this checkout would stamp it (``execution.stamp``), with ``made`` overriding the stamp,
    and its rerun box under the title, as ``execution.execute`` leaves it."""
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_markdown_cell(f"# {name}\nIntro."), nbformat.v4.new_code_cell("1")],
        metadata={"papermill": {"duration": 600, "end_time": "2026-12-05T12:00:00"},
                  STAMP: {**stamp(profile, name), **made}})
    with_rerun_box(nb, name, profile)
    folder = builds / profile / "book" / "notebooks"
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / f"{name}.ipynb")


def test_the_published_book_takes_each_chapter_from_its_profile_and_says_so(tmp_path,
                                                                            monkeypatch):
    """Each chapter from the profile the publish file names, headed by where its numbers come
    from; one made by older code is shown with a warning, one its profile never executed
    falls back to the default's and is named; nothing is executed."""
    for module in ("execution", "publish"):  # where the pages and the assembly look it up
        monkeypatch.setattr(f"rlvr_dynamics.{module}.chapters", lambda: ["theory", "pretrained"])
    builds, root = tmp_path / "build", tmp_path / "publish"
    executed(builds, "cpu", "theory")
    executed(builds, "cpu", "pretrained")
    executed(builds, "cpu-smollm2", "pretrained")
    report = assemble("cpu", {"pretrained": "cpu-smollm2"}, root, builds)
    assert report == {"theory": {"profile": "cpu", "state": "current"},
                      "pretrained": {"profile": "cpu-smollm2", "state": "current"}}
    page = nbformat.read(root / "notebooks" / "pretrained.ipynb", as_version=4)
    title, head = page.cells[0].source.split("\n\n", 1)
    assert title == "# pretrained" and len(page.cells) == 4  # under the title, in its cell
    box = page.cells[1].source  # the rerun box, where Colab opens this page's notebook
    assert box.startswith(":::{admonition} Rerun this chapter") and "PROFILE=cpu-smollm2" in box
    assert "(https://colab.research.google.com/github/" in box and \
        "/blob/executed/pretrained.ipynb)" in box
    assert page.cells[2].source == "Intro."
    assert head.startswith("*The numbers on this page come from the `cpu-smollm2` profile*: "
                           "executed 2026-12-05 12:00 UTC")
    assert "in 10.0 minutes" in head and "make reproduce PROFILE=cpu-smollm2" in head
    assert "warning" not in head
    last = [e for e in yaml.safe_load(PROFILE_COSTS.read_text())
            if e["profile"] == "cpu-smollm2"][-1]
    assert f"({last['date']}, code of commit {last['commit']}, {last['how']};" in head
    theory = nbformat.read(root / "notebooks" / "theory.ipynb", as_version=4).cells[0].source
    assert "The whole profile took" not in theory  # cpu: no entry; its rerun page states it
    executed(builds, "cpu-smollm2", "pretrained", code="older")
    report = assemble("cpu", {"pretrained": "cpu-smollm2"}, root, builds)
    assert report["pretrained"]["state"] == "older code"
    head = nbformat.read(root / "notebooks" / "pretrained.ipynb", as_version=4).cells[0].source
    assert ":::{warning}\nThis page was computed by older code" in head
    (builds / "cpu-smollm2" / "book" / "notebooks" / "pretrained.ipynb").unlink()
    report = assemble("cpu", {"pretrained": "cpu-smollm2"}, root, builds)
    assert report["pretrained"]["profile"] == "cpu"
    assert "cpu-smollm2 has not executed it: make reproduce PROFILE=cpu-smollm2" in \
        report["pretrained"]["state"]
    (builds / "cpu" / "book" / "notebooks" / "theory.ipynb").unlink()
    assert assemble("cpu", {}, root, builds)["theory"]["state"].startswith("missing")
    assert not (root / "notebooks" / "theory.ipynb").exists()


def test_a_chapter_is_shown_again_under_another_profile_on_a_page_of_its_own(tmp_path,
                                                                             monkeypatch):
    """``also``: the chapter as a second profile executed it, on its own page after the
    chapter (in the table of contents and the run report), titled and headed with that
    profile; older code is said; a profile that has not run it is named as missing."""
    for module in ("execution", "publish"):
        monkeypatch.setattr(f"rlvr_dynamics.{module}.chapters",
                            lambda: ["theory", "regime_map", "verdict"])
    builds, root = tmp_path / "build", tmp_path / "publish"
    for name in ("theory", "regime_map", "verdict"):
        executed(builds, "cpu", name)
    executed(builds, "cpu-map", "regime_map")
    executed(builds, "cpu-grid", "regime_map", code="older")
    report = assemble("cpu", {"regime_map": "cpu-map"}, root, builds,
                          also={"regime_map": ["cpu-grid", "cpu-nsr"]})
    assert report["regime_map"] == {"profile": "cpu-map", "state": "current"}
    assert report["regime_map--cpu-grid"] == {"profile": "cpu-grid", "state": "older code"}
    assert report["regime_map--cpu-nsr"]["state"] == "missing: make reproduce PROFILE=cpu-nsr"
    page = nbformat.read(root / "notebooks" / "regime_map--cpu-grid.ipynb", as_version=4)
    assert "/blob/executed/regime_map--cpu-grid.ipynb)" in page.cells[1].source
    assert page.cells[0].source.startswith("# regime_map: the `cpu-grid` profile\n\n*The numbers "
                                           "on this page come from the `cpu-grid` profile*")
    assert ":::{warning}" in page.cells[0].source
    assert pages(root) == ["theory", "regime_map", "regime_map--cpu-grid", "verdict"]
    assert list(executions(root)) == pages(root)
    toc = toc_without(["pretrained"], ["regime_map--cpu-grid"])
    files = [c["file"] for part in toc["parts"] for c in part["chapters"]]
    assert "notebooks/pretrained" not in files and "notebooks/regime_map" in files
    again = toc["parts"][-2]  # its own part, unnumbered: the chapters keep their numbers
    assert again["caption"] == OTHER_PROFILES and not again.get("numbered")
    assert again["chapters"] == [{"file": "notebooks/regime_map--cpu-grid"}]
    assert toc["parts"][-1]["caption"] == "About this build"
    assert toc_without([]) == yaml.safe_load((BOOK / "_toc.yml").read_text())
    assert chapter_of("regime_map--cpu-grid") == "regime_map" == chapter_of("regime_map")


def test_the_publish_file_names_known_profiles_and_chapters(tmp_path):
    default, chosen, refresh, also = published = published_from()
    assert default == "cpu" and chosen == {"training": "cpu-nsr", "reproduction": "cpu-nsr",
                                           "scenario": "cpu-map", "ladder": "cpu-ladder",
                                           "mechanism": "cpu-mechanism",
                                           "regime_map": "cpu-map", "pretrained": "cpu-smollm2"}
    assert refresh == ["verdict"] and also == {"regime_map": ["cpu-grid"],
                                               "scenario": ["cpu-bases"]}
    assert published.profiles == ["cpu-nsr", "cpu-map", "cpu-ladder", "cpu-mechanism",
                                  "cpu-smollm2", "cpu-grid", "cpu-bases"]
    from rlvr_dynamics.chapters import verdict  # the verdict page shows every one of them
    assert sorted(verdict.Params().beside) == sorted(published.profiles)
    bad = tmp_path / "publish.yaml"
    bad.write_text("default: cpu\nchapters: {regime_map: cpu-mpa}\n")
    with pytest.raises(ParameterError, match="regime_map names the profile 'cpu-mpa'"):
        published_from(bad)
    bad.write_text("default: cpu\nchapters: {regime: cpu-map}\n")
    with pytest.raises(ParameterError, match=r"unknown chapter\(s\) \['regime'\]"):
        published_from(bad)
    bad.write_text("default: cpu\nalso: {regime_map: [cpu-gird]}\n")
    with pytest.raises(ParameterError, match="regime_map names the profile 'cpu-gird'"):
        published_from(bad)


def test_the_workflow_runs_each_heavy_profile_apart_and_publishes_one_book():
    """The workflow (it cannot run here): the default build as before, one job per profile the
    publish file shows chapters from, resumable through the cache and saved even when cut off,
    each handing its executed notebooks and verdicts to the job that runs `make publish` and
    uploads that book."""
    flow = yaml.safe_load((REPO / ".github" / "workflows" / "book.yml").read_text())
    jobs = flow["jobs"]
    heavy_profiles = published_from().profiles
    steps = {name: [s.get("run", "") + str(s.get("uses", "")) for s in job["steps"]]
             for name, job in jobs.items()}
    assert any("make reproduce PROFILE=cpu " in s for s in steps["build"])
    heavy = jobs["heavy"]
    assert sorted(heavy["strategy"]["matrix"]["profile"]) == sorted(heavy_profiles)
    assert heavy["timeout-minutes"] < 360  # the hosted runners' limit
    by_use = {str(s.get("uses", "")).split("@")[0]: s for s in heavy["steps"]}
    restore, save = by_use["actions/cache/restore"], by_use["actions/cache/save"]
    assert "hashFiles('src/**'" in restore["with"]["key"] and restore["with"]["restore-keys"]
    assert save["if"] == "always()" and save["with"]["path"] == restore["with"]["path"]
    uploads = [s for job in ("build", "heavy") for s in jobs[job]["steps"]
               if str(s.get("uses", "")).startswith("actions/upload-artifact")]
    assert all("book/notebooks" in u["with"]["path"] and "verdicts" in u["with"]["path"]
               for u in uploads) and len(uploads) == 2
    publish = jobs["publish"]
    assert set(publish["needs"]) == {"build", "heavy"}
    assert any("download-artifact" in s for s in steps["publish"])
    assert any(s.startswith("make publish") for s in steps["publish"])
    branch = yaml.safe_load((BOOK / "publish.yaml").read_text())["notebooks_branch"]
    push = next(s for s in steps["publish"] if "notebooks_branch" in s)  # where Colab reads
    assert "cd build/publish/book/notebooks" in push and 'git push -f' in push
    assert publish["permissions"] == {"contents": "write"}
    assert colab_url("theory").endswith(f"/blob/{branch}/theory.ipynb")
    pages = [s for s in publish["steps"] if "upload-pages-artifact" in str(s.get("uses", ""))]
    assert pages[0]["with"]["path"] == "build/publish/book/_build/html"
    assert jobs["deploy"]["needs"] == "publish"


def test_a_profiles_measured_cost_is_its_last_entry(tmp_path):
    costs = tmp_path / "costs.yaml"
    costs.write_text(yaml.safe_dump([
        {"profile": "p", "date": "2026-12-04", "commit": "aaa", "how": "first", "minutes": 162,
         "about": True},
        {"profile": "p", "date": "2026-12-05", "commit": "bbb", "how": "second", "minutes": 117}]))
    said = measured_cost("p", costs)
    assert "took 1 h 57 min when last measured (2026-12-05, code of commit bbb, second;" in said
    assert measured_cost("q", costs) == ""
