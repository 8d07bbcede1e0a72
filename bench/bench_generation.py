"""Generation throughput of the CPU backend (``sampling.TransformersBackend``: batched, KV cache,
left padding, one prefill per prompt, finished rows leaving the batch) against plain
one-prompt-at-a-time ``model.generate`` and against batched ``model.generate`` (the backend's
earlier form), on the same model, prompts and settings (T = 0.6, top-p 0.95, no top-k),
measured in one run, and each against its limit: the machine's measured matmul throughput
divided by the model's FLOPs per generated token. Throughput counts the tokens of the
completions (a finished row idling in a batch earns nothing). Two models: the project's tiny
character-level transformer (hidden 128, 4 layers, as in the cpu profile; untrained) on sums,
and SmolLM2-135M-Instruct on chat arithmetic.

Per model it prints
1. FLOPs per generated token from the configuration (``flops_per_token``), checked against
   ``torch.utils.flop_counter`` on one real decoding step;
2. float32 ``torch.mm`` throughput at a decoding step's shapes (warmed up, the bench's thread
   count): per shape with one weight reused, and over the model's own weight matrices in order
   at the rows per step each sampler ran at (the limit: a step reduced to its matmuls), and
   once with torch's default thread count;
3. tokens/s of the backend (also on 4x the prompts in one batch: more rows per step), of a
   prototype (``StaticDecoder``: the decoding step written out into a preallocated KV cache;
   lives here only), of batched and of one-at-a-time ``generate``, each as a fraction of the
   limit (tokens/s x FLOPs/token / GFLOP/s), and their ratios;
4. a torch.profiler profile of one backend call: where its time goes (model matmuls, the rest
   of the forward pass, sampling, cache bookkeeping, the loop) and its costliest ops.

``--threads`` sets torch's thread count for everything. It defaults to 1, not to torch's
default (one per core): on cores shared with another job, two threads made the small matmuls
of a decoding step 20-60x slower here (the OpenMP threads wait for each other). ``--smoke``:
both models on one or two prompts, n = 2, 4 tokens, 1/100 of the matmul timings (seconds
besides loading SmolLM2; checks that the bench runs, its ratios mean nothing).

    .venv/bin/python bench/bench_generation.py [--threads 1] [--models tiny smollm2] [--smoke]
"""
import argparse
import time
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, record_function
from torch.utils.flop_counter import FlopCounterMode
from transformers import DynamicCache, GenerationConfig

from rlvr_dynamics import sampling
from rlvr_dynamics.models import char_tokenizer, load_smollm2, tiny_qwen2
from rlvr_dynamics.sampling import SamplingParams, TransformersBackend, encode, stop_token_ids
from rlvr_dynamics.tasks.arithmetic import ArithmeticTask
from rlvr_dynamics.tasks.sums import ALPHABET, SumTask

DEFAULT_THREADS = torch.get_num_threads()


# --- the model's work per token -------------------------------------------------------------

def matmul_shapes(config) -> list[tuple[str, int, int, int]]:
    """``(name, in, out, count)`` of the weight matrices one row meets in a decoding step of a
    Llama/Qwen2-style decoder: per layer the q, k, v, o projections and the gated MLP's gate,
    up and down, then the LM head."""
    h, i, layers = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    heads = config.num_attention_heads
    kv = getattr(config, "num_key_value_heads", None) or heads
    d = getattr(config, "head_dim", None) or h // heads
    return [("q", h, heads * d, layers), ("k, v", h, kv * d, 2 * layers),
            ("o", heads * d, h, layers), ("gate, up", h, i, 2 * layers),
            ("down", i, h, layers), ("lm head", h, config.vocab_size, 1)]


