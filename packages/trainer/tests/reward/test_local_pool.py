"""Local judge worker processes: the Ray pool's results, a killed worker, a deadline."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path
from typing import Any

import pytest

from codefu_trainer.reward.config import DeadlineConfig, RewardConfig, WorkerConfig
from codefu_trainer.reward.service import RewardService

from ..conftest import own_ray_cluster
from .problems import (
    COMPILE_ERROR_PROGRAM,
    DIFF_PROGRAM,
    PY_BURN_PROGRAM,
    PY_SUM_PROGRAM,
    SLOW_SUM_PROGRAM,
    SPIN_PROGRAM,
    SUM_PROGRAM,
    respond,
    sum_ground_truth,
)

pytest.importorskip("codefu_sandbox")
pytestmark = pytest.mark.slow

TIMING_KEYS = {"compile_seconds", "run_seconds"}


def _batch() -> tuple[list[str], list[dict[str, Any]]]:
    """AC twice (one judging), WA, CE, no code, TLE, on two problems."""
    a = sum_ground_truth(name="sum-a", n_private=5)
    b = sum_ground_truth(name="sum-b", n_private=3, seconds=0.5)
    responses = [
        respond(SUM_PROGRAM),
        respond(DIFF_PROGRAM),
        respond(SUM_PROGRAM),
        respond(COMPILE_ERROR_PROGRAM),
        "I could not solve it.",
        respond(SPIN_PROGRAM),
        respond(SUM_PROGRAM),
    ]
    return responses, [a, a, a, b, b, b, b]


def _without_timings(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in TIMING_KEYS} for r in results]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One judge cache for the module: the precompiled header is built once."""
    return tmp_path_factory.mktemp("judge-cache")


def _config(cache: Path, workers: int) -> RewardConfig:
    return RewardConfig(worker=WorkerConfig(cache_dir=str(cache), num_workers=workers))


@pytest.mark.ray
def test_local_workers_give_the_same_results_as_the_ray_pool(cache: Path) -> None:
    pytest.importorskip("ray")
    responses, truths = _batch()
    config = _config(cache, workers=2)
    local = RewardService(config, local=True)
    try:
        local_results = local.score(responses, truths)
        stats = local.stats()
    finally:
        local.close()
    with own_ray_cluster(num_cpus=2):
        on_ray = RewardService(config)
        try:
            ray_results = on_ray.score(responses, truths)
        finally:
            on_ray.close()
    assert [r["verdict"] for r in local_results] == [
        "AC",
        "WA",
        "AC",
        "CE",
        "NO_CODE",
        "TLE",
        "AC",
    ]
    assert _without_timings(local_results) == _without_timings(ray_results)
    # Six responses with code, one repeating another on the same problem: judged once.
    assert (stats["jobs"], stats["shared"], stats["completed"]) == (5, 1, 5)
    assert stats["busy_ms"] > 0


def test_a_killed_worker_is_replaced_and_its_job_judged_again(cache: Path) -> None:
    service = RewardService(_config(cache, workers=1), local=True)
    try:
        [pid] = service.workers()
        # Twelve tests of a quarter second each: the kill lands mid-job.
        truth = sum_ground_truth(name="slow", n_private=12)
        timer = threading.Timer(1.5, os.kill, (int(pid), signal.SIGKILL))
        timer.start()
        [scored] = service.score_detailed([respond(SLOW_SUM_PROGRAM)], [truth])
        timer.join()
        assert scored.result.verdict == "AC"
        assert scored.outcome is not None and scored.outcome.attempts == 2
        stats = service.stats()
        assert (stats["workers_lost"], stats["retries"]) == (1, 1)
        assert list(service.workers()) != [pid]
    finally:
        service.close()


def test_a_job_past_its_deadline_fails_and_the_pool_goes_on(cache: Path) -> None:
    service = RewardService(_config(cache, workers=1), local=True)
    slow = sum_ground_truth(name="slow", n_private=24)  # about 6 s of CPU
    fast = sum_ground_truth(name="fast", n_private=2)
    try:
        # Warm: the precompiled header and the fast program's binary are cached.
        assert service.score([respond(SUM_PROGRAM)], [fast])[0]["verdict"] == "AC"
        service.config.deadline = DeadlineConfig(
            compile_seconds=2.0, wall_factor=0.0, per_test_overhead_seconds=0.0, slack_seconds=0.0
        )
        scored = service.score_detailed(
            [respond(SLOW_SUM_PROGRAM), respond(SUM_PROGRAM)], [slow, fast]
        )
        first, second = (s.result for s in scored)
        assert (first.verdict, first.judge_failure) == ("DEADLINE", 1)
        assert (second.verdict, second.score) == ("AC", 1.0)
        assert service.stats()["deadlines"] == 1
    finally:
        service.close()


def test_python_answers_are_judged_as_python_and_shared_per_language(cache: Path) -> None:
    truth = sum_ground_truth(name="sum-py", n_private=3, seconds=0.5)
    config = RewardConfig(
        languages=["cpp", "python"],
        # 0.4 s of CPU per test against 0.5 s x 0.5: the factor reaches the workers' judge.
        time_factors={"python": 0.5},
        worker=WorkerConfig(cache_dir=str(cache), num_workers=1),
    )
    responses = [
        respond(PY_SUM_PROGRAM, "python"),
        respond(PY_SUM_PROGRAM, "py"),  # the same (language, source): judged once
        respond(PY_SUM_PROGRAM, "cpp"),  # the same source as C++: its own job, a CE
        respond(PY_BURN_PROGRAM, "python3"),
        "```java\nclass A {}\n```",  # no language the judge knows: no code
    ]
    service = RewardService(config, local=True)
    try:
        results = service.score(responses, [truth] * len(responses))
        stats = service.stats()
    finally:
        service.close()
    assert [(r["verdict"], r["language"], r["score"]) for r in results] == [
        ("AC", "python", 1.0),
        ("AC", "python", 1.0),
        ("CE", "cpp", -0.5),
        ("TLE", "python", 0.0),
        ("NO_CODE", "", -1.0),
    ]
    assert (stats["jobs"], stats["shared"]) == (3, 1)
