"""The codefu-judge CLI: its usage line, both TESTS.json shapes, checker configs, exit codes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from codefu_sandbox import CheckerConfig
from codefu_sandbox.cli import InputError, load_checker_config, load_tests, main
from codefu_sandbox.models import parse_memory

SOURCE = "#include <bits/stdc++.h>\nint main(){long a,b;std::cin>>a>>b;std::cout<<a+b<<'\\n';}\n"


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    src = tmp_path / "sol.cpp"
    src.write_text(SOURCE)
    tests = tmp_path / "tests.json"
    tests.write_text(json.dumps({"input": ["1 2\n", "5 5\n"], "output": ["3\n", "10\n"]}))
    return src, tests


def test_both_test_file_shapes(tmp_path: Path) -> None:
    a = tmp_path / "a.json"
    a.write_text(json.dumps({"input": ["1"], "output": ["2"]}))
    b = tmp_path / "b.json"
    b.write_text(json.dumps([{"input": "1", "output": "2"}]))
    assert load_tests(a) == load_tests(b)


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("{not json", "not valid JSON"),
        ('{"input": ["1"]}', "must be"),
        ('{"input": ["1"], "output": []}', "1 inputs but 0 outputs"),
        ('[{"input": "1"}]', "must be"),
        ('{"input": [1], "output": ["2"]}', "must be a string"),
        ("[]", "no tests"),
        ("42", "must be"),
    ],
)
def test_malformed_tests_file_names_the_file(tmp_path: Path, content: str, fragment: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(InputError, match=fragment) as info:
        load_tests(path)
    assert str(path) in str(info.value)


def test_bad_usage_exits_2(files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    src, tests = files
    with pytest.raises(SystemExit) as info:
        main([str(src), "--time-limit", "1", "--memory-limit", "256M"])  # no --tests
    assert info.value.code == 2
    assert (
        main(
            [
                str(src),
                "--tests",
                str(tests.with_name("missing.json")),
                "--time-limit",
                "1",
                "--memory-limit",
                "256M",
            ]
        )
        == 2
    )
    assert "missing.json" in capsys.readouterr().err
    assert (
        main([str(src), "--tests", str(tests), "--time-limit", "1", "--memory-limit", "lots"]) == 2
    )
    assert (
        main([str(src), "--tests", str(tests), "--time-limit", "0", "--memory-limit", "256M"]) == 2
    )
    assert (
        main(
            [
                str(src),
                "--tests",
                str(tests),
                "--time-limit",
                "1",
                "--memory-limit",
                "256M",
                "--checker",
                "nope",
            ]
        )
        == 2
    )
    assert (
        main(
            [
                str(src.with_name("nope.cpp")),
                "--tests",
                str(tests),
                "--time-limit",
                "1",
                "--memory-limit",
                "1G",
            ]
        )
        == 2
    )


def test_parse_memory() -> None:
    assert parse_memory("268435456") == 256 << 20
    assert parse_memory("256M") == parse_memory("256MiB") == parse_memory("256mb") == 256 << 20
    assert parse_memory("1G") == 1 << 30 and parse_memory("512k") == 512 << 10
    with pytest.raises(ValueError, match="256M"):
        parse_memory("much")


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_judging_prints_json_and_exits_0(
    files: tuple[Path, Path], cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src, tests = files
    args = [str(src), "--tests", str(tests), "--time-limit", "1", "--memory-limit", "256M"]
    assert main([*args, "--cache-dir", str(cache_dir)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["verdict"] == "AC" and report["passed"] == 2 and report["total"] == 2
    tests.write_text(
        json.dumps([{"input": "1 2\n", "output": "4\n"}, {"input": "1 1", "output": "2"}])
    )
    assert main([*args, "--cache-dir", str(cache_dir), "--stop-on-first-failure"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["verdict"] == "WA" and len(report["tests"]) == 1 and report["total"] == 2


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_a_py_source_is_judged_as_python_unless_told(
    files: tuple[Path, Path], cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, tests = files
    src = tests.parent / "sol.py"
    src.write_text("a, b = map(int, input().split())\nprint(a + b)\n")
    args = [str(src), "--tests", str(tests), "--time-limit", "1", "--memory-limit", "256M"]
    args += ["--cache-dir", str(cache_dir)]
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "AC"
    assert main([*args, "--language", "python", "--time-factor", "2.5"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "AC"
    assert main([*args, "--language", "cpp"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "CE"
    assert main([*args, "--time-factor", "0"]) == 2
    assert "time factor for python must be a number > 0" in capsys.readouterr().err


RULES = {"name": "codecontests", "params": {"tolerance": 1e-4, "any_case_words": ["YES", "NO"]}}


def test_checker_config_inline_or_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(RULES))
    expected = CheckerConfig.from_dict(RULES)
    assert load_checker_config(json.dumps(RULES)) == expected
    assert load_checker_config(f"  {json.dumps(RULES)}") == expected
    assert load_checker_config(str(path)) == expected


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('{"name": "codecontests"', "not valid JSON"),
        ('{"name": "codecontests", "params": {"tolerence": 1e-4}}', "tolerance_mode"),
        ('{"name": "codecontest"}', "unknown checker"),
        ('{"name": "codecontests", "params": {"tolerance_mode": "abs"}}', "absolute_or_relative"),
        ("missing-rules.json", "cannot read checker config file missing-rules.json"),
    ],
)
def test_bad_checker_config_is_a_usage_error(
    files: tuple[Path, Path], text: str, fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    src, tests = files
    args = [str(src), "--tests", str(tests), "--time-limit", "1", "--memory-limit", "256M"]
    assert main([*args, "--checker-config", text]) == 2
    assert fragment in capsys.readouterr().err


def test_a_bad_checker_config_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "rules.json"
    path.write_text('{"name": "codecontests", "params": {"precision": 1e-4}}')
    with pytest.raises(InputError, match="precision") as info:
        load_checker_config(str(path))
    assert str(path) in str(info.value)
    path.write_text("[1, 2]")
    with pytest.raises(InputError, match='"name": CHECKER'):
        load_checker_config(str(path))


def test_checker_and_checker_config_are_exclusive(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    src, tests = files
    args = [str(src), "--tests", str(tests), "--time-limit", "1", "--memory-limit", "256M"]
    with pytest.raises(SystemExit) as info:
        main([*args, "--checker", "tokens", "--checker-config", json.dumps(RULES)])
    assert info.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_judging_under_a_checker_config(
    tmp_path: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "yes.cpp"
    src.write_text('#include <cstdio>\nint main(){ std::printf("yes 0.50004\\n"); }\n')
    tests = tmp_path / "tests.json"
    tests.write_text(json.dumps({"input": [""], "output": ["YES 0.5\n"]}))
    args = [str(src), "--tests", str(tests), "--time-limit", "1", "--memory-limit", "256M"]
    args += ["--cache-dir", str(cache_dir)]
    assert main([*args, "--checker", "codecontests"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "WA"
    assert main([*args, "--checker-config", json.dumps(RULES)]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "AC"
