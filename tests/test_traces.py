"""Trace statistics of the rollouts (``rl.data.trace_functions``): exact on hand cases,
merged into the run's dynamics, and free: with weight 0 they leave the rewards, the advantages
and the gradient exactly as they are."""
from __future__ import annotations

import dataclasses
import math

import torch

from rlvr_dynamics.tasks.sums import TRACES, Author, SumTask, path_counts, trace
from rlvr_dynamics.rl.data import trace_functions
from rlvr_dynamics.rl.dynamics import records
from test_training import PROMPTS, G, config, generation, tiny  # noqa: F401 (fixture)

torch.set_num_threads(1)

SAMPLES = ["#24", "#14", "3+7=10;10+5=15;15+9=24;#24", "3+7=10;10+5=25!15;15+9=24;#24",
           "3+7=10;10+5=15;15+9=23;#23", "3+7=10!11;11+5=16;16+9=25;#25", "", "+3", "=#24",
           "=#57"]
NONE = {"guess_right": 0, "guess_wrong": 0}


def test_trace_by_hand():
    assert trace("24", "#24") == {"direct_right": 1, "direct_wrong": 0, "stepwise_right": 0,
                                  "stepwise_wrong": 0, **NONE, "corrected": 0,
                                  "corrected_right": 0}
    assert trace("24", "3+7=10;10+5=25!15;15+9=24;#24") == {
        "direct_right": 0, "direct_wrong": 0, "stepwise_right": 1, "stepwise_wrong": 0, **NONE,
        "corrected": 1, "corrected_right": 1}
    # a guess is its own path, right when its number happens to be the answer
    assert trace("24", "=#24") == {"direct_right": 0, "direct_wrong": 0, "stepwise_right": 0,
                                   "stepwise_wrong": 0, "guess_right": 1, "guess_wrong": 0,
                                   "corrected": 0, "corrected_right": 0}
    assert trace("24", "=#57")["guess_wrong"] == 1
    # a "correction" to a wrong value: corrected, but not right
    assert trace("24", "3+7=10!11;11+5=16;16+9=25;#25")["corrected_right"] == 0
    assert set(trace("24", "+3").values()) == {0.0}  # neither path
    # given the problem's terms, steps that begin elsewhere are no stepwise path
    assert trace("24", "3+7=10;10+5=15;15+9=24;#24", (3, 7, 5, 9))["stepwise_right"] == 1
    assert set(trace("24", "2+7=9;9+5=14;#14", (3, 7, 5, 9)).values()) == {0.0}
    assert trace("14", "2+7=9;9+5=14;#14")["stepwise_right"] == 1  # no terms: any step


def test_traces_sum_to_path_counts():
    total = {k: sum(trace("24", c)[k] for c in SAMPLES) for k in TRACES}
    counts = path_counts("24", SAMPLES)
    assert total["direct_right"] + total["direct_wrong"] == counts["direct"]
    assert total["direct_right"] == counts["direct_right"]
    assert total["stepwise_right"] + total["stepwise_wrong"] == counts["stepwise"]
    assert total["stepwise_right"] == counts["stepwise_right"]
    assert total["corrected"] == counts["corrected"] == 2
    assert total["corrected_right"] == 1
    assert (total["guess_right"], total["guess_wrong"]) == (1, 1)


def test_hard_traces_measure_only_problems_beyond_the_direct_path():
    fns = {f.__name__: f for f in trace_functions(SumTask(), Author())}
    assert set(fns) == {f"trace_{h}{k}" for h in ("", "hard_") for k in TRACES}
    prompts = ["<s>3+4+5=", "<s>9+9+8+7=", "<s>9+9+8+7="]   # 12 is within, 33 beyond the cap
    completions = ["#12", "#33", "9+9=18;18+8=26;26+7=33;#33"]
    out = fns["trace_hard_stepwise_right"](prompts=prompts, completions=completions,
                                          answer=["12", "33", "33"])
    assert out == [None, 0.0, 1.0]
    assert fns["trace_direct_right"](prompts=prompts, completions=completions,
                                     answer=["12", "33", "33"]) == [1.0, 1.0, 0.0]
    assert trace_functions(SumTask()) and not [f for f in trace_functions(SumTask())
                                               if "hard" in f.__name__]


def test_records_keep_traces_and_drop_unmeasured_steps():
    log = [{"step": 4, "reward": 0.5, "rewards/trace_corrected/mean": 0.25,
            "rewards/trace_hard_corrected/mean": math.nan, "rewards/correct/mean": 0.5},
           {"step": 8, "rewards/trace_hard_corrected/mean": 0.5}]
    rows = records(log, updates_per_step=4)
    assert rows[0] == {"update": 4, "step": 1.0, "reward": 0.5, "trace_corrected": 0.25}
    assert rows[1] == {"update": 8, "step": 2.0, "trace_hard_corrected": 0.5}


@dataclasses.dataclass(frozen=True)
class ParitySums(SumTask):
    """The sums task with a stand-in reward on which an untrained model earns mixed rewards
    (even length is 'correct'), so that the advantages are not all zero."""

    def verify(self, completion: str, answer: str) -> bool:
        return len(completion) % 2 == 0


def test_zero_weight_traces_leave_advantages_and_gradients_unchanged(tiny, tmp_path,  # noqa: F811
                                                                     monkeypatch):
    import rlvr_dynamics.rl.runs as run
    from test_training import hidden_grads

    task = ParitySums(size=(("train", 32), ("test", 8), ("ood", 8)))
    cfg = config(tiny, "grpo", task=task)
    traced, batch = generation(cfg, tmp_path / "traced")
    assert len(traced.reward_funcs) == 1 + len(TRACES)
    assert traced.reward_weights.tolist() == [1.0] + [0.0] * len(TRACES)
    metrics = traced._metrics["train"]
    assert {f"rewards/trace_{k}/mean" for k in TRACES} <= set(metrics)

    monkeypatch.setattr(run, "trace_functions", lambda *a, **k: [])
    plain, batch_plain = generation(cfg, tmp_path / "plain")
    assert len(plain.reward_funcs) == 1
    assert torch.equal(batch["completion_ids"], batch_plain["completion_ids"])
    A = batch["advantages"]
    assert (A > 0).any() and (A < 0).any(), "the stand-in reward must be mixed"
    assert torch.equal(A, batch_plain["advantages"])
    assert metrics["reward"] == plain._metrics["train"]["reward"]
    assert torch.equal(hidden_grads(traced, batch), hidden_grads(plain, batch_plain))


def test_a_short_run_logs_the_traces(tiny, tmp_path, monkeypatch):  # noqa: F811
    import rlvr_dynamics.rl.runs as run

    monkeypatch.setenv("RLVR_RESULTS", str(tmp_path))
    task = ParitySums(size=(("train", 32), ("test", 8), ("ood", 8)))
    out = run.train(config(tiny, "grpo_n", task=task), "smoke")
    rows = run.load_dynamics(out)
    for r in rows[1:]:
        shares = [r[f"trace_{k}"] for k in ("direct_right", "direct_wrong", "stepwise_right",
                                            "stepwise_wrong")]
        assert all(0 <= s <= 1 for s in shares) and sum(shares) <= 1 + 1e-9
