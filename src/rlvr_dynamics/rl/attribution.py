"""Whose samples move the first decision: one update's change of each path's first-character
log-probability, split by the kinds of sample in the update's batch (after Ren and Sutherland,
*Learning Dynamics of LLM Finetuning*, arXiv 2407.10490: a change of log-probability as the
inner product of its gradient with the update).

For the update theta -> theta + Delta of a batch B, the target f(theta) = mean over the probed
problems of log pi_theta(the path's first character | prompt) (``path_prior.first_characters``:
``#`` for the direct path, the problem's own first digit for the stepwise path, ``=`` for the
guess) moves, to first order, by

    Delta f ~ grad f(theta) . Delta,   Delta = - P (c sum_k g_k) + (what the optimizer adds),

where g_k is the gradient of the trainer's own loss (``GRPONTrainer._compute_loss``, its
normaliser as it is for the whole batch) with only the samples of kind k in its mask, c the
clipping factor of the whole gradient (``max_grad_norm``) and P the optimizer's
preconditioning:

* SGD (``torch.optim.SGD``, no momentum): P = lr I; its weight decay (an L2 term) adds
  ``- lr wd theta``. Exact but for the first-order expansion of f.
* Adam(W): P = lr (1 - beta1) / (1 - beta1^t) / (sqrt(v_hat_t) + eps) per coordinate, v_hat_t
  the second moment *after* this update's gradient (the state the step is actually taken
  with); the first moment carries ``beta1 m_{t-1}`` of earlier updates (the part
  ``momentum``), decoupled weight decay adds ``- lr wd theta``. Adam is not linear in the
  gradient (v_hat_t depends on the whole of it), so a kind's part is its share of the step the
  optimizer took, not the step it would take alone: an approximation, stated as such.

The kinds (``KINDS``) are the samples' paths crossed with right and wrong (``tasks.sums.trace``,
read from the batch's decoded prompts and completions) and ``other`` (none of the paths). Two
parts come from no kind: ``entropy`` (the entropy bonus, a mean over the batch's tokens, not a
sum over samples) and the optimizer's own (``momentum``, ``weight_decay``). The parts sum to
the prediction from the whole batch's gradient (``total``) up to rounding: the loss is a sum
over samples (``dapo``, ``grpo``, ``dr_grpo``; not ``bnpo``, whose normaliser is the masked
token count).

``Attribution`` is the instrument during training: at chosen updates it reads the update's
micro-batches from TRL's buffer just before the optimizer steps (the parameters still the
update's theta, the accumulated gradient there to check against: ``grad_error``), and just
after the step measures f again (``after``), so that each prediction sits beside the change it
predicts, with no checkpoint kept. Its passes read no random state and leave the gradients,
the optimizer and the logged metrics as they were, so an attributed run trains exactly as one
that is not. One process, without ZeRO sharding (the CPU runs).
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator, Sequence

import torch
from transformers import TrainerCallback

from rlvr_dynamics.path_prior import first_characters, first_position_batch
from rlvr_dynamics.tasks import sums

KINDS = (*sums.TRACES[:6], "other")
"""The kinds of sample: each path of ``tasks.sums.trace`` (direct, stepwise, guess) crossed
with right and wrong, and ``other`` (a completion on none of them)."""
PATHS = ("direct", "stepwise", "guess")
"""The first characters whose log-probability is attributed (``path_prior.first_characters``)."""
OWN = ("entropy", "momentum", "weight_decay")
"""The parts that no kind of sample makes."""


def kinds_of(tokenizer, batch: dict[str, Any]) -> list[str]:
    """Each sample's kind (``KINDS``): its decoded completion's path on its decoded prompt's
    terms, right or wrong against their sum (``tasks.sums.trace``)."""
    prompts = tokenizer.batch_decode([ids[m.bool()].tolist() for ids, m in
                                      zip(batch["prompt_ids"], batch["prompt_mask"])],
                                     skip_special_tokens=True)
    completions = tokenizer.batch_decode([ids[m.bool()].tolist() for ids, m in
                                          zip(batch["completion_ids"], batch["completion_mask"])],
                                         skip_special_tokens=True)
    out = []
    for prompt, completion in zip(prompts, completions):
        terms = sums.terms_of(prompt)
        marks = sums.trace(str(sum(terms)), completion, terms)
        out.append(next((k for k in KINDS[:-1] if marks[k]), "other"))
    return out


def targets(model, tokenizer, terms: list[tuple[int, ...]], paths: Sequence[str] = PATHS
            ) -> dict[str, torch.Tensor]:
    """f per path: the mean over ``terms`` of the log-probability of the path's first
    character (differentiable)."""
    batch = {k: v.to(model.device) for k, v in first_position_batch(tokenizer, terms).items()}
    logp = torch.log_softmax(model(**batch).logits[:, -1].float(), -1)
    at = first_characters(logp, tokenizer, terms)
    return {p: at[p].mean() for p in paths}


def rows_of(kinds: Sequence[str], kind: str) -> torch.Tensor:
    """Which samples are of ``kind`` (a bool per sample)."""
    return torch.tensor([k == kind for k in kinds])


@contextmanager
def quiet(trainer) -> Iterator[None]:
    """The trainer's logged metrics as they were before (the loss passes here append to them)."""
    saved = {mode: {k: len(v) for k, v in metrics.items()}
             for mode, metrics in trainer._metrics.items()}
    try:
        yield
    finally:
        for mode, metrics in trainer._metrics.items():
            for k in list(metrics):
                if k in saved.get(mode, {}):
                    del metrics[k][saved[mode][k]:]
                else:
                    del metrics[k]