def flops_per_token(config, context: float) -> float:
    """FLOPs of one decoding step for one row (one generated token), from the configuration:

        F(c) = 2 N_mm + 4 L H d c

    ``N_mm``: the entries of the weight matrices the row is multiplied by (``matmul_shapes``:
    q, k, v, o, gate, up, down in each of the L layers, plus the LM head, tied or not; the
    embedding is a lookup), 2 FLOPs (a multiply and an add) each. ``4 L H d c``: attention at
    context length ``c`` (the keys the new token attends to): per layer and query head of size
    ``d``, the scores q K^T and the weighted values p V are 2 d c FLOPs each. Norms, biases,
    rotary embeddings, activations and the softmax are O(hidden) per layer and left out.
    """
    heads = config.num_attention_heads
    d = getattr(config, "head_dim", None) or config.hidden_size // heads
    n_mm = sum(a * b * k for _, a, b, k in matmul_shapes(config))
    return 2 * n_mm + 4 * config.num_hidden_layers * heads * d * context


@torch.no_grad()
def counted_flops(model, ids: list[int]) -> float:
    """The FLOPs ``FlopCounterMode`` counts in one real decoding step (batch 1, context
    ``len(ids)``: ``ids[:-1]`` prefilled, then ``ids[-1]``), with eager attention so that its
    two products are counted matmuls too."""
    previous = model.config._attn_implementation
    model.set_attn_implementation("eager")
    try:
        cache = DynamicCache(config=model.config)
        x = torch.tensor([ids])
        model(input_ids=x[:, :-1], cache=cache, use_cache=True)
        counter = FlopCounterMode(display=False)
        with counter:
            model(input_ids=x[:, -1:], cache=cache, use_cache=True)
    finally:
        model.set_attn_implementation(previous)
    return counter.get_total_flops()


# --- the machine's limit --------------------------------------------------------------------

def _rate(pairs, seconds: float) -> float:
    """GFLOP/s of ``torch.mm(x, w.t())`` over ``pairs`` (x, w) in turn: one warm-up pass, then
    passes until ``seconds`` have gone by (three at least)."""
    flops = sum(2 * x.shape[0] * x.shape[1] * w.shape[0] for x, w in pairs)
    for x, w in pairs:
        torch.mm(x, w.t())
    passes, start = 0, time.perf_counter()
    while passes < 3 or time.perf_counter() - start < seconds:
        for x, w in pairs:
            torch.mm(x, w.t())
        passes += 1
    return flops * passes / (time.perf_counter() - start) / 1e9


@torch.no_grad()
def step_rate(model, rows: int, seconds: float = 1.0) -> float:
    """GFLOP/s of a decoding step's matmuls alone: a float32 (rows x in) input times each of the
    model's weight matrices (its ``nn.Linear`` layers, LM head last, in the order a step meets
    them; all of them, as a step streams them all from memory)."""
    weights = [m.weight for m in model.modules() if isinstance(m, torch.nn.Linear)]
    return _rate([(torch.randn(rows, w.shape[1]), w) for w in weights], seconds)


@torch.no_grad()
def shape_rates(config, rows: int, seconds: float = 0.3) -> dict[str, float]:
    """GFLOP/s of (rows x hidden) @ (hidden x hidden / intermediate / vocab), one weight reused."""
    h = config.hidden_size
    return {f"{rows}x{h} @ {h}x{n}": _rate([(torch.randn(rows, h), torch.randn(n, h))], seconds)
            for n in (h, config.intermediate_size, config.vocab_size)}


# --- the samplers ---------------------------------------------------------------------------

@dataclass
class Run:
    tokens: int       # tokens of the completions, up to and with their stop token
    seconds: float
    rows: float       # mean rows per decoding step (the batch the matmuls see)

    @property
    def rate(self) -> float:
        return self.tokens / self.seconds


def _config(tokenizer, model, params):
    return GenerationConfig(do_sample=True, temperature=params.temperature, top_p=params.top_p,
                            top_k=0, max_new_tokens=params.max_tokens,
                            eos_token_id=stop_token_ids(tokenizer, model.generation_config),
                            pad_token_id=tokenizer.pad_token_id)


