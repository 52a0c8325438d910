"""Dynamic sampling (recipe=dapo) in veRL's own V1 replay buffer, on a real TransferQueue.

The sampling half of a veRL sync step runs here as the trainer runs it: veRL's ReplayBuffer
(built with the settings `PPOTrainer._build_replay_buffer` derives from the composed
config) or the curriculum's subclass, over TransferQueue on a local Ray. Generation is the
one stand-in: `_Rollout` puts groups whose judge scores are given, laid out as veRL's
AgentLoopWorkerTQ puts them (prompt tag, trajectories with rm_scores, reward_extra_info,
extra_info). Then veRL's GRPO advantage is computed on the sampled batch.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from omegaconf import DictConfig

from codefu_trainer.training.curriculum import Curriculum, CurriculumConfig
from codefu_trainer.training.verl.config import compose_verl

from ..conftest import CONF

pytestmark = [pytest.mark.slow, pytest.mark.ray]

BATCH = 4  # prompts per step
N = 4  # responses per prompt
RESPONSE_TOKENS = 3
# The judge's scores of successive groups: zero-variance groups (all fail, all pass) among
# groups whose samples disagree.
PATTERNS = [
    [0.0] * N,
    [1.0, 0.0, 0.0, 1.0],
    [1.0] * N,
    [0.0] * N,
    [0.5, 1.0, 0.0, 0.0],
    [1.0] * N,
    [0.0, 0.0, 0.0, 1.0],
    [0.0] * N,
    [1.0, 1.0, 0.0, 1.0],
    [1.0, 0.0, 1.0, 0.0],
]


@pytest.fixture(scope="module")
def transfer_queue() -> Iterator[Any]:
    ray = pytest.importorskip("ray")
    import transfer_queue as tq

    # TransferQueue's controller and two storage units ask for one CPU each.
    started = not ray.is_initialized()
    if started:
        ray.init(address="local", num_cpus=4, include_dashboard=False, log_to_driver=False)
    try:
        tq.init()
        yield tq
    finally:
        tq.close()
        if started:
            ray.shutdown()


@pytest.fixture
def tq(transfer_queue: Any) -> Iterator[Any]:
    yield transfer_queue
    listed = transfer_queue.kv_list("train") or {}
    keys = list(listed.get("train", {}))
    if keys:
        transfer_queue.kv_clear(keys=keys, partition_id="train")


class _Rollout:
    """veRL's refill_fn: `n` prompts generated and scored, put as AgentLoopWorkerTQ does."""

    def __init__(self, tq: Any, problems: list[str] | None = None) -> None:
        self.tq = tq
        self.generated: dict[str, list[float]] = {}
        self.problem_of: dict[str, str] = {}
        self._problems = problems or ["easy/p"]

    def __call__(self, n: int) -> int:
        import torch
        from verl.utils.tensordict_utils import list_of_dict_to_tensordict

        for _ in range(n):
            i = len(self.generated)
            uid = uuid.uuid4().hex
            scores = PATTERNS[i % len(PATTERNS)]
            problem = self._problems[i % len(self._problems)]
            keys, fields = [], []
            for session, score in enumerate(scores):
                rm = torch.zeros(RESPONSE_TOKENS)
                rm[-1] = score
                keys.append(f"{uid}_{session}_0")
                fields.append(
                    {
                        "rm_scores": rm,
                        "response_mask": torch.ones(RESPONSE_TOKENS, dtype=torch.int64),
                        "extra_fields": {"reward_extra_info": {"score": score, "verdict": "x"}},
                        "extra_info": {"curriculum_problem": problem},
                    }
                )
            tags = [{"status": "success", "global_steps": 1}] * len(keys)
            self.tq.kv_batch_put(
                keys=keys,
                partition_id="train",
                fields=list_of_dict_to_tensordict(fields),
                tags=tags,
            )
            self.tq.kv_batch_put(
                keys=[uid],
                partition_id="train",
                tags=[{"is_prompt": True, "status": "finished", "global_steps": 1}],
            )
            self.generated[uid] = scores
            self.problem_of[uid] = problem
        return n


def _config(recipe: str) -> DictConfig:
    return compose_verl(
        CONF,
        ["trainer.nnodes=1", "trainer.n_gpus_per_node=8", f"recipe={recipe}", "curriculum=tiers"],
    )


def _verl_replay_buffer(config: DictConfig, rollout: _Rollout) -> Any:
    """veRL's built-in sync ReplayBuffer with the kwargs PPOTrainer._build_replay_buffer gives."""
    from verl.trainer.ppo.v1.replay_buffer import ReplayBuffer

    groups = config.algorithm.filter_groups
    metric = str(groups.metric) if groups.enable else None
    sampler = config.trainer.v1.sampler
    return ReplayBuffer(
        trainer_mode="sync",
        trainer_config=config.trainer.v1.get("sync", {}),
        max_off_policy_threshold=sampler.max_off_policy_threshold,
        max_off_policy_strategy=sampler.max_off_policy_strategy,
        sampler_kwargs=sampler.sampler_kwargs,
        refill_fn=rollout,
        filter_groups_metric=metric,
        sync_refill_failed_groups=False,
        train_batch_size=BATCH,
        gen_batch_size=1 if metric else BATCH,
        max_inflight_gen_batches=int(groups.max_inflight_gen_batches) if metric else 1,
    )


