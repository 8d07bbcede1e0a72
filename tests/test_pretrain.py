"""Pretraining: packing changes nothing but speed, a resumed run equals an uninterrupted one, the
exact probabilities used to check convergence agree with plain forward passes."""
import dataclasses

import numpy as np
import pytest
import torch

from rlvr_dynamics import pretrain as pt
from rlvr_dynamics.models import char_tokenizer, load_tiny, tiny_qwen2
from rlvr_dynamics.tasks.sums import ALPHABET, Author, SumTask, corpus, direct_distribution

TINY = dict(hidden=16, layers=1, heads=2, steps=6, batch=8, warmup=2, checkpoint_every=2,
            eval_every=3, task=SumTask(size=(("train", 10), ("test", 10), ("ood", 10))))


@pytest.fixture(scope="module")
def tok_model():
    torch.manual_seed(0)
    tok = char_tokenizer(ALPHABET)
    return tok, tiny_qwen2(tok, hidden=32, layers=2, heads=2, seed=1).eval()


@pytest.fixture(scope="module")
def pairs():
    return corpus(Author(stepwise=0.3), 40, (2, 9), 1, np.random.default_rng(0))


def padded_loss(model, tok, pairs):
    """The reference: right-padded rows with an attention mask, one sequence per row."""
    encoded = [pt.encode_pair(tok, p, c) for p, c in pairs]
    width = max(len(ids) for ids, _ in encoded)
    ids = torch.tensor([x + [tok.pad_token_id] * (width - len(x)) for x, _ in encoded])
    labels = torch.tensor([y + [-100] * (width - len(y)) for _, y in encoded])
    mask = torch.tensor([[1] * len(x) + [0] * (width - len(x)) for x, _ in encoded])
    return model(input_ids=ids, attention_mask=mask, labels=labels).loss


def test_packed_loss_equals_padded_loss(tok_model, pairs):
    tok, model = tok_model
    batch = pt.packed_batch(tok, pairs, row=64)
    assert batch["input_ids"].shape[0] < len(pairs)            # several sequences per row
    with torch.no_grad():
        assert pt.completion_loss(model, batch).item() == pytest.approx(
            padded_loss(model, tok, pairs).item(), rel=1e-5)
        # the cache must be off: with it, attention would cross sequence boundaries
        leaky = model(**batch).loss.item()
    assert leaky != pytest.approx(pt.completion_loss(model, batch).item(), rel=1e-5)


def test_worked_examples_leave_the_choice_of_path_unscored(tok_model):
    tok, model = tok_model
    ids, labels = pt.encode_pair(tok, "3+4=", "3+4=7;#7", unscored=1)
    prompt_len = len("<s>3+4=") - 2  # "<s>" is one token
    assert labels[:prompt_len + 1] == [-100] * (prompt_len + 1)   # prompt and first character
    assert labels[prompt_len + 1:] == ids[prompt_len + 1:]
    pairs = [("3+4=", "#7"), ("3+4=", "3+4=7;#7")]
    scored = pt.packed_batch(tok, pairs)["labels"]
    free = pt.packed_batch(tok, pairs, unscored=[0, 1])["labels"]
    assert (scored != -100).sum() - (free != -100).sum() == 1


def test_sequence_logprobs_match_one_sequence_at_a_time(tok_model, pairs):
    tok, model = tok_model
    got = pt.sequence_logprobs(model, tok, pairs)
    want = []
    with torch.no_grad():
        for p, c in pairs:
            ids, labels = pt.encode_pair(tok, p, c)
            logp = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0], -1)
            want.append(sum(logp[t - 1, ids[t]].item() for t in range(1, len(ids))
                            if labels[t] >= 0))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_first_char_probability_ignores_left_padding(tok_model):
    tok, model = tok_model
    prompts = ["12+34=", "12+34+56+78+90+11="]
    batched = pt.first_char_probabilities(model, tok, prompts, temperature=0.6)
    for p, b in zip(prompts, batched):
        ids = torch.tensor([[tok.bos_token_id] + tok.convert_tokens_to_ids(list(p))])
        with torch.no_grad():
            logits = model(input_ids=ids).logits[0, -1]
        assert b == pytest.approx(torch.softmax(logits / 0.6, -1)[tok.convert_tokens_to_ids("#")]
                                  .item(), rel=1e-4)


