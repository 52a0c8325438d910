"""conf/reward/* compose against the RewardConfig schema."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.errors import ConfigCompositionException

from codefu_data.config import DataConfig
from codefu_trainer.reward.config import (
    RewardConfig,
    RewardMode,
    reward_config_from,
    use_data_settings,
)

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
    assert cfg.languages == ["cpp"]  # C++ only, under the judge's time factors
    assert cfg.time_factors == {"cpp": 1.0, "python": 1.0}


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


def test_languages_and_time_factors_compose() -> None:
    cfg = _compose(
        "+reward=codefu", "reward.languages=[python,cpp]", "reward.time_factors.python=2.0"
    )
    assert cfg.languages == ["python", "cpp"]
    assert cfg.time_factors == {"cpp": 1.0, "python": 2.0}
    with pytest.raises(ValueError, match="unknown language 'java'"):
        _compose("+reward=codefu", "reward.languages=[cpp,java]")


def test_data_settings_reach_the_reward() -> None:
    reward = RewardConfig(languages=["cpp", "python"])
    use_data_settings(
        reward, DataConfig(time_limit_scale=2.0, time_factors={"cpp": 1.0, "python": 3.0})
    )
    assert reward.time_limit_scale == 2.0
    assert reward.time_factors == {"cpp": 1.0, "python": 3.0}
    # The reward's own factors may only repeat the data's (data.time_factors is the owner).
    same = RewardConfig(time_factors={"cpp": 1.0, "python": 3.0})
    use_data_settings(same, DataConfig(time_factors={"cpp": 1.0, "python": 3.0}))
    with pytest.raises(ValueError, match=r"set data\.time_factors"):
        use_data_settings(RewardConfig(time_factors={"python": 2.0}), DataConfig())
    # Prompts asking for Python need a reward that accepts it.
    with pytest.raises(ValueError, match=r"reward.languages=\[cpp,python\]"):
        use_data_settings(RewardConfig(), DataConfig(language="python"))
    python_run = RewardConfig(languages=["python"])
    use_data_settings(python_run, DataConfig(language="python"))
    assert python_run.time_factors == {"cpp": 1.0, "python": 1.0}
