"""Hostile test data: every input gets a verdict or a ValueError that says what is wrong.

NUL bytes, bytes that are not UTF-8 (as str decoded with surrogateescape), characters no
encoding accepts, very long lines, thousands of tiny tests and a 100 MB expected output,
judged for real with an echo program (stdin copied to stdout).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codefu_sandbox import Judge, Limits, TestCase, Verdict

MiB = 1 << 20
LIMITS = Limits(2.0, 256 * MiB)
ECHO = """
#include <cstdio>
int main() {
    static char buf[1 << 16];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, stdin)) > 0) fwrite(buf, 1, n, stdout);
}
"""

pytestmark = pytest.mark.usefixtures("host_guard")

# Raw bytes as the data loader hands them over: str decoded with surrogateescape.
raw_text = st.binary(max_size=2000).map(lambda b: b.decode("utf-8", "surrogateescape"))
# Any code point, lone surrogates included (those outside U+DC80..U+DCFF cannot be encoded).
any_text = st.text(st.characters(codec=None, exclude_categories=()), max_size=200)
FUZZ = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return False
    return True


@FUZZ
@given(data=raw_text)
def test_raw_bytes_with_nuls_and_invalid_utf8_round_trip(judge: Judge, data: str) -> None:
    report = judge.judge(ECHO, [TestCase(data, data)], LIMITS, checker="exact")
    assert report.verdict is Verdict.AC, report.to_dict()


@FUZZ
@given(data=any_text, expected=any_text)
def test_any_text_gets_a_verdict_or_a_value_error(judge: Judge, data: str, expected: str) -> None:
    if not (_encodable(data) and _encodable(expected)):
        with pytest.raises(ValueError, match=r"test 0: .* UTF-8 cannot encode"):
            judge.judge(ECHO, [TestCase(data, expected)], LIMITS)
        return
    report = judge.judge(ECHO, [TestCase(data, expected)], LIMITS)
    assert report.verdict in (Verdict.AC, Verdict.WA), report.to_dict()
    # What the program wrote, as the judge reads it back (escaped bytes may join up).
    output = data.encode("utf-8", "surrogateescape").decode("utf-8", "surrogateescape")
    assert report.verdict is (Verdict.AC if output.split() == expected.split() else Verdict.WA)


def test_bytes_instead_of_text_is_a_value_error(judge: Judge) -> None:
    with pytest.raises(ValueError, match="test 1: input is bytes, not str"):
        judge.judge(ECHO, [TestCase("1", "1"), TestCase(b"\0", "")], LIMITS)  # type: ignore[arg-type]


def test_a_ten_megabyte_line_with_nuls(judge: Judge) -> None:
    line = ("ab\0" * (10 * MiB // 3)) + "\n"
    report = judge.judge(ECHO, [TestCase(line, line)], LIMITS, checker="exact")
    assert report.verdict is Verdict.AC, report.tests[0].message


def test_two_thousand_tiny_tests(judge: Judge) -> None:
    tests = [TestCase(f"{i}\n", f"{i}\n") for i in range(2000)]
    tests[1234] = TestCase("x\n", "y\n")
    report = judge.judge(ECHO, tests, LIMITS)
    assert report.verdict is Verdict.WA and report.passed == 1999
    assert [i for i, t in enumerate(report.tests) if t.verdict is not Verdict.AC] == [1234]


def test_a_hundred_megabyte_expected_output_is_a_wrong_answer(judge: Judge) -> None:
    expected = "12345 " * (100 * MiB // 6)
    report = judge.judge(ECHO, [TestCase("12345\n", expected)], LIMITS)
    assert report.verdict is Verdict.WA
    assert report.tests[0].message == f"1 tokens, expected {100 * MiB // 6}"
