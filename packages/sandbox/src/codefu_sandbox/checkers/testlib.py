"""External testlib-style checker programs: `checker INPUT OUTPUT ANSWER`.

Exit codes (testlib): 0 OK, 1 WA, 2 PE (presentation error, a wrong answer here),
3 FAIL (the checker or the tests are broken → internal error), 7 partial points (the
first number in the checker's message, as a fraction of the test's score: accepted only
at 1 or more). Anything else is an internal error. `check` runs the program directly,
with a timeout, in a private temporary directory: only for a program you trust. The
judge runs every checker program in its sandbox instead (`codefu_sandbox.checker_runner`),
with the same reading of the exit code (`checker_runner.result_of`).
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from codefu_sandbox.checker_runner import result_of
from codefu_sandbox.records import CheckResult

DEFAULT_TIMEOUT = 30.0


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
