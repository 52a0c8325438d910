"""Judging in local worker processes, for offline scoring without a Ray cluster.

``codefu-reward score`` and ``codefu-eval`` judge here when no cluster is named (no
``--address``, no ``RAY_ADDRESS``): starting a local Ray cluster costs 10 s or more, a
worker process a fraction of a second. Each worker process runs the same
``worker.JudgeWorker`` as the Ray pool's actors, so the verdicts are the same; the rules
of ``judge_pool.JudgePool`` hold here too:

- one job per worker at a time, jobs taken in the order given (the service puts the
  longest first), identical jobs of a batch judged once;
- a share of the judged jobs (``audit_share``) is judged again on another worker after the
  batch, and a changed verdict is a loud warning (the verdict audit); an audit takes a
  worker only while no first judging (of any batch) waits for one;
- a job has a deadline from the moment a worker takes it; past it the worker is killed
  and replaced and the job fails with ``DEADLINE``;
- a worker that dies makes the job run again on a fresh worker, up to ``max_retries``
  times, then ``WORKER_LOST``; a judge internal error (``IE``) is retried the same way;
  an exception raised by the judge is a ``JUDGE_ERROR`` (deterministic, not retried).

A problem's tests cross to a worker once: each worker keeps the tests of its last
``TESTS_KEPT`` problems, and the pool mirrors that cache to know what to send.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import queue
import threading
import time
import traceback
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from codefu_trainer.reward.config import WorkerConfig
from codefu_trainer.reward.rules import DEADLINE, JUDGE_ERROR, WORKER_LOST
from codefu_trainer.reward.step_metrics import JudgeWindow
from codefu_trainer.reward.worker import (
    JobOutcome,
    JudgeJob,
    JudgeWorker,
    audit_chosen,
    audit_flip,
    pool_stats,
)

__all__ = ["LocalJudgePool"]

# How often an audit looks again for a worker other than the one that judged first.
AVOID_RETRY_SECONDS = 0.01
log = logging.getLogger(__name__)

TESTS_KEPT = 8
LOCAL_NODE = "local"


def _remember(kept: OrderedDict[str, Any], key: str, tests: Any) -> None:
    """The tests cache policy, shared by a worker and the pool's mirror of it."""
    kept[key] = tests
    kept.move_to_end(key)
    while len(kept) > TESTS_KEPT:
        kept.popitem(last=False)


def _serve(conn: Connection, cache_dir: str | None) -> None:
    """A worker process: answer judge requests on ``conn`` until it closes."""
    worker = JudgeWorker(cache_dir, LOCAL_NODE)
    kept: OrderedDict[str, Any] = OrderedDict()
    conn.send(("ready", os.getpid()))
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        kwargs, tests_key, tests = message
        if tests is None:
            tests = kept[tests_key]
            kept.move_to_end(tests_key)
        elif tests_key:
            _remember(kept, tests_key, tests)
        try:
            conn.send(("ok", worker.judge(tests=tests, **kwargs)))
        except Exception:
            conn.send(("error", traceback.format_exc()[-2000:]))


class _WorkerLost(Exception):
    """The worker process died or closed its end."""


@dataclass
class _Process:
    process: BaseProcess
    conn: Connection
    kept: OrderedDict[str, Any] = field(default_factory=OrderedDict)

    def kill(self) -> None:
        self.process.kill()
        self.process.join(timeout=5)
        self.conn.close()


