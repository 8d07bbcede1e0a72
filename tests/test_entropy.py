"""Appendix C.5's entropies: answer-level on hand-computed cases; token-level against
torch's categorical entropy, and the teacher-forced pass against the logits the model produced
while generating, whatever the batching."""
import math

import numpy as np
import pytest
import torch

from rlvr_dynamics.entropy import (answer_entropy, completion_token_entropy, mean_token_entropy,
                                   token_entropy)
from rlvr_dynamics.models import char_tokenizer, tiny_qwen2
from rlvr_dynamics.sampling import SamplingParams, TransformersBackend, encode
from rlvr_dynamics.tasks.sums import ALPHABET


def test_answer_entropy_hand_cases():
    assert answer_entropy(["3", "3", "3"]) == 0.0
    assert answer_entropy(["3", "4", "3", "4"]) == pytest.approx(math.log(2))
    assert answer_entropy(["1", "2", "3", "4"]) == pytest.approx(math.log(4))
    # 2/4 "7", 1/4 "8", 1/4 NA
    assert answer_entropy(["7", "7", "8", None]) == pytest.approx(
        -(0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25)))


def test_unextractable_answers_are_one_shared_na_answer():
    assert answer_entropy([None, None, None]) == 0.0
    assert answer_entropy([None, None, "NA", "NA"]) == pytest.approx(math.log(2))  # "NA" is an answer


def test_answer_entropy_needs_answers():
    with pytest.raises(ValueError):
        answer_entropy([])


def test_token_entropy_matches_torch_categorical():
    logits = torch.randn(3, 5, 11, dtype=torch.float64) * 3
    want = torch.distributions.Categorical(logits=logits).entropy()
    assert torch.allclose(token_entropy(logits), want.float(), atol=1e-6)
    assert token_entropy(torch.zeros(1, 7))[0].item() == pytest.approx(math.log(7))
    mask = torch.tensor([[1, 0, 1, 1, 0]] * 3)
    assert torch.all(token_entropy(logits, mask)[mask == 0] == 0)


@pytest.fixture(scope="module")
def tiny():
    torch.manual_seed(0)
    tok = char_tokenizer(ALPHABET)
    return tiny_qwen2(tok, hidden=32, layers=2, heads=2, seed=3).eval(), tok


def test_teacher_forced_entropy_equals_the_entropy_of_the_generation_logits(tiny):
    """The scoring pass sees the distributions generate() sampled from, for every position of
    every completion, including the stop token's."""
    model, tok = tiny
    prompts = ["12+3=", "4+55+6=", "7="]
    backend = TransformersBackend(model, tok, add_bos=True, batch_size=8, progress=False)
    completions = backend.generate(prompts, SamplingParams(n=3, temperature=1.0, top_p=1.0,
                                                           max_tokens=10, seed=4))
    pids = [encode(tok, p, add_bos=True) for p in prompts for _ in range(3)]
    cids = [c.token_ids for cs in completions for c in cs]
    got = completion_token_entropy(model, pids, cids)
    for p, c, h in zip(pids, cids, got):
        assert len(h) == len(c)
        with torch.no_grad():  # one prompt at a time, generation's own raw logits
            out = model.generate(torch.tensor([p]), max_new_tokens=len(c), do_sample=False,
                                 output_logits=True, return_dict_in_generate=True,
                                 pad_token_id=tok.pad_token_id, eos_token_id=[],
                                 prefix_allowed_tokens_fn=lambda b, ids, c=c, n=len(p):
                                 [c[len(ids) - n]])  # force the sampled continuation
        want = token_entropy(torch.stack(out.logits, dim=1)[0]).numpy()
        np.testing.assert_allclose(h, want, atol=1e-4)


def test_batching_and_temperature(tiny):
    model, tok = tiny
    rng = np.random.default_rng(0)
    pids = [[1] + list(rng.integers(3, 18, size=rng.integers(1, 9))) for _ in range(7)]
    cids = [list(rng.integers(3, 18, size=rng.integers(0, 12))) for _ in range(7)]
    big = completion_token_entropy(model, pids, cids, max_batch_tokens=10_000)
    small = completion_token_entropy(model, pids, cids, max_batch_tokens=1, chunk=2)
    for a, b, c in zip(big, small, cids):
        assert len(a) == len(c)
        np.testing.assert_allclose(a, b, atol=1e-5)
    hot = completion_token_entropy(model, pids[:1], cids[:1], temperature=2.0)[0]
    with torch.no_grad():
        logits = model(torch.tensor([pids[0] + cids[0]])).logits[0, len(pids[0]) - 1:-1]
    np.testing.assert_allclose(hot, token_entropy(logits / 2.0).numpy(), atol=1e-5)


def test_scoring_restores_training_mode(tiny):
    model, _ = tiny
    model.train()
    completion_token_entropy(model, [[1, 3]], [[4, 5]])
    assert model.training
    model.eval()


def test_mean_token_entropy_averages_completions_and_skips_empty_ones():
    assert mean_token_entropy([0.2, 0.4, None, float("nan")]) == pytest.approx(0.3)
    with pytest.raises(ValueError):
        mean_token_entropy([None])
