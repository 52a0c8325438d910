"""The run shell's decisions: entrypoint environment, failure file, exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest

from codefu_launcher.auth import AUTH_SECRET_ENV
from codefu_launcher.run import (
    LaunchError,
    exit_code_of,
    minimal_environment,
    resolve_host,
    write_failure,
)


def test_minimal_environment_is_an_allow_list() -> None:
    env = {
        "PATH": "/usr/bin",
        "HOME": "/root",
        "SM_CHANNEL_TRAIN": "/opt/ml/input/data/train",
        "NCCL_DEBUG": "WARN",
        "FI_PROVIDER": "efa",
        "CODEFU_RUN": "1",
        AUTH_SECRET_ENV: "secret",
        "RAY_AUTH_TOKEN": "stale",
        "UNRELATED": "x",
        "MY_TOOL_SETTING": "y",
        "CODEFU_PASS_ENV": "MY_TOOL_SETTING, ",
    }
    out = minimal_environment(env, extra=["OTHER"])
    assert out == {
        "PATH": "/usr/bin",
        "HOME": "/root",
        "SM_CHANNEL_TRAIN": "/opt/ml/input/data/train",
        "NCCL_DEBUG": "WARN",
        "FI_PROVIDER": "efa",
        "CODEFU_RUN": "1",
        "CODEFU_PASS_ENV": "MY_TOOL_SETTING, ",
        "MY_TOOL_SETTING": "y",
    }


def test_exit_codes() -> None:
    assert exit_code_of(0) == 0 and exit_code_of(3) == 3 and exit_code_of(-15) == 143


def test_failure_file_first_reason_wins(tmp_path: Path) -> None:
    path = tmp_path / "out" / "failure"
    write_failure(str(path), "first")
    write_failure(str(path), "second")
    assert path.read_text() == "first\n"


def test_resolve_retries_then_names_the_host() -> None:
    slept: list[float] = []
    with pytest.raises(LaunchError, match=r"no-such-host\.invalid"):
        resolve_host("no-such-host.invalid", timeout=3.0, sleep=slept.append)
    assert slept and slept == sorted(slept)  # backoff grows
