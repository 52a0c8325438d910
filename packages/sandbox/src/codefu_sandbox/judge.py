"""The judge: compile once, run every test in a fresh sandboxed process, check, decide."""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from codefu_sandbox.checker_runner import CheckerLimits, CheckerRunner, PreparedChecker
from codefu_sandbox.checkers import MODULES, CheckResult, bind, get_checker, program
from codefu_sandbox.compiler import Compiler, CompilerConfig
from codefu_sandbox.executors import (
    DEFAULT_LANGUAGE,
    DEFAULT_TIME_FACTORS,
    LANGUAGES,
    SUFFIXES,
    CppExecutor,
    Executor,
    Program,
    PythonConfig,
    PythonExecutor,
    check_language,
)
from codefu_sandbox.models import CheckerConfig, Limits, Submission, TestCase
from codefu_sandbox.runner import RunLimits, Runner, RunServer, SandboxError
from codefu_sandbox.verdicts import (
    JudgeReport,
    RunOutcome,
    TestResult,
    Verdict,
    aggregate,
    checked,
    decide,
    internal_error,
    static_data_verdict,
)

DEFAULT_OUTPUT_LIMIT = 64 << 20
STDERR_HEAD = 4096


def default_cache_dir() -> Path:
    """$CODEFU_CACHE_DIR, else ~/.cache/codefu: the root of every cache the project keeps
    (the judge's compile cache is its top level; the rehearsal's warm starts and the offline
    bundle's wheels are in its `rehearsal/` and `bundle/`)."""
    env = os.environ.get("CODEFU_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "codefu"


def usable_cpus() -> int:
    """CPUs this process may run on (affinity mask), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


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


def check_time_factors(factors: Mapping[str, float]) -> dict[str, float]:
    """The per-language time factors with the defaults filled in; ValueError for an
    unknown language or a factor that is not a number > 0."""
    for language, factor in factors.items():
        check_language(language)
        if isinstance(factor, bool) or not isinstance(factor, int | float) or not factor > 0:
            raise ValueError(f"time factor for {language} must be a number > 0, got {factor!r}")
    return {**DEFAULT_TIME_FACTORS, **{k: float(v) for k, v in factors.items()}}


class Judge:
    """Compile and judge C++ (the default) and Python 3 submissions (Contract 1).
    Thread-safe; share one per process."""

    def __init__(
        self,
        cache_dir: Path | None = None,
        *,
        compiler: CompilerConfig | None = None,
        output_limit: int = DEFAULT_OUTPUT_LIMIT,
        netns: bool = False,
        allow_file_writes: bool = False,
        time_factors: Mapping[str, float] | None = None,
        python: PythonConfig | None = None,
    ) -> None:
        """`allow_file_writes`: let programs create files in their private work dir
        (each at most `output_limit` bytes); off by default, so a program can write
        only its stdout/stderr and cannot fill the disk. `time_factors`: per language,
        the factor on a problem's time limit (e.g. `{"python": 3.0}`; languages left out
        keep `executors.DEFAULT_TIME_FACTORS`). `python`: the Python executor's settings
        (interpreter, byte-compilation limits); the interpreter is set up on the first
        Python submission."""
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        self.runner = Runner(self.cache_dir, netns=netns)
        self.compiler = Compiler(self.cache_dir, self.runner, compiler)
        self.checkers = CheckerRunner(self.runner, self.compiler)
        self.output_limit = output_limit
        self.allow_file_writes = allow_file_writes
        self.time_factors = check_time_factors(time_factors or {})
        self._python_config = python
        self._executors: dict[str, Executor] = {"cpp": CppExecutor(self.compiler)}
        self._executors_lock = threading.Lock()

    @property
    def isolation(self) -> str:
        return self.runner.isolation.describe()

    def executor(self, language: str) -> Executor:
        """The executor for `language` (ValueError naming the languages when unknown), set
        up on first use; SandboxError when its toolchain cannot work on this host."""
        check_language(language)
        with self._executors_lock:
            found = self._executors.get(language)
            if found is None:
                assert language == "python", LANGUAGES
                found = PythonExecutor(self.cache_dir, self.runner, self._python_config)
                self._executors[language] = found
            return found

    def limits_for(self, limits: Limits, language: str, program: Program) -> Limits:
        """A problem's limits as they apply to `program` in `language`: the time limit
        times the language's factor, the memory limit plus the runtime's allowance."""
        return Limits(
            limits.time_seconds * self.time_factors[language],
            limits.memory_bytes + program.memory_allowance,
        )

    def judge(
        self,
        source: str,
        tests: Sequence[TestCase],
        limits: Limits,
        checker: str | CheckerConfig = "tokens",
        stop_on_first_failure: bool = False,
        *,
        checker_params: Mapping[str, Any] | None = None,
        stop_on: Collection[Verdict] = (),
        language: str = DEFAULT_LANGUAGE,
    ) -> JudgeReport:
        """Judge one submission. Raises ValueError for no tests, an unknown checker, a
        parameter the checker does not take, or a test whose input or output is not text
        that encodes to bytes (see `check_tests`).

        `checker` is a checker name with its `checker_params` (e.g. `tolerance` for
        `codecontests`, `precision` for `floats`), or a `CheckerConfig` holding both.
        Judging stops after the first failing test with `stop_on_first_failure`, or after
        the first test whose verdict is in `stop_on`. `language` is "cpp" or "python"
        (ValueError otherwise); its time factor scales `limits.time_seconds`. The first
        Python submission sets up the interpreter: SandboxError (not a verdict) when it
        cannot run in the sandbox on this host.
        """
        tests = list(tests)
        if not tests:
            raise ValueError("no tests to judge against: pass at least one TestCase")
        check_tests(tests)
        config = checker_config(checker, checker_params)
        executor = self.executor(language)
        try:
            check = self._checker(config)
            compiled, program = executor.compile(source)
        except SandboxError as exc:  # compiling the checker or the submission
            return internal_error(str(exc), len(tests), self.isolation)
        if program is None:
            return aggregate([], compiled, len(tests), self.isolation)
        limits = self.limits_for(limits, language, program)
        mle = static_data_verdict(
            program.static_bytes, address_space=memory_cap(limits.memory_bytes)
        )
        if mle is not None:
            return aggregate([mle], compiled, len(tests), self.isolation)
        results: list[TestResult] = []
        run_limits = per_test_run_limits(limits, self.output_limit)
        with (
            self.runner.workspace() as private,
            self.runner.uids.take() as uid,
            self.runner.memory_group(cgroup_cap(limits.memory_bytes)) as group,
            self.runner.serve(
                list(program.argv),
                limits=run_limits,
                uid=uid,
                group=group,
                readable=program.readable,
            ) as server,
        ):
            for index, test in enumerate(tests):
                result = self._run_test(
                    server=server,
                    test=test,
                    limits=limits,
                    check=check,
                    private=private,
                    index=index,
                    files=program.files,
                )
                results.append(result)
                if result.verdict in stop_on or (
                    stop_on_first_failure and result.verdict is not Verdict.AC
                ):
                    break
        return aggregate(results, compiled, len(tests), self.isolation)

    def judge_many(
        self, submissions: Sequence[Submission], max_workers: int | None = None
    ) -> list[JudgeReport]:
        """Judge many submissions, at most `usable_cpus()` at a time; reports in order."""
        workers = min(max_workers or usable_cpus(), usable_cpus(), max(1, len(submissions)))

        def one(sub: Submission) -> JudgeReport:
            return self.judge(
                sub.source,
                sub.tests,
                sub.limits,
                sub.checker,
                sub.stop_on_first_failure,
                checker_params=sub.checker_params,
                language=sub.language,
            )

        if workers == 1:
            return [one(s) for s in submissions]
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="codefu-judge") as pool:
            return list(pool.map(one, submissions))

    # ---------------------------------------------------------------- internals
    def _checker(self, config: CheckerConfig) -> Callable[..., CheckResult]:
        """The check function for `config`: a checker module's `check` with its parameters
        (a checker program's runs in this judge's sandbox), or a checker program at a path
        (.cpp, .py or an executable), run in the sandbox."""
        name, params = config.name, config.params
        if name in MODULES:
            return bind(name, params, sandbox=self.checkers)
        path = Path(name.removeprefix("testlib:"))
        seconds = params.get("timeout", CheckerLimits.time_seconds)
        language = SUFFIXES.get(path.suffix)  # a checker program's source
        if language is not None and path.is_file():
            return self._checker(program.config(path.read_text(), language, time_seconds=seconds))
        if path.is_file() and os.access(path, os.X_OK):
            return self._run_checker(
                PreparedChecker((str(path.resolve()),)), CheckerLimits(seconds)
            )
        return get_checker(name)  # raises, naming the choices

    def _run_checker(
        self, prepared: PreparedChecker, limits: CheckerLimits
    ) -> Callable[..., CheckResult]:
        def check(output: str, expected: str, *, input: str) -> CheckResult:
            return self.checkers.check(
                prepared, input=input, output=output, expected=expected, limits=limits
            )

        return check

    def _run_test(
        self,
        *,
        server: RunServer,
        test: TestCase,
        limits: Limits,
        check: Callable[..., CheckResult],
        private: Path,
        index: int,
        files: Mapping[str, Path],
    ) -> TestResult:
        stdin = private / f"in-{index}"
        stdout = private / f"out-{index}"
        stderr = private / f"err-{index}"
        work = private / f"w-{index}"
        stdin.write_bytes(test.input.encode("utf-8", "surrogateescape"))
        work.mkdir()
        for name, cached in files.items():  # e.g. byte code: a fresh copy per test
            shutil.copyfile(cached, work / name)
            (work / name).chmod(0o644)
        try:
            outcome = server.run(
                cwd=work,
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                writable_cwd=self.allow_file_writes,
            )
            size = min(stdout.stat().st_size if stdout.exists() else 0, self.output_limit)
            err = _read(stderr, STDERR_HEAD).decode(errors="replace")
            outcome = RunOutcome(**{**outcome.__dict__, "output_bytes": size, "stderr_head": err})
            verdict = decide(
                outcome,
                time_seconds=limits.time_seconds,
                memory_bytes=limits.memory_bytes,
                output_limit=self.output_limit,
            )
            # The output is read only when a checker must see it (a flood that ended in
            # OLE, TLE or RE is never read back).
            output = _read(stdout, self.output_limit) if verdict is None else b""
        finally:
            for path in (stdin, stdout, stderr):
                path.unlink(missing_ok=True)
            _rmtree(work)
        message = outcome.error or ""
        if verdict is None:
            answer = check(output.decode("utf-8", "surrogateescape"), test.output, input=test.input)
            message = answer.message
            verdict = checked(answer)
        elif verdict is not Verdict.IE and err:
            message = err[:300]
        return TestResult(
            verdict=verdict,
            cpu_seconds=round(outcome.cpu_seconds, 6),
            wall_seconds=round(outcome.wall_seconds, 6),
            peak_memory_bytes=outcome.peak_memory_bytes,
            exit_code=outcome.exit_code,
            signal=outcome.signal,
            message=message,
        )


def checker_config(
    checker: str | CheckerConfig, params: Mapping[str, Any] | None = None
) -> CheckerConfig:
    """One `CheckerConfig` from `Judge.judge`'s two ways of naming a checker; ValueError
    when a configuration comes with `checker_params` too, or when it is invalid."""
    if isinstance(checker, CheckerConfig):
        if params:
            raise ValueError(
                "checker_params given with a CheckerConfig: put the parameters in "
                "CheckerConfig.params instead"
            )
        return checker
    return CheckerConfig(checker, dict(params or {}))


def check_tests(tests: Sequence[TestCase]) -> None:
    """Raise ValueError naming the first test whose input or expected output is not a str
    that encodes as UTF-8; bytes that are not UTF-8 come in as str decoded with
    `errors="surrogateescape"` and go back out unchanged."""
    for index, test in enumerate(tests):
        for field, text in (("input", test.input), ("output", test.output)):
            if not isinstance(text, str):
                raise ValueError(
                    f"test {index}: {field} is {type(text).__name__}, not str; decode bytes "
                    'with .decode("utf-8", "surrogateescape")'
                )
            try:
                text.encode("utf-8", "surrogateescape")
            except UnicodeEncodeError as exc:
                raise ValueError(
                    f"test {index}: {field} has a character UTF-8 cannot encode at "
                    f"{exc.start} ({exc.reason}); decode raw bytes with "
                    '.decode("utf-8", "surrogateescape")'
                ) from None


def _read(path: Path, limit: int) -> bytes:
    try:
        with path.open("rb") as f:
            return f.read(limit)
    except FileNotFoundError:
        return b""


def _rmtree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
