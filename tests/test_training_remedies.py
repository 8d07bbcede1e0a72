"""The trainer's options for a remedy of GRPO-N's loss of the rare path (issue 51, item 5): a
weight w on the first completion token's loss (w = 1 the loss of before, w = 0 that of
``after_first``, both checked against those code paths; any w against the decomposition of
the loss by hand), and NTHR (Deng et al., arXiv 2505.18830): its score against a brute-force
double sum, its selection on a planted group where one wrong token's hidden state and
prediction error are a correct token's, and its factors on the advantages of a real batch;
each with a planted fault that fails. Off, the options change nothing, and the folders of
earlier runs stay where they were."""
from __future__ import annotations

import pytest
import torch

from rlvr_dynamics.rl.config import LATER, TrainConfig
from rlvr_dynamics.rl.trainer import GRPONConfig, first_weighted, nthr_scores, nthr_select
from rlvr_dynamics.store import config_key
from test_regime_knobs import results, run_config  # noqa: F401 (fixture)
from test_training import config, tiny  # noqa: F401 (fixture)
from test_training_mechanism import one_batch, sums_config, trainer_of

torch.set_num_threads(1)

NEW = {"first_character_weight": 0.5, "nthr": True}


def same(a: dict, b: dict) -> bool:
    """Whether two batches hold the same keys and, bit for bit, the same values."""
    return a.keys() == b.keys() and all(
        torch.equal(a[k], b[k]) and a[k].dtype == b[k].dtype if torch.is_tensor(a[k])
        else a[k] == b[k] for k in a)


def moved(trainer) -> None:
    """The policy moved off the one that sampled, so that every token's ratio is its own."""
    noise = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in trainer.model.parameters():
            p.add_(0.15 * torch.randn(p.shape, generator=noise))


def loss(trainer, batch) -> torch.Tensor:
    with torch.no_grad():
        return trainer._compute_loss(trainer.model, batch)


# --- keys and settings --------------------------------------------------------------------

def test_the_remedies_fields_leave_earlier_runs_keys_alone():
    """At their defaults the new fields (``LATER``) are not in a run's ``as_dict``; away from
    them they are, and the run reads back as itself; a whole number weight is the float's run."""
    cfg = sums_config(path_prior=0.01, probe_every=2)
    values = cfg.as_dict()
    assert not set(LATER) & set(values)
    assert TrainConfig.from_dict(values) == cfg
    for change in [dict(first_character_weight=0.0), dict(first_character_weight=2.0),
                   dict(nthr=True), dict(nthr=True, nthr_beta=0.0),
                   dict(nthr=True, nthr_eta=0.0)]:
        other = cfg.replace(**change)
        assert set(change) <= set(other.as_dict())
        assert config_key(other.as_dict()) != config_key(values)
        assert TrainConfig.from_dict(other.as_dict()) == other
    assert (config_key(cfg.replace(first_character_weight=0).as_dict())
            == config_key(cfg.replace(first_character_weight=0.0).as_dict()))


