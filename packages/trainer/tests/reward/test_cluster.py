"""Judging on a real 3-node Ray cluster: placement, deadlines, node loss."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from codefu_trainer.reward.config import DeadlineConfig, RewardConfig, WorkerConfig
from codefu_trainer.reward.service import RewardService, ScoredResponse

from .problems import (
    COMPILE_ERROR_PROGRAM,
    DIFF_PROGRAM,
    SLEEP_PROGRAM,
    SLOW_SUM_PROGRAM,
    SPIN_PROGRAM,
    SUM_PROGRAM,
    respond,
    sum_ground_truth,
)

ray = pytest.importorskip("ray")
from ray.cluster_utils import Cluster  # noqa: E402

pytestmark = [pytest.mark.ray, pytest.mark.slow]

FAST_HEALTH = {
    "health_check_initial_delay_ms": 0,
    "health_check_period_ms": 500,
    "health_check_failure_threshold": 3,
}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Head without the judge resource, two judge nodes (1 CPU each)."""
    c = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "_system_config": FAST_HEALTH},
    )
    judges = [c.add_node(num_cpus=1, resources={"judge": 1}) for _ in range(2)]
    c.wait_for_nodes()
    ray.init(address=c.address, log_to_driver=False)
    cache = tmp_path_factory.mktemp("judge-cache")
    try:
        yield {
            "cluster": c,
            "head_id": c.head_node.node_id,
            "judge_nodes": judges,
            "judge_ids": {n.node_id for n in judges},
            "cache": cache,
        }
    finally:
        ray.shutdown()
        c.shutdown()


@pytest.fixture(scope="module")
def service(cluster: dict[str, Any]) -> Iterator[RewardService]:
    """One service (one judge pool) for the module; tests change its deadline settings."""
    cfg = RewardConfig(worker=WorkerConfig(cache_dir=str(cluster["cache"])))
    svc = RewardService(cfg)
    try:
        yield svc
    finally:
        svc.close()


def test_judging_happens_only_on_judge_nodes(
    cluster: dict[str, Any], service: RewardService
) -> None:
    workers = service.workers()
    assert len(workers) == 2
    assert set(workers.values()) == cluster["judge_ids"]
    gt = sum_ground_truth(n_private=4)
    responses = [
        respond(SUM_PROGRAM),
        respond(SUM_PROGRAM, tag="c++"),
        respond(DIFF_PROGRAM),
        respond(COMPILE_ERROR_PROGRAM),
        respond(SLEEP_PROGRAM),
        "I could not solve it.",
    ]
    scored = service.score_detailed(responses, [gt] * len(responses))
    got = [(s.result.verdict, s.result.score) for s in scored]
    assert got == [
        ("AC", 1.0),
        ("AC", 1.0),
        ("WA", 0.25),
        ("CE", -0.5),
        ("TLE", 0.0),
        ("NO_CODE", -1.0),
    ]
    judged_on = {s.outcome.node_id for s in scored if s.outcome is not None}
    assert judged_on <= cluster["judge_ids"]
    assert cluster["head_id"] not in judged_on
    assert all(s.result.judge_failure == 0 for s in scored)
    # The dispatcher (no CPU) lives on the head, so losing a judge node cannot take it along.
    from ray.util.state import list_actors

    pools = list_actors(filters=[("class_name", "=", "JudgePoolActor"), ("state", "=", "ALIVE")])
    assert {a.node_id for a in pools} == {cluster["head_id"]}


def test_identical_responses_in_flight_are_judged_once(service: RewardService) -> None:
    gt = sum_ground_truth(name="shared", n_private=4)
    other = sum_ground_truth(name="shared-other", n_private=5)
    responses = [
        respond(SUM_PROGRAM),
        respond(SUM_PROGRAM, tag="c++"),  # the same code in another fence
        respond(SUM_PROGRAM),
        respond(DIFF_PROGRAM),
        respond(SUM_PROGRAM),  # the same code on other tests: judged on its own
    ]
    before = service.stats()
    scored = service.score_detailed(responses, [gt, gt, gt, gt, other])
    after = service.stats()
    got = [(s.result.verdict, s.result.passed, s.result.total) for s in scored]
    assert got == [("AC", 4, 4)] * 3 + [("WA", 1, 4), ("AC", 5, 5)]
    assert after["jobs"] - before["jobs"] == 3
    assert after["shared"] - before["shared"] == 2


def test_a_program_that_never_ends_is_cut_at_its_deadline(
    cluster: dict[str, Any], service: RewardService
) -> None:
    # The problem allows 30 s per test; the deadline (6 s, everything included) comes first.
    service.config.deadline = DeadlineConfig(
        compile_seconds=6.0, wall_factor=0.0, per_test_overhead_seconds=0.0, slack_seconds=0.0
    )
    try:
        slow = sum_ground_truth(name="slow", n_private=1, seconds=30.0)
        fast = sum_ground_truth(name="fast", n_private=3)
        scored = service.score_detailed(
            [respond(SPIN_PROGRAM), respond(SUM_PROGRAM), respond(SUM_PROGRAM)], [slow, fast, fast]
        )
    finally:
        service.config.deadline = DeadlineConfig()
    assert service.stats()["deadlines"] == 1
    first = scored[0].result
    assert (first.verdict, first.score, first.judge_failure) == ("DEADLINE", 0.0, 1)
    assert [(s.result.verdict, s.result.score) for s in scored[1:]] == [("AC", 1.0)] * 2


def test_killing_a_judge_node_mid_batch_still_completes_correctly(
    cluster: dict[str, Any], service: RewardService
) -> None:
    svc = service
    gt = sum_ground_truth(name="slow-sum", n_private=3, seconds=2.0)
    # ~0.75 s of CPU per slow response: the batch lasts several seconds after the kill.
    n = 16
    # Distinct sources (identical ones in flight would be judged once).
    responses = [
        respond(f"{SLOW_SUM_PROGRAM if i % 4 else DIFF_PROGRAM}// response {i}\n") for i in range(n)
    ]
    box: dict[str, list[ScoredResponse]] = {}
    before = svc.stats()
    # The worker killed at its deadline (previous test) is replaced: one per judge CPU again.
    for _ in range(1200):
        if len(svc.workers()) == 2:
            break
        time.sleep(0.1)
    assert set(svc.workers().values()) == cluster["judge_ids"]
    runner = threading.Thread(
        target=lambda: box.setdefault("scored", svc.score_detailed(responses, [gt] * n))
    )
    runner.start()
    # Kill one judge node once the batch is under way (a job has finished).
    for _ in range(600):
        if svc.stats()["completed"] > before["completed"]:
            break
        time.sleep(0.1)
    victim = cluster["judge_nodes"][1]
    cluster["cluster"].remove_node(victim, allow_graceful=False)
    runner.join(timeout=600)
    assert not runner.is_alive()
    stats = svc.stats()
    survivors = set(svc.workers().values())
    scored = box["scored"]
    expected = [("AC", 1.0) if i % 4 else ("WA", 1 / 3) for i in range(n)]
    assert [(s.result.verdict, pytest.approx(s.result.score)) for s in scored] == expected
    assert all(s.result.judge_failure == 0 for s in scored)
    assert stats["workers_lost"] > before["workers_lost"] and stats["retries"] > before["retries"]
    assert survivors == {cluster["judge_nodes"][0].node_id}
