"""The progress of a chapter's long work reaches the terminal of the runner that executes it
(``progress.forward``, ``progress.relayed``, ``execution.run_papermill``): its bars' counts and
estimates as plain lines, a few per bar, while the executed notebook gets what it got before."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import papermill
from tqdm import std

from rlvr_dynamics import REPO, progress

CELL = textwrap.dedent("""\
    print([name for name in dir() if not name.startswith("_")])
    import time
    from tqdm.auto import tqdm
    import rlvr_dynamics.progress as progress
    progress.EVERY = 0.0  # a line per step, for the test
    for _ in tqdm(range(4), desc="runs", mininterval=0):  # as parallel.pool_map draws it
        time.sleep(0.05)
    for _ in progress.bar(range(3), desc="chunks", mininterval=0):
        time.sleep(0.05)
    print("done", x)
""")


def notebook(path: Path) -> Path:
    """A notebook whose cell draws two bars, as a chapter's long work does."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 0", metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell(CELL)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, path)
    return path


IPROGRESS = re.compile(r".*TqdmWarning: IProgress not found.*\n.*\n")
"""The warning ``tqdm.auto`` gives at its first import in a kernel without ipywidgets: in the
first cell that imports it, or at the kernel's start where ``progress.forward`` imports it."""


def streams(path: Path) -> dict[str, str]:
    """The executed notebook's stream outputs, joined per stream (the kernel batches them as it
    likes), ``IPROGRESS`` left out, every number written as ``#`` (timings differ from run to
    run)."""
    out: dict[str, str] = {}
    for cell in nbformat.read(path, as_version=4).cells:
        for o in cell.get("outputs", []):
            assert o["output_type"] == "stream", o
            out[o["name"]] = out.get(o["name"], "") + o["text"]
    return {name: re.sub(r"\s*[\d.]+", "#", IPROGRESS.sub("", text))
            for name, text in out.items()}


def test_bars_of_an_executed_notebook_reach_the_runners_terminal_not_the_notebook(tmp_path):
    source = notebook(tmp_path / "tiny.ipynb")
    runner = textwrap.dedent(f"""\
        import logging
        from pathlib import Path
        from rlvr_dynamics.execution import run_papermill
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
        run_papermill(Path({str(source)!r}), Path({str(tmp_path / 'relayed.ipynb')!r}),
                      {{"x": 2}}, Path({str(tmp_path)!r}), "tiny")
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(REPO / "src"), *filter(None, [os.environ.get("PYTHONPATH")])])}
    env.pop(progress.CHANNEL, None)
    done = subprocess.run([sys.executable, "-c", runner], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    terminal = done.stderr.replace("\r", "\n")
    # every step of each bar, as one plain line with its count and estimate, named by notebook
    assert [int(n) for n in re.findall(r"rlvr_dynamics\.execution: tiny \| runs: (\d)/4 "
                                       r"\[\d\d:\d\d<\d\d:\d\d, ", terminal)] == [1, 2, 3, 4]
    assert [int(n) for n in re.findall(r"tiny \| chunks: (\d)/3 \[", terminal)] == [1, 2, 3]
    assert "Executing:" in terminal  # papermill's cell counter stays
    assert not list(tmp_path.glob("*.progress"))  # the channel is gone
    # the executed notebook holds what plain papermill leaves: no line more, no name bound
    papermill.execute_notebook(source, tmp_path / "plain.ipynb", parameters={"x": 2},
                               kernel_name="python3", cwd=str(tmp_path), progress_bar=False)
    relayed, plain = streams(tmp_path / "relayed.ipynb"), streams(tmp_path / "plain.ipynb")
    assert relayed == plain
    assert "done#" in relayed["stdout"] and "runs:#%|" in relayed["stderr"]
    assert "runs:#/# [" not in relayed["stderr"]  # the plain lines stay out


def test_a_bar_sends_a_few_lines_and_only_through_an_open_channel(tmp_path, monkeypatch):
    """A line when the bar moved and ``EVERY`` seconds have passed, its last on closing; none
    from a bar shorter than ``EVERY``, a silenced one, or without a channel."""
    progress.forward()
    progress.forward()  # once is enough: a second call wraps nothing twice
    channel = tmp_path / "channel"
    monkeypatch.setenv(progress.CHANNEL, str(channel))

    def sent() -> list[str]:
        lines = channel.read_text().splitlines() if channel.exists() else []
        channel.unlink(missing_ok=True)
        return lines

    monkeypatch.setattr(progress, "EVERY", 3600.0)
    for _ in std.tqdm(range(50), desc="short", mininterval=0):
        pass
    assert sent() == []
    monkeypatch.setattr(progress, "EVERY", 0.0)
    bar = std.tqdm(total=5, desc="runs", mininterval=0)
    bar.update(2)
    bar.update(0)  # did not move: no line
    bar.update(3)
    bar.close()  # nothing new since the last line
    assert [line.split(" [")[0] for line in sent()] == ["runs: 2/5", "runs: 5/5"]
    bar = std.tqdm(total=3, mininterval=3600)  # no desc; tqdm's own redraws are beside it
    bar.update(1)
    monkeypatch.setattr(progress, "EVERY", 3600.0)
    bar.update(1)  # moved, not due
    bar.close()  # due on closing: it sent a line before
    assert [line.split(" [")[0] for line in sent()] == ["1/3", "2/3"]
    monkeypatch.setattr(progress, "EVERY", 0.0)
    list(std.tqdm(range(3), desc="silenced", disable=True))  # as TQDM_DISABLE makes a worker's
    monkeypatch.delenv(progress.CHANNEL)
    list(progress.bar(range(3), desc="nowhere", mininterval=0))
    assert sent() == []


def test_the_relay_shows_each_line_as_it_comes_and_cleans_up(tmp_path, monkeypatch):
    """Lines another process appends (a partial one completed later) are shown in order, the
    last ones on leaving; the variable is restored and the file removed."""
    monkeypatch.setenv(progress.CHANNEL, "before")
    channel, shown = tmp_path / "run" / "tiny.progress", []
    writer = ("import os, sys, time\n"
              "with open(os.environ[sys.argv[1]], 'a') as f:\n"
              "    f.write('runs: 1/2\\nru'); f.flush(); time.sleep(0.3)\n"
              "    f.write('ns: 2/2\\n')\n")
    with progress.relayed(channel, shown.append, poll=0.05):
        assert os.environ[progress.CHANNEL] == str(channel) and channel.read_text() == ""
        subprocess.run([sys.executable, "-c", writer, progress.CHANNEL], check=True)
    assert shown == ["runs: 1/2", "runs: 2/2"]
    assert os.environ[progress.CHANNEL] == "before" and not channel.exists()
