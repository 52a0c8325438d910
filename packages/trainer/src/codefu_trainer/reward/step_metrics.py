"""Per-step judge metrics: what the judge did for one training step, under one set of names.

Two inputs, both plain data:

- the step's reward results (dicts with ``rules.RESULT_KEYS``, one per sample: what veRL
  gets back as ``reward_extra_info`` and the CPU rehearsal from ``RewardService.score``);
- the judge pool's window (``JudgeWindow.take()``): what the pool did since the step before
  (jobs judged, duplicates judged once, CPU seconds, wall time, queue high-water mark,
  audits and flips), which the samples alone cannot tell.

``step_metrics`` turns them into the ``judge/…`` metrics (docs in the trainer README,
"Judge metrics"). Pure: no I/O, no Ray; ``JudgeWindow`` takes its clock as an argument.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from codefu_sandbox import Verdict
from codefu_sandbox.languages import LANGUAGES
from codefu_trainer.reward.rules import FAILURE_VERDICTS, REWARD_VERDICTS

__all__ = [
    "COMPILED_VERDICTS",
    "FAILURE_KINDS",
    "Flip",
    "JudgeWindow",
    "WindowStats",
    "failure_alert",
    "step_metrics",
]

# Verdicts of a program that compiled and was judged (judge/compiled is their share).
COMPILED_VERDICTS = frozenset(str(v) for v in Verdict if v not in (Verdict.CE, Verdict.IE))
# Judge failures, by kind: never the program's fault (judge/failures/<kind>).
FAILURE_KINDS: tuple[str, ...] = FAILURE_VERDICTS
# Flips kept in a window for the trainer to print (the pool logs each one when it happens).
FLIPS_KEPT = 20


@dataclass(frozen=True)
class Flip:
    """A submission whose audit judging disagreed with its first judging."""

    submission: str
    first_verdict: str
    audit_verdict: str
    first_seconds: float
    audit_seconds: float
    first_node: str
    audit_node: str

    def describe(self) -> str:
        return (
            f"verdict flip on submission {self.submission}: {self.first_verdict} "
            f"({self.first_seconds:.2f} s on node {self.first_node[:12] or '?'}) then "
            f"{self.audit_verdict} ({self.audit_seconds:.2f} s on node "
            f"{self.audit_node[:12] or '?'})"
        )


@dataclass
class WindowStats:
    """What a judge pool did between two ``JudgeWindow.take()`` calls.

    ``wall_seconds``: from the arrival of the first job that finished in the window to the
    end of the last one. ``tail_seconds``: from the arrival of the last job (a response's
    program reaches the pool as soon as the response is generated) to the end of the last
    one: how long judging went on after the last response. ``compile_cpu_seconds`` +
    ``run_cpu_seconds``: the CPU the judge reported for the jobs it judged (duplicates and
    audits not counted). ``cpus``: the judge CPUs the pool holds.
    """

    jobs: int = 0
    duplicates: int = 0
    wall_seconds: float = 0.0
    tail_seconds: float = 0.0
    busy_seconds: float = 0.0
    compile_cpu_seconds: float = 0.0
    run_cpu_seconds: float = 0.0
    cpus: float = 0.0
    queue_high_water: int = 0
    audited: int = 0
    flips: int = 0
    audit_failures: int = 0
    audit_seconds: float = 0.0
    flip_details: list[Flip] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> WindowStats:
        fields = dict(data)
        fields["flip_details"] = [
            f if isinstance(f, Flip) else Flip(**f) for f in fields.get("flip_details", ())
        ]
        return cls(**fields)


class JudgeWindow:
    """A judge pool's counters for the current step; ``take()`` returns and restarts them.

    Thread-safe (the local pool judges from threads). Times are the caller's monotonic
    clock readings.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting = 0
        self._stats = WindowStats()
        self._first: float | None = None
        self._last: float | None = None
        self._last_arrival: float | None = None

    def queued(self) -> None:
        """A job arrived and waits for a worker."""
        with self._lock:
            self._waiting += 1
            self._stats.queue_high_water = max(self._stats.queue_high_water, self._waiting)

    def dequeued(self) -> None:
        """A waiting job got a worker (or gave up waiting)."""
        with self._lock:
            self._waiting = max(0, self._waiting - 1)

    def duplicate(self) -> None:
        """A job identical to one in flight took that one's outcome."""
        with self._lock:
            self._stats.duplicates += 1

    def done(
        self,
        arrived: float,
        ended: float,
        busy_seconds: float,
        compile_cpu_seconds: float = 0.0,
        run_cpu_seconds: float = 0.0,
    ) -> None:
        """A judged job ended (with a verdict or a failure)."""
        with self._lock:
            s = self._stats
            s.jobs += 1
            s.busy_seconds += busy_seconds
            s.compile_cpu_seconds += compile_cpu_seconds
            s.run_cpu_seconds += run_cpu_seconds
            self._first = arrived if self._first is None else min(self._first, arrived)
            self._last = ended if self._last is None else max(self._last, ended)
            last_arrival = self._last_arrival
            self._last_arrival = arrived if last_arrival is None else max(last_arrival, arrived)

    def audit(self, seconds: float, flip: Flip | None = None, failed: bool = False) -> None:
        """An audit judging ended: agreeing, a flip, or a failure (no verdict to compare)."""
        with self._lock:
            s = self._stats
            s.audited += 1
            s.audit_seconds += seconds
            if failed:
                s.audit_failures += 1
            elif flip is not None:
                s.flips += 1
                if len(s.flip_details) < FLIPS_KEPT:
                    s.flip_details.append(flip)

    def take(self, cpus: float) -> WindowStats:
        """The counters since the last take (``cpus``: the judge CPUs now); restarts them."""
        with self._lock:
            stats = self._stats
            stats.cpus = float(cpus)
            if self._first is not None and self._last is not None:
                stats.wall_seconds = max(0.0, self._last - self._first)
            if self._last_arrival is not None and self._last is not None:
                stats.tail_seconds = max(0.0, self._last - self._last_arrival)
            self._stats = WindowStats(queue_high_water=self._waiting)
            self._first = self._last = self._last_arrival = None
            return stats


