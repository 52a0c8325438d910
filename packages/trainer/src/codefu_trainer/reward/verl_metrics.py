"""The judge metrics of a veRL step, from the reward results veRL keeps (veRL 0.9.1, V1).

veRL's V1 trainer keeps each sample's reward extra keys in the TransferQueue
(``extra_fields`` → ``reward_extra_info``, where the agent loop puts what our
``compute_score_async`` returned). ``batch_results`` reads the step's reward results back
from them; ``record_judge_metrics`` adds the judge metrics (``step_metrics``) to the step's
metrics. A step whose judge failure rate is above ``reward.failure_alert.max_rate`` prints a
warning, sets the MLflow tag ``codefu.judge_failure_alert`` and, with
``reward.failure_alert.stop``, stops training.

veRL's trainer calls them through ``codefu_trainer.training.verl.trainer`` (the registered
trainer subclass ``codefu_<mode>`` and its task runner): this module imports no veRL and
nothing of ``codefu_trainer.training``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

from codefu_trainer.reward.config import RewardConfig
from codefu_trainer.reward.rules import RESULT_KEYS
from codefu_trainer.reward.step_metrics import WindowStats, failure_alert, step_metrics

__all__ = [
    "ALERT_TAG",
    "REWARD_CONFIG_KWARG",
    "JudgeFailureStop",
    "batch_results",
    "record_judge_metrics",
    "reward_config_in",
]

log = logging.getLogger(__name__)

ALERT_TAG = "codefu.judge_failure_alert"
# The keyword that carries the reward settings (a mapping) to the custom reward function.
REWARD_CONFIG_KWARG = "reward_config"


class JudgeFailureStop(RuntimeError):
    """A step's judge failure rate passed the limit and ``reward.failure_alert.stop`` is on."""


def batch_results(extra_fields: Sequence[Any], tags: Sequence[Mapping[str, Any]]) -> list[dict]:
    """The reward results of a step's real samples: each sample's ``reward_extra_info``
    (from its TransferQueue ``extra_fields``), padding samples left out."""
    results = []
    for extra, tag in zip(extra_fields, tags, strict=True):
        if tag.get("is_padding", False):
            continue
        info = extra.get("reward_extra_info") if isinstance(extra, Mapping) else None
        if isinstance(info, Mapping) and "verdict" in info:
            results.append({key: info.get(key) for key in RESULT_KEYS})
    return results


def reward_config_in(verl_config: Any) -> Any:
    """The reward settings in veRL's config, where its reward workers get them: the keyword
    ``reward_config`` that veRL binds to the custom reward function
    (``reward.custom_reward_function.reward_kwargs``); None: the defaults."""
    reward = verl_config.get("reward", {}) if verl_config is not None else {}
    kwargs = (reward.get("custom_reward_function") or {}).get("reward_kwargs") or {}
    return kwargs.get(REWARD_CONFIG_KWARG)


def record_judge_metrics(
    metrics: MutableMapping[str, Any],
    results: Sequence[Mapping[str, Any]],
    window: WindowStats | Mapping[str, Any] | None,
    config: RewardConfig,
    step: int,
) -> dict[str, float]:
    """Add a step's judge metrics to ``metrics``; warn (console, MLflow tag) and, when
    configured, stop (``JudgeFailureStop``) on too many judge failures. Returns them."""
    judge = step_metrics(results, window)
    metrics.update(judge)
    stats = WindowStats.from_dict(window) if isinstance(window, Mapping) else window
    for flip in stats.flip_details if stats is not None else []:
        print(f"codefu-train: WARNING step {step}: {flip.describe()}", flush=True)
    alert = failure_alert(judge, config.failure_alert.max_rate)
    if alert is not None:
        print(f"codefu-train: WARNING step {step}: {alert}", flush=True)
        try:
            import mlflow

            if mlflow.active_run() is not None:
                mlflow.set_tag(ALERT_TAG, f"step {step}: {alert}")
        except Exception as e:  # the warning is printed either way
            log.warning("could not tag the MLflow run: %s", e)
        if config.failure_alert.stop:
            raise JudgeFailureStop(f"step {step}: {alert} (reward.failure_alert.stop=true)")
    return judge
