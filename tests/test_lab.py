"""``make lab``: JupyterLab, started as the Makefile starts it, serves the project's settings
(``lab/overrides.json``), in which jupytext's notebook view is the default viewer of the
chapters' MyST sources, so that a double-click opens a chapter as a runnable notebook."""
import json
import os
import shlex
import socket
import subprocess
import time
import urllib.error
import urllib.request

import jupytext
import pytest

from rlvr_dynamics import REPO

JUPYTEXT = "Jupytext Notebook"
SETTINGS = "/lab/api/settings/@jupyterlab/docmanager-extension:plugin"


def lab_command() -> list[str]:
    """The command ``make lab`` runs (read with ``make -n``; ``-o install``: no install)."""
    out = subprocess.run(["make", "-n", "-o", "install", "lab"], cwd=REPO, check=True,
                         capture_output=True, text=True).stdout
    [line] = [line for line in out.splitlines() if "jupyter lab" in line]
    return shlex.split(line)


def served_default_viewers(command: list[str], home) -> dict[str, str]:
    """``defaultViewers`` as the server started by ``command`` (on a free localhost port, no
    browser, no token; user settings and runtime files under ``home``, not the user's) serves
    it: the user's value, or else the schema's default with the overrides applied."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(home / "config"),
               JUPYTER_RUNTIME_DIR=str(home / "runtime"))
    server = subprocess.Popen(
        command + [f"--port={port}", "--ServerApp.port_retries=0", "--ServerApp.ip=127.0.0.1",
                   "--no-browser", "--ServerApp.token=", "--allow-root"],
        cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 120
        while True:
            assert server.poll() is None, "the server stopped"
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}{SETTINGS}") as r:
                    plugin = json.load(r)
                break
            except (urllib.error.URLError, ConnectionError):
                assert time.time() < deadline, "no answer from the server within 2 minutes"
                time.sleep(0.5)
    finally:
        server.terminate()
        server.wait(timeout=60)
    default = plugin["schema"]["properties"]["defaultViewers"]["default"]
    return plugin["settings"].get("defaultViewers", default)


@pytest.mark.slow
def test_make_lab_opens_the_chapters_as_notebooks(tmp_path):
    command = lab_command()
    assert served_default_viewers(command, tmp_path / "lab") == {"markdown": JUPYTEXT,
                                                                 "myst": JUPYTEXT}
    plain = [arg for arg in command if not arg.startswith("--LabApp.app_settings_dir=")]
    assert plain != command
    assert served_default_viewers(plain, tmp_path / "plain").get("markdown") != JUPYTEXT


def test_each_chapter_opens_on_its_parameters():
    """What ``make lab`` says: a chapter's first cell, tagged ``parameters``, sets its profile."""
    for path in sorted((REPO / "notebooks").glob("*.md")):
        first = next(c for c in jupytext.read(path).cells if c.cell_type == "code")
        assert "parameters" in first.metadata.get("tags", []), path.name
        assert "profile = " in first.source, path.name