def one_at_a_time(model, tokenizer, prompts, params: SamplingParams, add_bos: bool) -> int:
    """Every sample its own ``model.generate`` call on one prompt; returns tokens generated."""
    config = _config(tokenizer, model, params)
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
    returns the tokens of the completions up to their stop token (every row of a batch runs
    until the batch's last one stops)."""
    stops = stop_token_ids(tokenizer, model.generation_config)
    config = _config(tokenizer, model, params)
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


def backend_stats(out, prompt_lengths, params, batch_size) -> tuple[int, float, float]:
    """Tokens, mean rows per decoding step and mean context of a backend's output: rows are
    laid out prompt by prompt, ``params.n`` each, in batches of ``batch_size``; a batch runs for
    as many steps as its longest completion; generated token t of a completion whose prompt has
    P tokens is drawn from a step whose new token attends to P + t keys."""
    lengths = [(c.length, p) for cs, p in zip(out, prompt_lengths) for c in cs]
    tokens = sum(n for n, _ in lengths)
    steps = sum(max(n for n, _ in lengths[s:s + batch_size])
                for s in range(0, len(lengths), batch_size))
    context = sum(n * p + n * (n + 1) / 2 for n, p in lengths) / tokens
    return tokens, tokens / steps, context


# --- where one backend call spends its time -------------------------------------------------

MATMUL_OPS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::matmul")
ATTENTION_OPS = ("aten::_scaled_dot_product_flash_attention_for_cpu",
                 "aten::_scaled_dot_product_attention_math")


def _labelled(fn, label):
    def wrapped(*args, **kwargs):
        with record_function(label):
            return fn(*args, **kwargs)
    return wrapped


def profile_call(backend, prompts, params, top: int = 8) -> None:
    """One backend call under torch.profiler, with its parts labelled (by wrapping, at run time
    only: the model's forward, ``sampling.next_tokens``, the cache's row selection and the
    decoding of the text); prints the split of its wall time and its costliest ops."""
    model = backend.model
    patches = [(sampling, "next_tokens", "sampling (next_tokens)"),
               (DynamicCache, "batch_select_indices", "cache rows (batch_select_indices)"),
               (sampling, "_completion", "completion text (_completion)")]
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in patches
             if hasattr(owner, name)]
    for owner, name, label in patches:
        if hasattr(owner, name):
            setattr(owner, name, _labelled(getattr(owner, name), label))
    model.forward = _labelled(model.forward, "model forward")
    try:
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            start = time.perf_counter()
            backend.generate(prompts, params)
            wall = time.perf_counter() - start
    finally:
        del model.forward
        for owner, name, fn in saved:
            setattr(owner, name, fn)
    events = {e.key: e for e in prof.key_averages()}

    def total(key):
        return events[key].cpu_time_total / 1e6 if key in events else 0.0

    def self_time(keys):
        return sum(events[k].self_cpu_time_total for k in keys if k in events) / 1e6

    forward, mm, attention = total("model forward"), self_time(MATMUL_OPS), self_time(ATTENTION_OPS)
    parts = [("model matmuls (mm, addmm)", mm), ("attention kernel (sdpa)", attention),
             ("rest of the forward (norms, rotary, masks, KV-cache cat, Python)",
              forward - mm - attention)]
    parts += [(label, total(label)) for _, _, label in patches]
    parts.append(("rest of the loop (token bookkeeping, Python)",
                  wall - forward - sum(t for _, t in parts[3:])))
    in_ops = sum(e.self_cpu_time_total for e in events.values() if e.key.startswith("aten::"))
    parts.append(("(of all the above: outside any torch op, i.e. Python, dispatch, profiler)",
                  wall - in_ops / 1e6))
    print(f"  profile of one backend call: {wall:.2f} s under the profiler")
    for label, t in parts:
        print(f"    {100 * t / wall:5.1f}%  {t:6.2f} s  {label}")
    ops = sorted((e for e in events.values() if e.key.startswith("aten::")),
                 key=lambda e: -e.self_cpu_time_total)[:top]
    print("  costliest ops (self CPU time): " + ", ".join(
        f"{e.key[6:]} {100 * e.self_cpu_time_total / 1e6 / wall:.1f}% ({e.count} calls)"
        for e in ops))


