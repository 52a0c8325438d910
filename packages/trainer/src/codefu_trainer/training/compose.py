"""Composing a training run: both configuration stages, checks across keys, where it writes.

1. Stage 1: conf/train.yaml (our groups cluster/data/reward/model + run/rehearsal), composed
   by `codefu_trainer.run.compose` (evaluation composes conf/eval.yaml the same way).
2. Stage 2: conf/verl/grpo.yaml (veRL's ppo_trainer + CodeFu GRPO defaults) with overrides
   derived from stage 1 and the user's overrides addressed to veRL, with what the cluster's
   kind adds and checks (`KindSettings`; `clusters.registry.compose_run` does both stages).
3. The resolved configs are written to <run dir>/config/.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Protocol

from omegaconf import DictConfig, OmegaConf

from codefu_trainer.run.compose import PrerequisiteError, compose_train, typed_config
from codefu_trainer.run.config import TrainConfig, data_files, judge_on_judge_hosts
from codefu_trainer.run.overrides import (
    ConfigError,
    Override,
    as_typed,
    dotted_keys,
    split_overrides,
)
from codefu_trainer.training.composed_run import ComposedRun

if TYPE_CHECKING:
    from codefu_trainer.training.verl.config import ClusterExtension


class KindSettings(Protocol):
    """What composing a run takes from its cluster kind (training/clusters/)."""

    name: ClassVar[str]  # the value of `cluster.kind` it composes
    # The veRL settings only this kind adds (cpu_verl's), or None.
    extension: ClusterExtension | None

    def check_verl(self, verl: DictConfig) -> None: ...


def compose_stage1(conf_dir: Path, ours: Sequence[Override]) -> DictConfig:
    """Stage 1 of a training run (conf/train.yaml); a misspelled key's suggestions come from
    both stages' keys (ours and veRL's)."""
    return compose_train(conf_dir, ours, other_keys=lambda: verl_keys(conf_dir))


def verl_keys(conf_dir: Path) -> list[str]:
    """veRL's config keys as full dotted names, as a user types them (for suggestions; none
    where veRL is not installed)."""
    from codefu_trainer.training.verl.config import compose_verl

    try:
        return [as_typed(key) for key in dotted_keys(compose_verl(conf_dir, []))]
    except PrerequisiteError:
        return []


def to_train_config(node: DictConfig) -> TrainConfig:
    """Stage 1 typed and checked, except for what its cluster kind checks (`clusters.registry.
    train_config` adds that)."""
    cfg = typed_config(node, TrainConfig, "conf/train.yaml", "codefu_train_schema")
    c = cfg.cluster
    if c.nnodes < 1 or c.gpus_per_node < 0:
        raise ConfigError("cluster.nnodes must be >= 1 and cluster.gpus_per_node >= 0.")
    return cfg


def resolve_run_dir(cfg: TrainConfig) -> Path:
    if cfg.run.dir:
        return Path(cfg.run.dir).expanduser().resolve()
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return (Path(cfg.run.root_dir).expanduser() / f"{cfg.run.name}-{stamp}").resolve()


def compose_stages(
    cfg: TrainConfig,
    kind: KindSettings,
    conf_dir: Path,
    overrides: Sequence[str],
    *,
    gpus_detected: int | None = None,
    with_verl: bool = True,
) -> ComposedRun:
    """Stage 2 on a checked stage 1 (`cfg`), with the settings of the cluster's `kind`:
    `gpus_detected` stands for this machine's GPUs where the cluster says 0."""
    from codefu_trainer.training.verl.config import build_verl_config

    if cfg.cluster.kind != kind.name:
        raise ConfigError(
            f"the {kind.name} settings cannot compose cluster={cfg.cluster.name} "
            f"(kind {cfg.cluster.kind})."
        )
    _, theirs = split_overrides(overrides)
    judge_on_judge_hosts(cfg.cluster, cfg.reward)
    run_dir = resolve_run_dir(cfg)
    verl: DictConfig | None = None
    if with_verl:
        gpus = cfg.cluster.gpus_per_node or gpus_detected or 1
        verl = build_verl_config(
            cfg, conf_dir, run_dir, theirs, gpus_per_node=gpus, extension=kind.extension
        )
        kind.check_verl(verl)
    return ComposedRun(cfg, verl, run_dir, conf_dir, list(overrides))


def write_resolved(run: ComposedRun) -> Path:
    """<run dir>/config/{train.yaml, verl.yaml, overrides.txt}: enough to reproduce the run."""
    out = run.run_dir / "config"
    out.mkdir(parents=True, exist_ok=True)
    train = OmegaConf.structured(run.cfg)
    (out / "train.yaml").write_text(OmegaConf.to_yaml(train, resolve=True))
    if run.verl is not None:
        (out / "verl.yaml").write_text(OmegaConf.to_yaml(run.verl, resolve=False))
    (out / "overrides.txt").write_text("".join(f"{o}\n" for o in run.overrides))
    return out


def require_data(cfg: TrainConfig) -> None:
    train, test = data_files(cfg)
    if str(train).startswith("s3:"):
        return
    missing = [p for p in (train, test) if not p.is_file()]
    if missing:
        raise PrerequisiteError(
            f"No prepared data for tier {cfg.data.tier!r}: {', '.join(map(str, missing))} missing. "
            f"Run `nox -s prepare` first (it writes {cfg.data.out_dir}/<tier>/"
            "{train,test}.parquet), or point data.out_dir at a prepared dataset."
        )
