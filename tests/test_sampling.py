"""The sampling interface: prompts of both kinds, n samples per prompt, stop tokens, greedy
decoding, reproducibility, the sampled distribution (temperature and nucleus, no top-k), and
the vLLM backend's construction logic (run against vLLM itself where it imports)."""
import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from rlvr_dynamics import sampling
from rlvr_dynamics.models import char_tokenizer, tiny_qwen2
from rlvr_dynamics.sampling import (Completion, SamplingParams, TransformersBackend, encode,
                                    stop_token_ids, vllm_engine_kwargs, vllm_sampling_kwargs)
from rlvr_dynamics.tasks.sums import ALPHABET

WIDE = "".join(chr(c) for c in range(ord("!"), ord("!") + 80) if chr(c) not in "<>/^")
"""An alphabet of 76 characters: more tokens than transformers' default top-k of 50."""


@pytest.fixture(scope="module")
def tiny():
    tok = char_tokenizer(ALPHABET)
    return tiny_qwen2(tok, hidden=32, layers=2, heads=2, seed=1).eval(), tok


def test_encode_plain_and_chat_prompts(tiny):
    _, tok = tiny
    assert encode(tok, "12+3=") == tok.convert_tokens_to_ids(list("12+3="))
    assert encode(tok, "12+3=", add_bos=True)[0] == tok.bos_token_id
    assert encode(tok, "<s>12+3=", add_bos=True).count(tok.bos_token_id) == 1
    tok.chat_template = ("{% for m in messages %}{{ m['content'] }};{% endfor %}"
                         "{% if add_generation_prompt %}#{% endif %}")
    assert encode(tok, [{"role": "user", "content": "1+2="}]) == tok.convert_tokens_to_ids(
        list("1+2=;#"))
    with pytest.raises(TypeError, match="string or a list of chat messages"):
        encode(tok, 12)


def test_n_completions_per_prompt_cut_at_the_stop_token(tiny):
    model, tok = tiny
    out = TransformersBackend(model, tok, add_bos=True, batch_size=5, progress=False).generate(
        ["1+2=", "33+4=", "5="], SamplingParams(n=4, temperature=1.0, top_p=1.0, max_tokens=9))
    assert [len(cs) for cs in out] == [4, 4, 4]
    for c in (c for cs in out for c in cs):
        assert 1 <= c.length <= 9
        stops = [i for i, t in enumerate(c.token_ids) if t == tok.eos_token_id]
        assert stops == ([c.length - 1] if c.finished else [])
        assert c.finished or c.length == 9
        assert c.text == tok.decode(c.token_ids, skip_special_tokens=True)


def test_same_seed_same_samples_other_seed_other_samples_callers_rng_untouched(tiny):
    model, tok = tiny
    backend = TransformersBackend(model, tok, add_bos=True, batch_size=8, progress=False)
    params = SamplingParams(n=8, temperature=1.0, top_p=1.0, max_tokens=8, seed=5)
    torch.manual_seed(123)
    before = torch.get_rng_state()
    a = backend.generate(["1+2="], params)
    assert torch.equal(torch.get_rng_state(), before)
    assert a == backend.generate(["1+2="], params)
    assert a != backend.generate(["1+2="], SamplingParams(n=8, temperature=1.0, top_p=1.0,
                                                          max_tokens=8, seed=6))


def test_greedy_is_the_argmax_continuation_whatever_the_batching(tiny):
    model, tok = tiny
    prompts = ["1+2=", "33+4=", "5=", "61+7+8="]
    outs = [TransformersBackend(model, tok, add_bos=True, batch_size=b, progress=False).generate(
        prompts, SamplingParams(n=3, temperature=0, max_tokens=6)) for b in (1, 3)]
    assert outs[0] == outs[1]
    for p, cs in zip(prompts, outs[0]):
        assert cs[0] == cs[1] == cs[2]
        ids = encode(tok, p, add_bos=True)
        for t in cs[0].token_ids:  # step by step argmax, no cache, no padding
            with torch.no_grad():
                assert t == int(model(torch.tensor([ids])).logits[0, -1].argmax())
            ids.append(t)


@pytest.mark.parametrize("temperature, entropy_temperature", [(1.0, 1.0), (0.6, 1.0),
                                                                (0.0, 0.7)])
def test_entropies_recorded_while_decoding_equal_a_teacher_forced_pass(tiny, temperature,
                                                                       entropy_temperature):
    from rlvr_dynamics.entropy import completion_token_entropy
    model, tok = tiny
    prompts = ["1+2=", "3+4+5=", "9="]
    params = SamplingParams(n=5, temperature=temperature, top_p=0.9, max_tokens=12, seed=3)
    backend = TransformersBackend(model, tok, add_bos=True, batch_size=7, progress=False)
    out = backend.generate(prompts, params, entropy_temperature=entropy_temperature)
    plain = backend.generate(prompts, params)
    flat = [(i, c) for i, cs in enumerate(out) for c in cs]
    forced = completion_token_entropy(model, [encode(tok, prompts[i], True) for i, _ in flat],
                                      [c.token_ids for _, c in flat],
                                      temperature=entropy_temperature)
    for (_, c), h, q in zip(flat, forced, [c for cs in plain for c in cs]):
        assert len(c.entropies) == c.length == len(h) > 0
        np.testing.assert_allclose(c.entropies, h, rtol=1e-4, atol=1e-5)
        assert (c.text, c.token_ids, q.entropies) == (q.text, q.token_ids, None)  # same draws
    with pytest.raises(ValueError, match="entropy_temperature"):
        backend.generate(prompts, params, entropy_temperature=0.0)


