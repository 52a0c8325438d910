"""A judge worker in a container of the judge image joins a Ray head on this host (another
Python 3.11 patch release, token authentication as codefu-launcher sets it up) and judges a
reward batch. A file of its own, so that pytest-xdist runs it beside test_judge_image.py.
Run by `CODEFU_JUDGE_TESTS=image nox -s judge-tests` (docs/images.md).
"""

from __future__ import annotations

import os
import secrets
import subprocess
import time
from typing import Any

import pytest

from tools import images

pytestmark = [pytest.mark.slow, pytest.mark.ray]


def sum_ground_truth() -> dict[str, Any]:
    """A processed-row ground truth for 'print a + b' (the reward's input)."""
    pairs = [(i * 7, i + 1) for i in range(4)]
    return {
        "name": "sum",
        "cf_rating": 800,
        "time_limit": {"seconds": 1, "nanos": 0},
        "memory_limit_bytes": 256 << 20,
        "public_tests": {"input": ["1 2\n"], "output": ["3\n"]},
        "private_tests": {
            "input": [f"{a} {b}\n" for a, b in pairs],
            "output": [f"{a + b}\n" for a, b in pairs],
        },
    }


def test_a_judge_worker_in_a_container_joins_a_ray_head_here_and_judges_a_batch(
    engine: images.Engine,
    tag: str,
    privileges: list[str],
    sum_cpp: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The cluster's token, as codefu-launcher derives one from CODEFU_RAY_AUTH_SECRET; set
    # before Ray is imported, which reads its authentication mode once.
    auth = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
    for key, value in auth.items():
        monkeypatch.setenv(key, value)
    ray = pytest.importorskip("ray", reason="the reward side (judge-tests installs it here)")
    from codefu_trainer.reward.config import RewardConfig, WorkerConfig
    from codefu_trainer.reward.service import RewardService

    ray.init(num_cpus=1, include_dashboard=False, object_store_memory=100 << 20)
    name = f"codefu-judge-worker-{os.getpid()}"
    try:
        address = ray.get_runtime_context().gcs_address
        started = subprocess.run(
            engine.command(
                "run", "-d", "--name", name, "--network", "host",
                *[a for key, value in auth.items() for a in ("-e", f"{key}={value}")],
                *privileges, tag,
                "ray", "start", f"--address={address}", "--num-cpus=1",
                '--resources={"judge": 1}', "--object-store-memory=100000000", "--block",
            ),
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert started.returncode == 0, started.stderr
        judge_node = _wait_for_judge_node(ray, engine, name)
        service = RewardService(RewardConfig(worker=WorkerConfig(start_timeout_seconds=300)))
        try:
            programs = [sum_cpp, sum_cpp.replace("a+b", "a-b"), "int main() { nope }\n"]
            responses = [f"Here:\n```cpp\n{code}```\n" for code in programs]
            scored = service.score_detailed(responses, [sum_ground_truth()] * len(responses))
        finally:
            service.close()
        assert [s.result.verdict for s in scored] == ["AC", "WA", "CE"]
        assert {s.outcome.node_id for s in scored if s.outcome is not None} == {judge_node}
    finally:
        subprocess.run(engine.command("rm", "-f", name), capture_output=True, check=False)
        ray.shutdown()


def _wait_for_judge_node(ray: Any, engine: images.Engine, name: str) -> str:
    """The id of the node with the judge resource once it is alive (the container's); an
    AssertionError with the container's log when it stops first or never joins."""
    running = engine.command("inspect", "--format", "{{.State.Running}}", name)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        for node in ray.nodes():
            if node["Alive"] and node["Resources"].get("judge"):
                return str(node["NodeID"])
        state = subprocess.run(running, capture_output=True, text=True, check=False)
        if state.stdout.strip() != "true":
            break
        time.sleep(1)
    logs = subprocess.run(engine.command("logs", name), capture_output=True, text=True, check=False)
    raise AssertionError(f"the container's Ray node did not join:\n{logs.stdout}{logs.stderr}")
