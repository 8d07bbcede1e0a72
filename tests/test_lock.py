"""One build of a profile at a time: a second process that wants the profile says which process
holds it and waits for it, or exits with that message; the runner holds the profile's lock for
the whole of a build."""
import os
import subprocess
import sys
import textwrap

import pytest

from rlvr_dynamics import REPO, lock, run

PROFILE = "smoke"


@pytest.fixture
def roots(tmp_path, monkeypatch):
    """A tmp results root (the lock lies in it)."""
    monkeypatch.setenv("RLVR_RESULTS", str(tmp_path / "results"))


HOLDER = textwrap.dedent("""
    import sys
    from rlvr_dynamics import lock
    with lock.held(sys.argv[1], wait=sys.argv[2] == "wait", command="holder " + sys.argv[2]):
        print("held", flush=True)
        sys.stdin.read()                                     # until the test closes it
""")


def env():
    """This environment, with this checkout's package first (a worktree's too)."""
    return dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(REPO / "src"), *filter(None, [os.environ.get("PYTHONPATH")])]))


def hold(profile, how="nowait"):
    """Another process that holds ``profile``'s lock until its stdin is closed."""
    return subprocess.Popen([sys.executable, "-c", HOLDER, profile, how], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())


def test_a_second_process_waits_for_the_first_or_names_it(roots):
    first = hold(PROFILE)
    assert first.stdout.readline() == "held\n"
    with pytest.raises(lock.Busy, match=rf"profile smoke is being built by pid {first.pid} "
                                        r"\(command holder nowait\); not waiting"):
        with lock.held(PROFILE, wait=False):
            pass
    second = hold(PROFILE, "wait")
    assert second.stderr.readline() == (f"profile smoke is being built by pid {first.pid} "
                                        "(command holder nowait), waiting\n")
    first.stdin.close()
    assert first.wait() == 0
    assert second.stdout.readline() == "held\n"              # the first gone, the second holds
    with pytest.raises(lock.Busy, match=rf"pid {second.pid} \(command holder wait\)"):
        with lock.held(PROFILE, wait=False):
            pass
    second.stdin.close()
    assert second.wait() == 0
    with lock.held(PROFILE, wait=False):                      # free again; re-entrant
        with lock.held(PROFILE, wait=False):
            assert lock.holder(PROFILE) == f"pid {os.getpid()} (command {lock._command()})"


def test_the_runner_holds_the_profile_for_the_whole_build(roots, capsys, monkeypatch):
    ran = []

    def execute(profile, nb, parameters):                     # the build, inside the lock
        probe = subprocess.run([sys.executable, "-c", HOLDER, profile, "nowait"],
                               capture_output=True, text=True, env=env())
        ran.append((nb, probe.returncode, probe.stderr))
    monkeypatch.setattr(run, "execute", execute)
    first = hold(PROFILE)
    assert first.stdout.readline() == "held\n"
    argv = ["--profile", PROFILE, "--nb", "theory", "--no-book", "--no-wait"]
    assert run.main(argv) == lock.EXIT_BUSY and ran == []
    assert f"profile smoke is being built by pid {first.pid}" in capsys.readouterr().err
    first.stdin.close()
    assert first.wait() == 0
    assert run.main(argv) == 0
    assert [(nb, rc) for nb, rc, _ in ran] == [("theory", 1)]
    assert f"profile smoke is being built by pid {os.getpid()}" in ran[0][2]