# --- prototypes: the decoding loop with lazy row removal, and a static KV cache -------------

def _rotate_half(x):
    a, b = x.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


def _prefill(model, batch, pad, steps):
    """The backend's prefill: one left-padded forward pass per distinct prompt of ``batch``
    (equal prompts next to each other); returns, per row, the last logits, the mask over
    prompt and generated columns (rows x width + steps, long) and the position of the last
    prompt token, with the width, the ``DynamicCache`` (one row per distinct prompt) and the
    distinct prompt of each row."""
    distinct, owner = [], []
    for x in batch:
        if not distinct or distinct[-1] != x:
            distinct.append(x)
        owner.append(len(distinct) - 1)
    width = max(map(len, distinct))
    ids = torch.tensor([[pad] * (width - len(x)) + x for x in distinct])
    mask = torch.zeros(len(distinct), width + steps, dtype=torch.long)
    for r, x in enumerate(distinct):
        mask[r, width - len(x):] = 1
    position = (mask[:, :width].cumsum(-1) - 1).clamp(min=0)
    cache = DynamicCache(config=model.config)
    logits = model(input_ids=ids, attention_mask=mask[:, :width], position_ids=position,
                   cache=cache, use_cache=True, logits_to_keep=1).logits[:, -1]
    owner = torch.tensor(owner)
    return logits[owner], mask[owner], position[owner, -1], width, cache, owner


class DynamicDecoder:
    """The backend's own decoding step: the model's forward pass on a ``DynamicCache``."""

    def __init__(self, model):
        self.model = model

    def prefill(self, batch, pad, steps):
        logits, mask, position, width, self.cache, owner = _prefill(self.model, batch, pad,
                                                                    steps)
        self.cache.batch_select_indices(owner)
        return logits, mask, position, width

    def select(self, rows, filled):
        self.cache.batch_select_indices(rows)

    def step(self, token, position, mask, col):
        return self.model(input_ids=token[:, None], attention_mask=mask[:, :col + 1],
                          position_ids=position[:, None], cache=self.cache,
                          use_cache=True).logits[:, -1]


