"""Languages in the judge: the registry, the executors' interface, Python's byte-compilation
and cache, the per-language time factor and the interpreter's memory allowance (real
sandbox)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from codefu_sandbox import (
    CheckerConfig,
    GraderConfig,
    Judge,
    Limits,
    Submission,
    TestCase,
    Verdict,
)
from codefu_sandbox.judge import check_time_factors
from codefu_sandbox.languages import (
    DEFAULT_LANGUAGE,
    ENTRY_POINT_GROUP,
    LANGUAGES,
    Executor,
    Language,
    check_language,
    default_time_factors,
    for_alias,
    for_fence_tag,
    for_suffix,
    language_of,
    language_registry,
    register,
    unregister,
)
from codefu_sandbox.request import request_for
from codefu_sandbox.runner import Runner, SandboxError

MiB = 1 << 20
SUM = "n = int(input())\nprint(n * (n + 1) // 2)\n"
SUM_CPP = '#include <cstdio>\nint main(){long n;scanf("%ld",&n);printf("%ld\\n",n*(n+1)/2);}\n'
TESTS = [TestCase("3\n", "6\n"), TestCase("10\n", "55\n")]
# Burns `seconds` of CPU time, then prints "done".
BURN = (
    "import time\nseconds = float(input())\n"
    "while time.process_time() < seconds:\n    pass\nprint('done')\n"
)


def test_language_names_and_suffixes() -> None:
    assert DEFAULT_LANGUAGE in LANGUAGES
    for name, language in LANGUAGES.items():
        assert language.name == name and check_language(name) == name
        for suffix in language.suffixes:
            assert language_of(Path(f"a{suffix}")) == name
    assert language_of(Path("a.txt")) == DEFAULT_LANGUAGE
    with pytest.raises(ValueError, match=f"choose one of {', '.join(LANGUAGES)}"):
        check_language("java")


def test_time_factors_are_checked_and_default_filled() -> None:
    factors = check_time_factors({"python": 2})
    assert factors["python"] == 2.0
    assert factors["cpp"] == 1.0
    with pytest.raises(ValueError, match="unknown language"):
        check_time_factors({"pypy": 2.0})
    for bad in (0, -1.0, True, "2"):
        with pytest.raises(ValueError, match="must be a number > 0"):
            check_time_factors({"python": bad})  # type: ignore[dict-item]


def test_unknown_language_is_refused(judge: Judge) -> None:
    with pytest.raises(ValueError, match="unknown language 'java'"):
        judge.judge(SUM, TESTS, Limits(1.0, 256 * MiB), language="java")


def test_cpp_stays_the_default_and_python_is_chosen_by_name(judge: Judge) -> None:
    limits = Limits(1.0, 256 * MiB)
    assert judge.judge(SUM_CPP, TESTS, limits).verdict is Verdict.AC
    assert judge.judge(SUM, TESTS, limits).verdict is Verdict.CE  # Python as C++
    assert judge.judge(SUM, TESTS, limits, language="python").verdict is Verdict.AC
    assert judge.judge(SUM_CPP, TESTS, limits, language="python").verdict is Verdict.CE


def test_submissions_carry_their_language(judge: Judge) -> None:
    limits = Limits(1.0, 256 * MiB)
    reports = judge.judge_many(
        [Submission(SUM_CPP, TESTS, limits), Submission(SUM, TESTS, limits, language="python")],
        max_workers=2,
    )
    assert [r.verdict for r in reports] == [Verdict.AC, Verdict.AC]


def test_byte_compilation_errors_are_cached_with_the_message(judge: Judge) -> None:
    source = "for i in range(3):\nprint(i)\n"
    first = judge.judge(source, TESTS, Limits(1.0, 256 * MiB), language="python")
    assert first.verdict is Verdict.CE
    assert "IndentationError" in first.compile.diagnostics
    assert 'File "sol.py", line 2' in first.compile.diagnostics
    assert not first.compile.cached
    again = judge.judge(source, TESTS, Limits(1.0, 256 * MiB), language="python")
    assert again.compile.cached
    assert again.compile.diagnostics == first.compile.diagnostics


def test_byte_code_is_cached_by_content(judge: Judge) -> None:
    executor = judge.executor("python")
    source = SUM + "# cached?\n"
    first, program = executor.compile(source)
    again, same = executor.compile(source)
    assert first.ok and not first.cached
    assert again.ok and again.cached
    assert program is not None and same is not None
    assert program.files == same.files
    cached = next(iter(program.files.values()))
    assert cached.is_relative_to(judge.cache_dir)
    assert executor.key(source) != executor.key(SUM)


def test_uncaught_exception_is_re_with_the_traceback(judge: Judge) -> None:
    source = "n = int(input())\nprint([1, 2][n])\n"
    report = judge.judge(source, TESTS, Limits(1.0, 256 * MiB), language="python")
    assert report.verdict is Verdict.RE
    assert report.tests[0].exit_code == 1
    assert "IndexError" in report.tests[0].message


# A Codeforces-style program: the answer, then exit() or quit() before the rest.
STOPS_EARLY = (
    "n = int(input())\n"
    "if n > 5:\n"
    "    print(n * (n + 1) // 2)\n"
    "    {stop}\n"
    "print(-1)\n"
    "{stop}\n"
    "print('never')\n"
)


@pytest.mark.parametrize("stop", ["exit()", "quit()", "exit(0)", "quit(None)", "sys.exit()"])
def test_exit_and_quit_end_a_program_as_cpython_does(judge: Judge, stop: str) -> None:
    source = ("import sys\n" if stop.startswith("sys.") else "") + STOPS_EARLY.format(stop=stop)
    tests = [TestCase("10\n", "55\n"), TestCase("3\n", "-1\n")]
    report = judge.judge(source, tests, Limits(1.0, 256 * MiB), language="python")
    assert report.verdict is Verdict.AC, report.to_dict()


def test_exit_with_a_status_or_a_message_is_re_as_in_cpython(judge: Judge) -> None:
    limits = Limits(1.0, 256 * MiB)
    status = judge.judge("print(6)\nexit(2)\n", [TestCase("", "6\n")], limits, language="python")
    assert status.verdict is Verdict.RE
    assert status.tests[0].exit_code == 2
    text = judge.judge("print(6)\nquit('bye')\n", [TestCase("", "6\n")], limits, language="python")
    assert text.verdict is Verdict.RE
    assert text.tests[0].exit_code == 1
    assert "bye" in text.tests[0].message
    # Defined as `site` defines them, and nothing else of site's is: no name leaks in.
    names = "print(repr(exit), repr(quit), 'builtins' in globals(), 'name' in globals())\n"
    expected = "Use exit() or Ctrl-D (i.e. EOF) to exit Use quit() or Ctrl-D (i.e. EOF) to exit"
    shown = judge.judge(
        names, [TestCase("", expected + " False False\n")], limits, language="python"
    )
    assert shown.verdict is Verdict.AC, shown.to_dict()


def test_the_time_factor_scales_the_limit(cache_dir: Path) -> None:
    tests = [TestCase("0.15\n", "done\n")]
    limits = Limits(0.1, 256 * MiB)
    strict = Judge(cache_dir, time_factors={"python": 1.0})
    lenient = Judge(cache_dir, time_factors={"python": 3.0})
    tle = strict.judge(BURN, tests, limits, language="python")
    assert tle.verdict is Verdict.TLE
    assert tle.tests[0].cpu_seconds >= 0.1
    ok = lenient.judge(BURN, tests, limits, language="python")
    assert ok.verdict is Verdict.AC, ok.to_dict()
    assert 0.15 <= ok.tests[0].cpu_seconds <= 0.3
    # C++ keeps its own factor, whatever Python's is.
    cpp = request_for(
        limits, 1, checker=CheckerConfig(), grader=GraderConfig(), time_factors=lenient.time_factors
    )
    assert cpp.limits.time_seconds == 0.1
    # A request is judged under its limits as they are: the judge's own factors are the
    # defaults of `judge`, not applied again to a request made elsewhere.
    made = request_for(
        limits,
        1,
        language="python",
        checker=CheckerConfig(),
        grader=GraderConfig(),
        time_factors={"python": 3.0},
    )
    assert strict.judge_request(BURN, tests, made).verdict is Verdict.AC


def test_the_interpreter_baseline_is_allowed_on_top_of_the_limit(judge: Judge) -> None:
    """A program whose own data fits the limit passes although the interpreter's few MiB
    put its peak over it; data well over the limit is MLE."""
    executor = judge.executor("python")
    assert 2 * MiB < executor.baseline_bytes <= executor.memory_allowance < 64 * MiB
    assert executor.memory_allowance % MiB == 0
    limits = Limits(1.0, 32 * MiB)
    fits = "data = b'x' * (30 << 20)\nprint(len(data) >> 20)\n"
    report = judge.judge(fits, [TestCase("", "30\n")], limits, language="python")
    assert report.verdict is Verdict.AC, report.to_dict()
    assert report.tests[0].peak_memory_bytes > limits.memory_bytes  # the interpreter's share
    over = "data = b'x' * (48 << 20)\nprint(len(data) >> 20)\n"
    assert judge.judge(over, [TestCase("", "48\n")], limits, language="python").verdict is (
        Verdict.MLE
    )


class _Named(Language):
    """A language that is only declared (its executor is never asked for)."""

    name = "plain"
    display_name = "Plain"
    suffixes = (".plain",)
    fence_tags = ("plain",)
    program_pattern = re.compile(r"\bplain\b")
    closing_token = "."

    def executor(self, cache_dir: Path, runner: Runner, config: Any = None) -> Executor:
        raise SandboxError("a declared language only")


def test_registration_refuses_a_name_suffix_tag_or_alias_taken() -> None:
    taken_by = {language.name: language for language in LANGUAGES.values()}
    cpp, python = taken_by[DEFAULT_LANGUAGE], LANGUAGES["python"]
    for taken, clash in (
        ("name", {"name": python.name}),
        ("suffix", {"suffixes": cpp.suffixes[-1:]}),
        ("fence tag", {"fence_tags": python.fence_tags[-1:]}),
        ("alias", {"aliases": cpp.aliases[:1]}),
    ):
        with pytest.raises(ValueError, match=r"already (names|registered)"):
            register(type(f"Clash{taken}", (_Named,), clash)())
    register(_Named())
    try:
        assert list(LANGUAGES) == [*taken_by, "plain"]
    finally:
        unregister("plain")
    assert list(LANGUAGES) == list(taken_by)
    with pytest.raises(ValueError, match=f"default language '{cpp.name}' cannot be unregistered"):
        unregister(cpp.name)
    with pytest.raises(ValueError, match="unknown language 'plain'"):
        unregister("plain")
    with pytest.raises(ValueError, match="register a Language instance"):
        register(object())


def test_the_registry_answers_by_suffix_tag_and_alias() -> None:
    assert for_suffix(".CXX") is LANGUAGES["cpp"] and for_suffix(".txt") is None
    assert for_fence_tag("Python3") is LANGUAGES["python"] and for_fence_tag("") is None
    assert for_alias("PYTHON3") is LANGUAGES["python"] and for_alias("PYTHON") is None
    assert default_time_factors() == {"cpp": 1.0, "python": 1.0}
    assert "python" in LANGUAGES and ["python"] not in LANGUAGES  # type: ignore[comparison-overlap]


PLUGIN = """
import re
from codefu_sandbox.languages import Language


class Plain(Language):
    name = "plain"
    display_name = "Plain"
    suffixes = (".plain",)
    fence_tags = ("plain",)
    program_pattern = re.compile(r"plain")
    closing_token = "."

    def executor(self, cache_dir, runner, config=None):
        raise NotImplementedError


LANGUAGE = Plain()
"""


def test_a_package_adds_a_language_by_an_entry_point(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An installed distribution (its dist-info on sys.path) whose `codefu.languages` entry
    point names a Language: the registry loads it on first use."""
    (tmp_path / "codefu_plain.py").write_text(PLUGIN)
    info = tmp_path / "codefu_plain-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: codefu-plain\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\nplain = codefu_plain:LANGUAGE\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = language_registry()
    assert list(registry) == sorted([*LANGUAGES, "plain"])
    assert registry["plain"].display_name == "Plain"
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\nplain = codefu_plain:Nope\n")
    with pytest.raises(RuntimeError, match=r"plain = codefu_plain:Nope .* cannot be registered"):
        list(language_registry().values())
