"""Multiple-choice benchmarks (ARC-c, MMLU-Pro): the paper's prompt with lettered options, the
answer letter extracted from the completion and compared with the gold letter.

Public API::

    load_choice(name, path=None)     # Problems from the hub, or from a local file or folder
    extract_letter(completion, letters="ABCD")   # the chosen letter, or None (NA)
    ChoiceTask(name, path=None)      # the Task
    subsample(problems, size, seed)  # the paper's 128 random questions (Appendix C.2)
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rlvr_dynamics.tasks.base import Problem
from rlvr_dynamics.tasks.math import last_boxed, prompt, read_rows

LETTERS = "ABCDEFGHIJ"

SOURCES = {
    "arc-c": ("allenai/ai2_arc", "ARC-Challenge", "test"),
    "mmlu-pro": ("TIGER-Lab/MMLU-Pro", None, "test"),
}
"""(hub repo, config, split) of the paper's out-of-domain benchmarks (Section 4.1)."""


def question_text(question: str, options: list[str]) -> str:
    """The question followed by its options as ``A. ...`` lines."""
    lines = [f"{LETTERS[i]}. {o}" for i, o in enumerate(options)]
    return question.strip() + "\n\n" + "\n".join(lines)


def _options_and_gold(row: dict[str, Any], where: str) -> tuple[list[str], str]:
    """Options and gold letter of an ARC row (``choices`` = {text, label}, ``answerKey``) or an
    MMLU-Pro row (``options`` list, ``answer`` letter or ``answer_index``)."""
    if isinstance(row.get("choices"), dict):
        texts, labels = list(row["choices"].get("text", [])), list(row["choices"].get("label", []))
        key = str(row.get("answerKey", "")).strip()
        if key not in labels:
            raise ValueError(f"{where}: answerKey {key!r} is not one of the labels {labels}")
        return texts, LETTERS[labels.index(key)]  # ARC labels are A-D or 1-4
    options = row.get("options")
    if not isinstance(options, list) or not options:
        raise ValueError(f"{where}: no options (looked for 'choices' and 'options')")
    if isinstance(row.get("answer_index"), (int, np.integer)):
        index = int(row["answer_index"])
    elif isinstance(row.get("answer"), str) and row["answer"].strip() in LETTERS:
        index = LETTERS.index(row["answer"].strip())
    else:
        raise ValueError(f"{where}: no answer (looked for 'answer_index' and a letter 'answer')")
    if not 0 <= index < len(options):
        raise ValueError(f"{where}: answer {index} out of range for {len(options)} options")
    return list(options), LETTERS[index]


def to_problem(name: str, index: int, where: str, row: Any) -> Problem:
    """A row as a Problem with lettered options; malformed rows are errors naming ``where``."""
    if not isinstance(row, dict):
        raise ValueError(f"{where}: a row must be a JSON object, got {type(row).__name__}")
    question = row.get("question")
    if isinstance(question, dict):  # some ARC copies nest {"stem": ...}
        question = question.get("stem")
    if not isinstance(question, str) or not question.strip():
        raise ValueError(f"{where}: no question")
    options, gold = _options_and_gold(row, where)
    if len(options) > len(LETTERS):
        raise ValueError(f"{where}: {len(options)} options, at most {len(LETTERS)} supported")
    ident = row.get("id", row.get("question_id", index))
    return Problem(id=f"{name}-{ident}", prompt=prompt(question_text(question, options)),
                   answer=gold, meta={"letters": LETTERS[:len(options)], "source": where,
                                      "category": row.get("category")})


def load_choice(name: str, path: str | Path | None = None) -> list[Problem]:
    """The problems of ``name`` (``arc-c`` or ``mmlu-pro``) from the hub or a local ``path``."""
    if name not in SOURCES and path is None:
        raise ValueError(f"unknown choice benchmark {name!r}; known: {sorted(SOURCES)}")
    if path is not None:
        rows = read_rows(path)
    else:
        import datasets
        repo, config, split = SOURCES[name]
        rows = [(f"{repo}[{split}] row {i}", r) for i, r in
                enumerate(datasets.load_dataset(repo, config, split=split))]
    return [to_problem(name, i, where, row) for i, (where, row) in enumerate(rows)]


_STATED = re.compile(r"(?i:answer)\s*(?:is|:)?\s*[:\s]*\(?\s*([A-J])\b")


def extract_letter(completion: str, letters: str = "ABCD") -> str | None:
    """The option letter the completion chose: from its last ``\\boxed{}`` (``C``, ``(C)``,
    ``\\text{C}``, ``C. text``), else from its last "answer is (C)"; None (NA) otherwise."""
    boxed = last_boxed(completion)
    if boxed is not None:
        inner = re.sub(r"\\text(?:bf)?\{([^}]*)\}", r"\1", boxed).strip(" ()$.")
        m = re.match(r"([A-J])(?:$|[\s.):])", inner)
        return m.group(1) if m and m.group(1) in letters else None
    stated = _STATED.findall(completion)
    return stated[-1] if stated and stated[-1] in letters else None


def subsample(problems: list[Problem], size: int | None, seed: int) -> list[Problem]:
    """``size`` problems drawn without replacement by ``seed`` (all of them if ``size`` is None
    or not smaller), in their original order."""
    if size is None or size >= len(problems):
        return list(problems)
    keep = np.sort(np.random.default_rng(seed).choice(len(problems), size, replace=False))
    return [problems[i] for i in keep]


@dataclass(frozen=True)
class ChoiceTask:
    """A multiple-choice benchmark as a Task: the gold is a letter, the answer the chosen one."""

    name: str
    path: str | None = None

    def problems(self, split: str = "test") -> list[Problem]:
        return load_choice(self.name, self.path)

    def extract(self, completion: str) -> str | None:
        return extract_letter(completion, LETTERS)

    def verify(self, completion: str, answer: str) -> bool:
        return extract_letter(completion, LETTERS) == answer
