"""Named recipes (conf/verl/recipe/): the checks veRL makes only once a run has started.

`validate_verl_config` runs what veRL's `main_ppo` runs before it starts anything. A recipe
also chooses the reward manager, its overlong shaping and the group filter, which veRL
checks later, inside the trainer and its reward workers; `check_recipe` runs those checks
on the composed config, here, so `codefu-train --check recipe=...` catches them.
"""

from __future__ import annotations

from typing import Any

from omegaconf import DictConfig, OmegaConf

from codefu_trainer.reward.rules import RESULT_KEYS
from codefu_trainer.run.overrides import ConfigError

# What veRL's V1 replay buffer reads for filter_groups.metric=reward (rm_scores, after shaping).
CANONICAL_REWARD_METRIC = "reward"
# Keys of the judge's result that are numbers (filter_groups compares float(value)).
NUMERIC_RESULT_KEYS = ("score", "passed", "total", "compile_seconds", "run_seconds")


def filter_metric(config: DictConfig) -> str | None:
    """The metric veRL's dynamic sampling compares within a group, or None when it is off."""
    groups = OmegaConf.select(config, "algorithm.filter_groups")
    if groups is None or not groups.get("enable", False):
        return None
    metric = groups.get("metric")
    return str(metric) if metric else ""


def check_recipe(config: DictConfig) -> None:
    """veRL's run-time checks of the reward manager and the group filter, before any start.

    Raises ConfigError naming the key to change.
    """
    from verl.trainer.ppo.reward import resolve_reward_manager_cls

    manager = config.reward.reward_manager
    # veRL reads these keys itself (its RewardManagerConfig dataclass fails to build in 0.9.1).
    try:
        manager_cls: Any = resolve_reward_manager_cls(config)
    except (AssertionError, ValueError, KeyError, ImportError, AttributeError) as exc:
        raise ConfigError(
            f"reward.reward_manager (source={manager.source}, name={manager.name}): veRL cannot "
            f"resolve it ({exc}); use name=naive or name=dapo (source=register), or "
            "source=importlib with module.path."
        ) from exc
    if manager.source == "register":
        try:
            # Its constructor checks the overlong buffer against the response-length limit.
            manager_cls(config, None, None)
        except (AssertionError, ValueError, KeyError, TypeError) as exc:
            raise ConfigError(
                f"reward.reward_manager.name={manager.name}: veRL rejects its settings "
                f"(reward.reward_kwargs): {exc}"
            ) from exc
    check_curriculum(config)
    metric = filter_metric(config)
    if metric is None:
        return
    if not metric:
        raise ConfigError(
            "algorithm.filter_groups.enable=true needs algorithm.filter_groups.metric: set it to "
            "score (the judge's score)."
        )
    if metric != CANONICAL_REWARD_METRIC and metric not in NUMERIC_RESULT_KEYS:
        kind = "not a number" if metric in RESULT_KEYS else "not a key of the judge's result"
        raise ConfigError(
            f"algorithm.filter_groups.metric={metric} is {kind}; dynamic sampling compares a "
            f"number per sample: use one of {', '.join(NUMERIC_RESULT_KEYS)} or "
            f"{CANONICAL_REWARD_METRIC} (the shaped reward)."
        )
    if config.reward.reward_model.enable and not config.reward.reward_model.enable_resource_pool:
        raise ConfigError(
            "algorithm.filter_groups needs the reward at sampling time: set "
            "reward.reward_model.enable_resource_pool=true or disable the reward model."
        )


def check_curriculum(config: DictConfig) -> None:
    """`curriculum=tiers`: its settings, and the trainer settings its two classes need."""
    from codefu_trainer.training.curriculum import CurriculumConfig

    settings = OmegaConf.select(config, "data.curriculum")
    if settings is None:
        return
    try:
        values = OmegaConf.to_container(settings, resolve=True)
        CurriculumConfig.from_mapping(values if isinstance(values, dict) else {})
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"data.curriculum: {exc}") from exc
    if int(config.data.dataloader_num_workers) != 0:
        raise ConfigError(
            "data.curriculum draws problems in the trainer's process, where the judge's scores "
            "arrive: set data.dataloader_num_workers=0."
        )
    if config.trainer.v1.trainer_mode != "sync":
        raise ConfigError(
            "the curriculum's replay buffer runs veRL's sync trainer: set "
            "trainer.v1.trainer_mode=sync."
        )
