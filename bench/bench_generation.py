"""Generation throughput of the CPU backend (``sampling.TransformersBackend``: batched, KV cache,
left padding, one prefill per prompt, finished rows leaving the batch) against plain
one-prompt-at-a-time ``model.generate`` and against batched ``model.generate`` (the backend's
earlier form), on the same model, prompts and settings (T = 0.6, top-p 0.95, no top-k),
measured in one run. Throughput counts the tokens
of the completions (a finished row idling in a batch earns nothing). Two models: the project's
tiny character-level transformer and SmolLM2-135M-Instruct on chat arithmetic."""
import time

import torch
from transformers import GenerationConfig

from rlvr_dynamics.models import char_tokenizer, load_smollm2, tiny_qwen2
from rlvr_dynamics.sampling import SamplingParams, TransformersBackend, encode, stop_token_ids
from rlvr_dynamics.tasks.arithmetic import ArithmeticTask
from rlvr_dynamics.tasks.sums import ALPHABET, SumTask


def one_at_a_time(model, tokenizer, prompts, params: SamplingParams, add_bos: bool) -> int:
    """Every sample its own ``model.generate`` call on one prompt; returns tokens generated."""
    stops = stop_token_ids(tokenizer, model.generation_config)
    config = GenerationConfig(do_sample=True, temperature=params.temperature, top_p=params.top_p,
                              top_k=0, max_new_tokens=params.max_tokens, eos_token_id=stops,
                              pad_token_id=tokenizer.pad_token_id)
    tokens = 0
    torch.manual_seed(params.seed)
    with torch.no_grad():
        for p in prompts:
            ids = torch.tensor([encode(tokenizer, p, add_bos)])
            for _ in range(params.n):
                out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids),
                                     generation_config=config)
                tokens += out.shape[1] - ids.shape[1]
    return tokens


def batched_generate(model, tokenizer, prompts, params: SamplingParams, add_bos: bool,
                     batch_size: int) -> int:
    """``model.generate`` on left-padded batches of ``batch_size`` rows (n copies per prompt);
    returns the tokens of the completions up to their stop token."""
    stops = stop_token_ids(tokenizer, model.generation_config)
    config = GenerationConfig(do_sample=True, temperature=params.temperature, top_p=params.top_p,
                              top_k=0, max_new_tokens=params.max_tokens, eos_token_id=stops,
                              pad_token_id=tokenizer.pad_token_id)
    rows = [encode(tokenizer, p, add_bos) for p in prompts for _ in range(params.n)]
    tokens = 0
    torch.manual_seed(params.seed)
    with torch.no_grad():
        for start in range(0, len(rows), batch_size):
            batch = rows[start:start + batch_size]
            width = max(map(len, batch))
            pad = tokenizer.pad_token_id
            ids = torch.tensor([[pad] * (width - len(x)) + x for x in batch])
            mask = torch.tensor([[0] * (width - len(x)) + [1] * len(x) for x in batch])
            out = model.generate(input_ids=ids, attention_mask=mask, generation_config=config)
            for row in out[:, width:].tolist():
                ends = [i for i, t in enumerate(row) if t in stops]
                tokens += ends[0] + 1 if ends else len(row)
    return tokens


def compare(name, model, tokenizer, prompts, params, add_bos, batch_size) -> None:
    model.eval()
    start = time.perf_counter()
    out = TransformersBackend(model, tokenizer, add_bos=add_bos, batch_size=batch_size,
                              progress=False).generate(prompts, params)
    t_batched = time.perf_counter() - start
    batched = sum(c.length for cs in out for c in cs)
    start = time.perf_counter()
    single = one_at_a_time(model, tokenizer, prompts, params, add_bos)
    t_single = time.perf_counter() - start
    start = time.perf_counter()
    generate = batched_generate(model, tokenizer, prompts, params, add_bos, batch_size)
    t_generate = time.perf_counter() - start
    rate_b, rate_s, rate_g = batched / t_batched, single / t_single, generate / t_generate
    print(f"{name}: {len(prompts)} prompts x n={params.n}, up to {params.max_tokens} tokens")
    print(f"  backend (batch {batch_size}):          {batched} tokens in {t_batched:.1f} s = "
          f"{rate_b:.0f} tokens/s")
    print(f"  batched model.generate:       {generate} tokens in {t_generate:.1f} s = "
          f"{rate_g:.0f} tokens/s")
    print(f"  one at a time:                {single} tokens in {t_single:.1f} s = "
          f"{rate_s:.0f} tokens/s")
    print(f"  throughput ratios: backend / one at a time {rate_b / rate_s:.1f}x, "
          f"backend / batched generate {rate_b / rate_g:.1f}x")


def main() -> None:
    torch.set_num_threads(1)  # the cores are shared; both sides get the same one
    params = SamplingParams(n=8, temperature=0.6, top_p=0.95, max_tokens=24, seed=0)
    tok = char_tokenizer(ALPHABET)
    tiny = tiny_qwen2(tok, hidden=128, layers=4, heads=4, seed=0)
    compare("tiny sums model (1 M parameters, untrained)", tiny, tok,
            [p.prompt for p in SumTask().problems("test")[:8]], params, True, 256)
    model, tokenizer = load_smollm2()
    params = SamplingParams(n=8, temperature=0.6, top_p=0.95, max_tokens=16, seed=0)
    compare("SmolLM2-135M-Instruct", model, tokenizer,
            [p.prompt for p in ArithmeticTask().problems("test")[:2]], params, False, 64)


if __name__ == "__main__":
    main()
