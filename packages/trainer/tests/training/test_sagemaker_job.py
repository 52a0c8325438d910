"""cluster=sagemaker_*: the model and data channels, launcher options and environment of a
submitted job, as the dry run prints them (the SageMaker SDK builds the request offline)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("sagemaker.train")

from codefu_trainer.run.config import data_files
from codefu_trainer.training.cli import main
from codefu_trainer.training.clusters.registry import compose_run
from codefu_trainer.training.sagemaker.job import JOB_MODEL_DIR, job_overrides

from ..conftest import CONF

IMAGE = "cluster.sagemaker.image_uri=123.dkr.ecr.us-east-1.amazonaws.com/codefu-train:0.1.0"
BUCKET = "s3://sagemaker-us-east-1-<account>"


@pytest.fixture
def offline_aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No AWS configuration at all: the dry run must not need any."""
    for key in ("SAGEMAKER_ROLE_ARN", "AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_REGION", "us-east-1")


def dry_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, *overrides: str
) -> tuple[int, dict[str, Any], str]:
    argv = ["--config-dir", str(CONF), IMAGE, f"run.dir={tmp_path / 'run'}", *overrides]
    code = main(argv)
    out = capsys.readouterr()
    printed = json.loads(out.out[out.out.index("{") :]) if code == 0 else {}
    return code, printed, out.err


def channels(request: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["ChannelName"]: c["DataSource"]["S3DataSource"] for c in request["InputDataConfig"]}


@pytest.fixture
def model_dir(tmp_path: Path) -> Path:
    d = tmp_path / "models" / "base"
    d.mkdir(parents=True)
    shape = {
        "model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944,
        "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4,
        "vocab_size": 152064, "max_position_embeddings": 131072,
    }  # fmt: skip
    (d / "config.json").write_text(json.dumps(shape))
    (d / "tokenizer.json").write_text("{}")
    (d / "model.safetensors").write_bytes(b"weights")
    return d


