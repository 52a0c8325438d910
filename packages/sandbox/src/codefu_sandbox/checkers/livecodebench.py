"""LiveCodeBench's comparison of a stdin problem's output (its `grade_stdio`): the whole
output and the expected one stripped, split at newlines, each line stripped; the same
number of lines; a line that differs is still equal when both split into whitespace-
separated tokens that all read as decimal numbers (`decimal.Decimal`: `1.0` equals `1`,
`1e3` equals `1000`) and the two lists of numbers are equal. A token that is not a number
makes a differing line wrong.
"""

from __future__ import annotations

from decimal import Decimal

from codefu_sandbox.checkers import CheckResult, mismatch


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.strip().split("\n")]


def _numbers(line: str) -> list[Decimal] | None:
    """The line's tokens as decimals; None when one is not a number."""
    try:
        return [Decimal(token) for token in line.split()]
    except (ArithmeticError, ValueError):
        return None


def _same_numbers(got: str, want: str) -> bool:
    numbers, expected = _numbers(got), _numbers(want)
    if numbers is None or expected is None:
        return False
    try:
        return numbers == expected
    except ArithmeticError:  # a signalling NaN refuses comparison
        return False


def check(output: str, expected: str, *, input: str = "") -> CheckResult:
    got, want = _lines(output), _lines(expected)
    if len(got) != len(want):
        return CheckResult(False, f"{len(got)} lines, expected {len(want)}")
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        if g != w and not _same_numbers(g, w):
            return CheckResult(False, mismatch(f"line {i + 1}", g, w))
    return CheckResult(True)
