"""One sampling interface, two backends: our own decoding loop over any transformers causal LM
(``TransformersBackend``, the CPU default) and vLLM (GPU).

A prompt is either a plain string (encoded with the tokenizer's own special tokens, plus a BOS
token where the model was trained with one, ``add_bos``) or a list of chat messages (rendered
with the tokenizer's chat template, generation prompt appended). Every backend returns, for
each prompt, ``params.n`` completions with their text, generated token ids (the stop token
included when the completion finished) and whether they finished before ``max_tokens``::

    backend = TransformersBackend(model, tokenizer, add_bos=False, batch_size=64)
    out = backend.generate(prompts, SamplingParams(n=8, temperature=0.6, top_p=0.95,
                                                   max_tokens=512, seed=0))
    out[i][j].text, out[i][j].token_ids, out[i][j].length, out[i][j].finished

Asked for an ``entropy_temperature``, the transformers backend also records while it decodes
the full-vocabulary entropy H(softmax(z_t / entropy_temperature)) at every generated position
(Appendix C.5's TokenEntropy, ``out[i][j].entropies``), so that no teacher-forced pass is
needed afterwards (vLLM returns None there: ``entropy.completion_token_entropy`` scores them).

``temperature=0`` is greedy decoding. Generation with the same seed, prompts and batch size is
reproducible, and does not disturb the caller's random state. The vLLM backend needs a GPU
machine with ``pip install rlvr-dynamics[gpu]``; ``vllm_engine_kwargs`` and
``vllm_sampling_kwargs`` hold its construction logic, which is testable without vLLM.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Protocol, Sequence

import torch
from transformers import DynamicCache, GenerationConfig

from rlvr_dynamics.entropy import token_entropy
from rlvr_dynamics.progress import bar

Prompt = str | list[dict[str, str]]
"""A plain string, or chat messages ``[{"role": ..., "content": ...}, ...]``."""

STOP_TOKENS = ("<|im_end|>", "<|endoftext|>", "<|eot_id|>", "</s>")
"""End-of-turn tokens that end a completion whenever the vocabulary has them (the stop words
of the paper's evaluation harness), besides the model's own end-of-sequence tokens."""


@dataclass(frozen=True)
class SamplingParams:
    """n samples per prompt at ``temperature`` (0 = greedy) and nucleus ``top_p``; no top-k."""

    n: int = 1
    temperature: float = 0.6
    top_p: float = 0.95
    max_tokens: int = 512
    seed: int = 0

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError(f"SamplingParams.n must be >= 1, got {self.n}")
        if self.temperature < 0:
            raise ValueError(f"SamplingParams.temperature must be >= 0, got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"SamplingParams.top_p must lie in (0, 1], got {self.top_p}")
        if self.max_tokens < 1:
            raise ValueError(f"SamplingParams.max_tokens must be >= 1, got {self.max_tokens}")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0


@dataclass(frozen=True)
class Completion:
    """One sampled completion: decoded text (special tokens removed), generated token ids,
    whether it ended with a stop token (False: cut at ``max_tokens``), and the token entropy
    at each generated position when it was asked for (else None)."""

    text: str
    token_ids: tuple[int, ...]
    finished: bool
    entropies: tuple[float, ...] | None = None

    @property
    def length(self) -> int:
        return len(self.token_ids)


class Backend(Protocol):
    tokenizer: Any

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams,
                 entropy_temperature: float | None = None) -> list[list[Completion]]:
        """``params.n`` completions for each prompt, in prompt order; their token entropies at
        ``entropy_temperature`` where the backend can record them."""


def encode(tokenizer, prompt: Prompt, add_bos: bool = False) -> list[int]:
    """The token ids of ``prompt``: chat messages through the chat template (generation prompt
    added), a string with the tokenizer's own special tokens; ``add_bos`` prepends the BOS
    token when it is not already first (models trained on ``<s>prompt``)."""
    if isinstance(prompt, str):
        ids = tokenizer(prompt, add_special_tokens=True)["input_ids"]
    elif isinstance(prompt, list) and all(isinstance(m, dict) for m in prompt):
        text = tokenizer.apply_chat_template(prompt, add_generation_prompt=True, tokenize=False)
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    else:
        raise TypeError(f"a prompt is a string or a list of chat messages, got {type(prompt)}")
    if add_bos:
        if tokenizer.bos_token_id is None:
            raise ValueError("add_bos=True but the tokenizer has no BOS token")
        if not ids or ids[0] != tokenizer.bos_token_id:
            ids = [tokenizer.bos_token_id, *ids]
    return list(ids)


def stop_token_ids(tokenizer, generation_config: GenerationConfig | None = None) -> list[int]:
    """The model's end-of-sequence ids and the ``STOP_TOKENS`` its vocabulary has."""
    ids: set[int] = set()
    for source in (getattr(generation_config, "eos_token_id", None), tokenizer.eos_token_id):
        if source is not None:
            ids.update([source] if isinstance(source, int) else source)
    vocab = tokenizer.get_vocab()
    ids.update(vocab[t] for t in STOP_TOKENS if t in vocab)
    return sorted(ids)


def _completion(tokenizer, new_ids: Sequence[int], stops: set[int],
                entropies: Sequence[float] | None = None) -> Completion:
    """Cut generated ids (and their entropies) after the first stop token and decode them."""
    ids = list(new_ids)
    end = next((i for i, t in enumerate(ids) if t in stops), None)
    if end is not None:
        ids = ids[:end + 1]
    text = tokenizer.decode(ids[:end] if end is not None else ids, skip_special_tokens=True)
    return Completion(text=text, token_ids=tuple(ids), finished=end is not None,
                      entropies=None if entropies is None else tuple(entropies[:len(ids)]))


def nucleus(probs: torch.Tensor, top_p: float) -> tuple[torch.Tensor, torch.Tensor]:
    """The top-p nucleus of each row of ``probs`` (Holtzman et al. 2020; the set of
    transformers' ``TopPLogitsWarper``): ``(p, index)``, the probabilities of the most likely
    tokens in decreasing order, zeroed from the first one whose preceding mass reaches
    ``top_p`` on, and their token ids. Unnormalised (``torch.multinomial`` does not need it).

    Only the ``k`` most likely tokens are sorted, ``k`` growing until their mass reaches
    ``top_p`` in every row: no token beyond them can be in the nucleus, so this is exact, and
    much cheaper than sorting a 50,000-token vocabulary."""
    k = min(64, probs.shape[-1])
    while True:
        p, index = probs.topk(k, dim=-1)
        mass = p.cumsum(dim=-1)
        if k == probs.shape[-1] or bool((mass[:, -1] >= top_p).all()):
            return p * (mass - p < top_p), index
        k = min(8 * k, probs.shape[-1])


def next_tokens(logits: torch.Tensor, params: SamplingParams,
                generator: torch.Generator | None) -> torch.Tensor:
    """One token per row: argmax at temperature 0, else a draw from softmax(logits / T) cut to
    the top-p nucleus (no top-k)."""
    if params.greedy:
        return logits.argmax(dim=-1)
    probs = torch.softmax(logits.float() / params.temperature, dim=-1)
    if params.top_p >= 1:
        return torch.multinomial(probs, 1, generator=generator)[:, 0]
    p, index = nucleus(probs, params.top_p)
    return index.gather(-1, torch.multinomial(p, 1, generator=generator))[:, 0]


class TransformersBackend:
    """Sampling from any transformers causal LM with its own decoding loop (the CPU backend).

    The ``n`` copies of each prompt are laid out one after the other and cut into batches of
    ``batch_size`` rows. In a batch, each distinct prompt is run through the model once (left
    padded, one forward pass) and its KV cache copied to its rows; then one token per row and
    step is drawn (``next_tokens``), and a row that emits a stop token leaves the batch, cache
    included, so that a batch costs what its live rows cost, not ``batch_size`` times its longest
    completion. Random numbers come from a generator seeded with ``params.seed`` at each call:
    the same seed, prompts and batch size give the same samples, and the caller's random state
    is untouched. Greedy decoding (temperature 0) runs one copy per prompt and repeats it.
    ``stops``: the tokens that end a completion (default: ``stop_token_ids``).
    """

    def __init__(self, model, tokenizer, add_bos: bool = False, batch_size: int = 64,
                 progress: bool = True, stops: Sequence[int] | None = None):
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if tokenizer.pad_token_id is None:
            raise ValueError("the tokenizer needs a pad token for batched generation")
        self.model, self.tokenizer = model, tokenizer
        self.add_bos, self.batch_size, self.progress = add_bos, batch_size, progress
        self.stops = list(stops) if stops is not None else stop_token_ids(
            tokenizer, model.generation_config)
        self._logits_to_keep = "logits_to_keep" in inspect.signature(model.forward).parameters

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams,
                 entropy_temperature: float | None = None) -> list[list[Completion]]:
        return self.generate_ids([encode(self.tokenizer, p, self.add_bos) for p in prompts],
                                 params, entropy_temperature)

    @torch.no_grad()
    def generate_ids(self, ids: Sequence[Sequence[int]], params: SamplingParams,
                     entropy_temperature: float | None = None) -> list[list[Completion]]:
        """``generate`` for prompts given as token ids; with ``entropy_temperature`` each
        completion carries H(softmax(z_t / entropy_temperature)) at its positions, recorded
        while decoding."""
        if entropy_temperature is not None and not entropy_temperature > 0:
            raise ValueError(f"entropy_temperature must be > 0, got {entropy_temperature}")
        ids = [list(x) for x in ids]
        copies = 1 if params.greedy else params.n  # greedy samples are all the same
        rows = [i for i in range(len(ids)) for _ in range(copies)]
        out: list[list[Completion]] = [[] for _ in ids]
        device = self.model.device
        generator = None if params.greedy else torch.Generator(device).manual_seed(params.seed)
        stops = set(self.stops)
        was_training = self.model.training
        self.model.eval()
        try:
            for start in bar(range(0, len(rows), self.batch_size), self.progress,
                             desc="generate", leave=False):
                batch = rows[start:start + self.batch_size]
                for i, (new, h) in zip(batch, self._decode([ids[i] for i in batch], params,
                                                           generator, entropy_temperature)):
                    out[i].append(_completion(self.tokenizer, new, stops, h))
        finally:
            self.model.train(was_training)
        return [c * params.n if params.greedy else c for c in out]

    def _decode(self, batch: list[list[int]], params: SamplingParams,
                generator: torch.Generator | None, entropy_temperature: float | None = None
                ) -> list[tuple[list[int], list[float] | None]]:
        """The generated ids of each row of ``batch`` (prompt ids, one list per row; equal
        prompts are next to each other), each cut after its first stop token, with the token
        entropy at each of its positions when ``entropy_temperature`` is given (else None)."""
        device, pad = self.model.device, self.tokenizer.pad_token_id
        # one prefill per distinct prompt; owner[r]: the prefill row of row r
        distinct, owner = [], []
        for x in batch:
            if not distinct or distinct[-1] != x:
                distinct.append(x)
            owner.append(len(distinct) - 1)
        width, steps = max(map(len, distinct)), params.max_tokens
        input_ids = torch.tensor([[pad] * (width - len(x)) + x for x in distinct], device=device)
        mask = torch.zeros(len(distinct), width + steps, dtype=torch.long, device=device)
        for r, x in enumerate(distinct):
            mask[r, width - len(x):] = 1  # prompt and every generated position
        position = (mask[:, :width].cumsum(-1) - 1).clamp(min=0)
        cache = DynamicCache(config=self.model.config)
        extra = {"logits_to_keep": 1} if self._logits_to_keep else {}
        logits = self.model(input_ids=input_ids, attention_mask=mask[:, :width],
                            position_ids=position, cache=cache, use_cache=True,
                            **extra).logits[:, -1]
        owner = torch.tensor(owner, device=device)
        cache.batch_select_indices(owner)
        logits, mask, position = logits[owner], mask[owner], position[owner, -1]

        stop_ids = torch.tensor(self.stops, device=device)
        new = torch.full((len(batch), steps), pad, dtype=torch.long, device=device)
        length = torch.full((len(batch),), steps, dtype=torch.long, device=device)
        record = entropy_temperature is not None
        h = torch.zeros((len(batch), steps) if record else (0, 0), device=device)
        live = torch.arange(len(batch), device=device)  # the batch rows still decoding
        for t in range(steps):
            token = next_tokens(logits, params, generator)
            new[live, t] = token
            if record:
                h[live, t] = token_entropy(logits, temperature=entropy_temperature)
            done = torch.isin(token, stop_ids)
            length[live[done]] = t + 1
            if t + 1 == steps or done.all():
                break
            if done.any():
                keep = (~done).nonzero()[:, 0]
                cache.batch_select_indices(keep)
                live, token, mask, position = live[keep], token[keep], mask[keep], position[keep]
            position = position + 1
            logits = self.model(input_ids=token[:, None], attention_mask=mask[:, :width + t + 1],
                                position_ids=position[:, None], cache=cache,
                                use_cache=True).logits[:, -1]
        lengths = length.tolist()
        entropies = h.tolist() if record else [None] * len(batch)
        return [(row[:n], None if e is None else e[:n])
                for row, e, n in zip(new.tolist(), entropies, lengths)]


