"""Settings of conf/verl/grpo.yaml that veRL reads differently than their names suggest."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from omegaconf import DictConfig

from codefu_trainer.run.overrides import ConfigError
from codefu_trainer.training.verl.config import compose_verl, validate_verl_config

from ..conftest import CONF

ACTOR = "actor_rollout_ref.actor"


def _verl(*overrides: str) -> DictConfig:
    return compose_verl(CONF, ["trainer.nnodes=1", "trainer.n_gpus_per_node=8", *overrides])


def _clip_range(config: DictConfig) -> tuple[float, float]:
    """The (low, high) clip range veRL's PPO loss applies, found by bisection to 1e-4."""
    import torch
    from verl.trainer.ppo.core_algos import compute_policy_loss_vanilla
    from verl.utils.config import omega_conf_to_dataclass

    actor = omega_conf_to_dataclass(config.actor_rollout_ref.actor)

    def clipped(ratio: float, advantage: float) -> bool:
        old = torch.zeros((1, 1))
        _, metrics = compute_policy_loss_vanilla(
            old_log_prob=old,
            log_prob=old + torch.log(torch.tensor(ratio)),
            advantages=torch.full((1, 1), advantage),
            response_mask=torch.ones((1, 1)),
            config=actor,
        )
        return float(metrics["actor/pg_clipfrac"]) > 0

    def edge(sign: float) -> float:
        # A token with advantage `sign` is clipped once its ratio leaves 1 by more than the bound.
        inside, outside = 0.0, 0.99
        assert clipped(1 + sign * outside, sign), "no clipping within a ratio of 0.01..1.99"
        while outside - inside > 1e-4:
            mid = (inside + outside) / 2
            inside, outside = (inside, mid) if clipped(1 + sign * mid, sign) else (mid, outside)
        return round(outside, 3)

    return edge(-1.0), edge(1.0)


def test_every_clip_setting_of_grpo_yaml_reaches_the_policy_loss() -> None:
    # A `clip_ratio` next to veRL's non-null clip_ratio_low/high would be a dead setting.
    actor = yaml.safe_load((CONF / "verl" / "grpo.yaml").read_text())["actor_rollout_ref"]["actor"]
    low, high = _clip_range(_verl())
    set_here = {
        k: v for k, v in actor.items() if k in ("clip_ratio", "clip_ratio_low", "clip_ratio_high")
    }
    assert set_here, "grpo.yaml sets no clip range"
    for key, value in set_here.items():
        expected = {"clip_ratio_low": [low], "clip_ratio_high": [high]}.get(key, [low, high])
        assert all(v == pytest.approx(value, abs=1e-3) for v in expected), key


def test_clip_higher_is_set_through_clip_ratio_high() -> None:
    assert _clip_range(_verl(f"{ACTOR}.clip_ratio_high=0.28")) == pytest.approx((0.2, 0.28))
    # veRL's `clip_ratio` is only the fallback of null low/high bounds.
    assert _clip_range(_verl(f"{ACTOR}.clip_ratio=0.4")) == pytest.approx((0.2, 0.2))


@pytest.mark.parametrize(
    "key",
    [
        f"{ACTOR}.ulysses_sequence_parallel_size",
        f"{ACTOR}.fsdp_config.ulysses_sequence_parallel_size",
        "actor_rollout_ref.ref.fsdp_config.ulysses_sequence_parallel_size",
        "actor_rollout_ref.rollout.tensor_model_parallel_size",
    ],
)
def test_every_parallel_group_size_must_divide_the_gpus(key: str) -> None:
    validate_verl_config(_verl(f"{key}=4"), check_reward_function=False)  # 8 GPUs: fine
    with pytest.raises(ConfigError) as err:
        validate_verl_config(_verl(f"{key}=3"), check_reward_function=False)
    assert f"{key}=3" in str(err.value) and "divisor of 8" in str(err.value)


RESOLVE = """
import sys
from omegaconf import OmegaConf
from verl.trainer.ppo.reward import resolve_reward_manager_cls
manager = OmegaConf.create(sys.argv[1])
print(resolve_reward_manager_cls(OmegaConf.create({"reward": {"reward_manager": manager}})))
"""


def _resolve_in_a_fresh_process(manager: str) -> subprocess.CompletedProcess[str]:
    # veRL's TaskRunner resolves the manager class before anything imports our adapter.
    return subprocess.run(
        [sys.executable, "-c", RESOLVE, manager],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=Path(__file__).parent,
    )


@pytest.mark.slow
def test_the_reward_manager_resolves_through_importlib_in_a_process_that_never_imported_it() -> (
    None
):
    done = _resolve_in_a_fresh_process(
        "{source: importlib, name: CodeFuRewardManager,"
        " module: {path: 'pkg://codefu_trainer.reward.verl_adapter'}}"
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "CodeFuRewardManager" in done.stdout


@pytest.mark.slow
def test_the_registered_name_codefu_is_unknown_to_a_process_that_never_imported_the_adapter() -> (
    None
):
    # Why the documentation must name the importlib route (above), not source=register.
    done = _resolve_in_a_fresh_process("{source: register, name: codefu}")
    assert done.returncode != 0
    assert "codefu" in done.stderr.splitlines()[-1]
