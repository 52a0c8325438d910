"""Composing a run: both configuration stages, checks across keys, where the run writes.

1. Stage 1: conf/train.yaml (our groups cluster/data/reward/model + run/rehearsal).
2. Stage 2: conf/verl/grpo.yaml (veRL's ppo_trainer + CodeFu GRPO defaults) with overrides
   derived from stage 1 and the user's overrides addressed to veRL.
3. The resolved configs are written to <run dir>/config/.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from omegaconf import DictConfig, OmegaConf

from codefu_data.compose import compose_config
from codefu_data.config import DataConfig, check_config
from codefu_trainer.reward.config import RewardConfig, use_time_limit_scale
from codefu_trainer.training.config import (
    ClusterKind,
    GroupRole,
    ModelKind,
    TrainConfig,
    judge_on_judge_hosts,
    register_configs,
)
from codefu_trainer.training.overrides import (
    ConfigError,
    Override,
    as_typed,
    check_group_choices,
    check_keys,
    dotted_keys,
    split_overrides,
)

if TYPE_CHECKING:
    from codefu_trainer.training.verl_config import ClusterExtension

GROUPS = ("cluster", "data", "reward", "model")


class HasDataAndReward(Protocol):
    data: DataConfig
    reward: RewardConfig


T = TypeVar("T", bound=HasDataAndReward)


class PrerequisiteError(RuntimeError):
    """Something the run needs is absent (GPU, prepared data, credentials); nothing started."""


@dataclass
class ComposedRun:
    """Everything a dispatch needs: both configs, where the run writes, the raw overrides."""

    cfg: TrainConfig
    verl: DictConfig | None
    run_dir: Path
    conf_dir: Path
    overrides: list[str]


def default_conf_dir() -> Path:
    return Path.cwd() / "conf"


def compose_train(
    conf_dir: Path, ours: Sequence[Override], config_name: str = "train"
) -> DictConfig:
    """Stage 1 composition with checks that name a bad option or key and list valid ones."""
    register_configs()
    check_group_choices(conf_dir, ours, GROUPS)
    group_choices = [o.text for o in ours if o.key in GROUPS]
    base = compose_config(conf_dir, config_name, group_choices)
    extra: list[str] = []
    for group in ("model", "reward"):  # the cluster's default_model / default_reward
        default = base.cluster.get(f"default_{group}")
        if default and not any(o.key == group for o in ours):
            extra.append(f"{group}={default}")
            check_group_choices(conf_dir, [Override(extra[-1], "", group, default)], GROUPS)
    if extra:
        base = compose_config(conf_dir, config_name, [*group_choices, *extra])
    check_keys(
        base,
        [o for o in ours if o.key not in GROUPS],
        where=f"conf/{config_name}.yaml",
        other_keys=(lambda: verl_keys(conf_dir)) if config_name == "train" else None,
    )
    return compose_config(conf_dir, config_name, [*extra, *(o.text for o in ours)])


def verl_keys(conf_dir: Path) -> list[str]:
    """veRL's config keys as full dotted names, as a user types them (for suggestions)."""
    from codefu_trainer.training.verl_config import compose_verl

    return [as_typed(key) for key in dotted_keys(compose_verl(conf_dir, []))]


def typed_config(node: DictConfig, schema: type[T], where: str, schema_name: str) -> T:
    """The schema object of a composed primary config, its `data` group checked and its
    time-limit scale given to the reward (`use_time_limit_scale`).

    Raises ConfigError when a value does not fit its type, the config file `where` does not
    start from the schema, or the data settings contradict each other.
    """
    from omegaconf.errors import OmegaConfBaseException

    try:
        obj = OmegaConf.to_object(node)
    except OmegaConfBaseException as exc:
        raise ConfigError(str(exc)) from exc
    if not isinstance(obj, schema):
        raise ConfigError(f"{where} must list `{schema_name}` first in its defaults.")
    try:
        check_config(obj.data)
        use_time_limit_scale(obj.reward, obj.data.time_limit_scale)
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc
    return obj


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
    (`verl_config.EXTENDED_KINDS`; cpu_verl: `verl_cpu.run.compose`)."""
    from codefu_trainer.training.verl_config import (
        build_verl_config,
        check_attention,
        validate_verl_config,
    )

    ours, theirs = split_overrides(overrides)
    node = compose_train(conf_dir, ours)
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
    from codefu_trainer.training.config import data_files

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
