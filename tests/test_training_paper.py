"""The paper profile (Appendix C.2) resolves, validates and builds its trainer through the same
code path as the CPU runs, with a tiny stand-in for the 7B model (no GPU, no hub here); its
accelerate and DeepSpeed launch files are consistent."""
from __future__ import annotations

import json

import pytest
import yaml

from rlvr_dynamics import REPO
from rlvr_dynamics.chapters.training import Params
from rlvr_dynamics.profiles import plan

from test_training import Parity, tiny  # noqa: F401  (the saved tiny model fixture)


@pytest.fixture(scope="module")
def paper():
    return Params.parse(plan("paper", ["training"])["training"])


def test_paper_profile_carries_appendix_c2(paper):
    cfg = paper.run_config("grpo", 0)
    assert cfg.model == "Qwen/Qwen2.5-Math-7B" and cfg.task == "math"
    assert cfg.generation_batch == 1024 * 8 and cfg.num_generations == 8
    assert cfg.update_batch == 256 * 8 and cfg.updates_per_step == 4
    assert (cfg.learning_rate, cfg.beta, cfg.epsilon, cfg.entropy_coef) == (1e-6, 1e-3, 0.2, 1e-4)
    assert cfg.temperature == 1.0 and cfg.context == 4096
    assert cfg.use_vllm and cfg.bf16 and not paper.train_inline


@pytest.mark.parametrize("name", ["grpo", "grpo_n", "gspo", "gspo_n"])
def test_paper_trainer_builds_with_a_stand_in_model(paper, tiny, tmp_path, name):  # noqa: F811
    from rlvr_dynamics.rl.runs import build_trainer

    cfg = paper.run_config(name, 0)
    # what this machine lacks: the 7B model and MATH from the hub, vLLM and bf16 on a GPU
    stand_in = cfg.replace(model=tiny, task=Parity(), use_vllm=False, bf16=False)
    trainer = build_trainer(stand_in, tmp_path, "paper")
    args = trainer.args
    assert args.generation_batch_size == 8192
    assert args.per_device_train_batch_size * args.gradient_accumulation_steps == 2048
    assert args.steps_per_generation == 4 * args.gradient_accumulation_steps  # 4 updates
    assert args.max_steps == cfg.steps * 4
    assert args.importance_sampling_level == ("sequence" if name.startswith("gspo") else "token")
    assert args.positive_weight == (0.0 if name.endswith("_n") else 1.0)
    assert (args.learning_rate, args.beta, args.epsilon, args.entropy_coef) == (1e-6, 1e-3, 0.2, 1e-4)
    assert args.temperature == 1.0 and args.max_completion_length == 3072
    assert args.vllm_mode == "colocate" and args.vllm_max_model_length == 4096
    assert trainer.ref_model is not None  # the KL term's reference policy
    assert args.lr_scheduler_type == "constant" and args.num_iterations == 1


def test_missing_gpu_run_says_how_to_launch_it(paper, tmp_path, monkeypatch):
    from rlvr_dynamics.rl.runs import obtain

    monkeypatch.setenv("RLVR_RESULTS", str(tmp_path))
    cfg = paper.run_config("gspo_n", 0)
    with pytest.raises(FileNotFoundError, match=r"accelerate launch --config_file configs/"
                       r"accelerate/zero3-1node-4gpu.yaml -m rlvr_dynamics.run train "
                       r"--profile paper --config \S+/paper/training/launch/gspo_n-seed0-"):
        obtain(cfg, "paper", inline=False)


@pytest.mark.parametrize("chapter", ["training", "regime_map"])
def test_the_printed_launch_command_trains_the_missing_run_itself(chapter, tmp_path, monkeypatch):
    """Any chapter's missing run (the regimes' prior, mix, probes and steps included) is
    launched as asked: the command the error prints resolves to the same store key."""
    import shlex

    from rlvr_dynamics.chapters import regime_map, training
    from rlvr_dynamics.profiles import plan
    from rlvr_dynamics.run import train_config
    from rlvr_dynamics.rl.runs import obtain, run_dir

    monkeypatch.setenv("RLVR_RESULTS", str(tmp_path))
    if chapter == "training":
        cfg = training.Params.parse(plan("smoke", ["training"])["training"]).run_config("grpo", 0)
    else:
        P = regime_map.Params.parse(plan("smoke", ["regime_map"], [
            "regimes={low: {prior: 0.002, guess: 0.3, hard_share: 0.4}}",
            "contrasts=[]", "steps=7"])["regime_map"])
        cfg = P.runs()["low", "grpo_n", 0]
        assert (cfg.path_prior, cfg.path_guess, cfg.hard_share, cfg.steps) == \
            (0.002, 0.3, 0.4, 7) and cfg.probe_every and cfg.stop_after_crossover is not None
    with pytest.raises(FileNotFoundError) as missing:
        obtain(cfg, "smoke", inline=False)
    command = shlex.split(str(missing.value).splitlines()[-1])
    launched, profile, _ = train_config(command[command.index("train") + 1:])
    assert launched == cfg
    assert run_dir(launched, profile) == run_dir(cfg, "smoke")
    assert run_dir(launched.replace(seed=1), profile) != run_dir(cfg, "smoke")  # it can differ


def test_launch_files_are_consistent():
    from accelerate.commands.config.config_args import ClusterConfig

    for name, processes, machines, stage in [("zero3-1node-4gpu", 4, 1, 3),
                                             ("zero2-1node-4gpu", 4, 1, 2),
                                             ("zero3-multinode", 8, 2, 3)]:
        path = REPO / "configs" / "accelerate" / f"{name}.yaml"
        cluster = ClusterConfig.from_yaml_file(str(path))
        assert (cluster.num_processes, cluster.num_machines) == (processes, machines)
        ds_file = REPO / yaml.safe_load(path.read_text())["deepspeed_config"]["deepspeed_config_file"]
        ds = json.loads(ds_file.read_text())
        assert ds["zero_optimization"]["stage"] == stage
        # batch sizes, clipping and precision follow TRL's arguments
        for key in ("train_batch_size", "train_micro_batch_size_per_gpu",
                    "gradient_accumulation_steps", "gradient_clipping"):
            assert ds[key] == "auto", (name, key)
        assert ds["bf16"]["enabled"] == "auto"


def test_cli_refuses_bad_input_before_loading(capsys, tmp_path):
    from rlvr_dynamics.run import main

    assert main(["train", "--profile", "paper", "--algorithm", "ppo"]) == 2
    assert "unknown algorithm 'ppo'; valid: ['grpo', 'grpo_n', 'gspo', 'gspo_n', 'nsr', 'w_reinforce']" in capsys.readouterr().err
    assert main(["train", "--profile", "paper", "--algorithm", "grpo", "--param", "generation_batch=8191"]) == 2
    assert "generation_batch=8191 is not divisible by num_generations=8" in capsys.readouterr().err
    assert main(["train", "--profile", "paper", "--algorithm", "grpo", "--param", "model=/no/such/model"]) == 2
    assert "/no/such/model" in capsys.readouterr().err
    (tmp_path / "run.json").write_text('{"algorithm": "grpo", "seed": 0, "steps": 0}')
    assert main(["train", "--config", str(tmp_path / "run.json")]) == 2
    assert f"--config {tmp_path / 'run.json'}" in capsys.readouterr().err
