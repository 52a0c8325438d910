"""External testlib-style checker programs: `checker INPUT OUTPUT ANSWER`.

Exit codes (testlib): 0 OK, 1 WA, 2 PE (presentation error, a wrong answer here),
3 FAIL (the checker or the tests are broken → internal error), 7 partial points (the
first number in the checker's message, as a fraction of the test's score: accepted only
at 1 or more). Anything else is an internal error. `check` runs the program directly,
with a timeout, in a private temporary directory: only for a program you trust. The
judge runs every checker program in its sandbox instead (`codefu_sandbox.checker_runner`),
with `result_of`'s reading of the exit code.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from codefu_sandbox.checkers import CheckResult

DEFAULT_TIMEOUT = 30.0
_POINTS = re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def validate(params: Mapping[str, Any]) -> None:
    """Raise ValueError when `timeout` is not a positive number of seconds."""
    timeout = params.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise ValueError(f"checker program: timeout must be seconds > 0, got {timeout!r}")


def check(
    output: str,
    expected: str,
    *,
    program: str | Path,
    input: str = "",
    timeout: float = DEFAULT_TIMEOUT,
) -> CheckResult:
    with tempfile.TemporaryDirectory(prefix="codefu-checker-") as tmp:
        paths = []
        for name, text in (("input.txt", input), ("output.txt", output), ("answer.txt", expected)):
            path = Path(tmp) / name
            path.write_text(text)
            paths.append(str(path))
        try:
            done = subprocess.run(
                [str(program), *paths],
                capture_output=True,
                text=True,
                errors="replace",
                timeout=timeout,
                cwd=tmp,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return CheckResult(False, f"checker {program} failed: {exc}", internal_error=True)
    message = (done.stderr.strip() or done.stdout.strip())[:500]
    return result_of(done.returncode, message)


def result_of(code: int, message: str) -> CheckResult:
    """A testlib checker's verdict from its exit code and message (module docstring)."""
    if code == 0:
        return CheckResult(True, message)
    if code == 1:
        return CheckResult(False, message or "wrong answer")
    if code == 2:
        return CheckResult(False, f"presentation error: {message}")
    if code == 7:
        found = _POINTS.search(message)
        if found is None:
            return CheckResult(
                False, f"checker gave points without a number: {message}", internal_error=True
            )
        return CheckResult(float(found.group()) >= 1.0, message)
    return CheckResult(False, f"checker failed (exit {code}): {message}", internal_error=True)
