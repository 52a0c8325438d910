"""The worker's join/watch loop against a stand-in `ray` executable and a TCP listener.

The stand-in is a small script (not Ray) that fails a configured number of times and then
blocks like `ray start --block`; the "head" is a plain TCP listener we open and close.
This checks the retry and head-gone decisions quickly; the real Ray paths are covered by
test_e2e_netns.py.
"""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

from codefu_launcher import run as run_mod
from codefu_launcher.plan import PlanOptions, make_plan, parse_resource_config
from codefu_launcher.run import Launcher, RunSettings

FAKE_RAY = """#!/bin/sh
echo "$@" >> {calls}
n=$(wc -l < {calls})
if [ "$n" -le {failures} ]; then exit 1; fi
exec sleep 600
"""


class Head:
    """A TCP listener standing in for the head's GCS port."""

    def __init__(self) -> None:
        self.sock: socket.socket | None = None
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        self.port = probe.getsockname()[1]
        probe.close()

    def up(self) -> None:
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", self.port))
        s.listen(16)
        self.sock = s

    def down(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None


def worker(tmp_path: Path, port: int, failures: int, **settings: float) -> tuple[Launcher, Path]:
    calls = tmp_path / "calls"
    calls.touch()
    fake = tmp_path / "ray"
    fake.write_text(FAKE_RAY.format(calls=calls, failures=failures))
    fake.chmod(0o755)
    hosts = ["algo-1", "algo-2"]
    rc = parse_resource_config(
        {
            "current_host": "algo-2",
            "hosts": hosts,
            "instance_groups": [
                {
                    "instance_group_name": "homogeneousCluster",
                    "instance_type": "ml.c5.xlarge",
                    "hosts": hosts,
                }
            ],
        }
    )
    plan = make_plan(rc, {}, PlanOptions(port=port), cpu_count=1)
    config = RunSettings(
        poll_interval=0.1,
        head_gone_grace=settings.get("grace", 1.0),
        wait_timeout=settings.get("wait", 5.0),
        join_timeout=settings.get("wait", 5.0),
        max_join_attempts=int(settings.get("attempts", 5)),
        stop_grace=2.0,
        failure_file=str(tmp_path / "failure"),
        ray_executable=str(fake),
        sleep=lambda s: time.sleep(min(s, 0.2)),
    )
    env = {"CODEFU_RAY_AUTH_SECRET": "s", "PATH": "/usr/bin:/bin"}
    return Launcher(plan, [], env, config), calls


@pytest.fixture(autouse=True)
def local_hosts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_mod, "resolve_host", lambda host, timeout, sleep: "127.0.0.1")


def later(seconds: float, action: object) -> threading.Timer:
    timer = threading.Timer(seconds, action)  # type: ignore[arg-type]
    timer.start()
    return timer


def test_failed_joins_are_retried_and_the_worker_exits_0_when_the_head_goes(
    tmp_path: Path,
) -> None:
    head = Head()
    head.up()
    launcher, calls = worker(tmp_path, head.port, failures=2)
    later(4.0, head.down)
    try:
        assert launcher.run() == 0
    finally:
        head.down()
    lines = calls.read_text().splitlines()
    assert len(lines) == 3  # two failed `ray start` attempts, the third joined
    assert all(f"--address=127.0.0.1:{head.port}" in line for line in lines)
    assert not (tmp_path / "failure").exists()


def test_a_short_head_outage_is_tolerated(tmp_path: Path) -> None:
    head = Head()
    head.up()
    launcher, calls = worker(tmp_path, head.port, failures=0, grace=1.5)
    later(1.0, head.down)
    later(1.5, head.up)  # back after 0.5 s, within the grace
    gone_for_good = threading.Event()

    def final_down() -> None:
        gone_for_good.set()
        head.down()

    later(4.0, final_down)
    try:
        assert launcher.run() == 0
    finally:
        head.down()
    assert gone_for_good.is_set()  # it outlived the first outage
    assert len(calls.read_text().splitlines()) == 1


def test_a_head_that_never_listens_fails_the_worker_with_a_reason(tmp_path: Path) -> None:
    head = Head()  # never up
    launcher, _ = worker(tmp_path, head.port, failures=0, wait=1.0)
    assert launcher.run() == 1
    assert "was not reachable" in (tmp_path / "failure").read_text()


def test_joining_gives_up_after_max_attempts(tmp_path: Path) -> None:
    head = Head()
    head.up()
    launcher, calls = worker(tmp_path, head.port, failures=100, attempts=3)
    try:
        assert launcher.run() == 1
    finally:
        head.down()
    assert len(calls.read_text().splitlines()) == 3
    assert "failed 3 times" in (tmp_path / "failure").read_text()
