"""The trainer's options for the mechanism of GRPO-N's loss (issue 51, item 4): the optimizer as
a run setting (SGD beside AdamW), the loss on completion tokens 2..L, negative samples of one
kind left out of the loss, each checked against masks and losses computed by hand with a
planted wrong one failing; and the attribution of one update's change of a first-character
log-probability to the kinds of sample, against the change a real optimizer step makes, with a
planted sign error failing. The options leave the folders of earlier runs where they were."""
from __future__ import annotations

import pytest
import torch

from rlvr_dynamics import toy
from rlvr_dynamics.pretrain import PretrainConfig
from rlvr_dynamics.rl import attribution
from rlvr_dynamics.rl.config import LATER, OPTIMIZERS, Settings, TrainConfig
from rlvr_dynamics.store import config_key
from test_training import PROMPTS, G, config, tiny  # noqa: F401 (fixture)

torch.set_num_threads(1)

BASE = PretrainConfig(steps=150, hidden=32, layers=2, batch=32, warmup=10)


def sums_config(**changes) -> TrainConfig:
    """A run of the tiny sums base (never loaded here: the configuration is checked alone)."""
    base = dict(algorithm="grpo_n", model=BASE, task=None, positive_weight=None, seed=0,
                steps=2, num_generations=4, generation_batch=16, update_batch=8, micro_batch=8,
                max_completion_length=24, context=64)
    return TrainConfig.from_dict({**base, **changes})


def trainer_of(cfg: TrainConfig, tmp_path, **args):
    """The ``GRPONTrainer`` of ``cfg`` with ``args`` set on its ``GRPONConfig``, in train mode."""
    from rlvr_dynamics.rl.runs import build_trainer

    trainer = build_trainer(cfg, tmp_path, "smoke")
    for name, value in args.items():
        setattr(trainer.args, name, value)
    trainer.model.train()
    trainer.current_gradient_accumulation_steps = 1
    return trainer


def one_batch(trainer):
    """One generation batch through the trainer's own path, seeded."""
    rows = [trainer.train_dataset[i] for i in range(PROMPTS) for _ in range(G)]
    torch.manual_seed(0)
    return trainer._generate_and_score_completions(rows)


# --- keys ---------------------------------------------------------------------------------

def test_the_new_fields_leave_earlier_runs_keys_alone():
    """At their defaults the fields added for the mechanism (``LATER``) are not in a run's
    ``as_dict`` (so not in its folder's name), a run read back without them is the same run,
    and away from their defaults they are (a run that uses one is another run)."""
    cfg = sums_config(path_prior=0.01, probe_every=2)
    values = cfg.as_dict()
    assert not set(LATER) & set(values)
    assert TrainConfig.from_dict(values) == cfg
    key = config_key(values)
    for change in [dict(optimizer="sgd"), dict(after_first_character=True),
                   dict(spared_negatives=("guess_wrong",)), dict(attribution_steps=(0,))]:
        other = cfg.replace(**change)
        assert set(change) <= set(other.as_dict())
        assert config_key(other.as_dict()) != key
        assert TrainConfig.from_dict(other.as_dict()) == other  # JSON's lists back to tuples


# --- (a) the optimizer --------------------------------------------------------------------

def test_the_optimizer_is_named_as_the_toy_names_it_and_reaches_the_trainer(tiny, tmp_path):
    """``Settings.optimizer`` takes the toy's names; ``sgd`` gives the trainer plain SGD at the
    run's learning rate (no momentum, the weight decay on TRL's decay parameters), ``adam``
    TRL's AdamW as before; a bad value is refused, naming the parameter."""
    assert OPTIMIZERS == toy.OPTIMIZERS
    assert Settings().optimizer == "adam"
    with pytest.raises(ValueError, match="optimizer"):
        Settings(optimizer="rmsprop")
    with pytest.raises(ValueError, match="optimizer"):
        config(tiny, optimizer="SGD")
    made = {}
    for name in OPTIMIZERS:
        trainer = trainer_of(config(tiny, optimizer=name, learning_rate=0.5), tmp_path / name)
        made[name] = trainer.create_optimizer()
    sgd, adam = made["sgd"], made["adam"]
    assert type(sgd) is torch.optim.SGD and type(adam) is torch.optim.AdamW
    for group in sgd.param_groups:
        assert group["lr"] == 0.5 and group["momentum"] == 0 and not group["nesterov"]
    assert sorted(g["weight_decay"] for g in sgd.param_groups) == [0.0, 0.01]
    assert {g["lr"] for g in adam.param_groups} == {0.5}


