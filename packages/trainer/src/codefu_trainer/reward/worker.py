"""One response's judging: the job, the code that judges it, and its outcome.

``JudgeWorker`` holds one ``codefu_sandbox.Judge`` (compile cache + precompiled header in
its cache directory). The Ray pool (``judge_pool``) runs it as an actor, the local pool
(``local_pool``) in a worker process; both call the same ``judge`` method, so a batch
gets the same verdicts either way.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codefu_sandbox import CheckerConfig, GraderConfig
from codefu_sandbox.languages import DEFAULT_LANGUAGE
from codefu_trainer.reward.rules import JudgeSummary, summarize
from codefu_trainer.reward.step_metrics import Flip

__all__ = ["JobOutcome", "JudgeJob", "JudgeWorker", "audit_chosen", "audit_flip", "pool_stats"]


@dataclass(frozen=True)
class JudgeJob:
    """One response to judge.

    ``tests`` is a list of (input, output) pairs or a Ray ObjectRef to one; ``tests_key``
    a digest of them (empty: the job is never shared with an identical one). ``checker``
    judges the outputs (the problem's, ``service.Problem.checker``). ``language``: the
    judge language of ``source``. ``grader``: how the tests run and compare (the problem's,
    ``service.Problem.grader``; default stdio).
    """

    source: str
    tests: Any
    time_seconds: float
    memory_bytes: int
    checker: CheckerConfig
    stop_on_first_failure: bool
    deadline_seconds: float
    stop_on_timeout: bool = False
    tests_key: str = ""
    language: str = DEFAULT_LANGUAGE
    grader: GraderConfig = field(default_factory=GraderConfig)

    def identity(self) -> tuple[Any, ...] | None:
        """Equal for jobs that must get the same verdict; None without a ``tests_key``."""
        if not self.tests_key:
            return None
        return (
            self.language,
            self.source,
            self.tests_key,
            self.time_seconds,
            self.memory_bytes,
            self.checker,
            self.grader,
            self.stop_on_first_failure,
            self.stop_on_timeout,
        )

    def judge_options(self) -> dict[str, Any]:
        """The keyword arguments of ``JudgeWorker.judge`` for this job (with source, tests)."""
        return {
            "language": self.language,
            "time_seconds": self.time_seconds,
            "memory_bytes": self.memory_bytes,
            "checker": self.checker,
            "grader": self.grader,
            "stop_on_first_failure": self.stop_on_first_failure,
            "stop_on_timeout": self.stop_on_timeout,
        }

    def submission_id(self) -> str:
        """A short id of this submission (its code and tests), for logs and flip reports."""
        h = hashlib.blake2b(digest_size=6)
        h.update(self.language.encode() + b"\0")
        h.update(self.source.encode("utf-8", "surrogateescape"))
        h.update(self.tests_key.encode())
        return h.hexdigest()


def audit_chosen(job: JudgeJob, share: float, seed: int = 0) -> bool:
    """Whether the verdict audit judges ``job`` a second time: a deterministic draw from the
    submission's id and ``seed``, true for about ``share`` of the submissions."""
    if share <= 0:
        return False
    if share >= 1:
        return True
    h = hashlib.blake2b(f"{seed}:{job.submission_id()}".encode(), digest_size=8).digest()
    return int.from_bytes(h, "big") / 2**64 < share


@dataclass
class JobOutcome:
    """What became of a job: a summary, or a failure verdict with its reason."""

    summary: JudgeSummary | None
    failure: str | None = None
    detail: str = ""
    attempts: int = 0
    node_id: str = ""
    # Seconds the job spent on a worker (all attempts): its judging latency.
    seconds: float = 0.0
    # The pool's key of the worker that answered last (the audit avoids it).
    worker: str = ""


def audit_flip(job: JudgeJob, first: JobOutcome, audit: JobOutcome) -> Flip | None:
    """The flip when an audit's verdict differs from the first judging's (both judged)."""
    if first.summary is None or audit.summary is None:
        return None
    if first.summary.verdict == audit.summary.verdict:
        return None
    return Flip(
        submission=job.submission_id(),
        first_verdict=first.summary.verdict,
        audit_verdict=audit.summary.verdict,
        first_seconds=first.seconds,
        audit_seconds=audit.seconds,
        first_node=first.node_id,
        audit_node=audit.node_id,
    )


def pool_stats() -> dict[str, int]:
    """A pool's counters, all zero: jobs judged, shared (identical to another job of the
    batch, not judged again), completed, retries, deadlines, workers_lost,
    internal_errors, busy_ms (time workers spent judging), audits (submissions judged a
    second time by the verdict audit) and flips (audits that disagreed)."""
    names = ("jobs", "shared", "completed", "retries", "deadlines", "workers_lost")
    return dict.fromkeys((*names, "internal_errors", "busy_ms", "audits", "flips"), 0)


class JudgeWorker:
    """One judge; ``node_id`` is reported in every summary (empty outside Ray).
    ``time_factors``: the judge's factor on the time limit per language
    (``reward.time_factors``; languages left out: the judge's defaults)."""

    def __init__(
        self,
        cache_dir: str | None,
        node_id: str = "",
        time_factors: Mapping[str, float] | None = None,
    ) -> None:
        from codefu_sandbox import Judge

        self._judge = Judge(
            cache_dir=Path(cache_dir) if cache_dir else None, time_factors=time_factors
        )
        self._node_id = node_id

    def ready(self) -> str:
        """The node this worker runs on (answers once the worker has started)."""
        return self._node_id

    def judge(
        self,
        source: str,
        tests: Sequence[tuple[str, str]],
        *,
        time_seconds: float,
        memory_bytes: int,
        checker: CheckerConfig,
        stop_on_first_failure: bool,
        stop_on_timeout: bool = False,
        language: str = DEFAULT_LANGUAGE,
        grader: GraderConfig | None = None,
    ) -> JudgeSummary:
        """Compile once (the judge caches binaries) and run the tests here, one at a time.

        With ``stop_on_timeout`` judging stops at the first TLE: one timeout decides the
        reward, so the rest would only burn CPU (a TLE program costs the time limit on
        every test).
        """
        from codefu_sandbox import Limits, TestCase, Verdict

        report = self._judge.judge(
            source,
            [TestCase(input=i, output=o) for i, o in tests],
            Limits(time_seconds=time_seconds, memory_bytes=memory_bytes),
            checker=checker,
            stop_on_first_failure=stop_on_first_failure,
            stop_on=(Verdict.TLE,) if stop_on_timeout else (),
            language=language,
            grader=grader,
        )
        return summarize(report, node_id=self._node_id)
