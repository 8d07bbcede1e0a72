"""The toy's prediction for each regime, registered before any of its runs starts.

A regime's base is measured exactly, with the instrument that probes its runs
(``rl.probe.measure`` on the same problems), before training; the toy setting read from
it (``toy_mapping.toy_inputs``: pi0 over the three first characters, the rewards of the three
paths, the runs' group size G) is run through the toy under each optimizer and update
(``toy_mapping.toy_predictions``) and through the deterministic laws (``toy_mapping.toy_laws``),
and the ladder's toy rungs (``toy_rungs``: the slopes of the two mechanisms, R0's slope, R1's dip,
crossover and slopes on the runs' own schedule) and the whole record -- the measurement, the
toy's inputs, its predictions, the laws', the ladder's and the UTC time -- is written to the
store. Once written it is read back,
never recomputed for the same base and settings by the same code; the runs' first probes must
then equal the registered measurement (``starts_from``), and every run must have recorded, as
it began, the registration's content hash and a later time (``rl.registration.registered_before``; a run
without that record is shown, not judged): the page says both.
"""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from rlvr_dynamics import registry
from rlvr_dynamics.regimes import toy_rungs
from rlvr_dynamics.regimes.probes import hard_problems
from rlvr_dynamics.regimes.toy_mapping import (toy_inputs, toy_laws,
                                                        toy_predictions, toy_settings,
                                                        toy_update)
from rlvr_dynamics.store import Entry, config_key, read_json, results_dir, write_json
from rlvr_dynamics.rl.config import TrainConfig
from rlvr_dynamics.rl.probe import SETTINGS, measure, probed
from rlvr_dynamics.rl.registration import registered_before

RECORD = "prediction.json"


def base_measurement(cfg: TrainConfig, profile: str) -> dict[str, Any]:
    """The base of ``cfg`` measured as its runs' probes measure it (``probe.measure``)."""
    model, tokenizer = registry.load_model(cfg.policy, profile)
    task, author = cfg.model.task, cfg.model.author
    return measure(model, tokenizer, probed(task, author, cfg.probe_problems, cfg.probe_hard),
                   task, cfg.max_completion_length,
                   settings=tuple(SETTINGS) if cfg.probe_paper else ("full",))


def register(cfg: TrainConfig, share: float, D: Any, steps: int, seeds: int, profile: str,
             labels: Sequence[str] = ("GRPO", "GRPO-N")) -> dict[str, Any]:
    """The registered prediction for the runs of ``cfg``'s base and settings (any seed: the
    toy's inputs are the base's; ``share``: the training mix's share beyond the direct path;
    ``D``: the toy chapter's parameters, ``steps`` x ``seeds`` toy runs of the updates of the
    algorithms ``labels``): read back where it exists, else measured, predicted and written
    now."""
    updates = sorted({toy_update(label)[0] for label in labels})
    what = {"policy": registry.spec_text(cfg.policy), "G": cfg.num_generations, "share": share,
            "schedule": [cfg.generation_batch, cfg.update_batch, cfg.epsilon, cfg.steps],
            "probe": [cfg.probe_problems, cfg.probe_hard, cfg.max_completion_length,
                      cfg.probe_paper],
            "toy": {**{k: dict(v) for k, v in toy_settings(D).items()}, "tau": D.tau},
            "steps": steps, "seeds": seeds, "updates": updates}
    entry = Entry(results_dir(profile, "regimes") / "predictions" / config_key(what),
                  code=__name__, tasks=cfg.tasks)
    if entry.done:
        return read_json(entry.path / RECORD)
    measurement = base_measurement(cfg, profile)
    base = pd.DataFrame(measurement["full"]["test"])
    hard = hard_problems(cfg.model.task, cfg.model.author, cfg.probe_problems,
                         cfg.probe_hard)["test"]
    pi0, r = toy_inputs(base, hard, cfg.probe_problems, share)
    record = {"registered": datetime.now(timezone.utc).isoformat(timespec="seconds"), **what,
              "inputs": {"pi0": pi0, "r": r, "G": cfg.num_generations},
              "predictions": toy_predictions(pi0, r, cfg.num_generations, D, steps, seeds,
                                             labels),
              "laws": toy_laws(pi0, r, cfg.num_generations, D, labels),
              "ladder": ladder(pi0, r, share, cfg, D, seeds, labels),
              "measurement": measurement}
    write_json(entry.begin(fresh=True) / RECORD, record)
    entry.finish({"registered": record["registered"]})
    return read_json(entry.path / RECORD)  # as stored: what its content hash is taken of


def ladder(pi0: Sequence[float], r: Sequence[float], share: float, cfg: TrainConfig, D: Any,
          seeds: int, labels: Sequence[str]) -> dict[str, Any]:
    """The ladder's registered predictions (``toy_rungs``): the two mechanisms' slopes, R0's
    slope per update and R1's prediction on ``cfg``'s schedule over its steps."""
    updates = dict(toy_update(label) for label in labels)
    return {"window": toy_rungs.WINDOW,
            "slopes": {"tabular": toy_rungs.TABULAR, "proportional": toy_rungs.PROPORTIONAL},
            "R0": toy_rungs.r0(pi0, r, cfg.num_generations, D, seeds,
                            {u: kw for u, kw in updates.items() if "reinforce" not in kw}),
            "R1": toy_rungs.r1(pi0, r, share, cfg.num_generations,
                            cfg.generation_batch // cfg.num_generations, cfg.updates_per_step,
                            cfg.epsilon, D, cfg.steps, seeds, list(updates))}


def starts_from(record: dict[str, Any], first_probe: dict[str, Any], tol: float = 1e-4) -> bool:
    """Whether a run's first probe (``{setting: {split: {key: values}}}``) measured the base
    that ``record`` registered: every value within ``tol``."""
    want = record["measurement"]
    return all(np.allclose(first_probe[s][split][k], v, atol=tol, equal_nan=True)
               for s, splits in want.items() for split, keys in splits.items()
               for k, v in keys.items())


def checks(registered: dict[str, dict[str, Any]], dynamics: dict[tuple, list[dict]],
           folders: dict[str, list[Path]]) -> dict[str, dict[str, bool]]:
    """Per regime: whether its prediction was registered before every one of its runs began
    (``registered_before``; ``folders``: regime -> its run folders) and whether every run's
    first probe measured the registered base (``starts_from``; ``dynamics``: (regime,
    algorithm, seed) -> records)."""
    out = {}
    for name, record in registered.items():
        firsts = [next(r["probe"] for r in run if "probe" in r)
                  for key, run in dynamics.items() if key[0] == name]
        out[name] = {"registered before every run": registered_before(record, folders[name]),
                     "every run starts from the registered base":
                         all(starts_from(record, f) for f in firsts)}
    return out
