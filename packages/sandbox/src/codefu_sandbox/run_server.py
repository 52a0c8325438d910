"""The client of one sandbox-exec `--serve` process: a line of files in, a result line out."""

from __future__ import annotations

import contextlib
import select
import subprocess
import time
from pathlib import Path

from codefu_sandbox.cgroups import MemoryCgroups, MemoryGroup
from codefu_sandbox.isolation import Isolation
from codefu_sandbox.process import failed_run, files_args, parse_sandbox_exec_line
from codefu_sandbox.records import RunOutcome


class RunServer:
    """A sandbox-exec process started by `Runner.serve`; `run` runs the program once more.

    With `group`, the server runs in that memory cgroup of `cgroups`, and each run's
    outcome says whether it hit the cap."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        *,
        isolation: Isolation,
        uid: int | None,
        cgroups: MemoryCgroups | None,
        group: MemoryGroup | None,
        guard: float,
    ) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        assert group is None or cgroups is not None
        self._proc = proc
        self._isolation = isolation
        self._uid = uid
        self._cgroups = cgroups
        self._group = group
        self._guard = guard
        self._poller = select.poll()  # not select(): Ray workers may hold fds above 1024
        self._poller.register(proc.stdout, select.POLLIN | select.POLLHUP)

    def run(
        self, *, cwd: Path, stdin: Path | None, stdout: Path, stderr: Path, writable_cwd: bool
    ) -> RunOutcome:
        """Run the program with these directory and files; how it ended."""
        started = time.monotonic()
        args = files_args(
            self._isolation,
            cwd=cwd,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            uid=self._uid,
            writable_cwd=writable_cwd,
        )
        if any("\t" in arg or "\n" in arg for arg in args):
            return failed_run(f"a path with a tab or a newline cannot be served: {args}", started)
        proc = self._proc
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(("\t".join(args) + "\n").encode())
            proc.stdin.flush()
        except OSError as exc:
            return failed_run(f"sandbox-exec is gone: {exc}", started)
        if not self._poller.poll(self._guard * 1000):
            proc.kill()
            return failed_run(f"sandbox-exec did not return within {self._guard:.0f} s", started)
        line = proc.stdout.readline().decode(errors="replace")
        if not line:
            proc.wait()
            return failed_run(f"sandbox-exec exited (status {proc.returncode})", started)
        outcome = parse_sandbox_exec_line(line.strip(), line, started)
        if self._cgroups is not None and self._group is not None:
            outcome = self._cgroups.check(outcome, self._group)
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
