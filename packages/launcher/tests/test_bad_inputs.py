"""Every bad input to `codefu-launcher` is refused with exit 2 before any cluster or job is
started: one line on stderr naming the value, no traceback, no file left behind."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from codefu_launcher.cli import main

PLAN = ["plan", "--resource-config", "resource.json"]
CASES = {
    "missing resource config": (["plan", "--resource-config", "nope.json"], "nope.json"),
    "garbage resource config": (["plan", "--resource-config", "garbage.json"], "not valid JSON"),
    "resource config of a wrong shape": (
        ["plan", "--resource-config", "list.json"],
        "must hold a JSON object",
    ),
    "resource config without hosts": (["plan", "--resource-config", "empty.json"], "current_host"),
    "port not a number": ([*PLAN, "--port", "abc"], "--port: 'abc' is not a port"),
    "port out of range": ([*PLAN, "--port", "70000"], "--port: '70000' is not a port"),
    "dashboard port out of range": ([*PLAN, "--dashboard-port", "0"], "--dashboard-port"),
    "negative cpus": ([*PLAN, "--num-cpus", "-1"], "must not be negative"),
    "object store memory zero": ([*PLAN, "--object-store-memory", "0"], "--object-store-memory"),
    "unknown head group": ([*PLAN, "--head-instance-group", "nope"], "'nope' is not in this job"),
    "negative wait timeout": (
        ["run", "--resource-config", "resource.json", "--wait-timeout", "-1", "--", "true"],
        "--wait-timeout: '-1' is not a number > 0",
    ),
    "missing spec": (["submit", "--spec", "nope.json"], "cannot read --spec nope.json"),
    "garbage spec": (["submit", "--spec", "garbage.json"], "--spec garbage.json is not valid"),
    "binary spec": (["submit", "--spec", "binary.json"], "--spec binary.json is not valid"),
    "spec of a wrong shape": (["submit", "--spec", "list.json"], "must hold a JSON object"),
    "unknown spec key": (["submit", "--spec", "bogus.json"], "Unknown job spec keys ['bogus']"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_input_is_one_line_and_exit_2(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refused: Callable[..., None]
) -> None:
    argv, names = CASES[case]
    (tmp_path / "resource.json").write_text('{"current_host": "algo-1", "hosts": ["algo-1"]}')
    (tmp_path / "garbage.json").write_text("garbage")
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe\x00")
    (tmp_path / "list.json").write_text("[1]")
    (tmp_path / "empty.json").write_text("{}")
    (tmp_path / "bogus.json").write_text('{"bogus": 1}')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CODEFU_FAILURE_FILE", str(tmp_path / "failure"))
    refused(main, argv, names, tmp_path)