def test_the_remedies_settings_are_checked_and_reach_the_trainer(tmp_path):
    """Each setting's range, refused with its name; the exclusions; the tiny sums base; the
    values in TRL's arguments of the run's trainer (at their defaults, those of before)."""
    from rlvr_dynamics.rl.runs import grpo_args

    plain = grpo_args(sums_config(), tmp_path / "plain")
    assert plain.first_weight == 1.0 and not plain.nthr
    assert plain.nthr_beta == 1.0 and plain.nthr_eta is None
    args = grpo_args(sums_config(first_character_weight=0.25, nthr=True, nthr_beta=0.5,
                                 nthr_eta=0.0), tmp_path / "args")
    assert (args.first_weight, args.nthr, args.nthr_beta, args.nthr_eta) == (0.25, True, 0.5, 0.0)
    for changes, match in [
        (dict(first_character_weight=-0.5), "first_character_weight=-0.5 must be >= 0"),
        (dict(first_character_weight=float("inf")), "first_character_weight=inf must be"),
        (dict(first_character_weight=0.5, first_character_only=True),
         "first_character_weight=0.5 excludes first_character_only"),
        (dict(first_character_weight=0.5, after_first_character=True),
         "first_character_weight=0.5 excludes"),
        (dict(nthr_beta=0.5), "nthr_beta=0.5 needs nthr=True"),
        (dict(nthr_eta=0.5), "nthr_eta=0.5 needs nthr=True"),
        (dict(nthr=True, nthr_eta=1.0), "nthr_eta=1.0 must be None or in"),
        (dict(nthr=True, nthr_eta=-0.1), "nthr_eta=-0.1 must be None or in"),
        (dict(nthr=True, nthr_beta=float("nan")), "nthr_beta=nan must be finite"),
    ]:
        with pytest.raises(ValueError, match=match):
            sums_config(**changes)
    for field, value in NEW.items():
        with pytest.raises(ValueError, match=f"{field}=.* needs the tiny sums base"):
            sums_config(model="Qwen/Qwen2.5-Math-7B", task="sums", **{field: value})
    for changes, match in [(dict(first_weight=0.5, after_first=True), "first_weight excludes"),
                           (dict(first_weight=-1.0), "first_weight must be >= 0"),
                           (dict(nthr_eta=1.0), "nthr_eta must be in"),
                           (dict(nthr_beta=float("inf")), "nthr_beta must be finite")]:
        with pytest.raises(ValueError, match=match):
            GRPONConfig(output_dir=str(tmp_path / "x"), use_cpu=True, **changes)


# --- the first token's weight ------------------------------------------------------------

def weighted_by_hand(plain: dict, after: dict, w: float, column: int = 0) -> bool:
    """Whether ``after`` is ``plain`` with the loss mask's ``column`` weighted by w: the same
    completions, attention and advantages, the loss mask (completion mask times TRL's
    loss-only mask) the completion mask with that column times w, the normaliser its sum."""
    hand = plain["completion_mask"].float()
    hand[:, column] *= w
    mask = after["completion_mask"] * after["tool_mask"]
    return (torch.equal(after["completion_ids"], plain["completion_ids"])
            and torch.equal(after["completion_mask"], plain["completion_mask"])
            and torch.equal(after["advantages"], plain["advantages"])
            and torch.equal(mask, hand)
            and float(after["num_items_in_batch"]) == float(hand.sum()))


