"""The CodeContests comparison (DESIGN §5), the reward's default.

Tokens are compared in order; a missing or extra token is a mismatch. A token of the
expected output that is a decimal number (digits with a '.' or an exponent) matches an
output token that is also a plain decimal number within `tolerance`, absolutely or
relatively. Every other token, integers included, must be equal exactly: integers are
never compared through floating point, so 64-bit values keep every digit.
"""

from __future__ import annotations

import re
from typing import Any

from codefu_sandbox.checkers import CheckResult, mismatch
from codefu_sandbox.checkers.floats import close

DEFAULT_TOLERANCE = 1e-6
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def is_decimal(token: str) -> bool:
    """A number written with a '.' or an exponent (so not an integer)."""
    return _NUMBER.fullmatch(token) is not None and any(c in token for c in ".eE")


def check(
    output: str, expected: str, *, tolerance: float = DEFAULT_TOLERANCE, **_: Any
) -> CheckResult:
    got, want = output.split(), expected.split()
    for i, (g, w) in enumerate(zip(got, want, strict=False)):
        if g == w:
            continue
        if is_decimal(w) and _NUMBER.fullmatch(g) and close(float(g), float(w), tolerance):
            continue
        return CheckResult(False, mismatch(f"token {i + 1}", g, w))
    if len(got) != len(want):
        return CheckResult(False, f"{len(got)} tokens, expected {len(want)}")
    return CheckResult(True)
