"""The CodeContests comparison, the reward's default, with a problem's judging rules.

Tokens are compared in order; a missing or extra token is a mismatch. A token of the
expected output that is a decimal number (digits with a '.' or an exponent) matches an
output token that is also a plain decimal number within `tolerance`. Every other token,
integers included, must be equal exactly: integers are never compared through floating
point, so 64-bit values keep every digit.

A problem's statement may relax this (all off by default, which is the rule above):

- `tolerance_mode`: "absolute" (|got - want| <= tolerance), "relative"
  (<= tolerance * |want|) or "absolute_or_relative" (either; the default);
- `real_numbers`: the answer is real-valued, so a pair of number tokens compares within
  the tolerance when either side is a decimal ("3" matches "3.000000", "2.9999999"
  matches "3"); two integers still compare exactly;
- `any_case_words`: an expected token equal to one of these words ignoring case matches
  an output token equal to it ignoring case ("YES" = "yes"); other tokens keep exact case.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping
from typing import Any

from codefu_sandbox.checkers import CheckResult, mismatch

DEFAULT_TOLERANCE = 1e-6
TOLERANCE_MODES = ("absolute", "relative", "absolute_or_relative")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_SPACE = re.compile(r"\s")


def is_decimal(token: str) -> bool:
    """A number written with a '.' or an exponent (so not an integer)."""
    return _NUMBER.fullmatch(token) is not None and any(c in token for c in ".eE")


def within(got: float, want: float, tolerance: float, mode: str) -> bool:
    """True when got is within tolerance of want under `mode`; NaN never, infinities equal."""
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


def validate(params: Mapping[str, Any]) -> None:
    """Raise ValueError naming the first parameter whose value `check` cannot use."""
    if "tolerance" in params:
        tolerance = params["tolerance"]
        if (
            isinstance(tolerance, bool)
            or not isinstance(tolerance, int | float)
            or not math.isfinite(tolerance)
            or tolerance < 0
        ):
            raise ValueError(
                f"codecontests: tolerance must be a finite number >= 0 (e.g. 1e-6), "
                f"got {tolerance!r}"
            )
    if "tolerance_mode" in params and params["tolerance_mode"] not in TOLERANCE_MODES:
        raise ValueError(
            f"codecontests: tolerance_mode must be one of {', '.join(TOLERANCE_MODES)}, "
            f"got {params['tolerance_mode']!r}"
        )
    if "real_numbers" in params and not isinstance(params["real_numbers"], bool):
        raise ValueError(
            f"codecontests: real_numbers must be true or false, got {params['real_numbers']!r}"
        )
    if "any_case_words" in params:
        words = params["any_case_words"]
        if isinstance(words, str) or not isinstance(words, list | tuple | set | frozenset):
            raise ValueError(
                f'codecontests: any_case_words must be a list of words (e.g. ["YES", "NO"]), '
                f"got {words!r}"
            )
        for word in words:
            if not isinstance(word, str) or not word or _SPACE.search(word):
                raise ValueError(
                    "codecontests: every any_case_words entry must be one non-empty token "
                    f"without whitespace, got {word!r}"
                )


def check(
    output: str,
    expected: str,
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    tolerance_mode: str = "absolute_or_relative",
    real_numbers: bool = False,
    any_case_words: Collection[str] = (),
    input: str = "",
) -> CheckResult:
    """Compare `output` with `expected` token by token (see the module docstring)."""
    got, want = output.split(), expected.split()
    folded = frozenset(word.casefold() for word in any_case_words)
    for i, (g, w) in enumerate(zip(got, want, strict=False)):
        if g == w:
            continue
        if folded and w.casefold() in folded and g.casefold() == w.casefold():
            continue
        if _NUMBER.fullmatch(g) and _NUMBER.fullmatch(w):
            numeric = is_decimal(w) or (real_numbers and is_decimal(g))
            if numeric and within(float(g), float(w), tolerance, tolerance_mode):
                continue
        return CheckResult(False, mismatch(f"token {i + 1}", g, w))
    if len(got) != len(want):
        return CheckResult(False, f"{len(got)} tokens, expected {len(want)}")
    return CheckResult(True)
