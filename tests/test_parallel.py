"""Runs side by side (``parallel.pool_map``, ``rl.runs.obtain_all``) are the runs one after
the other: same final weights bit for bit, same logged dynamics, results in the order asked."""
from __future__ import annotations

import pytest
import torch
from safetensors.torch import load_file

from rlvr_dynamics.parallel import pool_map
from test_training import config, tiny  # noqa: F401 (fixture)

torch.set_num_threads(1)


def test_pool_map_keeps_the_order_and_raises_errors():
    assert pool_map(abs, [-3, 2, -1, 0], workers=2) == [3, 2, 1, 0]
    assert pool_map(abs, [], workers=2) == []
    with pytest.raises(TypeError):
        pool_map(abs, [-1, "x"], workers=2)
    with pytest.raises(ValueError, match="workers must be >= 1"):
        pool_map(abs, [1], workers=0)


def _bar_is_silent(_) -> bool:
    from rlvr_dynamics.progress import bar
    return bool(bar(range(1), True).disable)


def test_workers_draw_no_progress_bars_of_their_own():
    """The parent shows one bar over the jobs; a bar a job asks for stays silent in a worker
    (a chapter's output holds no bar per generation batch) and shows in this process."""
    assert pool_map(_bar_is_silent, [0, 1], workers=2) == [True, True]
    assert not _bar_is_silent(0)


def test_runs_side_by_side_equal_runs_one_after_the_other(tiny, tmp_path,  # noqa: F811
                                                         monkeypatch):
    import rlvr_dynamics.rl.runs as run

    cfgs = [config(tiny, "grpo", seed=1), config(tiny, "gspo_n", seed=2)]
    folders = {}
    for workers in (2, 1):
        monkeypatch.setenv("RLVR_RESULTS", str(tmp_path / f"workers{workers}"))
        folders[workers] = run.obtain_all(cfgs, "smoke", inline=True, workers=workers)
        assert [f.name for f in folders[workers]] == [run.run_dir(c, "smoke").name for c in cfgs]
    for side, serial in zip(folders[2], folders[1]):
        a, b = (load_file(f / "model" / "model.safetensors") for f in (side, serial))
        assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
        assert run.load_dynamics(side) == run.load_dynamics(serial)
    # found again, not retrained; and without inline, a missing run is an error that says so
    monkeypatch.setattr(run, "train", lambda *a, **k: pytest.fail("retrained"))
    assert run.obtain_all(cfgs, "smoke", inline=True) == folders[1]
    with pytest.raises(FileNotFoundError, match="has not been trained"):
        run.obtain_all([config(tiny, "grpo", seed=5)], "smoke", inline=False)