# --- vLLM (GPU machines) --------------------------------------------------------------------

def vllm_engine_kwargs(model: str, *, dtype: str = "bfloat16", tensor_parallel_size: int = 1,
                       gpu_memory_utilization: float = 0.5, max_model_len: int = 4096,
                       seed: int = 0) -> dict[str, Any]:
    """Arguments of ``vllm.LLM`` for the paper's evaluation (Appendix C.2: 4,096-token context).

    ``gpu_memory_utilization`` defaults to one half so that the transformers model that scores
    token entropies fits beside the engine on the same GPU.
    """
    if tensor_parallel_size < 1:
        raise ValueError(f"tensor_parallel_size must be >= 1, got {tensor_parallel_size}")
    if not 0 < gpu_memory_utilization <= 1:
        raise ValueError(f"gpu_memory_utilization must lie in (0, 1], got {gpu_memory_utilization}")
    return {"model": str(model), "dtype": dtype, "tensor_parallel_size": tensor_parallel_size,
            "gpu_memory_utilization": gpu_memory_utilization, "max_model_len": max_model_len,
            "seed": seed, "trust_remote_code": False}


def vllm_sampling_kwargs(params: SamplingParams, stops: Sequence[int]) -> dict[str, Any]:
    """Arguments of ``vllm.SamplingParams`` equivalent to ``params`` (no top-k, same stops)."""
    kw: dict[str, Any] = {"n": params.n, "max_tokens": params.max_tokens, "seed": params.seed,
                          "stop_token_ids": list(stops), "skip_special_tokens": True}
    if params.greedy:
        kw.update(temperature=0.0, top_p=1.0)
    else:
        kw.update(temperature=params.temperature, top_p=params.top_p)
    return kw


