"""veRL's device platform for a machine without an accelerator, through veRL's plugin API.

veRL 0.9.1 registers CUDA, NPU and ROCm platforms only and falls back to CUDA without one
(verl/plugin/platform/platform_manager.py). This platform runs its workers on the CPU:
torch's `torch.cpu` device module, the gloo collectives, and zero for the accelerator memory
statistics veRL logs (a CPU has no accelerator memory). `use()` must run before veRL's
worker modules are imported, since several read the device name at import time.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import torch
from verl.plugin.platform.platform_base import PlatformBase
from verl.plugin.platform.platform_manager import PlatformRegistry, set_platform


def _no_memory(*_: Any) -> int:
    return 0


# torch.cpu plus what veRL asks of a device module: its name and memory statistics.
CPU_DEVICE = SimpleNamespace(
    **{name: getattr(torch.cpu, name) for name in dir(torch.cpu) if not name.startswith("_")},
    get_device_name=lambda *_: "CPU",
    empty_cache=lambda: None,
    memory_allocated=_no_memory,
    memory_reserved=_no_memory,
    max_memory_allocated=_no_memory,
    max_memory_reserved=_no_memory,
    mem_get_info=lambda *_: (0, 0),
)


@PlatformRegistry.register(platform="cpu")
class PlatformCPU(PlatformBase):
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

    def ray_noset_envvars(self) -> list[str]:
        return []

    def is_ipc_supported(self) -> bool:
        return False

    def cudart(self) -> Any:
        return None


def use() -> None:
    """Make veRL run its workers on this process's CPU."""
    set_platform(PlatformCPU())
