"""Math benchmarks (MATH, MATH-500, AIME 2024/2025, AMC 2023): the paper's prompt, the last
``\\boxed{}`` answer, and grading with math-verify.

Public API::

    prompt(question)                 # Appendix C.2's template, a plain string
    last_boxed(text)                 # content of the last \\boxed{...} (None: NA)
    grade(completion, gold) -> bool  # last boxed answer == gold, by math-verify, time-bounded
    load_benchmark(name, path=None)  # Problems from the hub, or from a local file or folder
    MathTask(name, path=None)        # the Task (prompts, gold answers, 0/1 verifier)

Grading runs math-verify in a worker process that the caller waits on for at most ``timeout``
seconds; a pathological answer (say ``9^{9^{9^{9}}}``) is graded wrong when the time is up
and the worker is replaced. This works from any thread (math-verify's own timeouts use
``signal.alarm`` and only work on the main thread).

Check the loaders and the grader on real files (the figures are quoted in the evaluation
chapter)::

    python -m rlvr_dynamics.tasks.math --check-benchmarks ../shared/data/benchmarks
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import re
import select
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from rlvr_dynamics.store import write_json
from rlvr_dynamics.tasks.base import Problem

log = logging.getLogger(__name__)

PROMPT = ("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
          "<|im_start|>user\n{input}\nPlease reason step by step, and put your final answer "
          "within \\boxed{{}}.<|im_end|>\n<|im_start|>assistant\n")
"""The uniform prompt of Appendix C.2 (Zeng et al.'s ``qwen-boxed``), used for every model."""


def prompt(question: str) -> str:
    return PROMPT.format(input=question)


# --- answers --------------------------------------------------------------------------------

_BOXED = re.compile(r"\\(?:boxed|fbox)\s*")


def last_boxed(text: str) -> str | None:
    """The content of the last ``\\boxed{...}`` (or ``\\fbox``) with balanced braces; also the
    brace-less ``\\boxed 5``. None when there is none or its braces never close."""
    for match in reversed(list(_BOXED.finditer(text))):
        i = match.end()
        if i < len(text) and text[i] == "{":
            depth = 0
            for j in range(i, len(text)):
                depth += {"{": 1, "}": -1}.get(text[j], 0)
                if depth == 0:
                    return text[i + 1:j].strip()
            return None
        if match.group(0).endswith(" "):  # \boxed 5
            token = re.match(r"[^\s$]+", text[i:])
            if token:
                return token.group(0).rstrip(".")
    return None


_SPACING = re.compile(r"\\left|\\right|\\[,;:! ]|\s|\$")


def normalize(answer: str) -> str:
    """A canonical string of an extracted answer, to count distinct answers (answer entropy):
    spacing, ``\\left``/``\\right``, ``$`` and a trailing period dropped, ``\\dfrac`` and
    ``\\tfrac`` written ``\\frac``, degree marks removed. Equal strings, equal answers;
    equivalent forms that differ otherwise (``0.5`` and ``\\frac12``) stay distinct."""
    s = _SPACING.sub("", answer)
    s = s.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    s = s.replace("^{\\circ}", "").replace("^\\circ", "")
    return s.rstrip(".")


def gold_text(value: Any) -> str:
    """A gold answer as text: integral floats lose their ``.0`` (AMC's ``27.0`` is ``27``)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


# --- grading --------------------------------------------------------------------------------

def serve() -> None:
    """The grading worker: reads ``[answer, gold]`` JSON lines on stdin, answers 1 or 0."""
    out = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    sys.stdout = sys.stderr  # nothing but verdicts may reach the parent's pipe
    logging.disable(logging.WARNING)  # math-verify warns that its own timeouts are off
    from math_verify import parse, verify
    print("ready", file=out, flush=True)
    for line in sys.stdin:
        answer, gold = json.loads(line)
        try:
            ok = verify(parse(f"\\boxed{{{gold}}}", parsing_timeout=None),
                        parse(f"\\boxed{{{answer}}}", parsing_timeout=None), timeout_seconds=None)
        except Exception:
            ok = False
        print(int(bool(ok)), file=out, flush=True)


class Grader:
    """math-verify in a worker process, each comparison bounded by ``timeout`` seconds.

    The worker is a fresh interpreter (``python -c "...serve()"``), so it needs no
    ``if __name__ == "__main__"`` guard in the caller's script and shares no threads with it.
    """

    def __init__(self, timeout: float = 5.0):
        if not timeout > 0:
            raise ValueError(f"timeout must be > 0, got {timeout}")
        self.timeout = timeout
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self.timeouts = 0

    def _start(self) -> None:
        src = str(Path(__file__).resolve().parents[2])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [src, *filter(None, [os.environ.get("PYTHONPATH")])])}
        self._proc = subprocess.Popen(
            [sys.executable, "-c", "from rlvr_dynamics.tasks.math import serve; serve()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        if self._reply(300) != b"ready":
            self._stop()
            raise RuntimeError("the math-verify grading worker did not start")

    def _reply(self, timeout: float) -> bytes | None:
        ready, _, _ = select.select([self._proc.stdout], [], [], timeout)
        return self._proc.stdout.readline().strip() if ready else None

    def _stop(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait()
            for pipe in (self._proc.stdin, self._proc.stdout):
                pipe.close()
        self._proc = None

    def equal(self, answer: str, gold: str, timeout: float | None = None) -> bool:
        """Whether math-verify finds ``answer`` equal to ``gold`` (gold first) within
        ``timeout`` seconds (default: the grader's)."""
        timeout = self.timeout if timeout is None else timeout
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self._start()
            self._proc.stdin.write(json.dumps([answer, gold]).encode() + b"\n")
            self._proc.stdin.flush()
            reply = self._reply(timeout)
            if reply in (b"0", b"1"):
                return reply == b"1"
            self.timeouts += 1
            log.warning("grading gave no verdict within %.1f s; graded wrong: %.80r",
                        timeout, answer)
            self._stop()
            return False

    def close(self) -> None:
        with self._lock:
            self._stop()


_GRADER = Grader()


def grade(completion: str, gold: str, timeout: float | None = None) -> bool:
    """Whether the last ``\\boxed{}`` answer of ``completion`` equals ``gold`` (math-verify,
    gold first); no boxed answer or no verdict within ``timeout`` seconds (default 5) is wrong.
    A period right after a final digit (``\\boxed{104.}``) is dropped first."""
    answer = last_boxed(completion)
    if answer is None:
        return False
    answer = re.sub(r"(?<=\d)\.$", "", answer)  # "104." ends a sentence; math-verify rejects it
    return _GRADER.equal(answer, gold, timeout)


# --- benchmarks -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Source:
    """Where a benchmark lives on the hub."""

    repo: str
    split: str
    config: str | None = None


SOURCES = {
    "math-train": Source("DigitalLearningGmbH/MATH-lighteval", "train"),  # 7,500 problems
    "math500": Source("HuggingFaceH4/MATH-500", "test"),
    "aime24": Source("HuggingFaceH4/aime_2024", "train"),
    "aime25": Source("math-ai/aime25", "test"),
    "amc23": Source("math-ai/amc23", "test"),
}
"""The paper's math benchmarks (Section 4.1). Any other copy with a problem and an answer (or a
solution with a boxed answer) field loads from a local path instead."""

QUESTION_FIELDS = ("problem", "question", "Problem", "Question")
ANSWER_FIELDS = ("answer", "Answer", "final_answer")
ID_FIELDS = ("unique_id", "id", "ID")


def read_rows(path: str | Path) -> list[tuple[str, dict[str, Any]]]:
    """(where, row) for every row of a JSON-lines, JSON or parquet file, or of the one such
    file in a folder (``test.jsonl`` preferred). ``where`` is ``file:line`` for JSON lines."""
    path = Path(path)
    if path.is_dir():
        files = [path / "test.jsonl"] if (path / "test.jsonl").is_file() else sorted(
            p for p in path.iterdir() if p.suffix in (".jsonl", ".json", ".parquet"))
        if len(files) != 1:
            raise FileNotFoundError(f"{path}: expected test.jsonl or exactly one .jsonl/.json/"
                                    f".parquet file, found {[f.name for f in files]}")
        path = files[0]
    if not path.is_file():
        raise FileNotFoundError(f"no benchmark file at {path}")
    if path.suffix == ".parquet":
        import pandas as pd
        return [(f"{path} row {i}", row) for i, row in
                enumerate(pd.read_parquet(path).to_dict("records"))]
    if path.suffix == ".json":
        data = json.loads(path.read_text())
        rows = data if isinstance(data, list) else data.get("data", data.get("rows"))
        if not isinstance(rows, list):
            raise ValueError(f"{path}: expected a list of rows")
        return [(f"{path} row {i}", row) for i, row in enumerate(rows)]
    out = []
    with open(path, encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{line_no}: not valid JSON ({e.msg})") from None
            out.append((f"{path}:{line_no}", row))
    return out


def _field(row: dict[str, Any], names: Iterable[str]) -> Any:
    return next((row[k] for k in names if row.get(k) not in (None, "")), None)


def to_problem(name: str, index: int, where: str, row: Any) -> Problem:
    """A benchmark row as a Problem, whatever the benchmark calls its fields. A row without a
    problem or an answer (nor a solution with a boxed one) is an error naming ``where``."""
    if not isinstance(row, dict):
        raise ValueError(f"{where}: a row must be a JSON object, got {type(row).__name__}")
    question = _field(row, QUESTION_FIELDS)
    if not isinstance(question, str):
        raise ValueError(f"{where}: no problem (looked for fields {list(QUESTION_FIELDS)})")
    answer = _field(row, ANSWER_FIELDS)
    if answer is None and isinstance(row.get("solution"), str):
        answer = last_boxed(row["solution"])
    if answer is None:
        raise ValueError(f"{where}: no answer (looked for fields {list(ANSWER_FIELDS)} "
                         f"and a boxed answer in 'solution')")
    ident = _field(row, ID_FIELDS)
    meta = {k: row[k] for k in ("level", "subject", "type", "url") if k in row}
    return Problem(id=f"{name}-{ident if ident is not None else index}",
                   prompt=prompt(question), answer=gold_text(answer),
                   meta={**meta, "source": where, "question": question})


def load_benchmark(name: str, path: str | Path | None = None) -> list[Problem]:
    """The problems of benchmark ``name`` (a key of ``SOURCES``) from the hub, or from ``path``
    (a file, or a folder holding one) when given."""
    if path is None and name not in SOURCES:
        raise ValueError(f"unknown math benchmark {name!r}; known: {sorted(SOURCES)} "
                         f"(or give a local path)")
    if path is not None:
        rows = read_rows(path)
    else:
        import datasets
        src = SOURCES[name]
        data = datasets.load_dataset(src.repo, src.config, split=src.split)
        rows = [(f"{src.repo}[{src.split}] row {i}", row) for i, row in enumerate(data)]
    problems = [to_problem(name, i, where, row) for i, (where, row) in enumerate(rows)]
    ids = [p.id for p in problems]
    if len(set(ids)) != len(ids):  # ids that repeat are replaced by row numbers
        problems = [Problem(f"{name}-{i}", p.prompt, p.answer, p.meta)
                    for i, p in enumerate(problems)]
    return problems


@dataclass(frozen=True)
class MathTask:
    """A math benchmark as a Task: the paper's prompt, the last boxed answer, math-verify."""

    name: str
    path: str | None = None

    def problems(self, split: str = "test") -> list[Problem]:
        return load_benchmark(self.name, self.path)

    def extract(self, completion: str) -> str | None:
        answer = last_boxed(completion)
        return None if answer is None else normalize(answer)

    def verify(self, completion: str, answer: str) -> bool:
        return grade(completion, answer)


@dataclass(frozen=True)
class MathSplits:
    """MATH as the paper trains on it (Section 4.1): its 7,500 training problems, MATH-500 held
    out, both with the Appendix C.2 prompt and graded by math-verify."""

    train: str = "math-train"
    test: str = "math500"
    name: str = "math"

    def problems(self, split: str) -> list[Problem]:
        if split not in ("train", "test"):
            raise ValueError(f"unknown split {split!r} of the MATH training task; splits: train, test")
        return MathTask(getattr(self, split)).problems()

    def verify(self, completion: str, answer: str) -> bool:
        return grade(completion, answer)


# --- checking the grader on real benchmark files ---------------------------------------------

def perturb(gold: str) -> str:
    """A nearby wrong answer: the last digit bumped by one (9 -> 0), else the last letter
    moved one on in the alphabet, else ``gold + 1``."""
    for j in range(len(gold) - 1, -1, -1):
        ch = gold[j]
        if ch.isdigit():
            return gold[:j] + str((int(ch) + 1) % 10) + gold[j + 1:]
    for j in range(len(gold) - 1, -1, -1):
        ch = gold[j]
        if ch.isalpha() and (j == 0 or gold[j - 1] != "\\") and not gold[:j].endswith("\\text{"):
            return gold[:j] + chr((ord(ch.lower()) - 97 + 1) % 26 + 97) + gold[j + 1:]
    return f"{gold}+1"


def check_benchmarks(folder: Path, timeout: float = 5.0) -> dict[str, dict[str, Any]]:
    """For each benchmark folder under ``folder``: how many rows load; how many gold answers,
    written ``\\boxed{gold}``, grade correct against themselves; how many perturbed golds grade
    wrong; and, where rows carry a reference solution, how often its last boxed answer grades
    equal to the gold answer."""
    report: dict[str, dict[str, Any]] = {}
    for sub in sorted(p for p in Path(folder).iterdir() if p.is_dir()):
        start = time.time()
        problems = load_benchmark(sub.name, sub)
        before = _GRADER.timeouts
        self_ok = [p.id for p in problems if not grade(f"\\boxed{{{p.answer}}}", p.answer, timeout)]
        wrong_ok = [p.id for p in problems
                    if grade(f"\\boxed{{{perturb(p.answer)}}}", p.answer, timeout)]
        solutions = [(p, last_boxed(r.get("solution", "") or ""))
                     for p, (_, r) in zip(problems, read_rows(sub))]
        solutions = [(p, s) for p, s in solutions if s is not None]
        sol_bad = [p.id for p, s in solutions if not grade(f"\\boxed{{{s}}}", p.answer, timeout)]
        report[sub.name] = {
            "rows": len(problems),
            "gold_self_correct": len(problems) - len(self_ok), "gold_self_failures": self_ok,
            "perturbed_wrong": len(problems) - len(wrong_ok), "perturbed_failures": wrong_ok,
            "solutions_with_boxed": len(solutions),
            "solution_agrees": len(solutions) - len(sol_bad), "solution_disagreements": sol_bad,
            "timeouts": _GRADER.timeouts - before, "seconds": round(time.time() - start, 1)}
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Check the math loaders and grader on real files.")
    ap.add_argument("--check-benchmarks", metavar="DIR", required=True, type=Path,
                    help="a folder of benchmark folders, e.g. ../shared/data/benchmarks")
    ap.add_argument("--timeout", type=float, default=5.0)
    ap.add_argument("--json", metavar="FILE", type=Path, help="also write the report here")
    args = ap.parse_args(argv)
    report = check_benchmarks(args.check_benchmarks, args.timeout)
    for name, r in report.items():
        print(f"{name}: {r['rows']} rows; \\boxed{{gold}} graded correct {r['gold_self_correct']}"
              f"/{r['rows']}; perturbed gold graded wrong {r['perturbed_wrong']}/{r['rows']}; "
              f"reference solution's boxed answer agrees {r['solution_agrees']}"
              f"/{r['solutions_with_boxed']}; timeouts {r['timeouts']}; {r['seconds']} s")
        for key in ("gold_self_failures", "perturbed_failures", "solution_disagreements"):
            if r[key]:
                print(f"  {key}: {r[key]}")
    if args.json:
        write_json(args.json, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
