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
  an output token equal to it ignoring case ("YES" = "yes"); other tokens keep exact case;
- `any_order`: the order the statement frees. "line": the tokens of each line may come in
  any order (lines keep theirs: "In each line, the two names can be printed in any
  order"); "all": the lines may come in any order too, each line's tokens a multiset
  ("Names can be printed in any order", one per line). Either way each output token must
  be matched by one expected token under the rules above; empty lines never count, and a
  line's tokens and the lines are paired in sorted order (numbers by value), so
  two numbers of one answer that differ by less than the tolerance may pair crosswise.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from codefu_sandbox.checkers import CheckResult, mismatch
from codefu_sandbox.checkers.floats import check_tolerance, check_tolerance_mode, within

DEFAULT_TOLERANCE = 1e-6
ORDER_MODES = ("", "line", "all")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_SPACE = re.compile(r"\s")


def is_decimal(token: str) -> bool:
    """A number written with a '.' or an exponent (so not an integer)."""
    return _NUMBER.fullmatch(token) is not None and any(c in token for c in ".eE")


def validate(params: Mapping[str, Any]) -> None:
    """Raise ValueError naming the first parameter whose value `check` cannot use."""
    if "tolerance" in params:
        check_tolerance("codecontests", "tolerance", params["tolerance"])
    if "tolerance_mode" in params:
        check_tolerance_mode("codecontests", params["tolerance_mode"])
    if "real_numbers" in params and not isinstance(params["real_numbers"], bool):
        raise ValueError(
            f"codecontests: real_numbers must be true or false, got {params['real_numbers']!r}"
        )
    if "any_order" in params and params["any_order"] not in ORDER_MODES:
        raise ValueError(
            'codecontests: any_order must be "" (the order is fixed), "line" or "all", '
            f"got {params['any_order']!r}"
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
    any_order: str = "",
    input: str = "",
) -> CheckResult:
    """Compare `output` with `expected` token by token (see the module docstring)."""
    rule = _TokenRule(
        tolerance,
        tolerance_mode,
        real_numbers,
        frozenset(word.casefold() for word in any_case_words),
    )
    if any_order:
        return _check_any_order(output, expected, rule, across_lines=any_order == "all")
    return _compare(output.split(), expected.split(), rule, "token")


@dataclass(frozen=True)
class _TokenRule:
    """When one output token matches one expected token."""

    tolerance: float
    mode: str
    real_numbers: bool
    folded: frozenset[str]

    def matches(self, got: str, want: str) -> bool:
        if got == want:
            return True
        if self.folded and want.casefold() in self.folded and got.casefold() == want.casefold():
            return True
        if _NUMBER.fullmatch(got) and _NUMBER.fullmatch(want):
            numeric = is_decimal(want) or (self.real_numbers and is_decimal(got))
            return numeric and within(float(got), float(want), self.tolerance, self.mode)
        return False

    def key(self, token: str) -> tuple[int, float, str]:
        """A sort key that puts tokens a match may pair next to each other: numbers by
        value, any-case words by their folded spelling, other tokens as written."""
        if _NUMBER.fullmatch(token):
            return (0, float(token), token)
        if token.casefold() in self.folded:
            return (1, 0.0, token.casefold())
        return (1, 0.0, token)


def _compare(got: list[str], want: list[str], rule: _TokenRule, what: str) -> CheckResult:
    for i, (g, w) in enumerate(zip(got, want, strict=False)):
        if not rule.matches(g, w):
            return CheckResult(False, mismatch(f"{what} {i + 1}", g, w))
    if len(got) != len(want):
        return CheckResult(False, f"{len(got)} {what}s, expected {len(want)}")
    return CheckResult(True)


def _check_any_order(
    output: str, expected: str, rule: _TokenRule, *, across_lines: bool
) -> CheckResult:
    """Each line's tokens as a multiset; with `across_lines`, the lines as a multiset too."""

    def lines(text: str) -> list[list[str]]:
        rows = (line.split() for line in text.splitlines())
        return [sorted(row, key=rule.key) for row in rows if row]

    got, want = lines(output), lines(expected)
    if across_lines:

        def line_key(row: list[str]) -> list[tuple[int, float, str]]:
            return [rule.key(token) for token in row]

        got.sort(key=line_key)
        want.sort(key=line_key)
    for i, (g, w) in enumerate(zip(got, want, strict=False)):
        result = _compare(g, w, rule, "sorted token")
        if not result.ok:
            where = "a line" if across_lines else f"line {i + 1}"
            return CheckResult(False, f"{where} (order ignored): {result.message}")
    if len(got) != len(want):
        return CheckResult(False, f"{len(got)} non-empty lines, expected {len(want)}")
    return CheckResult(True)
