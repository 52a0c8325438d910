"""The verdict audit and the judge window: choice of submissions, flips, and the scheduler's
priority of first judgings over audits, over local processes and over Ray actors."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from codefu_sandbox import CheckerConfig
from codefu_sandbox.verdicts import Verdict
from codefu_trainer.reward.config import (
    FailureAlertConfig,
    RewardConfig,
    WorkerConfig,
    reward_config_from,
)
from codefu_trainer.reward.local_pool import LocalJudgePool, LocalTransport
from codefu_trainer.reward.rules import DEADLINE, JUDGE_ERROR, NO_CODE, JudgeSummary
from codefu_trainer.reward.scheduler import JudgeScheduler, Transport
from codefu_trainer.reward.service import RewardService, run_blocking
from codefu_trainer.reward.step_metrics import step_metrics
from codefu_trainer.reward.worker import JobOutcome, JudgeJob, audit_chosen, audit_flip

from ..conftest import own_ray_cluster
from .problems import (
    COMPILE_ERROR_PROGRAM,
    DIFF_PROGRAM,
    SPIN_PROGRAM,
    SUM_PROGRAM,
    cpp_request,
    respond,
    sum_ground_truth,
)

COMPARISON = CheckerConfig("codecontests")


def _job(source: str, tests_key: str = "t") -> JudgeJob:
    return JudgeJob(source, [], cpp_request(COMPARISON), 10.0, tests_key=tests_key)


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
        return JobOutcome(None, DEADLINE, "late", 1, node, seconds)
    summary = JudgeSummary(verdict, (verdict,), int(verdict == Verdict.AC), 1, 0.1, 0.2)
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
        pool = service._pool
        assert isinstance(pool, LocalJudgePool)
        scheduler = pool.scheduler
        pids = sorted(service.workers())

        async def acquire_avoiding_the_first() -> list[str]:
            taken = []
            for _ in range(4):
                worker = await scheduler._acquire(scheduler._workers[pids[0]], audit=True)
                assert worker is not None
                taken.append(worker.key)
                scheduler._release(worker, idle=True)
            return taken

        # An audit of a job judged by one worker takes the other one, every time.
        assert run_blocking(pool._on_loop(acquire_avoiding_the_first())) == [pids[1]] * 4
        service.take_window()
        results = service.score(BATCH, [truth] * len(BATCH))
        window = service.take_window()
        stats = service.stats()
    finally:
        service.close()
    v = Verdict
    assert [r["verdict"] for r in results] == [v.AC, v.WA, v.AC, v.CE, NO_CODE, v.TLE]
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


# First judgings before audits: the audit uses idle judge capacity only ------------------

TESTS = [("1 2\n", "3\n"), ("5 0\n", "5\n")]


def _program(i: int) -> str:
    """A small distinct a + b program (each is its own submission and compilation)."""
    return (
        f"#include <cstdio>\n// variant {i}\n"
        'int main() { long long a, b; std::scanf("%lld %lld", &a, &b);'
        ' std::printf("%lld\\n", a + b); }\n'
    )


def _sum_job(i: int) -> JudgeJob:
    return JudgeJob(_program(i), TESTS, cpp_request(COMPARISON, len(TESTS)), 60.0, tests_key="s")


async def _await_until(ready: Callable[[], bool], what: str) -> None:
    give_up = time.monotonic() + 60
    while not ready():
        assert time.monotonic() < give_up, f"never happened: {what}"
        await asyncio.sleep(0.01)


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[None]:
    pytest.importorskip("ray")
    pytest.importorskip("codefu_sandbox")
    # Logical CPUs to spare: a pool plans its workers on the available ones, and those of
    # the previous test's killed workers may not be released yet.
    with own_ray_cluster(num_cpus=4):
        yield


@pytest.fixture(params=["local", pytest.param("ray", marks=pytest.mark.ray)])
def new_scheduler(
    request: pytest.FixtureRequest, cache: Path
) -> Iterator[Callable[..., JudgeScheduler]]:
    """Makes schedulers over local worker processes, or over Ray actors on a local cluster
    (``new_scheduler(workers, **worker_settings)``); stops their workers after the test."""
    pytest.importorskip("codefu_sandbox")
    if request.param == "ray":
        request.getfixturevalue("ray_cluster")
    made: list[JudgeScheduler] = []

    def make(workers: int, **settings: Any) -> JudgeScheduler:
        config = WorkerConfig(cache_dir=str(cache), num_workers=workers, **settings)
        transport: Transport
        if request.param == "ray":
            from codefu_trainer.reward.judge_pool import RayTransport

            transport = RayTransport(config)
        else:
            transport = LocalTransport(config)
        made.append(JudgeScheduler(config, transport))
        return made[-1]

    yield make
    for scheduler in made:
        scheduler.shutdown()


@pytest.mark.slow
def test_waiting_first_judgings_are_judged_before_audits(
    new_scheduler: Callable[..., JudgeScheduler],
) -> None:
    """One worker, held while two audits and then three first judgings (another batch)
    queue for it: once free, it judges the three first judgings, then every audit (the
    queued ones and those of the three)."""

    async def scenario() -> tuple[list[bool], list[str], list[JobOutcome], dict[str, Any]]:
        pool = new_scheduler(1, audit_share=1.0)
        await pool.start()
        audited = [_sum_job(i) for i in range(2)]
        firsts = [await pool._judge(j) for j in audited]  # judged, not audited yet
        assert all(o.summary is not None and o.summary.verdict == Verdict.AC for o in firsts)
        audits_seen: list[bool] = []  # per worker taken: was it for an audit?
        sources_seen: list[str] = []  # the sources in the order the worker gets them
        acquire, judge = pool._acquire, pool._transport.judge

        async def spy_acquire(avoid: Any = None, *, audit: bool = False) -> Any:
            worker = await acquire(avoid, audit=audit)
            if worker is not None:
                audits_seen.append(audit)
            return worker

        async def spy_judge(worker: Any, job: JudgeJob) -> Any:
            sources_seen.append(job.source)
            return await judge(worker, job)

        pool._acquire = spy_acquire  # type: ignore[method-assign]
        pool._transport.judge = spy_judge  # type: ignore[method-assign]
        pool.take_window()
        held = pool._take_idle(None)
        assert held is not None
        audits = [
            asyncio.ensure_future(pool._audit(j, o)) for j, o in zip(audited, firsts, strict=True)
        ]
        await _await_until(lambda: pool._queued == 2, "both audits wait for the worker")
        later = [asyncio.ensure_future(pool.run(_sum_job(i))) for i in range(10, 13)]
        await _await_until(lambda: pool._first_waiting == 3, "the first judgings wait too")
        pool._idle.put_nowait(held.key)
        outcomes = list(await asyncio.gather(*later))
        await asyncio.gather(*audits)
        assert await pool.drain_audits() >= 0
        return audits_seen, sources_seen, outcomes, pool.take_window()

    audits_seen, sources_seen, outcomes, window = asyncio.run(scenario())
    assert [o.summary.verdict if o.summary else o.failure for o in outcomes] == [Verdict.AC] * 3
    # The three first judgings took the worker before any of the five audits.
    assert audits_seen == [False] * 3 + [True] * 5
    later = sorted(_sum_job(i).source for i in range(10, 13))
    assert sorted(sources_seen[:3]) == later
    assert sorted(sources_seen[3:]) == sorted(later + [_sum_job(i).source for i in range(2)])
    assert (window["jobs"], window["audited"], window["flips"], window["audit_failures"]) == (
        3,
        5,
        0,
        0,
    )


@pytest.mark.slow
def test_an_audit_waiting_for_priority_is_not_an_acquire_timeout(
    new_scheduler: Callable[..., JudgeScheduler],
) -> None:
    """An audit queued before a first judging on a held worker: the first judging gives up
    at its acquire timeout (a judge failure of that job); the audit, whose wait for priority
    does not count toward its own timeout, gets the worker freed just after and judges."""

    async def scenario() -> tuple[JobOutcome, dict[str, Any]]:
        pool = new_scheduler(1, audit_share=0.0, acquire_timeout_seconds=3.0)
        await pool.start()
        job = _sum_job(20)
        first = await pool._judge(job)
        pool.take_window()
        held = pool._take_idle(None)
        assert held is not None
        audit = asyncio.ensure_future(pool._audit(job, first))
        await _await_until(lambda: pool._queued == 1, "the audit waits for the worker")
        late = await pool.run(_sum_job(21))  # waits its 3 s, then gives up
        await asyncio.sleep(0.5)  # the audit, 3 s queued by now, still has its time
        pool._idle.put_nowait(held.key)
        await audit
        return late, pool.take_window()

    late, window = asyncio.run(scenario())
    assert late.summary is None and late.failure == JUDGE_ERROR
    assert "no judge worker became free" in late.detail
    # The first judging's failure is the step's; the audit judged (and agreed).
    assert (window["jobs"], window["audited"], window["audit_failures"]) == (1, 1, 0)
    assert window["flips"] == 0


@pytest.mark.slow
def test_two_audits_avoiding_each_others_worker_both_get_one(
    new_scheduler: Callable[..., JudgeScheduler],
) -> None:
    """Two audits waiting at once, each avoiding the worker the other needs, while the two
    held workers come free one after the other: each gets the one it may use (neither holds
    or passes back the worker it must not take; holding it deadlocked both until the acquire
    timeout)."""

    async def scenario() -> tuple[list[list[str]], list[str]]:
        pool = new_scheduler(2, acquire_timeout_seconds=30.0)
        rounds: list[list[str]] = []
        await pool.start()
        a, b = sorted(pool._workers.values(), key=lambda w: w.key)
        for _ in range(6):
            held = [pool._take_idle(None), pool._take_idle(None)]
            assert {w.key for w in held if w is not None} == {a.key, b.key}
            waiting = [asyncio.ensure_future(pool._acquire(avoid, audit=True)) for avoid in (a, b)]
            await _await_until(lambda: pool._queued == 2, "both audits wait")
            pool._idle.put_nowait(a.key)
            await asyncio.sleep(0.05)
            pool._idle.put_nowait(b.key)
            got = await asyncio.wait_for(asyncio.gather(*waiting), timeout=20)
            rounds.append([w.key if w is not None else "none" for w in got])
            for w in got:
                if w is not None:
                    pool._release(w, idle=True)
        return rounds, [a.key, b.key]

    rounds, (a_key, b_key) = asyncio.run(scenario())
    assert rounds == [[b_key, a_key]] * 6
