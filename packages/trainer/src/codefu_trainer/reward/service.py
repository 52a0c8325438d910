"""RewardService: responses + ground truths → reward dicts, judged on Ray or locally.

    svc = RewardService(RewardConfig(), address=None)   # joins Ray, or starts it locally
    svc = RewardService(RewardConfig(), local=True)     # local worker processes, no Ray
    results = svc.score(responses, ground_truths)       # blocking, bounded by deadlines
    results = await svc.score_async(responses, ground_truths)
    svc.close()

Every result dict has the keys ``reward_rules.RESULT_KEYS``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Coroutine, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from codefu_sandbox import JudgeRequest, Problem
from codefu_trainer.reward.config import DeadlineConfig, RewardConfig, reward_config_from
from codefu_trainer.reward.extract import answer_for
from codefu_trainer.reward.judge_pool import RayJudgePool
from codefu_trainer.reward.local_pool import LocalJudgePool
from codefu_trainer.reward.rules import JUDGE_ERROR, RewardResult, score_report
from codefu_trainer.reward.scheduler import JudgePool
from codefu_trainer.reward.worker import JobOutcome, JudgeJob

__all__ = ["RewardService", "ScoredResponse", "deadline_seconds"]

log = logging.getLogger(__name__)
T = TypeVar("T")


def _size(block: Any) -> tuple[int, int]:
    if not isinstance(block, Mapping):
        return (0, 0)
    texts = [*(block.get("input") or ()), *(block.get("output") or ())]
    return (len(texts), sum(len(t) for t in texts if isinstance(t, str)))


def problem_key(gt: Mapping[str, Any]) -> tuple[Any, ...]:
    """A cheap identity of a ground truth (name, test counts and sizes, rules): the samples
    of one GRPO group share it, so their tests are parsed, hashed and stored once. It relies
    on problem names being unique within a dataset, as `prepare` makes them."""
    return (
        gt.get("name"),
        _size(gt.get("private_tests")),
        _size(gt.get("public_tests")),
        json.dumps(gt.get("judging_rules"), sort_keys=True, default=list),
        json.dumps(gt.get("checker"), sort_keys=True),
        json.dumps(gt.get("grader"), sort_keys=True),
    )


def tests_digest(tests: Sequence[tuple[str, str]]) -> str:
    """A digest of a problem's tests: jobs on equal tests may share one judging."""
    h = hashlib.blake2b(digest_size=16)
    for test in tests:
        for text in test:
            data = text.encode("utf-8", "surrogateescape")
            h.update(len(data).to_bytes(8, "little"))
            h.update(data)
    return h.hexdigest()


def deadline_seconds(request: JudgeRequest, deadline: DeadlineConfig) -> float:
    """Compile allowance + per test (limit × wall factor + overhead) + slack, capped. The
    limit is the request's (the language's time factor applied: with the defaults, per
    test the judge's wall backstop), and the tests are as many as the request's
    `allowances` (the grader's: the call grader's module load has one test's)."""
    d = deadline
    per_test = request.limits.time_seconds * d.wall_factor + d.per_test_overhead_seconds
    return min(d.max_seconds, d.compile_seconds + request.allowances * per_test + d.slack_seconds)


# Problems kept prepared (tests stored, digest computed) per service, least recently used
# first out: a step's prompts, bounded in count and in test characters.
PROBLEM_CACHE_SIZE = 1024
PROBLEM_CACHE_CHARS = 256 << 20


@dataclass(frozen=True)
class PreparedProblem:
    """A problem (its tests and a request per accepted language, from the sandbox) with its
    tests stored for the workers (a list, or a Ray ObjectRef to it)."""

    problem: Problem
    tests: Any
    digest: str
    chars: int


@dataclass(frozen=True)
class ScoredResponse:
    """A reward and how it came about (node, attempts, failure detail)."""

    result: RewardResult
    outcome: JobOutcome | None


