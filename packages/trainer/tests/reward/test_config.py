"""conf/reward/* compose against the RewardConfig schema."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.errors import ConfigCompositionException

from codefu_trainer.reward.config import RewardConfig, RewardMode, reward_config_from

CONF = Path(__file__).resolve().parents[4] / "conf"


def _compose(*overrides: str) -> RewardConfig:
    with initialize_config_dir(config_dir=str(CONF), version_base=None):
        cfg = compose(overrides=list(overrides))
    return reward_config_from(cfg.reward)


def test_codefu_defaults() -> None:
    cfg = _compose("+reward=codefu")
    assert cfg == RewardConfig()
    assert (cfg.no_code_score, cfg.compile_error_score, cfg.timeout_score) == (-1.0, -0.5, 0.0)
    assert cfg.mode is RewardMode.linear and cfg.checker == "codecontests"
    assert cfg.judge_failure_score == 0.0 and cfg.worker.resource == "judge"


@pytest.mark.parametrize(
    ("option", "check"),
    [
        ("all_or_nothing", lambda c: c.mode is RewardMode.all_or_nothing),
        ("power", lambda c: c.mode is RewardMode.power and c.power_exponent == 1.5),
        ("with_public", lambda c: c.include_public_tests and c.mode is RewardMode.linear),
    ],
)
def test_options(option: str, check) -> None:  # type: ignore[no-untyped-def]
    assert check(_compose(f"+reward={option}"))


def test_overrides_are_typed() -> None:
    cfg = _compose("+reward=codefu", "reward.worker.num_workers=3", "reward.mode=power")
    assert cfg.worker.num_workers == 3 and cfg.mode is RewardMode.power


@pytest.mark.parametrize(
    ("override", "named"),
    [
        ("reward.modee=linear", "reward.modee"),
        ("reward.mode=bogus", "reward.mode"),
        ("reward.worker.num_workers=many", "reward.worker.num_workers"),
    ],
)
def test_bad_overrides_name_the_key(override: str, named: str) -> None:
    with pytest.raises(ConfigCompositionException, match=named.replace(".", r"\.")):
        _compose("+reward=codefu", override)


def test_from_plain_dict() -> None:
    cfg = reward_config_from({"mode": "all_or_nothing", "deadline": {"max_seconds": 5}})
    assert cfg.mode is RewardMode.all_or_nothing and cfg.deadline.max_seconds == 5
