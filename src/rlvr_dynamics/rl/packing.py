"""Packed passes: a batch of prompt-and-completion rows as TRL lays it out (prompts
left-padded, completions right-padded, a group's G rows repeating its prompt) rewritten so
that the model computes each distinct prompt once and no completion padding.

* The *prompt rows*: each distinct prompt but its last token, one row each, left-padded to
  the longest (prompts of a batch differ by a few tokens), their positions counted from 0.
  They go through the model first; their keys and values, laid end to end
  (``one_row``), are what the completions attend to.
* The *completion row*: for each completion, a *segment* made of its prompt's last token and
  the completion but its last token (exactly the inputs whose next tokens are the
  completion's; the last token is never an input that anything scores), the segments one
  after the other. A segment attends to its own prompt and causally to itself, never to
  another segment or prompt (a block-diagonal-after-prompt causal mask, ``allowed``), its
  positions continuing from its prompt's. Every completion token is thus scored from exactly
  the context that TRL's own row gives it (shifted by the prompt's padding, which rotary
  attention does not see), and every position of the row scores one token: the labels are
  pre-shifted (TRL's fused LM head's ``shift_labels``), the next token of the same
  completion.

Where a group's G completions average ``c`` tokens after a prompt of ``p``, the model computes
``p + G c`` tokens instead of TRL's ``G (p + max c)``, and the LM head only the ``G c`` that
are scored (``GRPONTrainer.packed_passes``)."""
from __future__ import annotations

from dataclasses import dataclass

import torch
from transformers.cache_utils import DynamicCache, DynamicLayer


@dataclass(frozen=True)
class Packed:
    """A packed batch. The prompt rows (R, w): ``prompt_ids``, ``prompt_mask`` (0 on the left
    padding), ``prompt_positions``. The completion row (1, S): ``input_ids``,
    ``position_ids``, ``labels`` (the token each position scores), ``group`` (the prompt row
    of its prompt) and ``segment`` (its completion); and where TRL keeps each scored token
    (``source_row``, ``source_column``, (S,): its row of the batch and its column among the
    ``logits_to_keep`` completion columns)."""

    prompt_ids: torch.Tensor
    prompt_mask: torch.Tensor
    prompt_positions: torch.Tensor
    input_ids: torch.Tensor
    position_ids: torch.Tensor
    labels: torch.Tensor
    group: torch.Tensor
    segment: torch.Tensor
    source_row: torch.Tensor
    source_column: torch.Tensor


def pack(input_ids: torch.Tensor, attention_mask: torch.Tensor, logits_to_keep: int,
         pad_token_id: int) -> Packed:
    """``input_ids`` and ``attention_mask`` (n, width), the last ``logits_to_keep`` columns the
    completions', packed: the distinct prompts in order of first appearance, the completions
    in the batch's order. A prompt's used columns must be one block ending at the completions,
    a completion's one block starting there (TRL's layout); a row whose completion is all
    masked scores nothing and adds no segment."""
    n, width = input_ids.shape
    split = width - logits_to_keep
    if not 0 < split < width:
        raise ValueError(f"logits_to_keep={logits_to_keep} must leave a prompt column and a "
                         f"completion column in a batch of width {width}")
    used = attention_mask.bool()
    prompt_len, completion_len = used[:, :split].sum(1), used[:, split:].sum(1)
    columns = torch.arange(width, device=used.device)
    layout = (columns >= split - prompt_len[:, None]) & (columns < split + completion_len[:, None])
    if not torch.equal(used, layout) or not bool((prompt_len > 0).all()):
        raise ValueError("pack: every row's attention_mask must be one block of prompt tokens "
                         "ending where the completions begin, then one block of completion "
                         "tokens (TRL's layout)")
    prompts: dict[tuple[int, ...], int] = {}
    row: list[tuple[int, ...]] = []  # (token, position, label, group, segment, source, column)
    for i in range(n):
        c = int(completion_len[i])
        if not c:
            continue
        prompt = tuple(input_ids[i, split - int(prompt_len[i]):split].tolist())
        g = prompts.setdefault(prompt, len(prompts))
        completion = input_ids[i, split:split + c].tolist()
        row += [(t, len(prompt) - 1 + j, label, g, i, i, j) for j, (t, label) in
                enumerate(zip([prompt[-1], *completion[:-1]], completion))]
    w = max((len(p) - 1 for p in prompts), default=0)
    device = input_ids.device
    prompt_ids = torch.full((len(prompts), w), pad_token_id, dtype=torch.long, device=device)
    prompt_mask = torch.zeros_like(prompt_ids)
    prompt_positions = torch.zeros_like(prompt_ids)
    for prompt, g in prompts.items():
        k = len(prompt) - 1
        if k:
            prompt_ids[g, w - k:] = torch.tensor(prompt[:-1], device=device)
            prompt_mask[g, w - k:] = 1
            prompt_positions[g, w - k:] = torch.arange(k, device=device)
    ids, positions, labels, group, segment, source_row, source_column = torch.tensor(
        row, dtype=torch.long, device=device).reshape(-1, 7).T
    return Packed(prompt_ids, prompt_mask, prompt_positions, ids[None], positions[None],
                  labels[None], group[None], segment[None], source_row, source_column)


