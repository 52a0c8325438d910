"""Every bad input to `codefu-judge` is refused with exit 2 before any judging: one line on
stderr naming the value, no traceback, no file left behind (README "Exit codes")."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from codefu_sandbox.cli import main

GOOD = ["a.cpp", "--tests", "tests.json", "--time-limit", "1", "--memory-limit", "256M"]


def _with(flag: str, value: str) -> list[str]:
    argv = list(GOOD)
    argv[argv.index(flag) + 1] = value
    return argv


CASES = {
    "missing source": (["nope.cpp", *GOOD[1:]], "nope.cpp"),
    "source is a directory": ([".", *GOOD[1:]], "cannot read source file ."),
    "missing tests": (_with("--tests", "nope.json"), "nope.json"),
    "garbage tests": (_with("--tests", "garbage.json"), "garbage.json is not valid JSON"),
    "binary tests": (_with("--tests", "binary.json"), "binary.json is not valid JSON"),
    "tests of the wrong shape": (_with("--tests", "object.json"), "object.json must be"),
    "no tests": (_with("--tests", "empty.json"), "holds no tests"),
    "time limit not a number": (_with("--time-limit", "abc"), "--time-limit: invalid float"),
    "time limit zero": (_with("--time-limit", "0"), "time limit must be > 0"),
    "time limit out of range": (_with("--time-limit", "1e9"), "--time-limit 1e+09 is over"),
    "memory limit garbage": (_with("--memory-limit", "lots"), "memory limit 'lots'"),
    "memory limit negative": (_with("--memory-limit", "-5"), "memory limit '-5'"),
    "unknown checker": ([*GOOD, "--checker", "bogus"], "unknown checker 'bogus'"),
    "garbage checker config": ([*GOOD, "--checker-config", "{nope"], "is not valid JSON"),
    "missing checker config": ([*GOOD, "--checker-config", "no.json"], "no.json"),
    "checker config of a wrong type": (
        [*GOOD, "--checker-config", '{"name": 3}'],
        "checker name must be a string",
    ),
    "cache dir is a file": ([*GOOD, "--cache-dir", "a.cpp"], "--cache-dir a.cpp"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_input_is_one_line_and_exit_2(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refused: Callable[..., None]
) -> None:
    argv, names = CASES[case]
    (tmp_path / "a.cpp").write_text("int main() { return 0; }\n")
    (tmp_path / "tests.json").write_text('[{"input": "", "output": ""}]')
    (tmp_path / "garbage.json").write_text("garbage")
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe\x00")
    (tmp_path / "object.json").write_text('{"tests": 1}')
    (tmp_path / "empty.json").write_text("[]")
    monkeypatch.chdir(tmp_path)
    refused(main, argv, names, tmp_path)
