"""The regime knobs of the language model (issue: the two stages inside a language model): the
path-prior dial moves P(stepwise) to the chosen value and leaves the paths' reliability near
where it was; the training mix holds the share of problems beyond the direct path that was
asked; the boundary probe measures the policy along training without changing the run."""
from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
import torch

from rlvr_dynamics import registry
from rlvr_dynamics.path_prior import Refit, dial_check, path_masses, refit
from rlvr_dynamics.pretrain import PretrainConfig, base_model
from rlvr_dynamics.tasks import sums
from rlvr_dynamics.tasks.sums import Author, SumTask
from rlvr_dynamics.rl.config import TrainConfig
from rlvr_dynamics.rl.data import mix

BASE = PretrainConfig(steps=150, hidden=32, layers=2, batch=32, warmup=10)


@pytest.fixture(scope="module")
def results(tmp_path_factory, one_thread):
    import os
    old = os.environ.get("RLVR_RESULTS")
    os.environ["RLVR_RESULTS"] = str(tmp_path_factory.mktemp("results"))
    yield
    if old is None:
        os.environ.pop("RLVR_RESULTS")
    else:
        os.environ["RLVR_RESULTS"] = old


def test_the_mix_holds_the_share_of_problems_beyond_the_direct_path():
    author, problems = Author(), SumTask().problems("train")
    hard = lambda ps: [sums.direct_success(p.meta["terms"], author) == 0 for p in ps]
    natural = np.mean(hard(problems))
    assert 0.1 < natural < 0.4  # the drawn split: about a fifth beyond the carry cap
    assert mix(problems, author, None) == problems
    for share in (0.0, 0.5, 0.9, 1.0):
        chosen = mix(problems, author, share)
        assert abs(np.mean(hard(chosen)) - share) < 2 / len(chosen)
        assert len(set(p.id for p in chosen)) == len(chosen)
        assert [p.id for p in chosen] == [p.id for p in problems if p in chosen]  # drawn order
    assert len(mix(problems, author, 0.0)) == len(problems) - sum(hard(problems))
    with pytest.raises(ValueError, match="hard_share"):
        mix(problems, author, 1.5)


def test_refits_side_by_side_equal_refits_one_after_the_other(results):
    """``refit_all`` (two workers, the base pretrained first in this process) makes, bit for
    bit, the base that ``refit`` makes inline on one thread; and the comparison can fail: a
    refit to another prior differs."""
    from rlvr_dynamics.path_prior import refit_all
    base = dataclasses.replace(BASE, steps=60, seed=3)
    inline, _ = refit(base, Refit(0.3), "inline")
    refit_all([(base, Refit(0.3)), (base, Refit(0.005))], "pooled", workers=2)
    pooled, _ = refit(base, Refit(0.3), "pooled")  # read back, not refitted
    other, _ = refit(base, Refit(0.005), "pooled")
    same = lambda a, b: all(torch.equal(x, y) for x, y in zip(a.state_dict().values(),
                                                             b.state_dict().values()))
    assert same(inline, pooled)
    assert not same(inline, other)


def test_the_dial_moves_the_prior_and_not_the_paths_reliability(results):
    terms = [p.meta["terms"] for p in SumTask().problems("test")[:40]]
    bases = {"base": base_model(BASE, "test")}
    for q in (0.005, 0.3):
        bases[f"prior {q}"] = refit(BASE, Refit(q), "test")
    table = dial_check(bases, terms, BASE)
    base = table.loc["base"]
    assert 0.005 < base["P(stepwise)"] < 0.2
    loss = "held-out loss after the first character"
    # On this small base, 200 refit steps at the end-of-pretraining rate move the prior well
    # toward the target without reaching it (the cpu base reaches it within 10 %: lab notebook
    # section 18, and the scenario chapter's dial table): at least a factor 2 in the asked
    # direction.
    assert table.loc["prior 0.005", "P(stepwise)"] < base["P(stepwise)"] / 2, table
    assert table.loc["prior 0.3", "P(stepwise)"] > base["P(stepwise)"] * 2, table
    for q in (0.005, 0.3):
        row = table.loc[f"prior {q}"]
        assert row[loss] < 1.05 * base[loss], table  # the rest of the model kept
        assert row["P(right | direct)"] > 0.7 * base["P(right | direct)"] > 0, table
    # found again by its settings, not refitted; the registry names it by a spec field
    model, _ = registry.load_model("sums-base:steps=150,hidden=32,layers=2,batch=32,warmup=10,"
                                   "prior=0.3", "test")
    assert all(torch.equal(a, b) for a, b in zip(model.parameters(),
                                                 bases["prior 0.3"][0].parameters()))
    with pytest.raises(ValueError, match="prior=1.5: Input should be less than 1"):
        registry.check_model("sums-base:prior=1.5")


