"""Submit a SageMaker training job whose hosts form one Ray cluster.

`submit(spec)` builds a sagemaker-train `ModelTrainer`: the training image, source code
whose command is `codefu-launcher run [LAUNCHER OPTIONS] -- <entrypoint>`, compute (one
instance type or instance groups), input channels (a local directory is staged once in S3
under a prefix named by its content, so resubmitting the same files uploads nothing),
checkpoints (/opt/ml/checkpoints synced with an S3 prefix named after the run, so a
resubmitted run resumes), a retry strategy, stopping condition, keep-alive and environment
(NCCL/EFA settings by instance type, the names of the user's entries for the launcher to
pass on, and where the hosts read the Ray auth secret: `codefu_launcher.auth`). A dry run
executes the same code against `codefu_launcher.offline_aws`, so the request it prints is
the one the SDK builds, and nothing reaches AWS.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shlex
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from codefu_launcher.auth import (
    AUTH_PARAMETER_ENV,
    AUTH_REGION_ENV,
    AUTH_SECRET_ENV,
    SECRET_PARAMETERS_ENV,
    AuthError,
    encode_secret_parameters,
    store_job_secret,
)
from codefu_launcher.offline_aws import (
    STAND_IN_ACCOUNT,
    NotSent,
    offline_session,
    with_placeholders,
)
from codefu_launcher.plan import HOMOGENEOUS_GROUP, gpus_for_instance_type
from codefu_launcher.run import NEVER_PASS, PASS_ENV_ENV

CHECKPOINT_LOCAL_PATH = "/opt/ml/checkpoints"
ROLE_ENV = "SAGEMAKER_ROLE_ARN"
ROLE_PLACEHOLDER = f"arn:aws:iam::{STAND_IN_ACCOUNT}:role/<unset: set {ROLE_ENV}>"
DRY_RUN_REGION = "us-east-1"  # a dry run's region when none is configured
RUN_NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
# A job is named <base>-<random suffix>-<the SDK's timestamp, to the second>: the suffix
# keeps two submissions of one second apart, and SageMaker allows 63 characters.
JOB_SUFFIX_HEX = 6
MAX_BASE_JOB_NAME = 63 - len("-yyyymmddHHMMSS") - 1 - JOB_SUFFIX_HEX
BASE_JOB_NAME_PATTERN = re.compile(r"[A-Za-z0-9]([A-Za-z0-9_-]*[A-Za-z0-9])?")
# The environment entries that only submission sets (the Ray auth secret's whereabouts).
SET_BY_SUBMISSION = (
    AUTH_SECRET_ENV,
    AUTH_PARAMETER_ENV,
    AUTH_REGION_ENV,
    PASS_ENV_ENV,
    SECRET_PARAMETERS_ENV,
)
# A Parameter Store name (hierarchical, as the launcher reads it).
PARAMETER_NAME = re.compile(r"/[A-Za-z0-9_.\-/]{1,1010}")
# Names that look like credentials: a job's Environment is shown by DescribeTrainingJob
# and the console to anyone allowed to read the job, so submission refuses them.
SECRET_NAME = re.compile(
    r"(^|_)(SECRET|SECRETS|PASSWORD|PASSWD|TOKEN|API_?KEY|PRIVATE_KEY|CREDENTIALS?|"
    r"ACCESS_KEY(_ID)?|SESSION_TOKEN)(_|$)",
    re.IGNORECASE,
)
# Launcher options the spec sets itself (not through launcher_args).
SPEC_OWNED_OPTIONS = ("--head-instance-group",)
STAGED_PREFIX = "codefu-staged"  # <root>/codefu-staged/<channel>/<content digest>/
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
    # Every host's environment. Each name reaches Ray and the entrypoint on every host
    # (submission lists them in CODEFU_PASS_ENV); credential-like names are refused.
    environment: dict[str, str] = field(default_factory=dict)
    # Secrets for every host's processes: variable name -> Parameter Store SecureString
    # name. Only the names go into the job; each host reads the values with the job's role.
    secret_parameters: dict[str, str] = field(default_factory=dict)
    # `codefu-launcher run` options, e.g. ["--metrics-export-port=8080"] (checked here).
    launcher_args: list[str] = field(default_factory=list)
    # Heterogeneous jobs: channel name -> the instance groups that get it (others: all).
    channel_instance_groups: dict[str, list[str]] = field(default_factory=dict)
    # Where local input directories are staged; None: <output_s3_uri or the SDK's default
    # bucket[/prefix]>. Objects go under <root>/codefu-staged/<channel>/<digest>/.
    staging_s3_uri: str | None = None
    # SageMaker remote debugging (SSM sessions into the hosts, e.g. the Ray dashboard).
    remote_debug: bool = False
    dry_run: bool = False


@dataclass
class StagedChannel:
    """A local directory as an S3 prefix named by its content."""

    source: str
    s3_uri: str
    files: int
    size_bytes: int
    uploaded: int  # files this submission uploaded (0: every file was already there)


@dataclass
class SubmitResult:
    job_name: str | None
    dry_run: bool
    request: dict[str, Any]  # the CreateTrainingJob request as the SDK built it
    command: str | None  # dry run: the command in the SDK's driver script
    resolved: dict[str, Any]  # the spec after defaults
    staged: dict[str, StagedChannel] = field(default_factory=dict)  # local channels


def nccl_environment(instance_types: list[str]) -> dict[str, str]:
    """NCCL/EFA variables for the job's GPU instance types (empty for other types)."""
    env: dict[str, str] = {}
    for itype in instance_types:
        for prefix, values in _EFA_BY_FAMILY.items():
            if itype.startswith(prefix):
                env.update(values)
    return env


