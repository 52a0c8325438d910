"""The judge scheduler: which job runs on which worker, when, and what a failure becomes.

One ``JudgeScheduler`` (asyncio) serves both pools; a ``Transport`` starts and reaches the
workers: Ray actors (``judge_pool.RayTransport``) or local processes
(``local_pool.LocalTransport``). The rules, the same for both:

- One job per worker at a time (backpressure: other jobs wait in the scheduler, not on the
  workers). Waiting for a worker is bounded (``acquire_timeout_seconds``); then the job fails
  with ``JUDGE_ERROR``.
- A job has a deadline, started when a worker takes it; past it the job fails with
  ``DEADLINE`` and the stuck worker is stopped and replaced. A worker that dies (its process,
  or its node) makes the job run again on another worker, up to ``max_retries`` times; then
  ``WORKER_LOST``. A judge internal error (``IE``, never the program's fault) is retried the
  same way; an exception raised by the judge is a ``JUDGE_ERROR`` (deterministic, not
  retried). Nothing waits forever.
- A job identical to one in flight (same code, tests and limits: GRPO groups often repeat a
  response word for word) is not judged again; it gets that job's outcome.
- The verdict audit judges a share of the judged submissions (``audit_share``) again on
  another worker (another node when the workers span several) and compares the verdicts; a
  flip is a loud warning. An audit takes a worker only while no first judging waits for one
  (first judgings have priority; an audit already judging is not interrupted), and never
  holds a worker it passes over (two audits avoiding each other's worker would deadlock).
  The time it yields to first judgings (the priority clock) does not count toward its own
  acquire timeout.

Two ways in: ``run_many`` (the shared Ray pool: every job enters at once, audits run in the
background, ``drain_audits`` waits for them) and ``run_batch`` (one caller's offline batch:
identical jobs judged once, jobs enter as workers come free so a long batch never waits out
the acquire timeout, and the batch's audits are judged before it returns).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from codefu_sandbox import Verdict
from codefu_trainer.reward.config import WorkerConfig
from codefu_trainer.reward.rules import DEADLINE, JUDGE_ERROR, WORKER_LOST, JudgeSummary
from codefu_trainer.reward.step_metrics import Flip, JudgeWindow
from codefu_trainer.reward.worker import JobOutcome, JudgeJob, audit_chosen, audit_flip, pool_stats

__all__ = [
    "JudgePool",
    "JudgeRaised",
    "JudgeScheduler",
    "Metrics",
    "Transport",
    "Worker",
    "WorkerLost",
]

# How often an audit looks again for a worker other than the one that judged first.
AVOID_RETRY_SECONDS = 0.01
log = logging.getLogger(__name__)


@dataclass
class Worker:
    """A judge worker as the scheduler sees it; ``handle`` is the transport's."""

    key: str
    node_id: str
    handle: Any


class WorkerLost(Exception):
    """The worker (its process, or its node) died while judging."""


class JudgeRaised(Exception):
    """The judge raised on this job (the message is its traceback's end)."""


class Transport(Protocol):
    """Starts, reaches and stops judge workers."""

    async def start(self) -> list[Worker]:
        """The first workers; raises when none can start."""
        ...

    async def replenish(self, live: Mapping[str, Worker]) -> tuple[set[str], list[Worker]]:
        """The keys of ``live`` workers that are gone (their node died) and new workers
        started for those missing."""
        ...

    async def judge(self, worker: Worker, job: JudgeJob) -> JudgeSummary:
        """Judge ``job`` on ``worker``: ``TimeoutError`` past ``job.deadline_seconds``,
        ``WorkerLost`` when it died, ``JudgeRaised`` when the judge raised."""
        ...

    def stop(self, worker: Worker) -> None:
        """Stop a worker now (stuck past a deadline, lost, or the pool shuts down)."""
        ...


class Metrics(Protocol):
    """Where the scheduler reports (the Ray pool's ``ray.util.metrics``)."""

    def judged(self, outcome: JobOutcome) -> None: ...

    def duplicate(self) -> None: ...

    def audited(self, flip: Flip | None) -> None: ...

    def gauges(self, in_flight: int, queued: int, busy: int, workers: int) -> None: ...


class JudgePool(Protocol):
    """What ``RewardService`` holds: a scheduler and its workers, wherever they run
    (``judge_pool.RayJudgePool``: a shared Ray actor; ``local_pool.LocalJudgePool``: this
    process)."""

    def share_tests(self, tests: list[tuple[str, str]]) -> Any:
        """A problem's tests as its jobs will carry them (stored once)."""
        ...

    async def run_many(self, jobs: Sequence[JudgeJob]) -> list[JobOutcome]:
        """One outcome per job, in order (bounded by deadlines and retries)."""
        ...

    async def workers(self) -> dict[str, str]: ...

    async def stats(self) -> dict[str, int]: ...

    async def take_window(self) -> dict[str, Any]: ...

    async def drain_audits(self) -> int: ...

    def close(self) -> None: ...


