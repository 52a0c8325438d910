"""codefu_sandbox: a secure, fast judge (compile cache + PCH, seccomp, Landlock, rlimits)
for C++, Python 3 and any language registered with `codefu_sandbox.languages`.

from codefu_sandbox import Judge, Limits, TestCase
report = Judge().judge(source, [TestCase("1 2\\n", "3\\n")], Limits(1.0, 256 << 20))
report.verdict, report.passed, report.total, report.to_dict()

A Python 3 submission: `judge(source, tests, limits, language="python")`; the time factor
per language: `Judge(time_factors={"python": 2.0})` (docs/languages.md).
A problem's judging rules: `checker=CheckerConfig("codecontests", {"tolerance": 1e-4})`;
how its tests run: `grader=GraderConfig("stdio")` (the default).

A problem's own checker program: `checker_program(source, language)`; a grader's
configuration: `stdio_grader(prelude=...)`, `call_grader(fn_name, compare=...)`.
A run's policy makes one request per problem and language from a ground truth, which the
judge applies as it is: `problem = JudgingPolicy("codecontests").problem(ground_truth)`,
then `Judge().judge_request(source, tests, problem.requests["cpp"])` (docs/ARCHITECTURE.md).
"""

from codefu_sandbox.checkers import CheckerConfig
from codefu_sandbox.checkers.program import config as checker_program
from codefu_sandbox.graders import GraderConfig
from codefu_sandbox.graders.call import config as call_grader
from codefu_sandbox.graders.stdio import config as stdio_grader
from codefu_sandbox.judge import (
    Judge,
    RequestedSubmission,
    Submission,
    default_cache_dir,
    usable_cpus,
)
from codefu_sandbox.languages import (
    DEFAULT_LANGUAGE,
    LANGUAGES,
    CheckerError,
    Language,
    check_time_factors,
)
from codefu_sandbox.languages.cpp import CompilerConfig, CompilerNotFoundError
from codefu_sandbox.languages.python import LIVECODEBENCH_INT_DIGITS, PythonConfig
from codefu_sandbox.models import Limits, TestCase, parse_memory
from codefu_sandbox.records import CheckResult, CompileResult, RunOutcome
from codefu_sandbox.request import (
    JudgeRequest,
    JudgingPolicy,
    Problem,
    judge_time_seconds,
    time_limit_seconds,
)
from codefu_sandbox.runner import SandboxError
from codefu_sandbox.verdicts import PRIORITY, JudgeReport, TestResult, Verdict

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_LANGUAGE",
    "LANGUAGES",
    "LIVECODEBENCH_INT_DIGITS",
    "PRIORITY",
    "CheckResult",
    "CheckerConfig",
    "CheckerError",
    "CompileResult",
    "CompilerConfig",
    "CompilerNotFoundError",
    "GraderConfig",
    "Judge",
    "JudgeReport",
    "JudgeRequest",
    "JudgingPolicy",
    "Language",
    "Limits",
    "Problem",
    "PythonConfig",
    "RequestedSubmission",
    "RunOutcome",
    "SandboxError",
    "Submission",
    "TestCase",
    "TestResult",
    "Verdict",
    "call_grader",
    "check_time_factors",
    "checker_program",
    "default_cache_dir",
    "judge_time_seconds",
    "parse_memory",
    "stdio_grader",
    "time_limit_seconds",
    "usable_cpus",
]
