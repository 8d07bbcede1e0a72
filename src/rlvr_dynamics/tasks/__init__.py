"""Verifiable tasks: prompts, gold answers and a 0/1 verifier (``base.Task``).

``math`` (MATH, MATH-500, AIME, AMC: boxed answers graded by math-verify), ``choice`` (ARC-c,
MMLU-Pro: a letter), and the synthetic tasks that the CPU-scale chapters train on.
"""
