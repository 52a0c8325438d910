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
    """(name, GiB) of this machine's first visible GPU from nvidia-smi, or None: its total
    less the driver's reserve (`memory.reserved`, where the driver reports it), which is what
    processes may allocate and what torch reports as the GPU's memory."""
    fields = "--format=csv,noheader,nounits"
    numbers = 2
    listed = nvidia_smi("--query-gpu=name,memory.total,memory.reserved", fields)
    if listed is None:  # a driver without memory.reserved
        numbers = 1
        listed = nvidia_smi("--query-gpu=name,memory.total", fields) or ""
    for line in listed.splitlines():
        name, *mib = line.rsplit(",", numbers)
        try:
            total = float(mib[0]) - (float(mib[1]) if numbers == 2 else 0.0)
        except (ValueError, IndexError):
            continue
        return name.strip(), total / 1024
    return None
