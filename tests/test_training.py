"""The training stack: the -N indicator and the lambda weight checked by autograd on a small
model, GSPO's sequence-level ratio against its definition, bad configurations refused before any
model loads, a short run of each algorithm, and a finished run found again instead of retrained.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

from rlvr_dynamics.models import char_tokenizer, tiny_qwen2
from rlvr_dynamics.tasks.base import Problem
from rlvr_dynamics.tasks.sums import ALPHABET
from rlvr_dynamics.rl import algorithms
from rlvr_dynamics.tasks.sums import PATHS
from rlvr_dynamics.rl import dynamics as logged
from rlvr_dynamics.rl.config import TrainConfig

torch.set_num_threads(1)

PROMPTS, G = 8, 4


@dataclass(frozen=True)
class Parity:
    """A stand-in task on which an untrained model earns mixed rewards: prompts ``a+b=`` in the
    sums alphabet, and a completion is 'correct' when its length is even."""

    train: int = 32
    name: str = "parity"

    def problems(self, split: str) -> list[Problem]:
        n = self.train if split == "train" else 8
        return [Problem(f"{split}-{i}", f"{i}+{i % 7}=", "0") for i in range(n)]

    def verify(self, completion: str, answer: str) -> bool:
        return len(completion) % 2 == 0


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> str:
    """An untrained tiny Qwen2 with the sums tokenizer, saved (TRL's reference model loads
    from the policy's path)."""
    path = tmp_path_factory.mktemp("tiny")
    tok = char_tokenizer(ALPHABET)
    tiny_qwen2(tok, hidden=32, layers=2, seed=0).save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory) -> str:
    """An untrained tiny Llama (SmolLM2's architecture: grouped keys and values, tied
    embeddings) with the sums tokenizer, saved."""
    from transformers import LlamaConfig, LlamaForCausalLM

    path = tmp_path_factory.mktemp("tiny_llama")
    tok = char_tokenizer(ALPHABET)
    torch.manual_seed(0)
    LlamaForCausalLM(LlamaConfig(
        vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=True,
        pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id)).save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


@dataclass(frozen=True)
class SomeHopeless(Parity):
    """``Parity`` with every fourth prompt unsolvable: its groups are all wrong."""

    name: str = "parity, some hopeless"

    def problems(self, split: str) -> list[Problem]:
        return [dataclasses.replace(p, answer="x") if i % 4 == 0 else p
                for i, p in enumerate(super().problems(split))]

    def verify(self, completion: str, answer: str) -> bool:
        return answer != "x" and super().verify(completion, answer)


def config(tiny: str, algorithm: str = "grpo", **changes) -> TrainConfig:
    base = dict(algorithm=algorithm, model=tiny, task=Parity(), positive_weight=None, seed=0,
                steps=2, num_generations=G, generation_batch=PROMPTS * G,
                update_batch=PROMPTS * G // 2, micro_batch=PROMPTS * G // 2,
                learning_rate=1e-3, weight_decay=0.01, beta=0.0, epsilon=0.2, dual_clip=3.0,
                entropy_coef=0.0, temperature=1.0, max_completion_length=12, loss_type="dapo",
                eval_every=1, eval_problems=8, eval_batch=8, checkpoint_every=1,
                use_vllm=False, context=64, bf16=False, gradient_checkpointing=False)
    return TrainConfig.from_dict({**base, **changes})


def generation(cfg: TrainConfig, tmp_path: Path):
    """A trainer of ``cfg`` and one generation batch through TRL's own path (seeded, so that
    every algorithm sees the same completions), after which the policy is moved off the one
    that sampled, so that importance ratios differ from 1 and clipping is live."""
    from rlvr_dynamics.rl.runs import build_trainer

    trainer = build_trainer(cfg, tmp_path / cfg.algorithm, "smoke")
    trainer.model.train()
    trainer.current_gradient_accumulation_steps = 1
    rows = [trainer.train_dataset[i] for i in range(PROMPTS) for _ in range(G)]
    torch.manual_seed(0)
    batch = trainer._generate_and_score_completions(rows)
    noise = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in trainer.model.parameters():
            p.add_(0.15 * torch.randn(p.shape, generator=noise))
    return trainer, batch


def hidden_grads(trainer, batch) -> torch.Tensor:
    """d loss / d h, h the last hidden states (what TRL's fused LM head turns into log-probs),
    one (T, d) slice per sample: sample i moves the parameters only through its own h."""
    outputs = []

    def keep(module, args, out):
        out.retain_grad()
        outputs.append(out)

    hook = trainer.model.model.norm.register_forward_hook(keep)
    trainer.model.zero_grad()
    trainer._compute_loss(trainer.model, batch).backward()
    hook.remove()
    (hidden,) = outputs
    return hidden.grad


@pytest.mark.parametrize("standard,negative", [("grpo", "grpo_n"), ("gspo", "gspo_n")])
@pytest.mark.parametrize("loss_type", ["dapo", "grpo"])
def test_minus_n_zeroes_positive_samples_and_keeps_negative_ones(tiny, tmp_path, standard,
                                                                   negative, loss_type):
    full, batch = generation(config(tiny, standard, loss_type=loss_type), tmp_path)
    neg, batch_n = generation(config(tiny, negative, loss_type=loss_type), tmp_path)
    assert torch.equal(batch["completion_ids"], batch_n["completion_ids"])
    A = batch["advantages"]
    assert (A > 0).any() and (A < 0).any(), "the stand-in task must give mixed rewards"
    assert torch.equal(batch_n["advantages"], torch.where(A < 0, A, torch.zeros_like(A)))

    g, g_n = hidden_grads(full, batch), hidden_grads(neg, batch_n)
    assert full._metrics["train"]["clip_ratio/region_mean"][-1] > 0, "clipping must be live"
    for i, a in enumerate(A.tolist()):
        if a < 0:
            assert torch.equal(g_n[i], g[i]), f"sample {i} (A={a:.3f}) lost its gradient"
        else:
            assert g_n[i].count_nonzero() == 0, f"sample {i} (A={a:.3f}) got a gradient"
    # under GRPO/GSPO positive samples do move the policy (those not clipped away)
    assert any(g[i].count_nonzero() > 0 for i, a in enumerate(A.tolist()) if a > 0)


