"""End to end: how a cluster's hosts exit: missing and unauthenticated workers fail the
head in time; workers exit 0 when the head goes.

Simulated SageMaker hosts as network namespaces (netns_cluster.py), each running the real
launcher. Needs root and `ip netns` (Debian: iproute2); skipped cleanly otherwise.
"""

from __future__ import annotations

import os
import signal
import sys
import time

import pytest

from .netns_cluster import ENTRYPOINT, Job

pytestmark = [pytest.mark.netns, pytest.mark.ray, pytest.mark.slow]


def test_missing_and_unauthenticated_workers_fail_the_head_in_time(job: Job) -> None:
    """algo-4 never comes; algo-3 comes with another job's secret (Ray 2.60 token auth)."""
    job.members = ["algo-1", "algo-2", "algo-3", "algo-4"]
    entry = [sys.executable, "-c", "raise SystemExit('must not run')"]
    job.start("algo-1", "--wait-timeout", "20", entrypoint=entry)
    job.start("algo-2")
    job.secret = "another-job's-secret"
    job.start("algo-3")
    code = job.wait("algo-1", 120)
    assert code == 1, job.log("algo-1")
    reason = job.failure("algo-1")
    assert reason is not None, job.log("algo-1")
    missing = reason.split("Missing hosts:")[1].split("(")[0]
    assert "algo-3" in missing and "algo-4" in missing and "algo-2" not in missing
    assert "must not run" not in job.log("algo-1")
    assert "InvalidAuthToken" in job.log("algo-3")
    # The worker that did join exits 0 once the head is gone; so does the rejected one.
    assert job.wait("algo-2", 90) == 0, job.log("algo-2")
    assert job.wait("algo-3", 90) == 0, job.log("algo-3")


def test_workers_exit_zero_when_the_head_goes(job: Job) -> None:
    result = job.workdir / "result.json"
    entry = [sys.executable, "-c", ENTRYPOINT, str(result), "homogeneousCluster", "600", "PATH"]
    for host in ("algo-2", "algo-3"):
        job.start(host)
    job.start("algo-1", "--wait-timeout", "150", entrypoint=entry)
    deadline = time.monotonic() + 150
    while not result.exists():
        assert time.monotonic() < deadline, job.log("algo-1")
        assert job.procs["algo-1"].poll() is None, job.log("algo-1")
        time.sleep(1)
    os.kill(job.procs["algo-1"].pid, signal.SIGTERM)  # SageMaker stops the head (`ip` execs)
    assert job.wait("algo-1", 90) == 128 + signal.SIGTERM, job.log("algo-1")
    assert "Stopping Ray" in job.log("algo-1")
    assert job.wait("algo-2", 90) == 0, job.log("algo-2")
    assert job.wait("algo-3", 90) == 0, job.log("algo-3")