def allowed(packed: Packed) -> torch.Tensor:
    """Which key each position of the completion row may attend to, (S, R w + S): in the
    prompt rows laid end to end (``one_row``), the used tokens of its own prompt; in the
    completion row, those of its own segment up to itself."""
    S, (R, w) = packed.input_ids.shape[1], packed.prompt_ids.shape
    g, s = packed.group[0], packed.segment[0]
    prompt_row = torch.arange(R, device=g.device).repeat_interleave(w)
    prompt = (g[:, None] == prompt_row) & packed.prompt_mask.flatten().bool()
    own = torch.ones(S, S, dtype=torch.bool, device=g.device).tril() & (s[:, None] == s)
    return torch.cat([prompt, own], dim=1)


def one_row(cache: DynamicCache) -> None:
    """The keys and values of the prompt rows in ``cache`` (R, heads, w, d), laid end to end
    as one row (1, heads, R w, d), prompt row r at columns r w to (r + 1) w: what the
    completion row attends to (differentiable). Full-attention layers only."""
    for layer in cache.layers:
        if type(layer) is not DynamicLayer:
            raise ValueError(f"packed passes need full-attention cache layers, got "
                             f"{type(layer).__name__}")
        if layer.get_seq_length():
            layer.keys, layer.values = (x.transpose(0, 1).flatten(1, 2)[None]
                                        for x in (layer.keys, layer.values))


def attention_mask(ok: torch.Tensor, implementation: str, dtype: torch.dtype) -> torch.Tensor:
    """A matrix of ``allowed`` as the 4D mask (1, 1, queries, keys) that transformers passes
    unchanged to the attention (``masking_utils``: a 4D mask is taken as it is): boolean for
    ``sdpa``, additive (0 or the least ``dtype`` value) for ``eager``. Other implementations
    (flash attention's kernels) take no such mask: an error names the one asked."""
    ok = ok[None, None]
    if implementation == "sdpa":
        return ok
    if implementation == "eager":
        return torch.zeros(ok.shape, dtype=dtype, device=ok.device).masked_fill(
            ~ok, torch.finfo(dtype).min)
    raise ValueError(f"packed passes need the model's attention implementation to be 'sdpa' or "
                     f"'eager' (a 4D mask), got {implementation!r}")


def unpack(values: torch.Tensor, packed: Packed, n: int, logits_to_keep: int) -> torch.Tensor:
    """Per-token ``values`` of the completion row (1, S) in TRL's layout (n, logits_to_keep):
    each scored token's value in its row and completion column, zeros elsewhere
    (differentiable)."""
    return values.new_zeros(n, logits_to_keep).index_put(
        (packed.source_row, packed.source_column), values[0])
