"""Checkers: exact cases and hypothesis properties."""

from __future__ import annotations

import math
import re
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codefu_sandbox.checkers import check_params, comparisons, get_checker, testlib
from codefu_sandbox.checkers.codecontests import is_decimal
from codefu_sandbox.checkers.floats import TOLERANCE_MODES, within

tokens = st.lists(st.text(alphabet="abcXYZ0123456789.-", min_size=1, max_size=6), max_size=12)
spaces = st.text(alphabet=" \t\n\r", min_size=1, max_size=3)


@st.composite
def relayout(draw: st.DrawFn, words: list[str]) -> str:
    """The same tokens with arbitrary whitespace between and around them."""
    parts = [draw(st.text(alphabet=" \n\t", max_size=2))]
    for word in words:
        parts += [word, draw(spaces)]
    return "".join(parts)


@pytest.mark.parametrize("name", comparisons())
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


def _old_close(got: float, want: float, precision: float) -> bool:
    """The floats checker's own comparison before `within` was the only one."""
    if math.isnan(got) or math.isnan(want):
        return False
    if math.isinf(got) or math.isinf(want):
        return got == want
    diff = abs(got - want)
    return diff <= precision or diff <= precision * abs(want)


def _old_within(got: float, want: float, tolerance: float, mode: str) -> bool:
    """The codecontests checker's own comparison before `within` was the only one."""
    if math.isnan(got) or math.isnan(want):
        return False
    if math.isinf(got) or math.isinf(want):
        return got == want
    diff = abs(got - want)
    absolute, relative = diff <= tolerance, diff <= tolerance * abs(want)
    return {"absolute": absolute, "relative": relative}.get(mode, absolute or relative)


any_float = st.floats(allow_nan=True, allow_infinity=True)
finite_float = st.floats(allow_nan=False, allow_infinity=False)
near_pairs = st.builds(
    lambda want, rel, tiny: (want * (1 + rel) + tiny, want),
    st.floats(min_value=-1e12, max_value=1e12),
    st.floats(min_value=-1e-3, max_value=1e-3),
    st.sampled_from([0.0, 1e-7, -1e-7, 1e-5]),
)


@settings(max_examples=500)
@given(
    pair=st.one_of(st.tuples(any_float, any_float), near_pairs),
    tolerance=st.one_of(st.sampled_from([0.0, 1e-9, 1e-6, 1e-4, 1e-2]), st.floats(0, 1)),
    mode=st.sampled_from(TOLERANCE_MODES),
)
def test_the_one_float_comparison_keeps_both_old_semantics(
    pair: tuple[float, float], tolerance: float, mode: str
) -> None:
    got, want = pair
    assert within(got, want, tolerance, mode) == _old_within(got, want, tolerance, mode)
    assert within(got, want, tolerance) == _old_close(got, want, tolerance)


@settings(max_examples=300)
@given(
    pair=st.one_of(st.tuples(finite_float, finite_float), near_pairs),
    tolerance=st.sampled_from([1e-9, 1e-6, 1e-4]),
)
def test_floats_and_codecontests_agree_on_real_numbers(
    pair: tuple[float, float], tolerance: float
) -> None:
    got, want = (repr(x) for x in pair)
    assert is_decimal(want)
    floats, contests = get_checker("floats"), get_checker("codecontests")
    assert floats(got, want, precision=tolerance).ok == contests(got, want, tolerance=tolerance).ok


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
    assert check("1000.0009", "1000.0").ok  # 9e-4 absolute, 9e-7 relative
    assert check("0.0000009", "0.0").ok  # 9e-7 absolute
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
    ("output", "ok", "internal"),
    [
        ("ok", True, False),
        ("wa", False, False),
        ("pe", False, False),
        ("fail", False, True),
        ("half", False, False),
        ("weird", False, True),
    ],
)
def test_testlib_exit_codes(checker_program: Path, output: str, ok: bool, internal: bool) -> None:
    result = testlib.check(output + "\n", "x\n", program=checker_program, input="in\n")
    assert (result.ok, result.internal_error) == (ok, internal)