def test_the_first_tokens_weight_is_the_loss_of_before_at_1_and_after_first_at_0(tiny,
                                                                                  tmp_path):
    """Under GRPO-N, with a KL term and the policy off the sampler's: w = 1 (the option off)
    leaves the batch as it was, bit for bit, and the weighted mask forced at w = 1 gives the
    plain loss exactly; w = 0 gives ``after_first``'s mask values, normaliser and loss
    exactly; any w weights the first column alone, and the loss decomposes as
    N_w L_w = N_after L_after + w N_first L_first (the normaliser counts weighted tokens). A
    weight planted on the second column fails both checks."""
    cfg = config(tiny, "grpo_n", beta=0.04)
    plain = one_batch(trainer_of(cfg, tmp_path / "plain"))
    assert same(one_batch(trainer_of(cfg, tmp_path / "one", first_weight=1.0)), plain)
    assert "tool_mask" not in plain
    after = one_batch(trainer_of(cfg, tmp_path / "after", after_first=True))
    first = one_batch(trainer_of(cfg, tmp_path / "first", first_only=True))
    batches = {w: one_batch(trainer_of(cfg, tmp_path / f"w{w}", first_weight=w))
               for w in (0.0, 0.3, 2.0)}
    for w, batch in batches.items():
        assert weighted_by_hand(plain, batch, w)
        assert batch["tool_mask"].dtype == torch.float32
    trainer = trainer_of(cfg, tmp_path / "loss")
    moved(trainer)
    forced = {**plain, "tool_mask": first_weighted(torch.ones_like(plain["completion_mask"]), 1.0)}
    forced["num_items_in_batch"] = (forced["tool_mask"] * plain["completion_mask"]).sum()
    assert torch.equal(loss(trainer, forced), loss(trainer, plain))
    zero = batches[0.0]
    assert torch.equal(zero["completion_mask"] * zero["tool_mask"],
                       (after["completion_mask"] * after["tool_mask"]).float())
    assert float(zero["num_items_in_batch"]) == float(after["num_items_in_batch"])
    assert torch.equal(loss(trainer, zero), loss(trainer, after))

    def total(batch) -> float:
        return float(loss(trainer, batch)) * float(batch["num_items_in_batch"])

    for w in (0.3, 2.0):
        assert total(batches[w]) == pytest.approx(total(after) + w * total(first), rel=1e-5)
    wrong = {**batches[0.3], "tool_mask": torch.ones_like(batches[0.3]["tool_mask"])}
    wrong["tool_mask"][:, 1] = 0.3
    wrong["num_items_in_batch"] = (wrong["tool_mask"] * plain["completion_mask"]).sum()
    assert not weighted_by_hand(plain, wrong, 0.3)
    assert total(wrong) != pytest.approx(total(after) + 0.3 * total(first), rel=1e-3)
    assert weighted_by_hand(plain, wrong, 0.3, column=1)  # what the check tells apart


# --- NTHR ---------------------------------------------------------------------------------

def brute_force(hidden, probs, ids, mask, positive) -> torch.Tensor:
    """Eq. 7 as written: for every token t, the sum over every token k of every correct
    sample of <e_(y_k) - q_k, e_(y_t) - q_t> <h_k, h_t>, with one-hot vectors."""
    n, T, V = probs.shape
    out = torch.zeros(n, T, dtype=torch.float64)
    g = torch.nn.functional.one_hot(ids, V).double() - probs.double()
    for j in range(n):
        for t in range(T):
            if not mask[j, t]:
                continue
            out[j, t] = sum(float(g[i, k] @ g[j, t]) * float(hidden[i, k].double()
                                                                @ hidden[j, t].double())
                            for i in range(n) if positive[i] for k in range(T) if mask[i, k])
    return out


def test_the_nthr_score_is_the_papers_double_sum():
    """``nthr_scores`` (pairs of tokens, alpha from ids and probabilities) equals Eq. 7 summed
    with one-hot vectors, padding masked; with the sample roles swapped it does not."""
    gen = torch.Generator().manual_seed(0)
    n, T, V, d = 5, 6, 7, 4
    hidden = torch.randn(n, T, d, generator=gen)
    probs = torch.softmax(torch.randn(n, T, V, generator=gen), -1)
    ids = torch.randint(0, V, (n, T), generator=gen)
    mask = torch.ones(n, T, dtype=torch.bool)
    mask[1, 4:] = mask[3, 2:] = False
    positive = torch.tensor([True, False, True, False, False])
    got = nthr_scores(hidden, probs, ids, mask, positive)
    hand = brute_force(hidden, probs, ids, mask, positive)
    assert torch.allclose(got.double(), hand, rtol=1e-5, atol=1e-6)
    assert (got[~mask] == 0).all()
    swapped = nthr_scores(hidden, probs, ids, mask, ~positive)
    assert not torch.allclose(swapped.double(), hand, rtol=1e-2, atol=1e-3)