def nucleus(p: np.ndarray, top_p: float) -> np.ndarray:
    """The distribution that nucleus sampling draws from: the smallest set of most likely
    tokens whose mass reaches top_p, renormalised."""
    order = np.argsort(-p)
    keep = np.cumsum(p[order]) - p[order] < top_p
    q = np.zeros_like(p)
    q[order[keep]] = p[order[keep]]
    return q / q.sum()


@pytest.mark.parametrize("temperature, top_p", [(1.0, 1.0), (0.6, 0.95)])
def test_first_token_frequencies_follow_temperature_and_nucleus(temperature, top_p):
    """4,000 first tokens against softmax(z/T) restricted to the nucleus: tokens outside it never
    appear, and the chi-square statistic stays within 6 standard deviations of its mean (a
    model's default top-k of 50 would cut this 80-token vocabulary and fail both)."""
    tok = char_tokenizer(WIDE)
    model = tiny_qwen2(tok, hidden=16, layers=1, heads=2, seed=0).eval()
    with torch.no_grad():  # flatten the random model's first-token distribution a little
        model.lm_head.weight.mul_(0.3)
        z = model(torch.tensor([[tok.bos_token_id]])).logits[0, -1].double()
    q = nucleus(torch.softmax(z / temperature, -1).numpy(), top_p)
    out = TransformersBackend(model, tok, add_bos=True, batch_size=1000, progress=False).generate(
        [""], SamplingParams(n=4000, temperature=temperature, top_p=top_p, max_tokens=1, seed=0))
    counts = np.bincount([c.token_ids[0] for c in out[0]], minlength=len(q))
    assert counts[q == 0].sum() == 0
    support = q > 0
    expected = 4000 * q[support]
    chi2 = ((counts[support] - expected) ** 2 / expected).sum()
    dof = support.sum() - 1
    assert support.sum() > 50
    assert chi2 < dof + 6 * math.sqrt(2 * dof)


def test_sampling_params_are_checked():
    for bad in ({"n": 0}, {"temperature": -1}, {"top_p": 0}, {"top_p": 1.5}, {"max_tokens": 0}):
        with pytest.raises(ValueError):
            SamplingParams(**bad)


def test_stop_tokens_include_end_of_turn_tokens_the_vocabulary_has(tiny):
    _, tok = tiny
    assert stop_token_ids(tok) == [tok.eos_token_id]
    tok2 = char_tokenizer("ab")
    tok2.add_special_tokens({"additional_special_tokens": ["<|im_end|>"]})
    ids = stop_token_ids(tok2, SimpleNamespace(eos_token_id=[0]))
    assert ids == sorted({0, tok2.eos_token_id, tok2.convert_tokens_to_ids("<|im_end|>")})


# --- vLLM ----------------------------------------------------------------------------------

def test_vllm_arguments_follow_the_sampling_params():
    kw = vllm_sampling_kwargs(SamplingParams(n=256, temperature=0.6, top_p=0.95,
                                             max_tokens=3072, seed=7), [2, 5])
    assert kw == {"n": 256, "temperature": 0.6, "top_p": 0.95, "max_tokens": 3072, "seed": 7,
                  "stop_token_ids": [2, 5], "skip_special_tokens": True}
    greedy = vllm_sampling_kwargs(SamplingParams(temperature=0), [2])
    assert greedy["temperature"] == 0.0 and greedy["top_p"] == 1.0
    engine = vllm_engine_kwargs("Qwen/Qwen2.5-Math-7B", tensor_parallel_size=4)
    assert engine["max_model_len"] == 4096 and engine["tensor_parallel_size"] == 4
    with pytest.raises(ValueError, match="gpu_memory_utilization"):
        vllm_engine_kwargs("m", gpu_memory_utilization=0)


def test_vllm_backend_with_a_stand_in_engine(tiny, monkeypatch):
    """VLLMBackend's own logic (engine arguments, prompt encoding, output conversion) with a
    stand-in for the vllm module: the engine echoes what it was asked."""
    _, tok = tiny
    seen = {}

    class LLM:
        def __init__(self, **kw):
            seen["engine"] = kw

        def get_tokenizer(self):
            return tok

        def generate(self, requests, params, use_tqdm=True):
            seen["requests"], seen["params"] = requests, params
            eos = tok.eos_token_id
            return [SimpleNamespace(outputs=[
                SimpleNamespace(token_ids=[4, 5, eos], finish_reason="stop"),
                SimpleNamespace(token_ids=[6, 7], finish_reason="stop"),  # stop token not kept
                SimpleNamespace(token_ids=[8, 9], finish_reason="length")]) for _ in requests]

    fake = SimpleNamespace(LLM=LLM, SamplingParams=lambda **kw: kw)
    monkeypatch.setattr(sampling, "import_vllm", lambda: fake)
    backend = sampling.VLLMBackend("some/model", add_bos=True, seed=3)
    out = backend.generate(["1+2="], SamplingParams(n=3, max_tokens=5, seed=9))
    assert seen["engine"]["model"] == "some/model" and seen["engine"]["seed"] == 3
    assert seen["requests"] == [{"prompt_token_ids": encode(tok, "1+2=", add_bos=True)}]
    assert seen["params"]["n"] == 3 and seen["params"]["stop_token_ids"] == [tok.eos_token_id]
    assert [c.finished for c in out[0]] == [True, True, False]
    assert out[0][0] == Completion(tok.decode([4, 5]), (4, 5, tok.eos_token_id), True)


def test_vllm_itself_accepts_our_arguments():
    try:
        vllm = sampling.import_vllm()
    except ImportError as e:
        pytest.skip(f"vllm does not import on this machine (a GPU extra): {str(e)[:120]}")
    params = vllm.SamplingParams(**vllm_sampling_kwargs(SamplingParams(n=4), [2]))
    assert params.n == 4 and params.top_p == 0.95
