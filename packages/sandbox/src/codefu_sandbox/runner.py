"""Run one process under limits and confinement; nothing about verdicts or checkers.

Every run goes through `codefu-sandbox-exec`, a small C program (sandbox_exec.c) built once per
machine into the cache directory. Python spawns it without `preexec_fn` (safe in
threaded processes such as Ray workers); it forks, the child drops privileges, applies
rlimits, Landlock and a seccomp filter, and execs the target; sandbox-exec kills the
child at the CPU or wall deadline and reports exit status, CPU time and peak RSS
(the child's own: the sandbox-exec process that forked it is a ~1 MB static binary).
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import fcntl
import hashlib
import itertools
import math
import os
import platform
import select
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from codefu_sandbox.verdicts import RunOutcome

SANDBOX_EXEC_NAME = "codefu-sandbox-exec"
# System trees a dynamically linked program (and g++) may read and execute.
SYSTEM_READ_PATHS = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/etc/ld.so.cache")
DEFAULT_UID_BASE = 200_000  # sandbox uids: base + per-process slot, no passwd entry needed
UID_SLOTS = 4096
UIDS_PER_PROCESS = 64  # a process's window of sandbox uids (UidWindow)
# sandbox-exec's --seccomp number for each profile of `Runner.run`.
SECCOMP_PROFILES = {"run": "1", "compile": "2", "checker": "3"}


class SandboxError(RuntimeError):
    """The sandbox cannot work on this host; the message says what to install or change."""


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


CGROUP_V1_ROOT = Path("/sys/fs/cgroup/memory")
CGROUP_PARENT = "codefu"


def cgroup2_mounts(mounts: Path = Path("/proc/self/mounts")) -> list[Path]:
    """Mount points of the cgroup v2 hierarchy (usually /sys/fs/cgroup; on hybrid hosts
    /sys/fs/cgroup/unified beside the v1 controllers)."""
    found = []
    with contextlib.suppress(OSError):
        for line in mounts.read_text().splitlines():
            fields = line.split()
            if len(fields) >= 3 and fields[2] == "cgroup2":
                found.append(Path(fields[1].replace("\\040", " ")))
    return found


def cgroup2_memory_roots() -> list[Path]:
    """cgroup v2 mounts whose root offers the memory controller."""
    roots = []
    for mount in cgroup2_mounts():
        with contextlib.suppress(OSError):
            if "memory" in (mount / "cgroup.controllers").read_text().split():
                roots.append(mount)
    return roots


@dataclass
class MemoryGroup:
    """One memory cgroup and its OOM-kill count after the last run in it."""

    path: Path
    limit: int
    oom_kills: int = 0


class MemoryCgroups:
    """Memory cgroups (v1 memory controller or v2) for runs, when root can create them.

    A group is a child cgroup `<parent>/codefu/<pid>-<n>` (unique across threads and
    processes) whose limit is the memory cap; sandbox-exec's child joins it before
    dropping privileges. A run's growth of the group's OOM-kill count says whether it hit
    the cap. A judged submission reuses one group for all its tests, one run at a time
    (creating and removing a group costs ~0.25 ms of Python per run). Cgroups left behind
    by a crashed judge (their pid is gone) are removed when the next one starts.
    """

    def __init__(self, parent: Path, version: str) -> None:
        self.parent = parent
        self.version = version
        self._counter = itertools.count()
        self._prefix = f"{os.getpid()}-"

    @classmethod
    def probe(cls) -> MemoryCgroups | None:
        """Usable cgroups on this host, or None (not root, not mounted, read-only, ...)."""
        if os.geteuid() != 0 or os.environ.get("CODEFU_SANDBOX_CGROUP", "1") == "0":
            return None
        candidates: list[tuple[Path, str]] = []
        if (CGROUP_V1_ROOT / "memory.limit_in_bytes").exists():
            candidates.append((CGROUP_V1_ROOT, "v1"))
        candidates += [(root, "v2") for root in cgroup2_memory_roots()]
        for root, version in candidates:
            groups = cls.at(root, version)
            if groups is not None:
                return groups
        return None

    @classmethod
    def at(cls, root: Path, version: str) -> MemoryCgroups | None:
        """Groups under `root` (a v1 memory mount or a v2 mount with the memory
        controller), or None when a limited child cgroup cannot be created there."""
        parent = root / CGROUP_PARENT
        try:
            parent.mkdir(exist_ok=True)
            if version == "v2":
                (parent / "cgroup.subtree_control").write_text("+memory")
            groups = cls(parent, version)
            groups.remove_stale()
            with groups.create(64 << 20) as probe:
                groups.oom_kills(probe.path)
        except OSError:
            return None
        return groups

    def remove_stale(self) -> None:
        """Remove cgroups of judge processes that no longer exist."""
        for entry in self.parent.iterdir():
            pid = entry.name.split("-", 1)[0]
            if not entry.is_dir() or not pid.isdigit():
                continue
            try:
                os.kill(int(pid), 0)
            except ProcessLookupError:
                with contextlib.suppress(OSError):
                    entry.rmdir()
            except PermissionError:
                pass

    @contextlib.contextmanager
    def create(self, limit: int) -> Iterator[MemoryGroup]:
        """A fresh cgroup limited to `limit` bytes (no swap), removed afterwards."""
        path = self.parent / f"{self._prefix}{next(self._counter)}"
        path.mkdir()
        try:
            if self.version == "v1":
                (path / "memory.limit_in_bytes").write_text(str(limit))
                with contextlib.suppress(OSError):
                    (path / "memory.swappiness").write_text("0")
            else:
                (path / "memory.max").write_text(str(limit))
                with contextlib.suppress(OSError):
                    (path / "memory.swap.max").write_text("0")
            yield MemoryGroup(path, limit)
        finally:
            self._remove(path)

    def oom_kills(self, path: Path) -> int:
        """How many times the kernel OOM-killed a task in this cgroup (its limit was hit)."""
        name = "memory.oom_control" if self.version == "v1" else "memory.events"
        for line in (path / name).read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
        return 0

    @staticmethod
    def _remove(path: Path) -> None:
        # Sandbox-exec reaps its child before returning, so the cgroup is empty; a killed
        # task may take a moment to leave it. What still fails is removed as stale later.
        for delay in (0.0, 0.001, 0.01, 0.1):
            time.sleep(delay)
            try:
                path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                continue


def _c_compiler() -> str:
    for name in ("gcc", "cc", "g++"):
        found = shutil.which(name)
        if found:
            return found
    raise SandboxError(
        "No C compiler found to build sandbox-exec: install g++ "
        "(Debian/Ubuntu: apt-get install g++)."
    )


def build_sandbox_exec(cache_dir: Path) -> Path:
    """The sandbox-exec binary for this source and compiler, built once (atomic, file-locked)."""
    source = resources.files("codefu_sandbox").joinpath("sandbox_exec.c").read_bytes()
    cc = _c_compiler()
    key = hashlib.sha256(source + cc.encode() + platform.machine().encode()).hexdigest()[:16]
    directory = cache_dir / "sandbox_exec"
    target = directory / f"{SANDBOX_EXEC_NAME}-{key}"
    if target.exists():
        return target
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / f"{key}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.exists():
            return target
        with tempfile.TemporaryDirectory(dir=directory) as tmp:
            src = Path(tmp) / "sandbox_exec.c"
            src.write_bytes(source)
            out = Path(tmp) / SANDBOX_EXEC_NAME
            errors = ""
            for static in (["-static"], []):  # static starts faster; not every host has libc.a
                done = subprocess.run(
                    [cc, "-O2", *static, "-o", str(out), str(src)],
                    capture_output=True,
                    text=True,
                    check=False,
                )
                if done.returncode == 0:
                    break
                errors = done.stderr
            else:
                raise SandboxError(f"Building sandbox-exec with {cc} failed:\n{errors[-2000:]}")
            out.chmod(0o755)
            out.replace(target)
    return target


class UidWindow:
    """This process's window of UIDS_PER_PROCESS sandbox uids (placed by its pid among
    UID_SLOTS), handed to runs: up to UIDS_PER_PROCESS concurrent runs get distinct uids, so
    NPROC and files never cross between them; more runs at once share uids, round robin."""

    def __init__(self, base: int) -> None:
        self._free: list[int] = []
        self._next = 0
        self.base = base + (os.getpid() * UIDS_PER_PROCESS) % UID_SLOTS
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def take(self) -> Iterator[int]:
        with self._lock:
            if self._free:
                slot = self._free.pop()
            else:
                slot = self._next
                self._next += 1
        try:
            yield self.base + slot % UIDS_PER_PROCESS
        finally:
            with self._lock:
                self._free.append(slot)


class Runner:
    """Runs processes under limits; one instance per cache directory, thread-safe."""

    def __init__(
        self, cache_dir: Path, *, netns: bool = False, uid_base: int | None = None
    ) -> None:
        self.cache_dir = cache_dir
        self.cgroups = MemoryCgroups.probe()
        self.isolation = dataclasses.replace(
            probe_isolation(want_netns=netns),
            cgroup=self.cgroups.version if self.cgroups else "",
        )
        self.sandbox_exec = build_sandbox_exec(cache_dir)
        if self.isolation.ipcns and not self._sandbox_exec_accepts("--ipcns", "1"):
            # Root without CAP_SYS_ADMIN (a default container): the allowlist still refuses
            # every IPC call, so runs go on in the host's IPC namespace.
            self.isolation = dataclasses.replace(self.isolation, ipcns=False)
        base = (
            uid_base
            if uid_base is not None
            else int(os.environ.get("CODEFU_SANDBOX_UID_BASE", DEFAULT_UID_BASE))
        )
        self.uids = UidWindow(base)
        self.scratch = cache_dir / "tmp"
        self.scratch.mkdir(parents=True, exist_ok=True)
        self.scratch.chmod(0o700)

    def _sandbox_exec_accepts(self, *options: str) -> bool:
        """Whether sandbox-exec can apply these options here (it runs itself, which
        exits with its usage message, under them)."""
        done = subprocess.run(
            [str(self.sandbox_exec), "--wall", "10", *options, "--", str(self.sandbox_exec)],
            capture_output=True,
            text=True,
            check=False,
        )
        return done.stdout.startswith("ok ")

    @contextlib.contextmanager
    def workspace(self) -> Iterator[Path]:
        """A private directory (0700, judge-owned) removed afterwards."""
        path = Path(tempfile.mkdtemp(dir=self.scratch))
        try:
            yield path
        finally:
            shutil.rmtree(path, ignore_errors=True)

    def run(
        self,
        argv: list[str],
        *,
        cwd: Path,
        limits: RunLimits,
        stdin: Path | None,
        stdout: Path,
        stderr: Path,
        profile: str = "run",
        readable: tuple[Path, ...] = (),
        writable: tuple[Path, ...] = (),
        pch_dir: Path | None = None,
        env: dict[str, str] | None = None,
        uid: int | None = None,
        writable_cwd: bool = True,
        group: MemoryGroup | None = None,
    ) -> RunOutcome:
        """Run argv (argv[0] an absolute path) and report how it ended.

        profile "run": a solution (a seccomp allowlist: one exec, threads only, signals
        to itself only); profile "compile": the compiler (a denylist: may spawn its passes;
        no network, tracing, IPC or admin calls); profile "checker": a checker program,
        compiled or a Python interpreter (the compiler's denylist, and as for a solution
        one exec, threads only, signals to itself only).
        With `writable_cwd`, `cwd` becomes owned by the sandbox uid and writable; without,
        the program can read it but create nothing (no disk filling). stdin/stdout/stderr
        are opened by sandbox-exec before it drops privileges, so they may sit in
        directories the sandbox cannot read. With `limits.cgroup_memory`, the run happens
        in `group` (from `memory_group`) when its limit matches, else in a fresh cgroup.
        """
        kwargs: dict[str, Any] = {
            "cwd": cwd,
            "stdin": stdin,
            "stdout": stdout,
            "stderr": stderr,
            "profile": profile,
            "readable": readable,
            "writable": writable,
            "pch_dir": pch_dir,
            "env": env,
            "uid": uid,
            "writable_cwd": writable_cwd,
        }
        if self.cgroups is None or limits.cgroup_memory is None:
            return self._run(argv, limits=limits, cgroup=None, **kwargs)
        if group is not None and group.limit == limits.cgroup_memory:
            return self._run_in_group(argv, limits, group, kwargs)
        with self.memory_group(limits.cgroup_memory) as fresh:
            if fresh is None:  # e.g. the cgroup limit on this host: fall back to RLIMIT_AS
                return self._run(argv, limits=limits, cgroup=None, **kwargs)
            return self._run_in_group(argv, limits, fresh, kwargs)

    @contextlib.contextmanager
    def memory_group(self, limit: int) -> Iterator[MemoryGroup | None]:
        """A memory cgroup for a series of runs with this `cgroup_memory` limit, one at a
        time (pass it to `run` as `group`); None where cgroups are not used."""
        if self.cgroups is None:
            yield None
            return
        try:
            context = self.cgroups.create(limit)
            group = context.__enter__()
        except OSError:  # `run` then tries a group per run, else uses RLIMIT_AS
            yield None
            return
        try:
            yield group
        finally:
            context.__exit__(None, None, None)

    def _run_in_group(
        self, argv: list[str], limits: RunLimits, group: MemoryGroup, kwargs: dict[str, Any]
    ) -> RunOutcome:
        outcome = self._run(
            argv,
            limits=dataclasses.replace(limits, address_space=None),
            cgroup=group.path,
            **kwargs,
        )
        return self._check_group(outcome, group)

    def _check_group(self, outcome: RunOutcome, group: MemoryGroup) -> RunOutcome:
        """The outcome with `memory_cap_hit` from the growth of the group's OOM-kill count."""
        assert self.cgroups is not None
        try:
            kills = self.cgroups.oom_kills(group.path)
        except (OSError, ValueError) as exc:
            error = outcome.error or f"cannot read the memory cgroup {group.path}: {exc}"
            return dataclasses.replace(outcome, error=error)
        hit = kills > group.oom_kills
        group.oom_kills = kills  # the next run's baseline, whatever this run's outcome
        if outcome.error is not None:
            return outcome
        return dataclasses.replace(outcome, memory_cap_hit=hit)

    def _job_args(
        self,
        *,
        limits: RunLimits,
        cgroup: Path | None,
        profile: str,
        readable: tuple[Path, ...],
        writable: tuple[Path, ...],
        pch_dir: Path | None,
        env: dict[str, str] | None,
        uid: int | None,
    ) -> list[str]:
        """sandbox-exec options that do not depend on the run's directory and files."""
        iso = self.isolation
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
        if iso.seccomp:
            cmd += ["--seccomp", SECCOMP_PROFILES[profile]]
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

    def _files_args(
        self,
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
        if self.isolation.drop_uid and uid is not None and writable_cwd:
            os.chown(cwd, uid, uid)
        if self.isolation.landlock_abi:
            cmd += ["--rw" if writable_cwd else "--ro", str(cwd)]
        cmd += ["--cwd", str(cwd), "--stdout", str(stdout), "--stderr", str(stderr)]
        if stdin is not None:
            cmd += ["--stdin", str(stdin)]
        return cmd

    def _run(
        self,
        argv: list[str],
        *,
        cwd: Path,
        limits: RunLimits,
        cgroup: Path | None,
        stdin: Path | None,
        stdout: Path,
        stderr: Path,
        profile: str = "run",
        readable: tuple[Path, ...] = (),
        writable: tuple[Path, ...] = (),
        pch_dir: Path | None = None,
        env: dict[str, str] | None = None,
        uid: int | None = None,
        writable_cwd: bool = True,
    ) -> RunOutcome:
        cmd = [
            str(self.sandbox_exec),
            *self._job_args(
                limits=limits,
                cgroup=cgroup,
                profile=profile,
                readable=readable,
                writable=writable,
                pch_dir=pch_dir,
                env=env,
                uid=uid,
            ),
            *self._files_args(
                cwd=cwd,
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                uid=uid,
                writable_cwd=writable_cwd,
            ),
            "--",
            *argv,
        ]
        guard = (limits.hard_wall_seconds or limits.wall_seconds) + 30
        started = time.monotonic()
        # Sandbox-exec enforces the deadlines itself; the extra 30 s only guards against a
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
            return _failed(f"cannot start sandbox-exec: {exc}", started)
        assert proc.stdout is not None
        with proc.stdout:
            poller = select.poll()  # not select(): Ray workers may hold fds above 1024
            poller.register(proc.stdout, select.POLLIN | select.POLLHUP)
            if not poller.poll(guard * 1000):
                proc.kill()
                proc.wait()
                return _failed(
                    f"sandbox-exec did not return within {guard:.0f} s",
                    started,
                )
            text = proc.stdout.read().decode(errors="replace")
        proc.wait()
        lines = text.strip().splitlines()
        return parse_sandbox_exec_line(lines[-1] if lines else "", text, started)

    @contextlib.contextmanager
    def serve(
        self,
        argv: list[str],
        *,
        limits: RunLimits,
        uid: int | None,
        group: MemoryGroup | None,
        readable: tuple[Path, ...] = (),
    ) -> Iterator[RunServer]:
        """One sandbox-exec process (`--serve`) for a series of runs of the same solution
        under the same limits, one at a time (a submission's tests): each run is confined
        exactly as by `run` with profile "run", without starting a sandbox-exec process per
        run. With `group` (from `memory_group`, its limit `limits.cgroup_memory`) the server
        joins that cgroup once and its children are born in it; without,
        `limits.address_space` caps memory. `readable`: paths beyond the system trees the
        program may read (an interpreter's installation)."""
        use_group = (
            self.cgroups is not None
            and group is not None
            and limits.cgroup_memory is not None
            and group.limit == limits.cgroup_memory
        )
        job_limits = dataclasses.replace(limits, address_space=None) if use_group else limits
        cmd = [
            str(self.sandbox_exec),
            "--serve",
            "1",
            *self._job_args(
                limits=job_limits,
                cgroup=group.path if use_group and group is not None else None,
                profile="run",
                readable=readable,
                writable=(),
                pch_dir=None,
                env=None,
                uid=uid,
            ),
            "--",
            *argv,
        ]
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            close_fds=True,
        )
        server = RunServer(
            self,
            proc,
            uid=uid,
            group=group if use_group else None,
            guard=(limits.hard_wall_seconds or limits.wall_seconds) + 30,
        )
        try:
            yield server
        finally:
            server.close()


