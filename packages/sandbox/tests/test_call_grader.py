"""The call grader (`graders/call.py`) on real programs in the real sandbox: verdicts, the
comparisons, what a test leaves for the next, the preludes (here and for stdio programs),
and the languages it runs. The attacks on it: tests/judge/test_call_attacks.py."""

from __future__ import annotations

import json

import pytest

from codefu_sandbox import GraderConfig, Judge, JudgeReport, Limits, TestCase, Verdict
from codefu_sandbox.languages.python import LIVECODEBENCH_MODULES

LIMITS = Limits(1.0, 256 << 20)
SHORT = Limits(0.25, 256 << 20)
ADD = GraderConfig("call", {"fn_name": "add"})


def cases(*pairs: tuple[object, object]) -> list[TestCase]:
    """Tests from (arguments, expected value) pairs, in the stored encoding."""
    return [TestCase(json.dumps(args), json.dumps(expected)) for args, expected in pairs]


SUMS = cases(([1, 2], 3), ([[1], [2]], [1, 2]), ([2, 2], 5))


def judged(
    judge: Judge,
    source: str,
    tests: list[TestCase] = SUMS,
    grader: GraderConfig = ADD,
    limits: Limits = LIMITS,
) -> JudgeReport:
    return judge.judge(source, tests, limits, language="python", grader=grader)


def verdicts(report: JudgeReport) -> list[str]:
    return [str(t.verdict) for t in report.tests]


def test_a_function_and_a_solution_method_are_called_on_each_test(judge: Judge) -> None:
    function = "def add(a, b):\n    return a + b\n"
    method = "class Solution:\n    def add(self, a, b):\n        return a + b\n"
    for source in (function, method):
        report = judged(judge, source)
        assert verdicts(report) == ["AC", "AC", "WA"], report.to_dict()
        assert report.tests[2].message == "result: got '4', expected '5'"
    # Solution without the method: the module-level function is called.
    both = "class Solution:\n    pass\n\n" + function
    assert verdicts(judged(judge, both)) == ["AC", "AC", "WA"]
    # A main block does not run (it would read stdin): the module is not __main__.
    main = function + "\nif __name__ == '__main__':\n    print(add(*map(int, input().split())))\n"
    assert verdicts(judged(judge, main)) == ["AC", "AC", "WA"]


@pytest.mark.parametrize(
    ("source", "verdict", "message"),
    [
        ("def add(a, b):\n    return a[0]\n", "RE", "TypeError: 'int' object is not subscriptable"),
        ("def add(a, b):\n    raise SystemExit(0)\n", "RE", "SystemExit: 0"),
        ("def add(a, b):\n    return {1, 2}\n", "WA", "the result is not JSON data: TypeError"),
        ("def add(a, b):\n    return add\n", "WA", "the result is not JSON data: TypeError"),
        ("def add(a, b):\n    return float('nan')\n", "WA", "result: got 'NaN'"),
        ("def plus(a, b):\n    return a + b\n", "CE", "defines no function add"),
        ("add = 3\n", "CE", "defines no function add"),
        ("x = input()\ndef add(a, b):\n    return a + b\n", "RE", "EOFError"),
        ("1 / 0\ndef add(a, b):\n    return a + b\n", "RE", "ZeroDivisionError"),
        ("import os\ndef add(a, b):\n    os._exit(0)\n", "RE", "the process ended (exit code 0)"),
        ("def add(a, b):\n    return bytearray(1 << 40)\n", "MLE", "MemoryError"),
    ],
)
def test_each_failure_has_its_verdict(
    judge: Judge, source: str, verdict: str, message: str
) -> None:
    report = judged(judge, source)
    assert report.compile.ok
    assert str(report.verdict) == verdict, report.to_dict()
    assert message in report.tests[0].message


def test_exit_and_quit_are_defined_for_call_based_programs(judge: Judge) -> None:
    # A guard that stops on bad input, as competitive Python writes it: the names resolve
    # (site's Quitter), and calling one ends that call as any SystemExit does.
    source = "def add(a, b):\n    if a < 0:\n        quit()\n    return a + b if exit else 0\n"
    report = judged(judge, source, cases(([1, 2], 3), ([-1, 2], 1)))
    assert verdicts(report) == ["AC", "RE"], report.to_dict()
    assert "SystemExit" in report.tests[1].message


def test_a_syntax_error_is_the_builds_compile_error_with_its_own_line(judge: Judge) -> None:
    report = judged(
        judge,
        "def add(a, b):\n    return a +\n",
        grader=GraderConfig("call", {"fn_name": "add", "prelude": "livecodebench"}),
    )
    assert report.verdict is Verdict.CE and not report.compile.ok
    assert "line 2" in report.compile.diagnostics  # the prelude does not move it