def _num(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


def step_metrics(
    results: Sequence[Mapping[str, Any]],
    window: WindowStats | Mapping[str, Any] | None = None,
) -> dict[str, float]:
    """The ``judge/…`` metrics of one step (all numbers; every verdict always present).

    From the samples: ``judge/samples``; ``judge/verdict/<V>`` (share of samples, one per
    reward verdict; ``LANGUAGE``: code in a language the run does not accept);
    ``judge/language/<L>`` (share of samples whose code is in language L, one per judge
    language); ``judge/has_code``, ``judge/compiled`` (shares of samples);
    ``judge/tests_passed_frac`` (mean of passed/total, 0 for a sample not judged);
    ``judge/failure`` (share of samples whose judging failed) and ``judge/failures/<kind>``
    (counts). From the pool's window, when given: ``judge/jobs`` (judged),
    ``judge/duplicates`` (judged once for several samples), ``judge/wall_seconds``,
    ``judge/tail_seconds`` (judging after the last job arrived), ``judge/cpu_seconds``
    (compile + run), ``judge/cpus``, ``judge/cpu_bound_seconds`` (cpu_seconds / cpus: the
    least wall time the judging could take) and ``judge/wall_over_bound``,
    ``judge/queue_high_water``, ``judge/audit/{audited,flips,flip_rate,failures,seconds}``.
    """
    out: dict[str, float] = {}
    n = len(results)
    if n:
        verdicts = Counter(str(r.get("verdict", "")) for r in results)
        out["judge/samples"] = float(n)
        for verdict in sorted(set(REWARD_VERDICTS) | set(verdicts)):
            out[f"judge/verdict/{verdict}"] = verdicts.get(verdict, 0) / n
        languages = Counter(str(r.get("language") or "") for r in results)
        for language in LANGUAGES:
            out[f"judge/language/{language}"] = languages.get(language, 0) / n
        out["judge/has_code"] = sum(_num(r.get("has_code")) > 0 for r in results) / n
        out["judge/compiled"] = sum(verdicts[v] for v in COMPILED_VERDICTS) / n
        fractions = (
            min(1.0, max(0.0, _num(r.get("passed")) / _num(r.get("total"))))
            if _num(r.get("total")) > 0
            else 0.0
            for r in results
        )
        out["judge/tests_passed_frac"] = sum(fractions) / n
        out["judge/failure"] = sum(_num(r.get("judge_failure")) > 0 for r in results) / n
        for kind in FAILURE_KINDS:
            out[f"judge/failures/{kind}"] = float(
                sum(
                    1
                    for r in results
                    if str(r.get("verdict", "")) == kind and _num(r.get("judge_failure")) > 0
                )
            )
    if window is not None:
        w = window if isinstance(window, WindowStats) else WindowStats.from_dict(window)
        cpu = w.compile_cpu_seconds + w.run_cpu_seconds
        out["judge/jobs"] = float(w.jobs)
        out["judge/duplicates"] = float(w.duplicates)
        out["judge/wall_seconds"] = w.wall_seconds
        out["judge/tail_seconds"] = w.tail_seconds
        out["judge/cpu_seconds"] = cpu
        out["judge/cpus"] = w.cpus
        bound = cpu / w.cpus if w.cpus > 0 else 0.0
        out["judge/cpu_bound_seconds"] = bound
        out["judge/wall_over_bound"] = w.wall_seconds / bound if bound > 0 else 0.0
        out["judge/queue_high_water"] = float(w.queue_high_water)
        out["judge/audit/audited"] = float(w.audited)
        out["judge/audit/flips"] = float(w.flips)
        compared = w.audited - w.audit_failures
        out["judge/audit/flip_rate"] = w.flips / compared if compared > 0 else 0.0
        out["judge/audit/failures"] = float(w.audit_failures)
        out["judge/audit/seconds"] = w.audit_seconds
    return out


def failure_alert(metrics: Mapping[str, float], max_rate: float) -> str | None:
    """A warning when the step's judge failure rate is above ``max_rate``, else None."""
    rate = metrics.get("judge/failure")
    if rate is None or rate <= max_rate:
        return None
    kinds = ", ".join(
        f"{kind} {int(metrics.get(f'judge/failures/{kind}', 0))}"
        for kind in FAILURE_KINDS
        if metrics.get(f"judge/failures/{kind}", 0) > 0
    )
    return (
        f"judge failure rate {rate:.1%} is above reward.failure_alert.max_rate "
        f"({max_rate:.1%}): {kinds or 'no kind recorded'}. These samples were scored "
        "judge_failure_score, not judged: check the judge nodes (Ray dashboard, judge pool "
        "logs) before trusting this step's rewards."
    )
