"""cluster=sagemaker_*: turn the composed run into a launcher JobSpec and submit it.

Inside the job, the launcher brings up one Ray cluster over the job's instances and runs,
on the head, the same `codefu-train` with the same overrides plus `cluster.kind=local`:
veRL then trains on the job's Ray cluster (RAY_ADDRESS, set by the launcher), with
`trainer.nnodes` from the cluster config, checkpoints in /opt/ml/checkpoints and the final
model in SM_MODEL_DIR. The job's run name is `run.name`: jobs of one run name share the
checkpoint S3 prefix that SageMaker restores into /opt/ml/checkpoints, so resubmitting a
run resumes it (veRL `resume_mode=auto`), and veRL's MLflow run is named after it.

Input channels: the prepared tier `<data.out_dir>/<data.tier>/` is the channel named after
the tier, so the head reads /opt/ml/input/data/<tier>/{train,test}.parquet; an s3://
`model.path` or a local model directory is the `model` channel. Local directories are
staged once in S3 (`codefu_launcher.submit.stage_directory`); in a heterogeneous job both
channels go only to the head's and the training groups' hosts.

`cluster.sagemaker.dry_run` is true by default: the CreateTrainingJob request is printed
and nothing touches AWS. `cluster.sagemaker.dry_run=false` submits (it costs money).
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from codefu_launcher.plan import JUDGE_RESOURCE
from codefu_trainer.run.compose import PrerequisiteError
from codefu_trainer.run.config import ModelKind, TrainConfig, names_a_folder
from codefu_trainer.training.composed_run import ComposedRun
from codefu_trainer.training.sagemaker.settings import (
    GroupRole,
    SageMakerClusterConfig,
    SageMakerConfig,
)

JOB_CONFIG_DIR = "."  # the job's source code is the conf/ directory; commands run inside it
JOB_INPUT_DIR = "/opt/ml/input/data"  # channel <name> is /opt/ml/input/data/<name>
MODEL_CHANNEL = "model"
JOB_MODEL_DIR = f"{JOB_INPUT_DIR}/{MODEL_CHANNEL}"
JOB_OUTPUT_DIR = "/opt/ml/output/data"  # uploaded with the job's output
# Channels the SageMaker SDK adds itself: a data tier may not take their names.
SDK_CHANNELS = ("code", "sm_drivers")
IMAGE_PLACEHOLDER = "<unset: cluster.sagemaker.image_uri or $CODEFU_IMAGE_URI>"


def job_settings(cfg: TrainConfig) -> SageMakerConfig:
    """`cluster.sagemaker`: the job settings, which only a cluster of kind sagemaker has (its
    kind's checks refuse one without them before anything here runs)."""
    assert isinstance(cfg.cluster, SageMakerClusterConfig), cfg.cluster.name
    return cfg.cluster.sagemaker


def model_source(cfg: TrainConfig) -> str | None:
    """The `model` channel's source (s3:// URI or local directory); None for a hub id.

    Raises PrerequisiteError for a path that looks local but is not a directory here.
    """
    path = cfg.model.path
    if cfg.model.kind is not ModelKind.hf:
        return None
    if path.startswith("s3://"):
        return path if path.endswith("/") else path + "/"
    local = Path(path).expanduser()
    if local.is_dir():
        return str(local.resolve())
    if names_a_folder(path):
        raise PrerequisiteError(
            f"model.path={path} is not a directory on this machine, so it cannot be staged "
            "for the job. Give a local directory with the model's files (staged in S3 once), "
            "an s3:// prefix, or a Hugging Face model id. Nothing was submitted."
        )
    return None  # a Hugging Face model id: downloaded in the job


def data_channel(cfg: TrainConfig) -> tuple[str, str]:
    """(channel name, source) of the prepared tier: the tier's directory or S3 prefix."""
    tier = cfg.data.tier
    if tier in (*SDK_CHANNELS, MODEL_CHANNEL):
        raise PrerequisiteError(
            f"data.tier={tier} names a SageMaker channel the job already has "
            f"({', '.join((*SDK_CHANNELS, MODEL_CHANNEL))}); rename the tier."
        )
    root = cfg.data.out_dir
    if root.startswith("s3://"):
        return tier, f"{root.rstrip('/')}/{tier}/"
    return tier, str(Path(root).expanduser().resolve() / tier)


def job_overrides(cfg: TrainConfig, user_overrides: Sequence[str]) -> list[str]:
    """The overrides the head runs with: the user's, then what the job changes."""
    out = [
        o for o in user_overrides if not o.lstrip("+~").startswith(("run.dir=", "data.out_dir="))
    ]
    out.append(f"data.out_dir={JOB_INPUT_DIR}")  # the tier's channel is <out_dir>/<tier>
    if model_source(cfg) is not None:
        out.append(f"model.path={JOB_MODEL_DIR}")
    # The run directory's name is veRL's trainer.experiment_name: the MLflow run name.
    out += [f"run.dir={JOB_OUTPUT_DIR}/{cfg.run.name}", "cluster.kind=local"]
    return out


def build_job_spec(
    cfg: TrainConfig, conf_dir: Path, user_overrides: Sequence[str], force: bool = False
) -> Any:
    """The codefu_launcher.submit.JobSpec for this run: `cluster.sagemaker` (the launcher's
    JobSettings) with the run name, entrypoint, source code and input channels (`force`: the
    head skips the refusal of its preflight, as the submission did)."""
    from codefu_launcher.spec import InstanceGroupSpec, JobSpec, fields_of

    sm = job_settings(cfg)
    tier, data_source = data_channel(cfg)
    channels = {tier: data_source}
    model = model_source(cfg)
    if model is not None:
        channels[MODEL_CHANNEL] = model
    groups = [InstanceGroupSpec(**fields_of(g, InstanceGroupSpec)) for g in sm.instance_groups]
    # Heterogeneous: the head (driver: dataset, tokenizer) and the training hosts (model
    # weights) need the channels; judge hosts do not download them.
    needing = [
        g.name
        for g in sm.instance_groups
        if g.role is GroupRole.train or g.name == sm.head_instance_group
    ]
    channel_groups = (
        dict.fromkeys(channels, needing) if groups and len(needing) < len(groups) else {}
    )
    spec = JobSpec.from_settings(
        sm,
        run_name=cfg.run.name,
        instance_groups=groups,
        entrypoint=[
            "codefu-train",
            "--config-dir",
            JOB_CONFIG_DIR,
            *(["--force"] if force else []),
            "--verbose",  # a job's log (CloudWatch) keeps everything, libraries' lines too
            *job_overrides(cfg, user_overrides),
        ],
        source_dir=str(conf_dir),
        input_channels=channels,
        channel_instance_groups=channel_groups,
    )
    if not spec.image_uri and spec.dry_run:
        spec.image_uri = IMAGE_PLACEHOLDER
    return spec


@contextlib.contextmanager
def sdk_logs(shown: bool) -> Iterator[None]:
    """The SageMaker SDK's and boto's log lines (INFO about config files, a WARNING that the
    role's permissions were not verified) shown, or held back (a dry run's default)."""
    if shown:
        yield
        return
    logging.disable(logging.WARNING)
    try:
        yield
    finally:
        logging.disable(logging.NOTSET)


def submit_run(run: ComposedRun, force: bool = False, verbose: bool = False) -> int:
    """Submit (or dry-run) the job; 0 when done. Raises PrerequisiteError (nothing was
    submitted) when the spec, the SDK or AWS access is missing. A dry run keeps the SDK's
    log lines back unless `verbose`."""
    from codefu_launcher.submit import SubmitError, submit

    cfg = run.cfg
    judge_groups = [g.name for g in job_settings(cfg).instance_groups if g.role is GroupRole.judge]
    spec = build_job_spec(cfg, run.conf_dir, run.overrides, force)
    try:
        with sdk_logs(shown=verbose or not spec.dry_run):
            result = submit(spec)
    except SubmitError as exc:
        raise PrerequisiteError(
            f"cannot submit the SageMaker job: {exc}\nNothing was submitted."
        ) from exc
    except ModuleNotFoundError as exc:
        raise PrerequisiteError(
            f"submitting needs the SageMaker SDK ({exc}); install codefu-launcher[submit] "
            "(`nox -s train` does). Nothing was submitted."
        ) from exc
    except Exception as exc:  # botocore credential/endpoint errors: say what to do
        name = type(exc).__name__
        if "Credential" in name or "Endpoint" in name or "ClientError" in name:
            raise PrerequisiteError(
                f"AWS refused or could not be reached ({name}: {exc}). Configure "
                "credentials (aws configure / AWS_PROFILE), AWS_REGION and SAGEMAKER_ROLE_ARN, or "
                "keep cluster.sagemaker.dry_run=true to only print the request."
            ) from exc
        raise
    if result.dry_run:
        notes = [
            f"every job of run.name={cfg.run.name} resumes from the newest checkpoint under "
            f"{result.resolved['checkpoint_s3_uri']}; pick another run.name for a fresh run",
            *model_notes(cfg, spec.input_channels.get(MODEL_CHANNEL)),
        ]
        if not job_settings(cfg).image_uri:
            notes.append(
                "set cluster.sagemaker.image_uri (or CODEFU_IMAGE_URI) to the training image"
            )
        if judge_groups:
            notes.append(
                f"judge groups {judge_groups} run the training image (a job has one image) "
                f"and get the Ray resource `{JUDGE_RESOURCE}` from the launcher"
            )
        print(
            "codefu-train: DRY RUN, nothing was submitted (the request is printed above). "
            "Submit with cluster.sagemaker.dry_run=false."
            + ("".join(f"\n  note: {n}" for n in notes)),
            file=sys.stderr,
        )
    else:
        print(f"codefu-train: submitted SageMaker training job {result.job_name}", file=sys.stderr)
    return 0


def model_notes(cfg: TrainConfig, channel: str | None) -> list[str]:
    """What the job does for the base model, for the dry run's notes."""
    if cfg.model.kind is not ModelKind.hf:
        return []
    if channel is None:
        return [
            f"model.path={cfg.model.path} is a Hugging Face id: every GPU host downloads it "
            "from the Hub when training starts, which needs outbound internet (a VPC with a "
            "NAT gateway; never with network isolation). Stage it once instead: download it "
            "to a directory and pass model.path=DIR (uploaded to S3 once), or an s3:// prefix"
        ]
    where = "staged in S3 once" if not channel.startswith("s3://") else "read from S3"
    return [
        f"the base model comes from the `model` channel ({where}) at {JOB_MODEL_DIR}; "
        "no host downloads it from the Hugging Face Hub"
    ]