# --- (b) the loss on tokens 2..L ----------------------------------------------------------

def first_token_out(plain: dict, after: dict) -> bool:
    """Whether ``after`` is ``plain`` with exactly the first completion token out of the loss:
    the same completions and attention, a loss mask of ones but the first column, the
    normaliser counting the rest."""
    hand = plain["completion_mask"].clone()
    hand[:, 0] = 0
    mask = after["completion_mask"] * after["tool_mask"]
    return (torch.equal(after["completion_ids"], plain["completion_ids"])
            and torch.equal(after["completion_mask"], plain["completion_mask"])
            and torch.equal(mask, hand)
            and int(after["num_items_in_batch"]) == int(hand.sum()))


def test_the_loss_after_the_first_token_masks_it_alone(tiny, tmp_path):
    """``after_first``: the loss mask is the completion mask without its first column (by hand),
    the passes still attend to the first token, and the loss is the whole loss less the first
    token's: N_all L_all = N_first L_first + N_after L_after, each L the trainer's own loss on
    its masks (no KL or entropy term, so the loss is a sum over tokens). A mask that leaves out
    the second column instead fails both checks."""
    cfg = config(tiny, "grpo_n")
    plain = one_batch(trainer_of(cfg, tmp_path / "plain"))
    trainer = trainer_of(cfg, tmp_path / "after", after_first=True)
    after = one_batch(trainer)
    assert first_token_out(plain, after)
    first = one_batch(trainer_of(cfg, tmp_path / "first", first_only=True))
    noise = torch.Generator().manual_seed(1)  # the policy off the sampler's: every token's own ratio
    with torch.no_grad():
        for p in trainer.model.parameters():
            p.add_(0.15 * torch.randn(p.shape, generator=noise))

    def total(batch) -> float:
        return float(trainer._compute_loss(trainer.model, batch)) * float(batch["num_items_in_batch"])

    with torch.no_grad():
        assert total(plain) == pytest.approx(total(first) + total(after), rel=1e-5, abs=1e-6)
        wrong = {**after, "tool_mask": torch.ones_like(after["tool_mask"])}
        wrong["tool_mask"][:, 1] = 0
        assert not first_token_out(plain, wrong)
        assert total(plain) != pytest.approx(total(first) + total(wrong), rel=1e-3, abs=1e-6)
    with pytest.raises(ValueError, match="exclude"):
        sums_config(first_character_only=True, after_first_character=True)


# --- (c) one kind of negative sample left out ----------------------------------------------

NAMES = ["correct", "trace_direct_wrong", "trace_stepwise_wrong", "trace_guess_wrong"]


def planted(trainer, batch):
    """``batch`` with planted advantages (every sample's own, the even ones negative) and planted trace
    marks: samples 0-7 stepwise wrong, 8-15 guess wrong, 16-23 direct wrong, the rest none."""
    n = len(batch["advantages"])
    batch = {k: v.clone() if torch.is_tensor(v) else v for k, v in batch.items()}
    batch["advantages"] = torch.tensor([(-1.0) ** (i + 1) * (1 + i) / n for i in range(n)])
    marks = torch.zeros(n, len(NAMES))
    for column, rows in [(2, range(0, 8)), (3, range(8, 16)), (1, range(16, 24))]:
        marks[list(rows), column] = 1.0
    trainer.reward_func_names = NAMES
    trainer._rewards_per_func = marks
    return batch


def spared_exactly(before: dict, after: dict, rows: torch.Tensor) -> bool:
    """Whether ``after`` is ``before`` with exactly the samples ``rows`` out of the loss: their
    loss mask zero, every other sample's as it was, the normaliser counting the rest, the
    advantages and the completion masks (attention) unchanged."""
    mask = after["completion_mask"] * after["tool_mask"]
    kept = before["completion_mask"][~rows]
    return ((mask[rows] == 0).all() and torch.equal(mask[~rows], kept)
            and int(after["num_items_in_batch"]) == int(kept.sum())
            and torch.equal(after["advantages"], before["advantages"])
            and torch.equal(after["completion_mask"], before["completion_mask"]))


