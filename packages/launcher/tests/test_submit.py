"""Offline submission through the real sagemaker-train ModelTrainer against moto."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

boto3 = pytest.importorskip("boto3")
moto = pytest.importorskip("moto")
pytest.importorskip("sagemaker.train")

from codefu_launcher.run import AUTH_SECRET_ENV, derive_auth_token  # noqa: E402
from codefu_launcher.submit import (  # noqa: E402
    InstanceGroupSpec,
    JobSpec,
    SubmitError,
    submit,
)

ROLE = "arn:aws:iam::123456789012:role/codefu-sagemaker"
IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/codefu-train:0.1.0"
ENTRY = ["codefu-train", "--config-dir", "conf", "cluster=sagemaker_p4de", "trainer.run name=x"]


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for key, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_REGION": "us-east-1",
        "SAGEMAKER_VALIDATE_ROLE": "false",
    }.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.delenv("SAGEMAKER_ROLE_ARN", raising=False)
    with moto.mock_aws():
        yield


@pytest.fixture
def workdir(tmp_path: Path) -> tuple[Path, Path]:
    src = tmp_path / "src"
    (src / "conf").mkdir(parents=True)
    (src / "conf" / "train.yaml").write_text("x: 1\n")
    data = tmp_path / "processed" / "easy"
    data.mkdir(parents=True)
    (data / "train.parquet").write_bytes(b"PAR1-not-really")
    return src, data


def run_submit(spec: JobSpec) -> tuple[dict[str, Any], Any]:
    """Submit under moto; return the captured CreateTrainingJob parameters and the session."""
    captured: list[dict[str, Any]] = []
    session = boto3.Session(region_name="us-east-1")
    session.events.register(
        "provide-client-params.sagemaker.CreateTrainingJob",
        lambda params, **_: captured.append(json.loads(json.dumps(params, default=str))),
    )
    result = submit(spec, boto_session=session)
    assert len(captured) == 1
    assert result.job_name == captured[0]["TrainingJobName"]
    return captured[0], session


def read_s3_text(session: Any, uri: str, name: str) -> str:
    bucket, _, prefix = uri.removeprefix("s3://").partition("/")
    s3 = session.client("s3")
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix=prefix)["Contents"]]
    key = next(k for k in keys if k.endswith("/" + name))
    return s3.get_object(Bucket=bucket, Key=key)["Body"].read().decode()


def channel(req: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in req["InputDataConfig"] if c["ChannelName"] == name)


def command_of(req: dict[str, Any], session: Any) -> str:
    """The command the job runs: SourceCode as the SDK stored it for its driver script."""
    drivers = channel(req, "sm_drivers")["DataSource"]["S3DataSource"]["S3Uri"]
    script = read_s3_text(session, drivers, "sm_train.sh")
    return next(line.strip() for line in script.splitlines() if "codefu-launcher run" in line)


def test_homogeneous_p4de(aws: None, workdir: tuple[Path, Path]) -> None:
    src, data = workdir
    spec = JobSpec(
        base_job_name="codefu-grpo",
        image_uri=IMAGE,
        role_arn=ROLE,
        instance_type="ml.p4de.24xlarge",
        instance_count=2,
        entrypoint=ENTRY,
        source_dir=str(src),
        input_channels={"train": str(data), "extra": "s3://my-bucket/datasets/codefu_easy/"},
        checkpoint_s3_uri="s3://my-bucket/ckpt/run1",
        output_s3_uri="s3://my-bucket/output",
        max_runtime_seconds=36000,
        keep_alive_seconds=1800,
        volume_size_gb=500,
        environment={"WANDB_PROJECT": "codefu", "NCCL_DEBUG": "INFO"},
    )
    req, session = run_submit(spec)
    assert req["RoleArn"] == ROLE
    assert req["AlgorithmSpecification"]["TrainingImage"] == IMAGE
    assert req["ResourceConfig"] == {
        "InstanceType": "ml.p4de.24xlarge",
        "InstanceCount": 2,
        "VolumeSizeInGB": 500,
        "KeepAlivePeriodInSeconds": 1800,
    }
    assert req["StoppingCondition"]["MaxRuntimeInSeconds"] == 36000
    assert req["CheckpointConfig"] == {
        "S3Uri": "s3://my-bucket/ckpt/run1",
        "LocalPath": "/opt/ml/checkpoints",
    }
    assert req["OutputDataConfig"]["S3OutputPath"] == "s3://my-bucket/output"
    env = req["Environment"]
    assert env["FI_PROVIDER"] == "efa" and env["FI_EFA_USE_DEVICE_RDMA"] == "1"
    assert env["NCCL_DEBUG"] == "INFO"  # the user's value wins over the default
    assert env["WANDB_PROJECT"] == "codefu"
    assert len(env[AUTH_SECRET_ENV]) == 64
    assert "CODEFU_HEAD_INSTANCE_GROUP" not in env
    # The local dataset was uploaded; the S3 channel passed through unchanged.
    train_uri = channel(req, "train")["DataSource"]["S3DataSource"]["S3Uri"]
    assert train_uri.startswith("s3://")
    assert read_s3_text(session, train_uri, "train.parquet") == "PAR1-not-really"
    assert (
        channel(req, "extra")["DataSource"]["S3DataSource"]["S3Uri"]
        == "s3://my-bucket/datasets/codefu_easy/"
    )
    code_uri = channel(req, "code")["DataSource"]["S3DataSource"]["S3Uri"]
    assert read_s3_text(session, code_uri, "train.yaml") == "x: 1\n"
    assert command_of(req, session) == (
        "exec codefu-launcher run -- codefu-train --config-dir conf cluster=sagemaker_p4de "
        "'trainer.run name=x'"
    )


def test_homogeneous_p5_sets_p5_efa_settings(aws: None, workdir: tuple[Path, Path]) -> None:
    src, _ = workdir
    spec = JobSpec(
        base_job_name="codefu-p5",
        image_uri=IMAGE,
        role_arn=ROLE,
        instance_type="ml.p5.48xlarge",
        instance_count=4,
        entrypoint=["codefu-train"],
        source_dir=str(src),
        input_channels={"train": "s3://b/train/"},
    )
    req, session = run_submit(spec)
    assert req["ResourceConfig"]["InstanceType"] == "ml.p5.48xlarge"
    assert req["ResourceConfig"]["InstanceCount"] == 4
    assert "KeepAlivePeriodInSeconds" not in req["ResourceConfig"]
    env = req["Environment"]
    assert env["FI_EFA_SET_CUDA_SYNC_MEMOPS"] == "0"
    assert env["FI_PROVIDER"] == "efa"
    # Checkpoints still go to /opt/ml/checkpoints, synced to an SDK default S3 location.
    assert req["CheckpointConfig"]["LocalPath"] == "/opt/ml/checkpoints"
    assert req["CheckpointConfig"]["S3Uri"].startswith("s3://")
    assert command_of(req, session) == "exec codefu-launcher run -- codefu-train"


def test_heterogeneous_gpu_and_cpu_groups(aws: None, workdir: tuple[Path, Path]) -> None:
    src, data = workdir
    spec = JobSpec(
        base_job_name="codefu-het",
        image_uri=IMAGE,
        role_arn=ROLE,
        instance_groups=[
            InstanceGroupSpec("gpu", "ml.p4de.24xlarge", 1),
            InstanceGroupSpec("judge", "ml.c7i.16xlarge", 3),
        ],
        head_instance_group="gpu",
        entrypoint=["codefu-train", "cluster=sagemaker_hetero"],
        source_dir=str(src),
        input_channels={"train": str(data)},
        checkpoint_s3_uri="s3://my-bucket/ckpt",
    )
    req, session = run_submit(spec)
    groups = req["ResourceConfig"]["InstanceGroups"]
    assert groups == [
        {"InstanceGroupName": "gpu", "InstanceType": "ml.p4de.24xlarge", "InstanceCount": 1},
        {"InstanceGroupName": "judge", "InstanceType": "ml.c7i.16xlarge", "InstanceCount": 3},
    ]
    assert "InstanceType" not in req["ResourceConfig"]
    env = req["Environment"]
    assert env["CODEFU_HEAD_INSTANCE_GROUP"] == "gpu"
    assert env["FI_PROVIDER"] == "efa"
    assert command_of(req, session) == (
        "exec codefu-launcher run --head-instance-group gpu -- "
        "codefu-train cluster=sagemaker_hetero"
    )


def test_every_job_gets_its_own_auth_secret(aws: None, workdir: tuple[Path, Path]) -> None:
    src, _ = workdir
    spec = JobSpec(
        "a", IMAGE, ROLE, instance_type="ml.c5.xlarge", entrypoint=["x"], source_dir=str(src)
    )
    first, _ = run_submit(spec)
    second, _ = run_submit(spec)
    s1, s2 = first["Environment"][AUTH_SECRET_ENV], second["Environment"][AUTH_SECRET_ENV]
    assert s1 != s2
    assert derive_auth_token(s1) != derive_auth_token(s2)
    assert "FI_PROVIDER" not in first["Environment"]  # CPU-only: no EFA settings


def test_role_from_environment(
    aws: None, workdir: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    src, _ = workdir
    monkeypatch.setenv("SAGEMAKER_ROLE_ARN", ROLE)
    spec = JobSpec(
        "a", IMAGE, None, instance_type="ml.c5.xlarge", entrypoint=["x"], source_dir=str(src)
    )
    req, _ = run_submit(spec)
    assert req["RoleArn"] == ROLE


def test_missing_role_says_what_to_set(
    workdir: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SAGEMAKER_ROLE_ARN", raising=False)
    spec = JobSpec(
        "a", IMAGE, None, instance_type="ml.c5.xlarge", entrypoint=["x"], source_dir=str(workdir[0])
    )
    with pytest.raises(SubmitError, match="SAGEMAKER_ROLE_ARN"):
        submit(spec)


def test_missing_credentials_says_what_to_set(
    workdir: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.delenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", raising=False)
    monkeypatch.delenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", raising=False)
    spec = JobSpec(
        "a",
        IMAGE,
        ROLE,
        region="us-east-1",
        instance_type="ml.c5.xlarge",
        entrypoint=["x"],
        source_dir=str(workdir[0]),
    )
    with pytest.raises(SubmitError, match="AWS_ACCESS_KEY_ID"):
        submit(spec)
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    spec.region = None
    with pytest.raises(SubmitError, match="AWS_REGION"):
        submit(spec)


def test_dry_run_prints_request_without_aws(
    workdir: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("SAGEMAKER_ROLE_ARN", raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    src, data = workdir
    spec = JobSpec(
        "codefu-het",
        IMAGE,
        None,
        instance_groups=[
            InstanceGroupSpec("gpu", "ml.p5.48xlarge", 2),
            InstanceGroupSpec("cpu", "ml.c5.4xlarge", 1),
        ],
        head_instance_group="gpu",
        entrypoint=["codefu-train", "a b"],
        source_dir=str(src),
        input_channels={"train": str(data)},
        environment={AUTH_SECRET_ENV: "s3cr3t"},
        dry_run=True,
    )
    import botocore.client

    def no_aws(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("dry run made an AWS call")

    monkeypatch.setattr(botocore.client.BaseClient, "_make_api_call", no_aws)
    result = submit(spec)
    printed = json.loads(capsys.readouterr().out)
    assert printed["request"] == result.request
    req = result.request
    assert req["ResourceConfig"]["InstanceGroups"][0]["InstanceType"] == "ml.p5.48xlarge"
    assert req["Command"] == (
        "exec codefu-launcher run --head-instance-group gpu -- codefu-train 'a b'"
    )
    assert "SAGEMAKER_ROLE_ARN" in req["RoleArn"]
    assert req["Environment"][AUTH_SECRET_ENV] == "<redacted>"
    assert "s3cr3t" not in json.dumps(printed)
    assert printed["resolved_spec"]["head_instance_group"] == "gpu"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"instance_type": None}, "exactly one of instance_type"),
        ({"instance_groups": [InstanceGroupSpec("g", "ml.c5.xlarge", 1)]}, "exactly one"),
        ({"head_instance_group": "gpu"}, "not one of the job's instance groups"),
        ({"entrypoint": []}, "entrypoint is empty"),
        ({"input_channels": {"train": "/no/such/dir"}, "dry_run": False}, "nox -s prepare"),
        ({"image_uri": ""}, "nox -s image -- push"),
    ],
)
def test_invalid_specs_name_the_fix(
    workdir: tuple[Path, Path], changes: dict[str, Any], message: str
) -> None:
    spec = JobSpec(
        "a",
        IMAGE,
        ROLE,
        instance_type="ml.c5.xlarge",
        entrypoint=["x"],
        source_dir=str(workdir[0]),
        dry_run=True,
    )
    for key, value in changes.items():
        setattr(spec, key, value)
    with pytest.raises(SubmitError, match=message):
        submit(spec)


def test_heterogeneous_without_head_group_is_refused(workdir: tuple[Path, Path]) -> None:
    spec = JobSpec(
        "a",
        IMAGE,
        ROLE,
        instance_groups=[InstanceGroupSpec("gpu", "ml.p5.48xlarge", 1)],
        entrypoint=["x"],
        source_dir=str(workdir[0]),
        dry_run=True,
    )
    with pytest.raises(SubmitError, match="head_instance_group"):
        submit(spec)


def test_dry_run_notes_a_missing_dataset_instead_of_failing(
    workdir: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("SAGEMAKER_ROLE_ARN", raising=False)
    spec = JobSpec(
        "a",
        IMAGE,
        None,
        instance_type="ml.p4de.24xlarge",
        entrypoint=["x"],
        source_dir=str(workdir[0]),
        input_channels={"data": "/no/such/dir"},
        dry_run=True,
    )
    result = submit(spec)
    err = capsys.readouterr().err
    assert "nox -s prepare" in err and "SAGEMAKER_ROLE_ARN" in err
    assert len(result.resolved["notes"]) == 2


def test_submit_cli_dry_run(workdir: tuple[Path, Path], tmp_path: Path) -> None:
    import subprocess
    import sys

    spec = {
        "base_job_name": "cli",
        "image_uri": IMAGE,
        "instance_groups": [
            {"name": "gpu", "instance_type": "ml.p4de.24xlarge", "instance_count": 1},
            {"name": "cpu", "instance_type": "ml.c5.4xlarge", "instance_count": 2},
        ],
        "head_instance_group": "gpu",
        "entrypoint": ["codefu-train"],
        "source_dir": str(workdir[0]),
    }
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    cli = [sys.executable, "-m", "codefu_launcher.cli", "submit", "--spec", str(path)]
    out = subprocess.run([*cli, "--dry-run"], capture_output=True, text=True, check=True)
    request = json.loads(out.stdout)["request"]
    assert [g["InstanceCount"] for g in request["ResourceConfig"]["InstanceGroups"]] == [1, 2]
    path.write_text(json.dumps({**spec, "instance_typo": "x"}))
    bad = subprocess.run(cli, capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and "instance_typo" in bad.stderr