def test_minus_n_parameter_gradient_is_grpo_on_the_negative_samples(tiny, tmp_path):
    """In parameter space: GRPO-N on the whole batch is GRPO on its negative samples alone
    (token-mean normaliser of the whole batch kept, as the indicator inside Eq. 2 keeps it)."""
    full, batch = generation(config(tiny, "grpo"), tmp_path)
    neg, batch_n = generation(config(tiny, "grpo_n"), tmp_path)
    B = len(batch["advantages"])
    rows = (batch["advantages"] < 0).nonzero().squeeze(1)
    sub = {k: v[rows] if torch.is_tensor(v) and v.dim() and len(v) == B else v
           for k, v in batch.items()}  # num_items_in_batch (the normaliser) stays
    grads = []
    for trainer, inputs in [(neg, batch_n), (full, sub)]:
        trainer.model.zero_grad()
        trainer._compute_loss(trainer.model, inputs).backward()
        grads.append(torch.cat([p.grad.flatten() for p in trainer.model.parameters()]))
    scale = grads[0].abs().max()
    assert scale > 0
    # equal up to float32 rounding: the sub-batch sums the same terms in another order
    torch.testing.assert_close(grads[0], grads[1], rtol=1e-4, atol=1e-6 * scale.item())


def test_lambda_scales_only_the_positive_samples(tiny, tmp_path):
    full, batch = generation(config(tiny, "grpo"), tmp_path)
    half, batch_h = generation(config(tiny, "grpo", positive_weight=0.5), tmp_path)
    A = batch["advantages"]
    g, g_h = hidden_grads(full, batch), hidden_grads(half, batch_h)
    for i, a in enumerate(A.tolist()):
        torch.testing.assert_close(g_h[i], g[i] * (0.5 if a > 0 else 1.0), rtol=1e-6, atol=0)


