"""Whitespace-insensitive token comparison (DMOJ `standard`): same tokens, same order."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

from codefu_sandbox.checkers import CheckResult, mismatch

_TOKEN = re.compile(r"\S+")


def _tokens(text: str) -> Iterator[str]:
    """Tokens one at a time: a 100 MB expected output never becomes a list of millions."""
    return (match.group() for match in _TOKEN.finditer(text))


def check(output: str, expected: str, *, input: str = "") -> CheckResult:
    got, want = _tokens(output), _tokens(expected)
    for i, (g, w) in enumerate(itertools.zip_longest(got, want), start=1):
        if g is None or w is None:
            n_got = i - 1 + (g is not None) + sum(1 for _ in got)
            n_want = i - 1 + (w is not None) + sum(1 for _ in want)
            return CheckResult(False, f"{n_got} tokens, expected {n_want}")
        if g != w:
            return CheckResult(False, mismatch(f"token {i}", g, w))
    return CheckResult(True)
