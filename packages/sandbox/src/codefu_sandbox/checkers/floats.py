"""Token comparison where numbers match within an absolute or relative error (DMOJ `floats`).

Two tokens that both parse as floats match when |a - b| <= precision or
|a - b| <= precision * |b| (b expected); NaN never matches; equal infinities match.
Other tokens must be identical.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from codefu_sandbox.checkers import CheckResult, mismatch

DEFAULT_PRECISION = 1e-6


def close(got: float, want: float, precision: float) -> bool:
    """True when got is within precision of want, absolutely or relatively; NaN never."""
    if math.isnan(got) or math.isnan(want):
        return False
    if math.isinf(got) or math.isinf(want):
        return got == want
    diff = abs(got - want)
    return diff <= precision or diff <= precision * abs(want)


def _float(token: str) -> float | None:
    try:
        return float(token)
    except ValueError:
        return None


def validate(params: Mapping[str, Any]) -> None:
    """Raise ValueError when `precision` is not a finite number >= 0."""
    precision = params.get("precision", DEFAULT_PRECISION)
    if (
        isinstance(precision, bool)
        or not isinstance(precision, int | float)
        or not math.isfinite(precision)
        or precision < 0
    ):
        raise ValueError(f"floats: precision must be a finite number >= 0, got {precision!r}")


def check(
    output: str, expected: str, *, precision: float = DEFAULT_PRECISION, input: str = ""
) -> CheckResult:
    got, want = output.split(), expected.split()
    if len(got) != len(want):
        return CheckResult(False, f"{len(got)} tokens, expected {len(want)}")
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        wf, gf = _float(w), _float(g)
        if wf is not None and gf is not None:
            if not close(gf, wf, precision):
                return CheckResult(False, mismatch(f"number {i + 1}", g, w))
        elif g != w:
            return CheckResult(False, mismatch(f"token {i + 1}", g, w))
    return CheckResult(True)