def test_testlib_missing_program_is_internal_error(tmp_path: Path) -> None:
    result = testlib.check("a", "a", program=tmp_path / "missing")
    assert result.internal_error and not result.ok
    assert math.isfinite(len(result.message))


# ------------------------------------------------ codecontests with a problem's rules
MODES = ("absolute", "relative", "absolute_or_relative")
_LEGACY_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def legacy_codecontests(output: str, expected: str) -> bool:
    """The rule `codecontests` had before it took a problem's rules, written out plainly:
    equal tokens, or an expected token with '.'/exponent and a number within 1e-6 abs/rel."""
    got, want = output.split(), expected.split()
    if len(got) != len(want):
        return False
    for g, w in zip(got, want, strict=True):
        if g == w:
            continue
        decimal = _LEGACY_NUMBER.fullmatch(w) is not None and any(c in w for c in ".eE")
        if not (decimal and _LEGACY_NUMBER.fullmatch(g)):
            return False
        a, b = float(g), float(w)
        if math.isnan(a) or math.isnan(b) or math.isinf(a) or math.isinf(b):
            if not (a == b and not math.isnan(a)):
                return False
            continue
        if not (abs(a - b) <= 1e-6 or abs(a - b) <= 1e-6 * abs(b)):
            return False
    return True


stream_token = st.one_of(
    st.from_regex(r"[+-]?[0-9]{1,4}(\.[0-9]{0,8})?([eE][+-]?[0-9])?", fullmatch=True),
    st.sampled_from(["YES", "yes", "Yes", "NO", "no", "-0", "0.0", "1e3", "nan", "inf", "x.5"]),
    st.text(alphabet="aAbB.eE-+0123", min_size=1, max_size=5),
)


@st.composite
def token_pair_streams(draw: st.DrawFn) -> tuple[str, str]:
    """An expected stream and an output derived from it (often equal, sometimes nearby)."""
    want = draw(st.lists(stream_token, max_size=8))
    got = []
    for token in want:
        action = draw(st.sampled_from(["same", "same", "other", "nudge", "drop", "case"]))
        if action == "same":
            got.append(token)
        elif action == "other":
            got.append(draw(stream_token))
        elif action == "nudge" and _LEGACY_NUMBER.fullmatch(token):
            delta = draw(st.sampled_from([1e-9, 5e-7, 2e-6, 1e-3]))
            value = float(token)
            if draw(st.booleans()):  # a relative nudge: within 1e-6 relative, not absolute
                delta *= abs(value)
            got.append(repr(value + delta))
        elif action == "case":
            got.append(token.swapcase())
    if draw(st.booleans()):
        got.append(draw(stream_token))
    return " ".join(got), " ".join(want)


@settings(max_examples=400)
@given(pair=token_pair_streams())
def test_codecontests_without_rules_judges_as_before(pair: tuple[str, str]) -> None:
    output, expected = pair
    assert get_checker("codecontests")(output, expected).ok == legacy_codecontests(output, expected)


@st.composite
def any_casing(draw: st.DrawFn, word: str) -> str:
    return "".join(c.upper() if draw(st.booleans()) else c.lower() for c in word)


@given(
    data=st.data(),
    words=st.lists(st.from_regex(r"[A-Za-z]{1,8}", fullmatch=True), min_size=1, max_size=4),
)
def test_any_casing_of_a_named_word_is_accepted(data: st.DataObject, words: list[str]) -> None:
    check = get_checker("codecontests")
    expected = " ".join(words) + "\n"
    output = " ".join(data.draw(any_casing(w)) for w in words)
    named = [data.draw(any_casing(w)) for w in words]  # the statement's own spelling
    assert check(output, expected, any_case_words=named).ok