def launcher_command(head_instance_group: str | None, launcher_args: Sequence[str] = ()) -> str:
    """The job's command: the launcher, whose arguments after `--` are the entrypoint.

    The SDK's driver script runs the command with `eval` in a bash that does not forward
    SIGTERM; `exec` replaces that bash with the launcher, so stopping the job reaches it
    and its exit code is the container's.
    """
    parts = ["exec", "codefu-launcher", "run"]
    if head_instance_group:
        parts += ["--head-instance-group", shlex.quote(head_instance_group)]
    parts += [shlex.quote(a) for a in launcher_args]
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
    if len(spec.base_job_name) > MAX_BASE_JOB_NAME or not BASE_JOB_NAME_PATTERN.fullmatch(
        spec.base_job_name
    ):
        raise SubmitError(
            f"base_job_name {spec.base_job_name!r} must be 1-{MAX_BASE_JOB_NAME} letters, digits, "
            "'-' or '_', starting and ending with a letter or digit: the job is named "
            "<base_job_name>-<random>-<timestamp>, at most 63 characters."
        )
    if not RUN_NAME_PATTERN.fullmatch(run_name(spec)):
        raise SubmitError(
            f"run name {run_name(spec)!r} must be 1-128 letters, digits, '.', '_' or '-' and "
            "start with a letter or digit (it names the run's S3 checkpoint prefix)."
        )
    check_environment(spec.environment)
    check_secret_parameters(spec.secret_parameters, spec.environment)
    check_launcher_args(spec.launcher_args)
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
    for channel, groups in spec.channel_instance_groups.items():
        if channel not in spec.input_channels:
            raise SubmitError(
                f"channel_instance_groups names {channel!r}, which is not an input channel "
                f"({sorted(spec.input_channels)})."
            )
        if not spec.instance_groups or not groups or not set(groups) <= set(names):
            raise SubmitError(
                f"channel_instance_groups[{channel!r}]={groups}: give a non-empty subset of the "
                f"job's instance groups {names or '(none: a homogeneous job has no groups)'}."
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


def check_environment(environment: dict[str, str]) -> None:
    """Refuse entries the job must not carry: the launcher's own, and credentials."""
    reserved = sorted(set(environment) & (set(SET_BY_SUBMISSION) | NEVER_PASS))
    if reserved:
        raise SubmitError(
            f"environment sets {reserved}: submission and the launcher set these themselves "
            "(the Ray auth secret is stored in Parameter Store, never in the job; "
            f"{PASS_ENV_ENV} is the list of your entries). Remove them."
        )
    secret_like = sorted(name for name in environment if SECRET_NAME.search(name))
    if secret_like:
        raise SubmitError(
            f"environment sets {secret_like}, which look like credentials: a job's Environment "
            "is shown by DescribeTrainingJob and the SageMaker console to anyone allowed to "
            "read the job. Store each in Parameter Store as a SecureString and name it in "
            "secret_parameters (Hydra: +cluster.sagemaker.secret_parameters.NAME=/param/name): "
            "each host reads it with the job's role. Or give the role access directly (a model "
            "staged in S3 needs no HF_TOKEN)."
        )
    bad = sorted(n for n in environment if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", n))
    if bad:
        raise SubmitError(f"environment names {bad} are not valid variable names.")


def check_secret_parameters(parameters: dict[str, str], environment: dict[str, str]) -> None:
    """Refuse secret parameters that are not a variable name -> Parameter Store name."""
    for name, parameter in parameters.items():
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or name in NEVER_PASS:
            raise SubmitError(f"secret_parameters: {name!r} is not a variable name to set.")
        if not PARAMETER_NAME.fullmatch(parameter):
            raise SubmitError(
                f"secret_parameters[{name!r}]={parameter!r}: give a Parameter Store name "
                "starting with '/', e.g. /codefu/secrets/wandb-api-key."
            )
        if name in environment:
            raise SubmitError(f"{name} is set in both environment and secret_parameters.")


def check_launcher_args(args: Sequence[str]) -> None:
    """Refuse launcher options that `codefu-launcher run` would not accept."""
    from codefu_launcher.run_options import run_option_errors

    owned = [a for a in args if a.split("=", 1)[0] in SPEC_OWNED_OPTIONS]
    if owned:
        raise SubmitError(
            f"launcher_args {owned}: set head_instance_group in the job spec instead."
        )
    error = run_option_errors(list(args))
    if error:
        raise SubmitError(
            f"launcher_args {list(args)} are not valid `codefu-launcher run` options: {error}. "
            "Run `codefu-launcher run --help` for the list."
        )


def job_environment(spec: JobSpec) -> dict[str, str]:
    """Environment of every host: NCCL/EFA defaults, launcher settings, the user's entries.

    The names of the user's entries go into CODEFU_PASS_ENV, so the launcher hands every
    one of them to Ray and the entrypoint. Submission adds where the hosts read the Ray
    auth secret (`auth.store_job_secret`).
    """
    types = [g.instance_type for g in _groups(spec)]
    gpu_types = [t for t in types if (gpus_for_instance_type(t) or 0) > 0]
    env = nccl_environment(gpu_types)
    if spec.head_instance_group:
        env["CODEFU_HEAD_INSTANCE_GROUP"] = spec.head_instance_group
    env.update(spec.environment)
    if spec.environment:
        env[PASS_ENV_ENV] = ",".join(sorted(spec.environment))
    if spec.secret_parameters:
        env[SECRET_PARAMETERS_ENV] = encode_secret_parameters(spec.secret_parameters)
    return env


def checkpoint_s3_uri(spec: JobSpec, sagemaker_session: Any) -> str:
    """Where /opt/ml/checkpoints syncs: the same for every job of the run name.

    SageMaker copies this prefix into /opt/ml/checkpoints when a job starts, so veRL's
    `resume_mode=auto` continues from the newest checkpoint a previous job left there.
    """
    if spec.checkpoint_s3_uri:
        return spec.checkpoint_s3_uri
    return f"{_s3_root(spec.output_s3_uri, sagemaker_session)}/{run_name(spec)}/checkpoints"


def _s3_root(configured: str | None, sagemaker_session: Any) -> str:
    """`configured` without its trailing slash, else s3://<SDK default bucket>[/<prefix>]."""
    if configured:
        return configured.rstrip("/")
    root = f"s3://{sagemaker_session.default_bucket()}"
    prefix = (sagemaker_session.default_bucket_prefix or "").strip("/")
    return root + (f"/{prefix}" if prefix else "")


def _trainer(spec: JobSpec, env: dict[str, str], role: str, sagemaker_session: Any) -> Any:
    """The ModelTrainer of the job (resolving the checkpoint URI may ask S3 for the bucket)."""
    from sagemaker.core.training.configs import (
        CheckpointConfig,
        Compute,
        InstanceGroup,
        OutputDataConfig,
        RemoteDebugConfig,
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
    # The SDK names the job <its base name>-<timestamp to the second>; a random part in
    # that base name keeps two submissions of one second apart. Uploads and outputs stay
    # under the spec's own base name, as without it.
    unique_base = f"{spec.base_job_name}-{secrets.token_hex(JOB_SUFFIX_HEX // 2)}"
    output = spec.output_s3_uri or _s3_root(None, sagemaker_session) + f"/{spec.base_job_name}"
    trainer = ModelTrainer(
        sagemaker_session=sagemaker_session,
        role=role,
        training_image=spec.image_uri,
        base_job_name=unique_base,
        input_s3_key_prefix=spec.base_job_name,
        output_data_config=OutputDataConfig(s3_output_path=output),
        source_code=SourceCode(
            source_dir=spec.source_dir,
            command=launcher_command(spec.head_instance_group, spec.launcher_args),
            args=list(spec.entrypoint),
        ),
        compute=compute,
        stopping_condition=StoppingCondition(max_runtime_in_seconds=spec.max_runtime_seconds),
        checkpoint_config=CheckpointConfig(
            s3_uri=checkpoint_s3_uri(spec, sagemaker_session), local_path=CHECKPOINT_LOCAL_PATH
        ),
        environment=env,
    )
    if spec.max_retry_attempts:
        trainer.with_retry_strategy(RetryStrategy(maximum_retry_attempts=spec.max_retry_attempts))
    if spec.remote_debug:
        trainer.with_remote_debug_config(RemoteDebugConfig(enable_remote_debug=True))
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
    *,
    wait: bool = False,
    upload: bool = True,
) -> tuple[dict[str, Any], dict[str, StagedChannel]]:
    """Store the Ray secret, stage local channels, build the job with the SDK and send
    CreateTrainingJob.

    Returns the request as sent (JSON-like) and the staged channels. Against
    `offline_aws` (`upload=False`) nothing is uploaded, the SDK's call stops at
    CreateTrainingJob and the request is returned all the same.
    """
    from sagemaker.core.helper.session_helper import Session

    try:
        env = {**job_environment(spec), **store_job_secret(boto_session, run_name(spec))}
    except AuthError as exc:
        raise SubmitError(str(exc)) from exc
    with _captured(boto_session, CREATE_JOB_EVENT) as sent:
        session = Session(boto_session=boto_session, sagemaker_config=sagemaker_config)
        staged = _stage_channels(spec, session, boto_session, upload)
        trainer = _trainer(spec, env, role, session)
        input_data = [
            _input(
                name,
                staged[name].s3_uri if name in staged else source,
                spec.channel_instance_groups.get(name),
            )
            for name, source in spec.input_channels.items()
        ]
        with suppress(NotSent):  # only `offline_aws` raises it: the dry run ends there
            trainer.train(input_data_config=input_data or None, wait=wait, logs=wait)
    if len(sent) != 1:
        raise SubmitError(f"The SageMaker SDK sent {len(sent)} CreateTrainingJob requests, not 1.")
    request: dict[str, Any] = json.loads(json.dumps(sent[0], default=str))
    return request, staged


def _input(name: str, source: str, groups: list[str] | None) -> Any:
    from sagemaker.core.training.configs import InputData, S3DataSource

    if not groups:
        return InputData(channel_name=name, data_source=source)
    # Only these instance groups download the channel (the SDK then gives its own code
    # and driver channels to every group, as SageMaker requires).
    return InputData(
        channel_name=name,
        data_source=S3DataSource(
            s3_data_type="S3Prefix",
            s3_uri=source,
            s3_data_distribution_type="FullyReplicated",
            instance_group_names=list(groups),
        ),
    )


def directory_files(root: Path) -> list[tuple[str, Path]]:
    """(relative POSIX path, path) of every file under `root`, symlinks followed, sorted."""
    found: list[tuple[str, Path]] = []
    for dirpath, _, filenames in os.walk(root, followlinks=True):
        for name in filenames:
            path = Path(dirpath) / name
            if path.is_file():
                found.append((path.relative_to(root).as_posix(), path))
    return sorted(found)


def content_digest(files: list[tuple[str, Path]]) -> str:
    """A digest of the files' relative paths and bytes: equal for equal directories."""
    total = hashlib.sha256()
    for rel, path in files:
        one = hashlib.sha256()
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                one.update(block)
        total.update(f"{rel}\0{path.stat().st_size}\0{one.hexdigest()}\n".encode())
    return total.hexdigest()[:16]


def stage_directory(
    source: str, channel: str, root: str, boto_session: Any, upload: bool
) -> StagedChannel:
    """Put a local directory under <root>/codefu-staged/<channel>/<digest>/ once.

    The prefix is named by the directory's content, so a later submission of the same
    files finds them there and uploads nothing; changed files get a new prefix. With
    `upload=False` (dry run) only the prefix is computed.
    """
    files = directory_files(Path(source))
    if not files:
        raise SubmitError(f"Input channel {channel!r}: {source} has no files.")
    digest = content_digest(files)
    uri = f"{root}/{STAGED_PREFIX}/{channel}/{digest}/"
    size = sum(path.stat().st_size for _, path in files)
    uploaded = 0
    if upload:
        from botocore.exceptions import ClientError

        bucket, _, prefix = uri.removeprefix("s3://").partition("/")
        s3 = boto_session.client("s3")
        for rel, path in files:
            key = prefix + rel
            try:
                head = s3.head_object(Bucket=bucket, Key=key)
                if head.get("ContentLength") == path.stat().st_size:
                    continue
            except ClientError as exc:
                code = exc.response.get("Error", {}).get("Code")
                if code == "NoSuchBucket":
                    raise SubmitError(
                        f"Cannot stage {source} in {uri}: the bucket does not exist "
                        f"(NoSuchBucket). Create it, or set staging_s3_uri (Hydra: "
                        "cluster.sagemaker.output_s3_uri) to a bucket that exists."
                    ) from exc
                if code not in {"404", "NoSuchKey"}:
                    raise SubmitError(
                        f"Cannot stage {source} in {uri}: S3 answered {exc}. Your identity "
                        "needs s3:GetObject, s3:PutObject and s3:ListBucket there."
                    ) from exc
            s3.upload_file(str(path), bucket, key)
            uploaded += 1
    return StagedChannel(source, uri, len(files), size, uploaded)


def _stage_channels(
    spec: JobSpec, sagemaker_session: Any, boto_session: Any, upload: bool
) -> dict[str, StagedChannel]:
    local = {k: v for k, v in spec.input_channels.items() if not v.startswith("s3://")}
    if not local:
        return {}
    root = _s3_root(spec.staging_s3_uri or spec.output_s3_uri, sagemaker_session)
    return {
        name: stage_directory(source, name, root, boto_session, upload)
        for name, source in local.items()
    }


def _report_staged(staged: dict[str, StagedChannel], uploaded: bool) -> None:
    for name, done in staged.items():
        what = f"{done.uploaded} of {done.files} files uploaded" if uploaded else "dry run"
        print(
            f"codefu-launcher submit: channel {name!r}: {done.source} -> {done.s3_uri} "
            f"({done.files} files, {done.size_bytes / 1e6:.1f} MB; {what})",
            file=sys.stderr,
        )


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
        request, staged = _create_job(
            present, role or ROLE_PLACEHOLDER, session, config, upload=False
        )
        scripts = [u["Body"].read().decode() for u in uploads if u["Key"].endswith(DRIVER_SCRIPT)]
    command = _driver_command(scripts[0]) if scripts else None
    request = with_placeholders(request)
    staged = {k: replace(v, s3_uri=with_placeholders(v.s3_uri)) for k, v in staged.items()}
    _report_staged(staged, uploaded=False)
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
    request, staged = _create_job(spec, role, session, wait=wait)
    _report_staged(staged, uploaded=True)
    job_name = str(request["TrainingJobName"])
    print(
        f"Submitted SageMaker training job {job_name} in {session.region_name}; checkpoints "
        f"sync with {request['CheckpointConfig']['S3Uri']}."
    )
    resolved = _resolved(spec, role, request, notes, staged)
    return SubmitResult(job_name, False, request, None, resolved, staged)


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