class StaticDecoder:
    """PROTOTYPE, not in src: one decoding step of a Llama/Qwen2 model as plain torch ops on its
    own weights (q, k, v fused into one matmul, gate and up into another; ``F.rms_norm``;
    rotary tables computed once), writing keys and values into a preallocated cache
    ``(layers, rows, kv heads, width + steps, head dim)`` instead of ``torch.cat`` onto a
    ``DynamicCache`` at every step, and with none of the model's per-call bookkeeping (output
    capture, mask construction, kwarg handling)."""

    def __init__(self, model):
        c, m = model.config, model.model
        self.model = model
        self.hidden, self.eps = c.hidden_size, c.rms_norm_eps
        self.heads = c.num_attention_heads
        self.kv = getattr(c, "num_key_value_heads", None) or self.heads
        self.d = getattr(c, "head_dim", None) or c.hidden_size // self.heads
        self.embed, self.norm, self.head = (m.embed_tokens.weight, m.norm.weight,
                                            model.lm_head.weight)
        self.layers = []
        for layer in m.layers:
            a, mlp = layer.self_attn, layer.mlp
            assert a.o_proj.bias is None and mlp.down_proj.bias is None
            qkv = (a.q_proj, a.k_proj, a.v_proj)
            bias = (torch.cat([x.bias for x in qkv]) if a.q_proj.bias is not None else None)
            self.layers.append((layer.input_layernorm.weight, torch.cat([x.weight for x in qkv]),
                                bias, a.o_proj.weight, layer.post_attention_layernorm.weight,
                                torch.cat([mlp.gate_proj.weight, mlp.up_proj.weight]),
                                mlp.down_proj.weight))
        with torch.no_grad():
            positions = torch.arange(c.max_position_embeddings)[None]
            cos, sin = m.rotary_emb(self.embed[:1][None], positions)
        self.cos, self.sin = cos[0], sin[0]

    def prefill(self, batch, pad, steps):
        logits, mask, position, width, cache, owner = _prefill(self.model, batch, pad, steps)
        k0 = cache.layers[0].keys
        self.keys = torch.zeros(len(cache.layers), len(batch), k0.shape[1], width + steps,
                                k0.shape[3])
        self.values = torch.zeros_like(self.keys)
        for l, layer in enumerate(cache.layers):
            self.keys[l, :, :, :width] = layer.keys[owner]
            self.values[l, :, :, :width] = layer.values[owner]
        return logits, mask.bool(), position, width

    def select(self, rows, filled):
        """Keep ``rows`` of the cache, copying their first ``filled`` columns only."""
        for name in ("keys", "values"):
            cache = getattr(self, name)
            out = cache.new_empty(cache.shape[0], len(rows), *cache.shape[2:])
            out[:, :, :, :filled] = cache[:, rows, :, :filled]
            setattr(self, name, out)

    def step(self, token, position, mask, col):
        """Logits of the next token for each row, given its last ``token`` at ``position``;
        its key and value go to column ``col`` of the cache, and it attends to columns
        ``0..col`` where ``mask`` (rows x columns, bool) is true."""
        rows, hd, kvd = token.shape[0], self.heads * self.d, self.kv * self.d
        keys, values = self.keys, self.values
        x = self.embed[token]
        cos, sin = self.cos[position][:, None, None], self.sin[position][:, None, None]
        attend = mask[:, None, None, :col + 1]
        for l, (w_in, w_qkv, b_qkv, w_o, w_post, w_gu, w_down) in enumerate(self.layers):
            qkv = F.linear(F.rms_norm(x, (self.hidden,), w_in, self.eps), w_qkv, b_qkv)
            q = qkv[:, :hd].view(rows, self.heads, 1, self.d)
            k = qkv[:, hd:hd + kvd].view(rows, self.kv, 1, self.d)
            keys[l, :, :, col] = (k * cos + _rotate_half(k) * sin)[:, :, 0]
            values[l, :, :, col] = qkv[:, hd + kvd:].view(rows, self.kv, self.d)
            a = F.scaled_dot_product_attention(q * cos + _rotate_half(q) * sin,
                                               keys[l, :, :, :col + 1],
                                               values[l, :, :, :col + 1], attn_mask=attend,
                                               enable_gqa=self.kv != self.heads)
            x = x + F.linear(a.reshape(rows, hd), w_o)
            gate, up = F.linear(F.rms_norm(x, (self.hidden,), w_post, self.eps),
                                w_gu).chunk(2, dim=-1)
            x = x + F.linear(F.silu(gate) * up, w_down)
        return F.linear(F.rms_norm(x, (self.hidden,), self.norm, self.eps), self.head)