@pytest.mark.parametrize("name,mu", [("nsr", 0.0), ("w_reinforce", 0.1)])
def test_reinforce_advantages_by_hand_and_their_gradients(tiny, tmp_path, name, mu):
    """NSR and W-REINFORCE: each sample's advantage is mu r - (1 - r) from its own reward (by
    hand: the stand-in task's reward is 1 for an even length), whatever its group holds; a
    sample's gradient is GRPO's scaled by the ratio of the two advantages where GRPO's is not
    zero (the clipped surrogate is homogeneous in A of one sign), and a group that is all wrong,
    which GRPO leaves unmoved, is pushed down."""
    task = SomeHopeless()
    full, batch = generation(config(tiny, "grpo", task=task), tmp_path)
    other, batch_r = generation(config(tiny, name, task=task), tmp_path)
    assert torch.equal(batch["completion_ids"], batch_r["completion_ids"])
    texts = full.processing_class.batch_decode(
        [ids[m.bool()] for ids, m in zip(batch["completion_ids"], batch["completion_mask"])],
        skip_special_tokens=True)
    answers = [full.train_dataset[i // G]["answer"] for i in range(len(texts))]
    r = torch.tensor([float(task.verify(t, a)) for t, a in zip(texts, answers)])
    torch.testing.assert_close(batch_r["advantages"], mu * r - (1 - r))
    A, A_r = batch["advantages"], batch_r["advantages"]
    g, g_r = hidden_grads(full, batch), hidden_grads(other, batch_r)
    scaled = 0
    for i, (a, b) in enumerate(zip(A.tolist(), A_r.tolist())):
        if b == 0:
            assert g_r[i].count_nonzero() == 0, f"sample {i} (A={b}) got a gradient"
        elif abs(a) > 1e-6 and (a > 0) == (b > 0):
            torch.testing.assert_close(g_r[i], g[i] * (b / a), rtol=1e-4, atol=1e-9)
            scaled += 1
    assert scaled >= 4
    hopeless = [i for i in range(len(A)) if i // G % 4 == 0]  # GRPO: zero advantage; here -1
    assert all(abs(A[i]) < 1e-6 and g[i].count_nonzero() == 0 for i in hopeless)
    assert all(A_r[i] == -1 and g_r[i].count_nonzero() > 0 for i in hopeless)


def test_the_registry_holds_nsr_and_w_reinforce():
    from rlvr_dynamics.chapters import regime_map
    from rlvr_dynamics.regimes.toy_mapping import toy_update
    P = regime_map.Params.parse({"algorithms": ["grpo", "nsr"]})  # with its own toy update
    assert toy_update("NSR") == ("NSR", {"reinforce": 0.0}) and "nsr" in P.algorithms
    assert (algorithms.get("nsr").reinforce, algorithms.get("w_reinforce").reinforce) == (0.0, 0.1)
    assert all(algorithms.get(n).reinforce is None for n in ("grpo", "grpo_n", "gspo", "gspo_n"))
    from rlvr_dynamics.chapters.style import COLORS
    assert all(a.label in COLORS for a in algorithms.ALGORITHMS.values())


def test_kl_and_entropy_terms_still_act_on_dropped_samples(tiny, tmp_path):
    """With a KL penalty and an entropy bonus, a positive sample under GRPO-N gets exactly the
    regularisers' gradient (that of a zero advantage) and a negative one GRPO's gradient."""
    reg = dict(beta=0.05, entropy_coef=0.01)
    full, batch = generation(config(tiny, "grpo", **reg), tmp_path)
    neg, batch_n = generation(config(tiny, "grpo_n", **reg), tmp_path)
    A = batch["advantages"]
    zero = {**batch, "advantages": torch.zeros_like(A)}
    g, g_n, g_0 = hidden_grads(full, batch), hidden_grads(neg, batch_n), hidden_grads(full, zero)
    for i, a in enumerate(A.tolist()):
        if a < 0:
            assert torch.equal(g_n[i], g[i])
        else:
            assert g_0[i].count_nonzero() > 0
            torch.testing.assert_close(g_n[i], g_0[i], rtol=1e-6, atol=1e-12)


def padded_batch(trainer, lengths: list[tuple[int, int]]):
    """Input ids and mask of prompts and completions of the given (prompt, completion)
    lengths, the prompts left-padded and the completions right-padded to the longest, as TRL
    lays out a batch; and the completion width (``logits_to_keep``)."""
    P, C = max(p for p, _ in lengths), max(c for _, c in lengths)
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(3, trainer.model.config.vocab_size, (len(lengths), P + C), generator=gen)
    mask = torch.zeros_like(ids)
    for i, (p, c) in enumerate(lengths):
        mask[i, P - p:P + c] = 1
    return ids.masked_fill(mask == 0, trainer.processing_class.pad_token_id), mask, C


def same_passes(trainer, method, batch: tuple, first_only: bool = False) -> tuple:
    """Checks that ``method`` (a pass of ``GRPONTrainer``) gives what TRL's own pass gives on
    ``batch`` (ids, mask, completion width, batch size): per-token log-probs and entropies on
    every completion token (the first alone if ``first_only``), zeros elsewhere, and the
    gradient of every trainable parameter of those log-probs' sum; returns TRL's (log-probs,
    entropies, gradient)."""
    from trl import GRPOTrainer

    ids, mask, keep, batch_size = batch
    completion = mask[:, -keep:].bool()
    if first_only:
        completion[:, 1:] = False
    params = [p for p in trainer.model.parameters() if p.requires_grad]

    def run(pass_):
        trainer.model.zero_grad()
        logps, entropies, _ = pass_(trainer, trainer.model, ids, mask, keep, batch_size,
                                    compute_entropy=True)
        (logps * completion).sum().backward()
        return logps, entropies, torch.cat([p.grad.flatten() for p in params])

    ours, theirs = run(method), run(GRPOTrainer._get_per_token_logps_and_entropies)
    for a, b in zip(ours[:2], theirs[:2]):
        torch.testing.assert_close(a[completion], b[completion], rtol=1e-5, atol=1e-5)
        assert a[~completion].count_nonzero() == 0
    scale = theirs[2].abs().max().item()
    assert scale > 0
    torch.testing.assert_close(ours[2], theirs[2], rtol=1e-4, atol=1e-5 * scale)
    return theirs


LENGTHS = [(5, 2), (9, 3), (6, 11), (9, 1), (7, 2), (8, 12), (9, 2), (5, 4)]


@pytest.mark.parametrize("batch_size", [None, 3])
def test_the_passes_without_padding_are_trls_up_to_rounding(tiny, tmp_path, batch_size):
    """The per-token log-probs, entropies and their gradients of ``GRPONTrainer``'s passes
    (chunks cut to their own columns, in order of length) equal TRL's on every completion
    token, in the batch's order, with zeros on the padding; a pass that cut one column too many
    (the planted bug) is caught."""
    trainer, _ = generation(config(tiny), tmp_path)
    ids, mask, keep = padded_batch(trainer, LENGTHS)
    completion = mask[:, -keep:].bool()
    theirs = same_passes(trainer, type(trainer)._get_per_token_logps_and_entropies,
                         (ids, mask, keep, batch_size))

    def cuts_too_much(self, model, input_ids, attention_mask, logits_to_keep, batch_size=None,
                      **kwargs):  # the planted bug: the last used column left out
        logps, entropies, aux = type(trainer)._get_per_token_logps_and_entropies(
            self, model, input_ids[:, :-1], attention_mask[:, :-1], logits_to_keep - 1,
            batch_size, **kwargs)
        return torch.nn.functional.pad(logps, (0, 1)), entropies, aux

    with torch.no_grad():
        bad = cuts_too_much(trainer, trainer.model, ids, mask, keep, batch_size)[0]
    assert not torch.allclose(bad[completion], theirs[0][completion].detach(), atol=1e-5)


@pytest.mark.parametrize("batch_size,packed", [(None, False), (3, False), (3, True)])
def test_the_first_token_passes_are_trls_first_column(tiny, tmp_path, monkeypatch, batch_size,
                                                     packed):
    """Under ``first_only`` the passes, cut after the first completion token, give TRL's
    log-prob, entropy and gradient at that token (zeros after it), whichever pass they go
    through; a cut that leaves out the first completion token's own column (the planted bug:
    the last prompt token scored instead) is caught."""
    trainer, _ = generation(config(tiny, packed=packed), tmp_path)
    monkeypatch.setattr(trainer.args, "first_only", True)
    ids, mask, keep = padded_batch(trainer, LENGTHS)
    if packed:
        ids, mask, keep = grouped_batch(trainer, [9, 5, 7], [[2, 11, 1], [4, 4, 12], [3, 1, 6]])
    first = mask[:, -keep:].bool() & (torch.arange(keep) == 0)
    theirs = same_passes(trainer, type(trainer)._get_per_token_logps_and_entropies,
                         (ids, mask, keep, batch_size), first_only=True)

    def cuts_too_much(self, model, input_ids, attention_mask, logits_to_keep, batch_size=None,
                      **kwargs):  # the planted bug: cut one column early
        logps, entropies, aux = self._get_per_token_logps_and_entropies(
            model, input_ids[:, :-logits_to_keep], attention_mask[:, :-logits_to_keep], 1,
            batch_size, **kwargs)
        return torch.nn.functional.pad(logps, (0, logits_to_keep - 1)), entropies, aux

    monkeypatch.setattr(trainer.args, "first_only", False)
    with torch.no_grad():
        bad = cuts_too_much(trainer, trainer.model, ids, mask, keep, batch_size)[0]
    assert not torch.allclose(bad[first], theirs[0][first].detach(), atol=1e-3)


def grouped_batch(trainer, prompts: list[int], completions: list[list[int]]):
    """A batch as TRL lays it out in which the prompts repeat, one per group of completions
    (``prompts[g]`` tokens, ``completions[g]`` lengths), the rows shuffled as TRL shuffles a
    generation batch before it splits it; and the completion width."""
    lengths = [(p, c) for p, cs in zip(prompts, completions) for c in cs]
    ids, mask, keep = padded_batch(trainer, lengths)
    group = torch.tensor([g for g, cs in enumerate(completions) for _ in cs])
    first = torch.tensor([sum(map(len, completions[:g])) for g in range(len(prompts))])
    P = ids.shape[1] - keep
    ids[:, :P] = ids[first[group], :P]  # a group's rows share its prompt
    shuffle = torch.randperm(len(lengths), generator=torch.Generator().manual_seed(2))
    return ids[shuffle], mask[shuffle], keep


@pytest.mark.parametrize("model,batch_size,lora_rank,attention", [
    ("qwen2", None, 0, "sdpa"), ("qwen2", 4, 0, "sdpa"), ("qwen2", None, 4, "sdpa"),
    ("qwen2", 4, 0, "eager"), ("llama", 4, 4, "sdpa")])
def test_the_packed_passes_are_trls_up_to_rounding(tiny, tiny_llama, tmp_path, monkeypatch,
                                                   model, batch_size, lora_rank, attention):
    """``packed_passes`` (a row per distinct prompt of a chunk: the prompt once, then each
    completion attending to the prompt and to itself) gives TRL's per-token log-probs,
    entropies and gradients on every completion token, in the batch's order, zeros on the
    padding and on a completion masked out whole, in one chunk, in chunks that split groups,
    through LoRA, under eager attention's additive mask and on a Llama (SmolLM2's
    architecture); the packed rows hold each distinct prompt once and each completion's own
    tokens, nothing else; a mask that lets a group's completions see each other (the planted
    bug) is caught."""
    from rlvr_dynamics.rl import packing

    path = tiny if model == "qwen2" else tiny_llama
    trainer, _ = generation(config(path, packed=True, lora_rank=lora_rank), tmp_path)
    if attention != "sdpa":
        trainer.model.set_attn_implementation(attention)
    assert trainer.model.config._attn_implementation == attention
    prompts, completions = [9, 5, 7], [[2, 11, 1], [4, 0, 12], [3, 1, 6]]
    ids, mask, keep = grouped_batch(trainer, prompts, completions)
    completion = mask[:, -keep:].bool()
    theirs = same_passes(trainer, type(trainer).packed_passes, (ids, mask, keep, batch_size))
    assert trainer.args.packed  # the trainer's own passes take this path
    packed = packing.pack(ids, mask, keep, trainer.processing_class.pad_token_id)
    assert sorted(packed.prompt_mask.sum(1).tolist()) == sorted(p - 1 for p in prompts)
    assert packed.input_ids.shape[1] == int(completion.sum())

    allowed = packing.allowed

    def sees_its_group(packed):  # the planted bug: a completion sees the group's earlier ones
        ok = allowed(packed)
        S, g = packed.input_ids.shape[1], packed.group[0]
        ok[:, -S:] |= torch.ones(S, S, dtype=torch.bool).tril() & (g[:, None] == g)
        return ok

    monkeypatch.setattr(packing, "allowed", sees_its_group)
    with torch.no_grad():
        bad = type(trainer).packed_passes(trainer, trainer.model, ids, mask, keep, batch_size)[0]
    assert not torch.allclose(bad[completion], theirs[0][completion].detach(), atol=1e-3)


def test_sequence_ratio_matches_its_definition(tiny, tmp_path):
    """GSPO: w_i = (pi_theta(y_i|x) / pi_old(y_i|x))^(1/|y_i|), computed here from two plain
    forward passes (the sampling model and the moved one), against the w_i inside TRL's loss:
    with A_i = -1 on sample i alone, no clipping in reach and Eq. 2's normaliser, the loss is
    w_i / B."""
    from rlvr_dynamics import registry

    cfg = config(tiny, "gspo", loss_type="grpo", epsilon=0.9, dual_clip=None)
    trainer, batch = generation(cfg, tmp_path)
    old, _ = registry.load_model(cfg.model, "smoke")
    ids = torch.cat([batch["prompt_ids"], batch["completion_ids"]], 1)
    attention = torch.cat([batch["prompt_mask"], batch["completion_mask"]], 1)
    mask = batch["completion_mask"].float()
    T = batch["completion_ids"].shape[1]

    def seq_logp(model):
        with torch.no_grad():
            logits = model(input_ids=ids, attention_mask=attention).logits[:, -T - 1:-1]
        logp = torch.log_softmax(logits.double(), -1).gather(-1, batch["completion_ids"][..., None])
        return (logp.squeeze(-1) * mask).sum(-1)

    w = torch.exp((seq_logp(trainer.model) - seq_logp(old)) / mask.sum(-1))
    assert ((w - 1).abs() > 1e-3).any() and ((w - 1).abs() < 0.8).all()
    B = len(w)
    for i in range(B):
        advantages = torch.zeros(B)
        advantages[i] = -1.0
        with torch.no_grad():
            loss = trainer._compute_loss(trainer.model, {**batch, "advantages": advantages})
        assert abs(B * loss.item() - w[i].item()) < 1e-5 * w[i].item(), i


@pytest.mark.parametrize("probe_paper,settings", [(False, ["full"]), (True, ["paper", "full"])])
def test_a_sampled_probe_samples_under_the_settings_asked(tiny, tmp_path, probe_paper, settings):
    """A model other than the tiny sums base is probed by sampling (``SampledProbe``): ``n``
    samples of each probed problem under the full distribution alone, or under the paper's
    evaluation setting too (``probe_paper``), every count of right answers within ``n``."""
    from types import SimpleNamespace

    from rlvr_dynamics.rl.probe import SampledProbe
    from rlvr_dynamics.rl.runs import build_trainer

    cfg = config(tiny, probe_every=1, probe_problems=2, probe_samples=3, probe_paper=probe_paper)
    trainer = build_trainer(cfg, tmp_path / "run", "smoke")
    probe, = [c for c in trainer.callback_handler.callbacks if isinstance(c, SampledProbe)]
    state = SimpleNamespace(global_step=0, log_history=[])
    probe.evaluate(state)
    record = state.log_history[-1]["sampled_probe"]
    assert list(record) == settings
    for r in record.values():
        assert r["n"] == 3 and len(r["ids"]) == 2 and all(0 <= c <= 3 for c in r["correct"])


def test_unknown_algorithm_lists_the_valid_ones(tiny):
    with pytest.raises(ValueError, match=r"unknown algorithm 'ppo'; valid: \['grpo', 'grpo_n', "
                                         r"'gspo', 'gspo_n', 'nsr', 'w_reinforce'\]"):
        algorithms.get("ppo")
    with pytest.raises(ValueError, match="unknown algorithm 'ppo'"):
        config(tiny, "ppo")


def test_bad_configurations_fail_before_any_model_loads(tiny, tmp_path, monkeypatch):
    import rlvr_dynamics.rl.runs as run

    def no_loading(*args, **kwargs):
        raise AssertionError("a model was loaded")

    monkeypatch.setattr(run.registry, "load_model", no_loading)
    with pytest.raises(ValueError, match="generation_batch=30 is not divisible by "
                                         "num_generations=4"):
        config(tiny, generation_batch=30)
    with pytest.raises(FileNotFoundError, match="/no/such/model"):
        config("/no/such/model")
    with pytest.raises(ValueError, match="grpo_n trains on negative samples only"):
        config(tiny, "grpo_n", positive_weight=0.5)
    with pytest.raises(ValueError, match="packed=True needs gradient_checkpointing=False"):
        config(tiny, packed=True, gradient_checkpointing=True)
    monkeypatch.setenv("WORLD_SIZE", "3")  # 16 completions per update do not split over 3
    with pytest.raises(ValueError, match=r"update_batch=16 is not divisible by micro_batch=16 "
                                         r"x 3 device\(s\)"):
        run.build_trainer(config(tiny), tmp_path, "smoke")


@pytest.mark.parametrize("name", sorted(algorithms.ALGORITHMS))
def test_a_short_run_of_each_algorithm_completes(tiny, tmp_path, monkeypatch, name):
    import rlvr_dynamics.rl.runs as run

    monkeypatch.setenv("RLVR_RESULTS", str(tmp_path))
    cfg = config(tiny, name, beta=1e-3, entropy_coef=1e-4)
    out = run.train(cfg, "smoke")
    records = run.load_dynamics(out)
    assert [r["step"] for r in records] == [0, 1, 2]
    assert {"greedy_accuracy", "heldout_entropy"} <= set(records[0])
    assert not any(k.startswith(logged.HELDOUT_PREFIXES) for k in records[0])  # no paths
    for r in records[1:]:
        assert {"greedy_accuracy", "heldout_entropy", "reward", "actor_entropy", "kl",
                "clip_fraction", "frac_negative"} <= set(r)
        assert 0 <= r["frac_negative"] <= 1 and r["actor_entropy"] > 0
    assert json.loads((out / "done.json").read_text())["updates"] == cfg.steps * 2
    assert not (out / "checkpoints").exists()
    model, _ = run.load_final_model(out)
    assert sum(p.numel() for p in model.parameters()) > 0

    # found again by its configuration, not retrained
    monkeypatch.setattr(run, "build_trainer", lambda *a: pytest.fail("retrained"))
    assert run.train(dataclasses.replace(cfg), "smoke") == out
    assert run.run_dir(cfg.replace(seed=1), "smoke") != out
    if name == "grpo":
        assert run.run_dir(cfg.replace(positive_weight=0.5), "smoke").name.startswith(
            "grpo-lambda0.5-seed0-")


def test_a_lora_run_trains_only_adapters_and_saves_the_merged_policy(tiny, tmp_path,
                                                                     monkeypatch):
    """LoRA (the SmolLM2 profile's setting): the base weights stay frozen while training, and
    the saved final policy is a plain model with the adapters merged in, which differs from
    the base."""
    import rlvr_dynamics.rl.runs as run
    from rlvr_dynamics.models import load_tiny

    monkeypatch.setenv("RLVR_RESULTS", str(tmp_path))
    cfg = config(tiny, "grpo_n", lora_rank=4, learning_rate=1e-2)
    trainer = run.build_trainer(cfg, tmp_path / "probe", "smoke")
    trainable = {n for n, p in trainer.model.named_parameters() if p.requires_grad}
    assert trainable and all("lora_" in n for n in trainable)
    out = run.train(cfg, "smoke")
    final, _ = run.load_final_model(out)
    base, _ = load_tiny(tiny)
    assert not any("lora" in n for n, _ in final.named_parameters())
    assert set(final.state_dict()) == set(base.state_dict())
    assert any(not torch.equal(final.state_dict()[k], v) for k, v in base.state_dict().items())
    with pytest.raises(ValueError, match="lora_rank"):
        config(tiny, lora_rank=-1)


def synthetic(entropy, accuracy, seeds: int, noise: float, rng, held_out=None
              ) -> list[list[dict]]:
    """Runs whose rollout entropy is ``entropy(t)`` at every step, held-out curves
    ``held_out(t)`` (default: ``entropy``) and ``accuracy(t)`` every tenth, plus Gaussian
    noise."""
    held_out = held_out or entropy
    return [[{"step": t, "actor_entropy": entropy(t) + noise * rng.standard_normal(),
              **({"heldout_entropy": held_out(t) + noise * rng.standard_normal(),
                  "greedy_accuracy": accuracy(t) + noise * rng.standard_normal()}
                 if t % 10 == 0 else {})}
             for t in range(0, 101)] for _ in range(seeds)]


def test_readings_of_figure_2_can_come_out_every_way():
    """Each reading on synthetic curves where it holds, where the opposite holds, where there
    is no effect, where noise hides it, and with one seed."""
    import numpy as np

    from rlvr_dynamics import stats
    from rlvr_dynamics.rl.readings import readings

    rng = np.random.default_rng(0)
    paper_like = {
        "GRPO": synthetic(lambda t: 0.4 - 0.003 * t, lambda t: 0.5 + 0.003 * t, 5, 0.01, rng),
        "GRPO-N": synthetic(lambda t: 0.4 + 0.00004 * (t - 40) ** 2 - 0.064, lambda t: 0.5 + 0.003 * t,
                            5, 0.01, rng)}
    table = readings(paper_like)["verdict"]
    assert (table == stats.REPLICATES).all(), table
    collapse = {"GRPO": paper_like["GRPO"],
                "GRPO-N": synthetic(lambda t: 0.4 - 0.003 * t, lambda t: 0.3, 5, 0.01, rng)}
    table = readings(collapse)["verdict"]
    assert table.loc[("1. competitive greedy accuracy", "GRPO-N - GRPO, end")] == stats.OPPOSITE
    assert table.loc[("2. GRPO ends with the lowest entropy", "GRPO-N - GRPO, end")] == \
        stats.NO_EFFECT
    assert table.loc[("4. GRPO-N ends above the base", "GRPO-N: end - base")] == stats.OPPOSITE
    spread = [[{"step": t, "actor_entropy": 0.4 + o * t / 100, "greedy_accuracy": 0.5 + o * t / 100}
               for t in range(0, 101, 10)] for o in (0.3, 0.0, -0.3)]  # seeds that disagree
    table = readings({"GRPO": spread, "GRPO-N": spread})["verdict"]
    assert (table == stats.UNDECIDED).all(), table
    one_seed = {k: v[:1] for k, v in paper_like.items()}
    assert (readings(one_seed)["verdict"] == stats.FEW_SEEDS).all()
    # an algorithm the paper did not train is shown elsewhere, never a check of its claims
    beside = readings({**paper_like, "NSR": collapse["GRPO-N"]})
    assert beside.equals(readings(paper_like))


def test_the_entropy_minimum_is_after_the_start():
    """A curve that only rises has its lowest point at the start: reading 3's fall is then
    measured at a later step and fails (it could not fail when step 0 was allowed)."""
    import numpy as np

    from rlvr_dynamics import stats
    from rlvr_dynamics.rl.readings import readings

    rng = np.random.default_rng(1)
    rising = {"GRPO": synthetic(lambda t: 0.4, lambda t: 0.5, 4, 0.005, rng),
              "GRPO-N": synthetic(lambda t: 0.4 + 0.02 * t, lambda t: 0.5, 4, 0.005, rng)}
    fall = readings(rising).loc["3. entropy falls, then rises"]["verdict"].iloc[0]
    assert fall == stats.OPPOSITE


def test_a_path_switch_moves_the_held_out_entropy_not_the_verdict():
    """Greedy completions that switch to a long, near-deterministic path lower the held-out
    per-token entropy by themselves; the claims read the rollouts' entropy, which stays."""
    import numpy as np

    from rlvr_dynamics import stats
    from rlvr_dynamics.rl.readings import readings, verdict_rows
    from rlvr_dynamics.chapters.sentences import reading_rows

    rng = np.random.default_rng(3)
    switch = lambda t: 0.4 if t < 50 else 0.1  # noqa: E731
    flat = {m: synthetic(lambda t: 0.4, lambda t: 0.5, 4, 0.005, rng, held_out=switch)
            for m in ("GRPO", "GRPO-N")}
    assert readings(flat).loc[("4. GRPO-N ends above the base", "GRPO-N: end - base"),
                              "verdict"] == stats.NO_EFFECT
    assert readings(flat, "heldout_entropy").loc[
        ("4. GRPO-N ends above the base", "GRPO-N: end - base"), "verdict"] == stats.OPPOSITE
    rows = {r["claim"]: r for r in reading_rows(verdict_rows(flat), flat)}
    assert [v for _, v in rows["entropy_recovery"]["checks"]][-1] == stats.NO_EFFECT


def test_the_rollout_entropy_is_read_from_the_base_then_in_windows():
    from rlvr_dynamics.rl.readings import ROLLOUT_WINDOW, reading_curve

    run = [{"step": t, "actor_entropy": float(t)} for t in range(1, 13)]
    steps, v = reading_curve([run, run], "actor_entropy")
    assert ROLLOUT_WINDOW == 5
    assert list(steps) == [1, 4, 9, 12] and list(v[0]) == [1, 4, 9, 12]  # 2-6, 7-11, 12
    steps, v = reading_curve([[{**r, "x": r["actor_entropy"]} for r in run]], "x")
    assert list(steps) == list(range(1, 13))  # any other quantity: every logged step


def test_verdict_rows_carry_the_readings_and_the_end_values():
    """Each claim's checks are its readings (verdicts included) and its "ours" the end values
    per algorithm, mean ± sd over seeds; a claim whose readings could not be taken is left
    out (without GRPO, readings 1 and 2)."""
    import numpy as np

    from rlvr_dynamics.rl.readings import readings, verdict_rows
    from rlvr_dynamics.chapters.sentences import reading_rows

    def reading_rows_of(dynamics):
        return reading_rows(verdict_rows(dynamics), dynamics)

    rng = np.random.default_rng(2)
    dynamics = {"GRPO": synthetic(lambda t: 0.4 - 0.003 * t, lambda t: 0.5, 3, 0.01, rng),
                "GRPO-N": synthetic(lambda t: 0.4, lambda t: 0.5 + 0.001 * t, 3, 0.01, rng)}
    rows = {r["claim"]: r for r in reading_rows_of(dynamics)}
    assert list(rows) == ["competitive", "entropy_collapse", "entropy_recovery"]
    table = readings(dynamics)
    for claim, numbers in [("competitive", ("1.",)), ("entropy_recovery", ("3.", "4."))]:
        part = table[table.index.get_level_values(0).str.startswith(numbers)]
        assert [v for _, v in rows[claim]["checks"]] == list(part["verdict"])
        assert [c.split(":")[0] for c, _ in rows[claim]["checks"]] == \
            [q.split(":")[0] for q in part.index.get_level_values(1)]
    end = np.array([run[-1]["greedy_accuracy"] for run in dynamics["GRPO-N"]])
    assert f"GRPO-N {end.mean():.3f} ± {end.std(ddof=1):.3f}" in rows["competitive"]["ours"]
    assert rows["entropy_collapse"]["ours"].startswith("token entropy of the rollouts")
    held_out = readings(dynamics, "heldout_entropy")
    assert [v for _, v in rows["entropy_recovery"]["also"]] == list(
        held_out[held_out.index.get_level_values(0).str.startswith(("3.", "4."))]["verdict"])
    assert all(w.endswith("[held-out token entropy]") for w, _ in rows["entropy_recovery"]["also"])
    alone = reading_rows_of({"GRPO-N": dynamics["GRPO-N"]})
    assert [r["claim"] for r in alone] == ["entropy_recovery"]
    one_seed = reading_rows_of({k: v[:1] for k, v in dynamics.items()})[0]
    assert " ± " not in one_seed["ours"]
    assert "[" not in one_seed["checks"][0][0] and "[" in rows["competitive"]["checks"][0][0]


def test_held_out_table_lambda_ends_and_entropy_ratios():
    """The table averages each seed's summary over seeds (sd NaN with one seed); the lambda
    sweep runs from GRPO-N at 0 through the sweep to GRPO at 1, missing ends left out; our
    entropy ratio is each seed's end over its base, averaged."""
    import math

    import numpy as np

    from rlvr_dynamics.chapters.training import entropy_ratios, held_out_table, lambda_ends
    from rlvr_dynamics.rl.dynamics import summary

    rng = np.random.default_rng(3)
    dynamics = {"GRPO": synthetic(lambda t: 0.4 - 0.003 * t, lambda t: 0.5, 3, 0.01, rng),
                "GRPO-N": synthetic(lambda t: 0.4, lambda t: 0.5, 1, 0.01, rng)}
    table = held_out_table(dynamics)
    ends = [summary(run)["entropy_end"] for run in dynamics["GRPO"]]
    assert table.loc["GRPO", "entropy_end"] == pytest.approx(np.mean(ends))
    assert table.loc["GRPO", "sd entropy_end"] == pytest.approx(np.std(ends, ddof=1))
    assert math.isnan(table.loc["GRPO-N", "sd accuracy_end"])
    sweep = {0.5: synthetic(lambda t: 0.3, lambda t: 0.6, 2, 0.0, rng)}
    final = lambda_ends(dynamics, sweep)
    assert list(final) == [0.0, 0.5, 1.0]
    assert final[1.0] == [run[-1] for run in dynamics["GRPO"]] and len(final[0.0]) == 1
    assert list(lambda_ends({"GRPO": dynamics["GRPO"]}, {})) == [1.0]
    ratios = entropy_ratios(dynamics, "cpu")
    ours = [summary(run)["entropy_end"] / summary(run)["entropy_base"] for run in dynamics["GRPO"]]
    assert ratios.loc["GRPO", "ours (cpu), mean"] == pytest.approx(np.mean(ours))
    assert 0 < ratios.loc["GRPO", "paper, AMC 2023"] < 1  # the paper's GRPO collapses entropy


def test_gspo_aggregates_per_sequence_whatever_the_runs_loss_type(tiny, tmp_path):
    """GSPO's objective counts each sequence once (TRL's "grpo" aggregation), so GSPO and GSPO-N
    do not take the run's token-mean "dapo"; GRPO and GRPO-N do."""
    from rlvr_dynamics.rl.runs import grpo_args

    for name, expected in [("grpo", "dapo"), ("grpo_n", "dapo"), ("gspo", "grpo"),
                           ("gspo_n", "grpo")]:
        assert grpo_args(config(tiny, name, loss_type="dapo"), tmp_path).loss_type == expected


def test_rollouts_come_from_the_project_sampler_seeded_by_the_update(tiny, tmp_path,
                                                                     monkeypatch):
    """Where TRL would call ``generate``, the trainer draws each group's completions with the
    book's sampler from a seed of (run seed, update, process): the same rollouts as that
    sampler's at that seed, a group's prompt prefilled once, every row in one decoding loop,
    TRL's stop tokens kept at the end; with top-k set (which the sampler does not do) TRL's own
    generation runs."""
    import numpy as np

    import rlvr_dynamics.rl.runs as run
    from rlvr_dynamics.sampling import SamplingParams, TransformersBackend

    monkeypatch.setenv("RLVR_RESULTS", str(tmp_path))
    trainer = run.build_trainer(config(tiny), tmp_path / "rollouts", "smoke")
    tok = trainer.processing_class
    ids = [tok("3+4=")["input_ids"]] * G + [tok("5+1=")["input_ids"]] * G
    trainer.state.global_step = 7
    loops, decode = [], TransformersBackend._decode
    monkeypatch.setattr(TransformersBackend, "_decode",
                        lambda self, batch, *a: loops.append(len(batch)) or decode(self, batch, *a))
    got, logprobs = trainer._generate_single_turn(ids, None, {}, G)
    assert loops == [len(ids)]
    seed = int(np.random.SeedSequence([0, 7, 0]).generate_state(1)[0])
    want = TransformersBackend(trainer.model, tok, batch_size=len(ids), progress=False,
                               stops=trainer.eos_token_ids).generate_ids(
        ids, SamplingParams(n=1, temperature=1.0, top_p=1.0, max_tokens=12, seed=seed))
    assert got == [list(row[0].token_ids) for row in want] and logprobs is None
    assert len({tuple(c) for c in got}) > 2  # the rows are samples, not copies
    assert all(c[-1] in trainer.eos_token_ids or len(c) == 12 for c in got)
    trainer.state.global_step = 8
    assert trainer._generate_single_turn(ids, None, {}, G)[0] != got  # a new update, new draws
    calls = []
    monkeypatch.setattr(type(trainer).__mro__[1], "_generate_single_turn",
                        lambda self, *a: calls.append(a) or ([[1]] * len(ids), None))
    trainer.top_k = 5
    assert trainer._generate_single_turn(ids, None, {}, G)[0] == [[1]] * len(ids)
    assert len(calls) == 1


def test_the_settings_sentences_follow_the_parameters(monkeypatch):
    """The paper profile's unsaid settings and batches in TRL's terms, what a profile keeps of
    the paper's settings and what it changes, why its learning rate is not the paper's (with
    the base's mean absolute weight; nothing under the paper's rate), and the clip fraction
    per algorithm, mean over steps and seeds."""
    import numpy as np

    from rlvr_dynamics.chapters import training as chapter
    from rlvr_dynamics.chapters.training import sentences
    from rlvr_dynamics.profiles import plan

    paper = {"num_generations": 4, "generation_batch": 4096, "update_batch": 1024, "steps": 21,
             "weight_decay": 0.1, "dual_clip": 2.0, "eval_every": 3}
    text = sentences.paper_text(paper)
    assert "weight decay 0.1, a dual-clip bound of 2 " in text
    assert "21 steps evaluated every 3: 3 epochs of MATH's 7,500 training problems, 7 batches of " \
           "1,024 prompts each" in text  # 7,500 // 1,024 = 7 full batches an epoch
    assert "1,024 prompts × 4 rollouts is a generation batch of 4,096, and mini-batches of 256 " \
           "prompts are updates of 1,024 completions, hence 4 optimizer updates" in text
    P = chapter.Params.check({})
    text = sentences.scale_text(P)
    assert text.startswith("Under the `cpu` profile the runs keep the paper's 8 rollouts per "
                           "prompt, 4 updates per generation batch, clip ratio 0.2 (dual clip 3)")
    assert "; they use `sums-base` as the base, 8 prompts per step, 100 steps" in text
    assert text.endswith("a learning rate of 3e-05 in place of the paper's.")
    paper_P = chapter.Params.parse(plan("paper", ["training"])["training"])
    assert "in place of" not in sentences.scale_text(paper_P)
    assert chapter.paper_rate_travel(paper_P) is None
    assert sentences.learning_rate_text(paper_P, None) == ""
    layer = torch.nn.Linear(4, 4)
    with torch.no_grad():
        layer.weight.fill_(-0.02)
        layer.bias.fill_(5.0)  # not a matrix: left out
    monkeypatch.setattr(chapter.registry, "load_model", lambda spec, profile: (layer, None))
    assert sentences.learning_rate_text(P, chapter.paper_rate_travel(P)) == (
        "At the paper's learning rate of 1e-06, Adam moves each weight by about the learning rate "
        "per update, some 4e-04 over our 400 updates, against a mean absolute weight of 2e-02 in "
        "the base's weight matrices: nothing would happen. The runs use 3e-05.")
    run = [{"step": 0, "greedy_accuracy": 0.5}, *({"step": t, "clip_fraction": c}
                                                  for t, c in ((1, 0.0), (2, 0.02)))]
    other = [{"step": 0}, *({"step": t, "clip_fraction": 0.04} for t in (1, 2))]
    text = sentences.clip_text({"GRPO": [run, other], "GSPO": [[{"step": 0}]]})
    assert text.endswith(f"GRPO {np.mean([0.0, 0.02, 0.04, 0.04]):.2%}.") and "GSPO" not in text


def test_the_held_out_entropy_splits_by_path_by_hand():
    """Sums over shards -> the logged entry: 2 of 4 problems right; 3 non-empty completions,
    two direct (entropies 1.0 and 2.0) and one stepwise (0.5): shares 2/3 and 1/3, entropies
    1.5 and 0.5, the mixed mean 3.5 / 3; a path no completion took has a share of 0 and no
    entropy. A task without paths logs the two numbers alone."""
    by_path = [2, 3.0, 1, 0.5, 0, 0.0, 0, 0.0]
    entry = logged.heldout_entry([2, 4, 3.5, 3, *by_path], PATHS)
    assert entry["greedy_accuracy"] == 0.5 and entry["heldout_entropy"] == pytest.approx(3.5 / 3)
    assert (entry["heldout_share_direct"], entry["heldout_share_stepwise"]) == \
        (pytest.approx(2 / 3), pytest.approx(1 / 3))
    assert (entry["heldout_entropy_direct"], entry["heldout_entropy_stepwise"]) == (1.5, 0.5)
    assert entry["heldout_share_guess"] == 0 and "heldout_entropy_guess" not in entry
    assert set(logged.heldout_entry([2, 4, 3.5, 3])) == {"greedy_accuracy", "heldout_entropy"}
    kept = logged.records([{"step": 1, **entry}], 1)[0]
    assert kept["heldout_entropy_stepwise"] == 0.5 and "heldout_entropy_guess" not in kept


def test_greedy_completions_of_the_sums_task_are_counted_by_path(tiny):
    """On the sums task every non-empty greedy completion falls on one path, and the paths'
    entropy sums add up to the whole's."""
    from rlvr_dynamics.models import load_tiny
    from rlvr_dynamics.tasks.sums import SumTask

    model, tokenizer = load_tiny(tiny)
    task = SumTask()
    correct, n, h, nonempty, *by_path = logged.greedy_heldout(
        model, tokenizer, task, task.problems("test")[:6], 8, 6, progress=False).tolist()
    assert n == 6 and len(by_path) == 2 * len(task.paths)
    assert sum(by_path[::2]) == nonempty and sum(by_path[1::2]) == pytest.approx(h)


def test_the_by_path_table_tells_a_path_switch_from_a_sharpening():
    """Two synthetic runs: one switches every greedy completion from direct to stepwise with
    each path's entropy unchanged (the whole falls), one stays direct and sharpens; the table
    shows the first in the shares, the second in the direct path's entropy. A path never taken
    is left out; a task without paths gives an empty table."""
    import numpy as np

    from rlvr_dynamics.chapters.training import by_path_table

    def run(start, end):
        return [{"step": t, **logged.heldout_entry(totals, PATHS)}
                for t, totals in ((0, start), (5, end))]
    direct, stepwise = [4, 4.0, 0, 0.0, 0, 0, 0, 0], [0, 0.0, 4, 1.0, 0, 0, 0, 0]
    sharper = [4, 2.0, 0, 0.0, 0, 0, 0, 0]
    t = by_path_table({"switch": [run([0, 4, 4.0, 4, *direct], [0, 4, 1.0, 4, *stepwise])],
                       "sharpen": [run([0, 4, 4.0, 4, *direct], [0, 4, 2.0, 4, *sharper])]})
    assert (t.loc[("switch", "base"), "share, direct"], t.loc[("switch", "end"),
            "share, stepwise"]) == (1.0, 1.0)
    assert t.loc[("switch", "end"), "entropy, stepwise"] == 0.25
    assert t.loc[("sharpen", "end"), "share, direct"] == 1.0
    assert t.loc[("sharpen", "end"), "entropy, direct"] == 0.5 < \
        t.loc[("sharpen", "base"), "entropy, direct"]
    assert np.isnan(t.loc[("sharpen", "end"), "entropy, stepwise"])
    assert "share, guess" not in t and "entropy, other" not in t
    assert by_path_table({"GRPO": [[{"step": 0, "heldout_entropy": 1.0}]]}).empty


def test_the_readings_decide_in_computing_code_and_a_planted_outcome_flips_the_record():
    """``rl.readings.verdict_rows`` decides which checks vote (the rollouts' entropy and the
    accuracy; the held-out entropy beside them) and their outcomes, no page rendered: an entropy
    that ends above the base under GRPO-N replicates reading 4, one that ends below it flips
    it to opposite, and the recorded entropy_collapse (GRPO-N against GRPO at the end) with
    it; the held-out readings never vote."""
    import numpy as np

    from rlvr_dynamics import stats, verdicts
    from rlvr_dynamics.rl.readings import verdict_rows

    rng = np.random.default_rng(5)

    def decided(end: float):
        dynamics = {"GRPO": synthetic(lambda t: 0.4, lambda t: 0.5, 4, 0.002, rng),
                    "GRPO-N": synthetic(lambda t: 0.4 + end * t / 100, lambda t: 0.5, 4, 0.002,
                                        rng)}
        return verdict_rows(dynamics)

    recorded = {}
    for end, expected in ((0.2, stats.REPLICATES), (-0.2, stats.OPPOSITE)):
        rows = decided(end)
        four = rows[rows["reading"].str.startswith("4.") & rows["votes"]]
        assert list(four["outcome"]) == [expected]
        assert not rows[rows["read"] == "heldout_entropy"]["votes"].any()
        assert rows[rows["read"] == "heldout_entropy"]["claim"].isin(
            ["entropy_collapse", "entropy_recovery"]).all()
        collapse = rows[(rows["claim"] == "entropy_collapse") & rows["votes"]]["outcome"]
        recorded[expected] = verdicts.combine(list(collapse))  # GRPO-N - GRPO at the end
    assert recorded == {stats.REPLICATES: "replicates", stats.OPPOSITE: stats.OPPOSITE}