def test_author_match_recomputed_by_hand(tok_model):
    tok, model = tok_model
    terms = [(23, 48, 71, 15), (1, 2)]
    m = pt.author_match(model, tok, terms, Author(carry_slip=0.3, carry_cap=None,
                                                   step_slip=0.02, correction=0.03))
    assert m["author_direct_right"] == pytest.approx([0.49, 1.0])
    assert m["author_clean_stepwise"] == pytest.approx([0.95 ** 3, 0.95])
    assert m["units"].tolist() == [2, 0] and m["m"].tolist() == [4, 2]
    for key in ("direct_tv", "direct_right", "clean_stepwise", "stepwise"):
        assert ((0 <= m[key]) & (m[key] <= 1)).all(), key
    # the model's conditional probabilities, recomputed from plain sequence probabilities
    p_direct = pt.first_char_probabilities(model, tok, ["1+2="])[0]
    lp_direct, lp_step = pt.sequence_logprobs(model, tok, [("1+2=", "#3"), ("1+2=", "1+2=3;#3")])
    assert m["direct_right"][1] == pytest.approx(np.exp(lp_direct) / p_direct, rel=1e-5)
    # the stepwise path's first character is the problem's first digit (not all but '#')
    p_first = pt.first_char_probabilities(model, tok, ["1+2="], chars=["1"])[0]
    assert m["clean_stepwise"][1] == pytest.approx(np.exp(lp_step) / p_first, rel=1e-5)
    assert m["stepwise"][1] == pytest.approx(p_first) and p_first < 1 - p_direct
    # only one direct answer is possible for 1+2: the TV is the mass on everything else
    assert m["direct_tv"][1] == pytest.approx(1 - m["direct_right"][1], rel=1e-5)
    assert list(direct_distribution((1, 2), Author())) == ["3"]


def test_resumed_pretraining_equals_an_uninterrupted_run(tmp_path, monkeypatch):
    cfg = pt.PretrainConfig(**TINY)
    straight = pt.pretrain(cfg, tmp_path / "straight")

    real, calls = pt.corpus, {"n": 0}

    def crash_at_step_4(*args, **kwargs):
        if kwargs.get("only") is None:  # the author's own lines: validation, then one per step
            calls["n"] += 1
            if calls["n"] == 1 + 5:
                raise KeyboardInterrupt("simulated crash")
        return real(*args, **kwargs)

    monkeypatch.setattr(pt, "corpus", crash_at_step_4)
    with pytest.raises(KeyboardInterrupt):
        pt.pretrain(cfg, tmp_path / "resumed")
    assert (tmp_path / "resumed" / "checkpoint.pt").is_file()   # saved after step 4
    assert not (tmp_path / "resumed" / "done.json").exists()
    monkeypatch.setattr(pt, "corpus", real)
    resumed = pt.pretrain(cfg, tmp_path / "resumed")

    a, b = load_tiny(straight)[0].state_dict(), load_tiny(resumed)[0].state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    log_a, log_b = (pt.read_json(p / "done.json") for p in (straight, resumed))
    assert log_a["losses"] == log_b["losses"] and log_a["held_out"] == log_b["held_out"]
    assert [s for s, _ in log_a["held_out"]] == [3, 6]
    assert not (tmp_path / "resumed" / "checkpoint.pt").exists()


def test_base_model_is_cached_by_config_with_snapshots(tmp_path, monkeypatch):
    monkeypatch.setenv("RLVR_RESULTS", str(tmp_path))
    cfg = pt.PretrainConfig(**{**TINY, "snapshots": (3,)})
    model, tok = pt.base_model(cfg, "unit")
    assert pt.base_dir(cfg, "unit").parent == tmp_path / "unit" / "base_models"
    early, _ = pt.base_model(cfg, "unit", step=3)
    assert any(not torch.equal(p, q) for p, q in zip(model.parameters(), early.parameters()))
    with pytest.raises(ValueError, match="step=4 is not a snapshot"):
        pt.base_model(cfg, "unit", step=4)
    assert len(pt.pretrain_log(cfg, "unit")["losses"]) == cfg.steps
    other = dataclasses.replace(cfg, seed=1)
    with pytest.raises(FileNotFoundError, match="not trained"):
        pt.pretrain_log(other, "unit")


@pytest.mark.parametrize("field, value, message", [
    ("steps", 0, "steps must be >= 1"),
    ("heads", 3, "divisible by heads"),
    ("operands", (1, 4), "operands must be 2 <= lo <= hi"),
    ("snapshots", (0, 6), "snapshots must lie in"),
    ("warmup", 6, "warmup must lie in"),
    ("lr", 0.0, "lr must be > 0"),
])
def test_bad_config_is_named(field, value, message):
    with pytest.raises(ValueError, match=message):
        pt.PretrainConfig(**{**TINY, field: value})