class LocalJudgePool:
    """Judge workers as local processes (see the module docstring)."""

    def __init__(self, config: WorkerConfig) -> None:
        self._config = config
        self._size = max(1, config.num_workers or os.cpu_count() or 1)
        self._context = multiprocessing.get_context("spawn")
        self._free: queue.Queue[_Process] = queue.Queue()
        self._all: list[_Process] = []
        self._lock = threading.Lock()
        # One acquirer looks at the free queue at a time; notified when no first judging
        # waits any more (audits wait for that).
        self._take = threading.Condition()
        self._first_waiting = 0  # first judgings (not audits) waiting for a worker
        self._priority_since = 0.0  # when _first_waiting last went from 0 to 1
        self._priority_seconds = 0.0  # total time with _first_waiting > 0 before that
        self._started = False
        self.stats = pool_stats()
        self.window = JudgeWindow()

    def _count(self, name: str, n: int = 1) -> None:
        with self._lock:
            self.stats[name] += n

    # Workers ---------------------------------------------------------------------------

    def _spawn(self) -> _Process:
        """A new worker process, answering once it is ready (bounded wait)."""
        parent, child = self._context.Pipe()
        process = self._context.Process(
            target=_serve, args=(child, self._config.cache_dir), daemon=True
        )
        process.start()
        child.close()
        worker = _Process(process, parent)
        if not parent.poll(self._config.start_timeout_seconds):
            worker.kill()
            raise RuntimeError(
                f"a local judge worker did not start within {self._config.start_timeout_seconds}"
                " s: check that codefu-sandbox imports in this environment"
            )
        try:
            parent.recv()
        except (EOFError, OSError) as e:
            worker.kill()
            raise RuntimeError(
                f"a local judge worker exited while starting (exit code {process.exitcode})"
            ) from e
        with self._lock:
            self._all.append(worker)
        return worker

    def _retire(self, worker: _Process) -> None:
        worker.kill()
        with self._lock:
            if worker in self._all:
                self._all.remove(worker)

    def start(self) -> None:
        """Start the worker processes (in parallel); raises when one cannot start."""
        with self._lock:
            if self._started:
                return
            self._started = True
        with ThreadPoolExecutor(max_workers=self._size) as pool:
            for worker in pool.map(lambda _: self._spawn(), range(self._size)):
                self._free.put(worker)

    def workers(self) -> dict[str, str]:
        """Live workers: process id → node (``local``)."""
        self.start()
        with self._lock:
            return {str(w.process.pid): LOCAL_NODE for w in self._all}

    def close(self) -> None:
        """Ask every worker to exit; kill those that do not."""
        with self._lock:
            workers, self._all = list(self._all), []
        for worker in workers:
            with contextlib.suppress(OSError):
                worker.conn.send(None)
        for worker in workers:
            worker.process.join(timeout=5)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join(timeout=5)
            worker.conn.close()

    # Jobs ------------------------------------------------------------------------------

    def _ask(self, worker: _Process, job: JudgeJob) -> tuple[str, Any]:
        """Send a job to a worker and wait for its answer (at most the job's deadline)."""
        send_tests = job.tests if not job.tests_key or job.tests_key not in worker.kept else None
        kwargs = {
            "source": job.source,
            "time_seconds": job.time_seconds,
            "memory_bytes": job.memory_bytes,
            "checker": job.checker,
            "stop_on_first_failure": job.stop_on_first_failure,
            "stop_on_timeout": job.stop_on_timeout,
            "checker_params": job.checker_params,
        }
        try:
            worker.conn.send((kwargs, job.tests_key, send_tests))
            if job.tests_key:
                _remember(worker.kept, job.tests_key, None)
            answered = worker.conn.poll(job.deadline_seconds)
            answer: tuple[str, Any] = worker.conn.recv() if answered else ("deadline", None)
        except (EOFError, OSError) as e:
            raise _WorkerLost(str(e) or type(e).__name__) from e
        return answer

    def _take_free(self, avoid: str) -> _Process | None:
        """The first free worker other than ``avoid`` (any when there is one worker) taken
        from the queue, the others left queued; None when none is. The caller holds
        ``self._take``, so two audits cannot pass each other's workers back and forth."""
        taken: list[_Process] = []
        with contextlib.suppress(queue.Empty):
            while True:
                taken.append(self._free.get_nowait())
        chosen: _Process | None = None
        for worker in taken:
            usable = not avoid or self._size == 1 or str(worker.process.pid) != avoid
            if chosen is None and usable:
                chosen = worker
            else:
                self._free.put(worker)
        return chosen

    def _first_judgings_waiting(self, change: int) -> None:
        """Count first judgings waiting for a worker (+1 / -1) and run the priority clock;
        the caller holds ``self._take``."""
        before = self._first_waiting
        self._first_waiting += change
        now = time.monotonic()
        if before == 0 and self._first_waiting > 0:
            self._priority_since = now
        elif before > 0 and self._first_waiting == 0:
            self._priority_seconds += now - self._priority_since
            self._take.notify_all()

    def _priority_clock(self) -> float:
        """Seconds so far during which first judgings waited for a worker."""
        with self._take:
            total = self._priority_seconds
            if self._first_waiting:
                total += time.monotonic() - self._priority_since
            return total

    def _acquire(self, avoid: str, *, audit: bool = False) -> _Process | None:
        """A free worker (another than the one keyed ``avoid`` when there are several), or
        None when none came within ``acquire_timeout_seconds``. An audit never holds a
        worker it passes over (two audits avoiding each other's worker would deadlock),
        and takes one only while no first judging waits for one."""
        started = time.monotonic()
        yielded_at_start = self._priority_clock()
        self.window.queued()
        if not audit:
            with self._take:
                self._first_judgings_waiting(+1)
        try:
            while True:
                with self._take:
                    if audit:
                        self._take.wait_for(lambda: self._first_waiting == 0)
                    worker = self._take_free(avoid)
                if worker is not None:
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
                if not self._free.empty():  # only the worker this audit must not use
                    time.sleep(min(AVOID_RETRY_SECONDS, remaining))
                    continue
                with contextlib.suppress(queue.Empty):  # out of time, unless yielded
                    self._free.put(self._free.get(timeout=remaining))  # wait for one
        finally:
            if not audit:
                with self._take:
                    self._first_judgings_waiting(-1)
            self.window.dequeued()

    def _run(self, job: JudgeJob) -> JobOutcome:
        arrived = time.monotonic()
        outcome = self._judge(job)
        summary = outcome.summary
        self.window.done(
            arrived,
            time.monotonic(),
            outcome.seconds,
            summary.compile_seconds if summary else 0.0,
            summary.run_seconds if summary else 0.0,
        )
        if summary is not None:
            self._count("completed")
        return outcome

    def _audit(self, item: tuple[JudgeJob, JobOutcome]) -> None:
        """Judge a job again on another worker and compare the verdicts."""
        job, first = item
        self._count("audits")
        audit = self._judge(job, avoid=first.worker, audit=True)
        flip = audit_flip(job, first, audit)
        self.window.audit(audit.seconds, flip, failed=audit.summary is None)
        if flip is not None:
            self._count("flips")
            log.warning("VERDICT FLIP (judge audit): %s", flip.describe())

    def _judge(self, job: JudgeJob, avoid: str = "", *, audit: bool = False) -> JobOutcome:
        """Judge ``job`` on a free worker (retries, deadline, replacement of lost workers);
        ``audit``: a verdict audit's judging, which yields workers to first judgings."""
        attempts = 0
        busy = 0.0
        while True:
            worker = self._acquire(avoid, audit=audit)
            if worker is None:
                return JobOutcome(None, JUDGE_ERROR, "no judge worker became free in time")
            key = str(worker.process.pid)
            attempts += 1
            started = time.monotonic()
            try:
                kind, value = self._ask(worker, job)
            except _WorkerLost:
                busy += time.monotonic() - started
                self._count("workers_lost")
                self._retire(worker)
                why = f"local judge worker died (exit code {worker.process.exitcode})"
                self._free.put(self._spawn())
                if attempts > self._config.max_retries:
                    return JobOutcome(None, WORKER_LOST, why, attempts, LOCAL_NODE, busy, key)
                self._count("retries")
                log.warning("%s; judging again", why)
                continue
            if kind == "deadline":
                busy += time.monotonic() - started
                self._count("deadlines")
                log.warning("judge job passed its %.1f s deadline", job.deadline_seconds)
                self._retire(worker)
                self._free.put(self._spawn())
                return JobOutcome(
                    None,
                    DEADLINE,
                    f"no answer within {job.deadline_seconds:.1f} s",
                    attempts,
                    LOCAL_NODE,
                    busy,
                    key,
                )
            elapsed = time.monotonic() - started
            busy += elapsed
            self._count("busy_ms", round(elapsed * 1000))
            self._free.put(worker)
            if kind == "error":
                return JobOutcome(None, JUDGE_ERROR, str(value), attempts, LOCAL_NODE, busy, key)
            if value.verdict == "IE" and attempts <= self._config.max_retries:
                self._count("retries")
                self._count("internal_errors")
                log.warning("judge internal error; judging again")
                continue
            return JobOutcome(value, None, "", attempts, LOCAL_NODE, busy, key)

    def run_many(self, jobs: Sequence[JudgeJob]) -> list[JobOutcome]:
        """Judge ``jobs`` in the order given, identical ones once; one outcome per job.
        The verdict audit's share of them is then judged again (``WorkerConfig.audit_share``).
        """
        self.start()
        first: dict[Any, int] = {}
        unique: list[JudgeJob] = []
        slot: list[int] = []
        for job in jobs:
            identity = job.identity()
            if identity is not None and identity in first:
                self._count("shared")
                self.window.duplicate()
                slot.append(first[identity])
                continue
            if identity is not None:
                first[identity] = len(unique)
            slot.append(len(unique))
            unique.append(job)
        self._count("jobs", len(unique))
        # As many threads as workers: each takes the next job when its worker is free.
        with ThreadPoolExecutor(max_workers=self._size) as pool:
            outcomes = list(pool.map(self._run, unique))
            audits = [
                (job, outcome)
                for job, outcome in zip(unique, outcomes, strict=True)
                if outcome.summary is not None
                and audit_chosen(job, self._config.audit_share, self._config.audit_seed)
            ]
            list(pool.map(self._audit, audits))
        return [outcomes[i] for i in slot]

    def take_window(self) -> dict[str, Any]:
        """The judging since the last call (``step_metrics.WindowStats`` as a dict)."""
        return self.window.take(self._size).to_dict()
