"""The paper's own numbers from Tables 1-4, quoted as the reference beside ours.

Pass@k in percent at k = 1, 2, 4, ..., 256 (Section 4.2, Appendix C.3); answer- and
token-level entropies in nats (Appendix C.5, Table 4; "-" in the paper is None here). The
numbers are transcribed from the paper; ``tests/test_evaluation.py`` checks the transcription
against the paper's text where it is available.
"""
from __future__ import annotations

import pandas as pd

KS = (1, 2, 4, 8, 16, 32, 64, 128, 256)

_TABLE1 = """
AMC 2023 | Base Model | 40.4 55.6 69.1 79.4 85.9 89.5 92.1 94.6 97.5
AMC 2023 | GRPO | 60.4 69.9 77.4 82.9 86.7 89.4 91.7 94.7 97.5
AMC 2023 | GRPO-N | 59.2 68.7 76.3 82.7 87.6 92.3 96.3 99.1 100.0
AMC 2023 | GSPO | 61.1 70.5 78.0 83.9 88.1 91.6 94.4 96.2 97.5
AMC 2023 | GSPO-N | 61.5 71.2 78.5 84.1 88.4 91.8 94.8 97.4 100.0
AIME 2024 | Base Model | 13.6 21.8 30.5 37.5 43.5 49.7 55.8 61.4 66.7
AIME 2024 | GRPO | 22.6 31.5 39.5 46.2 51.9 57.3 62.9 68.9 73.3
AIME 2024 | GRPO-N | 23.6 33.4 41.8 47.5 51.9 56.7 61.8 67.3 73.3
AIME 2024 | GSPO | 25.3 34.7 42.4 48.3 53.6 58.7 63.6 68.1 73.3
AIME 2024 | GSPO-N | 23.3 31.1 42.1 48.8 54.3 59.4 64.4 69.6 73.3
AIME 2025 | Base Model | 6.4 10.2 14.5 18.9 23.6 28.1 32.5 38.3 46.7
AIME 2025 | GRPO | 9.2 13.4 17.9 22.4 26.4 29.9 33.9 39.1 46.7
AIME 2025 | GRPO-N | 9.5 14.2 19.1 23.8 28.7 34.2 41.6 52.5 66.7
AIME 2025 | GSPO | 9.6 14.3 19.2 23.9 28.8 34.2 40.9 49.5 60.0
AIME 2025 | GSPO-N | 10.2 14.7 19.6 24.9 29.9 35.0 40.9 47.3 53.3
ARC-c | Base Model | 35.4 54.9 73.7 86.5 93.6 96.9 98.2 99.2 100.0
ARC-c | GRPO | 62.3 77.4 86.6 91.6 94.2 96.3 98.2 99.5 100.0
ARC-c | GRPO-N | 61.7 78.1 88.5 94.3 97.7 99.5 99.9 100.0 100.0
ARC-c | GSPO | 59.9 74.1 83.2 89.1 93.2 95.7 96.7 96.9 96.9
ARC-c | GSPO-N | 63.9 77.9 86.5 91.1 93.7 95.5 96.5 96.9 96.9
MMLU-Pro | Base Model | 28.1 41.4 55.1 67.6 78.1 85.9 91.6 96.2 100.0
MMLU-Pro | GRPO | 40.1 52.0 62.4 70.8 76.9 80.6 83.7 87.3 90.6
MMLU-Pro | GRPO-N | 38.5 49.9 60.7 70.1 78.1 84.3 89.0 93.7 100.0
MMLU-Pro | GSPO | 40.0 50.6 60.6 69.2 75.5 79.5 82.4 85.9 90.6
MMLU-Pro | GSPO-N | 41.6 52.3 61.8 69.7 75.9 79.9 83.6 88.1 93.8
"""
"""Table 1: Qwen2.5-Math-7B and its RL-trained versions."""

_TABLE2 = """
AMC 2023 | Base Model | 23.4 34.3 47.7 61.7 74.4 84.7 92.1 96.8 100.0
AMC 2023 | GRPO | 31.1 41.7 51.3 58.7 64.7 70.7 76.9 83.0 87.5
AMC 2023 | GRPO-N | 30.3 41.6 52.4 60.8 67.5 74.2 81.0 87.4 92.5
AIME 2024 | Base Model | 6.9 11.5 17.5 23.8 29.4 33.7 37.5 42.7 50.0
AIME 2024 | GRPO | 15.7 20.6 25.1 29.1 32.2 34.4 36.1 37.9 40.0
AIME 2024 | GRPO-N | 16.2 21.2 25.8 29.9 33.2 35.2 37.3 40.8 46.7
AIME 2025 | Base Model | 0.4 0.9 1.7 3.2 5.6 9.2 14.6 23.2 36.7
AIME 2025 | GRPO | 0.6 1.1 2.1 3.8 6.2 9.0 11.7 14.4 16.7
AIME 2025 | GRPO-N | 0.5 1.0 2.0 3.8 6.6 10.7 15.5 20.6 26.7
"""
"""Table 2: Llama-3.2-3B-Instruct and its RL-trained versions."""

