"""The call grader (Python): each test calls the function a problem names, with the test's
arguments, and compares the returned value with the expected one.

Parameters: `fn_name`, the function, called as `Solution().<fn_name>(*args)` when the
program defines a class `Solution` with that attribute, else as the module-level
`<fn_name>(*args)`; `prelude`, a named prelude of the language run first in the program's
module (`"livecodebench"`, LiveCodeBench's imports); `compare`, `"exact"` (the default: the
result's JSON equals the expected value), `"apps"` (also equal when the expected value is a
non-empty list whose first element equals the result, and a first argument that is a dict
gets integer keys, as APPS' and TACO's graders do) or `"livecodebench"` (LiveCodeBench's
`prediction == expected`: a returned tuple is read as a list, but a tuple inside the
result, or a dict key that is not a string, never equals JSON data: WA). A test's input
is the JSON text of the argument array, its output the JSON text of the expected value.

The program runs as any submission does (its language's interpreter, uid, Landlock,
seccomp allowlist, rlimits, memory cgroup, output cap), inside a harness
(`call_harness.py`) that loads it once and calls it on every test in one process, as
LiveCodeBench does: the interpreter starts once per answer, not once per test, and a test
sees what the earlier ones left (module globals, class attributes, caches, the one
`Solution` instance). The harness serialises each result as JSON inside the sandbox; this
process reads the records and compares the data, never the program's objects (an object
whose `__eq__` says True is data here, or WA). The expected values never enter the
sandbox. A process that ends during a test (over the test's CPU time: its timer's SIGPROF,
a crash, the memory cap, a blocked call) or stops after a test over the memory limit is
replaced by a fresh one for the tests after it. All of an answer's processes share one
budget, `allowances` tests' limits (CPU, and the wall backstop of it), which the sandbox
enforces: a program that turned the harness's timers off is stopped there, and judging
stops.

Verdicts: AC, WA (a different value, or one that is not JSON data), TLE (a call over the
time limit, or blocked), MLE (over the memory limit, or MemoryError), RE (the call, or loading the
module, raised), OLE, SV, and CE when the program has no such function (as a missing `main`
is a link error). A syntax error is the build's CE, as for any Python program.
"""

from __future__ import annotations

import json
import secrets
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from pathlib import Path
from typing import Any, ClassVar

from codefu_sandbox.checkers import mismatch
from codefu_sandbox.graders import GraderConfig
from codefu_sandbox.graders.base import (
    Grader,
    GradingJob,
    Run,
    ServedProgram,
    per_test_run_limits,
    wall_backstop,
)
from codefu_sandbox.languages import python
from codefu_sandbox.languages.python import FLAGS, SITE_BUILTINS, PythonExecutor
from codefu_sandbox.models import Limits, TestCase
from codefu_sandbox.verdicts import TestResult, Verdict

HARNESS = (Path(__file__).parent / "call_harness.py").read_text()
EXACT = "exact"
APPS = "apps"
LIVECODEBENCH = "livecodebench"
COMPARES = (EXACT, APPS, LIVECODEBENCH)
# Longer integers are compared as decimals: int() of more digits is refused by default.
INT_DIGITS = 4000


