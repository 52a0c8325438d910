"""Each phase's time and peak memory in veRL's trainer process, for `codefu-train --smoke`.

`probe_from_env()` (called by training/verl/trainer.py's trainer subclass) returns a
`PhaseProbe` when the smoke set PHASE_LOG_ENV in the run's Ray environment, else None. The
probe samples the memory of the GPU the smoke trains on (`gpu_memory_sampler`: NVML's v2
`used`, which leaves out the driver's reserve, else v1's, else nvidia-smi's; less what was in
use on that GPU before the smoke started, GPU_BASELINE_ENV), or on a CPU the proportional set
size of every process under ROOT_PID_ENV (the smoke's own process), while a phase runs and at
its ends, and appends one JSON line per phase and step to the log (with the wall-clock time
the phase began, from which the smoke reads each stage's start-up).

Standard library only (tools/smoke_host.py, run by a bare host's Python, reads processes with
`process_tree` and `pss_bytes`).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PHASE_LOG_ENV = "CODEFU_PHASE_LOG"
ROOT_PID_ENV = "CODEFU_SMOKE_ROOT_PID"  # CPU: the process tree whose memory is measured
GPU_INDEX_ENV = "CODEFU_SMOKE_GPU"  # GPU: the NVML index of the GPU the smoke trains on
# GPU: bytes the measure read on that GPU before the smoke started anything (subtracted).
GPU_BASELINE_ENV = "CODEFU_SMOKE_GPU_BASELINE"
# Sampling periods of the memory probes (seconds).
GPU_PERIOD = 0.02
SMI_PERIOD = 0.2
# On a CPU one sample reads the PSS of every process of the run (about 95 ms of CPU for the
# smoke's 20 processes, measured here): every 0.25 s it took a third of a core from the run
# it measures, on a machine of 2 cores. Host memory changes slowly; its peak is not compared.
CPU_PERIOD = 2.0
TREE_PERIOD = 2.0  # the CPU probe lists the process tree again after this long


def nvml_sampler(index: int) -> tuple[Callable[[], int], str] | None:
    """Bytes in use on GPU `index` by every process (allocations and CUDA contexts) and what
    that is: NVML's v2 `used`, which leaves out the driver's reserve, where the driver and the
    binding have it, else v1's `used`, which counts the reserve; None without NVML."""
    try:
        import pynvml  # type: ignore[import-not-found, import-untyped, unused-ignore]

        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    except Exception:  # no NVML binding or driver here: nvidia-smi, else the CPU measure
        return None
    v2 = getattr(pynvml, "nvmlMemory_v2", None)
    if v2 is not None:
        try:
            pynvml.nvmlDeviceGetMemoryInfo(handle, version=v2)
            return (
                lambda: int(pynvml.nvmlDeviceGetMemoryInfo(handle, version=v2).used),
                "NVML v2 used",
            )
        except Exception:  # a driver without the v2 call
            pass
    return lambda: int(pynvml.nvmlDeviceGetMemoryInfo(handle).used), "NVML v1 used"


def smi_sampler(index: int) -> Callable[[], int] | None:
    """nvidia-smi's memory in use on GPU `index` (where NVML's Python binding is missing),
    or None without nvidia-smi."""
    from codefu_trainer.run.gpu import nvidia_smi

    query = ("--query-gpu=memory.used", "--format=csv,noheader,nounits", "-i", str(index))

    def sample() -> int:
        out = (nvidia_smi(*query) or "0").strip().splitlines() or ["0"]
        return int(float(out[0]) * 2**20)

    return sample if nvidia_smi(*query) is not None else None


def gpu_memory_sampler(index: int) -> tuple[Callable[[], int], str, float] | None:
    """(sample, what it reads, its period in s) for GPU `index`: NVML (`nvml_sampler`), else
    nvidia-smi; None where neither is there."""
    nvml = nvml_sampler(index)
    if nvml is not None:
        return nvml[0], nvml[1], GPU_PERIOD
    smi = smi_sampler(index)
    if smi is not None:
        return smi, "nvidia-smi used", SMI_PERIOD
    return None


