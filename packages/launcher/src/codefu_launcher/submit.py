"""Submit a SageMaker training job whose hosts form one Ray cluster.

`submit(spec)` builds a sagemaker-train `ModelTrainer`: the training image, source code
whose command is `codefu-launcher run -- <entrypoint>`, compute (one instance type or
instance groups), input channels, checkpoints (/opt/ml/checkpoints synced with an S3
prefix named after the run, so a resubmitted run resumes), a retry strategy, stopping
condition, keep-alive and environment (NCCL/EFA settings by instance type, and where the
hosts read the Ray auth secret: `codefu_launcher.auth`). A dry run executes the same code
against `codefu_launcher.offline_aws`, so the request it prints is the one the SDK builds,
and nothing reaches AWS.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from codefu_launcher.auth import (
    AUTH_PARAMETER_ENV,
    AUTH_REGION_ENV,
    AUTH_SECRET_ENV,
    AuthError,
    store_job_secret,
)
from codefu_launcher.offline_aws import (
    STAND_IN_ACCOUNT,
    NotSent,
    offline_session,
    with_placeholders,
)
from codefu_launcher.plan import HOMOGENEOUS_GROUP, gpus_for_instance_type

CHECKPOINT_LOCAL_PATH = "/opt/ml/checkpoints"
ROLE_ENV = "SAGEMAKER_ROLE_ARN"
ROLE_PLACEHOLDER = f"arn:aws:iam::{STAND_IN_ACCOUNT}:role/<unset: set {ROLE_ENV}>"
DRY_RUN_REGION = "us-east-1"  # a dry run's region when none is configured
RUN_NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
# The environment entries that only submission sets (the Ray auth secret's whereabouts).
SET_BY_SUBMISSION = (AUTH_SECRET_ENV, AUTH_PARAMETER_ENV, AUTH_REGION_ENV)
# The SDK's driver script runs the command from this quoted heredoc with `eval "$CMD"`.
DRIVER_SCRIPT = "sm_train.sh"
COMMAND_HEREDOC = ("<<'SAGEMAKER_BASE_COMMAND_EOF'\n", "\nSAGEMAKER_BASE_COMMAND_EOF\n")
CREATE_JOB_EVENT = "provide-client-params.sagemaker.CreateTrainingJob"

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
    # Jobs of one run name share checkpoints (a resubmission resumes) and the Ray auth
    # parameter. None -> base_job_name.
    run_name: str | None = None
    instance_type: str | None = None  # homogeneous cluster
    instance_count: int = 1
    instance_groups: list[InstanceGroupSpec] = field(default_factory=list)  # heterogeneous
    head_instance_group: str | None = None
    entrypoint: list[str] = field(default_factory=list)
    source_dir: str = "."
    input_channels: dict[str, str] = field(default_factory=dict)  # name -> local dir or s3://
    # None -> <output_s3_uri, or the SDK session's default bucket[/prefix]>/<run name>/checkpoints
    checkpoint_s3_uri: str | None = None
    output_s3_uri: str | None = None
    # SageMaker's RetryStrategy: restarts after an InternalServerError (0: none, at most 30).
    max_retry_attempts: int = 3
    max_runtime_seconds: int = 5 * 24 * 3600
    keep_alive_seconds: int = 0
    volume_size_gb: int = 200
    environment: dict[str, str] = field(default_factory=dict)
    dry_run: bool = False


@dataclass
class SubmitResult:
    job_name: str | None
    dry_run: bool
    request: dict[str, Any]  # the CreateTrainingJob request as the SDK built it
    command: str | None  # dry run: the command in the SDK's driver script
    resolved: dict[str, Any]  # the spec after defaults


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


def run_name(spec: JobSpec) -> str:
    return spec.run_name or spec.base_job_name


def validate(spec: JobSpec) -> list[str]:
    """Raise SubmitError naming the field to fix; return notes (dry run: missing local dirs)."""
    if not spec.image_uri:
        raise SubmitError(
            "image_uri is empty: build and push the training image (`nox -s image -- push`) "
            "and set its ECR URI."
        )
    if not spec.entrypoint:
        raise SubmitError(
            "entrypoint is empty: say what the head runs, e.g. ['codefu-train', ...]."
        )
    if any("\n" in arg or "\x00" in arg for arg in spec.entrypoint):
        raise SubmitError(
            "An entrypoint argument contains a newline or NUL byte; the SDK's driver script "
            "carries the command in a heredoc, one line: remove them."
        )
    if not RUN_NAME_PATTERN.fullmatch(run_name(spec)):
        raise SubmitError(
            f"run name {run_name(spec)!r} must be 1-128 letters, digits, '.', '_' or '-' and "
            "start with a letter or digit (it names the run's S3 checkpoint prefix)."
        )
    reserved = sorted(set(spec.environment) & set(SET_BY_SUBMISSION))
    if reserved:
        raise SubmitError(
            f"environment sets {reserved}: the job's environment is readable by anyone "
            "allowed DescribeTrainingJob, so the Ray auth secret never goes there; submission "
            "stores it in Parameter Store itself. Remove them."
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
    if not 0 <= spec.max_retry_attempts <= 30:
        raise SubmitError(
            f"max_retry_attempts={spec.max_retry_attempts}: SageMaker allows 1 to 30 (0: none)."
        )
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
    return problems


def job_environment(spec: JobSpec) -> dict[str, str]:
    """Environment of every host: NCCL/EFA defaults, launcher settings, the user's entries.

    Submission adds where the hosts read the Ray auth secret (`auth.store_job_secret`).
    """
    types = [g.instance_type for g in _groups(spec)]
    gpu_types = [t for t in types if (gpus_for_instance_type(t) or 0) > 0]
    env = nccl_environment(gpu_types)
    if spec.head_instance_group:
        env["CODEFU_HEAD_INSTANCE_GROUP"] = spec.head_instance_group
    env.update(spec.environment)
    return env


def checkpoint_s3_uri(spec: JobSpec, sagemaker_session: Any) -> str:
    """Where /opt/ml/checkpoints syncs: the same for every job of the run name.

    SageMaker copies this prefix into /opt/ml/checkpoints when a job starts, so veRL's
    `resume_mode=auto` continues from the newest checkpoint a previous job left there.
    """
    if spec.checkpoint_s3_uri:
        return spec.checkpoint_s3_uri
    if spec.output_s3_uri:
        root = spec.output_s3_uri.rstrip("/")
    else:
        root = f"s3://{sagemaker_session.default_bucket()}"
        prefix = (sagemaker_session.default_bucket_prefix or "").strip("/")
        root += f"/{prefix}" if prefix else ""
    return f"{root}/{run_name(spec)}/checkpoints"


def _trainer(spec: JobSpec, env: dict[str, str], role: str, sagemaker_session: Any) -> Any:
    """The ModelTrainer of the job (resolving the checkpoint URI may ask S3 for the bucket)."""
    from sagemaker.core.training.configs import (
        CheckpointConfig,
        Compute,
        InstanceGroup,
        OutputDataConfig,
        RetryStrategy,
        SourceCode,
        StoppingCondition,
    )
    from sagemaker.train import ModelTrainer

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
    optional: dict[str, Any] = {}
    if spec.output_s3_uri:
        optional["output_data_config"] = OutputDataConfig(s3_output_path=spec.output_s3_uri)
    trainer = ModelTrainer(
        sagemaker_session=sagemaker_session,
        role=role,
        training_image=spec.image_uri,
        base_job_name=spec.base_job_name,
        source_code=SourceCode(
            source_dir=spec.source_dir,
            command=launcher_command(spec.head_instance_group),
            args=list(spec.entrypoint),
        ),
        compute=compute,
        stopping_condition=StoppingCondition(max_runtime_in_seconds=spec.max_runtime_seconds),
        checkpoint_config=CheckpointConfig(
            s3_uri=checkpoint_s3_uri(spec, sagemaker_session), local_path=CHECKPOINT_LOCAL_PATH
        ),
        environment=env,
        **optional,
    )
    if spec.max_retry_attempts:
        trainer.with_retry_strategy(RetryStrategy(maximum_retry_attempts=spec.max_retry_attempts))
    return trainer


@contextmanager
def _captured(boto_session: Any, event: str) -> Iterator[list[dict[str, Any]]]:
    """The API parameters of every `event` call made through `boto_session`'s clients."""
    calls: list[dict[str, Any]] = []

    def capture(params: dict[str, Any], **_: Any) -> None:
        calls.append(params)

    boto_session.events.register(event, capture)
    try:
        yield calls
    finally:
        boto_session.events.unregister(event, capture)


