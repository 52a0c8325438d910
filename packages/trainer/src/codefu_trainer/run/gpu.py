"""GPU detection without importing torch (fast, and safe on CPU-only machines)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path


def nvidia_smi(*args: str) -> str | None:
    """nvidia-smi's output for `args`; None where it is missing or fails."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return None
    try:
        out = subprocess.run([smi, *args], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout if out.returncode == 0 else None


def visible_gpu_count() -> int:
    """NVIDIA GPUs this process may use: nvidia-smi's list, filtered by CUDA_VISIBLE_DEVICES."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and visible.strip() in ("", "-1"):
        return 0
    listed = nvidia_smi("-L") or ""
    count = sum(1 for line in listed.splitlines() if line.startswith("GPU "))
    if count == 0:
        gpus = Path("/proc/driver/nvidia/gpus")
        count = len(list(gpus.iterdir())) if gpus.is_dir() else 0
    if visible is not None and count:
        count = min(count, len([d for d in visible.split(",") if d.strip()]))
    return count


NO_GPU_MESSAGE = (
    "cluster=local trains with veRL on this machine's NVIDIA GPUs, and this machine has none "
    "(nvidia-smi lists no GPU, or CUDA_VISIBLE_DEVICES hides them). Nothing was started.\n"
    "  Rehearse the whole loop on CPU instead:  nox -s prepare && nox -s train -- cluster=cpu\n"
    "  Or train on SageMaker GPUs:              nox -s train -- cluster=sagemaker_p4de"
)


def local_gpu_memory() -> tuple[str, float] | None:
    """(name, GiB) of this machine's first visible GPU from nvidia-smi, or None."""
    listed = nvidia_smi("--query-gpu=name,memory.total", "--format=csv,noheader,nounits") or ""
    for line in listed.splitlines():
        name, _, mib = line.rpartition(",")
        try:
            return name.strip(), float(mib) / 1024
        except ValueError:
            continue
    return None
