"""cluster kind `sagemaker`: submit a SageMaker training job (a dry run by default) whose head
runs `codefu-train … cluster.kind=local` on the job's Ray cluster (training/sagemaker/job.py).

Its run does not run here, nor on this machine's GPUs. The only kind with SageMaker
settings (`settings`): its clusters start from the schema `SageMakerClusterConfig`
(`cluster.sagemaker.*`, the launcher's JobSettings; `training/sagemaker/settings.py`), and
such a key on another kind's cluster is refused; the GPU of its plan comes from the instance
type (`codefu_launcher.instances.INSTANCE_TYPES`), its disk is the job's volume.
"""

from __future__ import annotations

from omegaconf import DictConfig

from codefu_launcher.instances import INSTANCE_TYPES
from codefu_trainer.run.cluster_kinds import ClusterSettings
from codefu_trainer.run.config import TrainConfig
from codefu_trainer.run.overrides import ConfigError
from codefu_trainer.training.clusters.base import Cluster, Launch
from codefu_trainer.training.compose import write_resolved
from codefu_trainer.training.planning.inputs import Gpu
from codefu_trainer.training.planning.preflight import DiskRoom, gate
from codefu_trainer.training.sagemaker.job import job_settings
from codefu_trainer.training.sagemaker.settings import (
    SCHEMA_NAME,
    GroupRole,
    SageMakerClusterConfig,
)


class SageMaker(Cluster):
    name = "sagemaker"
    runs_here = False
    uses_gpus_here = False
    settings = ClusterSettings("sagemaker", SageMakerClusterConfig, SCHEMA_NAME)
    plans_gpu_memory = True

    def check(self, cfg: TrainConfig) -> None:
        super().check(cfg)
        c = cfg.cluster
        if not isinstance(c, SageMakerClusterConfig):
            raise ConfigError(
                f"cluster={c.name} is of kind sagemaker but has no SageMaker settings: start "
                f"conf/cluster/{c.name}.yaml with `defaults: [{SCHEMA_NAME}, "
                "_self_]`, as conf/cluster/sagemaker_p4de.yaml does."
            )
        sm = c.sagemaker
        if bool(sm.instance_type) == bool(sm.instance_groups):
            raise ConfigError(
                f"cluster={c.name}: set either cluster.sagemaker.instance_type (one instance type) "
                "or cluster.sagemaker.instance_groups (heterogeneous), not both or neither."
            )
        if c.gpus_per_node < 1:
            raise ConfigError(f"cluster={c.name}: cluster.gpus_per_node must be >= 1 on SageMaker.")
        if sm.instance_groups:
            names = [g.name for g in sm.instance_groups]
            train_hosts = sum(
                g.instance_count for g in sm.instance_groups if g.role is GroupRole.train
            )
            if train_hosts != c.nnodes:
                raise ConfigError(
                    f"cluster={c.name}: cluster.nnodes={c.nnodes} but the instance groups with "
                    f"role train have {train_hosts} hosts; make them equal."
                )
            if sm.head_instance_group not in names:
                raise ConfigError(
                    f"cluster.sagemaker.head_instance_group={sm.head_instance_group!r} is not "
                    f"one of the instance groups {names}."
                )
        elif sm.instance_count != c.nnodes:
            raise ConfigError(
                f"cluster={c.name}: cluster.nnodes={c.nnodes} but sagemaker.instance_count="
                f"{sm.instance_count}; every instance trains in a homogeneous cluster."
            )

    def gpu(self, cfg: TrainConfig) -> Gpu | str:
        """The GPU of the training hosts' instance type (the smallest, where they differ)."""
        sm = job_settings(cfg)
        types = (
            [g.instance_type for g in sm.instance_groups if g.role is GroupRole.train]
            if sm.instance_groups
            else [sm.instance_type or ""]
        )
        found = [INSTANCE_TYPES.get(t) for t in types]
        configured = cfg.cluster.gpu_memory_gib
        first = next((f for f in found if f is not None), None)
        if configured:
            name = first.name if first is not None and first.name else "/".join(types)
            return name, float(configured), first.count if first is not None else None
        known = [(f.name, f.memory_gib, f.count) for f in found if f and f.name and f.memory_gib]
        if len(known) != len(types):
            unknown = [t for t, f in zip(types, found, strict=True) if not (f and f.memory_gib)]
            measured = [t for t, f in INSTANCE_TYPES.items() if f.memory_gib]
            return (
                f"the GPU memory of instance type {', '.join(unknown)} is not known here: set "
                f"cluster.gpu_memory_gib=<GiB per GPU> (known: {', '.join(measured)})"
            )
        name, memory, per_instance = min(known, key=lambda k: k[1])
        return name, memory, per_instance

    def disk(self, cfg: TrainConfig, verl: DictConfig) -> DiskRoom:
        """The job's volume: it holds the base model's channel and the exported model too."""
        volume = job_settings(cfg).volume_size_gb
        return DiskRoom(
            volume * 1e9,
            2,
            f"cluster.sagemaker.volume_size_gb={volume}",
            lambda need: f"cluster.sagemaker.volume_size_gb={int(need / 1e9 * 1.1) + 1}",
        )

    def start(self, cfg: TrainConfig, launch: Launch) -> int:
        from codefu_trainer.training.sagemaker import job

        run = self.compose(cfg, launch.conf_dir, launch.overrides)
        gate(run, self, launch.force, launch.plan_json)
        if not job_settings(cfg).dry_run:  # a dry run leaves nothing behind
            write_resolved(run)
        return job.submit_run(run, force=launch.force, verbose=launch.verbose)


SAGEMAKER = SageMaker()
