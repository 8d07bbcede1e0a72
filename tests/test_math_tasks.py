"""Tasks and graders: the last boxed answer, math-verify grading (equivalent forms right, near
misses wrong, pathological answers bounded in time from any thread), the benchmark loaders on
the project's own fixtures (field names normalised, malformed rows named by file and line),
multiple choice letters, and the chat arithmetic task."""
import threading
from pathlib import Path

import pytest

from rlvr_dynamics import registry
from rlvr_dynamics.tasks import arithmetic, choice
from rlvr_dynamics.tasks import math as mt

FIXTURES = Path(__file__).parent / "fixtures" / "benchmarks"


@pytest.mark.parametrize("text, want", [
    ("so \\boxed{42}.", "42"),
    ("\\boxed{1} then \\boxed{\\frac{1}{2}}", "\\frac{1}{2}"),
    ("nested \\boxed{\\left( 3, \\frac{\\pi}{2} \\right)} end", "\\left( 3, \\frac{\\pi}{2} \\right)"),
    ("\\fbox{7}", "7"),
    ("the answer is \\boxed 5.", "5"),
    ("\\boxed{\\text{(C)}}", "\\text{(C)}"),
    ("unclosed \\boxed{3 + {4}", None),
    ("no box at all: 12", None),
])
def test_last_boxed(text, want):
    assert mt.last_boxed(text) == want


def test_prompt_is_appendix_c2_template():
    p = mt.prompt("What is 1+1?")
    assert p == ("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n"
                 "What is 1+1?\nPlease reason step by step, and put your final answer within "
                 "\\boxed{}.<|im_end|>\n<|im_start|>assistant\n")


@pytest.mark.parametrize("completion, gold, want", [
    ("... so \\boxed{\\frac{1}{2}}", "0.5", True),
    ("\\boxed{0.5}", "\\frac12", True),
    ("\\boxed{27.0}", "27", True),
    ("\\boxed{(3, \\pi/2)}", "\\left( 3, \\frac{\\pi}{2} \\right)", True),
    ("we get \\boxed{104.}", "104", True),
    ("\\boxed{2} first, then finally \\boxed{3}", "2", False),  # the last boxed answer counts
    ("\\boxed{\\frac{3}{5}}", "\\frac{2}{5}", False),
    ("\\boxed{28}", "27", False),
    ("the answer is 27", "27", False),  # no boxed answer: wrong
])
def test_grade(completion, gold, want):
    assert mt.grade(completion, gold) is want


def test_a_pathological_answer_is_graded_wrong_in_bounded_time_off_the_main_thread():
    """9^(9^(9^9)) never finishes in sympy; the worker is killed at the time bound."""
    grader = mt.Grader(timeout=1.0)
    verdicts = []
    worker = threading.Thread(target=lambda: verdicts.append(
        grader.equal("9^{9^{9^{9}}}", "5")))
    worker.start()
    worker.join(120)  # a liveness bound, not a speed test: without the kill it never returns
    assert not worker.is_alive() and verdicts == [False]
    assert grader.timeouts == 1
    assert grader.equal("5", "5") is True  # a fresh worker takes over
    grader.close()


def test_math_loaders_normalise_field_names():
    m500 = mt.load_benchmark("math500", FIXTURES / "math500")
    assert [p.answer for p in m500] == ["\\frac{3}{4}", "\\left( 2, \\frac{\\pi}{2} \\right)", "3"]
    assert m500[0].id == "math500-test/prealgebra/1.json" and m500[0].meta["level"] == 1
    assert m500[0].prompt == mt.prompt("What is $\\frac{1}{2} + \\frac{1}{4}$?")
    amc = mt.load_benchmark("amc23", FIXTURES / "amc23" / "test.jsonl")  # a file works too
    assert [p.answer for p in amc] == ["2", "3.5"]  # floats: 2.0 -> "2"; "question" field read
    assert "Two trains" in amc[0].meta["question"]
    aime = mt.load_benchmark("aime24", FIXTURES / "aime24")
    assert [p.id for p in aime] == ["aime24-60", "aime24-61"] and aime[0].answer == "024"


def test_every_fixture_gold_grades_correct_against_itself_and_a_perturbed_one_wrong():
    for name in ("math500", "aime24", "amc23"):
        for p in mt.load_benchmark(name, FIXTURES / name):
            assert mt.grade(f"\\boxed{{{p.answer}}}", p.answer), (name, p.answer)
            assert not mt.grade(f"\\boxed{{{mt.perturb(p.answer)}}}", p.answer), (name, p.answer)


def test_check_benchmarks_reports_agreement_on_a_folder(tmp_path):
    for name in ("math500", "aime24"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "test.jsonl").write_text((FIXTURES / name / "test.jsonl").read_text())
    report = mt.check_benchmarks(tmp_path)
    assert report["math500"]["gold_self_correct"] == 3 and report["math500"]["perturbed_wrong"] == 3
    assert report["math500"]["solution_agrees"] == 3 and report["aime24"]["solution_agrees"] == 2


