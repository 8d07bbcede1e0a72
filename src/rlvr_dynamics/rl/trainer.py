"""The one small subclass of TRL's ``GRPOTrainer`` behind every algorithm: the advantages of
positive samples weighted by lambda, or REINFORCE-style advantages from each sample's own reward
for NSR and W-REINFORCE (``algorithms`` explains the choices); besides, the
shuffling seed per epoch, which makes resumed runs exact, and, where TRL would call
``model.generate`` (no vLLM, text only, no top-k, min-p or repetition penalty), the rollouts
drawn by the project's sampler (``sampling.TransformersBackend``: about half of
``generate``'s time for SmolLM2, ``bench/bench_smollm2_step.py``) from a seed of the run's seed
and the update, so a resumed run draws what an uninterrupted one would (one decoding loop for
all of a generation batch's rows). Two options make its passes cheaper without changing what
they compute: ``packed`` (each distinct prompt computed once, the completions without padding:
``rl.packing``) and, under ``first_only``, the passes cut after the first completion
token."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import Sampler
from transformers import DynamicCache
from trl import GRPOConfig, GRPOTrainer
from trl.models import unwrap_model_for_generation

from rlvr_dynamics.rl import packing
from rlvr_dynamics.sampling import SamplingParams, TransformersBackend


@dataclass
class GRPONConfig(GRPOConfig):
    """TRL's ``GRPOConfig`` plus ``positive_weight``, the lambda of the module docstring."""

    positive_weight: float = field(
        default=1.0,
        metadata={"help": "lambda: weight on the advantages of samples with non-negative advantage "
                          "(1: GRPO/GSPO, 0: GRPO-N/GSPO-N, Appendix B.5)."})

    reinforce: float | None = field(
        default=None,
        metadata={"help": "mu: REINFORCE-style advantages mu r - (1 - r) from each sample's own "
                          "reward in place of the group-relative ones (NSR: 0, W-REINFORCE: "
                          "0.1); None: group-relative (GRPO and its kin)."})

    without: tuple[str, ...] = field(
        default=(),
        metadata={"help": "names of reward functions (the task's traces): a group in which any "
                          "of them is positive for a sample is left out of the update (no "
                          "loss, no normaliser): e.g. the groups that hold a stepwise sample."})

    first_only: bool = field(
        default=False,
        metadata={"help": "train on the first completion token alone: every later token "
                          "masked out of the loss and its normaliser (the ladder's rungs that "
                          "train the path choice only), and the passes over prompt and "
                          "completion cut after that token (nothing later is read)."})

    packed: bool = field(
        default=False,
        metadata={"help": "pack the passes over prompt and completion (old policy, reference, "
                          "loss): each distinct prompt of a chunk once, followed by its "
                          "completions, each attending to the prompt and to itself alone "
                          "(``rl.packing``): the same log-probabilities up to rounding, "
                          "computing neither a repeated prompt nor any padding (SmolLM2's "
                          "long prompt: system message and worked example)."})

    after_first: bool = field(
        default=False,
        metadata={"help": "train on completion tokens 2..L: the first token masked out of the "
                          "loss and its normaliser (the complement of first_only), through "
                          "TRL's loss-only mask, so that every pass still attends to it."})

    spared: tuple[str, ...] = field(
        default=(),
        metadata={"help": "names of reward functions (the task's traces): a sample with a "
                          "negative advantage that any of them marks is left out of the loss "
                          "and its normaliser (sample by sample; the group's advantages as "
                          "computed with it): e.g. the stepwise path's own slips."})

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.after_first and self.first_only:
            raise ValueError("after_first and first_only exclude each other (no token left)")
        if not self.positive_weight >= 0:
            raise ValueError(f"positive_weight must be >= 0, got {self.positive_weight}")
        if self.reinforce is not None and not self.reinforce >= 0:
            raise ValueError(f"reinforce must be >= 0 or None, got {self.reinforce}")