@torch.no_grad()
def lazy_decode(decoder, batch, params, generator, stops, pad, compact=1.0):
    """The backend's decoding loop (same prefill, sampling and random stream) on ``decoder``:
    the generated ids of each row of ``batch`` (prompt ids, equal prompts next to each other),
    cut after the first stop token, and the row-steps computed. Finished rows keep running
    (their draws ignored) until fewer than ``compact`` x the cache's rows are live; then the
    cache is cut down to the live rows (1.0: at every finish, as the backend)."""
    steps = params.max_tokens
    logits, mask, position, width = decoder.prefill(batch, pad, steps)
    stop_ids = torch.tensor(stops)
    new = torch.zeros((len(batch), steps), dtype=torch.long)
    length = torch.full((len(batch),), steps, dtype=torch.long)
    row = torch.arange(len(batch))            # the batch row of each cache row
    alive = torch.ones(len(batch), dtype=torch.bool)
    row_steps = 0
    for t in range(steps):
        row_steps += len(row)
        token = sampling.next_tokens(logits, params, generator)
        new[row, t] = token                   # a finished row's later draws are cut below
        done = alive & torch.isin(token, stop_ids)
        length[row[done]] = t + 1
        alive &= ~done
        live = int(alive.sum())
        if t + 1 == steps or live == 0:
            break
        if live < compact * len(row):
            keep = alive.nonzero()[:, 0]
            decoder.select(keep, width + t)
            row, alive, token, mask, position = (row[keep], alive[keep], token[keep],
                                                 mask[keep], position[keep])
        position = position + 1
        logits = decoder.step(token, position, mask, width + t)
    return [r[:n] for r, n in zip(new.tolist(), length.tolist())], row_steps


def lazy_generate(decoder, tokenizer, prompts, params, add_bos, batch_size, compact=1.0):
    """Tokens generated by ``lazy_decode`` over the prompts, laid out and batched as the
    backend does (n copies per prompt, batches of ``batch_size`` rows, seeded generator), and
    the mean rows per decoding step."""
    stops = stop_token_ids(tokenizer, decoder.model.generation_config)
    rows = [encode(tokenizer, p, add_bos) for p in prompts for _ in range(params.n)]
    generator = torch.Generator().manual_seed(params.seed)
    tokens = row_steps = steps = 0
    for s in range(0, len(rows), batch_size):
        ids, n = lazy_decode(decoder, rows[s:s + batch_size], params, generator, stops,
                             tokenizer.pad_token_id, compact)
        tokens += sum(map(len, ids))
        row_steps, steps = row_steps + n, steps + max(map(len, ids))
    return tokens, row_steps / steps


@torch.no_grad()
def static_check(model, decoder, tokenizer, prompts, add_bos, steps: int = 4) -> float:
    """Largest |logit difference| between ``StaticDecoder`` and the model's own forward pass
    over ``steps`` greedy decoding steps on a left-padded batch of distinct prompts."""
    batch = [encode(tokenizer, p, add_bos) for p in prompts]
    reference = DynamicDecoder(model)
    logits, mask, position, width = decoder.prefill(batch, tokenizer.pad_token_id, steps)
    reference.prefill(batch, tokenizer.pad_token_id, steps)
    worst = 0.0
    for t in range(steps):
        token = logits.argmax(-1)
        position = position + 1
        ours = decoder.step(token, position, mask, width + t)
        logits = reference.step(token, position, mask.long(), width + t)
        worst = max(worst, float((ours - logits).abs().max()))
    return worst


# --- the comparison -------------------------------------------------------------------------

