"""The judge metrics of one veRL step: veRL's reward loop on CPU (RewardLoopWorker.compute_score
→ our compute_score_async), the samples' extra info in veRL's TransferQueue as the agent
loop leaves it, and the registered V1 trainer subclass (training/verl/trainer.py) that adds
them to the step's metrics (reward/verl_metrics.py)."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ..conftest import own_ray_cluster
from ..reward.problems import (
    COMPILE_ERROR_PROGRAM,
    DIFF_PROGRAM,
    SPIN_PROGRAM,
    SUM_PROGRAM,
    respond,
    sum_ground_truth,
)
from ..reward.tokenizer import build_tokenizer, token_batch

pytestmark = [pytest.mark.ray, pytest.mark.slow]

torch = pytest.importorskip("torch")
ray = pytest.importorskip("ray")
pytest.importorskip("verl")
pytest.importorskip("transfer_queue")

# A known step: AC, WA (1 of 4 tests), CE, TLE, no code, and a judge failure forced by a
# ground truth without tests (JUDGE_ERROR, never the program's fault).
RESPONSES = [
    respond(SUM_PROGRAM),
    respond(DIFF_PROGRAM),
    respond(COMPILE_ERROR_PROGRAM),
    respond(SPIN_PROGRAM),
    "No idea, sorry.",
    respond(SUM_PROGRAM + "// another\n"),
]
VERDICTS = ["AC", "WA", "CE", "TLE", "NO_CODE", "JUDGE_ERROR"]


def _truths() -> list[dict[str, Any]]:
    good = sum_ground_truth(name="sum", n_private=4, seconds=0.5)
    broken = dict(sum_ground_truth(name="broken"), private_tests={"input": [], "output": []})
    return [good, good, good, good, good, broken]


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    # Logical CPUs: 2 judge workers, the reward-loop worker, TransferQueue's controller and
    # storage unit (one CPU each).
    with own_ray_cluster(num_cpus=6):
        yield


def _data(tokenizer: Any) -> Any:
    n = len(RESPONSES)
    data, _ = token_batch(
        tokenizer,
        ["Print a+b"] * n,
        RESPONSES,
        {
            # Mixed sources, as a mixed set's step has them: the metrics are the judge's.
            "data_source": np.array(["code_contests", "livecodebench", "taco"] * 2, dtype=object),
            "reward_model": np.array(
                [{"style": "rule", "ground_truth": t} for t in _truths()], dtype=object
            ),
            "extra_info": np.array([{"index": i} for i in range(n)], dtype=object),
        },
        prompt_len=8,
    )
    return data


def _verl_config(tok_dir: Path, reward_config: dict[str, Any]) -> Any:
    from omegaconf import OmegaConf

    return OmegaConf.create(
        {
            "actor_rollout_ref": {"model": {"path": str(tok_dir), "tokenizer_path": str(tok_dir)}},
            "reward": {
                "num_workers": 1,
                "custom_reward_function": {
                    "path": "pkg://codefu_trainer.reward.verl_adapter",
                    "name": "compute_score_async",
                    "reward_kwargs": {"reward_config": reward_config},
                },
                "reward_manager": {"source": "register", "name": "naive"},
                "reward_model": {"enable": False, "enable_resource_pool": False},
                "sandbox_fusion": None,
                "reward_kwargs": {},
            },
        }
    )


def test_one_step_of_judge_metrics_through_verl(local_ray: None, tmp_path: Path) -> None:
    import transfer_queue as tq
    from omegaconf import OmegaConf
    from transformers import AutoTokenizer
    from verl.experimental.reward_loop.reward_loop import RewardLoopManager
    from verl.trainer.ppo.v1 import get_trainer_cls
    from verl.trainer.ppo.v1.trainer_sync import PPOTrainerSync
    from verl.utils.tensordict_utils import list_of_dict_to_tensordict

    from codefu_trainer.reward.verl_adapter import get_service
    from codefu_trainer.training.verl.trainer import judge_trainer_name

    tok_dir = build_tokenizer(tmp_path / "tok", [*RESPONSES, "Print a+b"])
    tokenizer = AutoTokenizer.from_pretrained(str(tok_dir))
    reward_config = {
        "worker": {"cache_dir": str(tmp_path / "cache"), "num_workers": 2, "audit_share": 1.0},
        "failure_alert": {"max_rate": 0.5},
    }
    config = _verl_config(tok_dir, reward_config)
    data = _data(tokenizer)

    # The trainer's process: its service (and so the shared judge pool) exists before the
    # step, as it does after the first step of a run; the window starts empty.
    service = get_service(reward_config)
    service.take_window()

    manager = RewardLoopManager(config)
    try:
        # What the agent loop does per sample: one RewardLoopWorker.compute_score call.
        worker = manager.reward_loop_workers[0]
        outputs = ray.get([worker.compute_score.remote(data[i : i + 1]) for i in range(6)])
    finally:
        for w in manager.reward_loop_workers:
            ray.kill(w)
    assert [o["reward_extra_info"]["verdict"] for o in outputs] == VERDICTS
    service.drain_audits()

    # The agent loop's TransferQueue record: extra_fields.reward_extra_info per sample; one
    # padding sample (a copy veRL adds to fill a batch) must not count.
    tq.init(OmegaConf.create({"backend": {"SimpleStorage": {"num_data_storage_units": 1}}}))
    try:
        keys = [f"uid{i}_0_0" for i in range(7)]
        extra = [{"reward_extra_info": o["reward_extra_info"]} for o in [*outputs, outputs[0]]]
        tags = [{"status": "success"} for _ in range(6)] + [{"is_padding": True}]
        batch = tq.kv_batch_put(
            keys=keys,
            partition_id="train",
            fields=list_of_dict_to_tensordict(
                [{"extra_fields": e, "rm_scores": torch.zeros(1)} for e in extra]
            ),
            tags=tags,
        )

        name = judge_trainer_name("sync")
        trainer_cls = get_trainer_cls(name)
        assert name == "codefu_sync" and issubclass(trainer_cls, PPOTrainerSync)
        assert judge_trainer_name(name) == name  # registering twice is harmless
        assert "step" in trainer_cls.__dict__  # the public per-step method carries them
        trainer = trainer_cls.__new__(trainer_cls)  # the method only needs config and step
        trainer.config = config
        trainer.global_steps = 3
        metrics: dict[str, Any] = {"critic/score/mean": 0.0}
        trainer.codefu_judge_metrics(batch, metrics)
    finally:
        tq.close()
        service.close()

    assert metrics["critic/score/mean"] == 0.0  # veRL's own metrics stay
    assert metrics["judge/samples"] == 6
    for verdict in VERDICTS:
        assert metrics[f"judge/verdict/{verdict}"] == pytest.approx(1 / 6), verdict
    assert metrics["judge/verdict/MLE"] == 0.0
    assert metrics["judge/has_code"] == pytest.approx(5 / 6)
    assert metrics["judge/compiled"] == pytest.approx(3 / 6)  # AC, WA, TLE
    # AC 4/4, WA 1/4, TLE stops at its first test (0 passed), others 0.
    assert metrics["judge/tests_passed_frac"] == pytest.approx((1 + 0.25) / 6)
    assert metrics["judge/failure"] == pytest.approx(1 / 6)
    assert metrics["judge/failures/JUDGE_ERROR"] == 1
    assert metrics["judge/failures/DEADLINE"] == metrics["judge/failures/WORKER_LOST"] == 0
    # The pool's window of the step: 4 programs judged (the broken truth never reaches it),
    # each audited once on the other worker, no flip; 2 judge CPUs.
    assert metrics["judge/jobs"] == 4 and metrics["judge/duplicates"] == 0
    assert metrics["judge/audit/audited"] == 4 and metrics["judge/audit/flips"] == 0
    assert metrics["judge/cpus"] == 2
    assert metrics["judge/cpu_seconds"] >= 0.5  # the TLE program used its 0.5 s
    assert metrics["judge/cpu_bound_seconds"] == pytest.approx(metrics["judge/cpu_seconds"] / 2)
    assert metrics["judge/wall_over_bound"] == pytest.approx(
        metrics["judge/wall_seconds"] / metrics["judge/cpu_bound_seconds"]
    )
    assert metrics["judge/queue_high_water"] >= 1


def test_each_step_prints_a_line_of_the_projects_with_the_judge_verdicts() -> None:
    from codefu_trainer.run.console import is_ours
    from codefu_trainer.training.verl.trainer import step_line

    metrics = {
        "judge/verdict/AC": 0.25,
        "judge/compiled": 0.5,
        "judge/has_code": 1.0,
        "judge/samples": 4.0,
    }
    line = step_line(2, 3, metrics)
    assert (
        line == "codefu-train: step 2/3 judged: AC 0.25, compiled 0.50, has code 1.00 of 4 samples"
    )
    assert is_ours(line)  # shown on a quiet console, also behind Ray's actor prefix
    assert step_line(1, None, {}) == "codefu-train: step 1 judged: no judge metrics"


def test_task_runner_is_verls_with_the_judge_trainer_mode() -> None:
    """What verl_main passes to run_ppo: veRL's TaskRunnerV1, whose run selects codefu_<mode>."""
    from verl.trainer.main_ppo import TaskRunnerV1

    from codefu_trainer.training.verl.trainer import judge_task_runner

    runner = judge_task_runner()
    body = runner.__ray_actor_class__
    assert issubclass(body, TaskRunnerV1.__ray_actor_class__)
    assert "run" in body.__dict__ and hasattr(runner, "remote")


def test_the_judge_trainer_runs_as_veRLs_own_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    """veRL's trainer reads trainer.v1.trainer_mode in its __init__ (replay buffer class,
    trainer.v1.<mode> settings, every `== "sync"` branch): codefu_sync must hand it "sync"."""
    from omegaconf import OmegaConf
    from verl.trainer.ppo.v1 import get_trainer_cls
    from verl.trainer.ppo.v1.trainer_base import PPOTrainer

    from codefu_trainer.training.verl.trainer import judge_trainer_name

    seen: list[str] = []
    # veRL's own __init__ needs workers and data; record what it would read.
    monkeypatch.setattr(
        PPOTrainer, "__init__", lambda self, config: seen.append(config.trainer.v1.trainer_mode)
    )
    config = OmegaConf.create({"trainer": {"v1": {"trainer_mode": "codefu_sync"}}})
    get_trainer_cls(judge_trainer_name("sync"))(config)
    assert seen == ["sync"]
    assert config.trainer.v1.trainer_mode == "sync"  # the task runner shares this config
    assert 'self.trainer_mode == "sync"' in inspect.getsource(PPOTrainer._build_replay_buffer)