@pytest.mark.parametrize("kind,rows", [("stepwise_wrong", range(0, 8)),
                                       ("guess_wrong", range(8, 16)),
                                       ("direct_wrong", range(16, 24))])
def test_negative_samples_of_one_kind_leave_the_loss_and_nothing_else(tiny, tmp_path, kind,
                                                                      rows):
    """``spared``: of the samples that the named trace marks, those with a negative advantage
    (the even ones of the planted batch) leave the loss and its normaliser, and nothing else
    moves: the positive ones it marks, the other kinds' negatives and the unmarked samples
    keep their masks; the share left out is logged. A planted mask that also leaves out the
    kind's positive samples fails; so does the option named in a run (``spared_negatives``:
    the trace's reward function), and a name that is no trace is refused."""
    from rlvr_dynamics.rl.runs import grpo_args

    trainer = trainer_of(config(tiny, "grpo"), tmp_path)
    batch = planted(trainer, one_batch(trainer))
    trainer.args.spared = (f"trace_{kind}",)
    before = {k: v.clone() if torch.is_tensor(v) else v for k, v in batch.items()}
    after = trainer.loss_masked(batch, len(batch["advantages"]))
    expected = torch.zeros(len(batch["advantages"]), dtype=torch.bool)
    expected[[i for i in rows if i % 2 == 0]] = True  # marked and negative
    assert spared_exactly(before, after, expected)
    assert trainer._metrics["train"]["frac_spared"][-1] == pytest.approx(4 / len(expected))
    wrong = expected.clone()
    wrong[list(rows)] = True  # the kind's positive samples too
    assert not spared_exactly(before, after, wrong)
    cfg = sums_config(spared_negatives=(kind,))
    assert grpo_args(cfg, tmp_path / "args").spared == (f"trace_{kind}",)
    with pytest.raises(ValueError, match="spared_negatives"):
        sums_config(spared_negatives=("stepwise",))


def test_the_options_reach_the_trainers_arguments(tmp_path):
    """Each option of a run, in TRL's arguments of its trainer; at their defaults, the
    arguments of before (TRL's AdamW, no token or sample left out)."""
    from rlvr_dynamics.rl.runs import grpo_args

    plain = grpo_args(sums_config(), tmp_path / "plain")
    assert str(plain.optim.value).startswith("adamw_torch")  # TRL's default, left as it was
    assert not plain.after_first and plain.spared == ()
    args = grpo_args(sums_config(optimizer="sgd", after_first_character=True,
                                 spared_negatives=("stepwise_wrong", "guess_wrong")),
                     tmp_path / "args")
    assert args.optim == "sgd" and args.after_first
    assert args.spared == ("trace_stepwise_wrong", "trace_guess_wrong")
    for field, value in [("after_first_character", True), ("spared_negatives", ("guess_wrong",)),
                         ("attribution_steps", (0,))]:
        with pytest.raises(ValueError, match=f"{field}=.* needs the tiny sums base"):
            sums_config(model="Qwen/Qwen2.5-Math-7B", task="sums", **{field: value})
    with pytest.raises(ValueError, match="attribution_steps=.* needs probe_every"):
        sums_config(attribution_steps=(0,))
    with pytest.raises(ValueError, match="attribution_steps=.* must be increasing"):
        sums_config(probe_every=1, attribution_steps=(1, 0))
    with pytest.raises(ValueError, match="attribution_steps=.* must be increasing"):
        sums_config(probe_every=1, attribution_steps=(2,))


# --- (d) the attribution -----------------------------------------------------------------

TERMS = [(23, 45), (61, 7), (8, 30), (55, 12)]


def kinds_planted(n: int) -> list[str]:
    return [attribution.KINDS[i % len(attribution.KINDS)] for i in range(n)]


def measured_step(trainer, batch) -> dict[str, float]:
    """The real update: the trainer's loss, its gradient clipped as the Trainer clips it, one
    optimizer step; each path's f before and after."""
    model = trainer.model
    with torch.no_grad():
        before = {k: float(v) for k, v in attribution.targets(model, trainer.processing_class,
                                                              TERMS).items()}
    model.zero_grad()
    trainer._compute_loss(model, batch).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), trainer.args.max_grad_norm)
    trainer.optimizer.step()
    model.zero_grad()
    with torch.no_grad():
        after = attribution.targets(model, trainer.processing_class, TERMS)
    return {k: float(after[k]) - before[k] for k in after}


