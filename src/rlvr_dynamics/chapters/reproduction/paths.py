"""The two stages inside the language model (Section 3.2's view of the toy, asked of the sums
model): the share of the rollouts on each path over training, from the trace statistics the
runs logged, the toy's mean policy beside them, and the step at which the stepwise path takes
over."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from rlvr_dynamics import toy
from rlvr_dynamics.rl.algorithms import ALGORITHMS


def toy_main(D: Any, steps: int, seeds: int) -> toy.Summary:
    """The toy chapter's main setting (``D``: its parameters), ``seeds`` runs of ``steps``."""
    return toy.summarise(z0=toy.logits(D.pi0), r=D.rewards, G=D.G, lr=D.lr, steps=steps,
                         seeds=seeds, seed=0, progress=False)


def windowed(runs: list[list[dict]], key: str, window: int) -> tuple[np.ndarray, np.ndarray]:
    """(window centres, values[seed, window]): ``key`` averaged over the records of each run in
    windows of ``window`` steps (NaN where a run logged none). Trace statistics are logged once
    per generation batch, the hard-problem ones only when the batch held a hard problem."""
    last = max(r["step"] for run in runs for r in run)
    edges = np.arange(0, last + window, window)
    values = np.full((len(runs), len(edges) - 1), np.nan)
    for i, run in enumerate(runs):
        kept = [r for r in run if r.get(key) is not None]  # None: nothing measured
        steps = np.array([r["step"] for r in kept])
        v = np.array([r[key] for r in kept], dtype=float)
        for j in range(len(edges) - 1):
            inside = (steps > edges[j]) & (steps <= edges[j + 1])
            if inside.any():
                values[i, j] = v[inside].mean()
    return (edges[:-1] + edges[1:]) / 2, values


def takeover_step(run: list[dict], threshold: float = 0.5) -> float:
    """The first training step at which the stepwise path carries at least ``threshold`` of
    the rollouts (``trace_stepwise_right + trace_stepwise_wrong``); inf if it never does."""
    for r in run:
        if r.get("trace_stepwise_right") is not None and (
                r["trace_stepwise_right"] + r["trace_stepwise_wrong"] >= threshold):
            return float(r["step"])
    return float("inf")


def takeover_steps(T: Any, dynamics: dict[str, list[list[dict]]],
                   knob_dynamics: dict[str, list[list[dict]]], names: Sequence[str]
                   ) -> dict[tuple[str, int], list[float]]:
    """(algorithm label, G) -> the step at which each seed's stepwise path first carries half
    of the rollouts (inf: never), for the chapter's own G (``T``: the training chapter's
    parameters) and the knob's (``knob_runs``' labels ``"<label>, G = <G>"``)."""
    out = {}
    for a in names:
        label = ALGORITHMS[a].label
        if label in dynamics:
            out[label, T.num_generations] = [takeover_step(r) for r in dynamics[label]]
        for key, runs in knob_dynamics.items():
            name, _, g = key.partition(", G = ")
            if name == label:
                out[label, int(g)] = [takeover_step(r) for r in runs]
    return out
