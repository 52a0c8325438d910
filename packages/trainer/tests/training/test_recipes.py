"""Named recipes (conf/verl/recipe/): what each sets, and that veRL accepts each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from omegaconf import DictConfig, OmegaConf

from codefu_trainer.training.cli import EXIT_CONFIG, main
from codefu_trainer.training.overrides import ConfigError
from codefu_trainer.training.recipes import check_recipe, filter_metric
from codefu_trainer.training.verl_config import compose_verl, validate_verl_config

from ..conftest import CONF

BASE = ["trainer.nnodes=1", "trainer.n_gpus_per_node=8"]
RECIPES = sorted(p.stem for p in (CONF / "verl" / "recipe").glob("*.yaml"))
# Every key recipe=dapo changes, with its value (docs/recipes.md "Recipes").
DAPO = {
    "algorithm.filter_groups.enable": True,
    "algorithm.filter_groups.metric": "score",
    "algorithm.filter_groups.max_inflight_gen_batches": 3,
    "reward.reward_manager.name": "dapo",
    "reward.reward_kwargs.max_resp_len": 20480,
    "reward.reward_kwargs.overlong_buffer_cfg.enable": True,
    "reward.reward_kwargs.overlong_buffer_cfg.len": 4096,
    "reward.reward_kwargs.overlong_buffer_cfg.penalty_factor": 1.0,
    "reward.reward_kwargs.overlong_buffer_cfg.log": True,
    "actor_rollout_ref.actor.clip_ratio_high": 0.28,
    "actor_rollout_ref.actor.use_kl_loss": False,
    "actor_rollout_ref.actor.kl_loss_coef": 0.0,
    "actor_rollout_ref.actor.entropy_coeff": 0.0,
}


def _flat(node: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        for key, value in node.items():
            out.update(_flat(value, f"{prefix}{key}."))
        return out
    return {prefix.rstrip("."): node}


def _resolved(config: DictConfig) -> dict[str, Any]:
    return _flat(OmegaConf.to_container(config, resolve=True))


@pytest.fixture(scope="module")
def composed() -> dict[str, DictConfig]:
    out = {name: compose_verl(CONF, [*BASE, f"recipe={name}"]) for name in RECIPES}
    out["(none)"] = compose_verl(CONF, [*BASE, "~recipe"])
    out["(default)"] = compose_verl(CONF, BASE)
    return out


def test_the_shipped_recipes_are_codefu_and_dapo() -> None:
    assert RECIPES == ["codefu", "dapo"]


def test_codefu_is_the_default_and_changes_nothing_of_grpo_yaml(
    composed: dict[str, DictConfig],
) -> None:
    without = _resolved(composed["(none)"])
    assert _resolved(composed["codefu"]) == without
    assert _resolved(composed["(default)"]) == without
    codefu = composed["codefu"]
    actor = codefu.actor_rollout_ref.actor
    assert (actor.use_kl_loss, actor.kl_loss_coef, actor.entropy_coeff) == (True, 0.001, 0.001)
    assert (actor.clip_ratio_low, actor.clip_ratio_high, actor.loss_agg_mode) == (
        0.2,
        0.2,
        "token-mean",
    )
    assert filter_metric(codefu) is None
    assert codefu.reward.reward_manager.name == "naive"


def test_dapo_changes_exactly_its_keys(composed: dict[str, DictConfig]) -> None:
    codefu, dapo = _resolved(composed["codefu"]), _resolved(composed["dapo"])
    changed = {k: v for k, v in dapo.items() if codefu.get(k, "<absent>") != v}
    assert changed == DAPO
    assert set(codefu) - set(dapo) == set()


def test_dapo_shapes_at_the_response_length_limit_it_is_composed_with() -> None:
    config = compose_verl(CONF, [*BASE, "recipe=dapo", "data.max_response_length=8192"])
    assert OmegaConf.select(config, "reward.reward_kwargs.max_resp_len") == 8192


@pytest.mark.parametrize("recipe", RECIPES)
def test_each_recipe_passes_verls_own_validation(
    composed: dict[str, DictConfig], recipe: str
) -> None:
    from verl.trainer.ppo.utils import need_reference_policy
    from verl.utils.config import omega_conf_to_dataclass

    config = composed[recipe]
    validate_verl_config(config)
    check_recipe(config)
    actor = omega_conf_to_dataclass(config.actor_rollout_ref.actor)
    algorithm = omega_conf_to_dataclass(config.algorithm)
    assert actor.clip_ratio_high == config.actor_rollout_ref.actor.clip_ratio_high
    assert algorithm.filter_groups.enable == (recipe == "dapo")
    # No KL loss and no KL in the reward: veRL builds no reference model.
    assert need_reference_policy(config) == (recipe == "codefu")


def test_dapos_reward_manager_shapes_an_overlong_response() -> None:
    """veRL's DAPO manager built from the recipe: 0 penalty up to 16384 tokens, -1 at 20480."""
    from verl.trainer.ppo.reward import resolve_reward_manager_cls

    config = compose_verl(CONF, [*BASE, "recipe=dapo"])
    manager = resolve_reward_manager_cls(config)(config, None, None)
    buffer = manager.overlong_buffer_cfg
    expected = manager.max_resp_len - buffer.len

    def penalty(length: int) -> float:
        return min(-(length - expected) / buffer.len * buffer.penalty_factor, 0)

    assert (expected, penalty(16384), penalty(18432), penalty(20480)) == (16384, 0, -0.5, -1.0)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("reward.reward_kwargs.overlong_buffer_cfg.len=30000", "max_resp_len must be larger"),
        ("algorithm.filter_groups.metric=verdict", "is not a number"),
        ("algorithm.filter_groups.metric=acc", "not a key of the judge's result"),
        ("algorithm.filter_groups.metric=null", "needs algorithm.filter_groups.metric"),
        ("reward.reward_manager.name=dapoo", "veRL cannot resolve it"),
    ],
)
def test_check_recipe_refuses_what_verl_would_refuse_once_running(
    override: str, message: str
) -> None:
    config = compose_verl(CONF, [*BASE, "recipe=dapo", override])
    with pytest.raises(ConfigError, match=message):
        check_recipe(config)


