"""Composing a training run: both configuration stages, checks across keys, where it writes.

1. Stage 1: conf/train.yaml (our groups cluster/data/reward/model + run/rehearsal), composed
   by `codefu_trainer.run.compose` (evaluation composes conf/eval.yaml the same way).
2. Stage 2: conf/verl/grpo.yaml (veRL's ppo_trainer + CodeFu GRPO defaults) with overrides
   derived from stage 1 and the user's overrides addressed to veRL.
3. The resolved configs are written to <run dir>/config/.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from omegaconf import DictConfig, OmegaConf

from codefu_trainer.run.compose import PrerequisiteError, compose_train, typed_config
from codefu_trainer.run.config import (
    ClusterKind,
    GroupRole,
    ModelKind,
    TrainConfig,
    data_files,
    judge_on_judge_hosts,
)
from codefu_trainer.run.overrides import (
    ConfigError,
    Override,
    as_typed,
    dotted_keys,
    split_overrides,
)

if TYPE_CHECKING:
    from codefu_trainer.training.verl.config import ClusterExtension


@dataclass
class ComposedRun:
    """Everything a dispatch needs: both configs, where the run writes, the raw overrides."""

    cfg: TrainConfig
    verl: DictConfig | None
    run_dir: Path
    conf_dir: Path
    overrides: list[str]


def compose_stage1(conf_dir: Path, ours: Sequence[Override]) -> DictConfig:
    """Stage 1 of a training run (conf/train.yaml); a misspelled key's suggestions come from
    both stages' keys (ours and veRL's)."""
    return compose_train(conf_dir, ours, other_keys=lambda: verl_keys(conf_dir))


def verl_keys(conf_dir: Path) -> list[str]:
    """veRL's config keys as full dotted names, as a user types them (for suggestions)."""
    from codefu_trainer.training.verl.config import compose_verl

    return [as_typed(key) for key in dotted_keys(compose_verl(conf_dir, []))]


def to_train_config(node: DictConfig) -> TrainConfig:
    cfg = typed_config(node, TrainConfig, "conf/train.yaml", "codefu_train_schema")
    check_train_config(cfg)
    return cfg


def check_train_config(cfg: TrainConfig) -> None:
    """Checks across keys that types cannot express (the data group's: `typed_config`)."""
    c = cfg.cluster
    if c.nnodes < 1 or c.gpus_per_node < 0:
        raise ConfigError("cluster.nnodes must be >= 1 and cluster.gpus_per_node >= 0.")
    if c.kind is ClusterKind.sagemaker:
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
    if cfg.run.evaluate_final and c.kind is not ClusterKind.cpu:
        raise ConfigError(
            "run.evaluate_final=true evaluates the CPU rehearsal's final model (cluster=cpu); "
            "evaluate another run's model with `nox -s evaluate -- model.path=<run dir>/model`."
        )
    if (
        c.kind is ClusterKind.cpu
        and cfg.model.kind is not ModelKind.tiny
        and not Path(cfg.model.path).is_dir()
    ):
        raise ConfigError(
            f"cluster=cpu rehearses with a small model: use model=tiny, or model.path=<local HF "
            f"model dir>; {cfg.model.path!r} is neither (nothing is downloaded at run time)."
        )


def resolve_run_dir(cfg: TrainConfig) -> Path:
    if cfg.run.dir:
        return Path(cfg.run.dir).expanduser().resolve()
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return (Path(cfg.run.root_dir).expanduser() / f"{cfg.run.name}-{stamp}").resolve()


def compose_run(
    conf_dir: Path,
    overrides: Sequence[str],
    gpus_detected: int | None = None,
    with_verl: bool = True,
    extension: ClusterExtension | None = None,
) -> ComposedRun:
    """Both stages; `gpus_detected` stands for this machine's GPUs where the cluster says 0.
    `extension`: the veRL settings of a cluster kind composed by its own entry point
    (`verl.config.EXTENDED_KINDS`; cpu_verl: `verl.cpu.run.compose`)."""
    from codefu_trainer.training.verl.config import (
        build_verl_config,
        check_attention,
        validate_verl_config,
    )

    ours, theirs = split_overrides(overrides)
    node = compose_stage1(conf_dir, ours)
    cfg = to_train_config(node)
    judge_on_judge_hosts(cfg.cluster, cfg.reward)
    run_dir = resolve_run_dir(cfg)
    verl: DictConfig | None = None
    if with_verl:
        gpus = cfg.cluster.gpus_per_node or gpus_detected or 1
        verl = build_verl_config(
            cfg, conf_dir, run_dir, theirs, gpus_per_node=gpus, extension=extension
        )
        if cfg.cluster.kind is not ClusterKind.cpu:
            validate_verl_config(verl)
            check_attention(verl, loads_here=cfg.cluster.kind is ClusterKind.local)
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
