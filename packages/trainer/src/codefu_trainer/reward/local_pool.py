"""Judging in local worker processes, for offline scoring without a Ray cluster.

``codefu-reward score`` and ``codefu-eval`` judge here when no cluster is named (no
``--address``, no ``RAY_ADDRESS``): starting a local Ray cluster costs 10 s or more, a
worker process a fraction of a second. Each worker process runs the same
``worker.JudgeWorker`` as the Ray pool's actors, and the same ``scheduler.JudgeScheduler``
decides what runs where, so the verdicts and the rules (priority, deadlines, retries,
dedup, audit) are the same:

- ``LocalTransport`` starts the processes (``num_workers``, else one per CPU) and talks to
  them over pipes; a process lost or stopped at a deadline is replaced by a fresh one.
- ``LocalJudgePool`` is what ``RewardService`` holds: the scheduler on an event loop in a
  thread of this process, fed one batch at a time (``JudgeScheduler.run_batch``: jobs in
  the order given, identical ones once, the batch's audits judged before it returns).

A problem's tests cross to a worker once: each worker keeps the tests of its last
``TESTS_KEPT`` problems, and the transport mirrors that cache to know what to send.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import threading
import traceback
from collections import OrderedDict
from collections.abc import Callable, Coroutine, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any, TypeVar

from codefu_trainer.reward.config import WorkerConfig
from codefu_trainer.reward.rules import JudgeSummary
from codefu_trainer.reward.scheduler import JudgeRaised, JudgeScheduler, Worker, WorkerLost
from codefu_trainer.reward.worker import JobOutcome, JudgeJob, JudgeWorker

__all__ = ["LocalJudgePool", "LocalTransport"]

T = TypeVar("T")

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
        source, request, tests_key, tests = message
        if tests is None:
            tests = kept[tests_key]
            kept.move_to_end(tests_key)
        elif tests_key:
            _remember(kept, tests_key, tests)
        try:
            conn.send(("ok", worker.judge(source, tests, request)))
        except Exception:
            conn.send(("error", traceback.format_exc()[-2000:]))


@dataclass
class _Process:
    process: BaseProcess
    conn: Connection
    kept: OrderedDict[str, Any] = field(default_factory=OrderedDict)

    def kill(self) -> None:
        self.process.kill()
        self.process.join(timeout=5)
        self.conn.close()


class LocalTransport:
    """Judge workers as local processes (``scheduler.Transport``); a worker's key is its
    process id."""

    def __init__(self, config: WorkerConfig) -> None:
        self._config = config
        self.size = max(1, config.num_workers or os.cpu_count() or 1)
        self._context = multiprocessing.get_context("spawn")
        # Blocking pipe waits and process starts: one thread per worker judging or starting.
        self._threads = ThreadPoolExecutor(2 * self.size, thread_name_prefix="codefu-judge")

    def _spawn(self) -> Worker:
        """A new worker process, answering once it is ready (bounded wait)."""
        parent, child = self._context.Pipe()
        process = self._context.Process(
            target=_serve,
            args=(child, self._config.cache_dir),
            daemon=True,
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
        return Worker(str(process.pid), LOCAL_NODE, worker)

    async def _spawn_many(self, count: int) -> list[Worker]:
        loop = asyncio.get_running_loop()
        return list(
            await asyncio.gather(
                *(loop.run_in_executor(self._threads, self._spawn) for _ in range(count))
            )
        )

    async def start(self) -> list[Worker]:
        """Start the worker processes (in parallel); raises when one cannot start."""
        return await self._spawn_many(self.size)

    async def replenish(self, live: Mapping[str, Worker]) -> tuple[set[str], list[Worker]]:
        return set(), await self._spawn_many(self.size - len(live))

    async def judge(self, worker: Worker, job: JudgeJob) -> JudgeSummary:
        loop = asyncio.get_running_loop()
        kind, value = await loop.run_in_executor(self._threads, _ask, worker.handle, job)
        if kind == "deadline":
            raise TimeoutError
        if kind == "lost":
            raise WorkerLost(
                f"local judge worker died (exit code {worker.handle.process.exitcode})"
            )
        if kind == "error":
            raise JudgeRaised(str(value))
        summary: JudgeSummary = value
        return summary

    def stop(self, worker: Worker) -> None:
        worker.handle.kill()

    def close(self) -> None:
        """No new thread work (the workers are stopped by the scheduler)."""
        self._threads.shutdown(wait=False, cancel_futures=True)


def _ask(worker: _Process, job: JudgeJob) -> tuple[str, Any]:
    """Send a job to a worker and wait for its answer (at most the job's deadline):
    ("ok", summary), ("error", traceback), ("deadline", None) or ("lost", None)."""
    send_tests = job.tests if not job.tests_key or job.tests_key not in worker.kept else None
    try:
        worker.conn.send((job.source, job.request, job.tests_key, send_tests))
        if job.tests_key:
            _remember(worker.kept, job.tests_key, None)
        if not worker.conn.poll(job.deadline_seconds):
            return ("deadline", None)
        answer: tuple[str, Any] = worker.conn.recv()
    except (EOFError, OSError):
        return ("lost", None)
    return answer


class LocalJudgePool:
    """What ``RewardService`` holds without Ray: the scheduler over local processes, on an
    event loop of its own (a thread), so that any caller (blocking or async) reaches it."""

    def __init__(self, config: WorkerConfig) -> None:
        self._transport = LocalTransport(config)
        self.scheduler = JudgeScheduler(config, self._transport)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="codefu-judge-pool", daemon=True
        )
        self._thread.start()

    async def _on_loop(self, work: Coroutine[Any, Any, T]) -> T:
        """Await ``work`` on the pool's loop."""
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, self._loop))

    def share_tests(self, tests: list[tuple[str, str]]) -> Any:
        """Tests as they are: each worker process keeps its recent problems' tests."""
        return tests

    async def run_many(self, jobs: Sequence[JudgeJob]) -> list[JobOutcome]:
        return await self._on_loop(self.scheduler.run_batch(jobs))

    async def workers(self) -> dict[str, str]:
        return await self._on_loop(self.scheduler.workers())

    async def stats(self) -> dict[str, int]:
        return await self._on_loop(_now(self.scheduler.stats))

    async def take_window(self) -> dict[str, Any]:
        return await self._on_loop(_now(self.scheduler.take_window))

    async def drain_audits(self) -> int:
        return await self._on_loop(self.scheduler.drain_audits())

    def close(self) -> None:
        """Stop the workers and the loop."""
        asyncio.run_coroutine_threadsafe(_now(self.scheduler.shutdown), self._loop).result(60)
        self._transport.close()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=60)
        self._loop.close()


async def _now(call: Callable[[], T]) -> T:
    """A plain call as a coroutine (to run it on the pool's loop)."""
    return call()
