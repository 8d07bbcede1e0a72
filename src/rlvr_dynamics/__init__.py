"""rlvr_dynamics: an executable reproduction of "The Debate on RLVR Reasoning Capability
Boundary: Shrinkage, Expansion, or Both? A Two-Stage Dynamic View".

One idea per module, in layers that import only downward (``imports.LAYERS``): ``store``
(results on disk), ``fields`` (typed settings, one range each), ``parallel`` (work side by side);
``theory`` (Lemma 1, Theorem 1, Proposition 1), ``passk``, ``entropy`` and ``stats`` (metrics),
``tasks`` (verifiable tasks and graders), ``models``, ``sampling`` (the sampler),
``paper_tables`` (the paper's own numbers); ``toy`` (Algorithm 1), ``pretrain`` (the base
model), ``path_prior`` (the base's prior on the rare path as a dial), ``registry`` (models and
tasks by name), ``exact`` (the completion tree: exact Pass@k), ``verdicts``; ``evaluation``,
``training`` (GRPO/GSPO and their -N variants on TRL) and ``boundary``; ``chapters`` (one package
per chapter: parameters and computations, then figures, tables and sentences above them);
``profiles`` and ``run`` (papermill, the book, the command lines). ``docs/CONTRIBUTING.md`` has
the map and what each kind of edit recomputes.
"""
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
"""The repository root (the package is installed in editable mode from ``src/``)."""

__version__ = "0.1.0"
