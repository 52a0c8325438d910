"""The Ray cluster a run starts on this machine: its workers' priority."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from codefu_trainer.run.local_ray import NICENESS_ENV, workers_at_normal_priority

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