def run_config(**changes) -> TrainConfig:
    base = dict(algorithm="grpo", model=BASE, task=None, positive_weight=None, seed=0, steps=2,
                num_generations=4, generation_batch=16, update_batch=8, micro_batch=8,
                learning_rate=1e-3, weight_decay=0.01, beta=0.0, epsilon=0.2, dual_clip=3.0,
                entropy_coef=0.0, temperature=1.0, max_completion_length=24, loss_type="dapo",
                eval_every=1, eval_problems=4, eval_batch=4, checkpoint_every=1,
                use_vllm=False, context=64, bf16=False, gradient_checkpointing=False)
    return TrainConfig.from_dict({**base, **changes})


def test_knobs_need_the_tiny_sums_base():
    for field, value in [("path_prior", 0.01), ("hard_share", 0.0)]:
        with pytest.raises(ValueError, match=f"TrainConfig.{field}=.* needs the tiny sums base"):
            run_config(model="Qwen/Qwen2.5-Math-7B", task="sums", **{field: value})
    with pytest.raises(ValueError, match="probe_samples=0 must be >= 1: a model other than"):
        run_config(model="Qwen/Qwen2.5-Math-7B", task="sums", probe_every=2)
    with pytest.raises(ValueError, match=r"TrainConfig.hard_share=2.0 must be None or in"):
        run_config(hard_share=2.0)


def test_a_probed_run_is_measured_at_every_probe_and_trains_as_an_unprobed_one(results):
    """A probed run (without the held-out evaluation, as the scenario's grid runs) records
    the probes and the first-character masses, and trains exactly as an unprobed run with the
    held-out evaluation: neither reads the run's random state."""
    from rlvr_dynamics.rl.dynamics import HELDOUT_KEYS, HELDOUT_PREFIXES
    from rlvr_dynamics.rl.runs import load_dynamics, train

    plain = load_dynamics(train(run_config(path_prior=0.2, hard_share=0.5), "test"))
    probed = load_dynamics(train(run_config(path_prior=0.2, hard_share=0.5, probe_every=1,
                                            probe_problems=3, eval_every=0), "test"))
    assert [r["step"] for r in plain if "greedy_accuracy" in r] == [0, 1, 2]
    assert not any(k in HELDOUT_KEYS or k.startswith(HELDOUT_PREFIXES) for r in probed for k in r)
    plain = [{k: v for k, v in r.items() if k not in HELDOUT_KEYS
              and not k.startswith(HELDOUT_PREFIXES)} for r in plain]
    plain = [r for r in plain if set(r) - {"update", "step"}]  # rows of the held-out alone
    assert [r["step"] for r in probed if "probe" in r] == [0, 1, 2]
    # the first-character masses after every update (2 a step), the problems the probe reads
    first = [r for r in probed if "first" in r]
    assert [r["update"] for r in first] == [0, 1, 2, 3, 4]
    assert all(len(r["first"]["stepwise"]) == 3 for r in first)
    assert [r for r in plain if "first" in r] == []
    measured = [{k: v for k, v in b.items() if k not in ("probe", "first")} for b in probed]
    measured = [b for b in measured if set(b) - {"update", "step"}]  # rows of the masses alone
    assert len(measured) == len(plain)
    for a, b in zip(plain, measured):
        assert a == b  # probing and the masses leave the run as it was
    rec = probed[0]["probe"]
    assert set(rec) == {"paper", "full"} and set(rec["full"]) == {"test"}
    for setting in rec.values():
        for split in setting.values():
            p = np.array(split["p"])
            assert len(p) == 3 and ((0 <= p) & (p <= 1)).all()
            paths = sum(np.array(split[k]) for k in ("direct_right", "direct_wrong",
                                                     "stepwise_right", "stepwise_wrong"))
            # the rest: this small, broad base's completions that follow no path (steps that
            # begin elsewhere than the problem, bare numbers)
            assert (paths <= 1 + 1e-6).all() and (paths > 0.6).all()
            right = np.array(split["direct_right"]) + np.array(split["stepwise_right"])
            assert np.allclose(right, p, atol=0.05)
    # the probe at step 0 measures the refitted base: its stepwise mass (completions that start
    # with a step) is about the base's probability of the problem's first digit first, read
    # from the logits (a first digit can still go astray)
    full = rec["full"]["test"]
    stepwise = np.array(full["stepwise_right"]) + np.array(full["stepwise_wrong"])
    model, tok = registry.load_model(run_config(path_prior=0.2).policy, "test")
    terms = [p.meta["terms"] for p in SumTask().problems("test")[:3]]
    first = path_masses(model, tok, terms)["stepwise"]
    assert np.allclose(probed[0]["first"]["stepwise"], first, atol=1e-6)
    # per problem the estimate is noisy on this broad small base (4 samples below a frontier
    # that holds most of the mass, each carrying a quarter of it); over problems it is unbiased
    assert abs(stepwise.mean() - float(first.mean())) < 0.1, (stepwise, first)


