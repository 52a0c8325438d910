"""Submission through the real sagemaker-train ModelTrainer: against moto, and dry runs."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

boto3 = pytest.importorskip("boto3")
pytest.importorskip("moto")
pytest.importorskip("sagemaker.train")

from codefu_launcher.auth import (  # noqa: E402
    AUTH_PARAMETER_ENV,
    AUTH_REGION_ENV,
    AUTH_SECRET_ENV,
    auth_environment,
    derive_auth_token,
)
from codefu_launcher.submit import (  # noqa: E402
    InstanceGroupSpec,
    JobSpec,
    SubmitError,
    submit,
)

ACCOUNT = "123456789012"  # moto's
ROLE = f"arn:aws:iam::{ACCOUNT}:role/codefu-sagemaker"
IMAGE = f"{ACCOUNT}.dkr.ecr.us-east-1.amazonaws.com/codefu-train:0.1.0"
ENTRY = ["codefu-train", "--config-dir", "conf", "cluster=sagemaker_p4de", "trainer.run name=x"]
DEFAULT_BUCKET = f"s3://sagemaker-us-east-1-{ACCOUNT}"
# Overrides no shell character may break or execute: the driver script runs `eval "$CMD"`.
HOSTILE = [
    "run.name=$HOME",
    "a=$(touch pwned-subshell)",
    "b=`touch pwned-backtick`",
    "c=\"double\" 'single' both",
    "d=x; touch pwned-semicolon && echo || true | cat > pwned-redirect",
    "e=\\back\\slash * ? [x] {a,b} ~ ! # %",
    "f=\t tab and  spaces ",
    "g=SAGEMAKER_BASE_COMMAND_EOF",
    "h=ünïcødé ✓",
    "",
]


@pytest.fixture
def workdir(tmp_path: Path) -> tuple[Path, Path]:
    src = tmp_path / "src"
    (src / "conf").mkdir(parents=True)
    (src / "conf" / "train.yaml").write_text("x: 1\n")
    data = tmp_path / "processed" / "easy"
    data.mkdir(parents=True)
    (data / "train.parquet").write_bytes(b"PAR1-not-really")
    return src, data


def small_job(src: Path, **fields: Any) -> JobSpec:
    """A valid spec (one ml.c5.xlarge host running `x`) with `fields` changed."""
    values: dict[str, Any] = {
        "base_job_name": "a",
        "image_uri": IMAGE,
        "role_arn": ROLE,
        "instance_type": "ml.c5.xlarge",
        "entrypoint": ["x"],
        "source_dir": str(src),
    }
    return JobSpec(**{**values, **fields})


def run_submit(spec: JobSpec) -> tuple[dict[str, Any], Any]:
    """Submit under moto; return the CreateTrainingJob parameters botocore was given."""
    captured: list[dict[str, Any]] = []
    session = boto3.Session(region_name="us-east-1")
    session.events.register(
        "provide-client-params.sagemaker.CreateTrainingJob",
        lambda params, **_: captured.append(json.loads(json.dumps(params, default=str))),
    )
    result = submit(spec, boto_session=session)
    assert len(captured) == 1
    assert result.request == captured[0]
    assert result.job_name == captured[0]["TrainingJobName"]
    return captured[0], session


def s3_objects(session: Any, uri: str) -> dict[str, bytes]:
    """Every object under an s3:// prefix (moto), by key, as bytes.

    Bytes: the SDK's uploaded drivers include compiled `__pycache__/*.pyc` files when the
    SDK was installed by a tool that compiles bytecode (pip does; uv does not).
    """
    bucket, _, prefix = uri.removeprefix("s3://").partition("/")
    s3 = session.client("s3")
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix=prefix)["Contents"]]
    return {k: s3.get_object(Bucket=bucket, Key=k)["Body"].read() for k in keys}


def read_s3_text(session: Any, uri: str, name: str) -> str:
    """The one object named `name` under `uri`, decoded as UTF-8."""
    objects = s3_objects(session, uri)
    return next(body for key, body in objects.items() if key.endswith("/" + name)).decode()


def channel(req: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in req["InputDataConfig"] if c["ChannelName"] == name)


def driver_script(req: dict[str, Any], session: Any) -> str:
    drivers = channel(req, "sm_drivers")["DataSource"]["S3DataSource"]["S3Uri"]
    return read_s3_text(session, drivers, "sm_train.sh")


def command_of(req: dict[str, Any], session: Any) -> str:
    """The command the job runs, as the SDK wrote it into its driver script."""
    script = driver_script(req, session)
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
    boto3.client("s3", region_name="us-east-1").create_bucket(Bucket="my-bucket")
    req, session = run_submit(spec)
    assert re.fullmatch(r"codefu-grpo-[0-9a-f]{6}-\d{14}", req["TrainingJobName"])
    assert req["RoleArn"] == ROLE
    assert req["AlgorithmSpecification"]["TrainingImage"] == IMAGE
    assert req["ResourceConfig"] == {
        "InstanceType": "ml.p4de.24xlarge",
        "InstanceCount": 2,
        "VolumeSizeInGB": 500,
        "KeepAlivePeriodInSeconds": 1800,
    }
    assert req["StoppingCondition"]["MaxRuntimeInSeconds"] == 36000
    assert req["RetryStrategy"] == {"MaximumRetryAttempts": 3}
    assert req["CheckpointConfig"] == {
        "S3Uri": "s3://my-bucket/ckpt/run1",
        "LocalPath": "/opt/ml/checkpoints",
    }
    assert req["OutputDataConfig"]["S3OutputPath"] == "s3://my-bucket/output"
    env = req["Environment"]
    assert env["FI_PROVIDER"] == "efa" and env["FI_EFA_USE_DEVICE_RDMA"] == "1"
    assert env["NCCL_DEBUG"] == "INFO"  # the user's value wins over the default
    assert env["WANDB_PROJECT"] == "codefu"
    assert env[AUTH_PARAMETER_ENV] == "/codefu/ray-auth/codefu-grpo:1"
    assert AUTH_SECRET_ENV not in env
    assert "CODEFU_HEAD_INSTANCE_GROUP" not in env
    # The local dataset was staged under the output prefix, named by its content; the
    # S3 channel passed through unchanged.
    train_uri = channel(req, "train")["DataSource"]["S3DataSource"]["S3Uri"]
    assert re.fullmatch(r"s3://my-bucket/output/codefu-staged/train/[0-9a-f]{16}/", train_uri)
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
        max_retry_attempts=0,
    )
    req, session = run_submit(spec)
    assert req["ResourceConfig"]["InstanceType"] == "ml.p5.48xlarge"
    assert req["ResourceConfig"]["InstanceCount"] == 4
    assert "KeepAlivePeriodInSeconds" not in req["ResourceConfig"]
    assert "RetryStrategy" not in req
    env = req["Environment"]
    assert env["FI_EFA_SET_CUDA_SYNC_MEMOPS"] == "0"
    assert env["FI_PROVIDER"] == "efa"
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
    # One image for every group: judge hosts run the training image.
    assert req["AlgorithmSpecification"]["TrainingImage"] == IMAGE
    env = req["Environment"]
    assert env["CODEFU_HEAD_INSTANCE_GROUP"] == "gpu"
    assert env["FI_PROVIDER"] == "efa"
    assert command_of(req, session) == (
        "exec codefu-launcher run --head-instance-group gpu -- "
        "codefu-train cluster=sagemaker_hetero"
    )


def test_resubmitting_a_run_resumes_from_its_checkpoint_prefix(
    aws: None, workdir: tuple[Path, Path]
) -> None:
    src, _ = workdir
    spec = small_job(src, base_job_name="codefu-p4de", run_name="exp-1")
    first, _ = run_submit(spec)
    second, _ = run_submit(spec)
    assert first["TrainingJobName"] != second["TrainingJobName"]
    assert (
        first["CheckpointConfig"]
        == second["CheckpointConfig"]
        == {
            "S3Uri": f"{DEFAULT_BUCKET}/exp-1/checkpoints",
            "LocalPath": "/opt/ml/checkpoints",
        }
    )
    spec.run_name = "exp-2"
    other, _ = run_submit(spec)
    assert other["CheckpointConfig"]["S3Uri"] == f"{DEFAULT_BUCKET}/exp-2/checkpoints"
    spec.output_s3_uri = "s3://team-bucket/codefu/"
    under_output, _ = run_submit(spec)
    assert under_output["CheckpointConfig"]["S3Uri"] == "s3://team-bucket/codefu/exp-2/checkpoints"


def test_the_secret_stays_out_of_the_request_and_every_host_reads_it(
    aws: None, workdir: tuple[Path, Path]
) -> None:
    src, data = workdir
    spec = small_job(src, run_name="tok", instance_count=3, input_channels={"train": str(data)})
    first, session = run_submit(spec)
    second, _ = run_submit(spec)
    ssm = session.client("ssm")
    history = ssm.get_parameter_history(Name="/codefu/ray-auth/tok", WithDecryption=True)
    secrets = [v["Value"] for v in history["Parameters"]]
    assert len(secrets) == 2 and secrets[0] != secrets[1]
    for req, secret in zip((first, second), secrets, strict=True):
        # Nowhere in the request, nor in anything the submission uploaded.
        assert secret not in json.dumps(req)
        bucket = req["OutputDataConfig"]["S3OutputPath"]
        assert not any(secret.encode() in body for body in s3_objects(session, bucket).values())
        env = req["Environment"]
        assert env[AUTH_REGION_ENV] == "us-east-1"
        # Each host, given only the job environment, reads its job's version.
        token = derive_auth_token(secret)
        assert auth_environment(env, 3)["RAY_AUTH_TOKEN"] == token
    assert "FI_PROVIDER" not in first["Environment"]  # CPU-only: no EFA settings


def test_overrides_reach_the_head_byte_identical_through_the_driver_script(
    aws: None, workdir: tuple[Path, Path], tmp_path: Path
) -> None:
    """The command block of the SDK's real driver script, run by bash, gives the same argv."""
    src, _ = workdir
    entry = ["codefu-train", *HOSTILE]
    spec = small_job(src, entrypoint=entry)
    req, session = run_submit(spec)
    script = driver_script(req, session)
    start = script.index("CMD=$(cat <<'SAGEMAKER_BASE_COMMAND_EOF'")
    end = script.index('eval "$CMD"') + len('eval "$CMD"')
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    probe = bin_dir / "codefu-launcher"  # stands in for the launcher: records its argv
    probe.write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        f"open({str(tmp_path / 'argv.json')!r}, 'w').write(json.dumps(sys.argv[1:]))\n"
    )
    probe.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": "/home-of-nobody"}
    subprocess.run(["bash", "-c", script[start:end]], cwd=work, env=env, check=True)
    argv = json.loads((tmp_path / "argv.json").read_text())
    assert argv == ["run", "--", *entry]
    assert list(work.iterdir()) == []  # nothing was executed or redirected


