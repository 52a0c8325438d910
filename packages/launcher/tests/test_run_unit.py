"""The run shell's decisions: auth token, entrypoint environment, failure file, exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codefu_launcher.run import (
    AUTH_SECRET_ENV,
    LaunchError,
    auth_environment,
    derive_auth_token,
    exit_code_of,
    minimal_environment,
    resolve_host,
    write_failure,
)


@given(st.text(min_size=1, max_size=100))
def test_every_host_derives_the_same_token_and_never_the_secret(secret: str) -> None:
    env = {AUTH_SECRET_ENV: secret}
    a, b = auth_environment(env, 3), auth_environment(dict(env), 3)
    assert a == b
    assert a["RAY_AUTH_MODE"] == "token"
    assert len(a["RAY_AUTH_TOKEN"]) == 64 and a["RAY_AUTH_TOKEN"] != secret


def test_different_secrets_give_different_tokens() -> None:
    assert derive_auth_token("a") != derive_auth_token("b")


def test_multi_node_without_secret_is_refused_with_the_fix() -> None:
    with pytest.raises(LaunchError, match=AUTH_SECRET_ENV):
        auth_environment({}, 2)


def test_single_node_without_secret_gets_a_random_token() -> None:
    a, b = auth_environment({}, 1), auth_environment({}, 1)
    assert a["RAY_AUTH_MODE"] == "token" and a["RAY_AUTH_TOKEN"] != b["RAY_AUTH_TOKEN"]


def test_auth_can_be_disabled_explicitly() -> None:
    assert auth_environment({"CODEFU_RAY_AUTH_MODE": "disabled"}, 5) == {
        "RAY_AUTH_MODE": "disabled"
    }
    with pytest.raises(LaunchError, match="token"):
        auth_environment({"CODEFU_RAY_AUTH_MODE": "maybe"}, 1)


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