class RunServer:
    """A sandbox-exec process started by `Runner.serve`; `run` runs the program once more."""

    def __init__(
        self,
        runner: Runner,
        proc: subprocess.Popen[bytes],
        *,
        uid: int | None,
        group: MemoryGroup | None,
        guard: float,
    ) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        self._runner = runner
        self._proc = proc
        self._uid = uid
        self._group = group
        self._guard = guard
        self._poller = select.poll()  # not select(): Ray workers may hold fds above 1024
        self._poller.register(proc.stdout, select.POLLIN | select.POLLHUP)

    def run(
        self, *, cwd: Path, stdin: Path | None, stdout: Path, stderr: Path, writable_cwd: bool
    ) -> RunOutcome:
        """Run the program with these directory and files; how it ended."""
        started = time.monotonic()
        args = self._runner._files_args(
            cwd=cwd,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            uid=self._uid,
            writable_cwd=writable_cwd,
        )
        if any("\t" in arg or "\n" in arg for arg in args):
            return _failed(f"a path with a tab or a newline cannot be served: {args}", started)
        proc = self._proc
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(("\t".join(args) + "\n").encode())
            proc.stdin.flush()
        except OSError as exc:
            return _failed(f"sandbox-exec is gone: {exc}", started)
        if not self._poller.poll(self._guard * 1000):
            proc.kill()
            return _failed(f"sandbox-exec did not return within {self._guard:.0f} s", started)
        line = proc.stdout.readline().decode(errors="replace")
        if not line:
            proc.wait()
            return _failed(f"sandbox-exec exited (status {proc.returncode})", started)
        outcome = parse_sandbox_exec_line(line.strip(), line, started)
        if self._group is not None:
            outcome = self._runner._check_group(outcome, self._group)
        return outcome

    def close(self) -> None:
        """End the server (it exits at end of input) and reap it."""
        proc = self._proc
        assert proc.stdin is not None and proc.stdout is not None
        with contextlib.suppress(OSError):
            proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()


def _failed(message: str, started: float) -> RunOutcome:
    return RunOutcome(None, None, 0.0, time.monotonic() - started, 0, error=message)


def parse_sandbox_exec_line(line: str, stderr: str, started: float) -> RunOutcome:
    """Turn sandbox-exec's result line into a RunOutcome (an error outcome if malformed)."""
    parts = line.split()
    if not parts or parts[0] != "ok" or len(parts) != 8:
        detail = line.removeprefix("error ").strip() or stderr.strip() or "no result line"
        return _failed(f"sandbox-exec: {detail[:500]}", started)
    exit_code, sig, utime, stime, maxrss, wall, killed = (int(p) for p in parts[1:])
    return RunOutcome(
        exit_code=exit_code if exit_code >= 0 else None,
        signal=sig or None,
        cpu_seconds=(utime + stime) / 1e6,
        wall_seconds=wall / 1e6,
        peak_memory_bytes=maxrss * 1024,
        killed={0: None, 1: "cpu", 2: "wall"}.get(killed),
    )
