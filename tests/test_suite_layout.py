"""How the suite is laid out for its two workers (``-n 2 --dist loadfile``, pyproject.toml)."""
import re

from rlvr_dynamics import REPO


def test_the_smoke_book_is_built_by_one_worker_only():
    """``smoke_book`` is a session fixture, and each worker has its own session: a test of it
    in a second file would build the smoke book a second time on the other worker, into the
    same ``build/smoke`` (the two builds then overwrite each other's notebooks and book, as CI
    found at stop 55). Only ``tests/test_book.py`` asks for it."""
    users = sorted(p.name for p in (REPO / "tests").glob("test_*.py")
                   if re.search(r"def test_\w+\([^)]*\bsmoke_book\b", p.read_text()))
    assert users == ["test_book.py"], users
