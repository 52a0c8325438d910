"""A problem's own checker program, given as source: `CheckerConfig("program", {...})`.

Parameters: `source` (the program's text), `language` ("cpp" or "python"), `testlib`
(the path of your testlib.h, for a C++ checker that includes it), `time_seconds` and
`memory_bytes` (the checker's own limits per test). The judge runs it in its sandbox
(`codefu_sandbox.checker_runner`, which also gives the protocol) and passes `sandbox`;
called without one, `check` refuses: a checker program never runs unconfined.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from codefu_sandbox.checkers import CheckResult

LANGUAGES = ("cpp", "python")
DEFAULT_TIME_SECONDS = 10.0
DEFAULT_MEMORY_BYTES = 1 << 30


def validate(params: Mapping[str, Any]) -> None:
    """Raise ValueError naming the first parameter whose value cannot be used."""
    source = params.get("source")
    if not isinstance(source, str) or not source.strip():
        raise ValueError("checker program: `source` must be the checker's source text")
    if params.get("language", "cpp") not in LANGUAGES:
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
    language: str = "cpp",
    testlib: str = "",
    time_seconds: float = DEFAULT_TIME_SECONDS,
    memory_bytes: int = DEFAULT_MEMORY_BYTES,
    input: str = "",
    sandbox: Callable[..., CheckResult] | None = None,
) -> CheckResult:
    """Run the checker in the judge's sandbox (`sandbox`, which the judge supplies)."""
    if sandbox is None:
        raise ValueError(
            "a checker program runs only in the judge's sandbox: pass "
            'CheckerConfig("program", {...}) to Judge.judge'
        )
    return sandbox(
        output,
        expected,
        source=source,
        language=language,
        testlib=testlib,
        time_seconds=time_seconds,
        memory_bytes=memory_bytes,
        input=input,
    )
