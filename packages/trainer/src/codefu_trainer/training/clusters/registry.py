"""The cluster kinds by `cluster.kind`, and composing a run through its kind.

A new kind is its module beside this one (a `base.Cluster` subclass) and one entry below.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from codefu_trainer.run.config import ClusterKind, TrainConfig
from codefu_trainer.run.overrides import ConfigError, Override, split_overrides
from codefu_trainer.training.clusters.base import Cluster
from codefu_trainer.training.clusters.cpu import CPU
from codefu_trainer.training.clusters.cpu_verl import CPU_VERL
from codefu_trainer.training.clusters.local import LOCAL
from codefu_trainer.training.clusters.sagemaker import SAGEMAKER
from codefu_trainer.training.compose import compose_stage1, to_train_config
from codefu_trainer.training.composed_run import ComposedRun

CLUSTERS: Mapping[ClusterKind, Cluster] = {c.kind: c for c in (LOCAL, CPU, CPU_VERL, SAGEMAKER)}


def cluster_of(cfg: TrainConfig) -> Cluster:
    """The kind of the configured cluster."""
    found = CLUSTERS.get(cfg.cluster.kind)
    if found is None:
        raise ConfigError(
            f"cluster={cfg.cluster.name}: no module handles cluster kind "
            f"{cfg.cluster.kind.value} (codefu_trainer.training.clusters.registry.CLUSTERS)."
        )
    return found


def train_config(conf_dir: Path, ours: Sequence[Override]) -> TrainConfig:
    """Stage 1 (conf/train.yaml with our overrides), typed and checked by its cluster kind:
    what the configuration alone can tell, before anything heavy is imported."""
    cfg = to_train_config(compose_stage1(conf_dir, ours))
    cluster_of(cfg).check(cfg)
    return cfg


def compose_run(
    conf_dir: Path,
    overrides: Sequence[str],
    gpus_detected: int | None = None,
    with_verl: bool = True,
) -> ComposedRun:
    """Both stages with the settings of the configured cluster's kind; `gpus_detected` stands
    for this machine's GPUs where the cluster says 0."""
    ours, _ = split_overrides(overrides)
    cfg = train_config(conf_dir, ours)
    return cluster_of(cfg).compose(cfg, conf_dir, overrides, gpus_detected, with_verl)