def _create_job(
    spec: JobSpec,
    role: str,
    boto_session: Any,
    sagemaker_config: dict[str, Any] | None = None,
    wait: bool = False,
) -> dict[str, Any]:
    """Store the Ray secret, build the job with the SDK and send CreateTrainingJob.

    Returns the request as sent (JSON-like). Against `offline_aws` the SDK's call stops
    at CreateTrainingJob and the request is returned all the same.
    """
    from sagemaker.core.helper.session_helper import Session

    try:
        env = {**job_environment(spec), **store_job_secret(boto_session, run_name(spec))}
    except AuthError as exc:
        raise SubmitError(str(exc)) from exc
    with _captured(boto_session, CREATE_JOB_EVENT) as sent:
        session = Session(boto_session=boto_session, sagemaker_config=sagemaker_config)
        trainer = _trainer(spec, env, role, session)
        input_data = [_input(name, source) for name, source in spec.input_channels.items()]
        with suppress(NotSent):  # only `offline_aws` raises it: the dry run ends there
            trainer.train(input_data_config=input_data or None, wait=wait, logs=wait)
    if len(sent) != 1:
        raise SubmitError(f"The SageMaker SDK sent {len(sent)} CreateTrainingJob requests, not 1.")
    request: dict[str, Any] = json.loads(json.dumps(sent[0], default=str))
    return request


