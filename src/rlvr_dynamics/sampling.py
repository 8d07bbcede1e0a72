"""One sampling interface, two backends: transformers ``generate`` (CPU default) and vLLM (GPU).

A prompt is either a plain string (encoded with the tokenizer's own special tokens, plus a BOS
token where the model was trained with one, ``add_bos``) or a list of chat messages (rendered
with the tokenizer's chat template, generation prompt appended). Every backend returns, for
each prompt, ``params.n`` completions with their text, generated token ids (the stop token
included when the completion finished) and whether they finished before ``max_tokens``::

    backend = TransformersBackend(model, tokenizer, add_bos=False, batch_size=64)
    out = backend.generate(prompts, SamplingParams(n=8, temperature=0.6, top_p=0.95,
                                                   max_tokens=512, seed=0))
    out[i][j].text, out[i][j].token_ids, out[i][j].length, out[i][j].finished

``temperature=0`` is greedy decoding. Generation with the same seed, prompts and batch size is
reproducible, and does not disturb the caller's random state. The vLLM backend needs a GPU
machine with ``pip install rlvr-dynamics[gpu]``; ``vllm_engine_kwargs`` and
``vllm_sampling_kwargs`` hold its construction logic, which is testable without vLLM.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, Sequence

import torch
from tqdm.auto import tqdm
from transformers import GenerationConfig

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
    """One sampled completion: decoded text (special tokens removed), generated token ids, and
    whether it ended with a stop token (False: cut at ``max_tokens``)."""

    text: str
    token_ids: tuple[int, ...]
    finished: bool

    @property
    def length(self) -> int:
        return len(self.token_ids)


class Backend(Protocol):
    tokenizer: Any

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams
                 ) -> list[list[Completion]]:
        """``params.n`` completions for each prompt, in prompt order."""


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


def _completion(tokenizer, new_ids: Sequence[int], stops: set[int]) -> Completion:
    """Cut generated ids after the first stop token and decode them."""
    ids = list(new_ids)
    end = next((i for i, t in enumerate(ids) if t in stops), None)
    if end is not None:
        ids = ids[:end + 1]
    text = tokenizer.decode(ids[:end] if end is not None else ids, skip_special_tokens=True)
    return Completion(text=text, token_ids=tuple(ids), finished=end is not None)


class TransformersBackend:
    """Batched ``model.generate`` with a KV cache and left padding (the CPU backend).

    The ``n`` copies of each prompt are laid out one after the other and cut into batches of
    ``batch_size`` sequences; the random state is seeded with ``params.seed`` at the start of
    each call (inside ``torch.random.fork_rng``, so the caller's state is untouched).
    """

    def __init__(self, model, tokenizer, add_bos: bool = False, batch_size: int = 64,
                 progress: bool = True):
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if tokenizer.pad_token_id is None:
            raise ValueError("the tokenizer needs a pad token for batched generation")
        self.model, self.tokenizer = model, tokenizer
        self.add_bos, self.batch_size, self.progress = add_bos, batch_size, progress
        self.stops = stop_token_ids(tokenizer, model.generation_config)

    def generation_config(self, params: SamplingParams) -> GenerationConfig:
        """Every setting explicit, so the model's own generation defaults (top-k 50, repetition
        penalties, ...) never leak in."""
        sample = {"do_sample": True, "temperature": params.temperature, "top_p": params.top_p,
                  "top_k": 0} if not params.greedy else {"do_sample": False}
        return GenerationConfig(**sample, repetition_penalty=1.0,
                                max_new_tokens=params.max_tokens, eos_token_id=self.stops,
                                pad_token_id=self.tokenizer.pad_token_id, use_cache=True)

    @torch.no_grad()
    def generate(self, prompts: Sequence[Prompt], params: SamplingParams
                 ) -> list[list[Completion]]:
        ids = [encode(self.tokenizer, p, self.add_bos) for p in prompts]
        copies = 1 if params.greedy else params.n  # greedy samples are all the same
        rows = [(i, x) for i, x in enumerate(ids) for _ in range(copies)]
        out: list[list[Completion]] = [[] for _ in prompts]
        config = self.generation_config(params)
        device = self.model.device
        was_training = self.model.training
        self.model.eval()
        try:
            with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
                torch.manual_seed(params.seed)
                batches = range(0, len(rows), self.batch_size)
                for start in tqdm(batches, desc="generate", disable=not self.progress,
                                  leave=False):
                    batch = rows[start:start + self.batch_size]
                    width = max(len(x) for _, x in batch)
                    pad = self.tokenizer.pad_token_id
                    input_ids = torch.tensor([[pad] * (width - len(x)) + x for _, x in batch],
                                             device=device)
                    mask = torch.tensor([[0] * (width - len(x)) + [1] * len(x) for _, x in batch],
                                        device=device)
                    gen = self.model.generate(input_ids=input_ids, attention_mask=mask,
                                              generation_config=config)
                    for (i, _), new in zip(batch, gen[:, width:].tolist()):
                        out[i].append(_completion(self.tokenizer, new, set(self.stops)))
        finally:
            self.model.train(was_training)
        return [c * params.n if params.greedy else c for c in out]


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

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams
                 ) -> list[list[Completion]]:
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