@contextmanager
def entropy_bonus(trainer, on: bool) -> Iterator[None]:
    was = trainer._entropy_bonus_enabled
    trainer._entropy_bonus_enabled = was and on
    try:
        yield
    finally:
        trainer._entropy_bonus_enabled = was


def sample_advantages(advantages: torch.Tensor) -> torch.Tensor:
    """One advantage per sample: the batch's own, or, where they are per token (NTHR scales
    some tokens' by eta >= 0, never changing a sign), each sample's least (0 only where every
    token of a wrong sample was scaled by eta 0: such a sample then moves nothing)."""
    return advantages if advantages.dim() == 1 else advantages.amin(dim=1)


def parameters(optimizer) -> list[torch.nn.Parameter]:
    """The parameters ``optimizer`` steps, in its order (accelerate's wrapper looked through)."""
    inner = getattr(optimizer, "optimizer", optimizer)
    return [p for group in inner.param_groups for p in group["params"]]


def gradients(trainer, batches: list[dict[str, Any]], kinds: list[Sequence[str]],
              params: list[torch.nn.Parameter]) -> dict[str, list[torch.Tensor]]:
    """Summed over the update's micro-batches ``batches`` (the kinds of their samples in
    ``kinds``), the gradient of the trainer's loss over ``params``: of the whole loss
    (``total``), of the loss with each kind's samples alone in its mask and no entropy bonus
    (one entry per kind present), and of the entropy bonus (``entropy``)."""
    def grad(loss: torch.Tensor) -> list[torch.Tensor]:
        got = torch.autograd.grad(loss, params, allow_unused=True)
        return [torch.zeros_like(p) if g is None else g for g, p in zip(got, params)]

    def loss(inputs: dict[str, Any], entropy: bool, rows: torch.Tensor | None = None):
        if rows is not None:
            mask = inputs["completion_mask"]
            keep = torch.ones_like(mask) if inputs.get("tool_mask") is None else inputs["tool_mask"]
            inputs = {**inputs, "tool_mask": keep * rows.to(mask.device).unsqueeze(1).to(keep)}
        with entropy_bonus(trainer, entropy):
            return trainer._compute_loss(trainer.model, inputs)

    out: dict[str, list[torch.Tensor]] = {}

    def add(name: str, g: list[torch.Tensor]) -> None:
        out[name] = g if name not in out else [a + b for a, b in zip(out[name], g)]

    bonus = trainer._entropy_bonus_enabled
    with quiet(trainer):
        for inputs, these in zip(batches, kinds):
            add("total", grad(loss(inputs, True)))
            if bonus:
                add("entropy", grad(loss(inputs, True) - loss(inputs, False)))
            for kind in dict.fromkeys(these):
                add(kind, grad(loss(inputs, False, rows_of(these, kind))))
    return out


def steps(optimizer, grads: dict[str, list[torch.Tensor]], params: list[torch.nn.Parameter],
          clip: float) -> dict[str, list[torch.Tensor]]:
    """The update ``optimizer`` takes from its present state, per part: each entry of
    ``grads`` (``total`` included) as the optimizer's preconditioning maps its clipped share,
    and the optimizer's own parts (``momentum``, ``weight_decay``); module docstring."""
    inner = getattr(optimizer, "optimizer", optimizer)
    where = {id(p): i for i, p in enumerate(params)}
    out = {name: [None] * len(params) for name in (*grads, "momentum", "weight_decay")}
    for group in inner.param_groups:
        lr, wd = group["lr"], group["weight_decay"]
        if group.get("maximize") or group.get("amsgrad"):
            raise ValueError("attribution: maximize and amsgrad are not supported")
        for p in group["params"]:
            i = where[id(p)]
            theta = p.detach()
            g = {name: clip * parts[i] for name, parts in grads.items()}
            if isinstance(inner, torch.optim.SGD):
                if group["momentum"] or group["nesterov"]:
                    raise ValueError("attribution: SGD with momentum is not supported")
                for name in grads:
                    out[name][i] = -lr * g[name]
                out["momentum"][i] = torch.zeros_like(theta)
                out["weight_decay"][i] = -lr * wd * theta
            elif isinstance(inner, torch.optim.Adam):  # AdamW too
                b1, b2 = group["betas"]
                decoupled = group.get("decoupled_weight_decay",
                                      isinstance(inner, torch.optim.AdamW))
                state = inner.state.get(p, {})
                t = int(state["step"]) + 1 if "step" in state else 1
                m = state.get("exp_avg", torch.zeros_like(theta))
                v = state.get("exp_avg_sq", torch.zeros_like(theta))
                decay = torch.zeros_like(theta) if decoupled else wd * theta
                v = b2 * v + (1 - b2) * (g["total"] + decay) ** 2
                a = lr / (1 - b1 ** t) / (v.sqrt() / (1 - b2 ** t) ** 0.5 + group["eps"])
                for name in grads:
                    out[name][i] = -a * (1 - b1) * g[name]
                out["momentum"][i] = -a * b1 * m
                out["weight_decay"][i] = (-lr * wd * theta if decoupled
                                          else -a * (1 - b1) * decay)
            else:
                raise ValueError(f"attribution: optimizer {type(inner).__name__} is not supported "
                                 f"(SGD, Adam, AdamW)")
    return out