def compare(name, model, tokenizer, prompts, params, add_bos, batch_size, single: int,
            repeats: int, wide: list, compact: float = 0.5, timing: float = 1.0) -> None:
    """Everything above for one model. The backend and the prototypes run ``repeats`` times,
    alternated, the fastest run of each kept: the backend's loop with finished rows dropped
    only once fewer than ``compact`` of the rows are live (``DynamicDecoder``), and the
    static-cache ``StaticDecoder`` with rows dropped at every finish, as the backend, and at
    ``compact``. Then the backend once more on the prompts ``wide``, all in one batch (more
    rows per step); batched ``generate`` once; one-at-a-time ``generate`` once, on the first
    ``single`` prompts only (it is slow). ``timing``: seconds of each measurement of the limit
    (a third of it per shape of the matmuls with one weight reused)."""
    model.eval()
    config = model.config
    print(f"{name}: {len(prompts)} prompts x n={params.n}, up to {params.max_tokens} tokens, "
          f"batch {batch_size}, {torch.get_num_threads()} torch thread(s)")
    backend = TransformersBackend(model, tokenizer, add_bos=add_bos, batch_size=batch_size,
                                  progress=False)
    start = time.perf_counter()
    static = StaticDecoder(model)  # one-off, like loading the model: not timed below
    setup = time.perf_counter() - start
    prototypes = {f"lazy row removal, at {compact:g}": (DynamicDecoder(model), compact),
                  "static cache, rows dropped at once": (static, 1.0),
                  f"static cache, lazy at {compact:g}": (static, compact)}
    warm = SamplingParams(n=2, max_tokens=4)
    backend.generate(prompts[:1], warm)  # first calls pay one-off costs
    for decoder, c in prototypes.values():
        lazy_generate(decoder, tokenizer, prompts[:1], warm, add_bos, batch_size, c)
    lengths = [len(encode(tokenizer, p, add_bos)) for p in prompts]
    full = min(batch_size, len(prompts) * params.n)
    best: dict[str, Run] = {}
    for _ in range(repeats):  # alternated, the fastest of each kept: the load varies
        start = time.perf_counter()
        out = backend.generate(prompts, params)
        seconds = time.perf_counter() - start
        tokens, rows, context = backend_stats(out, lengths, params, batch_size)
        times = {f"backend (batch {batch_size})": Run(tokens, seconds, rows)}
        for label, (decoder, c) in prototypes.items():
            start = time.perf_counter()
            tokens, r = lazy_generate(decoder, tokenizer, prompts, params, add_bos, batch_size,
                                      c)
            times[label] = Run(tokens, time.perf_counter() - start, r)
        best = {k: min(r, best.get(k, r), key=lambda x: x.seconds) for k, r in times.items()}
    runs = list(best.items())
    wider = TransformersBackend(model, tokenizer, add_bos=add_bos, progress=False,
                                batch_size=max(batch_size, len(wide) * params.n))
    start = time.perf_counter()
    out = wider.generate(wide, params)
    seconds = time.perf_counter() - start
    tokens, rows, _ = backend_stats(out, [len(encode(tokenizer, p, add_bos)) for p in wide],
                                    params, wider.batch_size)
    runs.append((f"backend, {len(wide)} prompts (batch {wider.batch_size})",
                 Run(tokens, seconds, rows)))
    start = time.perf_counter()
    tokens = batched_generate(model, tokenizer, prompts, params, add_bos, batch_size)
    runs.append(("batched model.generate", Run(tokens, time.perf_counter() - start, full)))
    if single:
        start = time.perf_counter()
        tokens = one_at_a_time(model, tokenizer, prompts[:single], params, add_bos)
        runs.append((f"one at a time ({single} prompts)",
                     Run(tokens, time.perf_counter() - start, 1)))

    # 1. FLOPs per token
    flops = flops_per_token(config, context)
    ids = encode(tokenizer, prompts[0], add_bos)
    counted, formula = counted_flops(model, ids), flops_per_token(config, len(ids))
    n_mm = sum(a * b * k for _, a, b, k in matmul_shapes(config))
    print(f"  FLOPs/token = 2 x {n_mm / 1e6:.3f} M matmul weights + attention at mean context "
          f"{context:.1f} = {flops / 1e6:.3f} MFLOP (check, one decoding step at context "
          f"{len(ids)}: formula {formula / 1e6:.3f}, FlopCounterMode {counted / 1e6:.3f} MFLOP)")
    # 2. the limit, at the rows per step each sampler runs at
    shapes = shape_rates(config, full, 0.3 * timing)
    print("  torch.mm GFLOP/s, one weight reused: " + ", ".join(
        f"{k} {v:.1f}" for k, v in shapes.items()))
    limits = {r: step_rate(model, r, timing)
              for r in sorted({round(run.rows) for _, run in runs})}
    threads = torch.get_num_threads()
    torch.set_num_threads(DEFAULT_THREADS)
    cores = step_rate(model, full, timing)
    torch.set_num_threads(threads)
    print("  limit, torch.mm GFLOP/s over the model's own weights (a step's matmuls alone):\n    "
          + ", ".join(f"{r} rows {g:.1f} (= {g * 1e9 / flops:.0f} tokens/s)"
                      for r, g in limits.items())
          + f"\n    (with torch's default {DEFAULT_THREADS} threads, {full} rows: {cores:.1f})")
    # 3. throughput against the limit
    for label, run in runs:
        achieved = run.rate * flops / 1e9
        print(f"  {label + ':':37s}{run.tokens:5d} tokens in {run.seconds:5.2f} s = "
              f"{run.rate:6.0f} tokens/s = {achieved:5.2f} GFLOP/s = "
              f"{100 * achieved / limits[round(run.rows)]:4.1f}% of the limit at "
              f"{run.rows:.0f} rows/step")
    b = runs[0][1].rate
    wide_run, generate = runs[len(prototypes) + 1][1], runs[len(prototypes) + 2][1]
    print(f"  throughput ratios: backend / batched generate {b / generate.rate:.2f}x"
          + (f", backend / one at a time {b / runs[-1][1].rate:.1f}x" if single else "")
          + f", backend on {len(wide)} prompts / on {len(prompts)} {wide_run.rate / b:.2f}x;\n"
          + "    prototype / backend: " + ", ".join(
              f"{label} {run.rate / b:.2f}x" for label, run in runs[1:len(prototypes) + 1])
          + f" (static cache: largest |logit difference| from the model's forward "
          f"{static_check(model, static, tokenizer, prompts[:3], add_bos):.1e}; one-off "
          f"setup {setup:.2f} s)")
    # 4. where the backend's time goes
    profile_call(backend, prompts, params)


