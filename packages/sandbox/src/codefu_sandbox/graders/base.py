"""What every grader gets and shares: the job (`GradingJob`), the interface (`Grader`), and
running the program once on one input under a test's limits (`GradingJob.serve`).

A problem's limits become one run's limits here (`per_test_run_limits`): CPU time, a
wall-clock backstop for sleeping programs and a hard wall bound, RLIMIT_AS and the memory
cgroup's cap with their margins, and the output cap.
"""

from __future__ import annotations

import contextlib
import shutil
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from codefu_sandbox.checkers import Checker
from codefu_sandbox.languages import LANGUAGES, Executor, Language, Program
from codefu_sandbox.models import Limits, TestCase
from codefu_sandbox.process import RunLimits
from codefu_sandbox.records import RunOutcome
from codefu_sandbox.runner import Runner, RunServer
from codefu_sandbox.syscalls import name_of
from codefu_sandbox.verdicts import TestResult, Verdict, decide

STDERR_HEAD = 4096


def memory_cap(memory_bytes: int) -> int:
    """RLIMIT_AS for a memory limit: a grace margin for libraries, untouched reservations
    and thread stacks; MLE is then decided on the peak RSS or the refused allocation."""
    return memory_bytes + max(memory_bytes // 2, 64 << 20)


def cgroup_cap(memory_bytes: int) -> int:
    """The memory cgroup's limit for a memory limit. A cgroup counts touched pages (and
    the page cache of the output, which it reclaims before an OOM kill), not reservations,
    so a small margin suffices: past the limit the run is MLE by its peak RSS anyway, and
    a program that keeps allocating is stopped sooner (each MLE test costs CPU in
    proportion to the memory it touches)."""
    return memory_bytes + max(memory_bytes // 8, 32 << 20)


def wall_backstop(time_seconds: float) -> float:
    """Wall-clock limit for sleeping or blocked programs: 3x the CPU limit plus 0.5 s.

    Time the program spends waiting for a CPU (a loaded machine) is not counted, so an
    oversubscribed judge does not turn AC into TLE; `hard_wall` bounds the total."""
    return 3 * time_seconds + 0.5


def hard_wall(time_seconds: float) -> float:
    """Absolute wall-clock bound per test, load or not: 30x the CPU limit plus 10 s.

    Only a safety net: sleeping programs are stopped by `wall_backstop`, spinning ones by
    the CPU limit. Generous, so a heavily oversubscribed host slows judging down but
    does not change verdicts."""
    return 30 * time_seconds + 10.0


def per_test_run_limits(limits: Limits, output_limit: int) -> RunLimits:
    """The runner's limits for one test of a problem with these limits."""
    return RunLimits(
        cpu_seconds=limits.time_seconds,
        wall_seconds=wall_backstop(limits.time_seconds),
        hard_wall_seconds=hard_wall(limits.time_seconds),
        address_space=memory_cap(limits.memory_bytes),
        cgroup_memory=cgroup_cap(limits.memory_bytes),
        file_size=output_limit,
    )


@dataclass(frozen=True)
class Run:
    """One run of the program on one input: how it ended (`outcome`, its output's size and
    stderr's head included), its verdict before any comparison (`verdict`; None: it ended
    normally within its limits, so its output is for the grader to compare), and its
    stdout (read only when `verdict` is None)."""

    outcome: RunOutcome
    verdict: Verdict | None
    output: bytes

    def result(self, verdict: Verdict, message: str) -> TestResult:
        """The test's result with this run's measurements."""
        outcome = self.outcome
        return TestResult(
            verdict=verdict,
            cpu_seconds=round(outcome.cpu_seconds, 6),
            wall_seconds=round(outcome.wall_seconds, 6),
            peak_memory_bytes=outcome.peak_memory_bytes,
            exit_code=outcome.exit_code,
            signal=outcome.signal,
            message=message,
        )

    def failure(self) -> TestResult:
        """The result of a run that did not end normally (`verdict` set): the runner's error
        for IE, else the head of the program's stderr, after the refused system call's name
        for SV."""
        assert self.verdict is not None
        outcome = self.outcome
        message = outcome.error or ""
        if self.verdict is not Verdict.IE and outcome.stderr_head:
            message = outcome.stderr_head[:300]
        if self.verdict is Verdict.SV:
            refused = outcome.refused_syscall
            named = f": {name_of(refused)}" if refused is not None else ""
            message = f"forbidden system call{named}\n{message}".strip()
        return self.result(self.verdict, message)


class ServedProgram:
    """A program served by one sandbox-exec process (`GradingJob.serve`): `run` runs it
    once more, in a fresh folder of its own, on one input."""

    def __init__(
        self,
        job: GradingJob,
        server: RunServer,
        private: Path,
        files: Mapping[str, Path],
        limits: RunLimits,
    ):
        self._job = job
        self._server = server
        self._private = private
        self._files = files
        self._limits = limits
        self._runs = 0

    def run(self, input: bytes, *, keep_output: bool = False) -> Run:
        """Run the program with `input` on stdin; its outcome, verdict (over the CPU time
        it is served under: TLE) and output, read when the verdict is None or with
        `keep_output` (a harness's records written before its run ended)."""
        job, private, index = self._job, self._private, self._runs
        self._runs += 1
        stdin = private / f"in-{index}"
        stdout = private / f"out-{index}"
        stderr = private / f"err-{index}"
        work = private / f"w-{index}"
        stdin.write_bytes(input)
        work.mkdir()
        for name, cached in self._files.items():  # e.g. byte code: a fresh copy per run
            shutil.copyfile(cached, work / name)
            (work / name).chmod(0o644)
        try:
            outcome = self._server.run(
                cwd=work,
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                writable_cwd=job.allow_file_writes,
            )
            size = min(stdout.stat().st_size if stdout.exists() else 0, job.output_limit)
            err = _read(stderr, STDERR_HEAD).decode(errors="replace")
            outcome = replace(outcome, output_bytes=size, stderr_head=err)
            verdict = decide(
                outcome,
                time_seconds=self._limits.cpu_seconds or job.limits.time_seconds,
                memory_bytes=job.limits.memory_bytes,
                output_limit=job.output_limit,
            )
            # The output is read only when a grader must compare it (a flood that ended in
            # OLE, TLE or RE is never read back, unless asked for).
            keep = verdict is None or keep_output
            output = _read(stdout, job.output_limit) if keep else b""
        finally:
            for path in (stdin, stdout, stderr):
                path.unlink(missing_ok=True)
            shutil.rmtree(work, ignore_errors=True)
        return Run(outcome, verdict, output)


@dataclass(frozen=True)
class GradingJob:
    """One submission's tests for a grader: the built `program` and the `executor` that
    built it (its language's toolchain: a grader may build a harness around the program
    with it), the `tests`, the problem's `limits` as they apply to the program (its
    language's time factor and its runtime's memory allowance included), the problem's
    `check` (output, expected, *, input) → CheckResult, the judge's `runner`, output cap
    and file-writing rule, and `stops_after`: whether judging stops after a test with
    that verdict (the grader returns the results up to it)."""

    program: Program
    executor: Executor
    language: Language
    tests: Sequence[TestCase]
    limits: Limits
    check: Checker
    runner: Runner
    output_limit: int
    allow_file_writes: bool
    stops_after: Callable[[Verdict], bool]

    def run_limits(self) -> RunLimits:
        """The limits of one run of the program on one test."""
        return per_test_run_limits(self.limits, self.output_limit)

    @contextlib.contextmanager
    def serve(
        self,
        argv: Sequence[str] | None = None,
        *,
        files: Mapping[str, Path] | None = None,
        readable: tuple[Path, ...] | None = None,
        limits: RunLimits | None = None,
    ) -> Iterator[ServedProgram]:
        """The program (or `argv` with `files` and `readable`: a harness around it) served
        for a series of runs, one at a time, each confined as a submission is (its
        language's profile, an unprivileged uid, Landlock, seccomp, a memory cgroup),
        under one test's limits (or `limits`)."""
        program = self.program
        limits = limits or self.run_limits()
        with (
            self.runner.workspace() as private,
            self.runner.uids.take() as uid,
            self.runner.memory_group(cgroup_cap(self.limits.memory_bytes)) as group,
            self.runner.serve(
                list(argv if argv is not None else program.argv),
                limits=limits,
                uid=uid,
                group=group,
                readable=readable if readable is not None else program.readable,
                profile=program.profile,
                syscalls=program.syscalls,
            ) as server,
        ):
            yield ServedProgram(
                self, server, private, files if files is not None else program.files, limits
            )


class Grader(ABC):
    """How a submission's tests run and compare: one subclass per grader module, one
    instance per judging, made from a `GraderConfig`'s `params`.

    `name`: the grader's name (its module's). `parameters`: the parameters it accepts and
    the type of each (JSON data: str, int, float, bool, list or dict), which is how a ground
    truth stores them; override `check_params` to check their values further (a `prelude` is
    checked here: one of the registered languages' `preludes`). `languages`: the languages
    whose programs it runs (None: all; the judge refuses a program in another as a compile
    error). `uses_checker`: whether the problem's checker compares its outputs (a grader
    that compares values itself: False; one expected output is then how the problem is
    judged). `allowances`: how many tests' time limits its runs take at most. `defines`:
    the name an answer must define (None: a program that reads its input). `source`: what
    the submission's executor builds. `grade`: the tests' results, in order, up to the first
    test after which `job.stops_after` says to stop."""

    name: ClassVar[str]
    parameters: ClassVar[Mapping[str, type]] = {}
    languages: ClassVar[tuple[str, ...] | None] = None
    uses_checker: ClassVar[bool] = True

    def __init__(self, params: Mapping[str, Any]) -> None:
        self.check_params(params)
        self.params = dict(params)

    @classmethod
    def check_params(cls, params: Mapping[str, Any]) -> None:
        """ValueError naming a parameter this grader does not take (and those it takes), or
        one whose value is not of its declared type."""
        for key, value in params.items():
            if key not in cls.parameters:
                choices = ", ".join(cls.parameters) if cls.parameters else "none"
                raise ValueError(
                    f"grader {cls.name!r} takes no parameter {key!r}: its parameters are {choices}"
                )
            kind = cls.parameters[key]
            if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
                raise ValueError(
                    f"grader {cls.name!r}: parameter {key!r} is a {kind.__name__}, got {value!r}"
                )
        if "prelude" in params:
            known = prelude_names()
            if params["prelude"] not in known:
                raise ValueError(
                    f"unknown prelude {params['prelude']!r}: choose one of {', '.join(known)}"
                )

    @classmethod
    def allowances(cls, tests: int) -> int:
        """How many tests' limits the runs of `tests` tests take at most, all together (one
        test's: its CPU time, and `wall_backstop` of it): the judge's bound on an answer,
        which the reward's deadline covers. One per test here."""
        return tests

    def defines(self) -> str | None:
        """The name an answer must define (the function a call-based problem names); None
        for a program that reads its input (the prompt then asks for one)."""
        return None

    def source(self, source: str, language: Language) -> str:
        """The source the executor builds for `source` in `language` (as it is)."""
        return source

    @abstractmethod
    def grade(self, job: GradingJob) -> list[TestResult]:
        """Run and compare `job`'s tests."""


def prelude_names() -> list[str]:
    """The names of the registered languages' preludes."""
    return sorted({name for language in LANGUAGES.values() for name in language.preludes})


def with_prelude(job: GradingJob, prelude: str | None) -> GradingJob:
    """`job` with its program run after its language's prelude named `prelude`; `job` as it
    is without a name, or when its language has no prelude so named (a prelude is written
    for one language: LiveCodeBench's imports are Python, and a C++ program runs as it is)."""
    source = job.language.preludes.get(prelude) if prelude else None
    if source is None:
        return job
    return replace(job, program=job.executor.with_prelude(job.program, source))


def _read(path: Path, limit: int) -> bytes:
    try:
        with path.open("rb") as f:
            return f.read(limit)
    except FileNotFoundError:
        return b""
