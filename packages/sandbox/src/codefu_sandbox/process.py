"""One sandbox-exec process: a run's limits, the options that confine it, how it ended."""

from __future__ import annotations

import math
import os
import select
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from codefu_sandbox.isolation import Isolation
from codefu_sandbox.records import RunOutcome
from codefu_sandbox.syscalls import numbers

# System trees a dynamically linked program (and g++) may read and execute.
SYSTEM_READ_PATHS = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/etc/ld.so.cache")
# sandbox-exec's --seccomp number for each profile of `Runner.run`.
SECCOMP_PROFILES = {"run": "1", "compile": "2", "checker": "3"}


@dataclass(frozen=True)
class RunLimits:
    cpu_seconds: float | None  # sandbox-exec kills past this much CPU time
    wall_seconds: float  # wall-clock backstop, not counting time spent waiting for a CPU
    address_space: int | None  # RLIMIT_AS bytes; None = unlimited
    file_size: int  # RLIMIT_FSIZE bytes: caps stdout, stderr and any file written
    processes: int = 64  # RLIMIT_NPROC for the sandbox uid (threads count)
    open_files: int = 64
    stack_unlimited: bool = True  # contest judges give a large stack; AS bounds it
    hard_wall_seconds: float | None = None  # wall-clock limit, all time counted
    # Memory cgroup limit in bytes; where cgroups work it replaces `address_space` (an
    # allocation then succeeds and the cap is hit on touch, counted as an OOM kill).
    cgroup_memory: int | None = None


def job_args(
    iso: Isolation,
    *,
    limits: RunLimits,
    cgroup: Path | None,
    profile: str,
    syscalls: tuple[str, ...],
    readable: tuple[Path, ...],
    writable: tuple[Path, ...],
    pch_dir: Path | None,
    env: dict[str, str] | None,
    uid: int | None,
) -> list[str]:
    """sandbox-exec options that do not depend on the run's directory and files.
    `syscalls`: the calls allowed beyond `profile`'s base policy (a language's declaration;
    ValueError naming one above the ceiling or unknown)."""
    cmd: list[str] = []
    if cgroup is not None:
        cmd += ["--cgroup-procs", str(cgroup / "cgroup.procs")]
    if limits.cpu_seconds is not None:
        cmd += ["--cpu", f"{limits.cpu_seconds:.6f}"]
        cmd += ["--cpu-rlimit", str(math.ceil(limits.cpu_seconds) + 1)]
    cmd += ["--wall", f"{limits.wall_seconds:.6f}"]
    if limits.hard_wall_seconds is not None:
        cmd += ["--hard-wall", f"{limits.hard_wall_seconds:.6f}"]
    if limits.address_space is not None:
        cmd += ["--as", str(limits.address_space)]
    cmd += ["--fsize", str(limits.file_size), "--nofile", str(limits.open_files)]
    if limits.stack_unlimited:
        cmd += ["--stack", "0"]
    if iso.drop_uid and uid is not None:
        cmd += ["--uid", str(uid), "--gid", str(uid), "--nproc", str(limits.processes)]
    if iso.netns:
        cmd += ["--netns", "1"]
    if iso.ipcns:
        cmd += ["--ipcns", "1"]
    allowed = numbers(syscalls)  # checked on every host, filtered only where seccomp works
    if iso.seccomp:
        cmd += ["--seccomp", SECCOMP_PROFILES[profile]]
        for number in allowed:
            cmd += ["--allow-syscall", str(number)]
    if iso.landlock_abi:
        cmd += ["--landlock", "1"]
        for ro in (*SYSTEM_READ_PATHS, *map(str, readable)):
            cmd += ["--ro", ro]
        for rw in writable:
            cmd += ["--rw", str(rw)]
    if pch_dir is not None:
        cmd += ["--pch-fd3", str(pch_dir)]
    for key, value in (env or {}).items():
        cmd += ["--env", f"{key}={value}"]
    if profile in ("run", "checker"):
        cmd += ["--exec-fd", "1"]  # opened before the uid drop, exec'd by descriptor
    return cmd


def files_args(
    iso: Isolation,
    *,
    cwd: Path,
    stdin: Path | None,
    stdout: Path,
    stderr: Path,
    uid: int | None,
    writable_cwd: bool,
) -> list[str]:
    """sandbox-exec options for the run's directory and files (chowns a writable cwd)."""
    cmd: list[str] = []
    if iso.drop_uid and uid is not None and writable_cwd:
        os.chown(cwd, uid, uid)
    if iso.landlock_abi:
        cmd += ["--rw" if writable_cwd else "--ro", str(cwd)]
    cmd += ["--cwd", str(cwd), "--stdout", str(stdout), "--stderr", str(stderr)]
    if stdin is not None:
        cmd += ["--stdin", str(stdin)]
    return cmd


def run_sandbox_exec(cmd: list[str], guard: float) -> RunOutcome:
    """Start sandbox-exec with `cmd`, wait for its result line (at most `guard` seconds)."""
    started = time.monotonic()
    # Sandbox-exec enforces the deadlines itself; the guard only guards against a
    # sandbox-exec bug. Reading the pipe then a blocking wait() avoids subprocess.run's
    # polling sleep loop (up to milliseconds per test).
    try:
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            close_fds=True,
        )
    except OSError as exc:
        return failed_run(f"cannot start sandbox-exec: {exc}", started)
    assert proc.stdout is not None
    with proc.stdout:
        poller = select.poll()  # not select(): Ray workers may hold fds above 1024
        poller.register(proc.stdout, select.POLLIN | select.POLLHUP)
        if not poller.poll(guard * 1000):
            proc.kill()
            proc.wait()
            return failed_run(
                f"sandbox-exec did not return within {guard:.0f} s",
                started,
            )
        text = proc.stdout.read().decode(errors="replace")
    proc.wait()
    lines = text.strip().splitlines()
    return parse_sandbox_exec_line(lines[-1] if lines else "", text, started)


def failed_run(message: str, started: float) -> RunOutcome:
    """An error outcome (→ IE): sandbox-exec could not run or report, started at `started`."""
    return RunOutcome(None, None, 0.0, time.monotonic() - started, 0, error=message)


def parse_sandbox_exec_line(line: str, stderr: str, started: float) -> RunOutcome:
    """Turn sandbox-exec's result line into a RunOutcome (an error outcome if malformed)."""
    parts = line.split()
    if not parts or parts[0] != "ok" or len(parts) != 9:
        detail = line.removeprefix("error ").strip() or stderr.strip() or "no result line"
        return failed_run(f"sandbox-exec: {detail[:500]}", started)
    exit_code, sig, utime, stime, maxrss, wall, killed, refused = (int(p) for p in parts[1:])
    return RunOutcome(
        exit_code=exit_code if exit_code >= 0 else None,
        signal=sig or None,
        cpu_seconds=(utime + stime) / 1e6,
        wall_seconds=wall / 1e6,
        peak_memory_bytes=maxrss * 1024,
        killed={0: None, 1: "cpu", 2: "wall"}.get(killed),
        refused_syscall=refused if refused != -1 else None,
    )
