"""The cluster kinds (`cluster.kind`) as the run layer and evaluation know them: their facts,
through their registry.

A cluster kind is one module, `codefu_trainer.training.clusters.<kind>`, whose `Cluster`
(a `ClusterKind`) states its facts beside its checks and how its run starts; it joins
`CLUSTER_KINDS` (`codefu_sandbox.registry.Registry`) by one entry point in the group
`codefu.cluster_kinds` (the built-ins' are in codefu-trainer's pyproject.toml), or in this
process by `CLUSTER_KINDS.register(...)`. A member is imported when it is first named, so
this layer reads a kind's facts without importing training: whether its run runs on this
machine (`runs_here`), whether it uses this machine's GPUs where it has some
(`uses_gpus_here`), and the settings only its clusters have (`settings`: their key under
`cluster`, their schema, which its conf/cluster/*.yaml name first in their defaults).
Nothing here or in `run/config.py` and `run/compose.py` names a kind.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from omegaconf import DictConfig

from codefu_sandbox.registry import Registry
from codefu_trainer.run.config import ClusterConfig
from codefu_trainer.run.overrides import ConfigError, Override

__all__ = [
    "CLUSTER_KINDS",
    "ClusterKind",
    "ClusterSettings",
    "check_kind_settings",
    "cluster_kind",
    "register_kind_schemas",
]


@dataclass(frozen=True)
class ClusterSettings:
    """Settings only one kind's clusters have: `cluster.<key>.*`, typed by `schema` (a
    `ClusterConfig` subclass with a field `key`), stored in Hydra's ConfigStore as
    `schema_name`, which its conf/cluster/*.yaml list first in their defaults."""

    key: str
    schema: type[ClusterConfig]
    schema_name: str


class ClusterKind:
    """A cluster kind's facts; `training.clusters.base.Cluster` adds what it does."""

    name: ClassVar[str]  # the value of `cluster.kind`
    # A run of this kind runs on this machine (not on a job's hosts).
    runs_here: ClassVar[bool] = True
    # A run of this kind uses this machine's GPUs where it has some.
    uses_gpus_here: ClassVar[bool] = True
    # The settings only this kind's clusters have, or None.
    settings: ClassVar[ClusterSettings | None] = None


def _kind(found: Any) -> ClusterKind:
    kind = found() if isinstance(found, type) and issubclass(found, ClusterKind) else found
    if not isinstance(kind, ClusterKind):
        raise ValueError(f"a cluster kind is a ClusterKind, got {found!r}")
    return kind


CLUSTER_KINDS: Registry[ClusterKind] = Registry(
    "cluster kind", "codefu.cluster_kinds", lambda kind: kind.name, accept=_kind
)


def cluster_kind(cluster: ClusterConfig | DictConfig) -> ClusterKind:
    """The kind of `cluster`; ConfigError naming the kinds for an unknown one."""
    try:
        return CLUSTER_KINDS.lookup(str(cluster.kind))
    except ValueError as exc:
        raise ConfigError(f"cluster={cluster.name}: cluster.kind: {exc}.") from None


def register_kind_schemas() -> None:
    """Store each kind's settings schema in Hydra's ConfigStore (idempotent)."""
    from hydra.core.config_store import ConfigStore

    store = ConfigStore.instance()
    for kind in CLUSTER_KINDS.values():
        if kind.settings is not None:
            store.store(group="cluster", name=kind.settings.schema_name, node=kind.settings.schema)


def check_kind_settings(base: DictConfig, ours: Sequence[Override], conf_dir: Path) -> None:
    """An override of a kind's own settings (`cluster.<key>.*`) on a cluster without them (of
    another kind) → an error naming the clusters that have them."""
    for ov in ours:
        parts = ov.key.split(".")
        if parts[0] != "cluster" or len(parts) < 2 or parts[1] in base.cluster:
            continue
        for kind in CLUSTER_KINDS.values():
            settings = kind.settings
            if settings is None or parts[1] != settings.key:
                continue
            having = sorted(
                p.stem
                for p in (conf_dir / "cluster").glob("*.yaml")
                if settings.schema_name in p.read_text()
            )
            raise ConfigError(
                f"{ov.text}: cluster.{settings.key}.* are the settings of cluster kind "
                f"{kind.name}, which only a cluster of that kind has; "
                f"cluster={base.cluster.name} is of kind {base.cluster.kind}. Choose one of: "
                + ", ".join(f"cluster={name}" for name in having)
                + "."
            )
