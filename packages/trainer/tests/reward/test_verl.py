"""veRL 0.9.1 reward loop on a local Ray cluster: real DataProto batches, GRPO advantages."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ..conftest import own_ray_cluster
from .problems import COMPILE_ERROR_PROGRAM, DIFF_PROGRAM, SUM_PROGRAM, respond, sum_ground_truth
from .tokenizer import build_tokenizer, token_batch

pytestmark = [pytest.mark.ray, pytest.mark.slow]

torch = pytest.importorskip("torch")
ray = pytest.importorskip("ray")
pytest.importorskip("verl")


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    with own_ray_cluster(num_cpus=2):
        yield


def _rows() -> list[dict[str, Any]]:
    """Processed rows for two problems, as GRPO groups of 3 responses each."""
    rows = []
    for index, name in enumerate(["sum-a", "sum-b"]):
        gt = sum_ground_truth(name=name, n_private=4)
        rows.append(
            {
                "data_source": "code_contests",
                "ability": "coding-cp",
                "prompt": [{"role": "user", "content": f"Print a+b ({name})."}],
                "reward_model": {"style": "rule", "ground_truth": gt},
                "extra_info": {"index": index, "split": "train", "tier": "easy", "name": name},
            }
        )
    return rows


RESPONSES = [
    # group sum-a: correct, wrong (1/4 tests), compile error
    respond(SUM_PROGRAM),
    respond(DIFF_PROGRAM),
    respond(COMPILE_ERROR_PROGRAM),
    # group sum-b: no code, correct (c++ fence), correct
    "No idea.",
    respond(SUM_PROGRAM, tag="c++"),
    respond(SUM_PROGRAM),
]
EXPECTED = [1.0, 0.25, -0.5, -1.0, 1.0, 1.0]
EXPECTED_VERDICTS = ["AC", "WA", "CE", "NO_CODE", "AC", "AC"]


def _batch(tokenizer: Any) -> tuple[Any, list[int]]:
    rows = [r for r in _rows() for _ in range(3)]
    return token_batch(
        tokenizer,
        [r["prompt"][0]["content"] for r in rows],
        RESPONSES,
        {
            "data_source": np.array([r["data_source"] for r in rows], dtype=object),
            "reward_model": np.array([r["reward_model"] for r in rows], dtype=object),
            "extra_info": np.array([dict(r["extra_info"]) for r in rows], dtype=object),
            "uid": np.array([r["extra_info"]["name"] for r in rows], dtype=object),
        },
        prompt_len=24,
    )


def _config(tokenizer_dir: Path, cache: Path, **reward: Any) -> Any:
    from omegaconf import OmegaConf

    reward_config = {"worker": {"cache_dir": str(cache), "num_workers": 1}}
    base = {
        "actor_rollout_ref": {
            "model": {"path": str(tokenizer_dir), "tokenizer_path": str(tokenizer_dir)}
        },
        "reward": {
            "num_workers": 2,
            "custom_reward_function": {
                "path": None,
                "name": "compute_score",
                "reward_kwargs": {"reward_config": reward_config},
            },
            "reward_manager": {
                "source": "importlib",
                "name": "CodeFuRewardManager",
                "module": {
                    "path": "pkg://codefu_trainer.reward.verl_adapter",
                    "name": "CodeFuRewardManager",
                },
            },
            "reward_model": {"enable": False, "enable_resource_pool": False},
            "sandbox_fusion": None,
            "reward_kwargs": {},
        },
    }
    cfg = OmegaConf.create(base)
    return OmegaConf.merge(cfg, OmegaConf.create({"reward": reward}))


def _check(out: Any, data: Any, lengths: list[int]) -> None:
    from verl.trainer.ppo.core_algos import compute_grpo_outcome_advantage

    scores = out.batch["rm_scores"]
    assert scores.shape == data.batch["responses"].shape
    for i, n in enumerate(lengths):
        assert scores[i, n - 1].item() == pytest.approx(EXPECTED[i])  # the last valid token
        others = torch.cat([scores[i, : n - 1], scores[i, n:]])
        assert torch.count_nonzero(others).item() == 0
    assert list(out.non_tensor_batch["verdict"]) == EXPECTED_VERDICTS
    for key in ("passed", "total", "compile_seconds", "run_seconds", "judge_failure", "has_code"):
        assert key in out.non_tensor_batch
    response_mask = data.batch["attention_mask"][:, data.batch["prompts"].shape[1] :]
    advantages, _ = compute_grpo_outcome_advantage(
        token_level_rewards=scores, response_mask=response_mask, index=data.non_tensor_batch["uid"]
    )
    per_sample = [advantages[i, 0].item() for i in range(6)]
    # Group sum-a: the correct answer is above the group mean, the compile error below.
    assert per_sample[0] > 0 > per_sample[2]
    assert per_sample[0] > per_sample[1] > per_sample[2]
    # Group sum-b: the two correct answers tie, above the no-code answer.
    assert per_sample[4] == pytest.approx(per_sample[5]) and per_sample[4] > 0 > per_sample[3]
    # Advantages are constant over each response's valid tokens and zero on padding.
    for i, n in enumerate(lengths):
        assert torch.allclose(advantages[i, :n], advantages[i, 0].expand(n))
        assert torch.count_nonzero(advantages[i, n:]).item() == 0


@pytest.fixture(scope="module")
def setup(local_ray: None, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from transformers import AutoTokenizer

    root = tmp_path_factory.mktemp("verl")
    tok_dir = build_tokenizer(root / "tok", [*RESPONSES, SUM_PROGRAM, "Print a+b"])
    tokenizer = AutoTokenizer.from_pretrained(str(tok_dir))
    return {"tok_dir": tok_dir, "tokenizer": tokenizer, "cache": root / "cache"}


def test_reward_loop_workers_score_a_batch_with_the_codefu_manager(setup: dict[str, Any]) -> None:
    """RewardLoopManager → RewardLoopWorker actors → CodeFuRewardManager → judge pool."""
    from verl.experimental.reward_loop.reward_loop import RewardLoopManager

    data, lengths = _batch(setup["tokenizer"])
    config = _config(setup["tok_dir"], setup["cache"], num_workers=1)
    manager = RewardLoopManager(config)
    try:
        out = manager.compute_rm_score(data)
    finally:
        for worker in manager.reward_loop_workers:
            ray.kill(worker)
    _check(out, data, lengths)


def test_async_compute_score_in_verl_naive_manager(setup: dict[str, Any]) -> None:
    """veRL's own naive reward manager awaiting our async compute_score (custom function)."""
    import asyncio

    import torch as t
    from verl.trainer.ppo.reward import load_reward_manager

    data, lengths = _batch(setup["tokenizer"])
    reward_config = {"worker": {"cache_dir": str(setup["cache"]), "num_workers": 1}}
    config = _config(
        setup["tok_dir"],
        setup["cache"],
        reward_manager={"source": "register", "name": "naive"},
        custom_reward_function={
            "path": "pkg://codefu_trainer.reward.verl_adapter",
            "name": "compute_score_async",
            "reward_kwargs": {"reward_config": reward_config},
        },
    )
    manager = load_reward_manager(config, setup["tokenizer"])
    assert manager.is_async_reward_score

    async def run_all() -> list[dict[str, Any]]:
        return list(await asyncio.gather(*(manager.run_single(data[i : i + 1]) for i in range(6))))

    outputs = manager.loop.run_until_complete(run_all())
    scores = manager.assemble_rm_scores(data, [o["reward_score"] for o in outputs])
    infos = [o["reward_extra_info"] for o in outputs]
    assert all(set(info) == set(infos[0]) for info in infos)
    out_keys = {k: np.array([info[k] for info in infos]) for k in infos[0]}
    from verl import DataProto

    out = DataProto.from_dict(tensors={"rm_scores": scores.to(t.float32)}, non_tensors=out_keys)
    _check(out, data, lengths)
