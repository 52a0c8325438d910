"""The SageMaker cluster kind's own settings (`cluster.sagemaker.*`): the schema its clusters
start from (conf/cluster/sagemaker_*.yaml list `SCHEMA_NAME` first in their defaults), which
the kind declares (`training/clusters/sagemaker.py`, its `settings`) and the job reads."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from codefu_launcher.spec import InstanceGroupSpec, JobSettings
from codefu_trainer.run.config import ClusterConfig

# The schema conf/cluster/sagemaker_*.yaml name first in their defaults.
SCHEMA_NAME = "codefu_sagemaker_cluster_schema"


class GroupRole(enum.Enum):
    """What the hosts of an instance group do in a heterogeneous SageMaker cluster."""

    train = "train"  # GPU hosts: veRL actor/rollout/ref workers
    judge = "judge"  # CPU hosts: compile and run submissions for the reward


@dataclass
class InstanceGroupConfig(InstanceGroupSpec):
    """An instance group of the launcher's spec, and what its hosts do."""

    role: GroupRole = GroupRole.train


@dataclass
class SageMakerConfig(JobSettings):
    """A SageMaker training job: the launcher's JobSettings (codefu_launcher.spec: its
    fields, defaults and comments) with the groups' roles. `sagemaker_job.build_job_spec`
    adds the run name, entrypoint, source code and input channels."""

    base_job_name: str = "codefu-grpo"  # the launcher's JobSettings has no default
    instance_groups: list[InstanceGroupConfig] = field(default_factory=list)
    # True, unlike the launcher's False on purpose: print the CreateTrainingJob request and
    # touch no AWS. Submitting costs money, so it is an explicit
    # `cluster.sagemaker.dry_run=false`.
    dry_run: bool = True


@dataclass
class SageMakerClusterConfig(ClusterConfig):
    """A cluster of kind sagemaker: a cluster with the SageMaker job's settings, which only
    this kind has (conf/cluster/sagemaker_*.yaml start from `SCHEMA_NAME`)."""

    sagemaker: SageMakerConfig = field(default_factory=SageMakerConfig)