def process_tree(root: int) -> list[int]:
    """`root` and every process under it, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            stat = (entry / "stat").read_text()
            ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found


def pss_bytes(pid: int) -> int | None:
    """A process's proportional set size (shared pages counted once in all), from /proc; None
    when it is gone or unreadable."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        return None
    return None


def tree_pss_sampler(root: int) -> Callable[[], int]:
    """Bytes of the process tree under `root` (its proportional set size: shared pages
    counted once in all), read from /proc."""

    tree: list[int] = []
    listed = [0.0]  # when the tree was last listed

    def sample() -> int:
        if time.monotonic() - listed[0] > TREE_PERIOD:  # processes come and go seldom
            tree[:] = process_tree(root)
            listed[0] = time.monotonic()
        return sum(pss_bytes(pid) or 0 for pid in tree)

    return sample


@dataclass
class _Open:
    start: float
    began: float  # wall-clock (time.time()): when the phase began
    peak: int


class PhaseProbe:
    """Each phase's wall time and peak memory (sampled every `period` s and at its ends),
    one JSON line per phase to `log`."""

    def __init__(self, log: Path, sample: Callable[[], int], measure: str, period: float):
        self.log = log
        self.sample = sample
        self.measure = measure
        self.period = period
        self._open: dict[str, _Open] = {}
        self._done: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._run, name="codefu-phase-probe", daemon=True).start()

    def _run(self) -> None:
        while True:
            time.sleep(self.period)
            if not self._open:
                continue
            value = self.sample()
            with self._lock:
                for phase in self._open.values():
                    phase.peak = max(phase.peak, value)

    def begin(self, name: str) -> None:
        value = self.sample()
        with self._lock:
            self._open[name] = _Open(time.monotonic(), time.time(), value)

    def end(self, name: str) -> None:
        value = self.sample()
        with self._lock:
            phase = self._open.pop(name, None)
            if phase is not None:
                self._done.append(
                    {
                        "phase": name,
                        "began": phase.began,
                        "seconds": time.monotonic() - phase.start,
                        "peak_bytes": max(phase.peak, value),
                    }
                )

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        self.begin(name)
        try:
            yield
        finally:
            self.end(name)

    def write_step(self, step: int, metrics: dict[str, Any]) -> None:
        """The step's phases and its judging tail (`judge/tail_seconds`) to the log."""
        with self._lock:
            done, self._done = self._done, []
        lines = [{"step": step, "measure": self.measure, **d} for d in done]
        lines.append(
            {
                "step": step,
                "phase": "judging after the last response",
                "seconds": float(metrics.get("judge/tail_seconds", 0.0)),
                "jobs": float(metrics.get("judge/jobs", 0.0)),
            }
        )
        with self.log.open("a") as out:
            out.writelines(json.dumps(line) + "\n" for line in lines)


def probe_from_env() -> PhaseProbe | None:
    """The probe the smoke asked for (PHASE_LOG_ENV), measuring the GPU it trains on
    (`gpu_memory_sampler`, less GPU_BASELINE_ENV) where it trains on one, else the process tree
    under ROOT_PID_ENV; None when not asked."""
    log = os.environ.get(PHASE_LOG_ENV)
    if not log:
        return None
    gpu = os.environ.get(GPU_INDEX_ENV)
    if gpu:
        found = gpu_memory_sampler(int(gpu))
        if found is not None:
            read, what, period = found
            baseline = int(os.environ.get(GPU_BASELINE_ENV) or 0)
            measure = (
                f"GPU {gpu} memory used ({what}) less the {baseline / 2**30:.2f} GiB in use "
                "before the smoke"
            )
            return PhaseProbe(Path(log), lambda: max(0, read() - baseline), measure, period)
    root = int(os.environ.get(ROOT_PID_ENV) or os.getpid())
    measure = "PSS of the run's processes (CPU)"
    return PhaseProbe(Path(log), tree_pss_sampler(root), measure, CPU_PERIOD)
