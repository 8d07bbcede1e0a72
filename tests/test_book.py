"""The book under the smoke profile: every notebook executes, the book builds with warnings
as errors, and each page holds its notebook's figures and math typeset from local files."""
import json
import re

import nbformat
import pytest

from rlvr_dynamics import REPO, release, store, verdicts
from rlvr_dynamics.chapters import CAPTION
from rlvr_dynamics.execution import chapters
from test_notebooks import logic
from test_release import PROFILE, repo  # noqa: F401 (a fixture)

pytestmark = pytest.mark.slow


def test_every_chapter_executed_without_errors(smoke_book):
    for name in chapters():
        nb = nbformat.read(smoke_book / "notebooks" / f"{name}.ipynb", as_version=4)
        errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
                  if o.get("output_type") == "error"]
        assert not errors, f"{name}: {errors[0].get('ename')}"
        assert nb.metadata["papermill"]["parameters"]["profile"] == "smoke"


def test_pages_hold_their_figures(smoke_book):
    html = smoke_book / "_build" / "html"
    for name in chapters():
        nb = nbformat.read(smoke_book / "notebooks" / f"{name}.ipynb", as_version=4)
        n_figures = sum("image/png" in o.get("data", {}) for c in nb.cells
                        if c.cell_type == "code" for o in c.get("outputs", []))
        page = (html / "notebooks" / f"{name}.html").read_text()
        images = re.findall(r'<img[^>]+src="([^"]+)"', page)
        assert len([s for s in images if "_images/" in s]) >= n_figures, name
        for src in images:
            assert (html / "notebooks" / src).resolve().is_file(), f"{name}: missing {src}"