def test_an_override_with_a_newline_is_refused(workdir: tuple[Path, Path]) -> None:
    spec = small_job(workdir[0], entrypoint=["x", "a=1\nb"], dry_run=True)
    with pytest.raises(SubmitError, match="newline"):
        submit(spec)


def test_role_from_environment(
    aws: None, workdir: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    src, _ = workdir
    monkeypatch.setenv("SAGEMAKER_ROLE_ARN", ROLE)
    req, _ = run_submit(small_job(src, role_arn=None))
    assert req["RoleArn"] == ROLE


def test_missing_role_says_what_to_set(
    workdir: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SAGEMAKER_ROLE_ARN", raising=False)
    with pytest.raises(SubmitError, match="SAGEMAKER_ROLE_ARN"):
        submit(small_job(workdir[0], role_arn=None))


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
    spec = small_job(workdir[0], region="us-east-1")
    with pytest.raises(SubmitError, match="AWS_ACCESS_KEY_ID"):
        submit(spec)
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    spec.region = None
    with pytest.raises(SubmitError, match="AWS_REGION"):
        submit(spec)


def test_dry_run_prints_the_sdk_request_without_aws(
    offline: None, workdir: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    src, data = workdir
    spec = JobSpec(
        "codefu-het",
        IMAGE,
        None,
        run_name="exp-7",
        instance_groups=[
            InstanceGroupSpec("gpu", "ml.p5.48xlarge", 2),
            InstanceGroupSpec("cpu", "ml.c5.4xlarge", 1),
        ],
        head_instance_group="gpu",
        entrypoint=["codefu-train", "a b", "c=$HOME`x`"],
        source_dir=str(src),
        input_channels={"train": str(data)},
        dry_run=True,
    )
    result = submit(spec)
    captured = capsys.readouterr()
    printed = json.loads(captured.out)
    assert printed["request"] == result.request
    req = result.request
    assert req["ResourceConfig"]["InstanceGroups"][0]["InstanceType"] == "ml.p5.48xlarge"
    assert (
        printed["command"]
        == result.command
        == ("exec codefu-launcher run --head-instance-group gpu -- codefu-train 'a b' 'c=$HOME`x`'")
    )
    assert req["RoleArn"] == "arn:aws:iam::<account>:role/<unset: set SAGEMAKER_ROLE_ARN>"
    bucket = "s3://sagemaker-eu-west-1-<account>"
    assert req["CheckpointConfig"] == {
        "S3Uri": f"{bucket}/exp-7/checkpoints",
        "LocalPath": "/opt/ml/checkpoints",
    }
    assert channel(req, "train")["DataSource"]["S3DataSource"]["S3Uri"].startswith(bucket)
    assert req["RetryStrategy"] == {"MaximumRetryAttempts": 3}
    assert req["Environment"][AUTH_PARAMETER_ENV] == "/codefu/ray-auth/exp-7:0"
    assert AUTH_SECRET_ENV not in req["Environment"]
    assert printed["resolved_spec"]["checkpoint_s3_uri"] == f"{bucket}/exp-7/checkpoints"
    assert "SAGEMAKER_ROLE_ARN" in captured.err and "Nothing was sent" in captured.err


def test_dry_run_request_is_the_request_a_submission_sends(
    aws: None, workdir: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Same spec: the dry run's request equals moto's, up to job name, account, version."""
    src, data = workdir
    spec = small_job(
        src,
        instance_type="ml.p4de.24xlarge",
        instance_count=2,
        entrypoint=["codefu-train", "x=1"],
        input_channels={"train": str(data)},
        keep_alive_seconds=60,
        environment={"WANDB_PROJECT": "p"},
    )
    sent, session = run_submit(spec)
    spec.dry_run = True
    preview = submit(spec)

    def normalised(req: dict[str, Any]) -> str:
        env = req["Environment"]
        env[AUTH_PARAMETER_ENV] = env[AUTH_PARAMETER_ENV].rsplit(":", 1)[0]  # the version
        text = json.dumps(req, sort_keys=True).replace(req["TrainingJobName"], "<job>")
        return text.replace(ACCOUNT, "<account>")

    assert normalised(preview.request) == normalised(sent)
    assert preview.command == command_of(sent, session)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"instance_type": None}, "exactly one of instance_type"),
        ({"instance_groups": [InstanceGroupSpec("g", "ml.c5.xlarge", 1)]}, "exactly one"),
        ({"head_instance_group": "gpu"}, "not one of the job's instance groups"),
        ({"entrypoint": []}, "entrypoint is empty"),
        ({"input_channels": {"train": "/no/such/dir"}, "dry_run": False}, "nox -s prepare"),
        ({"image_uri": ""}, "nox -s image -- push"),
        ({"run_name": "my run"}, "run name 'my run'"),
        ({"environment": {AUTH_SECRET_ENV: "s3cr3t"}}, "Parameter Store"),
        ({"environment": {"RAY_ADDRESS": "x:1"}}, "set these themselves"),
        ({"environment": {"CODEFU_PASS_ENV": "A"}}, "set these themselves"),
        ({"environment": {"HF_TOKEN": "hf_x"}}, "look like credentials"),
        ({"environment": {"WANDB_API_KEY": "k"}}, "DescribeTrainingJob"),
        ({"environment": {"db_password": "p"}}, "look like credentials"),
        ({"environment": {"A-B": "1"}}, "not valid variable names"),
        ({"launcher_args": ["--metrics-export-prot=8080"]}, "unrecognized arguments"),
        (
            {"launcher_args": ["--metrics-export-port=http"]},
            "--metrics-export-port: .http. is not a port",
        ),
        ({"launcher_args": ["--head-instance-group=x"]}, "head_instance_group in the job spec"),
        ({"launcher_args": ["--metrics-export-port=18123"]}, "worker port range 10002-19999"),
        ({"launcher_args": ["--metrics-export-port=8265"]}, "also --dashboard-port"),
        ({"launcher_args": ["codefu-train"]}, "the entrypoint follows"),
        ({"base_job_name": "codefu.grpo"}, "base_job_name 'codefu.grpo'"),
        ({"base_job_name": "x" * 42}, "1-41 letters"),
        ({"channel_instance_groups": {"nope": ["g"]}}, "not an input channel"),
        ({"secret_parameters": {"HF_TOKEN": "hf-token"}}, "starting with '/'"),
        ({"secret_parameters": {"RAY_AUTH_TOKEN": "/x"}}, "not a variable name to set"),
        (
            {"secret_parameters": {"K": "/x"}, "environment": {"K": "1"}},
            "both environment and secret_parameters",
        ),
        ({"environment": {"CODEFU_SECRET_PARAMETERS": "A=/b"}}, "set these themselves"),
        ({"max_retry_attempts": 31}, "1 to 30"),
    ],
)
def test_invalid_specs_name_the_fix(
    workdir: tuple[Path, Path], changes: dict[str, Any], message: str
) -> None:
    with pytest.raises(SubmitError, match=message):
        submit(small_job(workdir[0], **{"dry_run": True, **changes}))


def test_heterogeneous_without_head_group_is_refused(workdir: tuple[Path, Path]) -> None:
    groups = [InstanceGroupSpec("gpu", "ml.p5.48xlarge", 1)]
    spec = small_job(workdir[0], instance_type=None, instance_groups=groups, dry_run=True)
    with pytest.raises(SubmitError, match="head_instance_group"):
        submit(spec)


def test_dry_run_notes_a_missing_dataset_instead_of_failing(
    offline: None, workdir: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    channels = {"data": "s3://b/data", "extra": "/no/such/dir"}
    spec = small_job(workdir[0], role_arn=None, input_channels=channels, dry_run=True)
    result = submit(spec)
    err = capsys.readouterr().err
    assert "nox -s prepare" in err and "SAGEMAKER_ROLE_ARN" in err
    assert any("/no/such/dir" in note for note in result.resolved["notes"])


def test_submit_cli_dry_run(
    offline: None,
    workdir: tuple[Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from codefu_launcher.cli import main

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
    assert main(["submit", "--spec", str(path), "--dry-run"]) == 0
    request = json.loads(capsys.readouterr().out)["request"]
    assert [g["InstanceCount"] for g in request["ResourceConfig"]["InstanceGroups"]] == [1, 2]
    assert request["CheckpointConfig"]["S3Uri"] == (
        "s3://sagemaker-eu-west-1-<account>/cli/checkpoints"
    )
    path.write_text(json.dumps({**spec, "instance_typo": "x"}))
    assert main(["submit", "--spec", str(path)]) == 2
    assert "instance_typo" in capsys.readouterr().err


def test_two_submissions_in_one_second_get_distinct_job_names(
    aws: None, workdir: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SDK's timestamp has one-second resolution: the random part keeps jobs apart."""
    import datetime as real_datetime

    import sagemaker.train.utils as sdk_utils

    class FrozenClock(real_datetime.datetime):
        @classmethod
        def now(cls, tz: Any = None) -> Any:
            return real_datetime.datetime(2026, 11, 25, 3, 0, 0)

    monkeypatch.setattr(sdk_utils, "datetime", FrozenClock)
    spec = small_job(workdir[0], base_job_name="codefu_p4de", run_name="same-second")
    first, _ = run_submit(spec)
    second, _ = run_submit(spec)
    names = [first["TrainingJobName"], second["TrainingJobName"]]
    assert names[0] != names[1]
    for name in names:
        assert re.fullmatch(r"codefu-p4de-[0-9a-f]{6}-20261125030000", name)
    # Uploads and outputs stay under the spec's base name, not the random one.
    assert first["OutputDataConfig"]["S3OutputPath"] == f"{DEFAULT_BUCKET}/codefu_p4de"
    code = channel(first, "code")["DataSource"]["S3DataSource"]["S3Uri"]
    assert code.startswith(f"{DEFAULT_BUCKET}/codefu_p4de/{names[0]}/")


def staged_keys(session: Any, uri: str) -> list[str]:
    bucket, _, prefix = uri.removeprefix("s3://").partition("/")
    listed = session.client("s3").list_objects_v2(Bucket=bucket, Prefix=prefix)
    return sorted(o["Key"] for o in listed.get("Contents", []))


def test_a_local_channel_is_staged_once_and_restaged_when_it_changes(
    aws: None, workdir: tuple[Path, Path]
) -> None:
    src, data = workdir
    (data / "test.parquet").write_bytes(b"PAR1-test")
    spec = small_job(src, run_name="stage", input_channels={"easy": str(data)})

    def submitted() -> tuple[Any, Any]:
        session = boto3.Session(region_name="us-east-1")
        return submit(spec, boto_session=session), session

    first, session = submitted()
    uri = channel(first.request, "easy")["DataSource"]["S3DataSource"]["S3Uri"]
    assert re.fullmatch(rf"{DEFAULT_BUCKET}/codefu-staged/easy/[0-9a-f]{{16}}/", uri)
    assert [k.rsplit("/", 1)[1] for k in staged_keys(session, uri)] == [
        "test.parquet",
        "train.parquet",
    ]
    assert first.staged["easy"].uploaded == 2

    # Same files again: the same prefix, nothing uploaded.
    again, _ = submitted()
    assert channel(again.request, "easy")["DataSource"]["S3DataSource"]["S3Uri"] == uri
    assert again.staged["easy"].uploaded == 0 and again.staged["easy"].files == 2

    # A changed file: a new prefix with both files; the old one is left as it was.
    (data / "train.parquet").write_bytes(b"PAR1-changed")
    changed, session = submitted()
    new_uri = channel(changed.request, "easy")["DataSource"]["S3DataSource"]["S3Uri"]
    assert new_uri != uri and changed.staged["easy"].uploaded == 2
    assert read_s3_text(session, new_uri, "train.parquet") == "PAR1-changed"
    assert read_s3_text(session, uri, "train.parquet") == "PAR1-not-really"

    # The dry run names the prefix a submission would use, without uploading.
    spec.dry_run = True
    preview = submit(spec)
    assert preview.staged["easy"].s3_uri == new_uri.replace(ACCOUNT, "<account>")
    assert preview.staged["easy"].uploaded == 0


def test_a_staging_bucket_that_does_not_exist_is_named(
    aws: None, workdir: tuple[Path, Path]
) -> None:
    src, data = workdir
    spec = small_job(src, input_channels={"d": str(data)}, staging_s3_uri="s3://no-such/x")
    with pytest.raises(SubmitError, match=r"s3://no-such/x/codefu-staged/d/.*NoSuchBucket"):
        submit(spec)


def test_heterogeneous_channels_go_to_the_groups_that_need_them(
    aws: None, workdir: tuple[Path, Path]
) -> None:
    src, _ = workdir
    spec = small_job(
        src,
        instance_type=None,
        instance_groups=[
            InstanceGroupSpec("train", "ml.p4de.24xlarge", 2),
            InstanceGroupSpec("judge", "ml.c7i.24xlarge", 2),
        ],
        head_instance_group="train",
        input_channels={"model": "s3://b/models/qwen/", "easy": "s3://b/data/easy/"},
        channel_instance_groups={"model": ["train"], "easy": ["train"]},
    )
    req, _ = run_submit(spec)
    groups = {
        c["ChannelName"]: c["DataSource"]["S3DataSource"].get("InstanceGroupNames")
        for c in req["InputDataConfig"]
    }
    assert groups == {
        "model": ["train"],
        "easy": ["train"],
        "code": ["train", "judge"],
        "sm_drivers": ["train", "judge"],
    }
    assert channel(req, "model")["DataSource"]["S3DataSource"]["S3Uri"] == "s3://b/models/qwen/"


def test_launcher_options_and_remote_debug_reach_the_request(
    aws: None, workdir: tuple[Path, Path]
) -> None:
    src, _ = workdir
    args = ["--metrics-export-port=8080", "--dashboard-host", "0.0.0.0", "--temp-dir=/tmp/r y"]
    spec = small_job(src, launcher_args=args, remote_debug=True, entrypoint=["codefu-train"])
    req, session = run_submit(spec)
    assert command_of(req, session) == (
        "exec codefu-launcher run --metrics-export-port=8080 --dashboard-host 0.0.0.0 "
        "'--temp-dir=/tmp/r y' -- codefu-train"
    )
    assert req["RemoteDebugConfig"] == {"EnableRemoteDebug": True}
    plain, _ = run_submit(small_job(src))
    assert "RemoteDebugConfig" not in plain


def test_every_user_entry_is_listed_for_the_launcher_to_pass_on(
    aws: None, workdir: tuple[Path, Path]
) -> None:
    user = {"RAY_DEDUP_LOGS": "0", "GLOO_SOCKET_IFNAME": "eth0", "MY_KNOB": "7"}
    req, _ = run_submit(small_job(workdir[0], environment=user))
    env = req["Environment"]
    assert {k: env[k] for k in user} == user
    assert env["CODEFU_PASS_ENV"] == "GLOO_SOCKET_IFNAME,MY_KNOB,RAY_DEDUP_LOGS"


def test_secrets_travel_as_parameter_names_and_every_host_reads_them(
    aws: None, workdir: tuple[Path, Path], tmp_path: Path
) -> None:
    """A credential goes through Parameter Store: the job carries its name, hosts its value."""
    from codefu_launcher.host import LaunchError
    from codefu_launcher.plan import PlanOptions, make_plan, parse_resource_config
    from codefu_launcher.run import Launcher, RunSettings

    ssm = boto3.client("ssm", region_name="us-east-1")
    ssm.put_parameter(Name="/team/wandb-key", Value="wandb-s3cr3t", Type="SecureString")
    spec = small_job(workdir[0], secret_parameters={"WANDB_API_KEY": "/team/wandb-key"})
    req, _ = run_submit(spec)
    env = req["Environment"]
    assert env["CODEFU_SECRET_PARAMETERS"] == "WANDB_API_KEY=/team/wandb-key"
    assert "wandb-s3cr3t" not in json.dumps(req)
    rc = parse_resource_config(
        {
            "current_host": "algo-1",
            "hosts": ["algo-1"],
            "instance_groups": [
                {"instance_group_name": "g", "instance_type": "ml.c5.xlarge", "hosts": ["algo-1"]}
            ],
        }
    )
    host_env = {**env, "PATH": "/usr/bin"}
    plan = make_plan(rc, host_env, PlanOptions(), cpu_count=1)
    settings = RunSettings(failure_file=str(tmp_path / "failure"))
    launcher = Launcher(plan, ["x"], host_env, settings)
    assert launcher.base_env["WANDB_API_KEY"] == "wandb-s3cr3t"
    assert launcher.ray_env()["WANDB_API_KEY"] == "wandb-s3cr3t"
    host_env["CODEFU_SECRET_PARAMETERS"] = "WANDB_API_KEY=/team/missing"
    with pytest.raises(LaunchError, match=r"/team/missing.*ssm:GetParameter"):
        Launcher(plan, ["x"], host_env, settings)