def test_codefu_train_check_composes_a_recipe(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, gpu_sized_data: Path
) -> None:
    data = f"data.out_dir={gpu_sized_data}"
    args = ["--config-dir", str(CONF), f"run.dir={tmp_path}", data, "recipe=dapo"]
    assert main(["--check", *args]) == 0
    out = capsys.readouterr().out
    assert "clip_ratio_high: 0.28" in out and "name: dapo" in out
    assert main(["--check", *args[:-1], "recipe=dapo", "algorithm.filter_groups.metric=x"]) == (
        EXIT_CONFIG
    )
    assert "not a key of the judge's result" in capsys.readouterr().err
    # Keys that only the chosen recipe or curriculum brings can be overridden too.
    only_dapo = "verl.reward.reward_kwargs.overlong_buffer_cfg.len=64"
    assert main(["--check", *args, only_dapo]) == 0
    assert "len: 64" in capsys.readouterr().out
    only_tiers = ["curriculum=tiers", "verl.data.curriculum.promote_at=0.7"]
    assert main(["--check", *args, *only_tiers]) == 0
    assert "promote_at: 0.7" in capsys.readouterr().out
    assert main(["--check", *args, only_dapo.replace("len", "lenn")]) == EXIT_CONFIG
    assert "'lenn' is not a key" in capsys.readouterr().err


def test_codefu_train_check_names_the_recipes_for_an_unknown_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code = main(["--check", "--config-dir", str(CONF), f"run.dir={tmp_path}", "recipe=dap"])
    assert code == EXIT_CONFIG
    err = capsys.readouterr().err
    assert "did you mean 'dapo'" in err and "Valid options: codefu, dapo" in err


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("data.curriculum.low=0.99", "low < high"),
        ("+data.curriculum.promote=0.5", "unknown key"),
        ("data.dataloader_num_workers=4", "dataloader_num_workers=0"),
        ("trainer.v1.trainer_mode=colocate_async", "trainer_mode=sync"),
    ],
)
def test_check_recipe_refuses_a_curriculum_veRL_could_not_run(override: str, message: str) -> None:
    check_recipe(compose_verl(CONF, [*BASE, "curriculum=tiers"]))
    config = compose_verl(CONF, [*BASE, "curriculum=tiers", override])
    with pytest.raises(ConfigError, match=message):
        check_recipe(config)
