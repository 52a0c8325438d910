"""Composing a run through the kind of its cluster (`cluster.kind`).

A kind is its module beside this one (a `base.Cluster` subclass) and one entry point in the
group `codefu.cluster_kinds` (`run.cluster_kinds.CLUSTER_KINDS`); nothing here names one.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from codefu_trainer.run.cluster_kinds import cluster_kind
from codefu_trainer.run.config import TrainConfig
from codefu_trainer.run.overrides import ConfigError, Override, split_overrides
from codefu_trainer.training.clusters.base import Cluster
from codefu_trainer.training.compose import compose_stage1, to_train_config
from codefu_trainer.training.composed_run import ComposedRun


def cluster_of(cfg: TrainConfig) -> Cluster:
    """The kind of the configured cluster; ConfigError for an unknown kind, or one that
    cannot train (a kind registered with its facts alone)."""
    found = cluster_kind(cfg.cluster)
    if not isinstance(found, Cluster):
        raise ConfigError(
            f"cluster={cfg.cluster.name}: cluster kind {found.name} is no training cluster "
            "(a codefu_trainer.training.clusters.base.Cluster): codefu-train cannot run it."
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
