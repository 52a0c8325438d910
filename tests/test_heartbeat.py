"""The test suites' heartbeat (the root conftest.py): while a test runs, a progress line naming
it comes out every `--heartbeat` seconds, from one process and from pytest-xdist's controller,
so a line-buffered log (CI, `| tee`) never looks hung.

Each run is a real pytest process on a tiny test file, the plugin loaded from the root
conftest.py as every suite loads it. The slow test waits until this side has read a
heartbeat line naming it, so nothing here depends on how fast the machine is.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from repo import ROOT

TESTS = """
import time
from pathlib import Path

def test_quick():
    pass

def test_waits_for_a_heartbeat():
    release = Path({release!r})
    deadline = time.monotonic() + 300
    while not release.exists():
        assert time.monotonic() < deadline, "no heartbeat line named this test"
        time.sleep(0.05)
"""


@pytest.mark.parametrize("workers", [[], ["-p", "xdist", "-n", "1"]], ids=["one-process", "xdist"])
def test_a_running_test_is_named_by_a_heartbeat_line(tmp_path: Path, workers: list[str]) -> None:
    release = tmp_path / "release"
    (tmp_path / "test_tiny.py").write_text(TESTS.format(release=str(release)))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "pytest", "-p", "conftest", "--heartbeat=0.2",
            "-p", "no:cacheprovider", *workers, "test_tiny.py"]  # fmt: skip
    proc = subprocess.Popen(
        argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert proc.stdout is not None
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if line.startswith("[heartbeat ") and "test_tiny.py::test_waits_for_a_heartbeat (" in line:
            release.touch()
    assert proc.wait(timeout=300) == 0, "".join(lines)
    beats = [line for line in lines if line.startswith("[heartbeat ")]
    assert release.exists(), "".join(lines)
    # While the slow test ran, the quick one was done and counted, of the two collected.
    named = [b for b in beats if "test_waits_for_a_heartbeat" in b]
    assert all(" of 2 tests done; running: " in b for b in named), named
    assert any(b.split("] ", 1)[1].startswith("1 of 2 tests done") for b in named), named