def test_the_dial_sets_three_habits_and_the_guess_after_its_marker(results):
    """A guess habit: the refit moves P(guess) from nothing toward the asked value, the guess
    is followed by ``#`` and a number, and the control (no guess) keeps P(guess) near 0."""
    terms = [p.meta["terms"] for p in SumTask().problems("test")[:40]]
    three, tok = refit(BASE, Refit(0.05, 0.4), "test")
    two, _ = refit(BASE, Refit(0.05), "test")
    table = dial_check({"three": (three, tok), "two": (two, tok)}, terms, BASE)
    assert table.loc["three", "P(guess)"] > 0.2 > 0.01 > table.loc["two", "P(guess)"], table
    assert table.loc["three", "P(direct)"] < table.loc["two", "P(direct)"] - 0.2, table
    ids = torch.tensor([[tok.bos_token_id] + tok.convert_tokens_to_ids(list("3+4+5=" + sums.GUESS))])
    with torch.no_grad():
        after = torch.softmax(three(input_ids=ids).logits[0, -1], -1)
    assert after[tok.convert_tokens_to_ids("#")] > 0.5
    with pytest.raises(ValueError, match="prior \\+ guess < 1"):
        Refit(0.6, 0.5)
    with pytest.raises(ValueError, match="guess= refits the path habits with prior="):
        registry.check_model("sums-base:guess=0.3")
    with pytest.raises(ValueError, match="path_guess=0.3 needs path_prior"):
        run_config(path_guess=0.3)


def test_a_run_probes_densely_at_first_and_stops_after_its_crossover(results):
    """Probes every step up to step 2 and every 4 after; a base already past its crossover
    (P(stepwise) 0.9) stops at the first probe one step after it; the test split's probes hold
    the extra problems beyond the direct path, in the order ``probe.probed`` lists them."""
    from rlvr_dynamics.rl.probe import crossover, probed
    from rlvr_dynamics.rl.runs import load_dynamics, train

    cfg = run_config(path_prior=0.2, steps=8, probe_every=4, probe_problems=3, probe_hard=2,
                     probe_early_every=1, probe_early_until=2)
    dense = load_dynamics(train(cfg, "test"))
    assert [r["step"] for r in dense if "probe" in r] == [0, 1, 2, 4, 8]
    rec = dense[0]["probe"]
    assert set(rec) == {"paper", "full"} and len(rec["full"]["test"]["p"]) == 5
    problems = probed(SumTask(), BASE.author, 3, 2)
    assert [sums.direct_success(p.meta["terms"], BASE.author) == 0 for p in problems["test"][3:]] \
        == [True, True]
    full_only = load_dynamics(train(cfg.replace(probe_paper=False, steps=2), "test"))
    assert set(full_only[0]["probe"]) == {"full"}


