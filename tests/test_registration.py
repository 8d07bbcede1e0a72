"""What a registration can prove, read from git: a run records the commit it began from; the
registration was committed in that commit's results release byte for byte (else not, or
unknown for a run begun from uncommitted changes); a run already released at that commit is a
replay. Each fact is also shown false."""
import json
import subprocess

import pytest

from rlvr_dynamics import store
from rlvr_dynamics.rl.config import STARTED
from rlvr_dynamics.rl.registration import committed_before, known_at


def git(root, *args):
    return subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t",
                           *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A repository with a results release, and a results root beside it."""
    root = tmp_path / "repo"
    (root / "release").mkdir(parents=True)
    (root / "release" / "README.md").write_text("the release\n")
    git(tmp_path, "init", "-q", str(root))
    git(root, "add", ".")
    git(root, "commit", "-qm", "empty release")
    monkeypatch.setenv("RLVR_RESULTS", str(tmp_path / "results"))
    return root


def record_at(rel, data):
    path = store.results_root() / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def begun(run, commit):
    run.mkdir(parents=True, exist_ok=True)
    (run / STARTED).write_text(json.dumps({"time": "2026-12-07T18:00:00+00:00",
                                           "registration": "k", "commit": commit}))
    return run


def test_a_registration_committed_before_its_run_is_proven(repo):
    before = git(repo, "rev-parse", "HEAD")
    record = record_at("cpu/regimes/predictions/a/prediction.json", b'{"dip": -0.5}')
    released = repo / "release" / "cpu/regimes/predictions/a/prediction.json"
    released.parent.mkdir(parents=True)
    released.write_bytes(record.read_bytes())
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "registered")
    after = git(repo, "rev-parse", "HEAD")
    runs = store.results_root() / "cpu" / "training"
    assert committed_before(record, begun(runs / "r1", after), repo) is True
    assert committed_before(record, begun(runs / "r0", before), repo) is False   # too early
    assert committed_before(record, begun(runs / "r2", after + "+changes"), repo) is None
    record.write_bytes(b'{"dip": -0.6}')                    # rewritten after the commit
    assert committed_before(record, runs / "r1", repo) is False


def test_a_registration_the_release_keeps_gzipped_is_proven_as_the_store_wrote_it(repo):
    """The release keeps a record gzipped (``release.stored``): ``released`` reads it back and
    proves the run, and names the commit that first released it; a reader of the plain name
    alone (``rl.registration``'s, frozen with the training code) finds nothing there, which is
    how the mechanism's runs read "not committed" at 3934fd6."""
    import gzip
    from rlvr_dynamics import release, released
    from rlvr_dynamics.regimes import plan
    before = git(repo, "rev-parse", "HEAD")
    record = record_at("cpu-mechanism/mechanism/plan/k/plan.json", b'{"rule": "x"}')
    name = release.stored("plan.json")
    assert name == "plan.json.gz"
    kept = repo / "release" / "cpu-mechanism/mechanism/plan/k" / name
    kept.parent.mkdir(parents=True)
    kept.write_bytes(gzip.compress(record.read_bytes(), mtime=0))
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "the plan, released")
    after = git(repo, "rev-parse", "HEAD")
    runs = store.results_root() / "cpu-mechanism" / "training"
    assert released.at(after, record, repo) == record.read_bytes()
    assert released.committed_before(record, begun(runs / "r1", after), repo) is True
    assert released.committed_before(record, begun(runs / "r0", before), repo) is False
    assert committed_before(record, runs / "r1", repo) is False    # the plain name alone
    assert released.first_commit(record, repo) == after
    assert plan.committed_in(record, repo) == after[:7]
    record.write_bytes(b'{"rule": "y"}')                            # rewritten after the commit
    assert released.committed_before(record, runs / "r1", repo) is False


def test_a_run_already_released_at_its_commit_is_a_replay(repo):
    run = store.results_root() / "cpu" / "training" / "grpo-seed0-abc"
    before = git(repo, "rev-parse", "HEAD")
    assert known_at(begun(run, before), repo) is False
    (repo / "release" / "cpu/training/grpo-seed0-abc").mkdir(parents=True)
    (repo / "release" / "cpu/training/grpo-seed0-abc/done.json").write_text("{}")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "released")
    assert known_at(begun(run, git(repo, "rev-parse", "HEAD")), repo) is True


def test_a_parts_ledger_leaves_the_commit_a_run_records_clean(repo, monkeypatch):
    """A part writes its ledger row into release/ before its runs begin: the commit they record
    stays clean (release/ is data), so a registration committed there still proves itself; a
    change to code marks it (the check can fail)."""
    monkeypatch.setattr(store, "REPO", repo)
    head = git(repo, "rev-parse", "HEAD")
    (repo / "release" / "README.md").write_text("a ledger row\n")
    assert store.checkout_commit() == head
    (repo / "code.py").write_text("x = 1\n")
    git(repo, "add", "code.py")
    assert store.checkout_commit() == head + "+changes"