def import_vllm():
    """``vllm``, or an ImportError that says how to get it."""
    try:
        import vllm
    except Exception as e:  # ImportError, or a CUDA/driver error raised at import
        raise ImportError(f"the vLLM backend needs vLLM on a GPU machine "
                          f"(pip install 'rlvr-dynamics[gpu]'); importing it failed: {e}") from e
    return vllm


class VLLMBackend:
    """Generation with vLLM (GPU machines; the ``paper`` profile's backend).

    ``model`` is a hub name or a local checkpoint folder; ``engine`` overrides
    ``vllm_engine_kwargs``. Completions are cut at the same stop tokens as the transformers
    backend and carry the same fields.
    """

    def __init__(self, model: str, add_bos: bool = False, **engine: Any):
        vllm = import_vllm()
        self._vllm = vllm
        self.llm = vllm.LLM(**vllm_engine_kwargs(model, **engine))
        self.tokenizer = self.llm.get_tokenizer()
        self.add_bos = add_bos
        self.stops = stop_token_ids(self.tokenizer)

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams,
                 entropy_temperature: float | None = None) -> list[list[Completion]]:
        """vLLM's completions; no token entropies (``entropies`` is None)."""
        requests = [{"prompt_token_ids": encode(self.tokenizer, p, self.add_bos)}
                    for p in prompts]
        sampling = self._vllm.SamplingParams(**vllm_sampling_kwargs(params, self.stops))
        outputs = self.llm.generate(requests, sampling, use_tqdm=True)
        stops = set(self.stops)
        return [[_vllm_completion(self.tokenizer, o, stops) for o in out.outputs]
                for out in outputs]


def _vllm_completion(tokenizer, output, stops: set[int]) -> Completion:
    """A vLLM ``CompletionOutput`` as a ``Completion`` ("stop": a stop token ended it, whether or
    not vLLM kept that token in ``token_ids``)."""
    c = _completion(tokenizer, output.token_ids, stops)
    return Completion(c.text, c.token_ids, c.finished or output.finish_reason == "stop")
