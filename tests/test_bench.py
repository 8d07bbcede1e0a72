"""Every benchmark in ``bench/`` runs end to end at its smallest sizes (``--smoke``) and prints
its ratios, so that a refactor that breaks one fails here. The ratios are not checked against
targets: at these sizes they mean nothing."""
import math
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from rlvr_dynamics import REPO

BENCHES = sorted((REPO / "bench").glob("bench_*.py"))
RATIO = re.compile(r"\bratios?\b[^\d\n]*?(\d+(?:\.\d+)?|\bnan\b|\binf\b)")  # its first number


@pytest.fixture(scope="module")
def smoke_runs(request):
    """The ``--smoke`` runs of the benches this session tests, as many at a time as there are
    cores (each is single-threaded; loading SmolLM2 takes most of the time): bench path ->
    future of its finished process."""
    chosen = [item.callspec.params["bench"] for item in request.session.items
              if getattr(item, "originalname", "") == "test_bench_runs_and_prints_its_ratios"]
    pool = ThreadPoolExecutor(os.cpu_count())
    yield {b: pool.submit(subprocess.run, [sys.executable, str(b), "--smoke"], cwd=REPO,
                          capture_output=True, text=True, timeout=900) for b in chosen}
    pool.shutdown(cancel_futures=True)


def test_the_benches_are_found():
    assert {"bench_training.py", "bench_toy.py"} <= {b.name for b in BENCHES}


@pytest.mark.slow
@pytest.mark.parametrize("bench", BENCHES, ids=lambda b: b.stem)
def test_bench_runs_and_prints_its_ratios(smoke_runs, bench):
    proc = smoke_runs[bench].result()
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    ratios = RATIO.findall(proc.stdout)
    assert ratios, f"no ratio line in:\n{proc.stdout}"
    assert all(math.isfinite(float(r)) for r in ratios), ratios


def test_the_ratio_pattern_reads_the_benches_lines():
    lines = {"speed-up (time ratio, naive / product form): 523x": ["523"],
             "seconds per update: ... ratio 1.03 (target <= 1.1: met)": ["1.03"],
             "throughput ratios: backend / batched generate 1.52x, ...": ["1.52"],
             "ratio, the project's sampler / TRL's generate: nan": ["nan"],
             "case    vectorised  literal loop   ratio\n": [],
             "{'completions/clipped_ratio': '0.5', 'clip_ratio/low_mean': '0'}": []}
    for line, found in lines.items():
        assert RATIO.findall(line) == found, line
