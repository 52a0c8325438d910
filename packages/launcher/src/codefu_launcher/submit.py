"""Submit a SageMaker training job whose hosts form one Ray cluster (Contract 5).

`submit(spec)` builds a sagemaker-train v3 `ModelTrainer`: the training image, source
code whose command is `codefu-launcher run -- <entrypoint>`, compute (one instance type
or instance groups), input channels, checkpoint config for /opt/ml/checkpoints, stopping
condition, keep-alive and environment (Ray auth secret, NCCL/EFA settings by instance
type). With `dry_run` it prints the request and the resolved spec and touches no AWS.
"""

from __future__ import annotations

import json
import os
import secrets
import shlex
import sys
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from codefu_launcher.plan import HOMOGENEOUS_GROUP, gpus_for_instance_type
from codefu_launcher.run import AUTH_SECRET_ENV

CHECKPOINT_LOCAL_PATH = "/opt/ml/checkpoints"
ROLE_ENV = "SAGEMAKER_ROLE_ARN"

# NCCL over EFA on the GPU instance types the project targets (aws-ofi-nccl in the image).
_EFA_COMMON = {
    "FI_PROVIDER": "efa",
    "FI_EFA_USE_DEVICE_RDMA": "1",
    "FI_EFA_FORK_SAFE": "1",  # Ray and vLLM fork worker processes
    "NCCL_SOCKET_IFNAME": "^lo,docker0",
    "NCCL_DEBUG": "WARN",
    "TORCH_NCCL_ASYNC_ERROR_HANDLING": "1",
}
_EFA_BY_FAMILY: dict[str, dict[str, str]] = {
    "ml.p4d.": _EFA_COMMON,
    "ml.p4de.": _EFA_COMMON,
    "ml.p5.": {**_EFA_COMMON, "FI_EFA_SET_CUDA_SYNC_MEMOPS": "0"},
    "ml.p5e.": {**_EFA_COMMON, "FI_EFA_SET_CUDA_SYNC_MEMOPS": "0"},
    "ml.p5en.": {**_EFA_COMMON, "FI_EFA_SET_CUDA_SYNC_MEMOPS": "0"},
}


class SubmitError(ValueError):
    """The job spec or the local AWS setup cannot produce a job; the message says what to fix."""


@dataclass
class InstanceGroupSpec:
    name: str
    instance_type: str
    instance_count: int


@dataclass
class JobSpec:
    base_job_name: str
    image_uri: str
    role_arn: str | None = None  # None -> $SAGEMAKER_ROLE_ARN
    region: str | None = None  # None -> AWS_REGION / boto default
    instance_type: str | None = None  # homogeneous cluster
    instance_count: int = 1
    instance_groups: list[InstanceGroupSpec] = field(default_factory=list)  # heterogeneous
    head_instance_group: str | None = None
    entrypoint: list[str] = field(default_factory=list)
    source_dir: str = "."
    input_channels: dict[str, str] = field(default_factory=dict)  # name -> local dir or s3://
    checkpoint_s3_uri: str | None = None
    output_s3_uri: str | None = None
    max_runtime_seconds: int = 5 * 24 * 3600
    keep_alive_seconds: int = 0
    volume_size_gb: int = 200
    environment: dict[str, str] = field(default_factory=dict)
    dry_run: bool = False


@dataclass
class SubmitResult:
    job_name: str | None
    dry_run: bool
    request: dict[str, Any]  # CreateTrainingJob request (dry run: as known before uploads)
    resolved: dict[str, Any]  # the spec after defaults, with secrets redacted


def nccl_environment(instance_types: list[str]) -> dict[str, str]:
    """NCCL/EFA variables for the job's GPU instance types (empty for other types)."""
    env: dict[str, str] = {}
    for itype in instance_types:
        for prefix, values in _EFA_BY_FAMILY.items():
            if itype.startswith(prefix):
                env.update(values)
    return env


