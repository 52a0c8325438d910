"""Every change veRL 0.9.1 needs on a CPU-only machine, and the registrations of our `hf`
rollout (used on a GPU machine without vLLM too), applied as each veRL module loads.

Two kinds, both listed in `PATCHES`:
- extensions: registrations through veRL's public registries (platform, FSDP engine, rollout
  replica); they add an option and change nothing veRL already had;
- patches: replacements of a veRL name where veRL offers no extension point. Each names the
  veRL file:line it works around and the text expected there (`Anchor`); `check()` (run by
  the tests) fails when veRL changes at that line, so an upgrade sees which one to revisit.

A `Patch` is an `Override` of the one anchor registry (`codefu_trainer.training.verl.anchors`,
which also lists the overrides used outside veRL on CPU) plus what applies it.

Every patch decides at call time: on a machine whose veRL platform is not `cpu` (a GPU machine)
it calls veRL's original code unchanged. `install()` applies them lazily: a `sys.meta_path`
finder runs a module's patches right after veRL first imports it, so a process that never
imports veRL (a judge worker) pays nothing, and names another veRL module imports with
`from ... import` (engine_workers' `initialize_global_process_group_ray`) are already patched.
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from codefu_trainer.training.verl import anchors
from codefu_trainer.training.verl.anchors import Anchor, Override

ROLLOUT_NAME = "hf"
ROLLOUT_ADAPTER = "codefu_trainer.training.verl.cpu.rollout.HFRollout"


__all__ = ["PATCHES", "ROLLOUT_NAME", "Anchor", "Patch", "check", "install", "on_cpu"]


@dataclass(frozen=True)
class Patch(Override):
    """One change to veRL module `module`, applied right after it is imported."""

    module: str
    kind: str  # "extension" (a public registry) or "patch" (replaces a veRL name)
    on_gpu: str  # what it does on a GPU machine
    apply: Callable[[ModuleType], None]


def on_cpu() -> bool:
    """True when veRL's platform in this process is the CPU platform."""
    from verl.utils.device import get_device_name

    return bool(get_device_name() == "cpu")


# --- extensions -------------------------------------------------------------------------


def _register_platform(_: ModuleType) -> None:
    from codefu_trainer.training.verl.cpu.platform import register

    register()


def _register_engines(module: ModuleType) -> None:
    from verl.workers.engine import EngineRegistry

    for model_type, cls in (
        ("language_model", module.FSDPEngineWithLMHead),
        ("value_model", module.FSDPEngineWithValueHead),
    ):
        EngineRegistry.register(model_type=model_type, backend=["fsdp", "fsdp2"], device="cpu")(cls)


def _load_replica() -> type:
    from codefu_trainer.training.verl.cpu.rollout import HFReplica

    return HFReplica


def _register_replica(module: ModuleType) -> None:
    module.RolloutReplicaRegistry.register(ROLLOUT_NAME, _load_replica)


# --- patches ----------------------------------------------------------------------------


def _register_rollout_adapter(module: ModuleType) -> None:
    module._ROLLOUT_REGISTRY[(ROLLOUT_NAME, "async")] = ROLLOUT_ADAPTER


def _replace(owner: Any, name: str, make: Callable[[Any], Any]) -> None:
    """Set `owner.name` to `make(original)` once: a second install() keeps the first."""
    original = getattr(owner, name)
    if getattr(original, "_codefu_cpu", False):
        return
    replacement = make(original)
    replacement._codefu_cpu = True
    setattr(owner, name, replacement)


def _no_pinned_offload(module: ModuleType) -> None:
    def make(original: type) -> type:
        class CPUOffloadPolicy(original):
            """FSDP2's CPU offload; pinned memory only where an accelerator exists."""

            def __init__(self, pin_memory: bool = True, **kwargs: Any) -> None:
                super().__init__(pin_memory=pin_memory and not on_cpu(), **kwargs)

        return CPUOffloadPolicy

    _replace(module, "CPUOffloadPolicy", make)


def _cpu_resource_check(module: ModuleType) -> None:
    def make(original: Callable[[Any], None]) -> Callable[[Any], None]:
        @functools.wraps(original)
        def check(self: Any) -> None:
            if not on_cpu():
                return original(self)
            import ray

            needed = sum(n for per_node in self.resource_pool_spec.values() for n in per_node)
            have = ray.available_resources().get("CPU", 0.0)
            if have < needed:
                raise ValueError(
                    f"The Ray cluster has {have:g} free CPUs, veRL's worker processes need "
                    f"{needed}: raise ray_kwargs.ray_init.num_cpus or lower "
                    "trainer.n_gpus_per_node."
                )
            return None

        return check

    _replace(module.ResourcePoolManager, "_check_resource_available", make)