def test_a_run_stops_at_the_first_probe_past_its_crossover():
    """``StopAfterCrossover`` on a run's log: the crossover is the first probe whose stepwise
    mass (over the test problems, full distribution) outweighs the direct one; training stops
    at a probe at least ``after`` updates past it, never between probes, never before it."""
    from types import SimpleNamespace

    from rlvr_dynamics.rl.probe import StopAfterCrossover, crossover

    def probe(stepwise: float) -> dict:
        m = {"stepwise_right": [stepwise], "stepwise_wrong": [0.0],
             "direct_right": [0.0], "direct_wrong": [1 - stepwise]}
        return {"full": {"test": m}}

    log = [{"step": 0, "probe": probe(0.1)}, {"step": 2, "loss": 1.0},
           {"step": 4, "probe": probe(0.6)}]
    assert crossover(log) == 4 and crossover(log[:2]) is None
    stop = StopAfterCrossover(after=4)
    for step, extra, expected in [(4, [], False), (6, [{"step": 6, "loss": 1.0}], False),
                                  (8, [{"step": 8, "loss": 1.0}], False),  # no probe at 8
                                  (12, [{"step": 12, "probe": probe(0.7)}], True)]:
        log += extra
        state = SimpleNamespace(log_history=log, global_step=step)
        control = SimpleNamespace(should_training_stop=False)
        stop.on_step_end(None, state, control)
        assert control.should_training_stop is expected, step


def test_the_prediction_is_registered_before_the_runs_and_for_their_base(results):
    """``prediction.register`` measures the base with the runs' own instrument, writes the toy's
    prediction with its time, and reads it back unchanged afterwards; a run trained after it
    begins later and its first probe is the registered measurement; a record of another base,
    or one registered after the run, fails the checks."""
    import json
    import time

    from rlvr_dynamics.chapters import toy_dynamics
    from rlvr_dynamics.regimes import prediction
    from rlvr_dynamics.rl import registration
    from rlvr_dynamics.rl.runs import load_dynamics, train

    D = toy_dynamics.Params.parse({})
    cfg = run_config(path_prior=0.2, path_guess=0.3, probe_every=1, probe_problems=3,
                     probe_hard=1)
    record = prediction.register(cfg, 0.2, D, steps=30, seeds=20, profile="test")
    assert set(record["predictions"]) == {"the toy chapter's", "Adam", "SGD"}
    assert np.isclose(sum(record["inputs"]["pi0"]), 1) and record["inputs"]["G"] == 4
    assert record["inputs"]["pi0"][2] > 0.1  # the guess habit reached the toy's a3
    time.sleep(1.1)  # file times and the record's are kept to the second
    again = prediction.register(cfg, 0.2, D, steps=30, seeds=20, profile="test")
    assert json.dumps(again, sort_keys=True) == json.dumps(record, sort_keys=True)  # read back
    assert set(record["ladder"]) == {"window", "slopes", "R0", "R1"}
    assert set(record["ladder"]["R1"]) == {"GRPO", "GRPO-N", "GRPO, without stepwise"}
    key = registration.content_hash(record)
    unjudged = train(cfg, "test")  # a run that recorded no registration is shown, not judged
    assert not registration.registered_before(record, [unjudged])
    folder = train(cfg.replace(registration=key), "test")
    assert registration.started(folder)["registration"] == key
    run = load_dynamics(folder)
    first = next(r["probe"] for r in run if "probe" in r)
    assert registration.registered_before(record, [folder])
    assert prediction.starts_from(record, first)
    # a copy or a resume rewrites config.json; the record of when the run began stays
    (folder / "config.json").write_text((folder / "config.json").read_text())
    assert registration.registered_before(record, [folder])
    changed = {**record, "registered": "2020-01-01T00:00:00+00:00"}  # another content
    assert not registration.registered_before(changed, [folder])
    other = prediction.register(cfg.replace(path_guess=None), 0.2, D, steps=30, seeds=20,
                                profile="test")
    assert not prediction.starts_from(other, first)
    assert not registration.registered_before(other, [folder])  # not the registration it began under
    later = {**record, "registered": "2999-01-01T00:00:00+00:00"}
    assert registration.started(folder)["time"] < later["registered"]
    checks = prediction.checks({"r": record}, {("r", "grpo", 0): run}, {"r": [folder]})
    assert checks == {"r": {"registered before every run": True,
                            "every run starts from the registered base": True}}


