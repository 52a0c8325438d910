"""What isolation this host allows the sandbox, the layers a deployment requires
(CODEFU_SANDBOX_REQUIRE), and the error when the sandbox cannot work."""

from __future__ import annotations

import ctypes
import errno
import os
import platform
from dataclasses import dataclass
from pathlib import Path


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


def _landlock_version() -> tuple[int, int]:
    """landlock_create_ruleset(VERSION): (the ABI version or -1, errno)."""
    if platform.system() != "Linux":
        return -1, errno.ENOSYS
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        version = int(libc.syscall(444, None, 0, 1))
    except (OSError, AttributeError):
        return -1, errno.ENOSYS
    return version, ctypes.get_errno() if version < 0 else 0


def landlock_abi() -> int:
    """The kernel's Landlock ABI version (0 when unavailable)."""
    return max(_landlock_version()[0], 0)


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


# Layers a deployment may require (the names `Isolation.describe` gives): where this env
# var names one the host cannot give, no judge starts, and the error says what is missing.
# The judge image sets it (docker/judge.Dockerfile); unset or empty, the sandbox uses what the
# host allows and reports it in every report's `isolation`.
REQUIRE_ENV = "CODEFU_SANDBOX_REQUIRE"
LAYERS = ("cgroup", "uid", "seccomp", "landlock", "ipcns", "netns")
CAP_SYS_ADMIN = 21


def has_capability(bit: int, status: Path = Path("/proc/self/status")) -> bool:
    """Whether this process holds the capability `bit` (CAP_* number) in its effective set."""
    try:
        for line in status.read_text().splitlines():
            if line.startswith("CapEff:"):
                return bool(int(line.split()[1], 16) >> bit & 1)
    except (OSError, ValueError, IndexError):
        pass
    return False


def why_missing(layer: str, *, want_netns: bool = False) -> str:
    """Why this host does not give the sandbox `layer`, and what gives it."""
    root = os.geteuid() == 0
    if layer == "netns" and not want_netns:
        return "the judge was not asked for a network namespace per run (Judge(netns=True))"
    if layer == "uid" or (not root and layer in ("cgroup", "ipcns", "netns")):
        return (
            f"the judge runs as uid {os.geteuid()}, not root, and {layer} needs root: run it as "
            "root (a container's default user), which lets it drop each run to a sandbox uid"
        )
    if layer == "seccomp":
        return f"its filters are built for x86-64 only; this machine is {platform.machine()}"
    if layer == "landlock":
        return _why_no_landlock()
    if layer == "cgroup":
        if os.environ.get("CODEFU_SANDBOX_CGROUP", "1") == "0":
            return "turned off by CODEFU_SANDBOX_CGROUP=0"
        return (
            "no memory cgroup to make groups in: /sys/fs/cgroup/memory (v1) is read-only or "
            "absent and no cgroup v2 mount with the memory controller is writable; give the "
            "container a memory cgroup directory of its own, read-write (docs/images.md)"
        )
    if not has_capability(CAP_SYS_ADMIN):
        return (
            f"a private {'IPC' if layer == 'ipcns' else 'network'} namespace per run needs "
            "CAP_SYS_ADMIN, which this process lacks (podman/docker run --cap-add SYS_ADMIN; "
            "Kubernetes: securityContext.capabilities.add: [SYS_ADMIN])"
        )
    return (
        f"unshare() of a new {layer} is refused although CAP_SYS_ADMIN is held: the "
        "container's seccomp profile or a security module denies it"
    )


def _why_no_landlock() -> str:
    if os.environ.get("CODEFU_SANDBOX_LANDLOCK", "1") == "0":
        return "turned off by CODEFU_SANDBOX_LANDLOCK=0"
    calls = "landlock_create_ruleset, landlock_add_rule and landlock_restrict_self"
    code = _landlock_version()[1]
    if code == errno.EOPNOTSUPP:
        return "Landlock is built into this kernel but off at boot: add landlock to its lsm="
    if code == errno.EPERM:
        return f"the container's seccomp profile denies the Landlock calls: allow {calls}"
    if code == errno.ENOSYS:
        return (
            "the Landlock calls answer ENOSYS: a kernel without Landlock (it needs Linux "
            f">= 5.13 built with it), or a seccomp profile that does not know {calls}"
        )
    return f"landlock_create_ruleset failed: {os.strerror(code)}"


def required_layers(value: str | None = None) -> tuple[str, ...]:
    """The layers REQUIRE_ENV (or `value`) names, comma-separated; SandboxError for a name
    that is not a layer."""
    text = os.environ.get(REQUIRE_ENV, "") if value is None else value
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in LAYERS]
    if unknown:
        raise SandboxError(
            f"{REQUIRE_ENV}={text!r} names {', '.join(unknown)}, which "
            f"{'is not a layer' if len(unknown) == 1 else 'are not layers'}: "
            f"choose from {', '.join(LAYERS)}"
        )
    return names


def check_required(isolation: Isolation, *, want_netns: bool = False) -> None:
    """SandboxError, one line naming each required layer this host does not give and why,
    when REQUIRE_ENV names such a layer."""
    present = set(isolation.describe().split("+"))
    present |= {"landlock"} if isolation.landlock_abi else set()
    missing = [layer for layer in required_layers() if layer not in present]
    if missing:
        reasons = "; ".join(f"{n}: {why_missing(n, want_netns=want_netns)}" for n in missing)
        raise SandboxError(
            f"{REQUIRE_ENV} requires the {', '.join(missing)} layer"
            f"{'s' if len(missing) > 1 else ''}, which this host does not give the sandbox: "
            f"{reasons}. Give them (docs/images.md), or set {REQUIRE_ENV} to the layers "
            "you accept."
        )
