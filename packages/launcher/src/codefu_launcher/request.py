"""The CreateTrainingJob request, built by sagemaker-train's `ModelTrainer`.

`create_job` stores the Ray auth secret, stages local channels and has the SDK build and
send the request: the training image, source code whose command is `codefu-launcher run
[LAUNCHER OPTIONS] -- <entrypoint>`, compute (one instance type or instance groups), input
channels, checkpoints (/opt/ml/checkpoints synced with an S3 prefix named after the run,
so a resubmitted run resumes), a retry strategy, stopping condition, keep-alive and the
environment (`codefu_launcher.job_env`). Against `codefu_launcher.offline_aws` the same
code builds the request and nothing reaches AWS.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

from codefu_launcher.auth import AuthError, store_job_secret
from codefu_launcher.job_env import job_environment, launcher_command
from codefu_launcher.offline_aws import NotSent
from codefu_launcher.spec import JOB_SUFFIX_HEX, JobSpec, SubmitError, run_name
from codefu_launcher.staging import StagedChannel, s3_root, stage_channels

CHECKPOINT_LOCAL_PATH = "/opt/ml/checkpoints"
# The SDK's driver script runs the command from this quoted heredoc with `eval "$CMD"`.
DRIVER_SCRIPT = "sm_train.sh"
COMMAND_HEREDOC = ("<<'SAGEMAKER_BASE_COMMAND_EOF'\n", "\nSAGEMAKER_BASE_COMMAND_EOF\n")
CREATE_JOB_EVENT = "provide-client-params.sagemaker.CreateTrainingJob"


def checkpoint_s3_uri(spec: JobSpec, sagemaker_session: Any) -> str:
    """Where /opt/ml/checkpoints syncs: the same for every job of the run name.

    SageMaker copies this prefix into /opt/ml/checkpoints when a job starts, so veRL's
    `resume_mode=auto` continues from the newest checkpoint a previous job left there.
    """
    if spec.checkpoint_s3_uri:
        return spec.checkpoint_s3_uri
    return f"{s3_root(spec.output_s3_uri, sagemaker_session)}/{run_name(spec)}/checkpoints"


def model_trainer(spec: JobSpec, env: dict[str, str], role: str, sagemaker_session: Any) -> Any:
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
    output = spec.output_s3_uri or s3_root(None, sagemaker_session) + f"/{spec.base_job_name}"
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
def captured(boto_session: Any, event: str) -> Iterator[list[dict[str, Any]]]:
    """The API parameters of every `event` call made through `boto_session`'s clients."""
    calls: list[dict[str, Any]] = []

    def capture(params: dict[str, Any], **_: Any) -> None:
        calls.append(params)

    boto_session.events.register(event, capture)
    try:
        yield calls
    finally:
        boto_session.events.unregister(event, capture)


def create_job(
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
    with captured(boto_session, CREATE_JOB_EVENT) as sent:
        session = Session(boto_session=boto_session, sagemaker_config=sagemaker_config)
        staged = stage_channels(spec, session, boto_session, upload)
        trainer = model_trainer(spec, env, role, session)
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
