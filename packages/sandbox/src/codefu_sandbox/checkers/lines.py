"""Line comparison: the same lines, ignoring trailing whitespace and trailing empty lines."""

from __future__ import annotations

from codefu_sandbox.checkers import CheckResult, mismatch


def _lines(text: str) -> list[str]:
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def check(output: str, expected: str, *, input: str = "") -> CheckResult:
    got, want = _lines(output), _lines(expected)
    for i, (g, w) in enumerate(zip(got, want, strict=False)):
        if g != w:
            return CheckResult(False, mismatch(f"line {i + 1}", g, w))
    if len(got) != len(want):
        return CheckResult(False, f"{len(got)} lines, expected {len(want)}")
    return CheckResult(True)
