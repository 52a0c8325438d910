"""The verdict audit and the judge window: choice of submissions, flips, local pool."""

from __future__ import annotations

from pathlib import Path

import pytest

from codefu_trainer.reward.config import (
    FailureAlertConfig,
    RewardConfig,
    WorkerConfig,
    reward_config_from,
)
from codefu_trainer.reward.rules import JudgeSummary
from codefu_trainer.reward.service import RewardService
from codefu_trainer.reward.step_metrics import step_metrics
from codefu_trainer.reward.worker import JobOutcome, JudgeJob, audit_chosen, audit_flip

from .problems import (
    COMPILE_ERROR_PROGRAM,
    DIFF_PROGRAM,
    SPIN_PROGRAM,
    SUM_PROGRAM,
    respond,
    sum_ground_truth,
)


def _job(source: str, tests_key: str = "t") -> JudgeJob:
    return JudgeJob(source, [], 1.0, 1 << 28, "codecontests", False, 10.0, tests_key=tests_key)


def test_audit_choice_is_about_the_share_and_reproducible() -> None:
    jobs = [_job(f"int main() {{ return {i}; }}") for i in range(4000)]
    for share in (0.01, 0.1, 0.5):
        chosen = sum(audit_chosen(j, share, seed=7) for j in jobs)
        # Binomial(4000, share): these bounds are more than 5 standard deviations wide.
        sd = (4000 * share * (1 - share)) ** 0.5
        assert abs(chosen - 4000 * share) < 5 * sd + 1, (share, chosen)
        assert chosen == sum(audit_chosen(j, share, seed=7) for j in jobs)
    assert not any(audit_chosen(j, 0.0) for j in jobs[:50])
    assert all(audit_chosen(j, 1.0) for j in jobs[:50])
    # Another seed audits other submissions.
    first = {j.source for j in jobs if audit_chosen(j, 0.1, seed=1)}
    second = {j.source for j in jobs if audit_chosen(j, 0.1, seed=2)}
    assert first != second


def test_submission_id_names_code_and_tests() -> None:
    assert _job("a").submission_id() == _job("a").submission_id()
    assert _job("a").submission_id() != _job("b").submission_id()
    assert _job("a", "t1").submission_id() != _job("a", "t2").submission_id()


def _outcome(verdict: str | None, seconds: float, node: str) -> JobOutcome:
    if verdict is None:
        return JobOutcome(None, "DEADLINE", "late", 1, node, seconds)
    summary = JudgeSummary(verdict, (verdict,), int(verdict == "AC"), 1, 0.1, 0.2)
    return JobOutcome(summary, None, "", 1, node, seconds)


def test_audit_flip_only_when_both_verdicts_differ() -> None:
    job = _job("int main(){}")
    assert audit_flip(job, _outcome("AC", 0.3, "n1"), _outcome("AC", 0.4, "n2")) is None
    assert audit_flip(job, _outcome("AC", 0.3, "n1"), _outcome(None, 9.0, "n2")) is None
    flip = audit_flip(job, _outcome("AC", 0.3, "n1"), _outcome("TLE", 2.5, "n2"))
    assert flip is not None
    assert (flip.submission, flip.first_verdict, flip.audit_verdict) == (
        job.submission_id(),
        "AC",
        "TLE",
    )
    assert (flip.first_seconds, flip.audit_seconds, flip.first_node, flip.audit_node) == (
        0.3,
        2.5,
        "n1",
        "n2",
    )


def test_audit_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="audit_share"):
        RewardConfig(worker=WorkerConfig(audit_share=1.5))
    with pytest.raises(ValueError, match="max_rate"):
        RewardConfig(failure_alert=FailureAlertConfig(max_rate=-0.1))
    # The Hydra group's keys are typed: a string share is refused by the schema.
    with pytest.raises(Exception, match="audit_share"):
        reward_config_from({"worker": {"audit_share": "often"}})
    cfg = reward_config_from({"worker": {"audit_share": 0.1}, "failure_alert": {"stop": True}})
    assert cfg.worker.audit_share == 0.1 and cfg.failure_alert.stop