class JudgeScheduler:
    """Jobs onto judge workers (see the module docstring)."""

    def __init__(
        self, config: WorkerConfig, transport: Transport, metrics: Metrics | None = None
    ) -> None:
        self._config = config
        self._transport = transport
        self._metrics = metrics
        self._workers: dict[str, Worker] = {}
        self._idle: asyncio.Queue[str] = asyncio.Queue()
        self._started = False
        self._start_lock = asyncio.Lock()
        self._replenishing: asyncio.Task[None] | None = None
        self._lost_since_replenish = False
        self._in_flight: dict[tuple[Any, ...], asyncio.Future[JobOutcome]] = {}
        self._in_flight_jobs = 0  # jobs in the pool: waiting for a worker or judged
        self._busy = 0  # workers judging now
        self._queued = 0  # judgings waiting for a worker
        self._first_waiting = 0  # of them first judgings (not audits): they go first
        self._no_first_waiting = asyncio.Event()  # set while _first_waiting == 0
        self._no_first_waiting.set()
        self._priority_since = 0.0  # when _first_waiting last went from 0 to 1
        self._priority_seconds = 0.0  # total time with _first_waiting > 0 before that
        self._audits: set[asyncio.Future[None]] = set()
        self._stats = pool_stats()
        self.window = JudgeWindow()

    # Workers ---------------------------------------------------------------------------

    def _add(self, workers: Sequence[Worker]) -> None:
        for worker in workers:
            self._workers[worker.key] = worker
            self._idle.put_nowait(worker.key)

    async def start(self) -> None:
        """Start the workers (once); raises when none can start."""
        async with self._start_lock:
            if self._started:
                return
            self._add(await self._transport.start())
            self._started = True

    def _drop(self, worker: Worker) -> None:
        """Stop a worker and start a replacement (in the background)."""
        self._workers.pop(worker.key, None)
        self._transport.stop(worker)
        self._lost_since_replenish = True
        if self._replenishing is None or self._replenishing.done():
            self._replenishing = asyncio.ensure_future(self._replenish())

    async def _replenish(self) -> None:
        """Start the workers missing, until none was lost meanwhile."""
        while self._lost_since_replenish:
            self._lost_since_replenish = False
            try:
                gone, new = await self._transport.replenish(self._workers)
            except Exception:
                log.exception("replacing lost judge workers failed")
                return
            for key in gone:
                self._workers.pop(key, None)
            self._add(new)

    def _acceptable(self, worker: Worker, avoid: Worker | None) -> bool:
        """For an audit: another node when the pool spans several, else another worker."""
        if avoid is None:
            return True
        if len({w.node_id for w in self._workers.values()}) > 1:
            return worker.node_id != avoid.node_id
        if len(self._workers) > 1:
            return worker.key != avoid.key
        return True

    def _take_idle(self, avoid: Worker | None) -> Worker | None:
        """The first idle worker acceptable for ``avoid`` taken from the queue, the others
        left queued in order; None when none is. No await inside: two audits cannot pass
        each other's workers back and forth."""
        keys: list[str] = []
        while not self._idle.empty():
            keys.append(self._idle.get_nowait())
        chosen: Worker | None = None
        for key in keys:
            worker = self._workers.get(key)
            if worker is None:
                continue  # dropped meanwhile
            if chosen is None and self._acceptable(worker, avoid):
                chosen = worker
            else:
                self._idle.put_nowait(key)
        return chosen

    def _first_judgings_waiting(self, change: int) -> None:
        """Count first judgings waiting for a worker (+1 / -1) and run the priority clock."""
        before = self._first_waiting
        self._first_waiting += change
        now = time.monotonic()
        if before == 0 and self._first_waiting > 0:
            self._priority_since = now
            self._no_first_waiting.clear()
        elif before > 0 and self._first_waiting == 0:
            self._priority_seconds += now - self._priority_since
            self._no_first_waiting.set()

    def _priority_clock(self) -> float:
        """Seconds so far during which first judgings waited for a worker."""
        total = self._priority_seconds
        if self._first_waiting:
            total += time.monotonic() - self._priority_since
        return total

    async def _acquire(self, avoid: Worker | None = None, *, audit: bool = False) -> Worker | None:
        """An idle worker (one acceptable for an audit of ``avoid``'s judging), or None when
        none came within ``acquire_timeout_seconds``. An audit never holds a worker it
        passes over: it takes an acceptable one from the idle queue in one step, or waits.
        An audit takes a worker only while no first judging waits for one."""
        started = time.monotonic()
        yielded_at_start = self._priority_clock()
        self.window.queued()
        self._queued += 1
        if not audit:
            self._first_judgings_waiting(+1)
        try:
            while True:
                if audit and self._first_waiting:
                    await self._no_first_waiting.wait()
                    continue  # a first judging may have come meanwhile
                worker = self._take_idle(avoid)
                if worker is not None:
                    self._busy += 1
                    return worker
                waited = time.monotonic() - started
                if audit:
                    # Time while first judgings had priority does not count toward an
                    # audit's acquire timeout: that timeout is for workers that do not come
                    # back, and the first judgings it yields to are bounded by their own.
                    waited -= self._priority_clock() - yielded_at_start
                remaining = self._config.acquire_timeout_seconds - waited
                if remaining <= 0:
                    return None
                if not self._idle.empty():  # only workers this audit must not use are idle
                    await asyncio.sleep(min(AVOID_RETRY_SECONDS, remaining))
                    continue
                try:
                    key = await asyncio.wait_for(self._idle.get(), timeout=remaining)
                except TimeoutError:
                    continue  # out of time, unless first judgings had priority meanwhile
                self._idle.put_nowait(key)  # looked at by `_take_idle` with the rest
        finally:
            if not audit:
                self._first_judgings_waiting(-1)
            self.window.dequeued()
            self._queued -= 1
            self._gauges()

    def _release(self, worker: Worker, *, idle: bool) -> None:
        """A worker's job ended: back to the idle queue (or already dropped)."""
        self._busy = max(0, self._busy - 1)
        if idle:
            self._idle.put_nowait(worker.key)
        self._gauges()

    def _gauges(self) -> None:
        if self._metrics is not None:
            self._metrics.gauges(self._in_flight_jobs, self._queued, self._busy, len(self._workers))

    # Jobs ------------------------------------------------------------------------------

    async def run(self, job: JudgeJob) -> JobOutcome:
        """Judge one job on some worker, or share the outcome of an identical job in
        flight; always returns (bounded by deadline and retries)."""
        identity = job.identity()
        if identity is None:
            return await self._run(job)
        running = self._in_flight.get(identity)
        if running is None:
            running = asyncio.ensure_future(self._run(job))
            self._in_flight[identity] = running
            running.add_done_callback(lambda _: self._in_flight.pop(identity, None))
        else:
            self._shared()
        # Shielded: a caller that gives up does not cancel the run others wait for.
        return await asyncio.shield(running)

    def _shared(self) -> None:
        self._stats["shared"] += 1
        self.window.duplicate()
        if self._metrics is not None:
            self._metrics.duplicate()

    async def _run(self, job: JudgeJob) -> JobOutcome:
        await self.start()
        self._stats["jobs"] += 1
        arrived = time.monotonic()
        self._in_flight_jobs += 1
        try:
            outcome = await self._judge(job)
        finally:
            self._in_flight_jobs -= 1
            self._gauges()
        summary = outcome.summary
        self.window.done(
            arrived,
            time.monotonic(),
            outcome.seconds,
            summary.compile_seconds if summary else 0.0,
            summary.run_seconds if summary else 0.0,
        )
        if summary is not None:
            self._stats["completed"] += 1
        if self._metrics is not None:
            self._metrics.judged(outcome)
        if summary is not None and audit_chosen(
            job, self._config.audit_share, self._config.audit_seed
        ):
            task = asyncio.ensure_future(self._audit(job, outcome))
            self._audits.add(task)
            task.add_done_callback(self._audits.discard)
        return outcome

    async def _audit(self, job: JudgeJob, first: JobOutcome) -> None:
        """Judge ``job`` again on another worker (node) and compare the verdicts."""
        self._stats["audits"] += 1
        audit = await self._judge(job, avoid=self._workers.get(first.worker), audit=True)
        flip = audit_flip(job, first, audit)
        self.window.audit(audit.seconds, flip, failed=audit.summary is None)
        if self._metrics is not None:
            self._metrics.audited(flip)
        if flip is not None:
            self._stats["flips"] += 1
            log.warning("VERDICT FLIP (judge audit): %s", flip.describe())

    async def _judge(
        self, job: JudgeJob, avoid: Worker | None = None, *, audit: bool = False
    ) -> JobOutcome:
        """Judge ``job`` on an idle worker (retries, deadline, replacement of lost workers);
        ``audit``: a verdict audit's judging, which yields workers to first judgings."""
        attempts = 0
        busy = 0.0
        while True:
            worker = await self._acquire(avoid, audit=audit)
            if worker is None:
                return JobOutcome(
                    None, JUDGE_ERROR, "no judge worker became free in time", attempts
                )
            attempts += 1
            started = time.monotonic()
            try:
                summary = await self._transport.judge(worker, job)
            except TimeoutError:
                busy += time.monotonic() - started
                self._stats["deadlines"] += 1
                log.warning(
                    "judge job passed its %.1f s deadline on %s; replacing the worker. A hung "
                    "worker, or a host too busy to give the judge CPU (Ray's workers run at "
                    "niceness 15 unless RAY_worker_niceness says otherwise when Ray starts); "
                    "reward.deadline.* sets the allowance",
                    job.deadline_seconds,
                    worker.key,
                )
                self._release(worker, idle=False)
                self._drop(worker)
                why = f"no answer within {job.deadline_seconds:.1f} s"
                return JobOutcome(None, DEADLINE, why, attempts, worker.node_id, busy, worker.key)
            except WorkerLost as e:
                busy += time.monotonic() - started
                self._stats["workers_lost"] += 1
                self._release(worker, idle=False)
                self._drop(worker)
                if attempts > self._config.max_retries:
                    return JobOutcome(
                        None, WORKER_LOST, str(e), attempts, worker.node_id, busy, worker.key
                    )
                self._stats["retries"] += 1
                log.warning("judge worker %s died (%s); judging again", worker.key, e)
                continue
            except JudgeRaised as e:
                # The judge itself raised: deterministic, so not retried.
                busy += time.monotonic() - started
                self._release(worker, idle=True)
                return JobOutcome(
                    None, JUDGE_ERROR, str(e), attempts, worker.node_id, busy, worker.key
                )
            elapsed = time.monotonic() - started
            busy += elapsed
            self._stats["busy_ms"] += round(elapsed * 1000)
            self._release(worker, idle=True)
            if summary.verdict == Verdict.IE and attempts <= self._config.max_retries:
                # An internal error of the judge is never the program's fault and is usually
                # transient (resources of a loaded node): judge it again.
                self._stats["retries"] += 1
                self._stats["internal_errors"] += 1
                log.warning("judge internal error on %s; judging again", worker.key)
                continue
            return JobOutcome(summary, None, "", attempts, summary.node_id, busy, worker.key)

    async def run_many(self, jobs: Sequence[JudgeJob]) -> list[JobOutcome]:
        """Every job at once (the shared pool's way in); their audits run in the background."""
        return list(await asyncio.gather(*(self.run(job) for job in jobs)))

    async def run_batch(self, jobs: Sequence[JudgeJob]) -> list[JobOutcome]:
        """One caller's batch, in the order given: identical jobs judged once, at most two
        jobs per worker in the pool at a time (one judged, one waiting, so the audits wait
        for the batch), and the audits judged before it returns."""
        await self.start()
        first: dict[tuple[Any, ...], int] = {}
        unique: list[JudgeJob] = []
        slot: list[int] = []
        for job in jobs:
            identity = job.identity()
            if identity is not None and identity in first:
                self._shared()
                slot.append(first[identity])
                continue
            if identity is not None:
                first[identity] = len(unique)
            slot.append(len(unique))
            unique.append(job)
        admitted = asyncio.Semaphore(2 * max(1, len(self._workers)))

        async def admit(job: JudgeJob) -> JobOutcome:
            async with admitted:
                return await self.run(job)

        outcomes = await asyncio.gather(*(admit(job) for job in unique))
        await self.drain_audits()
        return [outcomes[i] for i in slot]

    async def drain_audits(self) -> int:
        """Wait for the audits under way; returns how many there were."""
        pending = list(self._audits)
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        return len(pending)

    async def workers(self) -> dict[str, str]:
        """Live workers: key → node id (starts them if needed)."""
        await self.start()
        return {key: w.node_id for key, w in self._workers.items()}

    def stats(self) -> dict[str, int]:
        """The counters (``worker.pool_stats``)."""
        return dict(self._stats)

    def take_window(self) -> dict[str, Any]:
        """The judging since the last call (``step_metrics.WindowStats`` as a dict)."""
        cpus = len(self._workers) * self._config.cpus_per_worker
        return self.window.take(cpus).to_dict()

    def shutdown(self) -> None:
        """Cancel the audits and stop every worker."""
        for task in list(self._audits):
            task.cancel()
        if self._replenishing is not None:
            self._replenishing.cancel()
        for key in list(self._workers):
            worker = self._workers.pop(key)
            with contextlib.suppress(Exception):
                self._transport.stop(worker)
