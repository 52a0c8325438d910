"""Run one process under limits and confinement; nothing about verdicts or checkers.

Every run goes through `codefu-sandbox-exec`, a small C program (sandbox_exec.c) built once per
machine into the cache directory (`sandbox_binary`). Python spawns it without `preexec_fn` (safe
in threaded processes such as Ray workers); it forks, the child drops privileges, applies
rlimits, Landlock and a seccomp filter, and execs the target; sandbox-exec kills the
child at the CPU or wall deadline and reports exit status, CPU time and peak RSS
(the child's own: the sandbox-exec process that forked it is a ~1 MB static binary).

`Runner` ties the parts together: the host's layers (`isolation`), memory cgroups
(`cgroups`), sandbox uids (`uids`), one sandbox-exec process and its options (`process`),
and a `--serve` process for a submission's tests (`run_server`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from codefu_sandbox.cgroups import MemoryCgroups, MemoryGroup, cgroup2_memory_roots, cgroup2_mounts
from codefu_sandbox.isolation import Isolation, SandboxError, check_required, probe_isolation
from codefu_sandbox.process import (
    RunLimits,
    files_args,
    job_args,
    parse_sandbox_exec_line,
    run_sandbox_exec,
)
from codefu_sandbox.records import RunOutcome
from codefu_sandbox.run_server import RunServer
from codefu_sandbox.sandbox_binary import build_sandbox_exec
from codefu_sandbox.uids import DEFAULT_UID_BASE, UIDS_PER_PROCESS, UidWindow

# Names other modules import from here (they live in the modules above).
__all__ = [
    "UIDS_PER_PROCESS",
    "Isolation",
    "MemoryCgroups",
    "RunLimits",
    "RunServer",
    "Runner",
    "SandboxError",
    "UidWindow",
    "cgroup2_memory_roots",
    "cgroup2_mounts",
    "parse_sandbox_exec_line",
]


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
        check_required(self.isolation, want_netns=netns)
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
        syscalls: tuple[str, ...] = (),
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
        one exec, threads only, signals to itself only). `syscalls`: calls allowed beyond the
        profile's base policy (a language's declaration, `syscalls.check_declared`); a call
        the filter refuses ends the run, its number in `RunOutcome.refused_syscall`.
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
            "syscalls": syscalls,
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
        assert self.cgroups is not None
        return self.cgroups.check(outcome, group)

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
        syscalls: tuple[str, ...] = (),
        readable: tuple[Path, ...] = (),
        writable: tuple[Path, ...] = (),
        pch_dir: Path | None = None,
        env: dict[str, str] | None = None,
        uid: int | None = None,
        writable_cwd: bool = True,
    ) -> RunOutcome:
        cmd = [
            str(self.sandbox_exec),
            *job_args(
                self.isolation,
                limits=limits,
                cgroup=cgroup,
                profile=profile,
                syscalls=syscalls,
                readable=readable,
                writable=writable,
                pch_dir=pch_dir,
                env=env,
                uid=uid,
            ),
            *files_args(
                self.isolation,
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
        # Sandbox-exec enforces the deadlines itself; the extra 30 s only guards against a
        # sandbox-exec bug.
        guard = (limits.hard_wall_seconds or limits.wall_seconds) + 30
        return run_sandbox_exec(cmd, guard)

    @contextlib.contextmanager
    def serve(
        self,
        argv: list[str],
        *,
        limits: RunLimits,
        uid: int | None,
        group: MemoryGroup | None,
        readable: tuple[Path, ...] = (),
        profile: str = "run",
        syscalls: tuple[str, ...] = (),
    ) -> Iterator[RunServer]:
        """One sandbox-exec process (`--serve`) for a series of runs of the same solution
        under the same limits, one at a time (a submission's tests): each run is confined
        exactly as by `run` with `profile`, without starting a sandbox-exec process per
        run. With `group` (from `memory_group`, its limit `limits.cgroup_memory`) the server
        joins that cgroup once and its children are born in it; without,
        `limits.address_space` caps memory. `readable`: paths beyond the system trees the
        program may read (an interpreter's installation); `syscalls`: as for `run`."""
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
            *job_args(
                self.isolation,
                limits=job_limits,
                cgroup=group.path if use_group and group is not None else None,
                profile=profile,
                syscalls=syscalls,
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
            proc,
            isolation=self.isolation,
            uid=uid,
            cgroups=self.cgroups,
            group=group if use_group else None,
            guard=(limits.hard_wall_seconds or limits.wall_seconds) + 30,
        )
        try:
            yield server
        finally:
            server.close()