def test_every_figure_was_checked_and_is_captioned_on_its_page(smoke_book):
    """Every figure of the smoke build went through ``style.show`` (so ``figure_check`` passed
    it at the width the page shows it: tests/test_figure_check.py shows the check failing on
    planted faults) and stands on its page in a figure with a caption under it."""
    html = smoke_book / "_build" / "html"
    for name in chapters():
        nb = nbformat.read(smoke_book / "notebooks" / f"{name}.ipynb", as_version=4)
        figures = [(c, o) for c in nb.cells if c.cell_type == "code"
                   for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
        unchecked = [c.source[:60] for c, o in figures if CAPTION not in o.get("metadata", {})]
        assert not unchecked, f"{name}: figures not shown by style.show: {unchecked}"
        assert all(c.metadata["mystnb"]["figure"]["caption"] for c, _ in figures), name
        page = (html / "notebooks" / f"{name}.html").read_text()
        captioned = re.findall(r"<figure[^>]*>(?:(?!</figure>).)*?<img(?:(?!</figure>).)*?"
                               r"<figcaption>", page, flags=re.S)
        assert len(captioned) == len(figures), (name, len(captioned), len(figures))


def test_math_is_typeset_from_local_files(smoke_book):
    html = smoke_book / "_build" / "html"
    for page in [html / "intro.html", *(html / "notebooks").glob("*.html")]:
        text = page.read_text()
        scripts = re.findall(r'<script[^>]+src="([^"]*mathjax[^"]*)"', text, flags=re.I)
        assert scripts, f"{page.name}: no MathJax"
        for src in scripts:
            assert not src.startswith("http"), f"{page.name}: MathJax from {src}"
            assert (page.parent / src.split("?")[0]).is_file()
    assert (html / "_static" / "mathjax" / "output" / "chtml" / "fonts").is_dir()


def test_run_report_lists_every_chapter(smoke_book):
    report = (smoke_book / "run_report.md").read_text()
    assert "**smoke** profile" in report
    for name in chapters():
        assert f"| {name} |" in report


def test_the_verdict_page_gives_every_claim_a_computed_verdict(smoke_book):
    """Under smoke the toy, training and reproduction chapters record their checks; the
    verdict page lists every claim of ``verdicts.claims`` with one of the verdicts."""
    page = (smoke_book / "_build" / "html" / "notebooks" / "verdict.html").read_text()
    for claim in verdicts.claims().values():
        assert claim.text.split(",")[0].replace("'", "&#39;") in page, claim.text
    measured = [v for v in verdicts.VERDICTS if v != "not measured"]
    assert sum(page.count(f">{v}<") for v in measured) >= len(verdicts.claims())


def test_the_front_page_states_the_verdict_table(smoke_book, smoke_results, monkeypatch):
    """Every verdict word on the front page is the verdict table's; a flipped result would be
    caught."""
    monkeypatch.setenv("RLVR_RESULTS", str(smoke_results))
    table = verdicts.table("smoke")
    page = (smoke_book / "intro.md").read_text()
    assert verdicts.prose_mismatches(page, table) == []
    html = (smoke_book / "_build" / "html" / "intro.html").read_text()
    assert sum(html.count(f"<strong>{v}</strong>") for v in table["verdict"].unique()) == len(table)
    flipped = table.copy()
    key = flipped.index[0]
    flipped.loc[key, "verdict"] = "opposite" if table.loc[key, "verdict"] != "opposite" \
        else "replicates"
    assert [m.split(":")[0] for m in verdicts.prose_mismatches(page, flipped)] == [key]


PLUMBING = re.compile(r"^\s*(import \w|from [\w.]+ import |logging\.|P = chapter\.Params\.check|"
                      r"pd\.set_option|def \w+\(|class \w+)", flags=re.M)
"""A code cell's input that a reader does not need to see: imports, logging set-up, the
parameters' check, display options, function or class definitions (those live in ``src/``)."""


def shown_plumbing(html: str) -> list[str]:
    """The first line of every code cell input shown unfolded on a page that is plumbing."""
    from bs4 import BeautifulSoup

    found = []
    for cell in BeautifulSoup(html, "html.parser").select("div.cell_input"):
        if cell.find_parent("details") is not None:
            continue  # folded: a reader opens it on purpose
        code = cell.get_text()
        match = PLUMBING.search(code)
        if match:
            found.append(code[match.start():].strip().splitlines()[0])
    return found


def shown_logic(html: str) -> list[str]:
    """Every code cell input shown unfolded on a page that holds ``logic``: its first line and
    what it holds."""
    from bs4 import BeautifulSoup

    found = []
    for cell in BeautifulSoup(html, "html.parser").select("div.cell_input"):
        if cell.find_parent("details") is None and (held := logic(cell.get_text())):
            found.append(f"{cell.get_text().strip().splitlines()[0]} ({', '.join(held)})")
    return found


def test_the_page_check_reads_shown_cells_only():
    page = ('<div class="cell"><div class="cell_input"><pre>if R is not None:\n'
            '    display(t)</pre></div></div>')
    assert shown_logic(page) == ["if R is not None: (if)"]
    folded = f'<details class="hide above-input"><summary>Show</summary>{page}</details>'
    assert shown_logic(folded) == []


def test_no_page_shows_control_flow_or_string_assembly(smoke_book):
    """Every shown code cell is a few calls: branches and the words of a caption or a sentence
    are made in ``src/`` (where a chapter's results are absent, the runner leaves out the cells
    that need them: ``execution.NEEDS_RESULTS``)."""
    html = smoke_book / "_build" / "html" / "notebooks"
    shown = {name: shown_logic((html / f"{name}.html").read_text()) for name in chapters()}
    assert {name: cells for name, cells in shown.items() if cells} == {}


def test_the_plumbing_check_sees_a_shown_import():
    shown = '<div class="cell"><div class="cell_input"><pre>import numpy as np</pre></div></div>'
    folded = f'<details class="hide above-input"><summary>Show</summary>{shown}</details>'
    prose = '<div class="cell"><div class="cell_input"><pre>fig = chapter.plot(P)</pre></div></div>'
    assert shown_plumbing(shown) == ["import numpy as np"]
    assert shown_plumbing(folded) == [] and shown_plumbing(prose) == []


def test_no_page_shows_plumbing_to_readers(smoke_book):
    """Imports, logging, parameter checks and definitions are hidden or folded on every page;
    the calls that compute a figure, and the source included from ``src/``, stay shown."""
    html = smoke_book / "_build" / "html" / "notebooks"
    shown = {name: shown_plumbing((html / f"{name}.html").read_text()) for name in chapters()}
    assert {name: lines for name, lines in shown.items() if lines} == {}


def cut_cells(html: str) -> list[str]:
    """The table cells of a page whose text pandas cut short (it ends them in "...")."""
    from bs4 import BeautifulSoup

    cells = BeautifulSoup(html, "html.parser").select("div.cell_output td")
    return [td.get_text() for td in cells if td.get_text().rstrip().endswith("...")]


def test_the_cut_check_sees_a_cut_table():
    import pandas as pd

    from rlvr_dynamics.chapters import style

    table = pd.DataFrame({"ours": ["held-out greedy accuracy at the end: GRPO 0.998 ± 0.003"]})
    page = '<div class="cell_output">{}</div>'
    with pd.option_context("display.max_colwidth", 50):
        assert cut_cells(page.format(table._repr_html_())) != []
    with pd.option_context("display.max_colwidth", 50, "display.precision", 6):
        style.for_pages()
        assert cut_cells(page.format(table._repr_html_())) == []


def test_no_table_on_a_page_is_cut_short(smoke_book):
    html = smoke_book / "_build" / "html" / "notebooks"
    cut = {name: cut_cells((html / f"{name}.html").read_text()) for name in chapters()}
    assert {name: cells for name, cells in cut.items() if cells} == {}


def test_the_injected_parameters_are_folded(smoke_book):
    for name in chapters():
        nb = nbformat.read(smoke_book / "notebooks" / f"{name}.ipynb", as_version=4)
        injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
        assert len(injected) == 1 and "hide-input" in injected[0].metadata["tags"], name
        assert max(map(len, injected[0].source.splitlines())) <= 100, name


def test_a_published_book_shows_each_page_with_its_source_profile(smoke_book):
    """The published book's assembly and build on the smoke build's executions: a chapter
    shown again on a page of its own (``also``) is in the built book's navigation, in a part
    of its own after the chapters (which keep their numbers), titled with its profile and
    headed by where its numbers come from; every other page is headed likewise; the run
    report lists the extra page."""
    from rlvr_dynamics import REPO
    from rlvr_dynamics.book import build_book
    from rlvr_dynamics.publish import assemble
    root = REPO / "build" / "smoke-publish" / "book"  # apart from a real `make publish`
    report = assemble("smoke", {}, root, also={"theory": ["smoke"]})
    assert report["theory--smoke"] == {"profile": "smoke", "state": "current"}
    assert all(r["state"] == "current" for r in report.values()), report
    index = build_book("smoke-publish", verdicts_of="smoke")
    html = index.parent / "notebooks"
    again = (html / "theory--smoke.html").read_text()
    assert "the <code class=\"docutils literal notranslate\"><span class=\"pre\">smoke</span>" \
        in again and "The numbers on this page come from the" in again
    nav = (html / "theory.html").read_text()
    assert nav.index('href="verdict.html"') < nav.index('href="theory--smoke.html"')
    assert '<span class="section-number">2. </span>The toy' in (html / "toy_dynamics.html"
                                                                 ).read_text()
    for name in chapters():
        assert "The numbers on this page come from the" in (html / f"{name}.html").read_text()
    assert "| theory--smoke | smoke |" in (root / "run_report.md").read_text()


def test_the_references_page_lists_every_entry(smoke_book):
    from pybtex.database import parse_file

    html = (smoke_book / "_build" / "html" / "references.html").read_text()
    page = " ".join(re.sub(r"<[^>]+>", " ", html).lower().split())  # the style sets the case
    for key, entry in parse_file(str(REPO / "book" / "references.bib")).entries.items():
        title = " ".join(re.sub(r"[{}]", "", entry.fields["title"]).lower().split())
        assert title.split(":")[0][:40] in page, f"{key} ({title!r}) missing from the page"


def test_a_smoke_release_publishes_from_a_fresh_copy(smoke_book, smoke_results, repo, tmp_path,
                                                     monkeypatch):
    """The smoke build's results released, then two chapters drawn from the release alone into
    an empty results folder and an empty build folder: each page shows what the build showed,
    says it comes from the release, and nothing was trained (no run has its model). A result
    that changed after it was restored is set aside, and the page that reads it is refused
    rather than computed; one of older code is read and named on the page."""
    import nbformat
    from rlvr_dynamics import execution, publish
    monkeypatch.setenv("RLVR_RESULTS", str(smoke_results))
    monkeypatch.setenv("RLVR_RELEASE", str(tmp_path / "release"))
    monkeypatch.delenv("RLVR_REUSE_STALE", raising=False)
    release.add(PROFILE, repo=repo)
    fresh, builds = tmp_path / "fresh", tmp_path / "build"
    monkeypatch.setenv("RLVR_RESULTS", str(fresh))
    monkeypatch.setenv("RLVR_BUILD", str(builds))
    pages = [("training", PROFILE), ("toy_dynamics", PROFILE)]
    assert publish.from_release(pages) == {}
    for name, _ in pages:
        drawn = builds / PROFILE / "book" / "notebooks" / f"{name}.ipynb"
        assert shown_outputs(drawn) == shown_outputs(smoke_book / "notebooks" / f"{name}.ipynb")
        made = nbformat.read(drawn, as_version=4).metadata[execution.STAMP]
        assert made[publish.RELEASED]["older"] == {}
        assert "results release" in publish.provenance_md(nbformat.read(drawn, as_version=4),
                                                          "current")
    runs = [p for p in (fresh / PROFILE / "training").iterdir() if (p / "done.json").is_file()]
    assert runs and not any((p / "model").exists() for p in runs)
    # planted: a run changed after restoring, another made by older code
    from rlvr_dynamics.profiles import params_class, plan
    from rlvr_dynamics.rl.runs import run_dir
    T = params_class("training").parse(plan(PROFILE, ["training"])["training"])
    damaged, stale = (run_dir(T.run_config(a, T.seeds[0]), PROFILE)  # both read by the chapter
                      for a in ("grpo", "grpo_n"))            # (other chapters' runs lie there too)
    assert damaged in runs and stale in runs
    (damaged / "dynamics.json").write_text((damaged / "dynamics.json").read_text() + " ")
    marker = json.loads((stale / "done.json").read_text())
    store.write_json(stale / "done.json", {**marker, "code": "older"})
    (builds / PROFILE / "book" / "notebooks" / "training.ipynb").unlink()
    failed = publish.from_release([("training", PROFILE)])
    assert list(failed) == ["training (smoke)"] and "is not stored" in failed["training (smoke)"]
    assert not (builds / PROFILE / "book" / "notebooks" / "training.ipynb").exists()
    assert release.restore(PROFILE) == [damaged.relative_to(fresh / PROFILE).as_posix()]
    assert publish.from_release([("training", PROFILE)]) == {}
    drawn = nbformat.read(builds / PROFILE / "book" / "notebooks" / "training.ipynb", as_version=4)
    assert list(drawn.metadata[execution.STAMP][publish.RELEASED]["older"]) == [
        stale.relative_to(fresh / PROFILE).as_posix()]
    assert "made by older code" in publish.provenance_md(drawn, "current")


def shown_outputs(path):
    """The words and tables a page shows (markdown and HTML outputs), cell by cell, each
    styled table's random id (pandas' ``T_<uuid>``) left out."""
    nb = nbformat.read(path, as_version=4)
    return [re.sub(r"T_[0-9a-f]{5}", "T_", o["data"].get("text/markdown")
                   or o["data"].get("text/html"))
            for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
            if o.output_type in ("display_data", "execute_result")
            and {"text/markdown", "text/html"} & set(o["data"])]