_TABLE3 = """
MATH-500 | Base Model | 40.7 51.5 58.9 64.1 68.5 72.9 77.9 83.2 88.0
MATH-500 | GRPO | 53.3 57.9 61.2 63.5 65.3 67.0 68.9 70.8 72.6
MATH-500 | GRPO-N | 53.0 57.9 61.3 63.7 65.3 66.8 68.5 70.2 72.2
MATH-500 | GSPO | 53.0 57.7 61.0 63.4 65.2 66.8 68.6 70.5 72.8
MATH-500 | GSPO-N | 54.1 58.8 62.0 64.1 65.9 67.6 69.5 71.5 73.4
"""
"""Table 3: Qwen2.5-Math-7B on MATH-500."""

_TABLE4 = """
Answer-Level Entropy | Qwen2.5-Math-7B | 2.563 4.263 4.904
Answer-Level Entropy | Qwen2.5-Math-7B GRPO | 1.667 3.691 4.916
Answer-Level Entropy | Qwen2.5-Math-7B GRPO-N | 1.741 3.748 4.957
Answer-Level Entropy | Qwen2.5-Math-7B GSPO | 1.641 3.484 4.878
Answer-Level Entropy | Qwen2.5-Math-7B GSPO-N | 1.696 3.712 4.943
Answer-Level Entropy | Llama-3.2-3B-Instruct | 3.937 5.333 6.062
Answer-Level Entropy | Llama-3.2-3B-Instruct GRPO | 2.513 2.888 3.694
Answer-Level Entropy | Llama-3.2-3B-Instruct GRPO-N | 2.633 3.042 4.370
Token-Level Entropy | Qwen2.5-Math-7B | 0.118 - 0.134
Token-Level Entropy | Qwen2.5-Math-7B GRPO | 0.063 - 0.054
Token-Level Entropy | Qwen2.5-Math-7B GRPO-N | 0.124 - 0.092
Token-Level Entropy | Qwen2.5-Math-7B GSPO | 0.087 - 0.065
Token-Level Entropy | Qwen2.5-Math-7B GSPO-N | 0.095 - 0.075
Token-Level Entropy | Llama-3.2-3B-Instruct | 0.127 - 0.107
Token-Level Entropy | Llama-3.2-3B-Instruct GRPO | 0.123 - 0.089
Token-Level Entropy | Llama-3.2-3B-Instruct GRPO-N | 0.105 - 0.107
"""
"""Table 4: entropies on AMC 2023, AIME 2024 and AIME 2025 (the paper names the RL-trained
rows by algorithm under each base model; here they carry the base model's name too)."""

ENTROPY_BENCHMARKS = ("AMC 2023", "AIME 2024", "AIME 2025")


def _parse(text: str) -> list[tuple[str, str, list[float | None]]]:
    rows = []
    for line in text.strip().splitlines():
        a, b, values = (part.strip() for part in line.split("|"))
        rows.append((a, b, [None if v == "-" else float(v) for v in values.split()]))
    return rows


def passk_table(number: int) -> pd.DataFrame:
    """Table ``number`` (1, 2 or 3): rows (benchmark, algorithm), columns k, Pass@k in %."""
    text = {1: _TABLE1, 2: _TABLE2, 3: _TABLE3}.get(number)
    if text is None:
        raise ValueError(f"the paper's Pass@k tables are 1, 2 and 3, not {number}")
    rows = _parse(text)
    index = pd.MultiIndex.from_tuples([(b, m) for b, m, _ in rows], names=["benchmark", "model"])
    return pd.DataFrame([v for _, _, v in rows], index=index, columns=pd.Index(KS, name="k"))


def entropy_table() -> pd.DataFrame:
    """Table 4: rows (metric, model), columns the three benchmarks; None where the paper has
    no number."""
    rows = _parse(_TABLE4)
    index = pd.MultiIndex.from_tuples([(a, m) for a, m, _ in rows], names=["metric", "model"])
    return pd.DataFrame([v for _, _, v in rows], index=index,
                        columns=pd.Index(ENTROPY_BENCHMARKS, name="benchmark"))
