"""veRL 0.9.1 integration through its public extension points.

Two ways in, both judging on the shared Ray judge pool (``judge_pool``):

1. Custom reward function (``reward.custom_reward_function``):
   ``path=pkg://codefu_trainer.reward.verl_adapter`` with ``name=compute_score_async`` for veRL's
   reward loop (it awaits Ray without blocking the loop), or ``name=compute_score``
   (blocking). Both return a dict with ``score`` and the same extra keys every time.
2. Reward manager ``codefu`` for the reward loop: ``reward.reward_manager.source=importlib``,
   ``reward.reward_manager.module.path=pkg://codefu_trainer.reward.verl_adapter``,
   ``reward.reward_manager.name=CodeFuRewardManager``. (``source=register, name=codefu``
   does not work in training: veRL resolves the manager before anything imports this
   module, so the name is unknown there.)

The reward settings (``RewardConfig`` as a mapping) come one way, veRL's own for keywords of
the custom reward function: ``reward.custom_reward_function.reward_kwargs.reward_config``,
which veRL binds to the function in every reward worker (``codefu-train`` sets it), and
which the manager reads from the same place (``verl_metrics.reward_config_in``); without it,
the defaults.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from typing import Any

from codefu_trainer.reward.config import RewardConfig, reward_config_from
from codefu_trainer.reward.service import RewardService
from codefu_trainer.reward.verl_metrics import REWARD_CONFIG_KWARG, reward_config_in

__all__ = [
    "CodeFuRewardManager",
    "compute_score",
    "compute_score_async",
    "get_service",
    "reward_config_of",
]

_services: dict[str, RewardService] = {}
_lock = threading.Lock()


def reward_config_of(reward_config: Any) -> RewardConfig:
    """The reward settings from a mapping, its JSON text or an OmegaConf node; None: the
    defaults."""
    if isinstance(reward_config, str):
        reward_config = json.loads(reward_config)
    if reward_config is not None and not isinstance(reward_config, Mapping | RewardConfig):
        from omegaconf import OmegaConf

        reward_config = OmegaConf.to_container(reward_config, resolve=True)
    return reward_config_from(reward_config)


def get_service(reward_config: Any = None) -> RewardService:
    """This process's RewardService for a config (one per distinct config, created lazily)."""
    config = reward_config_of(reward_config)
    key = repr(config)
    with _lock:
        service = _services.get(key)
        if service is None:
            service = RewardService(config)
            _services[key] = service
        return service


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """veRL custom reward (blocking): ``score`` plus verdict, tests, timings, failure flags."""
    del data_source, extra_info
    service = get_service(kwargs.get(REWARD_CONFIG_KWARG))
    return service.score([solution_str], [ground_truth])[0]


async def compute_score_async(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """veRL custom reward for the reward loop: awaits the Ray judge pool."""
    del data_source, extra_info
    service = get_service(kwargs.get(REWARD_CONFIG_KWARG))
    return (await service.score_async([solution_str], [ground_truth]))[0]


def _register_manager() -> type:
    from verl.experimental.reward_loop.reward_manager import register
    from verl.experimental.reward_loop.reward_manager.base import RewardManagerBase

    class CodeFuRewardManager(RewardManagerBase):
        """Reward-loop manager: decodes a sample's valid response tokens and judges them."""

        def __init__(self, config: Any, tokenizer: Any, compute_score: Any = None, **kwargs: Any):
            super().__init__(config, tokenizer, compute_score)
            self._reward_config = reward_config_in(config)

        async def run_single(self, data: Any) -> dict[str, Any]:
            item = data[-1]
            response_ids = item.batch["responses"]
            length = int(item.batch["attention_mask"][-response_ids.shape[-1] :].sum())
            valid_ids = response_ids[:length]
            tokenizer: Any = self.tokenizer
            text = await self.loop.run_in_executor(
                None, lambda: tokenizer.decode(valid_ids, skip_special_tokens=True)
            )
            ground_truth = item.non_tensor_batch["reward_model"]["ground_truth"]
            service = get_service(self._reward_config)
            result = (await service.score_async([text], [ground_truth]))[0]
            return {"reward_score": result["score"], "reward_extra_info": result}

    return register("codefu")(CodeFuRewardManager)


CodeFuRewardManager: Any = _register_manager()