def agrees(record: dict, change: dict[str, float], tolerance: float) -> bool:
    """Whether each path's predicted change (the sum of its parts) is the measured ``change``
    within ``tolerance`` of its size."""
    return all(abs(sum(record[p]["parts"].values()) - change[p])
               <= tolerance * abs(change[p]) + 1e-7 for p in change)


@pytest.mark.parametrize("optimizer,lr,warm", [("sgd", 5e-3, 0), ("adam", 5e-5, 2)])
def test_the_attribution_predicts_one_real_update_and_its_parts_add_up(tiny, tmp_path,
                                                                       optimizer, lr, warm):
    """On a tiny model, one update's batch with planted kinds (every kind present): the
    parts (the kinds, the entropy bonus, the optimizer's momentum and weight decay) add up to
    the prediction from the whole gradient to rounding; the kinds' gradients add up to the
    loss's without its entropy bonus; and the prediction is the change that one real
    optimizer step makes, to first order (SGD at a small step; Adam after ``warm`` steps, its
    state read as it stands): within 10 % on each path, where the second-order remainder
    measured 1-4 % at these steps and grew 10-16x at four times the step. The kinds' rows partition the batch: a planted overlap breaks
    the sum, and a planted sign error on the largest part breaks the agreement."""
    cfg = config(tiny, "grpo", optimizer=optimizer, learning_rate=lr, beta=1e-3,
                 entropy_coef=1e-3, generation_batch=PROMPTS * G, update_batch=PROMPTS * G,
                 micro_batch=PROMPTS * G)
    trainer = trainer_of(cfg, tmp_path)
    trainer.create_optimizer()
    batch = one_batch(trainer)
    for _ in range(warm):  # Adam's moments from earlier updates
        measured_step(trainer, batch)
    kinds = kinds_planted(len(batch["advantages"]))
    record = attribution.attribute(trainer, [batch], TERMS, kinds=[kinds])
    assert record["count"] == {k: kinds.count(k) for k in attribution.KINDS}
    assert set(record["stepwise"]["parts"]) == {*attribution.KINDS, *attribution.OWN}
    for path in attribution.PATHS:
        parts = record[path]["parts"]
        assert sum(parts.values()) == pytest.approx(record[path]["total"], rel=1e-5, abs=1e-9)
        assert any(abs(parts[k]) > 1e-3 * abs(record[path]["total"]) for k in attribution.KINDS)
    if optimizer == "sgd":
        assert record["stepwise"]["parts"]["momentum"] == 0.0
    else:
        assert record["stepwise"]["parts"]["momentum"] != 0.0

    change = measured_step(trainer, batch)
    assert agrees(record, change, tolerance=0.1), (record, change)
    flipped = {p: {**record[p], "parts": dict(record[p]["parts"])} for p in change}
    for p in change:
        largest = max(attribution.KINDS, key=lambda k: abs(flipped[p]["parts"][k]))
        flipped[p]["parts"][largest] *= -1
    assert not agrees(flipped, change, tolerance=0.1)


def test_the_kinds_gradients_partition_the_loss_and_an_overlap_fails(tiny, tmp_path,
                                                                      monkeypatch):
    """The kinds' gradients add up to the gradient of the loss without its entropy bonus, and
    with the bonus (``entropy``) to the whole loss's (``total``); a planted overlap of two
    kinds' rows breaks it."""
    cfg = config(tiny, "grpo_n", beta=1e-3, entropy_coef=1e-3)
    trainer = trainer_of(cfg, tmp_path)
    trainer.create_optimizer()
    batch = one_batch(trainer)
    kinds = kinds_planted(len(batch["advantages"]))
    params = attribution.parameters(trainer.optimizer)

    def residual() -> float:
        g = attribution.gradients(trainer, [batch], [kinds], params)
        parts = [n for n in g if n != "total"]
        return max(float((sum(g[n][i] for n in parts) - t).abs().max()) /
                   float(t.abs().max() + 1e-12) for i, t in enumerate(g["total"]))

    assert residual() < 1e-4
    rows_of = attribution.rows_of
    other = next(i for i, (k, a) in enumerate(zip(kinds, batch["advantages"]))
                 if a < 0 and k != "stepwise_wrong")  # a sample that GRPO-N trains on

    def overlapping(kinds, kind):
        rows = rows_of(kinds, kind)
        if kind == "stepwise_wrong":
            rows[other] = True  # counted here too
        return rows

    monkeypatch.setattr(attribution, "rows_of", overlapping)
    assert residual() > 1e-2