def test_updates_without_stepwise_groups_leave_those_groups_out(results, tmp_path):
    """``TrainConfig.without_stepwise`` (``GRPONTrainer.left_out``): every group in which a
    sample is marked stepwise (right or wrong: the trace functions that read its path) has its
    completion masks and advantages zeroed and leaves the loss's token count; every other
    group, one with a sample marked by another trace included, is as it was; the share left
    out is logged, and such a run trains and probes to its end."""
    from rlvr_dynamics.rl.runs import STEPWISE, build_trainer, load_dynamics, train

    cfg = run_config(path_prior=0.3, probe_every=1, probe_problems=3, without_stepwise=True)
    trainer = build_trainer(cfg, tmp_path / "run", "test")
    assert trainer.args.without == STEPWISE
    trainer.model.train()
    rows = [trainer.train_dataset[i] for i in range(4) for _ in range(4)]
    torch.manual_seed(0)
    batch = trainer._generate_and_score_completions(rows)
    batch = {k: v.clone() if torch.is_tensor(v) else v for k, v in batch.items()}
    batch["advantages"] = torch.linspace(-1, 1, 16)  # every sample's own, none zero
    batch["completion_mask"] = torch.ones_like(batch["completion_mask"])
    marks = torch.zeros(16, len(trainer.reward_func_names))
    names = trainer.reward_func_names
    marks[1, names.index("trace_stepwise_right")] = 1.0   # group 0
    marks[10, names.index("trace_stepwise_wrong")] = 1.0  # group 2
    marks[5, names.index("trace_direct_right")] = 1.0     # group 1: not a stepwise mark
    marks[:, names.index("trace_hard_stepwise_right")] = float("nan")  # not measured
    trainer._rewards_per_func = marks
    before = {k: batch[k].clone() for k in ("advantages", "completion_mask")}
    left = trainer.left_out(batch, 16)
    out = torch.tensor([True] * 4 + [False] * 4 + [True] * 4 + [False] * 4)
    assert (left["completion_mask"][out] == 0).all() and (left["advantages"][out] == 0).all()
    assert torch.equal(left["completion_mask"][~out], before["completion_mask"][~out])
    assert torch.equal(left["advantages"][~out], before["advantages"][~out])
    assert left["num_items_in_batch"] == before["completion_mask"][~out].sum()
    assert trainer._metrics["train"]["frac_left_out"][-1] == 0.5
    run = load_dynamics(train(cfg, "test"))
    assert [r["step"] for r in run if "probe" in r] == [0, 1, 2]


def test_the_first_character_rungs_train_what_they_say(results, tmp_path):
    """The ladder's R3 (``first_character_only``): the loss sees the first completion token
    alone, and its normaliser counts only those; R2 (``readout_only`` too): one training step
    moves an untied copy of the output embeddings and nothing else (the body, the input
    embeddings); a readout alone on every character is refused before any model loads."""
    from rlvr_dynamics.rl.runs import build_trainer, load_final_model, train

    cfg = run_config(path_prior=0.2, steps=1)
    batches = {}
    for first in (False, True):
        trainer = build_trainer(cfg.replace(first_character_only=first), tmp_path / str(first),
                                "test")
        trainer.model.train()
        rows = [trainer.train_dataset[i] for i in range(4) for _ in range(4)]
        torch.manual_seed(0)
        batches[first] = trainer._generate_and_score_completions(rows)
    plain, first = batches[False], batches[True]
    assert torch.equal(plain["completion_ids"], first["completion_ids"])
    assert (plain["completion_mask"][:, 1:].sum() > 0) and (first["completion_mask"][:, 1:] == 0).all()
    assert torch.equal(first["completion_mask"][:, 0], plain["completion_mask"][:, 0])
    assert first["num_items_in_batch"] == plain["completion_mask"][:, 0].sum()

    readout = cfg.replace(first_character_only=True, readout_only=True)
    trainer = build_trainer(readout, tmp_path / "readout", "test")
    trained = [n for n, p in trainer.model.named_parameters() if p.requires_grad]
    assert trained == ["lm_head.weight"], trained
    model, _ = load_final_model(train(readout, "test"))
    base, _ = registry.load_model(readout.policy, "test")
    after, before = dict(model.named_parameters()), dict(base.named_parameters())
    assert not model.config.tie_word_embeddings
    moved = {n for n in before if n in after and not torch.equal(after[n], before[n])}
    assert moved == set(), moved  # every shared parameter, the input embeddings included
    assert not torch.equal(model.lm_head.weight, base.get_output_embeddings().weight)
    with pytest.raises(ValueError, match="readout_only=True needs first_character_only"):
        run_config(path_prior=0.2, readout_only=True)


