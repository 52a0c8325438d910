"""A problem's own checker program, given as source: `config(source, language)`, which is
`CheckerConfig("program", {...})`.

Parameters: `source` (the program's text), `language` (a registered language's name,
`codefu_sandbox.languages`; default the default language), `testlib`
(the path of your testlib.h, for a C++ checker that includes it), `time_seconds` and
`memory_bytes` (the checker's own limits per test). The judge calls `check` with
`sandbox`, its `CheckerRunner`: the program is prepared once (a C++ checker compiled and
cached) and run on each test in the sandbox (`codefu_sandbox.checker_runner`, which also
gives the protocol). Called without one, `check` refuses: a checker program never runs
unconfined.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from codefu_sandbox.checker_runner import (
    DEFAULT_MEMORY_BYTES,
    DEFAULT_TIME_SECONDS,
    CheckerError,
    CheckerLimits,
    CheckerRunner,
)
from codefu_sandbox.checkers import PROGRAM, CheckerConfig, CheckResult
from codefu_sandbox.languages import DEFAULT_LANGUAGE, LANGUAGES
from codefu_sandbox.runner import SandboxError

__all__ = ["DEFAULT_MEMORY_BYTES", "DEFAULT_TIME_SECONDS", "check", "config"]


def config(
    source: str,
    language: str = DEFAULT_LANGUAGE,
    *,
    testlib: str = "",
    time_seconds: float = DEFAULT_TIME_SECONDS,
    memory_bytes: int = DEFAULT_MEMORY_BYTES,
) -> CheckerConfig:
    """The configuration that judges with checker program `source`; ValueError when a
    value cannot be used. `testlib` is left out when empty (a source with testlib.h
    inlined, as codefu-data stores it, needs none)."""
    params: dict[str, Any] = {"source": source, "language": language}
    if testlib:
        params["testlib"] = testlib
    params["time_seconds"] = float(time_seconds)
    params["memory_bytes"] = int(memory_bytes)
    return CheckerConfig(PROGRAM, params)


def validate(params: Mapping[str, Any]) -> None:
    """Raise ValueError naming the first parameter whose value cannot be used."""
    source = params.get("source")
    if not isinstance(source, str) or not source.strip():
        raise ValueError("checker program: `source` must be the checker's source text")
    if params.get("language", DEFAULT_LANGUAGE) not in LANGUAGES:
        raise ValueError(
            f"checker program: language must be one of {', '.join(LANGUAGES)}, "
            f"got {params.get('language')!r}"
        )
    if not isinstance(params.get("testlib", ""), str):
        raise ValueError("checker program: testlib must be the path of testlib.h (a string)")
    seconds = params.get("time_seconds", DEFAULT_TIME_SECONDS)
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not seconds > 0:
        raise ValueError(f"checker program: time_seconds must be > 0, got {seconds!r}")
    memory = params.get("memory_bytes", DEFAULT_MEMORY_BYTES)
    if isinstance(memory, bool) or not isinstance(memory, int) or memory <= 0:
        raise ValueError(f"checker program: memory_bytes must be bytes > 0, got {memory!r}")


def check(
    output: str,
    expected: str,
    *,
    source: str,
    language: str = DEFAULT_LANGUAGE,
    testlib: str = "",
    time_seconds: float = DEFAULT_TIME_SECONDS,
    memory_bytes: int = DEFAULT_MEMORY_BYTES,
    input: str = "",
    sandbox: CheckerRunner | None = None,
) -> CheckResult:
    """Run the checker on one test in the judge's sandbox (`sandbox`, which the judge
    supplies). A checker that cannot be prepared (it does not compile, it includes a
    testlib.h nobody gave) fails every test as an internal error."""
    if sandbox is None:
        raise ValueError(
            "a checker program runs only in the judge's sandbox: pass "
            'CheckerConfig("program", {...}) to Judge.judge'
        )
    try:
        prepared = sandbox.prepare(source, language, testlib)
    except (CheckerError, SandboxError) as exc:
        return CheckResult(False, f"checker: {exc}"[:2000], internal_error=True)
    limits = CheckerLimits(time_seconds, memory_bytes)
    return sandbox.check(prepared, input=input, output=output, expected=expected, limits=limits)
