"""The runs of `map-ladder-reconcile.md`, section 4: one cell of the 2x2 (code x base bytes).

Two commands, each run with one tree's code on ``PYTHONPATH``:

``train PROFILE BASE OUT [SEEDS]`` (the cell's code: 272038a's tree with ``cpu-map``, 9417b20's
with ``cpu-ladder``; ``RLVR_RESULTS`` a store of the cell's own, ``RLVR_REUSE_STALE=1``): the
base folder ``BASE`` ("-": the tree makes its own) (a released ``base_models/47991bec94ba``, its records gzipped) is planted
as that tree's base, then the arm "three paths, prior 0.02"'s GRPO runs exactly as that tree's
regimes chapter builds them under ``PROFILE``, capped at 120 steps, are trained there (the refit
made by that tree's code, on this machine); ``OUT`` gets the run folders and the planted and
refitted weights' sha256.

``read OUT...`` (this checkout's code): every cell's runs read by the book's own reader
(``regimes.stages.stages`` on the ladder's rare-only problems): per seed the crossover and
P(stepwise) relative to its start at the step the other seeds find lowest, and the cell's
reading under the rules of section 4 (cpu-map-like, ladder-like or neither).
"""
from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import sys
from pathlib import Path

ARM = os.environ.get("RECONCILE_ARM", "three paths, prior 0.02")  # another arm: a smoke check
KEY, STEPS = "47991bec94ba", 120


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def plant(base: Path, profile: str) -> Path:
    """``base`` (gzipped records, as released) unpacked into the store as ``profile``'s base."""
    from rlvr_dynamics.store import results_dir
    target = results_dir(profile, "base_models") / KEY
    if not (target / "done.json").is_file():
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        for f in base.iterdir():
            if f.suffix == ".gz":
                (target / f.stem).write_bytes(gzip.decompress(f.read_bytes()))
            else:
                shutil.copy2(f, target / f.name)
    return target


def train(profile: str, base: str, out: str, seeds: str = "0,1,2") -> None:
    """The cell's runs (``base`` "-": the tree's own base, made here)."""
    from rlvr_dynamics.chapters import params_class
    from rlvr_dynamics.store import results_dir
    from rlvr_dynamics.profiles import plan
    try:
        from rlvr_dynamics.rl.runs import obtain_all
    except ImportError:  # 272038a's tree
        from rlvr_dynamics.training.run import obtain_all
    P = params_class("regimes").parse(plan(profile, ["regimes"])["regimes"])
    wanted = {int(s) for s in seeds.split(",")}
    runs = {k: cfg.replace(steps=STEPS) for k, cfg in P.runs().items()
            if k[0] == ARM and k[1] == "grpo" and k[2] in wanted}
    models = {cfg.model.key for cfg in runs.values()}
    if base != "-" and models != {KEY}:
        raise SystemExit(f"{profile}: the arm's base key is {models}, not {KEY}")
    planted = (plant(Path(base), profile) if base != "-" else
               results_dir(profile, "base_models") / models.pop())
    folders = obtain_all(list(runs.values()), profile, inline=True, workers=2)
    refits = sorted(p for p in planted.parent.glob(f"{planted.name}-prior-*") if (p / "done.json").is_file())
    Path(out).write_text(json.dumps({
        "profile": profile, "code": str(Path(sys.modules["rlvr_dynamics"].__file__).parent),
        "base": base, "base sha256": sha(planted / "model.safetensors"),
        "refits": {p.name: sha(p / "model.safetensors") for p in refits},
        "runs": {str(k[2]): str(f) for k, f in zip(runs, folders)}}, indent=1))


def read(*outs: str) -> None:
    """Each cell read by this checkout's reader, and judged by section 4's rules."""
    from rlvr_dynamics.profiles import params_class, plan
    from rlvr_dynamics.regimes.probes import probes, with_passk
    from rlvr_dynamics.regimes.stages import mid_curve, stages
    from rlvr_dynamics.rl.runs import load_dynamics
    P = params_class("ladder").parse(plan("cpu-ladder", ["ladder"])["ladder"])
    hard = P.hard()
    for out in outs:
        cell = json.loads(Path(out).read_text())
        dynamics = {(ARM, "grpo", int(s)): load_dynamics(Path(f)) for s, f in cell["runs"].items()}
        long = with_passk(probes(dynamics), [1])
        table = stages(long, hard, mid_curve(long, hard))
        crossed = [c for c in table["crossover"] if c <= 60]              # inf: never crossed
        never = [c for c in table["crossover"] if c == float("inf")]
        change = -float(table["fall"].mean())
        like = ("cpu-map-like" if len(crossed) >= 2 and change >= 1.0 else
                "ladder-like" if len(never) >= 2 and change <= 0.7 else "neither")
        print(f"{out}: crossovers {list(table['crossover'])}, change of P(stepwise) per seed "
              f"{[round(-f, 3) for f in table['fall']]} (mean {change:+.0%}): {like}")
        print(f"  base {cell['base sha256'][:12]}, refits "
              f"{ {k: v[:12] for k, v in cell['refits'].items()} }")


if __name__ == "__main__":
    {"train": train, "read": read}[sys.argv[1]](*sys.argv[2:])
