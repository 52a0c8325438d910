"""Ray dispatch of judging: a pool of judge workers, deadlines, retries, backpressure.

Layout:

- ``RayJudgeWorker`` (``worker.JudgeWorker`` as a Ray actor, one per CPU it may use)
  lives on a node carrying the ``judge`` custom resource (any CPU node when no alive
  node has it). It holds one ``codefu_sandbox.Judge`` whose cache directory (compile
  cache + precompiled header) is the node's, so every worker on a node reuses the same
  cache. A response is compiled
  once and all its tests run inside that worker, one after another: no process fan-out
  beyond the CPUs the workers hold.
- ``JudgePool`` (asyncio) hands each job to an idle worker, so at most one job per worker
  is in flight (backpressure: other jobs wait in the pool, not on the workers). Each job
  has a deadline, started when a worker takes it; past it the job fails with
  ``DEADLINE`` and the stuck worker is killed and replaced. A worker that dies (its
  process, or its node) makes the job run again on another worker, up to
  ``max_retries`` times; then ``WORKER_LOST``. A judge internal error (``IE``, never the
  program's fault) is retried the same way. Waiting for a free worker is bounded
  too (``acquire_timeout_seconds``). Nothing waits forever. A job identical to one in
  flight (same code, tests and limits: GRPO groups often repeat a response word for word)
  is not judged again; it gets that job's outcome.
- The verdict audit judges a share of the submissions again in the background, on idle
  capacity only: an audit takes a worker when no first judging waits for one (first
  judgings have priority; an audit already judging is not interrupted).
- ``JudgePoolActor`` runs one ``JudgePool`` as a named async Ray actor, so several
  reward processes (veRL's reward-loop workers) share one set of judge workers.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import ray
from ray.exceptions import RayActorError, RayTaskError

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

__all__ = [
    "JobOutcome",
    "JudgeJob",
    "JudgePool",
    "JudgePoolActor",
    "RayJudgeWorker",
    "plan_workers",
]

# How often an audit looks again for a worker other than the one that judged first.
AVOID_RETRY_SECONDS = 0.01
log = logging.getLogger(__name__)

# A tiny share of the judge resource: a worker needs the marker on its node, not a unit of it.
_RESOURCE_SHARE = 0.001


@dataclass
class _Worker:
    handle: Any
    node_id: str
    key: str
    started: float = field(default_factory=time.monotonic)


class RayJudgeWorker(JudgeWorker):
    """``JudgeWorker`` as a Ray actor body: it reports the node it was placed on."""

    def __init__(self, cache_dir: str | None) -> None:
        node_id = ray.get_runtime_context().get_node_id() if ray.is_initialized() else ""
        super().__init__(cache_dir, node_id)


def _alive_nodes() -> list[dict[str, Any]]:
    return [n for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get("CPU", 0) > 0]


def plan_workers(config: WorkerConfig) -> dict[str | None, int]:
    """How many workers to run on which node: {node_id: count}; key None = anywhere.

    Nodes with the ``config.resource`` custom resource get one worker per
    ``cpus_per_worker`` of their CPUs. Without such nodes, the cluster's available CPUs are
    used (key None, spread). ``num_workers`` caps the total.
    """
    nodes = _alive_nodes()
    judge_nodes = [n for n in nodes if n["Resources"].get(config.resource, 0) > 0]
    plan: dict[str | None, int] = {}
    if judge_nodes:
        for n in sorted(judge_nodes, key=lambda n: n["NodeID"]):
            plan[n["NodeID"]] = max(1, int(n["Resources"]["CPU"] // config.cpus_per_worker))
    else:
        available = ray.available_resources().get("CPU", 0.0)
        plan[None] = max(1, int(available // config.cpus_per_worker))
    if config.num_workers is not None:
        cap = max(1, config.num_workers)
        capped: dict[str | None, int] = dict.fromkeys(plan, 0)
        keys = list(plan)
        i = 0
        while sum(capped.values()) < min(cap, sum(plan.values())):
            key = keys[i % len(keys)]
            if capped[key] < plan[key]:
                capped[key] += 1
            i += 1
        plan = {k: v for k, v in capped.items() if v > 0}
    return plan


# Judging latency buckets (seconds on a worker, all attempts of a job).
LATENCY_BOUNDARIES = [0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 900.0]


class PoolMetrics:
    """The pool's Ray metrics (``ray.util.metrics``), exported by Ray's metrics agent as
    ``ray_codefu_judge_*`` (Prometheus); ``docs/grafana/judge.json`` charts them."""

    def __init__(self) -> None:
        from ray.util.metrics import Counter, Gauge, Histogram

        self.jobs = Counter("codefu_judge_jobs", description="Submissions judged.")
        self.duplicates = Counter(
            "codefu_judge_duplicates",
            description="Submissions identical to one in flight: judged once for both.",
        )
        self.verdicts = Counter(
            "codefu_judge_verdicts",
            description="Judged submissions by verdict.",
            tag_keys=("verdict",),
        )
        self.failures = Counter(
            "codefu_judge_failures",
            description="Judge failures (deadline, worker lost, judge error, IE) by kind.",
            tag_keys=("kind",),
        )
        self.latency = Histogram(
            "codefu_judge_latency_seconds",
            description="Seconds a submission spent on judge workers (all attempts).",
            boundaries=LATENCY_BOUNDARIES,
        )
        self.in_flight = Gauge("codefu_judge_in_flight", description="Jobs in the pool.")
        self.queued = Gauge("codefu_judge_queued", description="Jobs waiting for a worker.")
        self.busy = Gauge("codefu_judge_busy_workers", description="Workers judging now.")
        self.workers = Gauge("codefu_judge_workers", description="Live judge workers.")
        self.audits = Counter("codefu_judge_audits", description="Verdict audits judged.")
        self.flips = Counter("codefu_judge_flips", description="Audits that changed the verdict.")

    def judged(self, outcome: JobOutcome) -> None:
        self.jobs.inc()
        self.latency.observe(outcome.seconds)
        if outcome.summary is not None:
            verdict = outcome.summary.verdict
            self.verdicts.inc(tags={"verdict": verdict})
            if verdict == "IE":
                self.failures.inc(tags={"kind": "IE"})
        else:
            kind = outcome.failure or JUDGE_ERROR
            self.verdicts.inc(tags={"verdict": kind})
            self.failures.inc(tags={"kind": kind})

    def gauges(self, in_flight: int, queued: int, busy: int, workers: Mapping[str, Any]) -> None:
        self.in_flight.set(in_flight)
        self.queued.set(queued)
        self.busy.set(busy)
        self.workers.set(len(workers))


class JudgePool:
    """Async dispatcher over judge workers (see the module docstring)."""

    def __init__(self, config: WorkerConfig) -> None:
        self._config = config
        self._workers: dict[str, _Worker] = {}
        self._idle: asyncio.Queue[str] = asyncio.Queue()
        self._plan: dict[str | None, int] = {}
        self._started = False
        self._start_lock = asyncio.Lock()
        self._replenishing: asyncio.Task[None] | None = None
        self._counter = 0
        self._remote_worker = ray.remote(RayJudgeWorker)
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
        self.stats = pool_stats()
        self.window = JudgeWindow()
        self._metrics = PoolMetrics() if ray.is_initialized() else None

    # Workers ---------------------------------------------------------------------------

    def _new_handle(self, node_id: str | None) -> tuple[Any, str]:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        self._counter += 1
        key = f"w{self._counter}"
        options: dict[str, Any] = {
            "num_cpus": self._config.cpus_per_worker,
            "max_restarts": 0,
            "max_concurrency": 1,
        }
        if node_id is not None:
            options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(node_id, soft=False)
            options["resources"] = {self._config.resource: _RESOURCE_SHARE}
        else:
            options["scheduling_strategy"] = "SPREAD"
        return self._remote_worker.options(**options).remote(self._config.cache_dir), key

    async def _start_workers(self, wanted: dict[str | None, int]) -> int:
        """Start workers and wait (bounded) until they answer; returns how many started."""
        pending: list[tuple[Any, str]] = []
        for node_id, count in wanted.items():
            pending.extend(self._new_handle(node_id) for _ in range(count))
        if not pending:
            return 0
        futures = [asyncio.ensure_future(await_ref(h.ready.remote())) for h, _ in pending]
        await asyncio.wait(futures, timeout=self._config.start_timeout_seconds)
        started = 0
        for (handle, key), fut in zip(pending, futures, strict=True):
            node = None
            if fut.done() and not fut.cancelled() and fut.exception() is None:
                node = str(fut.result())
            else:
                fut.cancel()
            if node is None:
                log.warning("judge worker %s did not start in time; giving it up", key)
                with contextlib.suppress(Exception):
                    ray.kill(handle, no_restart=True)
                continue
            self._workers[key] = _Worker(handle=handle, node_id=node, key=key)
            self._idle.put_nowait(key)
            started += 1
        return started

    async def start(self) -> None:
        """Plan and start the workers; raises when none can start."""
        async with self._start_lock:
            if self._started:
                return
            self._plan = plan_workers(self._config)
            started = await self._start_workers(self._plan)
            if started == 0:
                raise RuntimeError(
                    "No judge worker could start: check that the Ray cluster has alive nodes "
                    f"with free CPUs (and the '{self._config.resource}' resource on judge nodes)."
                )
            self._started = True

    def _drop(self, key: str, kill: bool) -> None:
        worker = self._workers.pop(key, None)
        if worker is not None and kill:
            ray.kill(worker.handle, no_restart=True)
        if self._replenishing is None or self._replenishing.done():
            self._replenishing = asyncio.ensure_future(self._replenish())

    async def _replenish(self) -> None:
        """Start workers that are missing from the plan, on nodes still alive."""
        await asyncio.sleep(0.5)  # let node deaths reach the GCS before looking
        alive = {n["NodeID"] for n in _alive_nodes()}
        for key, worker in list(self._workers.items()):
            if worker.node_id not in alive:
                self._workers.pop(key, None)
        wanted: dict[str | None, int] = {}
        for node_id, count in self._plan.items():
            if node_id is None:
                have = len(self._workers)
                free = int(
                    ray.available_resources().get("CPU", 0.0) // self._config.cpus_per_worker
                )
                missing = min(count - have, free)
            elif node_id in alive:
                have = sum(1 for w in self._workers.values() if w.node_id == node_id)
                missing = count - have
            else:
                missing = 0
            if missing > 0:
                wanted[node_id] = missing
        if wanted:
            await self._start_workers(wanted)

    def _acceptable(self, worker: _Worker, avoid: _Worker | None) -> bool:
        """For an audit: another node when the pool spans several, else another worker."""
        if avoid is None:
            return True
        if len({w.node_id for w in self._workers.values()}) > 1:
            return worker.node_id != avoid.node_id
        if len(self._workers) > 1:
            return worker.key != avoid.key
        return True

    def _take_idle(self, avoid: _Worker | None) -> _Worker | None:
        """The first idle worker acceptable for ``avoid`` taken from the queue, the others
        left queued in order; None when none is. No await inside: two audits cannot pass
        each other's workers back and forth."""
        keys: list[str] = []
        while not self._idle.empty():
            keys.append(self._idle.get_nowait())
        chosen: _Worker | None = None
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

    async def _acquire(
        self, avoid: _Worker | None = None, *, audit: bool = False
    ) -> _Worker | None:
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

    def _release(self, worker: _Worker, *, idle: bool) -> None:
        """A worker's job ended: back to the idle queue (or already dropped)."""
        self._busy = max(0, self._busy - 1)
        if idle:
            self._idle.put_nowait(worker.key)
        self._gauges()

    def _gauges(self) -> None:
        if self._metrics is not None:
            self._metrics.gauges(self._in_flight_jobs, self._queued, self._busy, self._workers)

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
            self.stats["shared"] += 1
            self.window.duplicate()
            if self._metrics is not None:
                self._metrics.duplicates.inc()
        # Shielded: a caller that gives up does not cancel the run others wait for.
        return await asyncio.shield(running)

    async def _run(self, job: JudgeJob) -> JobOutcome:
        await self.start()
        self.stats["jobs"] += 1
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
            self.stats["completed"] += 1
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
        self.stats["audits"] += 1
        audit = await self._judge(job, avoid=self._workers.get(first.worker), audit=True)
        flip = audit_flip(job, first, audit)
        self.window.audit(audit.seconds, flip, failed=audit.summary is None)
        if self._metrics is not None:
            self._metrics.audits.inc()
        if flip is not None:
            self.stats["flips"] += 1
            if self._metrics is not None:
                self._metrics.flips.inc()
            log.warning("VERDICT FLIP (judge audit): %s", flip.describe())

    async def drain_audits(self) -> int:
        """Wait for the audits under way; returns how many there were."""
        pending = list(self._audits)
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        return len(pending)

    def take_window(self) -> dict[str, Any]:
        """The judging since the last call (``step_metrics.WindowStats`` as a dict)."""
        cpus = len(self._workers) * self._config.cpus_per_worker
        return self.window.take(cpus).to_dict()

    async def _judge(
        self, job: JudgeJob, avoid: _Worker | None = None, *, audit: bool = False
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
            ref = worker.handle.judge.remote(
                job.source,
                job.tests,
                time_seconds=job.time_seconds,
                memory_bytes=job.memory_bytes,
                checker=job.checker,
                stop_on_first_failure=job.stop_on_first_failure,
                stop_on_timeout=job.stop_on_timeout,
                checker_params=job.checker_params,
            )
            started = time.monotonic()
            try:
                summary = await asyncio.wait_for(await_ref(ref), timeout=job.deadline_seconds)
            except TimeoutError:
                busy += job.deadline_seconds
                self.stats["deadlines"] += 1
                log.warning(
                    "judge job passed its %.1f s deadline on %s; replacing the worker",
                    job.deadline_seconds,
                    worker.key,
                )
                self._release(worker, idle=False)
                self._drop(worker.key, kill=True)
                return JobOutcome(
                    None,
                    DEADLINE,
                    f"no answer within {job.deadline_seconds:.1f} s",
                    attempts,
                    worker.node_id,
                    busy,
                    worker.key,
                )
            except RayActorError as e:
                busy += time.monotonic() - started
                self.stats["workers_lost"] += 1
                self._release(worker, idle=False)
                self._drop(worker.key, kill=False)
                if attempts > self._config.max_retries:
                    return JobOutcome(
                        None, WORKER_LOST, str(e)[:500], attempts, worker.node_id, busy, worker.key
                    )
                self.stats["retries"] += 1
                log.warning(
                    "judge worker %s died (%s); retrying elsewhere", worker.key, type(e).__name__
                )
                continue
            except RayTaskError as e:
                # The judge itself raised: deterministic, so not retried.
                busy += time.monotonic() - started
                self._release(worker, idle=True)
                return JobOutcome(
                    None, JUDGE_ERROR, str(e)[-2000:], attempts, worker.node_id, busy, worker.key
                )
            busy += time.monotonic() - started
            self.stats["busy_ms"] += round((time.monotonic() - started) * 1000)
            self._release(worker, idle=True)
            if summary.verdict == "IE" and attempts <= self._config.max_retries:
                # An internal error of the judge is never the program's fault and is usually
                # transient (resources of a loaded node): judge it again.
                self.stats["retries"] += 1
                self.stats["internal_errors"] += 1
                log.warning("judge internal error on %s; judging again", worker.key)
                continue
            return JobOutcome(summary, None, "", attempts, summary.node_id, busy, worker.key)

    async def run_many(self, jobs: Sequence[JudgeJob]) -> list[JobOutcome]:
        return list(await asyncio.gather(*(self.run(job) for job in jobs)))

    def workers(self) -> dict[str, str]:
        """Live workers: key → node id."""
        return {key: w.node_id for key, w in self._workers.items()}

    def shutdown(self) -> None:
        for task in list(self._audits):
            task.cancel()
        for key in list(self._workers):
            worker = self._workers.pop(key)
            with contextlib.suppress(Exception):
                ray.kill(worker.handle, no_restart=True)


async def await_ref(ref: Any) -> Any:
    """A coroutine awaiting a Ray ObjectRef (for asyncio.wait_for / ensure_future)."""
    return await ref


class JudgePoolActor:
    """A ``JudgePool`` in a named async Ray actor, shared by every reward process."""

    def __init__(self, worker_config: dict[str, Any]) -> None:
        self._pool = JudgePool(WorkerConfig(**worker_config))

    async def run_many(self, jobs: list[JudgeJob]) -> list[JobOutcome]:
        return await self._pool.run_many(jobs)

    async def workers(self) -> dict[str, str]:
        await self._pool.start()
        return self._pool.workers()

    def stats(self) -> dict[str, int]:
        return dict(self._pool.stats)

    def take_window(self) -> dict[str, Any]:
        return self._pool.take_window()

    async def drain_audits(self) -> int:
        return await self._pool.drain_audits()

    def shutdown(self) -> None:
        self._pool.shutdown()


def _dispatcher_node() -> str:
    """The head node (it lives as long as the cluster), else this process's node."""
    for node in ray.nodes():
        if node.get("Alive") and "node:__internal_head__" in node.get("Resources", {}):
            return str(node["NodeID"])
    return str(ray.get_runtime_context().get_node_id())


def pool_actor(config: WorkerConfig) -> Any:
    """The shared pool actor for ``config`` (created on the head node when missing).

    It takes no CPU; judge nodes may come and go without taking the dispatcher with them.
    """
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    settings = asdict(config)
    digest = hashlib.sha1(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:10]
    name = f"{config.pool_name}-{digest}"
    return (
        ray.remote(JudgePoolActor)
        .options(
            name=name,
            get_if_exists=True,
            num_cpus=0,
            max_concurrency=10_000,
            max_restarts=0,
            scheduling_strategy=NodeAffinitySchedulingStrategy(_dispatcher_node(), soft=False),
        )
        .remote(settings)
    )
