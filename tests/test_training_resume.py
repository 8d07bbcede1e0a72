"""A run killed mid-way (SIGKILL, right after a checkpoint) and restarted ends exactly where an
uninterrupted run with the same seed ends: same final weights, same logged dynamics. The
restart falls in the second epoch of the training set, where the data order must be the same
as in an uninterrupted run too."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
import torch
from safetensors.torch import load_file

from rlvr_dynamics import REPO

torch.set_num_threads(1)

RUN = """
import sys, torch
torch.set_num_threads(1)
sys.path.insert(0, {tests!r})
from test_training_resume import resume_config
from rlvr_dynamics.rl.runs import train
train(resume_config({model!r}), "smoke")
"""


def resume_config(model: str):
    from test_training import Parity, config

    # 8 training prompts, 4 per step: 2 steps per epoch, 7 steps, checkpoints after steps 3, 6
    return config(model, "gspo_n", task=Parity(train=8),
                  generation_batch=16, update_batch=8, micro_batch=4, steps=7,
                  checkpoint_every=3, beta=1e-3, entropy_coef=1e-4)


def tiny_model(tmp_path):
    """A tiny character-level model saved in ``tmp_path/tiny``."""
    from rlvr_dynamics.models import char_tokenizer, tiny_qwen2
    from rlvr_dynamics.tasks.sums import ALPHABET
    model = tmp_path / "tiny"
    tok = char_tokenizer(ALPHABET)
    tiny_qwen2(tok, hidden=32, layers=2, seed=0).save_pretrained(model)
    tok.save_pretrained(model)
    return model


@pytest.mark.slow
def test_killed_run_resumes_to_the_same_end(tmp_path, monkeypatch):
    from rlvr_dynamics.rl.runs import load_dynamics, run_dir, train

    model = tiny_model(tmp_path)
    cfg = resume_config(str(model))

    monkeypatch.setenv("RLVR_RESULTS", str(tmp_path / "uninterrupted"))
    whole = train(cfg, "smoke")

    monkeypatch.setenv("RLVR_RESULTS", str(tmp_path / "killed"))
    out = run_dir(cfg, "smoke")
    checkpoint = out / "checkpoints" / "checkpoint-6" / "trainer_state.json"  # after step 3
    env = dict(os.environ, OMP_NUM_THREADS="1")
    child = subprocess.Popen(
        [sys.executable, "-c", RUN.format(tests=str(REPO / "tests"), model=str(model))],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 300
    while not checkpoint.is_file():
        assert child.poll() is None, "the run ended before its first checkpoint"
        assert time.time() < deadline, "no checkpoint within 5 minutes"
        time.sleep(0.01)
    child.send_signal(signal.SIGKILL)
    assert child.wait() == -signal.SIGKILL
    assert not (out / "done.json").exists()

    resumed = train(cfg, "smoke")
    assert resumed == out
    assert load_dynamics(resumed) == load_dynamics(whole)
    a, b = load_file(whole / "model" / "model.safetensors"), load_file(out / "model" / "model.safetensors")
    assert a.keys() == b.keys()
    for name in a:
        assert torch.equal(a[name], b[name]), name
    assert len(load_dynamics(whole)) == cfg.steps + 1
    from rlvr_dynamics.rl.registration import started
    from rlvr_dynamics.store import checkout_commit
    assert started(out)["commit"] == checkout_commit()   # the commit it began from, kept


def test_a_part_begins_no_run_after_its_time(tmp_path, monkeypatch):
    """Past ``RLVR_STOP_AFTER`` a run not yet trained is refused before anything loads, naming
    the run; a finished run is still found; before that time the run trains."""
    from rlvr_dynamics.store import PartOver
    from rlvr_dynamics.rl.runs import train

    cfg = resume_config(str(tiny_model(tmp_path)))
    monkeypatch.setenv("RLVR_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("RLVR_STOP_AFTER", "2026-01-01T00:00:00+00:00")
    with pytest.raises(PartOver, match="seed 0 .* not begun: this part begins no run after "
                                       "2026-01-01"):
        train(cfg, "smoke")
    assert not any((tmp_path / "results").rglob("*.json"))
    monkeypatch.setenv("RLVR_STOP_AFTER", "2999-01-01T00:00:00+00:00")
    out = train(cfg, "smoke")
    monkeypatch.setenv("RLVR_STOP_AFTER", "2026-01-01T00:00:00+00:00")
    assert train(cfg, "smoke") == out                       # finished: found, not refused