def test_p4de_two_nodes_stage_the_tier_and_a_local_model_once(
    offline_aws: None,
    gpu_sized_data: Path,
    model_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = (
        "cluster=sagemaker_p4de",
        "cluster.sagemaker.instance_count=2",
        f"data.out_dir={gpu_sized_data}",
        f"model.path={model_dir}",
    )
    code, printed, err = dry_run(capsys, tmp_path, *args)
    assert code == 0, err
    req = printed["request"]
    assert req["ResourceConfig"]["InstanceCount"] == 2
    ch = channels(req)
    assert set(ch) == {"easy", "model", "code", "sm_drivers"}
    # Only the training tier, under a prefix named by its content; then the model.
    assert re.fullmatch(rf"{BUCKET}/codefu-staged/easy/[0-9a-f]{{16}}/", ch["easy"]["S3Uri"])
    assert re.fullmatch(rf"{BUCKET}/codefu-staged/model/[0-9a-f]{{16}}/", ch["model"]["S3Uri"])
    assert all("InstanceGroupNames" not in c for c in ch.values())  # one group: every host
    staged = printed["resolved_spec"]["staged_channels"]
    assert staged["easy"]["source"] == str(gpu_sized_data / "easy")
    assert staged["easy"]["files"] == 2  # train.parquet, test.parquet: no other tier
    assert staged["model"]["files"] == 3  # config.json, tokenizer.json, model.safetensors
    # The same files give the same prefixes: a later submission uploads nothing new.
    _, again, _ = dry_run(capsys, tmp_path, *args)
    assert channels(again["request"])["easy"] == ch["easy"]
    assert channels(again["request"])["model"] == ch["model"]
    entry = printed["resolved_spec"]["entrypoint"]
    assert "data.out_dir=/opt/ml/input/data" in entry
    assert f"model.path={JOB_MODEL_DIR}" in entry
    assert "no host downloads it from the Hugging Face Hub" in err


def test_hetero_gives_an_s3_model_and_the_data_only_to_the_training_group(
    offline_aws: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, printed, err = dry_run(
        capsys,
        tmp_path,
        "cluster=sagemaker_hetero",
        "data.out_dir=s3://team-bucket/codefu/processed",
        "model.path=s3://team-bucket/models/DeepSeek-R1-Distill-Qwen-7B",
    )
    assert code == 0, err
    ch = channels(printed["request"])
    assert ch["model"]["S3Uri"] == "s3://team-bucket/models/DeepSeek-R1-Distill-Qwen-7B/"
    assert ch["easy"]["S3Uri"] == "s3://team-bucket/codefu/processed/easy/"
    assert ch["model"]["InstanceGroupNames"] == ch["easy"]["InstanceGroupNames"] == ["train"]
    assert ch["code"]["InstanceGroupNames"] == ["train", "judge"]  # the SDK's own: all hosts
    assert printed["resolved_spec"]["staged_channels"] == {}  # nothing local to upload
    assert "read from S3" in err


def test_a_hugging_face_id_is_downloaded_in_the_job_and_said_so(
    offline_aws: None, gpu_sized_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, printed, err = dry_run(
        capsys, tmp_path, "cluster=sagemaker_p4de", f"data.out_dir={gpu_sized_data}"
    )
    assert code == 0, err
    assert "model" not in channels(printed["request"])
    assert not any(a.startswith("model.path=") for a in printed["resolved_spec"]["entrypoint"])
    assert "Hugging Face id" in err and "outbound internet" in err


def test_a_local_model_path_that_is_not_a_directory_is_refused(
    offline_aws: None, gpu_sized_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = dry_run(
        capsys,
        tmp_path,
        "cluster=sagemaker_p4de",
        f"data.out_dir={gpu_sized_data}",
        f"model.path={tmp_path / 'no-such-model'}",
    )
    assert code == 3
    assert "is not a directory on this machine" in err and "Nothing was submitted" in err


def test_launcher_options_from_the_train_command_reach_ray_start(
    offline_aws: None, gpu_sized_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The job's command, as the SDK's driver script holds it, parsed by the launcher."""
    from codefu_launcher.cli import build_parser
    from codefu_launcher.plan import PlanOptions, make_plan, parse_resource_config

    code, printed, err = dry_run(
        capsys,
        tmp_path,
        "cluster=sagemaker_p4de",
        f"data.out_dir={gpu_sized_data}",
        # Hydra's list syntax: an option and its value as two items (an item with `=`
        # needs quotes).
        "cluster.sagemaker.launcher_args=[--metrics-export-port,8080,--dashboard-port,8300,"
        '"--object-store-memory=2000000000",--temp-dir,/opt/ml/ray]',
    )
    assert code == 0, err
    argv = shlex.split(printed["command"])
    assert argv[:3] == ["exec", "codefu-launcher", "run"]
    args = build_parser().parse_args(argv[2:])
    assert args.entrypoint[:2] == ["--", "codefu-train"]
    rc = parse_resource_config(
        {
            "current_host": "algo-1",
            "hosts": ["algo-1", "algo-2"],
            "instance_groups": [
                {
                    "instance_group_name": "homogeneousCluster",
                    "instance_type": "ml.p4de.24xlarge",
                    "hosts": ["algo-1", "algo-2"],
                }
            ],
        }
    )
    options = PlanOptions(
        dashboard_port=args.dashboard_port,
        metrics_export_port=args.metrics_export_port,
        temp_dir=args.temp_dir,
        object_store_memory=args.object_store_memory,
    )
    ray_start = make_plan(rc, {}, options, cpu_count=96).ray_start_args("10.0.0.1", "10.0.0.1")
    for flag in (
        "--metrics-export-port=8080",
        "--dashboard-port=8300",
        "--object-store-memory=2000000000",
        "--temp-dir=/opt/ml/ray",
    ):
        assert flag in ray_start


def test_a_misspelt_launcher_option_is_refused_before_submission(
    offline_aws: None, gpu_sized_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = dry_run(
        capsys,
        tmp_path,
        "cluster=sagemaker_p4de",
        f"data.out_dir={gpu_sized_data}",
        "cluster.sagemaker.launcher_args=[--metrics-port,8080]",
    )
    assert code == 3
    assert "--metrics-port" in err and "codefu-launcher run --help" in err


def test_environment_entries_are_passed_on_and_credentials_refused(
    offline_aws: None, gpu_sized_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ("cluster=sagemaker_p4de", f"data.out_dir={gpu_sized_data}")
    code, printed, err = dry_run(
        capsys,
        tmp_path,
        *base,
        "+cluster.sagemaker.environment.RAY_DEDUP_LOGS=0",
        "+cluster.sagemaker.environment.GLOO_SOCKET_IFNAME=eth0",
    )
    assert code == 0, err
    env = printed["request"]["Environment"]
    assert env["RAY_DEDUP_LOGS"] == "0" and env["GLOO_SOCKET_IFNAME"] == "eth0"
    assert env["CODEFU_PASS_ENV"] == "GLOO_SOCKET_IFNAME,RAY_DEDUP_LOGS"
    code, _, err = dry_run(capsys, tmp_path, *base, "+cluster.sagemaker.environment.HF_TOKEN=x")
    assert code == 3 and "HF_TOKEN" in err and "look like credentials" in err
    assert "secret_parameters" in err  # where a credential goes instead
    code, printed, err = dry_run(
        capsys, tmp_path, *base, "+cluster.sagemaker.secret_parameters.HF_TOKEN=/codefu/hf-token"
    )
    assert code == 0, err
    env = printed["request"]["Environment"]
    assert env["CODEFU_SECRET_PARAMETERS"] == "HF_TOKEN=/codefu/hf-token"
    assert "HF_TOKEN" not in env


def test_remote_debug_is_enabled_at_creation(
    offline_aws: None, gpu_sized_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, printed, err = dry_run(
        capsys,
        tmp_path,
        "cluster=sagemaker_hetero",
        f"data.out_dir={gpu_sized_data}",
        "cluster.sagemaker.remote_debug=true",
    )
    assert code == 0, err
    assert printed["request"]["RemoteDebugConfig"] == {"EnableRemoteDebug": True}


def test_the_head_reads_the_tier_and_model_from_their_channels(model_dir: Path) -> None:
    """Inside the job the head composes `job_overrides`: the channels' paths."""
    user = ["cluster=sagemaker_p4de", "data.out_dir=s3://b/processed", f"model.path={model_dir}"]
    cfg = compose_run(CONF, user, with_verl=False).cfg
    head = compose_run(CONF, job_overrides(cfg, user), with_verl=False).cfg
    assert data_files(head) == (
        Path("/opt/ml/input/data/easy/train.parquet"),
        Path("/opt/ml/input/data/easy/test.parquet"),
    )
    assert head.model.path == JOB_MODEL_DIR
