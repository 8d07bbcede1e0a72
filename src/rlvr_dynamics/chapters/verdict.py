"""The closing chapter (``notebooks/verdict.md``): every claim of the paper, its numbers and
ours, with the verdict that a chapter of this build recorded (``rlvr_dynamics.verdicts``)."""
from __future__ import annotations

from rlvr_dynamics.chapters import ChapterParams


class Params(ChapterParams):
    """The verdict chapter has no parameters of its own (it reads the recorded verdicts)."""
