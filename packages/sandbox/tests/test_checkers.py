"""Checkers: exact cases and hypothesis properties."""

from __future__ import annotations

import math
import stat
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codefu_sandbox.checkers import BUILTIN, get_checker, testlib
from codefu_sandbox.checkers.codecontests import is_decimal

tokens = st.lists(st.text(alphabet="abcXYZ0123456789.-", min_size=1, max_size=6), max_size=12)
spaces = st.text(alphabet=" \t\n\r", min_size=1, max_size=3)


@st.composite
def relayout(draw: st.DrawFn, words: list[str]) -> str:
    """The same tokens with arbitrary whitespace between and around them."""
    parts = [draw(st.text(alphabet=" \n\t", max_size=2))]
    for word in words:
        parts += [word, draw(spaces)]
    return "".join(parts)


@pytest.mark.parametrize("name", BUILTIN)
@given(words=tokens)
def test_every_checker_accepts_identical_output(name: str, words: list[str]) -> None:
    text = " ".join(words) + "\n"
    assert get_checker(name)(text, text).ok


@pytest.mark.parametrize("name", ["tokens", "floats", "yesno", "codecontests"])
@given(data=st.data(), words=tokens)
def test_token_checkers_ignore_whitespace_layout(
    name: str, data: st.DataObject, words: list[str]
) -> None:
    expected = " ".join(words) + "\n"
    assert get_checker(name)(data.draw(relayout(words)), expected).ok


@pytest.mark.parametrize("name", ["tokens", "lines", "floats", "yesno", "codecontests"])
@given(words=st.lists(st.from_regex(r"[a-z]{1,5}", fullmatch=True), min_size=1, max_size=8))
def test_missing_or_extra_token_is_rejected(name: str, words: list[str]) -> None:
    check = get_checker(name)
    full = " ".join(words) + "\n"
    assert not check(" ".join(words[:-1]) + "\n", full).ok
    assert not check(full + "extra\n", full).ok


def test_unknown_checker_names_the_choices() -> None:
    with pytest.raises(ValueError, match="tokens"):
        get_checker("nope")


def test_lines_checker_is_line_sensitive() -> None:
    check = get_checker("lines")
    assert check("1 2  \n3\n\n\n", "1 2\n3\n").ok
    assert not check("1\n2 3\n", "1 2\n3\n").ok
    assert not check("1  2\n", "1 2\n").ok


def test_exact_checker_is_byte_exact() -> None:
    check = get_checker("exact")
    assert check("a\n", "a\n").ok
    assert not check("a", "a\n").ok
    assert not check("a \n", "a\n").ok


def test_yesno_ignores_case_only() -> None:
    check = get_checker("yesno")
    assert check("YES\nno\n", "yes\nNO\n").ok
    assert not check("YES\n", "NO\n").ok


@given(
    want=st.floats(min_value=-1e9, max_value=1e9, allow_nan=False),
    rel=st.floats(min_value=-0.9e-6, max_value=0.9e-6),
)
def test_floats_accepts_small_relative_error(want: float, rel: float) -> None:
    got = want * (1 + rel)
    assert get_checker("floats")(f"{got!r}", f"{want!r}").ok


@given(want=st.floats(min_value=-1e6, max_value=1e6, allow_nan=False))
def test_floats_rejects_large_error(want: float) -> None:
    got = want + max(1e-3, abs(want) * 1e-3)
    assert not get_checker("floats")(f"{got!r}", f"{want!r}").ok


def test_floats_nan_is_never_equal() -> None:
    check = get_checker("floats")
    assert not check("nan", "nan").ok
    assert not check("1.0", "nan").ok
    assert check("inf", "inf").ok
    assert check("0.1000001", "0.1", precision=1e-6).ok
    assert not check("0.1001", "0.1", precision=1e-6).ok


@given(st.integers(min_value=2**53, max_value=2**63 - 1))
def test_codecontests_never_compares_integers_through_floats(n: int) -> None:
    check = get_checker("codecontests")
    assert check(str(n), str(n)).ok
    assert not check(str(n + 1), str(n)).ok  # equal as doubles, different as integers


@given(want=st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), delta=st.floats(0, 0.9e-6))
def test_codecontests_decimals_within_tolerance(want: float, delta: float) -> None:
    check = get_checker("codecontests")
    expected = f"{want:.9f}"
    assert check(f"{float(expected) + delta:.12f}", expected).ok


def test_codecontests_decimal_rules() -> None:
    check = get_checker("codecontests")
    assert is_decimal("1.5") and is_decimal("2e-3") and is_decimal(".5")
    assert not is_decimal("15") and not is_decimal("abc") and not is_decimal("1.2.3")
    assert check("0.3333333", "0.333333333").ok
    assert not check("0.3334", "0.333333333").ok
    assert not check("3", "3.5").ok
    assert check("3.0000000", "3.0").ok
    assert not check("3.0", "3").ok  # the expected integer must be written exactly
    assert not check("nan", "1.0").ok
    assert not check("YES", "yes").ok


@pytest.fixture
def checker_program(tmp_path: Path) -> Path:
    """A testlib-style checker: exit code chosen by the first output token."""
    path = tmp_path / "checker.sh"
    path.write_text(
        '#!/bin/sh\nread -r verdict < "$2"\n'
        'case "$verdict" in ok) exit 0;; wa) echo "wrong" >&2; exit 1;; pe) exit 2;;\n'
        '  fail) echo "broken" >&2; exit 3;;\n'
        '  half) echo "points 0.5" >&2; exit 7;; *) exit 9;; esac\n'
    )
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


@pytest.mark.parametrize(
    ("output", "ok", "internal", "points"),
    [
        ("ok", True, False, 1.0),
        ("wa", False, False, None),
        ("pe", False, False, None),
        ("fail", False, True, None),
        ("half", False, False, 0.5),
        ("weird", False, True, None),
    ],
)
def test_testlib_exit_codes(
    checker_program: Path, output: str, ok: bool, internal: bool, points: float | None
) -> None:
    result = testlib.check(output + "\n", "x\n", program=checker_program, input="in\n")
    assert (result.ok, result.internal_error, result.points) == (ok, internal, points)


def test_testlib_missing_program_is_internal_error(tmp_path: Path) -> None:
    result = testlib.check("a", "a", program=tmp_path / "missing")
    assert result.internal_error and not result.ok
    assert math.isfinite(len(result.message))