def launcher_command(head_instance_group: str | None) -> str:
    """The job's command: the launcher, whose arguments after `--` are the entrypoint.

    The SDK's driver script runs the command with `eval` in a bash that does not forward
    SIGTERM; `exec` replaces that bash with the launcher, so stopping the job reaches it
    and its exit code is the container's.
    """
    parts = ["exec", "codefu-launcher", "run"]
    if head_instance_group:
        parts += ["--head-instance-group", shlex.quote(head_instance_group)]
    return " ".join([*parts, "--"])


def _groups(spec: JobSpec) -> list[InstanceGroupSpec]:
    if spec.instance_groups:
        return list(spec.instance_groups)
    assert spec.instance_type is not None
    return [InstanceGroupSpec(HOMOGENEOUS_GROUP, spec.instance_type, spec.instance_count)]


def validate(spec: JobSpec) -> list[str]:
    """Raise SubmitError naming the field to fix; return notes (dry run: missing local dirs)."""
    notes: list[str] = []
    if not spec.image_uri:
        raise SubmitError(
            "image_uri is empty: build and push the training image (`nox -s image -- push`) "
            "and set its ECR URI."
        )
    if not spec.entrypoint:
        raise SubmitError(
            "entrypoint is empty: say what the head runs, e.g. ['codefu-train', ...]."
        )
    if bool(spec.instance_type) == bool(spec.instance_groups):
        raise SubmitError(
            "Set exactly one of instance_type (+ instance_count) for a homogeneous cluster or "
            "instance_groups for a heterogeneous one."
        )
    if spec.instance_type and spec.instance_count < 1:
        raise SubmitError(f"instance_count must be at least 1, not {spec.instance_count}.")
    names = [g.name for g in spec.instance_groups]
    if len(set(names)) != len(names):
        raise SubmitError(f"Instance group names must be unique: {names}.")
    for g in spec.instance_groups:
        if g.instance_count < 1:
            raise SubmitError(f"Instance group {g.name!r} needs instance_count >= 1.")
    if spec.head_instance_group is not None:
        known = names or [HOMOGENEOUS_GROUP]
        if spec.head_instance_group not in known:
            raise SubmitError(
                f"head_instance_group {spec.head_instance_group!r} is not one of the job's "
                f"instance groups {known}."
            )
    if spec.instance_groups and spec.head_instance_group is None:
        raise SubmitError(
            "A heterogeneous job needs head_instance_group: the group whose first host runs "
            f"the entrypoint (one of {names})."
        )
    if spec.max_runtime_seconds < 1 or spec.keep_alive_seconds < 0 or spec.volume_size_gb < 1:
        raise SubmitError("max_runtime_seconds and volume_size_gb must be > 0, keep_alive >= 0.")
    problems = [
        f"Input channel {name!r}: {source} is neither an s3:// URI nor a local directory "
        "(run `nox -s prepare` first, or give the dataset's S3 URI)."
        for name, source in spec.input_channels.items()
        if not source.startswith("s3://") and not Path(source).is_dir()
    ]
    if not Path(spec.source_dir).is_dir() and not spec.source_dir.startswith("s3://"):
        problems.append(f"source_dir {spec.source_dir} is not a directory.")
    if problems and not spec.dry_run:
        raise SubmitError(" ".join(problems))
    notes += problems
    return notes


def job_environment(spec: JobSpec) -> dict[str, str]:
    """Environment of every host: NCCL/EFA defaults, launcher settings, the user's overrides."""
    types = [g.instance_type for g in _groups(spec)]
    gpu_types = [t for t in types if (gpus_for_instance_type(t) or 0) > 0]
    env = nccl_environment(gpu_types)
    if spec.head_instance_group:
        env["CODEFU_HEAD_INSTANCE_GROUP"] = spec.head_instance_group
    env.update(spec.environment)
    # One random secret per job: every host derives the same Ray auth token from it.
    env.setdefault(AUTH_SECRET_ENV, secrets.token_hex(32))
    return env


