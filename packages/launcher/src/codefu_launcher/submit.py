"""Submit a SageMaker training job whose hosts form one Ray cluster.

`submit(spec)` checks the `JobSpec` (`codefu_launcher.spec`), stages local input
directories in S3 once per content (`codefu_launcher.staging`), stores the Ray auth secret
(`codefu_launcher.auth`) and has sagemaker-train's `ModelTrainer` build and send the
CreateTrainingJob request (`codefu_launcher.request`), with every host's environment and
the launcher's command (`codefu_launcher.job_env`). A dry run executes the same code
against `codefu_launcher.offline_aws`, so the request it prints is the one the SDK builds,
and nothing reaches AWS.

The public names of those modules are re-exported here: this is the submission API.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from codefu_launcher.auth import AUTH_PARAMETER_ENV
from codefu_launcher.job_env import job_environment, launcher_command, nccl_environment
from codefu_launcher.offline_aws import STAND_IN_ACCOUNT, offline_session, with_placeholders
from codefu_launcher.request import (
    CHECKPOINT_LOCAL_PATH,
    COMMAND_HEREDOC,
    CREATE_JOB_EVENT,
    DRIVER_SCRIPT,
    captured,
    checkpoint_s3_uri,
    create_job,
)
from codefu_launcher.spec import (
    BASE_JOB_NAME_PATTERN,
    JOB_SUFFIX_HEX,
    MAX_BASE_JOB_NAME,
    PARAMETER_NAME,
    RUN_NAME_PATTERN,
    SECRET_NAME,
    SET_BY_SUBMISSION,
    SPEC_OWNED_OPTIONS,
    InstanceGroupSpec,
    JobSettings,
    JobSpec,
    SubmitError,
    check_environment,
    check_launcher_args,
    check_secret_parameters,
    run_name,
    spec_from_dict,
    validate,
)
from codefu_launcher.staging import (
    STAGED_PREFIX,
    StagedChannel,
    content_digest,
    directory_files,
    report_staged,
    stage_directory,
)

__all__ = [
    "BASE_JOB_NAME_PATTERN",
    "CHECKPOINT_LOCAL_PATH",
    "COMMAND_HEREDOC",
    "CREATE_JOB_EVENT",
    "DRIVER_SCRIPT",
    "DRY_RUN_REGION",
    "JOB_SUFFIX_HEX",
    "MAX_BASE_JOB_NAME",
    "PARAMETER_NAME",
    "ROLE_ENV",
    "ROLE_PLACEHOLDER",
    "RUN_NAME_PATTERN",
    "SECRET_NAME",
    "SET_BY_SUBMISSION",
    "SPEC_OWNED_OPTIONS",
    "STAGED_PREFIX",
    "InstanceGroupSpec",
    "JobSettings",
    "JobSpec",
    "StagedChannel",
    "SubmitError",
    "SubmitResult",
    "check_environment",
    "check_launcher_args",
    "check_secret_parameters",
    "checkpoint_s3_uri",
    "content_digest",
    "directory_files",
    "dry_run",
    "job_environment",
    "launcher_command",
    "nccl_environment",
    "resolve_role",
    "run_name",
    "spec_from_dict",
    "stage_directory",
    "submit",
    "validate",
]

ROLE_ENV = "SAGEMAKER_ROLE_ARN"
ROLE_PLACEHOLDER = f"arn:aws:iam::{STAND_IN_ACCOUNT}:role/<unset: set {ROLE_ENV}>"
DRY_RUN_REGION = "us-east-1"  # a dry run's region when none is configured


@dataclass
class SubmitResult:
    job_name: str | None
    dry_run: bool
    request: dict[str, Any]  # the CreateTrainingJob request as the SDK built it
    command: str | None  # dry run: the command in the SDK's driver script
    resolved: dict[str, Any]  # the spec after defaults
    staged: dict[str, StagedChannel] = field(default_factory=dict)  # local channels


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
    with captured(session, "provide-client-params.s3.PutObject") as uploads:
        config = _dry_run_config(session)
        request, staged = create_job(
            present, role or ROLE_PLACEHOLDER, session, config, upload=False
        )
        scripts = [u["Body"].read().decode() for u in uploads if u["Key"].endswith(DRIVER_SCRIPT)]
    command = _driver_command(scripts[0]) if scripts else None
    request = with_placeholders(request)
    staged = {k: replace(v, s3_uri=with_placeholders(v.s3_uri)) for k, v in staged.items()}
    report_staged(staged, uploaded=False)
    notes.append(
        "Nothing was sent: AWS calls were answered on this machine (the account shows as "
        f"<account>; {AUTH_PARAMETER_ENV}'s version 0 stands for the version a submission "
        "writes)."
    )
    if staged:
        notes.append(
            "Local channels show the S3 prefix their content is staged under; a real "
            "submission uploads only the files not already there."
        )
    resolved = _resolved(spec, role, request, notes, staged)
    print(json.dumps({"request": request, "command": command, "resolved_spec": resolved}, indent=2))
    for note in notes:
        print(f"codefu-launcher submit (dry run) note: {note}", file=sys.stderr)
    return SubmitResult(None, True, request, command, resolved, staged)


def _resolved(
    spec: JobSpec,
    role: str | None,
    request: dict[str, Any],
    notes: list[str],
    staged: dict[str, StagedChannel],
) -> dict[str, Any]:
    return {
        **asdict(spec),
        "role_arn": role,
        "run_name": run_name(spec),
        "checkpoint_s3_uri": request["CheckpointConfig"]["S3Uri"],
        "staged_channels": {name: asdict(ch) for name, ch in staged.items()},
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
    request, staged = create_job(spec, role, session, wait=wait)
    report_staged(staged, uploaded=True)
    job_name = str(request["TrainingJobName"])
    print(
        f"Submitted SageMaker training job {job_name} in {session.region_name}; checkpoints "
        f"sync with {request['CheckpointConfig']['S3Uri']}."
    )
    resolved = _resolved(spec, role, request, notes, staged)
    return SubmitResult(job_name, False, request, None, resolved, staged)
