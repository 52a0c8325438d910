"""The Ray judge pool: judge workers as Ray actors, one shared scheduler in a named actor.

- ``RayJudgeWorker`` (``worker.JudgeWorker`` as a Ray actor, one per CPU it may use)
  lives on a node carrying the ``judge`` custom resource (any CPU node when no alive
  node has it). It holds one ``codefu_sandbox.Judge`` whose cache directory (compile
  cache + precompiled header) is the node's, so every worker on a node reuses the same
  cache. A response is compiled once and all its tests run inside that worker, one after
  another: no process fan-out beyond the CPUs the workers hold.
- ``RayTransport`` starts those actors as ``plan_workers`` says, reaches them, and after a
  loss starts the ones missing on nodes still alive.
- ``JudgePoolActor`` is the ``scheduler.JudgeScheduler`` over a ``RayTransport`` as a named
  async Ray actor on the head node, so several reward processes (veRL's reward-loop workers)
  share one set of judge workers; it reports to Ray's metrics (``PoolMetrics``).
- ``RayJudgePool`` is what ``RewardService`` holds: the actor's handle (a dead actor is
  replaced once), tests stored in Ray's object store.

The scheduling rules (priority, deadlines, retries, dedup, audit) are ``scheduler``'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

import ray
from ray.exceptions import RayActorError, RayTaskError

from codefu_sandbox import Verdict
from codefu_trainer.reward.config import WorkerConfig
from codefu_trainer.reward.rules import JUDGE_ERROR, JudgeSummary
from codefu_trainer.reward.scheduler import JudgeRaised, JudgeScheduler, Worker, WorkerLost
from codefu_trainer.reward.step_metrics import Flip
from codefu_trainer.reward.worker import JobOutcome, JudgeJob, JudgeWorker

__all__ = [
    "JobOutcome",
    "JudgeJob",
    "JudgePoolActor",
    "RayJudgePool",
    "RayJudgeWorker",
    "RayTransport",
    "plan_workers",
]

log = logging.getLogger(__name__)

# A tiny share of the judge resource: a worker needs the marker on its node, not a unit of it.
_RESOURCE_SHARE = 0.001


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
            if verdict == Verdict.IE:
                self.failures.inc(tags={"kind": Verdict.IE.value})
        else:
            kind = outcome.failure or JUDGE_ERROR
            self.verdicts.inc(tags={"verdict": kind})
            self.failures.inc(tags={"kind": kind})

    def duplicate(self) -> None:
        self.duplicates.inc()

    def audited(self, flip: Flip | None) -> None:
        self.audits.inc()
        if flip is not None:
            self.flips.inc()

    def gauges(self, in_flight: int, queued: int, busy: int, workers: int) -> None:
        self.in_flight.set(in_flight)
        self.queued.set(queued)
        self.busy.set(busy)
        self.workers.set(workers)


class RayTransport:
    """Judge workers as Ray actors (``scheduler.Transport``)."""

    def __init__(self, config: WorkerConfig) -> None:
        self._config = config
        self._plan: dict[str | None, int] = {}
        self._counter = 0
        self._remote_worker = ray.remote(RayJudgeWorker)

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
        handle = self._remote_worker.options(**options).remote(self._config.cache_dir)
        return handle, key

    async def _start_workers(self, wanted: dict[str | None, int]) -> list[Worker]:
        """Start workers and wait (bounded) until they answer; returns those that did."""
        pending: list[tuple[Any, str]] = []
        for node_id, count in wanted.items():
            pending.extend(self._new_handle(node_id) for _ in range(count))
        if not pending:
            return []
        futures = [asyncio.ensure_future(await_ref(h.ready.remote())) for h, _ in pending]
        await asyncio.wait(futures, timeout=self._config.start_timeout_seconds)
        started: list[Worker] = []
        for (handle, key), fut in zip(pending, futures, strict=True):
            if fut.done() and not fut.cancelled() and fut.exception() is None:
                started.append(Worker(key, str(fut.result()), handle))
                continue
            fut.cancel()
            log.warning("judge worker %s did not start in time; giving it up", key)
            with contextlib.suppress(Exception):
                ray.kill(handle, no_restart=True)
        return started

    async def start(self) -> list[Worker]:
        self._plan = plan_workers(self._config)
        started = await self._start_workers(self._plan)
        if not started:
            raise RuntimeError(
                "No judge worker could start: check that the Ray cluster has alive nodes "
                f"with free CPUs (and the '{self._config.resource}' resource on judge nodes)."
            )
        return started

    async def replenish(self, live: Mapping[str, Worker]) -> tuple[set[str], list[Worker]]:
        """Workers on dead nodes are gone; start those missing from the plan on live nodes."""
        await asyncio.sleep(0.5)  # let node deaths reach the GCS before looking
        alive = {n["NodeID"] for n in _alive_nodes()}
        gone = {key for key, w in live.items() if w.node_id not in alive}
        kept = [w for key, w in live.items() if key not in gone]
        wanted: dict[str | None, int] = {}
        for node_id, count in self._plan.items():
            if node_id is None:
                free = int(
                    ray.available_resources().get("CPU", 0.0) // self._config.cpus_per_worker
                )
                missing = min(count - len(kept), free)
            elif node_id in alive:
                missing = count - sum(1 for w in kept if w.node_id == node_id)
            else:
                missing = 0
            if missing > 0:
                wanted[node_id] = missing
        return gone, await self._start_workers(wanted)

    async def judge(self, worker: Worker, job: JudgeJob) -> JudgeSummary:
        ref = worker.handle.judge.remote(job.source, job.tests, job.request)
        try:
            summary: JudgeSummary = await asyncio.wait_for(
                await_ref(ref), timeout=job.deadline_seconds
            )
        except RayActorError as e:
            raise WorkerLost(f"{type(e).__name__}: {str(e)[:500]}") from e
        except RayTaskError as e:
            raise JudgeRaised(str(e)[-2000:]) from e
        return summary

    def stop(self, worker: Worker) -> None:
        with contextlib.suppress(Exception):
            ray.kill(worker.handle, no_restart=True)


async def await_ref(ref: Any) -> Any:
    """A coroutine awaiting a Ray ObjectRef (for asyncio.wait_for / ensure_future)."""
    return await ref


class JudgePoolActor(JudgeScheduler):
    """The scheduler over Ray workers, run as a named async Ray actor shared by every
    reward process (``pool_actor``)."""

    def __init__(self, worker_config: dict[str, Any]) -> None:
        config = WorkerConfig(**worker_config)
        super().__init__(config, RayTransport(config), PoolMetrics())


def _dispatcher_node() -> str:
    """The head node (it lives as long as the cluster), else this process's node."""
    for node in ray.nodes():
        if node.get("Alive") and "node:__internal_head__" in node.get("Resources", {}):
            return str(node["NodeID"])
    return str(ray.get_runtime_context().get_node_id())


