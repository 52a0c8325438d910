"""The judge: build once, hand the tests to the problem's grader, decide the report.

A submission is in a registered language (`codefu_sandbox.languages`; its executor builds
it, cached) and is graded by a grader (`codefu_sandbox.graders`; `stdio` by default: each
test's stdin → stdout → the checker). The judge knows neither any language nor any way
of running a test: it asks the registries.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codefu_sandbox import languages
from codefu_sandbox.checker_runner import CheckerLimits, CheckerRunner
from codefu_sandbox.checkers import (
    CHECKERS,
    PROGRAM,
    CheckerConfig,
    CheckResult,
    bind,
    get_checker,
    program,
)
from codefu_sandbox.graders import GraderConfig, GradingJob, grader_config
from codefu_sandbox.graders.base import memory_cap
from codefu_sandbox.languages import (
    DEFAULT_LANGUAGE,
    BuildConfig,
    Executor,
    Program,
    check_language,
    check_time_factors,
)
from codefu_sandbox.models import Limits, TestCase
from codefu_sandbox.records import CompileResult
from codefu_sandbox.request import JudgeRequest, request_for
from codefu_sandbox.runner import Runner, SandboxError
from codefu_sandbox.verdicts import (
    JudgeReport,
    Verdict,
    aggregate,
    internal_error,
    static_data_verdict,
)

DEFAULT_OUTPUT_LIMIT = 64 << 20

__all__ = [
    "DEFAULT_OUTPUT_LIMIT",
    "Judge",
    "RequestedSubmission",
    "Submission",
    "check_tests",
    "check_time_factors",
    "checked_tests",
    "checker_config",
    "default_cache_dir",
    "usable_cpus",
]


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


@dataclass(frozen=True)
class Submission:
    """Everything `Judge.judge_many` needs to judge one program (`Judge.judge`'s arguments)."""

    source: str
    tests: Sequence[TestCase]
    limits: Limits
    checker: str | CheckerConfig = "tokens"
    stop_on_first_failure: bool = False
    checker_params: Mapping[str, Any] | None = None
    language: str = DEFAULT_LANGUAGE  # a registered language (codefu_sandbox.languages)
    grader: str | GraderConfig | None = None  # None: the default grader (stdio)


@dataclass(frozen=True)
class RequestedSubmission:
    """A program, its tests and the request that judges it (`Judge.judge_request`)."""

    source: str
    tests: Sequence[TestCase]
    request: JudgeRequest


class Judge:
    """Compile and judge submissions in the registered languages (Contract 1).
    Thread-safe; share one per process."""

    def __init__(
        self,
        cache_dir: Path | None = None,
        *,
        toolchains: Mapping[str, BuildConfig] | None = None,
        output_limit: int = DEFAULT_OUTPUT_LIMIT,
        netns: bool = False,
        allow_file_writes: bool = False,
        time_factors: Mapping[str, float] | None = None,
    ) -> None:
        """`toolchains`: per language, its build settings (e.g. `{"cpp":
        CompilerConfig(std="c++20")}`, `{"python": PythonConfig(interpreter=...)}`); the
        default language's toolchain and those named here are set up now (SandboxError,
        e.g. CompilerNotFoundError, when one cannot work on this host), the others on their
        first submission. `allow_file_writes`: let programs create files in their private
        work dir (each at most `output_limit` bytes); off by default, so a program can write
        only its stdout/stderr and cannot fill the disk. `time_factors`: per language, the
        factor on a problem's time limit (e.g. `{"python": 3.0}`; languages left out keep
        their `Language.time_factor`)."""
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        self.time_factors = check_time_factors(time_factors or {})
        self._toolchains = dict(toolchains or {})
        for name in self._toolchains:
            check_language(name)
        self.runner = Runner(self.cache_dir, netns=netns)
        self.output_limit = output_limit
        self.allow_file_writes = allow_file_writes
        self._executors: dict[str, Executor] = {}
        self._executors_lock = threading.Lock()
        self.checkers = CheckerRunner(self.runner, self.executor)
        for name in (DEFAULT_LANGUAGE, *self._toolchains):
            self.executor(name)

    @property
    def isolation(self) -> str:
        return self.runner.isolation.describe()

    def executor(self, language: str) -> Executor:
        """The executor for `language` (ValueError naming the languages when unknown), set
        up on first use; SandboxError when its toolchain cannot work on this host."""
        declared = languages.get(language)
        with self._executors_lock:
            found = self._executors.get(declared.name)
            if found is None:
                config = self._toolchains.get(declared.name)
                found = declared.executor(self.cache_dir, self.runner, config)
                self._executors[declared.name] = found
            return found

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
        grader: str | GraderConfig | None = None,
    ) -> JudgeReport:
        """Judge one submission. Raises ValueError for no tests, an unknown checker, a
        parameter the checker does not take, a test whose input or output is not text
        that encodes to bytes (see `check_tests`), an unknown language or grader.

        `checker` is a checker name with its `checker_params` (e.g. `tolerance` for
        `codecontests`, `precision` for `floats`), or a `CheckerConfig` holding both.
        Judging stops after the first failing test with `stop_on_first_failure`, or after
        the first test whose verdict is in `stop_on`. `language` names a registered
        language (`codefu_sandbox.languages.LANGUAGES`); its time factor scales
        `limits.time_seconds`. `grader` runs and compares the tests (a name or a
        `GraderConfig`; None: `stdio`); a program in a language the grader does not run
        (`Grader.languages`) is a compile error. A language's first submission sets its toolchain
        up: SandboxError (not a verdict) when it cannot work on this host. The arguments
        make one `JudgeRequest` (`request.request_for`), judged by `judge_request`.
        """
        tests = checked_tests(tests)
        request = request_for(
            limits,
            len(tests),
            language=language,
            checker=checker_config(checker, checker_params),
            grader=grader_config(grader),
            time_factors=self.time_factors,
            stop_on_first_failure=stop_on_first_failure,
            stop_on=stop_on,
        )
        return self._judge(source, tests, request)

    def judge_request(
        self, source: str, tests: Sequence[TestCase], request: JudgeRequest
    ) -> JudgeReport:
        """Judge one submission as `request` says (its limits as they are: the time factor
        is applied where the request was made); the built program's memory allowance is
        added here. Raises ValueError for no tests, or a test that is not text (see
        `check_tests`); SandboxError when the language's toolchain cannot work on this host.
        """
        return self._judge(source, checked_tests(tests), request)

    def _judge(self, source: str, tests: list[TestCase], request: JudgeRequest) -> JudgeReport:
        grading = request.grader.grader()
        declared = languages.get(request.language)
        if grading.languages is not None and declared.name not in grading.languages:
            refused = CompileResult(
                False,
                0.0,
                False,
                f"grader {grading.name!r} judges {' and '.join(grading.languages)} programs, "
                f"not {declared.name}: answer this problem in one of those",
            )
            return aggregate([], refused, len(tests), self.isolation)
        executor = self.executor(declared.name)
        try:
            check = self._checker(request.checker)
            compiled, built = executor.compile(grading.source(source, declared))
        except SandboxError as exc:  # compiling the checker or the submission
            return internal_error(str(exc), len(tests), self.isolation)
        if built is None:
            return aggregate([], compiled, len(tests), self.isolation)
        limits = Limits(
            request.limits.time_seconds, request.limits.memory_bytes + built.memory_allowance
        )
        mle = static_data_verdict(built.static_bytes, address_space=memory_cap(limits.memory_bytes))
        if mle is not None:
            return aggregate([mle], compiled, len(tests), self.isolation)
        job = GradingJob(
            program=built,
            executor=executor,
            language=declared,
            tests=tests,
            limits=limits,
            check=check,
            runner=self.runner,
            output_limit=self.output_limit,
            allow_file_writes=self.allow_file_writes,
            stops_after=request.stops_after,
        )
        return aggregate(grading.grade(job), compiled, len(tests), self.isolation)

    def judge_many(
        self,
        submissions: Sequence[Submission | RequestedSubmission],
        max_workers: int | None = None,
    ) -> list[JudgeReport]:
        """Judge many submissions (each by `judge`'s arguments, or by a request), at most
        `usable_cpus()` at a time; reports in order."""
        workers = min(max_workers or usable_cpus(), usable_cpus(), max(1, len(submissions)))

        def one(sub: Submission | RequestedSubmission) -> JudgeReport:
            if isinstance(sub, RequestedSubmission):
                return self.judge_request(sub.source, sub.tests, sub.request)
            return self.judge(
                sub.source,
                sub.tests,
                sub.limits,
                sub.checker,
                sub.stop_on_first_failure,
                checker_params=sub.checker_params,
                language=sub.language,
                grader=sub.grader,
            )

        if workers == 1:
            return [one(s) for s in submissions]
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="codefu-judge") as pool:
            return list(pool.map(one, submissions))

    def prepare_checker(self, checker: CheckerConfig) -> None:
        """Build `checker`'s program now (compiled once, cached like submissions), so that a
        checker that cannot run is told from one that rejects an output: CheckerError with
        the reason (it does not compile, it includes a testlib.h nobody gave). Nothing to do
        for a checker that is no program given as source."""
        if checker.name != PROGRAM:
            return
        params = checker.params
        self.checkers.prepare(
            params["source"], params.get("language", DEFAULT_LANGUAGE), params.get("testlib", "")
        )

    def check_output(
        self, checker: CheckerConfig, output: str, expected: str, *, input: str = ""
    ) -> CheckResult:
        """`checker`'s answer on one output of a test with this `input` and `expected`
        output (a checker program runs in this judge's sandbox, as in `judge`)."""
        return self._checker(checker)(output, expected, input=input)

    # ---------------------------------------------------------------- internals
    def _checker(self, config: CheckerConfig) -> Callable[..., CheckResult]:
        """The check function for `config`: a checker module's `check` with its parameters
        (a checker program's runs in this judge's sandbox), or a checker program at a path
        (a source in a registered language, or an executable), run in the sandbox."""
        name, params = config.name, config.params
        if name in CHECKERS:
            return bind(name, params, sandbox=self.checkers)
        path = Path(name.removeprefix("testlib:"))
        seconds = params.get("timeout", CheckerLimits.time_seconds)
        language = languages.for_suffix(path.suffix)  # a checker program's source
        if language is not None and path.is_file():
            source = path.read_text()
            return self._checker(program.config(source, language.name, time_seconds=seconds))
        if path.is_file() and os.access(path, os.X_OK):
            return self._run_checker(Program((str(path.resolve()),)), CheckerLimits(seconds))
        return get_checker(name)  # raises, naming the choices

    def _run_checker(self, prepared: Program, limits: CheckerLimits) -> Callable[..., CheckResult]:
        def check(output: str, expected: str, *, input: str) -> CheckResult:
            return self.checkers.check(
                prepared, input=input, output=output, expected=expected, limits=limits
            )

        return check


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


def checked_tests(tests: Sequence[TestCase]) -> list[TestCase]:
    """`tests` as a list; ValueError when there are none, or one is not text (`check_tests`)."""
    tests = list(tests)
    if not tests:
        raise ValueError("no tests to judge against: pass at least one TestCase")
    check_tests(tests)
    return tests


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