def planted_group():
    """One group of four: samples 0, 1 correct, 2, 3 wrong, three tokens each (sample 3's last
    is padding). Every token's hidden state is its own unit vector (all orthogonal) and every
    token's next-token distribution the same, except token 1 of wrong sample 2: its hidden
    state is twice the unit vector of token 0 of correct sample 0, and both share a sampled
    id. So every wrong token scores 0 against the correct ones but that one, which scores
    4 |g|^2, above tau = the least correct sample's mean score (|g|^2 (4 + 1 + 1) / 3 and
    |g|^2)."""
    n, T, V = 4, 3, 5
    hidden = torch.zeros(n, T, n * T)
    for i in range(n):
        for k in range(T):
            hidden[i, k, i * T + k] = 1.0
    hidden[0, 0] = 2 * hidden[0, 0]
    hidden[2, 1] = hidden[0, 0]
    probs = torch.full((n, T, V), 1 / V)
    ids = torch.tensor([[0, 1, 2], [3, 4, 0], [1, 0, 3], [2, 2, 4]])
    ids[2, 1] = ids[0, 0]
    mask = torch.ones(n, T, dtype=torch.bool)
    mask[3, 2] = False
    positive = torch.tensor([True, True, False, False])
    return hidden, probs, ids, mask, positive


def weights(selected: torch.Tensor, eta: float) -> torch.Tensor:
    return torch.where(selected, torch.tensor(eta), torch.tensor(1.0))


def only(index: tuple[int, int], eta: float, shape) -> torch.Tensor:
    expected = torch.ones(shape)
    expected[index] = eta
    return expected


def test_nthr_reduces_the_weight_of_the_wrong_token_that_resembles_a_right_one():
    """On the planted group, NTHR selects token 1 of wrong sample 2 alone: its weight is eta,
    every other token's (the correct samples', the other wrong ones', padding) is 1; tau is
    the least correct sample's mean score; a larger beta selects nothing. A planted fault that
    weights the correct samples' tokens instead (the roles swapped) fails."""
    hidden, probs, ids, mask, positive = planted_group()
    negative = ~positive
    scores = nthr_scores(hidden, probs, ids, mask, positive)
    g2 = float(((torch.nn.functional.one_hot(ids[0, 0], 5) - probs[0, 0]) ** 2).sum())
    assert float(scores[2, 1]) == pytest.approx(4 * g2)
    assert (scores[negative][mask[negative]].abs().sum() - scores[2, 1]).abs() < 1e-6
    selected = nthr_select(scores, mask, positive, negative, beta=1.0)
    expected = only((2, 1), 0.5, mask.shape)
    assert torch.equal(weights(selected, 0.5), expected)
    assert not nthr_select(scores, mask, positive, negative, beta=4.01).any()
    assert nthr_select(scores, mask, positive, negative, beta=3.99)[2, 1]
    fault = nthr_select(scores, mask, positive, positive, beta=1.0)  # the correct ones weighted
    assert not torch.equal(weights(fault, 0.5), expected)
    assert not nthr_select(scores, mask, torch.zeros(4, dtype=torch.bool), negative, 1.0).any()