def pool_actor(config: WorkerConfig) -> Any:
    """The shared pool actor for ``config`` (created on the head node when missing; one pool
    per distinct settings).

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


class RayJudgePool:
    """What ``RewardService`` holds on Ray: the shared pool actor's handle (joining Ray, or
    starting it locally, when this process is not connected yet)."""

    def __init__(self, config: WorkerConfig, address: str | None = None) -> None:
        self._config = config
        self._started_ray = False
        if not ray.is_initialized():
            ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
            self._started_ray = True
        self._actor = pool_actor(config)

    def share_tests(self, tests: list[tuple[str, str]]) -> Any:
        """Tests stored once in Ray's object store; jobs carry the reference."""
        return ray.put(tests)

    def _backstop(self, jobs: Sequence[JudgeJob]) -> float:
        """An outer bound on one call; the scheduler bounds each job well inside it."""
        longest = max((job.deadline_seconds for job in jobs), default=0.0)
        worker = self._config
        return worker.acquire_timeout_seconds + worker.start_timeout_seconds + 2 * longest + 60

    async def _call(self, method: str, *args: Any, timeout: float) -> Any:
        """Await an actor method for at most ``timeout`` seconds; a dead actor is replaced
        once (a second death raises ``RayActorError``, the timeout ``TimeoutError``)."""
        for attempt in range(2):
            try:
                ref = getattr(self._actor, method).remote(*args)
                return await asyncio.wait_for(await_ref(ref), timeout=timeout)
            except RayActorError:
                if attempt == 1:
                    raise
                log.warning("the judge pool actor died; starting a new one")
                self._actor = pool_actor(self._config)
        raise AssertionError("unreachable")

    async def run_many(self, jobs: Sequence[JudgeJob]) -> list[JobOutcome]:
        """The outcomes of ``jobs`` (each a judge failure when the pool died twice or did
        not answer within the backstop)."""
        try:
            return list(await self._call("run_many", list(jobs), timeout=self._backstop(jobs)))
        except RayActorError:
            why = "the judge pool died twice"
        except TimeoutError:
            why = "the judge pool did not answer in time"
        return [JobOutcome(None, JUDGE_ERROR, why) for _ in jobs]

    async def workers(self) -> dict[str, str]:
        return dict(await self._call("workers", timeout=self._backstop([])))

    async def stats(self) -> dict[str, int]:
        return dict(await self._call("stats", timeout=60))

    async def take_window(self) -> dict[str, Any]:
        return dict(await self._call("take_window", timeout=60))

    async def drain_audits(self) -> int:
        return int(await self._call("drain_audits", timeout=self._backstop([]) * 2))

    def close(self) -> None:
        """Stop the workers and the actor; shut Ray down if this pool started it."""
        try:
            ray.get(self._actor.shutdown.remote(), timeout=60)
            ray.kill(self._actor, no_restart=True)
        except Exception as e:  # a pool already gone is fine
            log.debug("closing the judge pool: %s", e)
        if self._started_ray:
            ray.shutdown()