class Call(Grader):
    """Call the named function on each test's arguments; compare the JSON of its result."""

    name = "call"
    parameters: ClassVar[Mapping[str, type]] = {"fn_name": str, "prelude": str, "compare": str}
    languages = (python.LANGUAGE.name,)
    uses_checker = False  # the returned values are compared here

    @classmethod
    def check_params(cls, params: Any) -> None:
        super().check_params(params)
        function = params.get("fn_name")
        if not isinstance(function, str) or not function.strip():
            raise ValueError(
                f"grader 'call' needs fn_name, the function (or Solution method) to call, "
                f"got {function!r}"
            )
        compare = params.get("compare", EXACT)
        if compare not in COMPARES:
            raise ValueError(
                f"grader 'call': unknown compare {compare!r}: choose one of {', '.join(COMPARES)}"
            )

    @classmethod
    def allowances(cls, tests: int) -> int:
        return tests + 1  # loading the module has one test's time

    def defines(self) -> str:
        return str(self.params["fn_name"])

    def grade(self, job: GradingJob) -> list[TestResult]:
        executor = job.executor
        if not isinstance(executor, PythonExecutor):  # the judge checks `languages` first
            raise ValueError(f"grader 'call' runs Python programs, not {job.language.name}")
        argv = (executor.interpreter, *FLAGS, "-c", HARNESS)
        # One budget for all of the answer's processes: that of `allowances` tests. Each
        # call's own timers stop it first, unless the program turned them off.
        count = len(job.tests)
        time_seconds = self.allowances(count) * job.limits.time_seconds
        budget = per_test_run_limits(
            Limits(time_seconds, job.limits.memory_bytes), job.output_limit
        )
        results: list[TestResult] = []
        start: int | None = 0
        while start is not None and start < count:
            if min(budget.cpu_seconds or 0.0, budget.wall_seconds) < LEAST_SECONDS:
                results.append(TestResult(Verdict.TLE, 0.0, 0.0, 0, None, None, SPENT))
                break
            with job.serve(argv, limits=budget) as served:
                run, done, start = self._run(job, served, start)
            results += done
            budget = replace(
                budget,
                cpu_seconds=(budget.cpu_seconds or 0.0) - run.outcome.cpu_seconds,
                wall_seconds=budget.wall_seconds - run.outcome.wall_seconds,
                hard_wall_seconds=(budget.hard_wall_seconds or 0.0) - run.outcome.wall_seconds,
            )
        return results

    def _run(
        self, job: GradingJob, served: ServedProgram, start: int
    ) -> tuple[Run, list[TestResult], int | None]:
        """Run the harness on tests `start`…; the run, the tests' results, and where a fresh
        process goes on (None: judging is over)."""
        tests = job.tests[start:]
        nonce = secrets.token_hex(16)
        run = served.run(self._input(job, tests, nonce), keep_output=True)
        records = Records.parse(run.output, nonce)
        if not records.ready:
            return run, _unloaded(job, run, records.load, len(tests)), None
        results: list[TestResult] = []
        for offset, test in enumerate(tests):
            record = records.tests.get(offset)
            if record is None and any(i > offset for i in records.tests):
                result = TestResult(Verdict.WA, 0.0, 0.0, 0, None, None, DAMAGED)
            elif record is None:  # the process ended during this test
                result = _ended(run, "the call")
                results.append(result)
                # Not after the sandbox's own deadline (the program turned its timers off)
                # or a violation.
                fresh = run.outcome.killed is None and result.verdict not in (
                    Verdict.SV,
                    Verdict.IE,
                )
                go_on = fresh and not job.stops_after(result.verdict)
                return run, results, start + offset + 1 if go_on else None
            else:
                result = self._judged(job, record, test)
            results.append(result)
            if job.stops_after(result.verdict):
                return run, results, None
            if record is not None and (
                record.kind == "blocked" or record.peak_bytes > job.limits.memory_bytes
            ):
                return run, results, start + offset + 1  # the harness stopped: go on afresh
        return run, results, None

    def _input(self, job: GradingJob, tests: Sequence[TestCase], nonce: str) -> bytes:
        prelude = self.params.get("prelude")
        # site's exit() and quit() first, as every Python program gets them; they leave no
        # name in the module.
        named = job.language.preludes.get(prelude, "") if prelude else ""
        header = {
            "nonce": nonce,
            "function": self.params["fn_name"].strip(),
            "prelude": SITE_BUILTINS + named,
            "seconds": job.limits.time_seconds,
            "wall": wall_backstop(job.limits.time_seconds),
            "memory": job.limits.memory_bytes,
            "apps": self.params.get("compare") == APPS,
            "strict": self.params.get("compare") == LIVECODEBENCH,
            "tests": len(tests),
        }
        # One line per test: a JSON text holds a raw newline only between its tokens.
        lines = [json.dumps(header), *(_one_line(t.input) for t in tests)]
        return ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape")

    def _judged(self, job: GradingJob, record: Record, test: TestCase) -> TestResult:
        """A test's result from the harness's record of it."""
        failed = _failed(record, job, "the call")
        if failed is not None:
            return failed

        def result(verdict: Verdict, message: str = "") -> TestResult:
            return TestResult(
                verdict, record.cpu, record.wall, record.peak_bytes, None, None, message
            )

        if record.kind == "input":
            return result(Verdict.IE, f"the test's arguments: {_text(record.payload)}")
        if record.kind != "value":
            return result(Verdict.WA, f"the result is not JSON data: {_text(record.payload)}")
        try:
            expected = _data(test.output)
        except ValueError as exc:
            return result(Verdict.IE, f"the expected output is not JSON: {exc}")
        try:
            got = _data(record.payload)
        except ValueError:
            return result(Verdict.WA, "the result record is not JSON")
        if _equal(got, expected) or (
            self.params.get("compare") == APPS
            and isinstance(expected, list)
            and bool(expected)
            and _equal(got, expected[0])
        ):
            return result(Verdict.AC)
        return result(Verdict.WA, mismatch("result", record.payload, test.output))


SPENT = "the answer's time budget is spent (its earlier processes used it)"
# The least CPU time a fresh process is started with.
LEAST_SECONDS = 0.05
DAMAGED = "no result record for this test: the program wrote over the record channel"


@dataclass(frozen=True)
class Record:
    """The harness's record of one test: CPU and wall seconds of the call, the process's
    peak memory after it, and what it gave (`kind`, `payload`: see call_harness.py)."""

    cpu: float
    wall: float
    peak_bytes: int
    kind: str
    payload: str