BATCH = [
    respond(SUM_PROGRAM),
    respond(DIFF_PROGRAM),
    respond(SUM_PROGRAM),  # judged once with the first
    respond(COMPILE_ERROR_PROGRAM),
    "No code here.",
    respond(SPIN_PROGRAM),
]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("judge-cache")


@pytest.mark.slow
def test_local_pool_audits_every_job_on_another_worker(cache: Path) -> None:
    pytest.importorskip("codefu_sandbox")
    truth = sum_ground_truth(n_private=3, seconds=0.5)
    config = RewardConfig(worker=WorkerConfig(cache_dir=str(cache), num_workers=2, audit_share=1.0))
    service = RewardService(config, local=True)
    try:
        pool = service._local
        assert pool is not None
        pids = sorted(service.workers())
        # An audit of a job judged by one worker takes the other one, every time.
        for _ in range(4):
            worker = pool._acquire(avoid=pids[0])
            assert worker is not None and str(worker.process.pid) == pids[1]
            pool._free.put(worker)
        service.take_window()
        results = service.score(BATCH, [truth] * len(BATCH))
        window = service.take_window()
        stats = service.stats()
    finally:
        service.close()
    assert [r["verdict"] for r in results] == ["AC", "WA", "AC", "CE", "NO_CODE", "TLE"]
    # Four distinct submissions judged (the repeat shared), each audited, no flip.
    assert (window["jobs"], window["duplicates"], window["audited"]) == (4, 1, 4)
    assert (window["flips"], window["audit_failures"], stats["flips"]) == (0, 0, 0)
    assert stats["audits"] == 4 and window["cpus"] == 2
    assert window["run_cpu_seconds"] >= 0.5  # the TLE program ran its limit on a test
    m = step_metrics(results, window)
    assert m["judge/cpu_bound_seconds"] == pytest.approx(m["judge/cpu_seconds"] / 2)
    assert m["judge/wall_seconds"] > 0 and m["judge/audit/flip_rate"] == 0.0
    assert m["judge/verdict/TLE"] == pytest.approx(1 / 6)


@pytest.mark.slow
def test_no_audit_at_share_zero(cache: Path) -> None:
    pytest.importorskip("codefu_sandbox")
    config = RewardConfig(worker=WorkerConfig(cache_dir=str(cache), num_workers=1, audit_share=0.0))
    service = RewardService(config, local=True)
    try:
        service.score(BATCH[:2], [sum_ground_truth()] * 2)
        window = service.take_window()
    finally:
        service.close()
    assert (window["jobs"], window["audited"], window["cpus"]) == (2, 0, 1)


@pytest.mark.slow
def test_two_audits_avoiding_each_others_worker_both_get_one(cache: Path) -> None:
    """Two audits waiting at once, each avoiding the worker the other needs, while the
    workers come free one by one: neither may hold the worker it passes over (that
    deadlocked both until the acquire timeout)."""
    import time
    from concurrent.futures import ThreadPoolExecutor

    config = RewardConfig(
        worker=WorkerConfig(cache_dir=str(cache), num_workers=2, acquire_timeout_seconds=3)
    )
    service = RewardService(config, local=True)
    try:
        pool = service._local
        assert pool is not None
        a, b = sorted(service.workers())
        busy = {str(w.process.pid): w for w in (pool._free.get(), pool._free.get())}
        with ThreadPoolExecutor(max_workers=2) as threads:
            for _ in range(6):
                waiting = [threads.submit(pool._acquire, avoid) for avoid in (a, b)]
                time.sleep(0.1)  # both audits wait for a worker
                pool._free.put(busy[a])
                time.sleep(0.05)
                pool._free.put(busy[b])
                got = [w.result() for w in waiting]
                assert [w is not None and str(w.process.pid) for w in got] == [b, a]
    finally:
        service.close()