def _redact(env: dict[str, str]) -> dict[str, str]:
    return {k: ("<redacted>" if k == AUTH_SECRET_ENV else v) for k, v in env.items()}


def _configs(spec: JobSpec, env: dict[str, str]) -> dict[str, Any]:
    """The ModelTrainer keyword arguments (no AWS access)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from sagemaker.train.configs import (
            CheckpointConfig,
            Compute,
            InputData,
            InstanceGroup,
            OutputDataConfig,
            SourceCode,
            StoppingCondition,
        )

    keep_alive = spec.keep_alive_seconds or None
    if spec.instance_groups:
        compute = Compute(
            instance_groups=[
                InstanceGroup(
                    instance_group_name=g.name,
                    instance_type=g.instance_type,
                    instance_count=g.instance_count,
                )
                for g in spec.instance_groups
            ],
            volume_size_in_gb=spec.volume_size_gb,
            keep_alive_period_in_seconds=keep_alive,
        )
    else:
        compute = Compute(
            instance_type=spec.instance_type,
            instance_count=spec.instance_count,
            volume_size_in_gb=spec.volume_size_gb,
            keep_alive_period_in_seconds=keep_alive,
        )
    return {
        "training_image": spec.image_uri,
        "base_job_name": spec.base_job_name,
        "source_code": SourceCode(
            source_dir=spec.source_dir,
            command=launcher_command(spec.head_instance_group),
            args=list(spec.entrypoint),
        ),
        "compute": compute,
        "stopping_condition": StoppingCondition(max_runtime_in_seconds=spec.max_runtime_seconds),
        "checkpoint_config": CheckpointConfig(
            s3_uri=spec.checkpoint_s3_uri, local_path=CHECKPOINT_LOCAL_PATH
        ),
        "output_data_config": (
            OutputDataConfig(s3_output_path=spec.output_s3_uri) if spec.output_s3_uri else None
        ),
        "environment": env,
        "input_data": [
            InputData(channel_name=name, data_source=source)
            for name, source in spec.input_channels.items()
        ],
    }


def preview_request(spec: JobSpec, env: dict[str, str], role: str | None) -> dict[str, Any]:
    """The CreateTrainingJob request as far as it is known without AWS.

    Uploads (local channels, source code) and SDK defaults (bucket, job-name suffix) are
    shown as placeholders; the moto tests check the real request has the same fields.
    """
    groups = _groups(spec)
    resource: dict[str, Any] = {"VolumeSizeInGB": spec.volume_size_gb}
    if spec.instance_groups:
        resource["InstanceGroups"] = [
            {
                "InstanceGroupName": g.name,
                "InstanceType": g.instance_type,
                "InstanceCount": g.instance_count,
            }
            for g in groups
        ]
    else:
        resource["InstanceType"] = spec.instance_type
        resource["InstanceCount"] = spec.instance_count
    if spec.keep_alive_seconds:
        resource["KeepAlivePeriodInSeconds"] = spec.keep_alive_seconds
    channels = [
        {
            "ChannelName": name,
            "DataSource": {
                "S3DataSource": {
                    "S3DataType": "S3Prefix",
                    "S3Uri": src if src.startswith("s3://") else f"<upload of {src}>",
                    "S3DataDistributionType": "FullyReplicated",
                }
            },
        }
        for name, src in spec.input_channels.items()
    ]
    command = launcher_command(spec.head_instance_group)
    return {
        "TrainingJobName": f"{spec.base_job_name}-<timestamp>",
        "RoleArn": role or f"<unset: set {ROLE_ENV}>",
        "AlgorithmSpecification": {"TrainingImage": spec.image_uri, "TrainingInputMode": "File"},
        "ResourceConfig": resource,
        "StoppingCondition": {"MaxRuntimeInSeconds": spec.max_runtime_seconds},
        "CheckpointConfig": {
            "S3Uri": spec.checkpoint_s3_uri or "<default bucket>/checkpoints",
            "LocalPath": CHECKPOINT_LOCAL_PATH,
        },
        "OutputDataConfig": {"S3OutputPath": spec.output_s3_uri or "<default bucket>"},
        "InputDataConfig": [
            *channels,
            {"ChannelName": "code", "DataSource": f"<upload of {spec.source_dir}>"},
            {"ChannelName": "sm_drivers", "DataSource": "<SDK driver scripts>"},
        ],
        "Environment": _redact(env),
        "Command": " ".join([command, *(shlex.quote(a) for a in spec.entrypoint)]),
    }


def resolve_role(spec: JobSpec) -> str | None:
    return spec.role_arn or os.environ.get(ROLE_ENV) or None


def _boto_session(spec: JobSpec) -> Any:
    import boto3

    session = boto3.Session(region_name=spec.region) if spec.region else boto3.Session()
    if session.region_name is None:
        raise SubmitError(
            "No AWS region: set AWS_REGION (or AWS_DEFAULT_REGION), add a region to "
            "~/.aws/config, or set region in the job spec."
        )
    if session.get_credentials() is None:
        raise SubmitError(
            "No AWS credentials: run `aws configure` or `aws sso login`, or set "
            "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE)."
        )
    return session


def submit(spec: JobSpec, boto_session: Any = None, wait: bool = False) -> SubmitResult:
    """Create the training job (or, with spec.dry_run, print what would be created).

    `boto_session` (a boto3.Session) is optional; by default one is made from the
    environment. Raises SubmitError with what to set when role, region or credentials
    are missing.
    """
    notes = validate(spec)
    env = job_environment(spec)
    role = resolve_role(spec)
    if role is None:
        notes.append(f"No role: set {ROLE_ENV} (or role_arn) before submitting for real.")
    resolved = {**asdict(spec), "role_arn": role, "environment": _redact(env), "notes": notes}
    if spec.dry_run:
        request = preview_request(spec, env, role)
        print(json.dumps({"request": request, "resolved_spec": resolved}, indent=2))
        for note in notes:
            print(f"codefu-launcher submit (dry run) note: {note}", file=sys.stderr)
        return SubmitResult(job_name=None, dry_run=True, request=request, resolved=resolved)
    if role is None:
        raise SubmitError(
            f"No SageMaker execution role: set {ROLE_ENV}=arn:aws:iam::<account>:role/<name> "
            "(a role SageMaker can assume, with access to the image, data and output buckets; "
            "see docs/sagemaker.md) or role_arn in the job spec."
        )
    session = boto_session or _boto_session(spec)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from sagemaker.core.helper.session_helper import Session
        from sagemaker.train import ModelTrainer

    kwargs = _configs(spec, env)
    input_data = kwargs.pop("input_data")
    if kwargs["output_data_config"] is None:
        del kwargs["output_data_config"]
    trainer = ModelTrainer(sagemaker_session=Session(boto_session=session), role=role, **kwargs)
    trainer.train(input_data_config=input_data or None, wait=wait, logs=wait)
    job = trainer._latest_training_job
    job_name = str(job.training_job_name) if job is not None else None
    request = {"TrainingJobName": job_name, "RoleArn": role}
    print(f"Submitted SageMaker training job {job_name} in {session.region_name}.")
    return SubmitResult(job_name=job_name, dry_run=False, request=request, resolved=resolved)


def spec_from_dict(data: dict[str, Any]) -> JobSpec:
    """A JobSpec from JSON-like data (instance_groups as a list of objects)."""
    known = set(JobSpec.__dataclass_fields__)
    unknown = sorted(set(data) - known)
    if unknown:
        raise SubmitError(f"Unknown job spec keys {unknown}; valid keys: {sorted(known)}.")
    values = dict(data)
    values["instance_groups"] = [
        InstanceGroupSpec(**g) if isinstance(g, dict) else g
        for g in values.get("instance_groups", [])
    ]
    try:
        return JobSpec(**values)
    except TypeError as exc:
        raise SubmitError(f"Invalid job spec: {exc}.") from exc