@dataclass
class Records:
    """What a harness run wrote (the first record of each): loading the program (`load`)
    and each test's, by its index in the run."""

    load: Record | None = None
    tests: dict[int, Record] = field(default_factory=dict)

    @classmethod
    def parse(cls, output: bytes, nonce: str) -> Records:
        found = cls()
        prefix = nonce.encode() + b" "
        for raw in output.split(b"\n"):
            if not raw.startswith(prefix):
                continue
            what, _, rest = raw[len(prefix) :].decode("utf-8", "replace").partition(" ")
            if what == "load" and found.load is None:
                found.load = _record(rest)
            elif what == "test" and found.ready:
                index, _, rest = rest.partition(" ")
                record = _record(rest)
                if record is not None and index.isdigit():
                    found.tests.setdefault(int(index), record)
        return found

    @property
    def ready(self) -> bool:
        """Whether the program loaded and has the function."""
        return self.load is not None and self.load.kind == "ready"


def _record(text: str) -> Record | None:
    """`CPU WALL PEAK_KIB KIND PAYLOAD` as a record; None when malformed."""
    fields = text.split(" ", 4)
    try:
        cpu, wall, peak = float(fields[0]), float(fields[1]), int(fields[2])
        return Record(cpu, wall, peak * 1024, fields[3], fields[4])
    except (IndexError, ValueError):
        return None


def _unloaded(job: GradingJob, run: Run, load: Record | None, count: int) -> list[TestResult]:
    """The results of a run that never called the function: CE when the program has no
    such function, else how loading it failed, for every test (up to a stop)."""
    if load is not None and load.kind == "missing":
        return [run.result(Verdict.CE, _text(load.payload))]
    if load is None or run.verdict in (Verdict.SV, Verdict.IE, Verdict.OLE):
        failure = _ended(run, "loading the program")
    else:
        failure = _failed(load, job, "loading the program") or run.result(
            Verdict.RE, _text(load.payload)
        )
    results: list[TestResult] = []
    for _ in range(count):
        results.append(failure)
        if job.stops_after(failure.verdict):
            break
    return results


def _failed(record: Record, job: GradingJob, doing: str) -> TestResult | None:
    """The result of a record of a time, memory or run-time failure (None otherwise)."""

    def result(verdict: Verdict, message: str = "") -> TestResult:
        return TestResult(verdict, record.cpu, record.wall, record.peak_bytes, None, None, message)

    if record.cpu > job.limits.time_seconds:
        return result(Verdict.TLE, f"{doing} ran over the time limit")
    if record.kind == "blocked":
        return result(Verdict.TLE, _text(record.payload))
    if record.peak_bytes > job.limits.memory_bytes or record.kind == "memory":
        return result(Verdict.MLE, _text(record.payload))
    if record.kind == "raised":
        return result(Verdict.RE, _text(record.payload))
    return None


def _ended(run: Run, doing: str) -> TestResult:
    """The result of the test a process ended in while `doing` it: TLE for its timer
    (SIGPROF), RE for an exit without a record, else the run's own verdict."""
    if run.verdict in (Verdict.SV, Verdict.IE):
        return run.failure()
    if run.outcome.signal == signal.SIGPROF:
        return run.result(Verdict.TLE, f"{doing} ran over the time limit")
    if run.verdict is None:
        code = run.outcome.exit_code
        return run.result(Verdict.RE, f"the process ended (exit code {code}) during {doing}")
    return run.failure()


def _one_line(text: str) -> str:
    """A JSON text on one line (a raw CR or LF in valid JSON is whitespace between tokens)."""
    return text.replace("\r", " ").replace("\n", " ")


def _integer(digits: str) -> int | Decimal:
    return int(digits) if len(digits) <= INT_DIGITS else Decimal(digits)


def _data(text: str) -> Any:
    """JSON text as data (long integers as decimals); ValueError when it is not JSON."""
    try:
        return json.loads(text, parse_int=_integer)
    except RecursionError as exc:
        raise ValueError("nested too deeply") from exc


def _equal(got: Any, expected: Any) -> bool:
    """Python's equality of two JSON values (a list equals a list, 1 equals 1.0)."""
    try:
        return bool(got == expected)
    except RecursionError:
        return False


def _text(payload: str) -> str:
    """A JSON string payload as text (the payload itself when it is not one)."""
    try:
        value = json.loads(payload)
    except ValueError:
        return payload[:300]
    return value[:300] if isinstance(value, str) else payload[:300]


GRADER = Call


def config(fn_name: str, *, prelude: str | None = None, compare: str = EXACT) -> GraderConfig:
    """This grader's configuration: call `fn_name`, after the prelude named `prelude`,
    compared as `compare` (`EXACT` or `APPS`); ValueError for a value it cannot use."""
    params: dict[str, str] = {"fn_name": fn_name, "compare": compare}
    if prelude is not None:
        params["prelude"] = prelude
    return GraderConfig(Call.name, params)
