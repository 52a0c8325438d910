"""GPU detection through nvidia-smi (`codefu_trainer.run.gpu`), with a stand-in nvidia-smi that
answers these queries in the real one's format."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from codefu_trainer.run import gpu

# The H200 of docs/measurements/gpu_smoke_h200.md: 143,771 MiB in all (nvidia-smi); a reserve of
# 614 MiB takes that to the 139.8 GiB torch reported there (its own reserved figure was not
# recorded).
FAKE_SMI = """#!/bin/sh
case "$*" in
  *memory.reserved*) [ -n "$NO_RESERVED" ] && exit 2; echo "NVIDIA H200, 143771, 614" ;;
  *memory.total*) echo "NVIDIA H200, 143771" ;;
  *) exit 2 ;;
esac
"""


@pytest.fixture
def fake_smi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    smi = tmp_path / "nvidia-smi"
    smi.write_text(FAKE_SMI)
    smi.chmod(smi.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")


@pytest.mark.usefixtures("fake_smi")
def test_the_gpus_memory_is_its_total_less_the_drivers_reserve(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    name, gib = gpu.local_gpu_memory() or ("", 0.0)
    assert name == "NVIDIA H200" and gib == pytest.approx((143771 - 614) / 1024)
    monkeypatch.setenv("NO_RESERVED", "1")  # a driver that does not report memory.reserved
    assert gpu.local_gpu_memory() == ("NVIDIA H200", pytest.approx(143771 / 1024))