def _gloo_process_group(module: ModuleType) -> None:
    def make(original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def initialize(timeout_second: Any = None, backend: str | None = None) -> Any:
            if backend is None and on_cpu():
                backend = "gloo"
            return original(timeout_second=timeout_second, backend=backend)

        return initialize

    _replace(module, "initialize_global_process_group_ray", make)


PATCHES: tuple[Patch, ...] = (
    Patch(
        name="cpu platform",
        module="verl.plugin.platform.platform_manager",
        kind="extension",
        anchors=(Anchor("plugin/platform/platform_manager.py", 117, 'return "nvidia"'),),
        why="veRL knows CUDA/NPU/ROCm platforms only and falls back to CUDA without one; "
        "PlatformCPU is registered as `cpu` and chosen by VERL_PLATFORM=cpu.",
        on_gpu="nothing: VERL_PLATFORM is not set, veRL detects CUDA",
        apply=_register_platform,
    ),
    Patch(
        name="fsdp engine on cpu",
        module="verl.workers.engine.fsdp.transformer_impl",
        kind="extension",
        anchors=(
            Anchor(
                "workers/engine/fsdp/transformer_impl.py",
                1143,
                '@EngineRegistry.register(model_type="language_model", backend=["fsdp", "fsdp2"], '
                'device=["cuda", "npu"])',
            ),
            Anchor(
                "workers/engine/fsdp/transformer_impl.py",
                1594,
                '@EngineRegistry.register(model_type="value_model", backend=["fsdp", "fsdp2"], '
                'device=["cuda", "npu"])',
            ),
        ),
        why="veRL registers its FSDP engines for cuda and npu only; the same classes are "
        "registered for device cpu (FSDP2 only: FSDP1 needs an accelerator).",
        on_gpu="nothing: the cuda registration is used",
        apply=_register_engines,
    ),
    Patch(
        name="hf rollout replica",
        module="verl.workers.rollout.replica",
        kind="extension",
        anchors=(
            Anchor(
                "workers/rollout/replica.py",
                388,
                'RolloutReplicaRegistry.register("vllm", _load_vllm)',
            ),
        ),
        why="rollout.name=hf: veRL's LLMServerManager starts HFReplica (a transformers "
        "server, on the GPU or the CPU) through the replica registry.",
        on_gpu="the same: rollout.name=hf where vLLM is missing (codefu-train --smoke)",
        apply=_register_replica,
    ),
    Patch(
        name="hf rollout adapter",
        module="verl.workers.rollout.base",
        kind="patch",
        anchors=(Anchor("workers/rollout/base.py", 89, "_ROLLOUT_REGISTRY = {"),),
        why="the actor worker's rollout adapter is looked up in veRL's private "
        "_ROLLOUT_REGISTRY (no registration API); ('hf', 'async') is added to it.",
        on_gpu="the same: rollout.name=hf where vLLM is missing (codefu-train --smoke)",
        apply=_register_rollout_adapter,
    ),
    Patch(
        name="reference offload without pinned memory",
        module="verl.workers.engine.fsdp.transformer_impl",
        kind="patch",
        anchors=(
            Anchor(
                "workers/engine/fsdp/transformer_impl.py",
                462,
                "offload_policy = CPUOffloadPolicy(pin_memory=True)",
            ),
        ),
        why="the forward-only reference is always wrapped with CPUOffloadPolicy(pin_memory="
        "True); pinning needs an accelerator, so on CPU the policy is built with "
        "pin_memory=False.",
        on_gpu="nothing: pin_memory stays as veRL asks",
        apply=_no_pinned_offload,
    ),
    Patch(
        name="resource check counts CPUs",
        module="verl.single_controller.ray.base",
        kind="patch",
        anchors=(
            Anchor("single_controller/ray/base.py", 226, "def _check_resource_available(self):"),
            Anchor(
                "single_controller/ray/base.py",
                230,
                'node: node_info.get("GPU", 0) if "GPU" in node_info else node_info.get("NPU", 0)',
            ),
        ),
        why="ResourcePoolManager counts only GPUs/NPUs (0 on CPU) and refuses to start; on CPU "
        "it compares the pools' process count with the cluster's free Ray CPUs instead.",
        on_gpu="nothing: veRL's GPU check runs",
        apply=_cpu_resource_check,
    ),
    Patch(
        name="gloo process group",
        module="verl.utils.distributed",
        kind="patch",
        anchors=(
            Anchor(
                "utils/distributed.py",
                89,
                'backend = backend or f"cpu:gloo,{get_device_name()}:{get_nccl_backend()}"',
            ),
            Anchor(
                "workers/engine_workers.py",
                38,
                "from verl.utils.distributed import initialize_global_process_group_ray",
            ),
        ),
        why="the default backend `cpu:gloo,{device}:{backend}` becomes `cpu:gloo,cpu:gloo` on "
        "CPU, which torch rejects (duplicate device type); on CPU the default is `gloo`.",
        on_gpu="nothing: the backend stays cpu:gloo,cuda:nccl",
        apply=_gloo_process_group,
    ),
)


def check(patches: Sequence[Patch] = PATCHES) -> list[str]:
    """Each anchor whose veRL line no longer holds the expected text (empty: all hold)."""
    return anchors.check(patches)


def _apply(module: ModuleType) -> None:
    for patch in PATCHES:
        if patch.module == module.__name__:
            try:
                patch.apply(module)
            except Exception as exc:
                raise RuntimeError(
                    f"codefu veRL-on-CPU {patch.kind} '{patch.name}' failed on {module.__name__} "
                    f"({', '.join(a.where() for a in patch.anchors)}): {exc}. veRL changed "
                    "there; see codefu_trainer/training/verl/cpu/patches.py."
                ) from exc


class _Loader(importlib.abc.Loader):
    """A veRL module's own loader, then that module's patches."""

    def __init__(self, inner: importlib.abc.Loader) -> None:
        self.inner = inner

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.inner.exec_module(module)
        _apply(module)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class _Finder(importlib.abc.MetaPathFinder):
    """Finds the patched veRL modules with the other finders and wraps their loaders."""

    modules = frozenset(p.module for p in PATCHES)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.modules:
            return None
        for finder in sys.meta_path:
            if isinstance(finder, _Finder) or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _Loader(spec.loader)
                return spec
        return None


def install() -> None:
    """Patch the veRL modules already imported now and every other one as it is imported."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
    for name in sorted(_Finder.modules):
        module = sys.modules.get(name)
        if module is not None:
            _apply(module)