@pytest.mark.parametrize("file, match", [
    ("missing_answer.jsonl", r"missing_answer.jsonl:3: no answer"),
    ("missing_problem.jsonl", r"missing_problem.jsonl:2: no problem"),
    ("bad_json.jsonl", r"bad_json.jsonl:3: not valid JSON"),  # line 2 is blank
])
def test_malformed_rows_name_file_and_line(file, match):
    with pytest.raises(ValueError, match=match):
        mt.load_benchmark("math500", FIXTURES / "malformed" / file)


def test_unknown_benchmark_and_missing_files_are_errors(tmp_path):
    with pytest.raises(ValueError, match="unknown math benchmark 'gsm8k'"):
        mt.load_benchmark("gsm8k")
    with pytest.raises(FileNotFoundError, match="no benchmark file"):
        mt.load_benchmark("math500", tmp_path / "nothing.jsonl")
    with pytest.raises(FileNotFoundError, match="expected test.jsonl"):
        mt.load_benchmark("math500", tmp_path)


def test_math_task_extracts_normalised_answers():
    task = mt.MathTask("math500", str(FIXTURES / "math500"))
    assert task.extract("thus \\boxed{\\dfrac{3}{4}}.") == "\\frac{3}{4}"
    assert task.extract("thus \\boxed{ \\left(2, \\frac{\\pi}{2}\\right) }") == "(2,\\frac{\\pi}{2})"
    assert task.extract("no answer") is None
    assert task.verify("\\boxed{0.75}", task.problems()[0].answer)


def test_choice_loaders_letter_the_options():
    arc = choice.load_choice("arc-c", FIXTURES / "arc-c")
    assert [p.answer for p in arc] == ["B", "C"]  # numeric labels 1-4 become A-D
    assert "B. carbon dioxide" in arc[0].prompt and arc[0].prompt.startswith("<|im_start|>system")
    mmlu = choice.load_choice("mmlu-pro", FIXTURES / "mmlu-pro")
    assert [p.answer for p in mmlu] == ["B", "C"] and "E. 2x^3" in mmlu[0].prompt
    with pytest.raises(ValueError, match=r"choice_bad_key.jsonl:1: answerKey 'E'"):
        choice.load_choice("arc-c", FIXTURES / "malformed" / "choice_bad_key.jsonl")


@pytest.mark.parametrize("text, want", [
    ("so \\boxed{C}", "C"), ("\\boxed{(B)}", "B"), ("\\boxed{\\text{D}}", "D"),
    ("\\boxed{A. Paris}", "A"), ("The answer is (C).", "C"), ("Answer: B", "B"),
    ("the answer is a prime", None), ("\\boxed{42}", None), ("nothing", None),
    ("\\boxed{J}", None),  # not an option of a four-option question
])
def test_extract_letter(text, want):
    assert choice.extract_letter(text, "ABCD") == want


def test_subsample_is_deterministic_and_without_replacement():
    probs = choice.load_choice("mmlu-pro", FIXTURES / "mmlu-pro") * 10
    probs = [type(p)(f"{p.id}-{i}", p.prompt, p.answer, p.meta) for i, p in enumerate(probs)]
    a, b = choice.subsample(probs, 7, seed=1), choice.subsample(probs, 7, seed=1)
    assert [p.id for p in a] == [p.id for p in b] and len({p.id for p in a}) == 7
    assert [p.id for p in choice.subsample(probs, 7, seed=2)] != [p.id for p in a]
    assert choice.subsample(probs, None, 0) == probs


def test_arithmetic_splits_are_disjoint_deterministic_and_correct():
    task = arithmetic.ArithmeticTask(digits=2, terms=3, size=(("train", 300), ("test", 40)))
    train, test = task.problems("train"), task.problems("test")
    assert len(train) == 300 and len(test) == 40
    assert not {p.meta["terms"] for p in train} & {p.meta["terms"] for p in test}
    assert test == task.problems("test")
    for p in test:
        assert p.answer == str(sum(p.meta["terms"])) and all(10 <= t < 100 for t in p.meta["terms"])
        assert p.prompt[0]["role"] == "user" and "\\boxed{}" in p.prompt[0]["content"]
    with pytest.raises(ValueError, match="only 81 distinct sums"):
        arithmetic.ArithmeticTask(size=(("train", 80), ("test", 2)))


def test_an_arithmetic_mix_holds_each_levels_own_problems():
    mix = arithmetic.ArithmeticMix(levels=((1, 2), (2, 3)))
    for split in ("train", "test"):
        got = mix.problems(split)
        for level in mix.levels:
            own = arithmetic.ArithmeticTask(*level).problems(split)
            mine = [p for p in got if p.meta["level"] == level]
            assert [(p.prompt, p.answer) for p in mine] == [(p.prompt, p.answer) for p in own]
        assert len({p.id for p in got}) == len(got) == 2 * dict(mix.size)[split]
    assert mix.verify("so \\boxed{12}", "12") and not mix.verify("13", "12")
    with pytest.raises(ValueError, match="distinct"):
        arithmetic.ArithmeticMix(levels=((1, 2), (1, 2)))
    with pytest.raises(ValueError, match="digits must lie"):
        arithmetic.ArithmeticMix(levels=((0, 2),))


