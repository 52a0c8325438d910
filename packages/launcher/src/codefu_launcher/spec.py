"""The description of a SageMaker job and its checks, before anything touches AWS.

`JobSettings` holds what a user chooses (image, role, instances, retries, runtime, volume,
environment, secrets, launcher options, URIs, dry run); it is the one set of these fields
and their defaults: the trainer's `cluster.sagemaker` config is a `JobSettings`. `JobSpec`
adds what the caller derives (run name, instance groups, entrypoint, source directory,
input channels). `validate` refuses a spec that cannot make a job, naming the field.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from codefu_launcher.auth import (
    AUTH_PARAMETER_ENV,
    AUTH_REGION_ENV,
    AUTH_SECRET_ENV,
    SECRET_PARAMETERS_ENV,
)
from codefu_launcher.pass_env import NEVER_PASS, PASS_ENV_ENV
from codefu_launcher.plan import HOMOGENEOUS_GROUP

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


class SubmitError(ValueError):
    """The job spec or the local AWS setup cannot produce a job; the message says what to fix."""


@dataclass
class InstanceGroupSpec:
    name: str
    instance_type: str
    instance_count: int = 1


@dataclass
class JobSettings:
    """What a user chooses for a job; `JobSpec` adds what the caller derives.

    The trainer's `cluster.sagemaker` config subclasses it, so these defaults are its
    defaults too (it overrides only `base_job_name` and `dry_run`, saying why).
    """

    base_job_name: str
    image_uri: str | None = None  # the training image's ECR URI (`nox -s image -- push`)
    role_arn: str | None = None  # None -> $SAGEMAKER_ROLE_ARN
    region: str | None = None  # None -> AWS_REGION / boto default
    instance_type: str | None = None  # homogeneous cluster: instance_type x instance_count
    instance_count: int = 1
    head_instance_group: str | None = None  # heterogeneous: whose first host runs the entrypoint
    # None -> <output_s3_uri, or the SDK session's default bucket[/prefix]>/<run name>/checkpoints
    checkpoint_s3_uri: str | None = None
    output_s3_uri: str | None = None  # the job's output (the final model, SM_MODEL_DIR)
    # SageMaker's RetryStrategy: restarts after an InternalServerError (0: none, at most 30).
    max_retry_attempts: int = 3
    max_runtime_seconds: int = 5 * 24 * 3600
    keep_alive_seconds: int = 0  # warm pool, for fast re-submission while iterating
    volume_size_gb: int = 200
    # Every host's environment. Each name reaches Ray and the entrypoint on every host
    # (submission lists them in CODEFU_PASS_ENV); credential-like names are refused.
    environment: dict[str, str] = field(default_factory=dict)
    # Secrets for every host's processes: variable name -> Parameter Store SecureString
    # name. Only the names go into the job; each host reads the values with the job's role.
    secret_parameters: dict[str, str] = field(default_factory=dict)
    # `codefu-launcher run` options, e.g. ["--metrics-export-port=8080"] (checked here).
    launcher_args: list[str] = field(default_factory=list)
    # Where local input directories are staged; None: <output_s3_uri or the SDK's default
    # bucket[/prefix]>. Objects go under <root>/codefu-staged/<channel>/<digest>/.
    staging_s3_uri: str | None = None
    # SageMaker remote debugging (SSM sessions into the hosts, e.g. the Ray dashboard).
    remote_debug: bool = False
    # True: print the CreateTrainingJob request, built against a stand-in; nothing is sent.
    dry_run: bool = False


@dataclass
class JobSpec(JobSettings):
    """A whole job: the settings and what the caller derives from its own configuration."""

    # Jobs of one run name share checkpoints (a resubmission resumes) and the Ray auth
    # parameter. None -> base_job_name.
    run_name: str | None = None
    instance_groups: list[InstanceGroupSpec] = field(default_factory=list)  # heterogeneous
    entrypoint: list[str] = field(default_factory=list)
    source_dir: str = "."
    input_channels: dict[str, str] = field(default_factory=dict)  # name -> local dir or s3://
    # Heterogeneous jobs: channel name -> the instance groups that get it (others: all).
    channel_instance_groups: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def from_settings(cls, settings: JobSettings, **derived: Any) -> JobSpec:
        """The spec of `settings` (a JobSettings or a subclass, e.g. a structured config)
        with the `derived` JobSpec fields; a derived field may not repeat a setting."""
        return cls(**fields_of(settings, JobSettings), **derived)


def fields_of(value: Any, cls: type) -> dict[str, Any]:
    """`value`'s values of the dataclass `cls`'s fields (`value` is a `cls` or a subclass
    instance), copied: the keyword arguments that make a `cls` from it."""
    return {f.name: copy.deepcopy(getattr(value, f.name)) for f in fields(cls)}


def groups_of(spec: JobSpec) -> list[InstanceGroupSpec]:
    """The job's instance groups; a homogeneous job's one group is HOMOGENEOUS_GROUP."""
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
