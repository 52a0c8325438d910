"""What isolation this host allows the sandbox, and the error when the sandbox cannot work."""

from __future__ import annotations

import ctypes
import os
import platform
from dataclasses import dataclass


class SandboxError(RuntimeError):
    """The sandbox cannot work on this host; the message says what to install or change."""


@dataclass(frozen=True)
class Isolation:
    """What this host allows; `describe()` is the report's `isolation` string."""

    drop_uid: bool
    landlock_abi: int
    seccomp: bool
    netns: bool
    cgroup: str = ""  # "v1" or "v2" when a per-run memory cgroup is used, else ""
    ipcns: bool = False  # a private IPC namespace per run (needs root)

    def describe(self) -> str:
        layers = ["rlimits"]
        if self.cgroup:
            layers.append("cgroup")
        if self.drop_uid:
            layers.append("uid")
        if self.seccomp:
            layers.append("seccomp")
        if self.landlock_abi:
            layers.append(f"landlock-v{self.landlock_abi}")
        if self.ipcns:
            layers.append("ipcns")
        if self.netns:
            layers.append("netns")
        return "+".join(layers)


def landlock_abi() -> int:
    """The kernel's Landlock ABI version (0 when unavailable)."""
    if platform.system() != "Linux":
        return 0
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        version = int(libc.syscall(444, None, 0, 1))  # landlock_create_ruleset(VERSION)
    except (OSError, AttributeError):
        return 0
    return max(version, 0)


def probe_isolation(*, want_netns: bool = False) -> Isolation:
    """Detect the layers this host supports (cheap; no process is started)."""
    root = os.geteuid() == 0
    env = os.environ.get("CODEFU_SANDBOX_LANDLOCK", "1") != "0"
    return Isolation(
        drop_uid=root,
        landlock_abi=landlock_abi() if env else 0,
        seccomp=platform.machine() in ("x86_64", "AMD64"),
        netns=root and want_netns,
        ipcns=root,
    )