def test_the_kinds_are_read_from_the_batch_by_hand(tiny, tmp_path):
    """``kinds_of``: each sample's path on its prompt's terms, right or wrong against their sum,
    read back from the batch's token ids."""
    from rlvr_dynamics.models import char_tokenizer
    from rlvr_dynamics.tasks.sums import ALPHABET

    tok = char_tokenizer(ALPHABET)
    rows = [("12+34=", "#46", "direct_right"), ("12+34=", "#47", "direct_wrong"),
            ("5+6=", "5+6=11#11", "stepwise_right"), ("5+6=", "5+6=12#12", "stepwise_wrong"),
            ("5+6=", "=#11", "guess_right"), ("5+6=", "=#3", "guess_wrong"),
            ("5+6=", "6+5=11#11", "other"), ("5+6=", "11", "other")]
    width_p, width_c = max(len(p) for p, *_ in rows) + 1, max(len(c) for _, c, _ in rows)

    def ids(text: str, width: int, left: bool):
        row = tok.convert_tokens_to_ids(list(text))
        pad = [tok.pad_token_id] * (width - len(row))
        mask = [0] * len(pad) + [1] * len(row) if left else [1] * len(row) + [0] * len(pad)
        return (pad + row if left else row + pad), mask

    prompts = [ids(p, width_p - 1, True) for p, *_ in rows]
    prompts = [([tok.bos_token_id] + r, [1] + m) for r, m in prompts]
    completions = [ids(c, width_c, False) for _, c, _ in rows]
    batch = {"prompt_ids": torch.tensor([r for r, _ in prompts]),
             "prompt_mask": torch.tensor([m for _, m in prompts]),
             "completion_ids": torch.tensor([r for r, _ in completions]),
             "completion_mask": torch.tensor([m for _, m in completions])}
    assert attribution.kinds_of(tok, batch) == [k for *_, k in rows]


def test_an_attributed_run_trains_as_one_that_is_not_and_checks_its_gradient(tiny, tmp_path):
    """``Attribution`` during training (two micro-batches per update, so that the update's
    micro-batches are read from TRL's buffer): at the updates asked, a record whose gradient is
    the one the trainer accumulated (``grad_error``), with f before and after the step; the
    parameters at the end are those of the same run without it, and TRL's logged metrics
    the same. A planted callback that reads the wrong micro-batches shows a large
    ``grad_error``."""
    cfg = config(tiny, "grpo_n", micro_batch=PROMPTS * G // 4, eval_every=0)
    trained = {}
    for attributed in (False, True):
        trainer = trainer_of(cfg, tmp_path / str(attributed))
        if attributed:
            trainer.add_callback(attribution.Attribution(trainer, TERMS, [0, 3]))
        torch.manual_seed(0)
        trainer.train()
        trained[attributed] = trainer
    plain, attributed = trained[False], trained[True]
    for (name, a), (_, b) in zip(plain.model.named_parameters(),
                                 attributed.model.named_parameters()):
        assert torch.equal(a, b), name
    records = [r for r in attributed.state.log_history if "attribution" in r]
    assert [r["step"] for r in records] == [0, 3]
    for r in records:
        a = r["attribution"]
        assert a["grad_error"] < 1e-4, a["grad_error"]
        assert sum(a["count"].values()) == cfg.update_batch
        for path in attribution.PATHS:
            assert {"before", "after", "total", "parts"} <= set(a[path])
    class Shifted(attribution.Attribution):  # planted: reads the next micro-batches
        def on_pre_optimizer_step(self, args, state, control, **kwargs) -> None:
            self.trainer._step += 1
            try:
                super().on_pre_optimizer_step(args, state, control, **kwargs)
            finally:
                self.trainer._step -= 1

    shifted = trainer_of(cfg, tmp_path / "shifted")
    shifted.add_callback(Shifted(shifted, TERMS, [0, 3]))
    shifted.train()
    assert all(r["attribution"]["grad_error"] > 0.1 for r in shifted.state.log_history
               if "attribution" in r)

    def metrics(trainer) -> list[dict]:
        return [{k: v for k, v in r.items() if "time" not in k and "per_second" not in k}
                for r in trainer.state.log_history if "loss" in r]

    assert metrics(attributed) == metrics(plain) and metrics(plain)