def clip_factor(total: list[torch.Tensor], max_norm: float | None) -> float:
    """torch's ``clip_grad_norm_`` factor for the whole gradient ``total``."""
    if not max_norm:
        return 1.0
    norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in total]))
    return min(1.0, float(max_norm / (norm + 1e-6)))


def attribute(trainer, batches: list[dict[str, Any]], terms: list[tuple[int, ...]],
              paths: Sequence[str] = PATHS, kinds: list[Sequence[str]] | None = None
              ) -> dict[str, Any]:
    """The attribution of the update that ``trainer``'s optimizer is about to take on the
    micro-batches ``batches`` (its ``kinds`` per micro-batch; None: ``kinds_of`` each): per
    path, f now (``before``), its predicted change from the whole gradient (``total``) and its
    parts (``parts``: each kind present, ``OWN``); the samples of each kind (``count``) and
    how many have a negative advantage (``negative``); the clipping factor (``clip``); and,
    where the parameters hold the update's accumulated gradient, how far the one computed here
    lies from it (``grad_error``, relative)."""
    model, tokenizer = trainer.model, trainer.processing_class
    if kinds is None:
        kinds = [kinds_of(tokenizer, b) for b in batches]
    params = parameters(trainer.optimizer)
    grads = gradients(trainer, batches, kinds, params)
    clip = clip_factor(grads["total"], trainer.args.max_grad_norm)
    held = [torch.zeros_like(p) if p.grad is None else p.grad for p in params]  # None: no grad
    diff = sum(float(((clip * g - h) ** 2).sum()) for g, h in zip(grads["total"], held))
    size = sum(float((h ** 2).sum()) for h in held)
    error = (diff / size) ** 0.5 if size else None  # None: no accumulated gradient to compare
    moves = steps(trainer.optimizer, grads, params, clip)
    was_training = model.training
    model.eval()
    try:
        f = targets(model, tokenizer, terms, paths)
    finally:
        model.train(was_training)
    record: dict[str, Any] = {"clip": clip, "grad_error": error}
    flat = [k for ks in kinds for k in ks]
    advantages = torch.cat([sample_advantages(b["advantages"]) for b in batches]).cpu()
    record["count"] = {k: flat.count(k) for k in KINDS if k in flat}
    record["negative"] = {k: int((rows_of(flat, k) & (advantages < 0)).sum())
                          for k in record["count"]}
    names = [k for k in moves if k != "total"]
    for j, path in enumerate(paths):
        df = torch.autograd.grad(f[path], params, allow_unused=True,
                                 retain_graph=j < len(paths) - 1)
        predicted = {name: sum(float((d * m).sum()) for d, m in zip(df, moves[name])
                               if d is not None) for name in moves}
        record[path] = {"before": float(f[path].detach()),
                        "total": predicted["total"] + predicted["momentum"]
                        + predicted["weight_decay"],
                        "parts": {name: predicted[name] for name in names}}
    return record


class Attribution(TrainerCallback):
    """``attribute`` at each of the optimizer updates ``updates`` (0-based), on ``terms``
    (the probed problems), just before the optimizer steps; just after, f again (``after``).
    Appended to the trainer's ``log_history`` as ``{"step": update, "attribution": {...}}``
    (the update that takes the parameters of ``step`` to those of ``step + 1``)."""

    def __init__(self, trainer, terms: list[tuple[int, ...]], updates: Sequence[int],
                 paths: Sequence[str] = PATHS) -> None:
        self.trainer, self.terms, self.updates = trainer, terms, set(updates)
        self.paths, self.pending = tuple(paths), None

    def on_pre_optimizer_step(self, args, state, control, **kwargs) -> None:
        if state.global_step not in self.updates:
            return
        t = self.trainer
        accumulation, every = args.gradient_accumulation_steps, args.steps_per_generation
        batches = [t._buffered_inputs[(t._step - accumulation + i) % every]
                   for i in range(accumulation)]
        self.pending = attribute(t, batches, self.terms, self.paths)

    def on_optimizer_step(self, args, state, control, **kwargs) -> None:
        if self.pending is None:
            return
        model = self.trainer.model
        was_training = model.training
        model.eval()
        try:
            with torch.no_grad():
                f = targets(model, self.trainer.processing_class, self.terms, self.paths)
        finally:
            model.train(was_training)
        for path in self.paths:
            self.pending[path]["after"] = float(f[path])
        state.log_history.append({"step": state.global_step, "attribution": self.pending})
        self.pending = None