def _input(name: str, source: str) -> Any:
    from sagemaker.core.training.configs import InputData

    return InputData(channel_name=name, data_source=source)


def _dry_run_config(boto_session: Any) -> dict[str, Any]:
    """The user's SageMaker SDK defaults, with the SDK's usage telemetry (an HTTP call) off.

    A defaults file kept in S3 would be read through `boto_session` (offline: not found).
    """
    from sagemaker.core.config import load_sagemaker_config

    loaded = load_sagemaker_config(s3_resource=boto_session.resource("s3"))
    config: dict[str, Any] = {"SchemaVersion": "1.0", **loaded}
    sdk = config.setdefault("SageMaker", {}).setdefault("PythonSDK", {})
    sdk.setdefault("Modules", {})["TelemetryOptOut"] = True
    return config


def _local_or_placeholder(source: str) -> str:
    if source.startswith("s3://") or Path(source).is_dir():
        return source
    return f"s3://<missing local directory {source}>"


def _driver_command(script: str) -> str | None:
    """The command line in the SDK's driver script (between its heredoc markers)."""
    start, end = COMMAND_HEREDOC
    if start not in script or end not in script:
        return None
    return script.split(start, 1)[1].split(end, 1)[0]


def dry_run(spec: JobSpec, role: str | None, notes: list[str]) -> SubmitResult:
    """Run the submission against `offline_aws` and print what the SDK would send."""
    region = _region(spec)
    if region is None:
        region = DRY_RUN_REGION
        notes.append(f"No AWS region configured: the dry run used {region}.")
    session = offline_session(region)
    # What validate() noted as missing stays in the request as a placeholder.
    present = replace(
        spec,
        source_dir=_local_or_placeholder(spec.source_dir),
        input_channels={k: _local_or_placeholder(v) for k, v in spec.input_channels.items()},
    )
    with _captured(session, "provide-client-params.s3.PutObject") as uploads:
        config = _dry_run_config(session)
        request = _create_job(present, role or ROLE_PLACEHOLDER, session, config)
        scripts = [u["Body"].read().decode() for u in uploads if u["Key"].endswith(DRIVER_SCRIPT)]
    command = _driver_command(scripts[0]) if scripts else None
    request = with_placeholders(request)
    notes.append(
        "Nothing was sent: AWS calls were answered on this machine (the account shows as "
        f"<account>; {AUTH_PARAMETER_ENV}'s version 0 stands for the version a submission "
        "writes)."
    )
    resolved = _resolved(spec, role, request, notes)
    print(json.dumps({"request": request, "command": command, "resolved_spec": resolved}, indent=2))
    for note in notes:
        print(f"codefu-launcher submit (dry run) note: {note}", file=sys.stderr)
    return SubmitResult(None, True, request, command, resolved)


def _resolved(
    spec: JobSpec, role: str | None, request: dict[str, Any], notes: list[str]
) -> dict[str, Any]:
    return {
        **asdict(spec),
        "role_arn": role,
        "run_name": run_name(spec),
        "checkpoint_s3_uri": request["CheckpointConfig"]["S3Uri"],
        "notes": notes,
    }


def resolve_role(spec: JobSpec) -> str | None:
    return spec.role_arn or os.environ.get(ROLE_ENV) or None


def _region(spec: JobSpec) -> str | None:
    """The spec's region, else AWS_REGION, else boto's (AWS_DEFAULT_REGION, ~/.aws/config)."""
    import boto3

    return spec.region or os.environ.get("AWS_REGION") or boto3.Session().region_name


def _boto_session(spec: JobSpec) -> Any:
    import boto3

    session = boto3.Session(region_name=_region(spec))
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
    role = resolve_role(spec)
    if spec.dry_run:
        if role is None:
            notes.append(f"No role: set {ROLE_ENV} (or role_arn) before submitting for real.")
        return dry_run(spec, role, notes)
    if role is None:
        raise SubmitError(
            f"No SageMaker execution role: set {ROLE_ENV}=arn:aws:iam::<account>:role/<name> "
            "(a role SageMaker can assume, with access to the image, data and output buckets; "
            "see docs/sagemaker.md) or role_arn in the job spec."
        )
    session = boto_session or _boto_session(spec)
    request = _create_job(spec, role, session, wait=wait)
    job_name = str(request["TrainingJobName"])
    print(
        f"Submitted SageMaker training job {job_name} in {session.region_name}; checkpoints "
        f"sync with {request['CheckpointConfig']['S3Uri']}."
    )
    return SubmitResult(job_name, False, request, None, _resolved(spec, role, request, notes))


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