# per model: prompts, n, max tokens, batch, prompts one at a time, repeats, prompts in one batch
SIZES = {"full": {"tiny": (32, 8, 24, 256, 4, 3, 128), "smollm2": (2, 8, 16, 64, 1, 2, 8)},
         "smoke": {"tiny": (2, 2, 4, 4, 1, 1, 4), "smollm2": (1, 2, 4, 2, 1, 1, 2)}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=1,
                    help=f"torch threads for everything (default 1: on shared cores torch's "
                         f"default, {DEFAULT_THREADS} here, can be many times slower)")
    ap.add_argument("--models", nargs="+", default=["tiny", "smollm2"])
    ap.add_argument("--smoke", action="store_true", help="smallest sizes (seconds)")
    args = ap.parse_args()
    sizes, timing = (SIZES["smoke"], 0.01) if args.smoke else (SIZES["full"], 1.0)
    torch.set_num_threads(args.threads)

    def run(name, model, tokenizer, task, add_bos, size):
        prompts, n, tokens, batch, single, repeats, wide = size
        test = [p.prompt for p in task.problems("test")[:max(prompts, wide)]]
        params = SamplingParams(n=n, temperature=0.6, top_p=0.95, max_tokens=tokens, seed=0)
        compare(name, model, tokenizer, test[:prompts], params, add_bos, batch, single,
                repeats, test[:wide], timing=timing)

    if "tiny" in args.models:
        tok = char_tokenizer(ALPHABET)
        run("tiny sums model (1 M parameters, untrained)",
            tiny_qwen2(tok, hidden=128, layers=4, heads=4, seed=0), tok, SumTask(), True,
            sizes["tiny"])
    if "smollm2" in args.models:
        run("SmolLM2-135M-Instruct", *load_smollm2(), ArithmeticTask(), False, sizes["smollm2"])


if __name__ == "__main__":
    main()
