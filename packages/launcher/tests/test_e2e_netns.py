"""End to end: a heterogeneous cluster forms, with a late worker, and runs on every node.

Simulated SageMaker hosts as network namespaces (netns_cluster.py), each running the real
launcher. Needs root and `ip netns` (Debian: iproute2); skipped cleanly otherwise.
"""

from __future__ import annotations

import json
import sys
import time

import pytest

from .netns_cluster import ENTRYPOINT, USER_ENV, Job

pytestmark = [pytest.mark.netns, pytest.mark.ray, pytest.mark.slow]


def test_heterogeneous_cluster_forms_with_a_late_worker_and_runs_on_every_node(
    job: Job,
) -> None:
    """Head group `coord` (coordinator-only head), worker group `cpu`; algo-3 boots late."""
    job.groups = {"coord": ["algo-1"], "cpu": ["algo-2", "algo-3"]}
    result = job.workdir / "result.json"
    entry = [sys.executable, "-c", ENTRYPOINT, str(result), "cpu", "0", ",".join(USER_ENV)]
    job.start(
        "algo-1",
        "--wait-timeout=150",
        "--head-instance-group=coord",
        "--coordinator-only-head",
        "--metrics-export-port=28123",
        entrypoint=entry,
    )
    for host in ("algo-2", "algo-3"):
        if host == "algo-3":
            time.sleep(20)  # algo-3 boots 20 s late
            assert job.procs["algo-1"].poll() is None, job.log("algo-1")
        job.start(host, "--head-instance-group=coord")
    codes = {h: job.wait(h, 240) for h in ("algo-1", "algo-2", "algo-3")}
    assert codes == {"algo-1": 0, "algo-2": 0, "algo-3": 0}, job.log("algo-1")
    out = json.loads(result.read_text())
    addr = job.hosts.addresses
    assert out["nodes"] == 3
    assert sorted(out["task_ips"]) == sorted(addr.values())
    assert out["judge_ip"] in (addr["algo-2"], addr["algo-3"])
    assert out["group_ip"] in (addr["algo-2"], addr["algo-3"])
    assert out["cpus"][addr["algo-1"]] == 0  # the coordinator offers no CPUs
    # A minimal environment: the cluster address and token, not everything.
    assert {"RAY_ADDRESS", "RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "PATH"} <= set(out["env"])
    assert "UNRELATED_CANARY" not in out["env"]
    assert "CODEFU_RAY_AUTH_SECRET" not in out["env"]
    # What the user set at submission reached the entrypoint and Ray's workers everywhere.
    assert out["user_env"] == USER_ENV
    assert out["worker_knobs"] == ["eth0"] * 3
    starts = [line for line in job.log("algo-1").splitlines() if "Starting Ray:" in line]
    assert starts and "--metrics-export-port=28123" in starts[0]
    assert all(job.failure(h) is None for h in job.procs)
