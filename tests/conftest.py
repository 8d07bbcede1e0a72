import os
import subprocess
import sys
from pathlib import Path

import pytest

from rlvr_dynamics import REPO


@pytest.fixture(scope="session")
def smoke_results(tmp_path_factory) -> Path:
    """A fresh results folder for the smoke build: nothing cached by an earlier run is reused."""
    return tmp_path_factory.mktemp("results")


@pytest.fixture(scope="session")
def smoke_book(smoke_results) -> Path:
    """Execute every notebook under the smoke profile and build the book, once per session."""
    env = dict(os.environ, RLVR_RESULTS=str(smoke_results))
    done = subprocess.run([sys.executable, "-m", "rlvr_dynamics.run", "--profile", "smoke"],
                          env=env, cwd=REPO, capture_output=True, text=True)
    if done.returncode:  # the build's own last words first, where a long log would bury them
        log = [line for line in (done.stdout + done.stderr).splitlines()
               if "Executing:" not in line]
        pytest.fail(f"the smoke build exited {done.returncode}; its log's last lines:\n"
                    + "\n".join(log[-60:]), pytrace=False)
    return REPO / "build" / "smoke" / "book"


@pytest.fixture(scope="module")
def one_thread():
    """Tiny tensors: on a shared 2-core machine extra threads only add contention (~40x)."""
    import torch
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