def _curriculum_replay_buffer(config: DictConfig, rollout: _Rollout) -> Any:
    """The curriculum's replay buffer as PPOTrainer._build_replay_buffer builds a custom one."""
    from verl.utils.import_utils import load_extern_object

    sampler = config.trainer.v1.sampler
    cls: Any = load_extern_object(sampler.custom_sampler.path, sampler.custom_sampler.name)
    kwargs = dict(sampler.sampler_kwargs)
    kwargs["train_batch_size"] = BATCH
    return cls(
        trainer_mode="sync",
        trainer_config=config.trainer.v1.get("sync", {}),
        max_off_policy_threshold=sampler.max_off_policy_threshold,
        max_off_policy_strategy=sampler.max_off_policy_strategy,
        sampler_kwargs=kwargs,
        refill_fn=rollout,
    )


def _sample(tq: Any, buffer: Any, rollout: _Rollout) -> tuple[dict[str, list[float]], dict]:
    """One step's sampling as V1's sync trainer does it: BATCH prompts, then sample."""
    rollout(BATCH)
    batch, metrics = buffer.sample(global_steps=1, partition_id="train", batch_size=BATCH)
    data = tq.kv_batch_get(keys=batch.keys, partition_id="train", select_fields=["rm_scores"])
    groups: dict[str, list[float]] = {}
    for key, rm in zip(batch.keys, data["rm_scores"], strict=True):
        groups.setdefault(key.split("_")[0], []).append(float(rm.sum()))
    return groups, metrics


def _grpo_advantages(groups: dict[str, list[float]]) -> dict[str, np.ndarray]:
    """veRL's GRPO outcome advantage of each sampled group."""
    import torch
    from verl.trainer.ppo.core_algos import compute_grpo_outcome_advantage

    uids = [uid for uid, scores in groups.items() for _ in scores]
    rewards = torch.zeros(len(uids), RESPONSE_TOKENS)
    rewards[:, -1] = torch.tensor([s for scores in groups.values() for s in scores])
    adv, _ = compute_grpo_outcome_advantage(
        token_level_rewards=rewards,
        response_mask=torch.ones_like(rewards),
        index=np.array(uids, dtype=object),
    )
    out: dict[str, list[float]] = {}
    for uid, a in zip(uids, adv[:, -1].tolist(), strict=True):
        out.setdefault(uid, []).append(a)
    return {uid: np.array(a) for uid, a in out.items()}


def _zero_variance(scores: list[float]) -> bool:
    return float(np.std(scores)) == 0.0


def test_without_dynamic_sampling_zero_variance_groups_are_trained_on(tq: Any) -> None:
    rollout = _Rollout(tq)
    groups, metrics = _sample(tq, _verl_replay_buffer(_config("codefu"), rollout), rollout)
    assert len(groups) == BATCH and len(rollout.generated) == BATCH
    zero = [uid for uid, scores in groups.items() if _zero_variance(scores)]
    assert len(zero) == 3  # PATTERNS[0], [2] and [3]
    advantages = _grpo_advantages(groups)
    assert all(np.all(advantages[uid] == 0) for uid in zero)  # no gradient from them
    assert not any(k.endswith("filter_groups/evicted_samples") for k in metrics)


def test_dynamic_sampling_drops_zero_variance_groups_in_a_verl_step(tq: Any) -> None:
    rollout = _Rollout(tq)
    groups, metrics = _sample(tq, _verl_replay_buffer(_config("dapo"), rollout), rollout)
    assert len(groups) == BATCH
    assert not any(_zero_variance(scores) for scores in groups.values())
    assert all(groups[uid] == rollout.generated[uid] for uid in groups)
    advantages = _grpo_advantages(groups)
    assert all(np.any(advantages[uid] != 0) for uid in groups)  # every group has a gradient
    # Every zero-variance group generated was evicted, and counted.
    zero_generated = sum(_zero_variance(s) for s in rollout.generated.values())
    assert zero_generated >= 3
    assert metrics["training/filter_groups/evicted_samples"] == zero_generated
    surplus = metrics.get("training/filter_groups/discarded_surplus_samples", 0)
    assert BATCH + zero_generated + surplus == len(rollout.generated)


def test_the_curriculum_buffer_filters_likewise_and_sees_every_groups_scores(tq: Any) -> None:
    from codefu_trainer.training.verl.curriculum import _set_active

    problems = {"easy": ["a", "b", "c"], "hard": ["d"], "expert": ["e"]}
    curriculum = Curriculum(CurriculumConfig(), problems)
    _set_active(curriculum)
    rollout = _Rollout(tq, problems=["easy/a", "easy/b", "easy/c"])
    buffer = _curriculum_replay_buffer(_config("dapo"), rollout)
    groups, metrics = _sample(tq, buffer, rollout)
    assert len(groups) == BATCH
    assert not any(_zero_variance(scores) for scores in groups.values())
    # The curriculum counted the evicted groups' scores too (they are the retire signal).
    for key in ("easy/a", "easy/b", "easy/c"):
        expected = [s for uid, s in rollout.generated.items() if rollout.problem_of[uid] == key]
        stats = curriculum.state.problems[key]
        assert stats.samples == sum(len(s) for s in expected)
        assert stats.passes == sum(v >= 1.0 for s in expected for v in s)
    assert metrics["curriculum/tier"] == 0.0
    assert curriculum.state.step == 1
    assert metrics["training/filter_groups/evicted_samples"] >= 3