@pytest.mark.parametrize("text, want", [
    ("3 + 4 = 7.", "7"), ("The sum is \\boxed{1,234}", "1234"), ("\\boxed{x} but 5", None),
    ("nothing", None), ("it is -3", "-3"), ("7 apples, \\boxed{9}, then 11", "9"),
])
def test_arithmetic_extract(text, want):
    assert arithmetic.extract(text) == want


def test_hub_loaders_ask_for_the_right_dataset_and_normalise_it(monkeypatch):
    """Without the hub here, a stand-in ``datasets.load_dataset`` checks what is asked and
    serves rows in each benchmark's own field names."""
    import datasets

    asked = []
    rows = {"HuggingFaceH4/MATH-500": [{"problem": "p", "answer": "\\frac12", "unique_id": "u/1"}],
            "math-ai/amc23": [{"question": "q", "answer": 27.0, "id": 3}],
            "DigitalLearningGmbH/MATH-lighteval": [{"problem": "p", "solution": "so \\boxed{7}."}],
            "allenai/ai2_arc": [{"id": "a", "question": "q", "answerKey": "A",
                                 "choices": {"text": ["x", "y"], "label": ["A", "B"]}}]}

    def load_dataset(repo, config=None, split=None):
        asked.append((repo, config, split))
        return rows[repo]
    monkeypatch.setattr(datasets, "load_dataset", load_dataset)
    assert mt.load_benchmark("math500")[0].answer == "\\frac12"
    assert mt.load_benchmark("amc23")[0].answer == "27"
    assert mt.load_benchmark("math-train")[0].answer == "7"
    assert choice.load_choice("arc-c")[0].answer == "A"
    assert asked == [("HuggingFaceH4/MATH-500", None, "test"), ("math-ai/amc23", None, "test"),
                     ("DigitalLearningGmbH/MATH-lighteval", None, "train"),
                     ("allenai/ai2_arc", "ARC-Challenge", "test")]


def test_the_boxed_only_grader_takes_the_boxed_answer_alone():
    """As the paper grades: a text without ``\\boxed{}`` is NA (the default grader's fallback
    finds its last integer); a boxed answer reads the same under both, and both reach "wrong"."""
    lenient, strict = (arithmetic.ArithmeticTask(boxed_only=b) for b in (False, True))
    assert lenient.verify("3 + 4 = 7", "7") and not strict.verify("3 + 4 = 7", "7")
    assert strict.extract("3 + 4 = 7") is None
    for task in (lenient, strict):
        assert task.verify("so \\boxed{7}, not 8", "7") and not task.verify("\\boxed{8}", "7")
    mix = arithmetic.ArithmeticMix(levels=((1, 2), (1, 3)), boxed_only=True)
    assert all(mix.task(level).boxed_only for level in mix.levels)
    assert not mix.verify("it is 12", "12") and mix.verify("\\boxed{12}", "12")
    assert registry.load_benchmark("arith:digits=1,terms=2,boxed_only=True")[0].boxed_only
    with pytest.raises(ValueError, match="boxed_only must be True or False"):
        arithmetic.ArithmeticTask(boxed_only="yes")


def test_each_prompt_sets_the_chat_around_the_same_question():
    """The candidate prompts differ only in what comes before the question: a system message
    stating the format, a worked example answered in the format the grader reads (its box holds
    its sum, graded right by the paper's grader), or both; the problems and answers are the
    same under every prompt, and a split is named in the benchmark spec."""
    same = arithmetic.messages((3, 4))
    assert same == [{"role": "user", "content": "What is 3 + 4? Put the final answer in \\boxed{}."}]
    for prompt in arithmetic.PROMPTS:
        chat = arithmetic.messages((3, 4), prompt)
        assert chat[-1] == same[0]
        assert [m["role"] for m in chat[:-1]] == (["system"] if "system" in prompt else []) + \
            (["user", "assistant"] if "example" in prompt else [])
        if "example" in prompt:
            strict = arithmetic.ArithmeticTask(boxed_only=True)
            assert strict.verify(chat[-2]["content"], str(sum(arithmetic.EXAMPLE)))
        task = arithmetic.ArithmeticTask(prompt=prompt)
        assert [p.answer for p in task.problems()] == \
            [p.answer for p in arithmetic.ArithmeticTask().problems()]
    with pytest.raises(ValueError, match="prompt must be one of"):
        arithmetic.ArithmeticTask(prompt="few-shot")
    task, train = registry.load_benchmark("arith:digits=1,terms=2,split='train',prompt='system'")
    assert task.prompt == "system" and [p.id for p in train] == \
        [p.id for p in arithmetic.ArithmeticTask().problems("train")]
    with pytest.raises(ValueError, match="split must be one of"):
        registry.load_benchmark("arith:split='dev'")
