"""The verdict model: per-test decisions, priority, and the report.

Priority (most severe first), used both to decide one test and to aggregate a report:

    IE > SV > TLE > MLE > OLE > RE > WA > AC      (CE is decided before any test runs)

IE first: a judge failure must never be blamed on the program. SV next: a forbidden
operation is the most serious thing a program can do and is often what made it crash
or stall. TLE before MLE/OLE/RE: a program killed for time did not finish, whatever
else happened (DMOJ's order). MLE before RE: a program that hit the memory cap is
often ended by a signal (an OOM kill, or a crash after a refused allocation), and the
cause is memory. OLE before RE: the output-size cap kills with SIGXFSZ. WA only for
programs that ended normally.
"""

from __future__ import annotations

import enum
import signal as _signal
from dataclasses import asdict, dataclass, field
from typing import Any

from codefu_sandbox.records import CheckResult, CompileResult, RunOutcome


class Verdict(enum.StrEnum):
    AC = "AC"  # accepted
    WA = "WA"  # wrong answer
    TLE = "TLE"  # time limit exceeded (CPU time, or the wall-clock backstop)
    MLE = "MLE"  # memory limit exceeded (peak over the limit, or an allocation refused)
    RE = "RE"  # runtime error (non-zero exit or a signal)
    OLE = "OLE"  # output limit exceeded
    CE = "CE"  # compilation error
    SV = "SV"  # security violation: the program tried a forbidden operation
    IE = "IE"  # internal error of the judge


PRIORITY: tuple[Verdict, ...] = (
    Verdict.IE,
    Verdict.CE,
    Verdict.SV,
    Verdict.TLE,
    Verdict.MLE,
    Verdict.OLE,
    Verdict.RE,
    Verdict.WA,
    Verdict.AC,
)
_RANK = {v: i for i, v in enumerate(PRIORITY)}


def worst(verdicts: list[Verdict]) -> Verdict:
    """The most severe verdict by PRIORITY (AC for an empty list)."""
    return min(verdicts, key=_RANK.__getitem__, default=Verdict.AC)


# A refused allocation, as C++ (bad_alloc, perror) and Python (MemoryError) report it.
BAD_ALLOC_MARKERS = ("std::bad_alloc", "Cannot allocate memory", "out of memory", "MemoryError")
EXEC_MARGIN = 16 << 20  # shared libraries and the initial stack, mapped at exec too


def decide(
    run: RunOutcome, *, time_seconds: float, memory_bytes: int, output_limit: int
) -> Verdict | None:
    """The verdict of a run before its output is checked; None means "ask the checker"."""
    if run.error is not None:
        return Verdict.IE
    if run.refused_syscall is not None or run.signal == _signal.SIGSYS:
        return Verdict.SV
    if run.killed is not None or run.cpu_seconds > time_seconds or run.signal == _signal.SIGXCPU:
        return Verdict.TLE
    abnormal = run.signal is not None or run.exit_code != 0
    if run.peak_memory_bytes > memory_bytes or run.memory_cap_hit:
        return Verdict.MLE
    if abnormal and any(marker in run.stderr_head for marker in BAD_ALLOC_MARKERS):
        return Verdict.MLE
    if run.signal == _signal.SIGXFSZ or run.output_bytes >= output_limit:
        return Verdict.OLE
    if abnormal:
        return Verdict.RE
    return None


def checked(result: CheckResult) -> Verdict:
    """The verdict of a run that ended normally, from its checker's answer: IE when the
    checker itself failed (never the program's fault), else AC or WA."""
    if result.internal_error:
        return Verdict.IE
    return Verdict.AC if result.ok else Verdict.WA


def static_data_verdict(static_bytes: int, *, address_space: int) -> TestResult | None:
    """MLE on the first test for a program whose static data and code (`static_bytes`) do
    not fit its address-space cap, None when they do. The kernel would kill it at exec
    (SIGSEGV, an RE); its static data alone is over the memory limit, which users know as
    MLE on the first test."""
    if static_bytes + EXEC_MARGIN <= address_space:
        return None
    message = f"static data and code take {static_bytes >> 20} MiB, over the memory limit"
    return TestResult(Verdict.MLE, 0.0, 0.0, static_bytes, None, None, message)


@dataclass
class TestResult:
    __test__ = False  # not a pytest test class

    verdict: Verdict
    cpu_seconds: float
    wall_seconds: float
    peak_memory_bytes: int
    exit_code: int | None
    signal: int | None
    message: str = ""  # checker message or a short reason; may be empty


@dataclass
class JudgeReport:
    verdict: Verdict
    tests: list[TestResult]
    compile: CompileResult
    total: int
    isolation: str
    passed: int = field(init=False)

    def __post_init__(self) -> None:
        self.passed = sum(1 for t in self.tests if t.verdict is Verdict.AC)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict (verdicts as their string values)."""
        return {
            "verdict": str(self.verdict),
            "passed": self.passed,
            "total": self.total,
            "isolation": self.isolation,
            "compile": asdict(self.compile),
            "tests": [{**asdict(t), "verdict": str(t.verdict)} for t in self.tests],
        }


def aggregate(
    tests: list[TestResult], compile_result: CompileResult, total: int, isolation: str
) -> JudgeReport:
    """The report: CE when compilation failed, else the worst test verdict.

    A report whose tests did not all run (early stop) is still decided by the tests that
    ran: the first failure is the reason for stopping, and it is the worst seen.
    """
    if not compile_result.ok:
        verdict = Verdict.CE
    elif not tests:
        verdict = Verdict.IE  # nothing ran: never AC
    else:
        verdict = worst([t.verdict for t in tests])
    return JudgeReport(verdict, tests, compile_result, total, isolation)


def internal_error(reason: str, total: int, isolation: str) -> JudgeReport:
    """The report when the judge failed before any test ran (compiling the checker or the
    submission raised): IE, never CE, with the reason as the compile diagnostics."""
    failed = CompileResult(False, 0.0, False, f"[internal error] {reason}")
    return JudgeReport(Verdict.IE, [], failed, total, isolation)
