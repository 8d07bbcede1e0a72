"""rlvr_dynamics: an executable reproduction of "The Debate on RLVR Reasoning Capability
Boundary: Shrinkage, Expansion, or Both? A Two-Stage Dynamic View".

One idea per module, in layers that import only downward (``imports.LAYERS``): ``store``
(results on disk); ``theory`` (Lemma 1, Theorem 1, Proposition 1), ``passk``, ``entropy`` and
``stats`` (metrics), ``tasks`` (verifiable tasks and graders), ``models``, ``sampling`` (the
sampler); ``toy`` (Algorithm 1), ``pretrain`` (the base model), ``registry`` (models and tasks
by name), ``boundary``, ``verdicts``; ``evaluation`` and ``training`` (GRPO/GSPO and their -N
variants on TRL); ``chapters`` (one module per chapter: parameters, computations, readings,
figures); ``profiles`` and ``run`` (papermill and the book).
"""
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
"""The repository root (the package is installed in editable mode from ``src/``)."""

__version__ = "0.1.0"
