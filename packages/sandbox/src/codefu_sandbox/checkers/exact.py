"""Byte-for-byte identical output (DMOJ `identical`)."""

from __future__ import annotations

from codefu_sandbox.checkers import CheckResult


def check(output: str, expected: str, *, input: str = "") -> CheckResult:
    if output == expected:
        return CheckResult(True)
    at = next(
        (i for i, (a, b) in enumerate(zip(output, expected, strict=False)) if a != b),
        min(len(output), len(expected)),
    )
    return CheckResult(False, f"outputs differ at character {at}")
