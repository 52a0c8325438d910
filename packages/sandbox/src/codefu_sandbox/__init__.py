"""codefu_sandbox: a secure, fast judge for C++ and Python 3 (compile cache + PCH, seccomp,
Landlock, rlimits).

from codefu_sandbox import Judge, Limits, TestCase
report = Judge().judge(source, [TestCase("1 2\\n", "3\\n")], Limits(1.0, 256 << 20))
report.verdict, report.passed, report.total, report.to_dict()

A Python 3 submission: `judge(source, tests, limits, language="python")`; the time factor
per language: `Judge(time_factors={"python": 2.0})` (docs/languages.md).
A problem's judging rules: `checker=CheckerConfig("codecontests", {"tolerance": 1e-4})`.
"""

from codefu_sandbox.compiler import CompilerConfig, CompilerNotFoundError
from codefu_sandbox.executors import LANGUAGES, PythonConfig
from codefu_sandbox.judge import Judge, default_cache_dir, usable_cpus
from codefu_sandbox.models import CheckerConfig, Limits, Submission, TestCase, parse_memory
from codefu_sandbox.runner import SandboxError
from codefu_sandbox.verdicts import PRIORITY, CompileResult, JudgeReport, TestResult, Verdict

__version__ = "0.1.0"

__all__ = [
    "LANGUAGES",
    "PRIORITY",
    "CheckerConfig",
    "CompileResult",
    "CompilerConfig",
    "CompilerNotFoundError",
    "Judge",
    "JudgeReport",
    "Limits",
    "PythonConfig",
    "SandboxError",
    "Submission",
    "TestCase",
    "TestResult",
    "Verdict",
    "default_cache_dir",
    "parse_memory",
    "usable_cpus",
]
