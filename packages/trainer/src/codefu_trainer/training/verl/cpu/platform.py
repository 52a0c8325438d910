"""veRL's device platform for a machine without an accelerator (veRL's platform plugin API).

veRL 0.9.1 registers CUDA, NPU and ROCm platforms only and, finding none of them, falls back
to CUDA (verl/plugin/platform/platform_manager.py, `_detect_platform_name`). This platform
runs veRL's workers on the CPU: torch's `torch.cpu` device module, gloo collectives, zero for
the accelerator memory statistics veRL logs, and Ray CPUs where veRL asks for accelerators.
It is selected by `VERL_PLATFORM=cpu` (set by the CPU path: `config.EXTENSION`, `run.run`).
On a GPU machine nothing selects it: veRL detects CUDA as before.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import torch
from verl.plugin.platform.platform_base import PlatformBase
from verl.plugin.platform.platform_manager import PlatformRegistry

PLATFORM_NAME = "cpu"


def _no_memory(*_: Any) -> int:
    return 0


# torch.cpu plus what veRL asks of a device module: its name, memory statistics (none) and
# the RNG state (the CPU generator: veRL's checkpoint manager restores "the device's" RNG
# state under the device name, which is "cpu" here).
CPU_DEVICE = SimpleNamespace(
    **{name: getattr(torch.cpu, name) for name in dir(torch.cpu) if not name.startswith("_")},
    get_device_name=lambda *_: "CPU",
    empty_cache=lambda: None,
    memory_allocated=_no_memory,
    memory_reserved=_no_memory,
    max_memory_allocated=_no_memory,
    max_memory_reserved=_no_memory,
    reset_peak_memory_stats=lambda *_: None,
    mem_get_info=lambda *_: (0, 0),
    get_rng_state=lambda *_: torch.get_rng_state(),
    set_rng_state=lambda state, *_: torch.set_rng_state(state),
    manual_seed=torch.manual_seed,
    manual_seed_all=torch.manual_seed,
)


class PlatformCPU(PlatformBase):
    """veRL's workers on this process's CPU."""

    device_name = "cpu"
    vendor_name = "cpu"
    device_module = CPU_DEVICE

    def is_available(self) -> bool:
        return True

    def current_device(self) -> Any:
        return "cpu"  # veRL moves tensors with .to(current_device())

    def device_count(self) -> int:
        return 1

    def set_device(self, device_index: int) -> None:
        pass

    def synchronize(self, device_index: int | None = None) -> None:
        pass

    def manual_seed(self, seed: int) -> None:
        torch.manual_seed(seed)

    def manual_seed_all(self, seed: int) -> None:
        torch.manual_seed(seed)

    def set_allocator_settings(self, settings: str) -> None:
        pass

    def empty_cache(self) -> None:
        pass

    def get_device_capability(self, device_index: int = 0) -> tuple[int | None, int | None]:
        return None, None

    def communication_backend_name(self) -> str:
        return "gloo"

    def visible_devices_envvar(self) -> str:
        return "CUDA_VISIBLE_DEVICES"

    @contextlib.contextmanager
    def nvtx_range(self, msg: str) -> Iterator[None]:
        yield

    def profiler_start(self) -> None:
        pass

    def profiler_stop(self) -> None:
        pass

    def ray_resource_name(self) -> str:
        return "CPU"

    def ray_resource_options(self, num_gpus: float) -> dict[str, Any]:
        # The base class would return {"resources": {"CPU": n}}, which Ray rejects
        # ("Use the 'num_cpus' ... keyword instead of 'CPU' ... in 'resources'").
        return {"num_cpus": num_gpus}

    def ray_noset_envvars(self) -> list[str]:
        return []

    def is_ipc_supported(self) -> bool:
        return False

    def cudart(self) -> Any:
        return None


def register() -> None:
    """Register the platform under `VERL_PLATFORM=cpu` (idempotent)."""
    if PlatformRegistry.get(PLATFORM_NAME) is not PlatformCPU:
        PlatformRegistry.register(platform=PLATFORM_NAME)(PlatformCPU)
