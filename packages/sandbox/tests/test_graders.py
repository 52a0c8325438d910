"""Graders: the configuration a problem names (`GraderConfig`), the judge's choice of grader,
the CLI's, and the interface (`Grader`, `GradingJob`) that the next grader is written against:
a call-style grader runs a harness around the built program, every test in one process, and
compares the results outside the sandbox."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

import pytest

from codefu_sandbox import GraderConfig, Judge, Limits, Submission, TestCase, Verdict
from codefu_sandbox.cli import load_grader_config, main
from codefu_sandbox.graders import DEFAULT_GRADER, GRADERS, GradingJob, get_grader
from codefu_sandbox.graders.base import Grader
from codefu_sandbox.languages import get as language
from codefu_sandbox.languages.python import FLAGS, PythonExecutor
from codefu_sandbox.records import CheckResult
from codefu_sandbox.verdicts import TestResult

ADD = '#include <cstdio>\nint main(){long a,b;scanf("%ld%ld",&a,&b);printf("%ld\\n",a+b);}\n'
TESTS = [TestCase("1 2\n", "3\n"), TestCase("-5 5\n", "0\n"), TestCase("2 2\n", "5\n")]
LIMITS = Limits(1.0, 256 << 20)


def test_the_default_grader_is_stdio_and_configurations_round_trip() -> None:
    assert DEFAULT_GRADER in GRADERS
    for name in GRADERS:
        assert get_grader(name).name == name
    assert GraderConfig() == GraderConfig("stdio") == GraderConfig.from_dict(None)
    assert GraderConfig.from_dict(GraderConfig().to_dict()) == GraderConfig()
    assert GraderConfig().to_dict() == {"name": "stdio", "params": {}}
    # A ground truth stores the parameters' JSON text; one prepared before that has every
    # field of a fixed struct, null when unused: both read.
    call = GraderConfig("call", {"fn_name": "f", "compare": "apps"})
    assert call.stored() == {"name": "call", "params": '{"compare": "apps", "fn_name": "f"}'}
    assert GraderConfig.from_dict(call.stored()) == call
    stored = {"name": "stdio", "params": {"fn_name": None, "prelude": None, "compare": None}}
    assert GraderConfig.from_dict(stored) == GraderConfig()
    assert GraderConfig.from_dict({"name": None, "params": None}) == GraderConfig()
    assert hash(GraderConfig.from_dict(stored)) == hash(GraderConfig())
    assert get_grader("stdio").name == "stdio"


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (
            {"name": "interactive"},
            f"unknown grader 'interactive': choose one of {', '.join(GRADERS)}",
        ),
        ({"name": "stdio", "params": {"fn_name": "solve"}}, "takes no parameter 'fn_name'"),
        ({"name": "stdio", "params": {"prelude": 3}}, "parameter 'prelude' is a str, got 3"),
        ({"name": "stdio", "params": "{not json"}, "grader params are not JSON"),
        ({"name": "stdio", "params": {"prelude": "numpy"}}, "unknown prelude 'numpy'"),
        ({"name": "call"}, "grader 'call' needs fn_name"),
        ({"name": "call", "params": {"fn_name": " "}}, "grader 'call' needs fn_name"),
        ({"name": "call", "params": {"fn_name": "f", "compare": "close"}}, "unknown compare"),
        ({"name": "call", "params": {"fn_name": "f", "prelude": "x"}}, "one of livecodebench"),
        ({"name": "stdio", "extra": 1}, "only the keys name and params"),
        ({"params": {}}, '"name": GRADER'),
        ({"name": "stdio", "params": [1]}, "must be a mapping"),
        ({"name": 3}, "must be a string"),
    ],
)
def test_a_bad_grader_configuration_is_refused_in_one_line(
    data: dict[str, object], fragment: str
) -> None:
    with pytest.raises(ValueError, match=fragment) as info:
        GraderConfig.from_dict(data)
    assert "\n" not in str(info.value)


def test_the_judge_grades_with_the_named_grader(judge: Judge) -> None:
    default = judge.judge(ADD, TESTS, LIMITS)
    named = judge.judge(ADD, TESTS, LIMITS, grader="stdio")
    configured = judge.judge(ADD, TESTS, LIMITS, grader=GraderConfig("stdio"))
    assert [t.verdict for t in default.tests] == [Verdict.AC, Verdict.AC, Verdict.WA]
    for report in (named, configured):
        assert [t.verdict for t in report.tests] == [t.verdict for t in default.tests]
    with pytest.raises(ValueError, match="unknown grader 'interactive'"):
        judge.judge(ADD, TESTS, LIMITS, grader="interactive")
    stopped = judge.judge_many(
        [Submission(ADD, TESTS, LIMITS, stop_on_first_failure=True, grader="stdio")]
    )
    assert stopped[0].verdict is Verdict.WA and len(stopped[0].tests) == 3


def test_the_cli_takes_a_grader_by_name_or_configuration(
    judge: Judge, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "sol.cpp"
    src.write_text(ADD)
    tests = tmp_path / "tests.json"
    tests.write_text(json.dumps({"input": ["1 2\n"], "output": ["3\n"]}))
    args = [str(src), "--tests", str(tests), "--time-limit", "1", "--memory-limit", "256M"]
    args += ["--cache-dir", str(judge.cache_dir)]
    assert main([*args, "--grader", "stdio"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "AC"
    assert main([*args, "--grader-config", '{"name": "stdio"}']) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "AC"
    assert main([*args, "--grader-config", '{"name": "interactive"}']) == 2
    assert "unknown grader 'interactive'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([*args, "--grader", "stdio", "--grader-config", '{"name": "stdio"}'])
    path = tmp_path / "grader.json"
    path.write_text('{"name": "stdio", "params": {}}')
    assert load_grader_config(str(path)) == GraderConfig()
    # The call grader needs its function; given it, a Python answer's value is compared.
    assert main([*args, "--grader", "call"]) == 2
    assert "grader 'call' needs fn_name" in capsys.readouterr().err
    py = tmp_path / "sol.py"
    py.write_text("def add(a, b):\n    return a + b\n")
    tests.write_text(json.dumps({"input": ["[1, 2]", "[2, 2]"], "output": ["3", "5"]}))
    call = '{"name": "call", "params": {"fn_name": "add"}}'
    assert main([str(py), *args[1:], "--grader-config", call]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [t["verdict"] for t in report["tests"]] == ["AC", "WA"]


# A harness around a Python program: defines the program's functions without running its
# main block, then calls `fn` on each test's JSON arguments, in one process, and prints the
# JSON results, one line per test.
HARNESS = (
    "import json, marshal, sys\n"
    "scope = {'__name__': 'solution'}\n"
    "exec(marshal.loads(open('sol.pyc', 'rb').read()[16:]), scope)\n"
    "fn = scope[sys.argv[1]]\n"
    "for line in sys.stdin:\n"
    "    print(json.dumps(fn(*json.loads(line))))\n"
)


class CallOnce(Grader):
    """A call-style grader, as the next one will be: the function the params name, called
    on every test in one process; results compared outside the sandbox."""

    name = "call-once"
    parameters: ClassVar[Mapping[str, type]] = {"fn_name": str}

    def grade(self, job: GradingJob) -> list[TestResult]:
        executor = job.executor
        assert isinstance(executor, PythonExecutor)
        argv = (executor.interpreter, *FLAGS, "-c", HARNESS, self.params["fn_name"])
        with job.serve(argv) as served:
            run = served.run("".join(f"{t.input}\n" for t in job.tests).encode())
        if run.verdict is not None:
            return [run.failure()]
        got = run.output.decode().splitlines()
        results = []
        for test, line in zip(job.tests, [*got, *[""] * len(job.tests)], strict=False):
            same = bool(line) and json.loads(line) == json.loads(test.output)
            results.append(
                run.result(Verdict.AC if same else Verdict.WA, "" if same else f"got {line}")
            )
            if job.stops_after(results[-1].verdict):
                break
        return results


def _job(judge: Judge, source: str, tests: list[TestCase]) -> GradingJob:
    """What the judge hands a grader, for a Python submission (`Judge.judge`'s steps)."""
    executor = judge.executor("python")
    compiled, program = executor.compile(source)
    assert program is not None, compiled.diagnostics

    def never(output: str, expected: str, *, input: str) -> CheckResult:
        raise AssertionError("a call grader compares outside the checker")

    return GradingJob(
        program=program,
        executor=executor,
        language=language("python"),
        tests=tests,
        limits=Limits(LIMITS.time_seconds, LIMITS.memory_bytes + program.memory_allowance),
        check=never,
        runner=judge.runner,
        output_limit=judge.output_limit,
        allow_file_writes=False,
        stops_after=lambda verdict: False,
    )


def test_a_call_style_grader_fits_the_interface(judge: Judge) -> None:
    source = (
        "def add(a, b):\n    return a + b\n\n"
        "if __name__ == '__main__':\n    print(add(*map(int, input().split())))\n"
    )
    tests = [TestCase("[1, 2]", "3"), TestCase("[[1], [2]]", "[1, 2]"), TestCase("[2, 2]", "5")]
    grader = CallOnce({"fn_name": "add"})
    assert [r.verdict for r in grader.grade(_job(judge, source, tests))] == [
        Verdict.AC,
        Verdict.AC,
        Verdict.WA,
    ]
    crash = "def add(a, b):\n    return a[0]\n"
    assert [r.verdict for r in grader.grade(_job(judge, crash, tests))] == [Verdict.RE]
    with pytest.raises(ValueError, match="takes no parameter 'compare'"):
        CallOnce({"compare": "apps"})