def test_learning_rate_warms_up_then_decays_to_a_tenth():
    cfg = pt.PretrainConfig(steps=1000, warmup=100)
    f = [pt._lr_factor(cfg, s) for s in range(1000)]
    assert f[0] == pytest.approx(0.01) and f[99] == pytest.approx(1.0)
    assert max(f) == pytest.approx(1.0) and f[-1] == pytest.approx(0.1, abs=1e-4)
    assert all(a >= b for a, b in zip(f[100:], f[101:]))


def test_loss_floor_is_the_mean_author_entropy_per_token():
    cfg = pt.PretrainConfig(author=Author(stepwise=0.0, carry_slip=0.0))
    assert pt.loss_floor(cfg) == 0.0                     # a deterministic author: no entropy
    assert pt.loss_floor(pt.PretrainConfig()) > 0.1


def test_first_tokens_write_a_completions_first_character_and_nothing_else(tmp_path):
    """The ladder's R5 base: with ``first_tokens`` each completion's first character is written
    with a token of its own (and only it: the prompt and the rest of the completion keep the
    plain tokens), decoded back to the same text; without, every character has one token.
    ``tied=False`` gives the output embeddings a matrix of their own, kept through a save."""
    from rlvr_dynamics.models import FIRST, completion_ids, first_ids

    plain, first = char_tokenizer(ALPHABET), char_tokenizer(ALPHABET, first=True)
    assert len(first) == len(plain) + len(ALPHABET)
    assert completion_ids(plain, "#24") == plain.convert_tokens_to_ids(list("#24"))
    ids, labels = pt.encode_pair(first, "3+4=", "#7")
    vocab = first.get_vocab()
    firsts = {vocab[FIRST + c] for c in ALPHABET}
    assert [i for i in ids if i in firsts] == [vocab[FIRST + "#"]] == first_ids(first, "#")
    assert labels[-3] == vocab[FIRST + "#"]  # the first completion token is scored
    assert first.decode(completion_ids(first, "3+4=7;#7")) == "3+4=7;#7"
    assert first("3+4=")["input_ids"] == plain("3+4=")["input_ids"]
    with pytest.raises(ValueError, match=r"\^"):
        char_tokenizer(ALPHABET + FIRST)
    model = tiny_qwen2(first, hidden=16, layers=1, heads=2, tied=False)
    assert model.get_output_embeddings().weight.data_ptr() != \
        model.get_input_embeddings().weight.data_ptr()
    model.save_pretrained(tmp_path)
    first.save_pretrained(tmp_path)
    again, tok = load_tiny(tmp_path)
    assert not again.config.tie_word_embeddings and len(tok) == len(first)
    assert torch.equal(again.lm_head.weight, model.lm_head.weight)
    assert tiny_qwen2(plain, hidden=16, layers=1, heads=2).config.tie_word_embeddings


def test_a_first_token_base_learns_its_first_characters_on_their_own_tokens(tmp_path):
    """Pretrained with ``first_tokens``, the base's exact first-character probabilities sit on
    the first tokens: the plain tokens keep almost no mass at a completion's start."""
    cfg = pt.PretrainConfig(**{**TINY, "steps": 80, "lr": 1e-2, "first_tokens": True,
                               "tied": False})
    model, tok = load_tiny(pt.pretrain(cfg, tmp_path / "base"))
    assert not model.config.tie_word_embeddings
    prompts = ["1+2+3=", "7+8+9+4="]
    on_first = (pt.first_char_probabilities(model, tok, prompts)
                + pt.first_char_probabilities(model, tok, prompts, chars=["1", "7"]))
    ids = torch.tensor([[tok.bos_token_id] + tok.convert_tokens_to_ids(list(prompts[0]))])
    with torch.no_grad():
        p = torch.softmax(model(input_ids=ids).logits[0, -1], -1)
    plain = p[tok.convert_tokens_to_ids(list(ALPHABET))].sum().item()
    assert on_first[0] > 0.5 and plain < 0.1, (on_first, plain)


def test_a_base_keeps_its_key_unless_a_later_field_leaves_its_old_value():
    """``PretrainConfig.LATER``: the fields added after bases were first keyed change the key
    only away from the values that make the bases of before."""
    import json

    cfg = pt.PretrainConfig()
    before = {k: v for k, v in dataclasses.asdict(cfg).items() if k not in pt.LATER}
    assert cfg.key == pt.config_key(before)
    assert json.dumps(before, sort_keys=True, default=str)  # plain values
    for field, value in (("first_tokens", True), ("tied", False)):
        assert dataclasses.replace(cfg, **{field: value}).key != cfg.key
    assert set(pt.LATER) <= {f.name for f in dataclasses.fields(cfg)}
    assert all(getattr(cfg, k) == v for k, v in pt.LATER.items())