def test_nthr_scales_the_wrong_samples_selected_tokens_in_a_real_batch(tiny, tmp_path):
    """Through the trainer, under GRPO and GRPO-N: off, the batch is as before, bit for bit;
    on, the advantages are per token, the plain ones times factors that are 1 on every
    correct sample's token and every unselected one, eta (fixed, or the paper's 2 |0.5 - p|
    per group) on the selected tokens of wrong samples, the same factors whatever lambda; the
    masks and the normaliser as before, ``frac_nthr`` logged; the hidden states are what the
    output layer maps to the logits; the loss reads the per-token advantages (with every
    wrong token scaled to 0 under GRPO-N, nothing is left to move)."""
    factors = {}
    for algorithm in ("grpo", "grpo_n"):
        cfg = config(tiny, algorithm)
        plain = one_batch(trainer_of(cfg, tmp_path / algorithm))
        assert same(one_batch(trainer_of(cfg, tmp_path / f"{algorithm}-off", nthr=False)), plain)
        trainer = trainer_of(cfg, tmp_path / f"{algorithm}-on", nthr=True, nthr_eta=0.25)
        batch = one_batch(trainer)
        assert batch["advantages"].shape == batch["completion_mask"].shape
        assert same({k: v for k, v in batch.items() if k != "advantages"},
                    {k: v for k, v in plain.items() if k != "advantages"})
        a = plain["advantages"].unsqueeze(1).expand_as(batch["advantages"])
        f = torch.where(a != 0, batch["advantages"] / a.where(a != 0, torch.ones(())),
                        torch.ones(()))
        rewards = trainer._rewards_per_func[:, 0].view(-1, trainer.num_generations)
        wrong = (rewards < rewards.mean(1, keepdim=True)).view(-1)
        assert set(f[wrong].unique().tolist()) <= {0.25, 1.0}
        assert (f[~wrong] == 1).all() and (f[~plain["completion_mask"].bool()] == 1).all()
        scaled = f == 0.25
        assert scaled.any() and (scaled.sum(1)[wrong] < plain["completion_mask"].sum(1)[wrong]).any()
        share = float(scaled.sum() / (plain["completion_mask"].bool() & wrong.unsqueeze(1)).sum())
        assert trainer._metrics["train"]["frac_nthr"][-1] == pytest.approx(share)
        factors[algorithm] = torch.where(wrong.unsqueeze(1), f, torch.ones(()))
        hidden, probs = trainer.nthr_inputs(batch)
        ids = torch.cat([batch["prompt_ids"], batch["completion_ids"]], 1)
        with torch.no_grad():
            logits = trainer.model(input_ids=ids, attention_mask=torch.cat(
                [batch["prompt_mask"], batch["completion_mask"]], 1)).logits
        cut = logits[:, batch["prompt_ids"].shape[1] - 1:-1]
        with torch.no_grad():
            assert torch.allclose(trainer.model.get_output_embeddings()(hidden), cut, atol=1e-5)
        assert torch.allclose(probs, torch.softmax(cut, -1), atol=1e-6)
        assert torch.isfinite(loss(trainer, batch))
    assert torch.equal(factors["grpo"], factors["grpo_n"])
    trainer = trainer_of(config(tiny, "grpo"), tmp_path / "paper", nthr=True)
    batch = one_batch(trainer)
    plain = trainer_of(config(tiny, "grpo"), tmp_path / "plain-paper")
    a = one_batch(plain)["advantages"]
    G = trainer.num_generations
    rewards = trainer._rewards_per_func[:, 0].view(-1, G)
    for g in range(len(rewards)):
        rows = slice(g * G, (g + 1) * G)
        p = float((rewards[g] > rewards[g].mean()).float().mean())
        ratio = batch["advantages"][rows] / a[rows].unsqueeze(1).where(a[rows].unsqueeze(1) != 0,
                                                                      torch.ones(()))
        values = set(torch.round(ratio[a[rows] < 0], decimals=5).unique().tolist())
        assert values <= {1.0, round(2 * abs(0.5 - p), 5)}, (g, p, values)
    trainer = trainer_of(config(tiny, "grpo_n"), tmp_path / "zero", nthr=True, nthr_eta=0.0)
    batch = one_batch(trainer)
    moved(trainer)
    if (batch["advantages"] != 0).any():
        assert float(loss(trainer, batch)) != 0.0


def test_a_run_with_the_remedies_trains_to_its_end(results, tmp_path):
    """Both options together on the tiny sums base under GRPO-N: the run trains to its end
    and logs the share NTHR selected."""
    from rlvr_dynamics.rl.runs import build_trainer, load_dynamics, train

    cfg = run_config(algorithm="grpo_n", path_prior=0.3, first_character_weight=3.0, nthr=True,
                     entropy_coef=0.01)
    trainer = build_trainer(cfg, tmp_path / "run", "test")
    assert trainer.args.first_weight == 3.0 and trainer.args.nthr
    run = load_dynamics(train(cfg, "test"))
    assert any("frac_nthr" in r for r in run), run[-1]