def test_a_run_from_a_first_token_base_writes_and_reads_its_paths_on_those_tokens(results,
                                                                                  tmp_path):
    """The ladder's R5: a base pretrained with first tokens of its own and untied embeddings,
    refitted to a prior like any other (the dial moves it), starts its rollouts with those
    tokens; they decode to the task's plain text, whose paths the reward and the traces read;
    the probe's first-character masses are the first tokens' (they sum to almost all)."""
    from rlvr_dynamics.models import FIRST, first_ids
    from rlvr_dynamics.rl.runs import build_trainer

    base = dataclasses.replace(BASE, first_tokens=True, tied=False)
    terms = [p.meta["terms"] for p in SumTask().problems("test")[:40]]
    table = dial_check({"base": base_model(base, "test"), "refit": refit(base, Refit(0.3),
                                                                         "test")}, terms, base)
    assert table.loc["refit", "P(stepwise)"] > 2 * table.loc["base", "P(stepwise)"], table
    model, tok = refit(base, Refit(0.3), "test")
    assert not model.config.tie_word_embeddings
    from rlvr_dynamics.path_prior import first_position_batch
    with torch.no_grad():
        p = torch.softmax(model(**first_position_batch(tok, terms)).logits[:, -1], -1)
    on_first = p[:, first_ids(tok, sums.ALPHABET)].sum(-1)
    assert (on_first > 0.95).all(), on_first  # the first tokens carry the choice
    masses = path_masses(model, tok, terms)
    assert np.allclose(masses["direct"], p[:, first_ids(tok, "#")[0]].numpy())
    trainer = build_trainer(run_config(model=base, path_prior=0.3, steps=1), tmp_path, "test")
    rows = [trainer.train_dataset[i] for i in range(4) for _ in range(4)]
    torch.manual_seed(0)
    batch = trainer._generate_and_score_completions(rows)
    firsts = set(first_ids(tok, sums.ALPHABET))
    starts = [int(i) in firsts for i in batch["completion_ids"][:, 0]]
    assert sum(starts) >= 14, batch["completion_ids"][:, :3]
    # (this small base also writes them later now and then: at 150 steps it writes poorly)
    texts = tok.batch_decode(batch["completion_ids"], skip_special_tokens=True)
    name = {i: t for t, i in tok.get_vocab().items()}
    assert texts == ["".join(name[int(i)].removeprefix(FIRST) for i in ids
                             if int(i) not in tok.all_special_ids)
                     for ids in batch["completion_ids"]]
    kinds = [sums.path(t) for t in texts]
    assert kinds.count("direct") + kinds.count("stepwise") >= 12, texts


def test_a_run_of_the_mechanism_options_trains_and_attributes_its_updates(results, tmp_path):
    """Issue 51's options together on the tiny sums base: SGD, the loss on characters 2..L,
    the stepwise slips left out, and the attribution at the first update of both steps, read
    from the real prompts and completions: the run trains to its end, its ``dynamics.json``
    holds one attribution per step asked, each with every kind it read counted, each path's f
    before and after the step, and its gradient the trainer's own."""
    from rlvr_dynamics.rl.attribution import KINDS, PATHS
    from rlvr_dynamics.rl.runs import build_trainer, load_dynamics, train

    cfg = run_config(path_prior=0.3, probe_every=1, probe_problems=3, optimizer="sgd",
                     learning_rate=0.05, entropy_coef=0.01, after_first_character=True,
                     spared_negatives=("stepwise_wrong",), attribution_steps=(0, 1))
    trainer = build_trainer(cfg, tmp_path / "run", "test")
    assert type(trainer.create_optimizer()) is torch.optim.SGD
    assert trainer.args.after_first and trainer.args.spared == ("trace_stepwise_wrong",)
    run = load_dynamics(train(cfg, "test"))
    records = [r for r in run if "attribution" in r]
    assert [r["update"] for r in records] == [0, cfg.updates_per_step]
    for r in records:
        a = r["attribution"]
        assert set(a["count"]) <= set(KINDS) and sum(a["count"].values()) == cfg.update_batch
        assert a["grad_error"] < 1e-4, a["grad_error"]
        for path in PATHS:
            assert {"before", "after", "total", "parts"} <= set(a[path])
