"""rlvr_dynamics: an executable reproduction of "The Debate on RLVR Reasoning Capability
Boundary: Shrinkage, Expansion, or Both? A Two-Stage Dynamic View".

One idea per module: ``theory`` (Lemma 1, Theorem 1, Proposition 1), ``toy`` (Algorithm 1),
``passk`` and ``entropy`` (metrics), ``tasks`` (verifiable tasks and graders), ``sampling``
(generation backends), ``training`` (GRPO/GSPO and their -N variants on TRL), ``params`` and
``profiles`` (notebook parameters), ``store`` (results on disk), ``run`` (papermill + book).
"""
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
"""The repository root (the package is installed in editable mode from ``src/``)."""

__version__ = "0.1.0"