def test_time_and_memory_limits_hold_per_call_and_later_tests_still_run(judge: Judge) -> None:
    tests = cases(([1, 1], 2), ([2, 2], 4), ([3, 3], 6))
    spin = "def add(a, b):\n    while a == 1:\n        pass\n    return a + b\n"
    report = judged(judge, spin, tests, limits=SHORT)
    assert verdicts(report) == ["TLE", "AC", "AC"], report.to_dict()
    sleep = (
        "import time\ndef add(a, b):\n    if a == 2:\n        time.sleep(60)\n    return a + b\n"
    )
    report = judged(judge, sleep, tests, limits=SHORT)
    assert verdicts(report) == ["AC", "TLE", "AC"], report.to_dict()
    assert "blocked or sleeping" in report.tests[1].message
    hog = (
        "def add(a, b):\n    if a == 1:\n        block = bytearray(300 << 20)\n"
        "        block[::4096] = b'x' * len(range(0, 300 << 20, 4096))\n    return a + b\n"
    )
    report = judged(judge, hog, tests)
    assert verdicts(report) == ["MLE", "AC", "AC"], report.to_dict()
    # The reward stops at the first TLE; so does the grader when told.
    stopped = judge.judge(spin, tests, SHORT, language="python", grader=ADD, stop_on=(Verdict.TLE,))
    assert verdicts(stopped) == ["TLE"]


def test_a_test_sees_what_earlier_tests_left_until_a_process_ends(judge: Judge) -> None:
    """Module globals, class attributes, the one Solution instance and caches live on from
    test to test in one process, as in LiveCodeBench; a crash starts a fresh one."""
    source = (
        "import os\nfrom functools import cache\n"
        "calls = []\n"
        "@cache\ndef square(x):\n    calls.append(x)\n    return x * x\n"
        "class Solution:\n"
        "    made = 0\n"
        "    def __init__(self):\n        Solution.made += 1\n        self.seen = 0\n"
        "    def add(self, a, b):\n"
        "        if a == 'crash':\n            os._exit(3)\n"
        "        self.seen += 1\n        square(2)\n"
        "        return [self.seen, Solution.made, len(calls)]\n"
    )
    tests = cases(
        ([0, 0], [1, 1, 1]),
        ([0, 0], [2, 1, 1]),  # the instance and the cache live on
        (["crash", 0], None),
        ([0, 0], [1, 1, 1]),  # a fresh process after the crash
    )
    report = judged(judge, source, tests)
    assert verdicts(report) == ["AC", "AC", "RE", "AC"], report.to_dict()


def test_results_compare_as_json_data(judge: Judge) -> None:
    echo = "def add(a, b):\n    return a\n"
    huge = "1" + "0" * 5000  # longer than int()'s default limit of 4300 digits
    tests = [
        *cases(([1, 0], 1.0), ([[1, [2, 3]], 0], [1, [2, 3]]), ([{"k": [1]}, 0], {"k": [1]})),
        TestCase(f"[{huge}, 0]", huge),
        TestCase(f"[{huge[:-1]}1, 0]", huge),
        *cases((["é\n\u2028", 0], "é\n\u2028")),
    ]
    assert verdicts(judged(judge, echo, tests)) == ["AC", "AC", "AC", "AC", "WA", "AC"]
    tuples = "def add(a, b):\n    return (a, (b, [b]))\n"
    assert verdicts(judged(judge, tuples, cases(([1, 2], [1, [2, [2]]])))) == ["AC"]
    int_keys = "def add(a, b):\n    return {1: a}\n"
    assert verdicts(judged(judge, int_keys, cases(([1, 2], {"1": 1})))) == ["AC"]


def test_apps_compare_also_takes_the_first_element_of_an_expected_list(judge: Judge) -> None:
    echo = "def add(a, b):\n    return a\n"
    tests = cases(([5, 0], [5]), ([[5], 0], [5]), ([6, 0], [5]), ([[], 0], []))
    exact = judged(judge, echo, tests)
    apps = judged(judge, echo, tests, GraderConfig("call", {"fn_name": "add", "compare": "apps"}))
    assert verdicts(exact) == ["WA", "AC", "WA", "AC"]
    assert verdicts(apps) == ["AC", "AC", "WA", "AC"]
    # APPS reads a first argument's string keys as integers when they all are.
    keys = "def add(d, b):\n    return sorted(type(k).__name__ for k in d)\n"
    keyed = cases(([{"1": 2, "3": 4}, 0], ["int", "int"]), ([{"a": 1}, 0], ["str"]))
    grader = GraderConfig("call", {"fn_name": "add", "compare": "apps"})
    assert verdicts(judged(judge, keys, keyed, grader)) == ["AC", "AC"]
    assert verdicts(judged(judge, keys, keyed)) == ["WA", "AC"]


