"""The bibliography: every work the book cites is in ``book/references.bib`` and every entry
there is cited somewhere (a page, or a chapter's generated sentences); the checker is shown to
fail on a planted unknown key and a planted uncited entry. The smoke book's build (``-W -n``)
fails on a key that does not resolve, and ``tests/test_book.py`` checks that its references page
lists every entry."""
from __future__ import annotations

import re
from pybtex.database import parse_file, parse_string

from rlvr_dynamics import REPO

BIB = REPO / "book" / "references.bib"
CITE = re.compile(r"\{cite(?::[a-z]+)?\}`([^`]+)`")
SOURCES = [*sorted((REPO / "notebooks").glob("*.md")), *sorted((REPO / "book").glob("*.md")),
           *sorted((REPO / "src" / "rlvr_dynamics" / "chapters").rglob("*.py"))]


def cited(texts: list[str]) -> set[str]:
    """The keys of every ``{cite}``, ``{cite:t}``, ``{cite:p}``... role in ``texts``."""
    return {key.strip() for text in texts for m in CITE.finditer(text)
            for key in m.group(1).split(",")}


def problems(keys: set[str], texts: list[str]) -> list[str]:
    """What is wrong between the bibliography's ``keys`` and the citations in ``texts``."""
    used = cited(texts)
    return ([f"cited but not in references.bib: {k}" for k in sorted(used - keys)]
            + [f"in references.bib but never cited: {k}" for k in sorted(keys - used)])


def test_every_citation_resolves_and_every_entry_is_cited():
    keys = set(parse_file(str(BIB)).entries)
    assert len(keys) >= 10
    assert problems(keys, [p.read_text() for p in SOURCES]) == []


def test_the_check_sees_an_unknown_key_and_an_uncited_entry():
    bib = parse_string("@misc{a2025x, title={X}}\n@misc{b2025y, title={Y}}", "bibtex")
    texts = ["as {cite:t}`a2025x` and {cite:p}`c2025z` show"]
    assert problems(set(bib.entries), texts) == ["cited but not in references.bib: c2025z",
                                                 "in references.bib but never cited: b2025y"]
    assert problems({"a2025x"}, ["{cite}`a2025x`"]) == []


def test_every_entry_names_its_authors_title_year_and_where_to_find_it():
    for key, entry in parse_file(str(BIB)).entries.items():
        fields = {k.lower() for k in entry.fields}
        assert entry.persons.get("author") or "organization" in fields, key
        assert {"title", "year"} <= fields, key
        assert fields & {"url", "doi", "eprint"}, f"{key}: no url, doi or eprint"


def test_the_books_citation_names_the_configured_repository_and_the_commit(tmp_path,
                                                                           monkeypatch):
    from rlvr_dynamics import report

    (tmp_path / "_config.yml").write_text(
        "title: A Book\nauthor: Someone\nrepository: {url: https://example.org/a/b}\n")
    monkeypatch.setattr(report, "BOOK", tmp_path)
    monkeypatch.setattr(report, "commit", lambda: "abc1234+changes")
    fenced = report.citation_md().splitlines()
    assert fenced[0] == "```bibtex" and fenced[-1] == "```"
    entry = parse_string("\n".join(fenced[1:-1]), "bibtex").entries
    (fields,) = [e.fields for e in entry.values()]
    assert fields["title"] == "A Book"
    assert fields["howpublished"] == "\\url{https://example.org/a/b}"
    assert "commit abc1234;" not in fields["note"] and "commit abc1234" in fields["note"]