class GRPONTrainer(GRPOTrainer):
    """TRL's ``GRPOTrainer`` with the positive samples' advantages weighted by lambda
    (``args.positive_weight``); with lambda = 1 its advantages are TRL's, bit for bit, and its
    log-probabilities and loss TRL's up to rounding (its forward passes leave the padding out).

    Also logs ``frac_negative``, the fraction of the generation batch whose relative advantage
    is negative (the samples that -N trains on); and, with ``args.without``, leaves out of the
    update every group that holds a sample marked by one of those reward functions
    (``left_out``), logging ``frac_left_out``; with ``args.first_only``, trains on the first
    completion token alone (``first_token_passes``); with ``args.packed``, computes each
    distinct prompt once and no padding (``packed_passes``); with ``args.after_first`` or
    ``args.spared``, leaves the first completion token, or the negative samples marked by
    those reward functions, out of the loss (``loss_masked``), logging ``frac_spared``.
    """

    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
        """TRL's rewards of the whole generation batch (every process's), kept: the
        REINFORCE-style advantages are read from them (``reinforced``)."""
        self._rewards_per_func = super()._calculate_rewards(inputs, prompts, completions,
                                                            completion_ids_list)
        return self._rewards_per_func

    def reinforced(self, local: int) -> torch.Tensor:
        """A_i = mu r_i - (1 - r_i) for this process's ``local`` samples of the last batch, r
        their weighted reward (TRL's sum over reward functions)."""
        r = (self._rewards_per_func * self.reward_weights.to(self._rewards_per_func.device)
             .unsqueeze(0)).nansum(dim=1)
        start = self.accelerator.process_index * local
        r = r[start:start + local]
        return self.args.reinforce * r - (1 - r)

    def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        batch = super()._generate_and_score_completions(inputs)
        if self.args.reinforce is not None:
            batch["advantages"] = self.reinforced(len(inputs)).to(batch["advantages"])
        advantages = batch["advantages"]
        negative = advantages < 0
        batch["advantages"] = torch.where(negative, advantages,
                                          self.args.positive_weight * advantages)
        if self.args.without:
            batch = self.left_out(batch, len(inputs))
        if self.args.first_only:
            batch["completion_mask"] = batch["completion_mask"].clone()
            batch["completion_mask"][:, 1:] = 0
            batch["num_items_in_batch"] = self.accelerator.gather(
                batch["completion_mask"].sum()).sum()
        if self.args.after_first or self.args.spared:
            batch = self.loss_masked(batch, len(inputs))
        mode = "train" if self.model.training else "eval"
        self._metrics[mode]["frac_negative"].append(
            self.accelerator.gather(negative.float()).mean().item())
        return batch

    def left_out(self, batch: dict[str, Any], local: int) -> dict[str, Any]:
        """``batch`` without the groups in which a sample is marked by any reward function
        named in ``args.without``: their completion masks and advantages zeroed, and the
        token count that normalises the loss counting the rest (a group is whole on a process:
        TRL gives each process whole groups)."""
        columns = [self.reward_func_names.index(name) for name in self.args.without]
        start = self.accelerator.process_index * local
        marked = (self._rewards_per_func[start:start + local, columns].nan_to_num() > 0).any(1)
        G = self.num_generations
        keep = ~marked.view(-1, G).any(1).repeat_interleave(G)
        keep = keep.to(batch["completion_mask"].device)
        batch["completion_mask"] = batch["completion_mask"] * keep.unsqueeze(1).int()
        batch["advantages"] = batch["advantages"] * keep.to(batch["advantages"])
        batch["num_items_in_batch"] = self.accelerator.gather(batch["completion_mask"].sum()).sum()
        mode = "train" if self.model.training else "eval"
        self._metrics[mode]["frac_left_out"].append(
            self.accelerator.gather((~keep).float()).mean().item())
        return batch

    def loss_masked(self, batch: dict[str, Any], local: int) -> dict[str, Any]:
        """``batch`` with tokens left out of the loss alone, through TRL's loss-only mask
        (``tool_mask``: the passes still attend to them): the first completion token under
        ``args.after_first``; every token of a sample with a negative advantage that a reward
        function named in ``args.spared`` marks (positive). The token count that normalises
        the loss counts the rest; the advantages stay as computed."""
        mask = batch["completion_mask"]
        keep = batch.get("tool_mask")
        keep = torch.ones_like(mask) if keep is None else keep.clone()
        if self.args.after_first:
            keep[:, 0] = 0
        if self.args.spared:
            columns = [self.reward_func_names.index(name) for name in self.args.spared]
            start = self.accelerator.process_index * local
            marked = (self._rewards_per_func[start:start + local, columns].nan_to_num() > 0).any(1)
            spared = marked.to(mask.device) & (batch["advantages"] < 0)
            keep = keep * (~spared).unsqueeze(1).to(keep)
            mode = "train" if self.model.training else "eval"
            self._metrics[mode]["frac_spared"].append(
                self.accelerator.gather(spared.float()).mean().item())
        batch["tool_mask"] = keep
        batch["num_items_in_batch"] = self.accelerator.gather((mask * keep).sum()).sum()
        return batch

    def _generate_single_turn(self, prompt_ids, images, multimodal_fields, num_generations,
                              has_tool_images=False):
        plain = (not self.use_vllm and not self.use_transformers_continuous_batching
                 and images is None and not multimodal_fields and not self.top_k
                 and self.min_p is None and self.repetition_penalty == 1.0)
        if not plain:
            return super()._generate_single_turn(prompt_ids, images, multimodal_fields,
                                                 num_generations, has_tool_images)
        seed = np.random.SeedSequence([self.args.seed, self.state.global_step,
                                       self.accelerator.process_index]).generate_state(1)[0]
        params = SamplingParams(n=1, temperature=self.temperature, top_p=self.top_p,
                                max_tokens=self.max_completion_length, seed=int(seed))
        with unwrap_model_for_generation(self.model_wrapped, self.accelerator) as model:
            backend = TransformersBackend(model, self.processing_class, progress=False,
                                          batch_size=len(prompt_ids), stops=self.eos_token_ids)
            rows = backend.generate_ids(prompt_ids, params)  # a group's prompts are adjacent
        return [list(row[0].token_ids) for row in rows], None

    def _get_per_token_logps_and_entropies(self, model, input_ids, attention_mask,
                                           logits_to_keep, batch_size=None, **kwargs):
        """TRL's, with the padding left out: the sequences are taken ``batch_size`` at a time
        in order of length (all at once, in their order, if None), each chunk cut to the
        columns that some sequence of it uses; the results come back in the batch's order,
        zeros where a chunk had no column (padding, which every use masks out). A cut shifts
        every position of a chunk alike, which rotary attention does not see, so the results
        are TRL's up to rounding (``tests/test_training.py``). It pays early in training, while
        completions are mostly short beside a rare long one; once they are long there is little
        padding to leave out (``bench/bench_training_step.py``, from the base and ``--policy``).
        Text only; anything else goes to TRL as it is."""
        if any(isinstance(v, (torch.Tensor, list)) for v in kwargs.values()):
            return super()._get_per_token_logps_and_entropies(
                model, input_ids, attention_mask, logits_to_keep, batch_size, **kwargs)
        if self.args.first_only and logits_to_keep > 1:
            return self.first_token_passes(model, input_ids, attention_mask, logits_to_keep,
                                           batch_size, **kwargs)
        if self.args.packed:
            return self.packed_passes(model, input_ids, attention_mask, logits_to_keep,
                                      batch_size, **kwargs)
        n, width = input_ids.shape
        used = attention_mask.bool()
        first = used.int().argmax(dim=1)
        end = width - used.flip(1).int().argmax(dim=1)
        size = batch_size or n
        order = torch.argsort(end - first, stable=True) if size < n else torch.arange(n)
        parts, aux = [], []
        for chunk in order.split(size):
            lo, hi = int(first[chunk].min()), int(end[chunk].max())
            logps, entropies, loss = super()._get_per_token_logps_and_entropies(
                model, input_ids[chunk, lo:hi], attention_mask[chunk, lo:hi],
                hi - (width - logits_to_keep), len(chunk), **kwargs)
            pad = (0, width - hi)
            parts.append((F.pad(logps, pad), None if entropies is None else F.pad(entropies, pad)))
            aux.append(loss)
        back = torch.argsort(order)
        logps = torch.cat([p for p, _ in parts])[back]
        entropies = None if parts[0][1] is None else torch.cat([e for _, e in parts])[back]
        return logps, entropies, None if aux[0] is None else torch.stack(aux).mean()

    def first_token_passes(self, model, input_ids, attention_mask, logits_to_keep,
                           batch_size=None, **kwargs):
        """``_get_per_token_logps_and_entropies`` under ``args.first_only``, where the loss, its
        KL and entropy terms read the first completion token alone: the sequences cut after it
        (a causal model's first-token log-prob sees only the prompt), zeros in every later
        column (masked by every use). TRL's first column up to rounding
        (``tests/test_training.py``); the passes cost a prompt and one token instead of the
        whole completion."""
        cut = input_ids.shape[1] - logits_to_keep + 1
        logps, entropies, aux = self._get_per_token_logps_and_entropies(
            model, input_ids[:, :cut], attention_mask[:, :cut], 1, batch_size, **kwargs)
        pad = (0, logits_to_keep - 1)
        return F.pad(logps, pad), None if entropies is None else F.pad(entropies, pad), aux

    def packed_passes(self, model, input_ids, attention_mask, logits_to_keep, batch_size=None,
                      compute_entropy=False, compute_aux_loss=False, **multimodal):
        """``_get_per_token_logps_and_entropies`` with the rows packed (``args.packed``): taken
        ``batch_size`` at a time grouped by prompt, each chunk packed (``packing.pack``): its
        distinct prompts go through the model once, a row each, their keys and values
        (``DynamicCache``) laid end to end as one row (``packing.one_row``); then its
        completions, one after the other in one row, run on them under the mask that lets each
        see its own prompt and itself alone (``packing.allowed``), scored by TRL's fused head
        as TRL scores them (pre-shifted labels: every position one scored token); gradients
        flow back through the cache into the prompts' pass. The results come back in the
        batch's order (``packing.unpack``), zeros on the padding. Equal to TRL's up to
        rounding (``tests/test_training.py``); a group of G completions costs its prompt
        once and its completions' own tokens. A chunk without a completion token goes to
        TRL's pass (a differentiable zero). Text only: ``multimodal`` holds TRL's image
        inputs, all None."""
        if compute_aux_loss:
            raise ValueError("packed: the MoE auxiliary loss is not supported")
        n, width = input_ids.shape
        prompt = torch.cat([input_ids[:, :width - logits_to_keep],
                            attention_mask[:, :width - logits_to_keep]], dim=1)
        _, inverse = torch.unique(prompt, dim=0, return_inverse=True)
        order = torch.argsort(inverse, stable=True)
        logps, entropies = [], []
        for chunk in order.split(batch_size or n):
            packed = packing.pack(input_ids[chunk], attention_mask[chunk], logits_to_keep,
                                  self.processing_class.pad_token_id)
            if packed.input_ids.numel() == 0:
                logp, entropy, _ = super()._get_per_token_logps_and_entropies(
                    model, input_ids[chunk], attention_mask[chunk], logits_to_keep, len(chunk),
                    compute_entropy=compute_entropy)
                logps.append(logp)
                entropies.append(entropy)
                continue
            cache = DynamicCache(config=model.config)  # stays empty for one-token prompts
            if packed.prompt_ids.shape[1]:
                with self.accelerator.autocast():
                    model(input_ids=packed.prompt_ids, attention_mask=packed.prompt_mask,
                          position_ids=packed.prompt_positions, cache=cache, use_cache=True,
                          logits_to_keep=1)
                packing.one_row(cache)
            mask = packing.attention_mask(packing.allowed(packed),
                                          model.config._attn_implementation, model.dtype)
            with self.accelerator.autocast():
                out = model(input_ids=packed.input_ids, position_ids=packed.position_ids,
                            attention_mask=mask, cache=cache, shift_labels=packed.labels,
                            fused_lm_head=True)
            logps.append(packing.unpack(out.log_probs, packed, len(chunk), logits_to_keep))
            if compute_entropy:
                entropies.append(packing.unpack(out.entropy, packed, len(chunk),
                                                logits_to_keep))
        back = torch.argsort(order)
        return (torch.cat(logps)[back], torch.cat(entropies)[back] if compute_entropy else None,
                None)

    def _get_train_sampler(self, dataset=None) -> Sampler:
        """TRL's sampler, reshuffled from ``seed + epoch`` at every epoch so that a run resumed
        in a later epoch sees the same prompts as an uninterrupted one (TRL's sampler draws its
        epochs from one generator that a restart would reset)."""
        return EpochSeeded(super()._get_train_sampler(dataset))


class EpochSeeded(Sampler):
    """A shuffling sampler whose generator is reseeded with ``seed + epoch`` by ``set_epoch``
    (which the Trainer calls at the start of every epoch, also after resuming)."""

    def __init__(self, sampler: Sampler) -> None:
        self.sampler = sampler

    def set_epoch(self, epoch: int) -> None:
        generator, seed = getattr(self.sampler, "generator", None), getattr(self.sampler, "seed", None)
        if generator is not None and seed is not None:
            generator.manual_seed(seed + epoch)

    def __iter__(self):
        return iter(self.sampler)

    def __len__(self) -> int:
        return len(self.sampler)
