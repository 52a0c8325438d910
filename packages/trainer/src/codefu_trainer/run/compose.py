"""Stage-1 composition, shared by training and evaluation: a primary config (conf/train.yaml,
conf/eval.yaml) from our groups cluster/data/reward/model, its overrides checked by name, then
typed by its schema.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Protocol, TypeVar

from omegaconf import DictConfig, OmegaConf

from codefu_data.compose import ComposeError, compose_config
from codefu_data.config import DataConfig, check_config
from codefu_trainer.reward.config import FROM_DATA, RewardConfig, use_data_settings
from codefu_trainer.run.cluster_kinds import (
    check_kind_settings,
    cluster_kind,
    register_kind_schemas,
)
from codefu_trainer.run.config import register_configs
from codefu_trainer.run.overrides import (
    ConfigError,
    Override,
    check_group_choices,
    check_keys,
    schema_error,
)

GROUPS = ("cluster", "data", "reward", "model")


class HasDataAndReward(Protocol):
    data: DataConfig
    reward: RewardConfig


T = TypeVar("T", bound=HasDataAndReward)


class PrerequisiteError(RuntimeError):
    """Something the run needs is absent (GPU, prepared data, credentials); nothing started."""


def default_conf_dir() -> Path:
    return Path.cwd() / "conf"


def compose_train(
    conf_dir: Path,
    ours: Sequence[Override],
    config_name: str = "train",
    *,
    other_keys: Callable[[], Iterable[str]] | None = None,
    groups: Sequence[str] = GROUPS,
) -> DictConfig:
    """Stage 1 composition with checks that name a bad option or key and list valid ones
    (suggestions also from `other_keys()`, the other stage's keys as a user types them);
    `groups`: the primary config's groups (evaluation adds its protocols)."""
    register_configs()
    register_kind_schemas()
    check_group_choices(conf_dir, ours, groups)
    group_choices = [o.text for o in ours if o.key in groups]
    base = _compose(conf_dir, config_name, group_choices)
    extra: list[str] = []
    for group in ("model", "reward"):  # the cluster's default_model / default_reward
        default = base.cluster.get(f"default_{group}")
        if default and not any(o.key == group for o in ours):
            extra.append(f"{group}={default}")
            check_group_choices(conf_dir, [Override(extra[-1], "", group, default)], groups)
    if extra:
        base = _compose(conf_dir, config_name, [*group_choices, *extra])
    cluster_kind(base.cluster)  # a kind that is registered
    check_kind_settings(base, ours, conf_dir)
    check_one_place(ours)
    check_keys(
        base,
        [o for o in ours if o.key not in groups],
        where=f"conf/{config_name}.yaml",
        other_keys=other_keys,
    )
    return _compose(conf_dir, config_name, [*extra, *(o.text for o in ours)])


def _compose(conf_dir: Path, config_name: str, overrides: Sequence[str]) -> DictConfig:
    """`compose_config`, a value of the wrong type told in a user's words (`schema_error`)."""
    try:
        return compose_config(conf_dir, config_name, overrides)
    except ComposeError as exc:
        raise ConfigError(schema_error(exc) or str(exc)) from exc


def check_one_place(ours: Sequence[Override]) -> None:
    """`reward.time_factors`/`reward.time_limit_scale` overrides → an error naming the data
    setting that is their one place (`reward.config.FROM_DATA`)."""
    for ov in ours:
        first, _, rest = ov.key.partition(".")
        setting = rest.split(".")[0]
        if first == "reward" and setting in FROM_DATA:
            raise ConfigError(
                f"{ov.text}: the reward judges under data.{setting}, the one place for it "
                f"(data validation judges under it too): set data.{setting} instead."
            )


def typed_config(node: DictConfig, schema: type[T], where: str, schema_name: str) -> T:
    """The schema object of a composed primary config, its `data` group checked and its
    time-limit scale, time factors and language given to the reward (`use_data_settings`).

    Raises ConfigError when a value does not fit its type, the config file `where` does not
    start from the schema, or the data settings contradict each other.
    """
    from omegaconf.errors import OmegaConfBaseException

    try:
        obj = OmegaConf.to_object(node)
    except OmegaConfBaseException as exc:
        raise ConfigError(schema_error(exc) or str(exc)) from exc
    if not isinstance(obj, schema):
        raise ConfigError(f"{where} must list `{schema_name}` first in its defaults.")
    try:
        check_config(obj.data)
        use_data_settings(obj.reward, obj.data)
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc
    return obj
