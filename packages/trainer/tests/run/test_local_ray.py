"""The Ray cluster a run starts on this machine: its workers' priority, its restart when its
node does not register in time."""

from __future__ import annotations

import os
import subprocess
import sys
import types

import pytest

from codefu_trainer.run.local_ray import (
    LOCAL_STARTS,
    NICENESS_ENV,
    start_ray,
    workers_at_normal_priority,
)

# Starts Ray as `start_ray` does for a CPU run, then reports a worker's niceness.
PROBE = """
import os, ray
from codefu_trainer.run.local_ray import start_ray
assert start_ray()
@ray.remote(num_cpus=0)
def niceness():
    return os.nice(0)
print("NICENESS", ray.get(niceness.remote()))
ray.shutdown()
"""


def test_the_variable_is_set_to_0_unless_the_user_set_it() -> None:
    env: dict[str, str] = {}
    assert workers_at_normal_priority(env) is True
    assert env == {NICENESS_ENV: "0"}
    mine = {NICENESS_ENV: "10"}
    assert workers_at_normal_priority(mine) is False
    assert mine == {NICENESS_ENV: "10"}


@pytest.mark.slow
@pytest.mark.ray
def test_a_cluster_started_for_a_run_has_its_workers_at_niceness_0() -> None:
    """Ray's own default is 15, which the suite's conftest also overrides: the probe runs
    without the variable, as a user's `codefu-train` does."""
    env = {k: v for k, v in os.environ.items() if k not in (NICENESS_ENV, "RAY_ADDRESS")}
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    assert "NICENESS 0" in done.stdout, done.stdout[-2000:]


class _Ray(types.ModuleType):
    """Stands in for the `ray` module in start_ray's decisions: its ray.init fails with the
    given errors, one a call, then succeeds; calls are recorded."""

    def __init__(self, errors: list[Exception]) -> None:
        super().__init__("ray")
        self.errors, self.calls = errors, []  # type: list[Exception], list[str]

    def is_initialized(self) -> bool:
        return False

    def init(self, address: str, **_: object) -> None:
        self.calls.append(f"init {address}")
        if self.errors:
            raise self.errors.pop(0)

    def shutdown(self) -> None:
        self.calls.append("shutdown")


TIMEOUT = Exception(
    "The current node timed out during startup. This could happen because some of the raylet "
    "failed to startup or the GCS has become overloaded."
)  # Ray 2.x's words (ray/_private/node.py)


def test_a_local_node_that_does_not_register_in_time_is_started_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setenv(NICENESS_ENV, "0")
    said: list[str] = []
    fake = _Ray([TIMEOUT, TIMEOUT])
    monkeypatch.setitem(sys.modules, "ray", fake)
    assert start_ray(said.append) is True
    assert fake.calls == ["init local", "shutdown", "init local", "shutdown", "init local"]
    assert [line.split("(")[-1] for line in said] == ["start 2 of 3)", "start 3 of 3)"]
    # The last start's timeout, another error, or a cluster named by RAY_ADDRESS: raised as is.
    fake = _Ray([TIMEOUT] * LOCAL_STARTS)
    monkeypatch.setitem(sys.modules, "ray", fake)
    with pytest.raises(Exception, match="timed out during startup"):
        start_ray(said.append)
    assert fake.calls.count("init local") == LOCAL_STARTS
    fake = _Ray([ValueError("bad address")])
    monkeypatch.setitem(sys.modules, "ray", fake)
    with pytest.raises(ValueError):
        start_ray(said.append)
    assert fake.calls == ["init local"]
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.1:6379")
    fake = _Ray([TIMEOUT])
    monkeypatch.setitem(sys.modules, "ray", fake)
    with pytest.raises(Exception, match="timed out during startup"):
        start_ray(said.append)
    assert fake.calls == ["init 10.0.0.1:6379"]
