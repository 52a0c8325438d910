"""The GPU preflight: `codefu-train --check` (and every GPU start or submission) refuses a run
that cannot work, with the numbers and the fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from codefu_trainer.training.cli import main
from codefu_trainer.training.clusters.registry import cluster_of, compose_run
from codefu_trainer.training.planning.model_shape import shape_from_dict
from codefu_trainer.training.planning.preflight import (
    data_checks,
    disk_check,
    length_checks,
    model_files_check,
    preflight,
    report,
    strategy_check,
)

from ..conftest import CONF
from .test_memory_plan import QWEN_7B, QWEN_14B

IMAGE = "cluster.sagemaker.image_uri=123.dkr.ecr.us-east-1.amazonaws.com/codefu-train:0.1.0"


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["--config-dir", str(CONF), *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("cluster", ["sagemaker_p4de", "sagemaker_p5", "sagemaker_hetero"])
def test_the_shipped_gpu_profiles_pass_their_plan_with_real_sized_data(
    cluster: str, gpu_sized_data: Path, tmp_path: Path
) -> None:
    run = compose_run(
        CONF, [f"cluster={cluster}", f"data.out_dir={gpu_sized_data}", f"run.dir={tmp_path}"]
    )
    result = preflight(run, cluster_of(run.cfg))
    assert not result.refused, [c for c in result.checks if not c.ok]
    assert result.plan is not None and result.plan.fits
    update = result.plan.phase("actor update")
    assert update.total_gib < 0.9 * 79.2  # an 80 GB A100 / H100 with its margin


@pytest.mark.parametrize("cluster", ["local", "sagemaker_p4de", "sagemaker_p5", "sagemaker_hetero"])
def test_every_gpu_cluster_trains_fsdp2_and_the_plan_names_it(
    cluster: str, gpu_sized_data: Path, tmp_path: Path
) -> None:
    """One FSDP on CPU and GPU: the strategy the checkpoints, export and plan are built on."""
    run = compose_run(
        CONF,
        [
            f"cluster={cluster}",
            "cluster.gpu_memory_gib=80",  # cluster=local plans without nvidia-smi
            f"data.out_dir={gpu_sized_data}",
            f"run.dir={tmp_path}",
        ],
        gpus_detected=8,
    )
    assert run.verl is not None
    arf = run.verl.actor_rollout_ref
    assert arf.actor.strategy == arf.ref.strategy == run.verl.critic.strategy == "fsdp2"
    result = preflight(run, cluster_of(run.cfg))
    assert result.plan is not None and result.plan.inputs.strategy == "fsdp2"
    assert result.to_json()["plan"]["strategy"] == "fsdp2"
    lines: list[str] = []
    report(result, lines.append)
    assert "strategy fsdp2" in lines[0]
    assert "ok      fsdp: strategy: actor_rollout_ref.actor.strategy=fsdp2, " in "\n".join(lines)


@pytest.mark.parametrize(
    ("overrides", "named"),
    [
        (["actor_rollout_ref.actor.strategy=fsdp"], "actor_rollout_ref.actor.strategy=fsdp, "
         "actor_rollout_ref.ref.strategy=fsdp:"),
        (["actor_rollout_ref.ref.strategy=fsdp"], "actor_rollout_ref.ref.strategy=fsdp:"),
    ],
)  # fmt: skip
def test_an_fsdp1_override_is_refused_with_the_value_and_the_fix(
    overrides: list[str], named: str, gpu_sized_data: Path, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    code, _, err = run_cli(
        capsys,
        "--check",
        "cluster=sagemaker_p4de",
        *overrides,
        f"data.out_dir={gpu_sized_data}",
        f"run.dir={tmp_path}",
    )
    assert code == 2
    refusal = err[err.index("configuration error") :]
    assert f"fsdp: strategy: {named} the memory plan, checkpoints" in refusal
    fixed = " ".join(key + "2" for key in named.rstrip(":").split(", "))
    assert f"fix: {fixed} (or drop the override)" in refusal


def test_a_critic_is_held_to_fsdp2_only_where_the_run_has_one() -> None:
    """A recipe's critic (GAE) trains with FSDP2 too; GRPO's disabled critic is not checked."""
    verl = OmegaConf.create(
        {
            "actor_rollout_ref": {"actor": {"strategy": "fsdp2", "use_kl_loss": False}},
            "algorithm": {"adv_estimator": "grpo"},
            "critic": {"enable": None, "strategy": "fsdp"},
        }
    )
    assert strategy_check(verl).ok
    verl.algorithm.adv_estimator = "gae"
    check = strategy_check(verl)
    assert not check.ok and check.detail.startswith("critic.strategy=fsdp: the memory plan")
    assert check.fix == "critic.strategy=fsdp2 (or drop the override)"
    verl.critic.strategy = "fsdp2"
    assert strategy_check(verl).ok


def test_sample_sized_data_is_refused_before_anything_starts(
    prepared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/gpu.md's p4de flow on the shipped sample: veRL would divide by 0 steps per epoch."""
    run_dir = tmp_path / "run"
    code, _, err = run_cli(
        capsys,
        "cluster=sagemaker_p4de",
        IMAGE,
        f"data.out_dir={prepared_data}",
        f"run.dir={run_dir}",
    )
    assert code == 2
    assert "4 training rows" in err and "data.train_batch_size=64 (0 steps per epoch)" in err
    assert "nox -s prepare -- data.source=" in err  # prepare the real set
    assert "verl.data.train_batch_size=4 actor_rollout_ref.actor.ppo_mini_batch_size=4" in err
    assert "Nothing was started" in err and "DRY RUN" not in err
    assert not run_dir.exists()  # nothing written for a refused run


