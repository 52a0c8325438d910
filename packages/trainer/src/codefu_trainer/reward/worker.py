"""One response's judging: the job, the code that judges it, and its outcome.

``JudgeWorker`` holds one ``codefu_sandbox.Judge`` (compile cache + precompiled header in
its cache directory). The Ray pool (``judge_pool``) runs it as an actor, the local pool
(``local_pool``) in a worker process; both call the same ``judge`` method, so a batch
gets the same verdicts either way.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codefu_sandbox import JudgeRequest
from codefu_trainer.reward.rules import JudgeSummary, summarize
from codefu_trainer.reward.step_metrics import Flip

__all__ = ["JobOutcome", "JudgeJob", "JudgeWorker", "audit_chosen", "audit_flip", "pool_stats"]


@dataclass(frozen=True)
class JudgeJob:
    """One response to judge: its `source`, the problem's `tests` (a list of (input, output)
    pairs or a Ray ObjectRef to one) and the `request` that judges it, made by the sandbox
    from the problem's ground truth (`codefu_sandbox.JudgingPolicy.problem`) and handed to
    the judge as it is. ``tests_key`` is a digest of the tests (empty: the job is never
    shared with an identical one); ``deadline_seconds`` bounds the judging (the service's
    `deadline_seconds`).
    """

    source: str
    tests: Any
    request: JudgeRequest
    deadline_seconds: float
    tests_key: str = ""

    @property
    def language(self) -> str:
        """The judge language of ``source``."""
        return self.request.language

    def identity(self) -> tuple[Any, ...] | None:
        """Equal for jobs that must get the same verdict; None without a ``tests_key``."""
        if not self.tests_key:
            return None
        return (self.source, self.tests_key, self.request)

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
    """One judge; ``node_id`` is reported in every summary (empty outside Ray)."""

    def __init__(self, cache_dir: str | None, node_id: str = "") -> None:
        from codefu_sandbox import Judge

        self._judge = Judge(cache_dir=Path(cache_dir) if cache_dir else None)
        self._node_id = node_id

    def ready(self) -> str:
        """The node this worker runs on (answers once the worker has started)."""
        return self._node_id

    def judge(
        self, source: str, tests: Sequence[tuple[str, str]], request: JudgeRequest
    ) -> JudgeSummary:
        """Compile once (the judge caches binaries) and run the tests here, one at a time,
        as ``request`` says (its limits, checker, grader, and where judging stops: the
        reward stops at the first TLE, which decides it, so the rest would only burn CPU)."""
        from codefu_sandbox import TestCase

        report = self._judge.judge_request(
            source, [TestCase(input=i, output=o) for i, o in tests], request
        )
        return summarize(report, node_id=self._node_id)