class RewardService:
    """Scores responses against ground truths (see the module docstring).

    On Ray (the default) the judge workers are actors of the shared pool
    (``judge_pool``); with ``local=True`` they are processes of this machine
    (``local_pool``), with the same worker code, the same scheduler and no Ray start-up.
    """

    def __init__(
        self,
        config: RewardConfig | Mapping[str, Any] | None = None,
        address: str | None = None,
        *,
        local: bool = False,
    ):
        self.config = reward_config_from(config)
        self.policy = self.config.policy()
        self._problems: OrderedDict[tuple[Any, ...], PreparedProblem] = OrderedDict()
        self._cached_chars = 0
        self._cache_lock = threading.Lock()
        self._pool: JudgePool = (
            LocalJudgePool(self.config.worker)
            if local
            else RayJudgePool(self.config.worker, address)
        )

    # Preparation -----------------------------------------------------------------------

    def _prepared(self, gt: Any) -> PreparedProblem:
        """The problem of a ground truth with its tests stored once (``share_tests``) and
        their digest; the samples of a group (equal ground truths) share one."""
        truth = json.loads(gt) if isinstance(gt, str | bytes) else gt
        key = problem_key(truth) if isinstance(truth, Mapping) else None
        if key is not None:
            with self._cache_lock:
                cached = self._problems.get(key)
                if cached is not None:
                    self._problems.move_to_end(key)
                    return cached
        problem = self.policy.problem(truth)
        tests = list(problem.tests)
        prepared = PreparedProblem(
            problem,
            self._pool.share_tests(tests),
            tests_digest(problem.tests),
            sum(len(a) + len(b) for a, b in problem.tests),
        )
        if key is not None:
            with self._cache_lock:
                self._problems[key] = prepared
                self._cached_chars += prepared.chars
                while self._problems and (
                    len(self._problems) > PROBLEM_CACHE_SIZE
                    or self._cached_chars > PROBLEM_CACHE_CHARS
                ):
                    _, old = self._problems.popitem(last=False)
                    self._cached_chars -= old.chars
        return prepared

    def _jobs(
        self, responses: Sequence[str], ground_truths: Sequence[Any]
    ) -> tuple[list[ScoredResponse | None], list[tuple[int, JudgeJob]]]:
        if len(responses) != len(ground_truths):
            raise ValueError(
                f"{len(responses)} responses but {len(ground_truths)} ground truths: "
                "pass one ground truth per response"
            )
        cfg = self.config
        done: list[ScoredResponse | None] = [None] * len(responses)
        jobs: list[tuple[int, JudgeJob]] = []
        sizes: dict[int, int] = {}
        languages = tuple(cfg.languages)
        for i, (text, gt) in enumerate(zip(responses, ground_truths, strict=True)):
            answer = answer_for(text, languages, cfg.extraction)
            if answer is None or answer.language not in languages:
                result = score_report(
                    None,
                    cfg,
                    has_code=answer is not None,
                    language=answer.language if answer else "",
                )
                done[i] = ScoredResponse(result, None)
                continue
            language = answer.language
            try:
                prepared = self._prepared(gt)
            except (ValueError, TypeError, json.JSONDecodeError) as e:
                log.error("unusable ground truth for response %d: %s", i, e)
                done[i] = ScoredResponse(
                    score_report(None, cfg, failure=JUDGE_ERROR, language=language), None
                )
                continue
            problem = prepared.problem
            if not problem.tests:
                done[i] = ScoredResponse(
                    score_report(None, cfg, failure=JUDGE_ERROR, language=language), None
                )
                continue
            request = problem.requests[language]
            job = JudgeJob(
                source=answer.code,
                tests=prepared.tests,
                request=request,
                deadline_seconds=deadline_seconds(request, cfg.deadline),
                tests_key=prepared.digest,
            )
            sizes[i] = len(problem.tests)
            jobs.append((i, job))
        # Longest first (by test count): the batch's last job is then a short one, so the
        # workers finish together instead of one long job running alone at the end.
        jobs.sort(key=lambda item: -sizes[item[0]])
        return done, jobs

    def _finish(
        self,
        done: list[ScoredResponse | None],
        jobs: list[tuple[int, JudgeJob]],
        outcomes: Sequence[JobOutcome],
    ) -> list[ScoredResponse]:
        for (i, job), outcome in zip(jobs, outcomes, strict=True):
            result = score_report(
                outcome.summary, self.config, failure=outcome.failure, language=job.language
            )
            done[i] = ScoredResponse(result, outcome)
        assert all(d is not None for d in done)
        return [d for d in done if d is not None]

    # Scoring ---------------------------------------------------------------------------

    async def score_detailed_async(
        self, responses: Sequence[str], ground_truths: Sequence[Any]
    ) -> list[ScoredResponse]:
        """Like ``score_async`` with the judge outcome (node, attempts, failure) of each."""
        done, jobs = self._jobs(responses, ground_truths)
        outcomes: list[JobOutcome] = []
        if jobs:
            outcomes = await self._pool.run_many([job for _, job in jobs])
        return self._finish(done, jobs, outcomes)

    def score_detailed(
        self, responses: Sequence[str], ground_truths: Sequence[Any]
    ) -> list[ScoredResponse]:
        """Like ``score`` with the judge outcome (node, attempts, failure) of each response."""
        return run_blocking(self.score_detailed_async(responses, ground_truths))

    def score(self, responses: Sequence[str], ground_truths: Sequence[Any]) -> list[dict[str, Any]]:
        """Reward dicts, one per response, in order (blocking)."""
        return [s.result.to_dict() for s in self.score_detailed(responses, ground_truths)]

    async def score_async(
        self, responses: Sequence[str], ground_truths: Sequence[Any]
    ) -> list[dict[str, Any]]:
        """Reward dicts, one per response, in order (awaits Ray without blocking the loop)."""
        scored = await self.score_detailed_async(responses, ground_truths)
        return [s.result.to_dict() for s in scored]

    def workers(self) -> dict[str, str]:
        """The pool's live judge workers: key → node id (starts them if needed)."""
        return run_blocking(self._pool.workers())

    def stats(self) -> dict[str, int]:
        """Pool counters: jobs, shared (identical to a job in flight, not judged again),
        completed, retries, deadlines, workers_lost, internal_errors, busy_ms (time workers
        spent judging), audits and flips (the verdict audit)."""
        return run_blocking(self._pool.stats())

    def take_window(self) -> dict[str, Any]:
        """What the judge pool did since the last call (``step_metrics.WindowStats`` as a
        dict: jobs, duplicates, CPU and wall seconds, judge CPUs, queue high-water mark,
        audits, flips): one call per training step gives that step's judging."""
        return run_blocking(self._pool.take_window())

    def drain_audits(self) -> int:
        """Wait until the verdict audits under way have been judged (the Ray pool runs them
        in the background; the local pool within ``score``); returns how many there were."""
        return run_blocking(self._pool.drain_audits())

    def close(self) -> None:
        """Stop the judge workers and the pool (and Ray, if this service started it)."""
        self._pool.close()


def run_blocking(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from synchronous code.

    In a thread with a running event loop (where ``asyncio.run`` is refused) it runs on a
    fresh loop in a helper thread.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()