@given(
    data=st.data(),
    word=st.from_regex(r"[A-Za-z]{2,8}", fullmatch=True).filter(
        lambda w: w.casefold() not in {"yes", "no"}
    ),
)
def test_unnamed_words_keep_their_case(data: st.DataObject, word: str) -> None:
    check = get_checker("codecontests")
    other = data.draw(any_casing(word).filter(lambda w: w != word))
    assert not check(f"{other}\n", f"{word}\n", any_case_words=["YES", "NO"]).ok
    assert not check(f"{other}\n", f"{word}\n").ok
    assert check(f"{other}\n", f"{word}\n", any_case_words=["YES", word.upper(), "NO"]).ok


def test_any_case_words_relax_only_those_words() -> None:
    check = get_checker("codecontests")
    rules = {"any_case_words": ["White", "Black"]}
    assert check("WHITE 3\nblack\n", "White 3\nBlack\n", **rules).ok
    assert not check("WHITE 3\nBLACK\n", "White 3\nBlock\n", **rules).ok  # Block is unnamed
    assert not check("black\n", "White\n", **rules).ok  # another named word is still wrong
    assert not check("white\n", "Whitey\n", **rules).ok


def _scale(mode: str, want: float) -> float:
    """The error a mode allows per unit of tolerance for the expected value `want`."""
    return {"absolute": 1.0, "relative": abs(want), "absolute_or_relative": max(1.0, abs(want))}[
        mode
    ]


@given(
    mode=st.sampled_from(MODES),
    tolerance=st.sampled_from([1e-3, 1e-4, 1e-6, 1e-9]),
    mantissa=st.floats(min_value=1.0, max_value=10.0),
    exponent=st.integers(min_value=-3, max_value=3),
    sign=st.sampled_from([-1.0, 1.0]),
)
def test_tolerance_in_each_mode(
    mode: str, tolerance: float, mantissa: float, exponent: int, sign: float
) -> None:
    check = get_checker("codecontests")
    want = -mantissa * 10.0**exponent if sign < 0 else mantissa * 10.0**exponent
    rules = {"tolerance": tolerance, "tolerance_mode": mode}
    allowed = tolerance * _scale(mode, want)
    assert check(repr(want + sign * 0.9 * allowed), repr(want), **rules).ok
    assert not check(repr(want + sign * 1.1 * allowed), repr(want), **rules).ok


@pytest.mark.parametrize(
    ("output", "expected", "mode", "ok"),
    [
        ("100.5", "100.0", "absolute", False),  # 0.5 off: beyond 1e-3 absolute
        ("100.05", "100.0", "relative", True),  # 5e-4 relative
        ("100.05", "100.0", "absolute_or_relative", True),
        ("0.0005", "0.0", "relative", False),  # relative to 0 means exact
        ("0.0005", "0.0", "absolute", True),
        ("0.0005", "0.0", "absolute_or_relative", True),
    ],
)
def test_tolerance_modes_differ_where_they_should(
    output: str, expected: str, mode: str, ok: bool
) -> None:
    check = get_checker("codecontests")
    assert check(output, expected, tolerance=1e-3, tolerance_mode=mode).ok is ok


def test_real_numbers_compare_when_either_side_is_decimal() -> None:
    check = get_checker("codecontests")
    real = {"real_numbers": True}
    assert check("3.000000\n", "3\n", **real).ok
    assert check("2.9999999\n", "3\n", **real).ok
    assert check("3\n", "3.0000001\n", **real).ok
    assert check("1e2\n", "100\n", **real).ok
    assert not check("2.99\n", "3\n", **real).ok
    assert not check("3.000000\n", "3\n").ok  # without the rule an integer answer is exact
    assert not check("three\n", "3\n", **real).ok
    assert not check("nan\n", "3\n", **real).ok
    assert check("2.5 7\n", "2.50000 7\n", real_numbers=True, tolerance=1e-4).ok


@given(
    n=st.integers(min_value=-(10**19) + 1, max_value=10**19 - 1),
    step=st.integers(min_value=1, max_value=1000),
    mode=st.sampled_from(MODES),
    tolerance=st.sampled_from([1e-6, 1e-3, 0.5]),
)
def test_integers_of_up_to_19_digits_stay_exact_under_any_rules(
    n: int, step: int, mode: str, tolerance: float
) -> None:
    check = get_checker("codecontests")
    rules = {"tolerance": tolerance, "tolerance_mode": mode, "real_numbers": True}
    assert check(str(n), str(n), **rules).ok
    assert not check(str(n + step), str(n), **rules).ok


