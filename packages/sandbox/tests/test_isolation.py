"""CODEFU_SANDBOX_REQUIRE: the layers a deployment requires, and the one line that names what
a host (a container) does not give and how to give it. The judge image sets it; its own
tests run the refusals in real containers (tests/images, docs/images.md)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from codefu_sandbox import Judge, SandboxError, isolation
from codefu_sandbox.isolation import Isolation, check_required, has_capability, required_layers

EVERY_LAYER = Isolation(
    drop_uid=True, landlock_abi=7, seccomp=True, netns=True, cgroup="v1", ipcns=True
)


def test_required_layers_are_read_and_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(isolation.REQUIRE_ENV, raising=False)
    assert required_layers() == ()
    assert required_layers(" uid, cgroup ,") == ("uid", "cgroup")
    with pytest.raises(SandboxError, match="names ipc, which is not a layer: choose from cgroup"):
        required_layers("uid,ipc")


def test_a_host_with_every_required_layer_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(isolation.REQUIRE_ENV, ",".join(isolation.LAYERS))
    check_required(EVERY_LAYER, want_netns=True)


def test_each_missing_layer_is_named_with_its_cause_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(isolation.REQUIRE_ENV, "cgroup,seccomp,ipcns")
    monkeypatch.setattr(isolation, "has_capability", lambda bit: False)
    missing = Isolation(drop_uid=True, landlock_abi=7, seccomp=True, netns=False, ipcns=False)
    with pytest.raises(SandboxError) as raised:
        check_required(missing)
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith("CODEFU_SANDBOX_REQUIRE requires the cgroup, ipcns layers")
    if os.geteuid() == 0:
        assert "cgroup: no memory cgroup to make groups in" in message
        assert "ipcns: a private IPC namespace per run needs CAP_SYS_ADMIN" in message
    else:
        assert "cgroup needs root" in message and "ipcns needs root" in message
    assert "seccomp" not in message.split("layers", maxsplit=1)[0]


def test_landlock_turned_off_is_named_as_such(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(isolation.REQUIRE_ENV, "landlock")
    monkeypatch.setenv("CODEFU_SANDBOX_LANDLOCK", "0")
    with pytest.raises(SandboxError, match="landlock: turned off by CODEFU_SANDBOX_LANDLOCK=0"):
        check_required(isolation.probe_isolation())


def test_capabilities_are_read_from_the_process_status(tmp_path: Path) -> None:
    status = tmp_path / "status"
    status.write_text("Name:\tpython\nCapEff:\t0000000000200000\n")
    assert has_capability(isolation.CAP_SYS_ADMIN, status)
    status.write_text("CapEff:\t00000000a80425fb\n")  # a default container's
    assert not has_capability(isolation.CAP_SYS_ADMIN, status)


def test_a_judge_refuses_to_start_without_a_required_layer(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A real Judge: a network namespace per run is never made unless asked for."""
    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed")
    monkeypatch.setenv(isolation.REQUIRE_ENV, "netns")
    with pytest.raises(SandboxError, match="netns: the judge was not asked for a network"):
        Judge(tmp_path)