def test_livecodebench_compare_reads_a_returned_tuple_as_a_list_and_nothing_else(
    judge: Judge,
) -> None:
    """Its `prediction == expected`: a returned tuple becomes a list, but a tuple inside the
    result, or a dict key that is not a string, never equals JSON data."""
    grader = GraderConfig("call", {"fn_name": "add", "compare": "livecodebench"})
    results = [
        ("(a, [b])", [1, [2]], "AC"),  # the returned tuple only
        ("[[a, b]]", [[1, 2]], "AC"),
        ("[(a, b)]", [[1, 2]], "WA"),
        ("((a, b),)", [[1, 2]], "WA"),
        ("{'k': (a,)}", {"k": [1]}, "WA"),
        ("{'1': a}", {"1": 1}, "AC"),
        ("{1: a}", {"1": 1}, "WA"),
    ]
    for result, expected, verdict in results:
        source = f"def add(a, b):\n    return {result}\n"
        report = judged(judge, source, cases(([1, 2], expected)), grader)
        assert str(report.verdict) == verdict, (result, report.to_dict())
        # The exact comparison takes JSON's reading of all of them.
        assert verdicts(judged(judge, source, cases(([1, 2], expected)))) == ["AC"]
    nested = "def add(a, b):\n    return [(a, b)]\n"
    report = judged(judge, nested, cases(([1, 2], [[1, 2]])), grader)
    assert "a tuple inside the result" in report.tests[0].message
    # A list inside itself is refused as JSON refuses it, not searched for ever.
    cycle = "def add(a, b):\n    x = [a]\n    x.append(x)\n    return x\n"
    report = judged(judge, cycle, cases(([1, 2], [1])), grader)
    assert str(report.verdict) == "WA" and "Circular reference" in report.tests[0].message


def test_the_livecodebench_prelude_lifts_the_integer_digit_limit_to_its_50000(
    judge: Judge,
) -> None:
    stdio = GraderConfig("stdio", {"prelude": "livecodebench"})
    digits = "print(len(str(3 ** int(input()))))\n"
    within = [TestCase("40000\n", "19085\n")]  # 3**40000 has 19,085 digits
    report = judge.judge(digits, within, LIMITS, language="python", grader=stdio)
    assert report.verdict is Verdict.AC, report.to_dict()
    beyond = [TestCase("110000\n", "52488\n")]  # over its limit too
    report = judge.judge(digits, beyond, LIMITS, language="python", grader=stdio)
    assert report.verdict is Verdict.RE and "Exceeds the limit" in report.tests[0].message
    # Without the prelude, Python's default of 4,300 digits holds.
    assert judge.judge(digits, within, LIMITS, language="python").verdict is Verdict.RE
    # A 10,000-digit input reads too.
    read = "print(int(input()) % 1000)\n"
    big = [TestCase("7" * 10000 + "\n", "777\n")]
    report = judge.judge(read, big, LIMITS, language="python", grader=stdio)
    assert report.verdict is Verdict.AC, report.to_dict()


def test_the_livecodebench_prelude_gives_its_names_to_call_and_stdio_programs(
    judge: Judge,
) -> None:
    # Names from its modules (gcd: math; deque: collections; List: typing), the modules
    # themselves, and its recursion limit.
    body = (
        "        assert all(m in globals() for m in {modules!r})\n"
        "        return [gcd(a, b), len(deque([a])), getrecursionlimit()]\n"
    )
    source = (
        "class Solution:\n    def add(self, a: int, b: List[int]) -> List[int]:\n"
        + body.format(modules=LIVECODEBENCH_MODULES)
    )
    prelude = GraderConfig("call", {"fn_name": "add", "prelude": "livecodebench"})
    tests = cases(([4, 6], [2, 1, 50000]))
    assert verdicts(judged(judge, source, tests, prelude)) == ["AC"]
    assert verdicts(judged(judge, source, tests)) == ["RE"]  # NameError: List
    stdin = "print(gcd(*map(int, input().split())), getrecursionlimit())\n"
    stdio = GraderConfig("stdio", {"prelude": "livecodebench"})
    test = [TestCase("4 6\n", "2 50000\n")]
    assert judge.judge(stdin, test, LIMITS, language="python", grader=stdio).verdict is Verdict.AC
    assert judge.judge(stdin, test, LIMITS, language="python").verdict is Verdict.RE
    # `from __future__` still works: the prelude is not pasted before the program.
    future = "from __future__ import annotations\n" + stdin
    report = judge.judge(future, test, LIMITS, language="python", grader=stdio)
    assert report.verdict is Verdict.AC, report.to_dict()


def test_a_prelude_applies_only_to_its_language(judge: Judge) -> None:
    """LiveCodeBench's prelude is Python: a C++ stdio program runs as it is."""
    source = '#include <cstdio>\nint main(){int a,b;scanf("%d%d",&a,&b);printf("%d\\n",a+b);}\n'
    stdio = GraderConfig("stdio", {"prelude": "livecodebench"})
    report = judge.judge(source, [TestCase("1 2\n", "3\n")], LIMITS, grader=stdio)
    assert report.verdict is Verdict.AC


def test_the_call_grader_refuses_a_program_in_another_language(judge: Judge) -> None:
    report = judge.judge("int add(int a, int b) { return a + b; }\n", SUMS, LIMITS, grader=ADD)
    assert report.verdict is Verdict.CE and report.tests == []
    assert report.compile.diagnostics.startswith("grader 'call' judges python programs, not cpp")


def test_bad_test_data_is_the_judges_error_not_the_programs(judge: Judge) -> None:
    echo = "def add(a, b):\n    return a\n"
    tests = [TestCase("[1, 2]", "not json"), TestCase("{}", "1"), TestCase("[1,\n 2]", "1")]
    assert verdicts(judged(judge, echo, tests)) == ["IE", "IE", "AC"]