def test_a_misspelt_parameter_is_an_error() -> None:
    with pytest.raises(TypeError, match="tolerence"):
        get_checker("codecontests")("1", "1", tolerence=1e-4)
    with pytest.raises(ValueError, match="tolerance, tolerance_mode, real_numbers"):
        check_params("codecontests", {"tolerence": 1e-4})
    with pytest.raises(ValueError, match="its parameters are none"):
        check_params("tokens", {"tolerance": 1e-4})
    with pytest.raises(ValueError, match="judge passes each test's input"):
        check_params("codecontests", {"input": "1 2"})
    with pytest.raises(ValueError, match="timeout"):
        check_params("/usr/local/bin/my-checker", {"precision": 1e-4})
    check_params("/usr/local/bin/my-checker", {"timeout": 5})
    check_params("floats", {"precision": 1e-4})


@pytest.mark.parametrize(
    ("params", "fragment"),
    [
        ({"tolerance": -1e-6}, "tolerance must be"),
        ({"tolerance": float("nan")}, "tolerance must be"),
        ({"tolerance": "1e-6"}, "tolerance must be"),
        ({"tolerance": True}, "tolerance must be"),
        ({"tolerance_mode": "abs"}, "absolute, relative, absolute_or_relative"),
        ({"real_numbers": "yes"}, "real_numbers must be"),
        ({"any_case_words": "YES"}, "list of words"),
        ({"any_case_words": ["YES", ""]}, "non-empty token"),
        ({"any_case_words": ["YES NO"]}, "non-empty token"),
        ({"any_case_words": [1]}, "non-empty token"),
        ({"any_order": "tokens"}, "any_order must be"),
        ({"any_order": True}, "any_order must be"),
    ],
)
def test_unusable_rule_values_are_refused(params: dict[str, object], fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        check_params("codecontests", params)


def test_every_checker_takes_the_input_the_judge_passes() -> None:
    for name in comparisons():
        assert get_checker(name)("1\n", "1\n", input="0\n").ok


# ---------------------------------------------------------------- any_order


@given(
    rows=st.lists(
        st.lists(st.from_regex(r"[a-z0-9]{1,3}", fullmatch=True), max_size=5), max_size=5
    ),
    data=st.data(),
)
def test_any_order_accepts_every_permutation_it_frees(
    rows: list[list[str]], data: st.DataObject
) -> None:
    expected = "\n".join(" ".join(row) for row in rows) + "\n"
    within = [data.draw(st.permutations(row)) for row in rows]
    line_order = "\n".join(" ".join(row) for row in within)
    assert get_checker("codecontests")(line_order, expected, any_order="line").ok
    moved = data.draw(st.permutations(within))
    every_order = "\n".join(" ".join(row) for row in moved)
    assert get_checker("codecontests")(every_order, expected, any_order="all").ok


@given(
    rows=st.lists(
        st.lists(st.from_regex(r"[a-z0-9]{1,3}", fullmatch=True), min_size=1, max_size=5),
        min_size=1,
        max_size=5,
    ),
    data=st.data(),
)
def test_any_order_rejects_a_changed_token(rows: list[list[str]], data: st.DataObject) -> None:
    expected = "\n".join(" ".join(row) for row in rows)
    r = data.draw(st.integers(0, len(rows) - 1))
    c = data.draw(st.integers(0, len(rows[r]) - 1))
    changed = [list(row) for row in rows]
    changed[r][c] += "x"  # a token no expected token equals
    output = "\n".join(" ".join(row) for row in changed)
    for mode in ("line", "all"):
        assert not get_checker("codecontests")(output, expected, any_order=mode).ok


def test_any_order_line_keeps_the_lines_in_order() -> None:
    check = get_checker("codecontests")
    expected = "icm codeforces\nicm technex\n"
    assert check("codeforces icm\ntechnex icm\n", expected, any_order="line").ok
    assert not check("icm technex\nicm codeforces\n", expected, any_order="line").ok
    assert check("icm technex\nicm codeforces\n", expected, any_order="all").ok
    # a token moved to another line is no reordering within a line
    assert not check("1 2 3\n4\n", "1 2\n3 4\n", any_order="line").ok
    assert not check("1 2 3\n4\n", "1 2\n3 4\n", any_order="all").ok


def test_any_order_counts_repeated_tokens() -> None:
    check = get_checker("codecontests")
    assert check("3 2 3 2\n", "2 2 3 3\n", any_order="line").ok
    assert not check("3 3 3 2\n", "2 2 3 3\n", any_order="line").ok
    assert not check("2 3\n", "2 2 3\n", any_order="all").ok


def test_any_order_keeps_the_other_rules() -> None:
    check = get_checker("codecontests")
    assert check("yes 2.0000001 1\n", "1 2.0 YES\n", any_order="line", any_case_words=["YES"]).ok
    assert not check("yes 2.01 1\n", "1 2.0 YES\n", any_order="line", any_case_words=["YES"]).ok
    assert not check("Power\n", "power\n", any_order="all").ok
    # empty lines are no answer: "0" then an empty second line
    assert check("0\n", "0\n\n", any_order="line").ok


# LiveCodeBench's comparison (`grade_stdio`): (output, expected, equal?).
LIVECODEBENCH_CASES = [
    ("3\n", "3", True),
    ("  a b  \r\n c\n\n\n", "a b\nc", True),  # the whole output and each line stripped
    ("a  b\n", "a b\n", False),  # inside a line, text compares exactly
    ("1.0 2\n", "1 2.00\n", True),  # tokens equal as decimals
    ("1e3\n", "1000\n", True),
    ("-0\n", "0\n", True),
    ("1_000\n", "1000\n", True),  # decimal.Decimal reads underscores
    ("0.1\n", "0.10000000000000001\n", False),  # decimals, not floats
    ("50000000000000001\n", "50000000000000000\n", False),
    ("x 1\n", "x 1.0\n", False),  # one token not a number: the line must match exactly
    ("1 2\n", "1\n2\n", False),  # the same tokens on other lines
    ("1\n\n2\n", "1\n2\n", False),  # an empty line inside counts
    ("", "\n", True),
    ("NaN\n", "NaN\n", True),  # the same text
    ("NaN\n", "nan\n", False),  # NaN is never equal as a number
    ("sNaN\n", "1\n", False),  # a signalling NaN refuses comparison: not equal
    ("Infinity\n", "inf\n", True),
]


@pytest.mark.parametrize(("output", "expected", "equal"), LIVECODEBENCH_CASES)
def test_livecodebench_compares_as_its_grader(output: str, expected: str, equal: bool) -> None:
    assert get_checker("livecodebench")(output, expected).ok is equal


@given(
    rows=st.lists(
        st.lists(st.integers(-(10**20), 10**20), min_size=1, max_size=5), min_size=1, max_size=5
    ),
    data=st.data(),
)
def test_livecodebench_reads_numbers_in_any_spelling(
    rows: list[list[int]], data: st.DataObject
) -> None:
    """Each number respelt (1 → 1.0, 1E0, +1) on each line, with spaces around: equal; one
    number changed: not."""
    spell = st.sampled_from(["{}", "{}.0", "{}E0", "{}.000"])
    lines = [
        " ".join(data.draw(spell).format(n) for n in row) + data.draw(st.sampled_from(["", " "]))
        for row in rows
    ]
    expected = "\n".join(" ".join(map(str, row)) for row in rows)
    check = get_checker("livecodebench")
    assert check("\n".join(lines) + "\n", expected).ok
    i = data.draw(st.integers(0, len(rows) - 1))
    changed = [list(row) for row in rows]
    changed[i][0] += 1
    assert not check("\n".join(" ".join(map(str, r)) for r in changed), expected).ok
