"""This host's side of the cluster: resolving hosts, probing ports, the `ray start` child."""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger("codefu_launcher")


class LaunchError(RuntimeError):
    """The cluster could not be brought up; the message is the failure reason."""


def exit_code_of(returncode: int) -> int:
    """A process's exit status as a shell reports it (signal N -> 128+N)."""
    return 128 - returncode if returncode < 0 else returncode


def resolve_host(host: str, timeout: float, sleep: Callable[[float], None] = time.sleep) -> str:
    """The IPv4 address of `host`, retrying with exponential backoff until `timeout`."""
    deadline = time.monotonic() + timeout
    delay = 0.5
    while True:
        try:
            infos = socket.getaddrinfo(host, None, socket.AF_INET, socket.SOCK_STREAM)
            return str(infos[0][4][0])
        except OSError as exc:
            if time.monotonic() + delay > deadline:
                raise LaunchError(
                    f"Could not resolve host {host!r} within {timeout:.0f} s ({exc}). "
                    "Check the job's networking (hosts resolve through /etc/hosts)."
                ) from exc
            log.info("Resolving %s failed (%s); retrying in %.1f s", host, exc, delay)
            sleep(delay)
            delay = min(delay * 2, 10.0)


def try_resolve(host: str) -> str | None:
    try:
        return str(socket.getaddrinfo(host, None, socket.AF_INET)[0][4][0])
    except OSError:
        return None


def port_open(ip: str, port: int, timeout: float = 2.0) -> bool:
    """True when a TCP connection to ip:port succeeds."""
    try:
        with socket.create_connection((ip, port), timeout=timeout):
            return True
    except OSError:
        return False


def ray_executable(configured: str | None) -> str:
    """The `ray` command: `configured`, else the one beside this Python, else on PATH."""
    if configured:
        return configured
    beside = Path(sys.executable).with_name("ray")
    if beside.exists():
        return str(beside)
    found = shutil.which("ray")
    if found is None:
        raise LaunchError("The `ray` command is not installed; install ray[default]==2.60.0.")
    return found


def stop_process_group(proc: subprocess.Popen[bytes], grace: float, name: str) -> int:
    """SIGTERM the process group of `proc`, SIGKILL it after `grace`; returns the exit code."""
    if proc.poll() is None:
        log.info("Stopping %s (pid %d)", name, proc.pid)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            log.warning("%s did not stop within %.0f s; killing it", name, grace)
    # Leftovers in the group (Ray's own children, the entrypoint's helpers).
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    return exit_code_of(proc.wait())


class RayNode:
    """`ray start ... --block` as a child in its own session: stopping it stops only our Ray."""

    def __init__(self, ray: str, args: list[str], env: dict[str, str], stop_grace: float) -> None:
        self.command = [ray, "start", *args]
        self.env = env
        self.stop_grace = stop_grace
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        log.info("Starting Ray: %s", " ".join(self.command))
        self.proc = subprocess.Popen(self.command, env=self.env, start_new_session=True)

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        if self.proc is not None:
            stop_process_group(self.proc, self.stop_grace, "Ray")


def alive_node_ips(address: str) -> list[str]:
    """IPs of the alive nodes of the cluster at `address` (a connected driver is needed)."""
    import ray

    return [str(n["NodeManagerAddress"]) for n in ray.nodes() if n.get("Alive")]
