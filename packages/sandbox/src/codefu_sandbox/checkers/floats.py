"""Token comparison where numbers match within an absolute or relative error (DMOJ `floats`),
and the one real-number comparison of every checker (`within`, used by `codecontests` too).

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
# How a tolerance bounds |got - want|: by itself, by itself times |want|, or either.
TOLERANCE_MODES = ("absolute", "relative", "absolute_or_relative")


def within(got: float, want: float, tolerance: float, mode: str = "absolute_or_relative") -> bool:
    """True when got is within tolerance of want under `mode` (TOLERANCE_MODES): "absolute"
    |got - want| <= tolerance, "relative" <= tolerance * |want|, "absolute_or_relative"
    either. NaN never matches; an infinity matches only the same infinity."""
    if math.isnan(got) or math.isnan(want):
        return False
    if math.isinf(got) or math.isinf(want):
        return got == want
    diff = abs(got - want)
    absolute = diff <= tolerance
    relative = diff <= tolerance * abs(want)
    if mode == "absolute":
        return absolute
    if mode == "relative":
        return relative
    return absolute or relative


def check_tolerance(checker: str, name: str, value: Any) -> None:
    """Raise ValueError unless `value` (checker `checker`'s parameter `name`) is a usable
    tolerance: a finite number >= 0, not a bool."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value < 0
    ):
        raise ValueError(
            f"{checker}: {name} must be a finite number >= 0 (e.g. 1e-6), got {value!r}"
        )


def check_tolerance_mode(checker: str, mode: Any) -> None:
    """Raise ValueError unless `mode` is one of TOLERANCE_MODES."""
    if mode not in TOLERANCE_MODES:
        raise ValueError(
            f"{checker}: tolerance_mode must be one of {', '.join(TOLERANCE_MODES)}, got {mode!r}"
        )


def _float(token: str) -> float | None:
    try:
        return float(token)
    except ValueError:
        return None


def validate(params: Mapping[str, Any]) -> None:
    """Raise ValueError when `precision` is not a finite number >= 0."""
    if "precision" in params:
        check_tolerance("floats", "precision", params["precision"])


def check(
    output: str, expected: str, *, precision: float = DEFAULT_PRECISION, input: str = ""
) -> CheckResult:
    got, want = output.split(), expected.split()
    if len(got) != len(want):
        return CheckResult(False, f"{len(got)} tokens, expected {len(want)}")
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        wf, gf = _float(w), _float(g)
        if wf is not None and gf is not None:
            if not within(gf, wf, precision):
                return CheckResult(False, mismatch(f"number {i + 1}", g, w))
        elif g != w:
            return CheckResult(False, mismatch(f"token {i + 1}", g, w))
    return CheckResult(True)