def test_the_logits_path_at_the_shipped_token_budget_is_refused_with_the_numbers(
    gpu_sized_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The settings before the fused kernels: ~93 GiB per A100-80GB in the actor update."""
    code, _, err = run_cli(
        capsys,
        "--check",
        "cluster=sagemaker_p4de",
        "model.use_fused_kernels=false",
        f"data.out_dir={gpu_sized_data}",
        f"run.dir={tmp_path}",
    )
    assert code == 2
    refusal = err[err.index("configuration error") :]
    assert "memory: actor update" in refusal
    assert "log-prob/entropy path 55.7" in refusal and "of 71.2 usable" in refusal
    assert "fix: actor_rollout_ref.model.use_fused_kernels=true" in refusal


def test_force_submits_a_refused_run_and_the_job_skips_the_refusal_too(
    prepared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.delenv("SAGEMAKER_ROLE_ARN", raising=False)
    code, out, err = run_cli(
        capsys,
        "--force",
        "cluster=sagemaker_p4de",
        IMAGE,
        f"data.out_dir={prepared_data}",
        f"run.dir={tmp_path / 'run'}",
    )
    assert code == 0, err
    assert "REFUSED data: training rows" in err and "DRY RUN" in err
    printed = json.loads(out[out.index("{") :])
    assert printed["resolved_spec"]["entrypoint"][:4] == [
        "codefu-train", "--config-dir", ".", "--force"
    ]  # fmt: skip


def test_plan_json_of_a_14b_model_folder_holding_only_its_config(
    gpu_sized_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "qwen-14b"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(QWEN_14B))
    plan_file = tmp_path / "plan.json"
    code, _, err = run_cli(
        capsys,
        "--check",
        "--plan-json",
        str(plan_file),
        "cluster=sagemaker_p4de",
        f"model.path={model}",
        f"data.out_dir={gpu_sized_data}",
        f"run.dir={tmp_path / 'run'}",
    )
    written = json.loads(plan_file.read_text())
    plan = written["plan"]
    assert plan["model"]["source"] == str(model / "config.json")
    assert plan["model"]["params"] == pytest.approx(14.77e9, rel=0.005)
    assert "14.77B params" in err  # the table
    parts = plan["phases"]["actor update"]["parts_gib"]
    assert plan["actor_update_above_weights_gib"] == pytest.approx(
        parts["activations"] + parts["log-prob/entropy path"]
    )
    # The plan is made; the run itself would lack the weights and tokenizer, and its
    # checkpoints (14.77e9 x 12 bytes, 4 steps) would not fit the p4de profile's 500 GB.
    assert code == 2
    failed = {c["name"]: c for c in written["checks"] if not c["ok"]}
    assert set(failed) == {"model: files", "disk: checkpoints"}
    assert "tokenizer" in failed["model: files"]["detail"]
    assert "177 GB per node" in failed["disk: checkpoints"]["detail"]


def test_an_unknown_instance_type_needs_its_gpu_memory(
    gpu_sized_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [
        "--check",
        "cluster=sagemaker_p4de",
        "cluster.sagemaker.instance_type=ml.p9.48xlarge",
        f"data.out_dir={gpu_sized_data}",
        f"run.dir={tmp_path}",
    ]
    code, _, err = run_cli(capsys, *args)
    assert code == 2 and "cluster.gpu_memory_gib=<GiB per GPU>" in err
    code, _, err = run_cli(capsys, *args, "cluster.gpu_memory_gib=79")
    assert code == 0, err


def verl_node(**changes: object) -> object:
    base: dict[str, object] = {
        "data": {"max_prompt_length": 4096, "max_response_length": 20480, "train_batch_size": 64},
        "trainer": {
            "nnodes": 1, "n_gpus_per_node": 8, "test_freq": 16, "save_freq": 16,
            "max_actor_ckpt_to_keep": 3, "default_local_dir": "/nonexistent/ckpt",
        },
        "actor_rollout_ref": {
            "actor": {
                "use_dynamic_bsz": True, "ppo_max_token_len_per_gpu": 32768,
                "ulysses_sequence_parallel_size": 1, "ppo_mini_batch_size": 16,
                "checkpoint": {"save_contents": ["model", "optimizer", "extra"]},
            },
            "ref": {"log_prob_use_dynamic_bsz": True, "log_prob_max_token_len_per_gpu": 32768},
            "rollout": {
                "log_prob_use_dynamic_bsz": True, "log_prob_max_token_len_per_gpu": 32768,
                "tensor_model_parallel_size": 2, "max_model_len": None,
            },
        },
    }  # fmt: skip
    node = OmegaConf.create(base)
    for key, value in changes.items():
        OmegaConf.update(node, key.replace("__", "."), value)
    return node


def failed(checks: list) -> dict[str, str]:
    return {c.name: f"{c.detail} | {c.fix}" for c in checks if not c.ok}


SEVEN_B = shape_from_dict(QWEN_7B, "7b")


def test_length_checks_each_refuse_with_the_fix() -> None:
    assert failed(length_checks(verl_node(), SEVEN_B)) == {}
    short = failed(
        length_checks(verl_node(actor_rollout_ref__actor__ppo_max_token_len_per_gpu=16384), SEVEN_B)
    )
    assert "ppo_max_token_len_per_gpu=16384" in short["length: actor token budget"]
    assert short["length: actor token budget"].endswith("ppo_max_token_len_per_gpu=24576")
    # Sequence parallel 2: a micro-batch spans two GPUs, 16384 x 2 holds 24576.
    assert (
        failed(
            length_checks(
                verl_node(
                    actor_rollout_ref__actor__ppo_max_token_len_per_gpu=16384,
                    actor_rollout_ref__actor__ulysses_sequence_parallel_size=2,
                ),
                SEVEN_B,
            )
        )
        == {}
    )
    vllm = failed(length_checks(verl_node(actor_rollout_ref__rollout__max_model_len=8192), SEVEN_B))
    assert "max_model_len=8192 vs 24576" in vllm["length: vLLM max_model_len"]
    positions = failed(length_checks(verl_node(data__max_response_length=200_000), SEVEN_B))
    assert "max_position_embeddings=131072" in positions["length: model positions"]
    sp = failed(
        length_checks(
            verl_node(actor_rollout_ref__actor__ulysses_sequence_parallel_size=8), SEVEN_B
        )
    )
    assert "28 attention heads" in sp["parallel: sequence parallel vs heads"]
    tp = failed(
        length_checks(verl_node(actor_rollout_ref__rollout__tensor_model_parallel_size=3), SEVEN_B)
    )
    assert "28 attention / 4 KV heads" in tp["parallel: tensor parallel vs heads"]


def test_validation_rows_are_needed_when_the_run_validates(
    gpu_sized_data: Path, tmp_path: Path
) -> None:
    run = compose_run(
        CONF, ["cluster=sagemaker_p4de", f"data.out_dir={gpu_sized_data}"], with_verl=False
    )
    import pyarrow.parquet as pq

    test = gpu_sized_data / "easy" / "test.parquet"
    pq.write_table(pq.read_table(test).slice(0, 0), test)
    checks = failed(data_checks(run.cfg, verl_node()))
    assert "0 validation rows" in checks["data: validation rows"]
    assert "trainer.test_freq=-1" in checks["data: validation rows"]
    assert failed(data_checks(run.cfg, verl_node(trainer__test_freq=-1))) == {}
    # A corrupt training file is named, not a traceback.
    (gpu_sized_data / "easy" / "train.parquet").write_bytes(b"not parquet")
    corrupt = failed(data_checks(run.cfg, verl_node()))
    assert "cannot be read as parquet" in corrupt["data: training rows"]


def test_checkpoint_disk_is_counted_per_node(gpu_sized_data: Path) -> None:
    run = compose_run(
        CONF, ["cluster=sagemaker_p4de", f"data.out_dir={gpu_sized_data}"], with_verl=False
    )
    ok = disk_check(run.cfg, verl_node(), SEVEN_B, cluster_of(run.cfg))
    assert ok is not None and ok.ok and "91 GB per node" in ok.detail
    run.cfg.cluster.sagemaker.volume_size_gb = 300
    small = disk_check(run.cfg, verl_node(), SEVEN_B, cluster_of(run.cfg))
    assert small is not None and not small.ok
    assert small.fix == "cluster.sagemaker.volume_size_gb=436"
    two_nodes = disk_check(run.cfg, verl_node(trainer__nnodes=2), SEVEN_B, cluster_of(run.cfg))
    assert two_nodes is not None and two_nodes.ok  # each node keeps half the shards
    unbounded = disk_check(
        run.cfg, verl_node(trainer__max_actor_ckpt_to_keep=None), SEVEN_B, cluster_of(run.cfg)
    )
    assert unbounded is not None and not unbounded.ok
    assert unbounded.fix == "trainer.max_actor_ckpt_to_keep=3"
    # A run of a set length keeps at most its own saves (as the GPU smoke: each step saved).
    run.cfg.cluster.sagemaker.volume_size_gb = 500
    short = verl_node(trainer__max_actor_ckpt_to_keep=None, trainer__save_freq=1)
    OmegaConf.update(short, "trainer.total_training_steps", 3)
    bounded = disk_check(run.cfg, short, SEVEN_B, cluster_of(run.cfg))
    assert bounded is not None and bounded.ok and bounded.detail.startswith("3 checkpoint steps")
    OmegaConf.update(short, "trainer.total_training_steps", 40)
    too_many = disk_check(run.cfg, short, SEVEN_B, cluster_of(run.cfg))
    assert too_many is not None and not too_many.ok and "40 checkpoint steps" in too_many.detail


def test_a_local_model_missing_a_shard_is_named(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps(QWEN_7B))
    (tmp_path / "tokenizer.json").write_text("{}")
    index = {
        "weight_map": {
            "a": "model-00001-of-00002.safetensors",
            "b": "model-00002-of-00002.safetensors",
        }
    }
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(index))
    (tmp_path / "model-00001-of-00002.safetensors").write_bytes(b"x")
    check = model_files_check(str(tmp_path))
    assert check is not None and not check.ok
    assert "missing model-00002-of-00002.safetensors" in check.detail
    (tmp_path / "model-00002-of-00002.safetensors").write_bytes(b"x")
    check = model_files_check(str(tmp_path))
    assert check is not None and check.ok
    assert model_files_check("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B") is None  # a hub id


def test_a_resumed_local_run_counts_its_own_checkpoints_as_room(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A resubmitted job finds its earlier steps on the disk: they are replaced, not added."""
    import shutil
    from collections import namedtuple

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(
        shutil, "disk_usage", lambda _: usage(500 * 10**9, 400 * 10**9, 100 * 10**9)
    )
    run = compose_run(CONF, ["cluster=local"], with_verl=False)
    checkpoints = tmp_path / "checkpoints"
    node = verl_node(trainer__default_local_dir=str(checkpoints))
    first = disk_check(run.cfg, node, SEVEN_B, cluster_of(run.cfg))
    assert first is not None and not first.ok  # 381 GB against 100 GB free
    step = checkpoints / "global_step_16" / "actor"
    step.mkdir(parents=True)
    with (step / "model_world_size_8_rank_0.pt").open("wb") as f:
        f.truncate(400 * 10**9)  # sparse: its size counts, no disk is used
    resumed = disk_check(run.cfg, node, SEVEN_B, cluster_of(run.cfg))
    assert resumed is not None and resumed.ok, resumed.detail
