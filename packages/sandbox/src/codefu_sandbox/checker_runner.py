"""Checker programs: untrusted code a problem brings, run under the sandbox's isolation.

Protocol (testlib's): `checker INPUT OUTPUT ANSWER`, run in a fresh folder of its own that
holds the three files; exit 0 accepted, 1 wrong answer, 2 presentation error (a wrong
answer here), 3 the checker failed, 7 partial points (`result_of`). Anything else
(another exit code, a crash, a CPU, wall, memory or output limit) is the checker's
failure: an internal error for that test, never the program's fault.

A checker runs like a submission (rlimits, an unprivileged uid of its own, Landlock: it
reads the system trees and writes only in its folder, no network, a memory cgroup where
available) under seccomp profile "checker": the compiler's denylist, and no new process,
no exec and no signal but to itself, which a Python interpreter lives under, widened by the
calls its language declares (`Language.run_syscalls`, carried by its `Program`). Its language
builds it (`Language.checker_source`, then `Executor.checker`: a C++ checker compiled once
and cached like submissions, testlib.h inlined; a Python checker run by the interpreter on
its source, an uncaught exception exiting 3), into a `Program` whose files are copied
into its folder.
"""

from __future__ import annotations

import re
import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from codefu_sandbox import languages
from codefu_sandbox.languages import CheckerError, Executor, Program
from codefu_sandbox.process import RunLimits
from codefu_sandbox.records import CheckResult
from codefu_sandbox.runner import Runner
from codefu_sandbox.syscalls import name_of

# A checker's own limits per test, unless its configuration sets them.
DEFAULT_TIME_SECONDS = 10.0
DEFAULT_MEMORY_BYTES = 1 << 30
OUTPUT_LIMIT = 1 << 20  # its stdout, stderr and every file it writes
MESSAGE_CHARS = 500
_POINTS = re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")

__all__ = [
    "DEFAULT_MEMORY_BYTES",
    "DEFAULT_TIME_SECONDS",
    "CheckerError",
    "CheckerLimits",
    "CheckerRunner",
    "result_of",
]


@dataclass(frozen=True)
class CheckerLimits:
    """A checker's own limits per test: CPU seconds and memory bytes."""

    time_seconds: float = DEFAULT_TIME_SECONDS
    memory_bytes: int = DEFAULT_MEMORY_BYTES

    def run_limits(self) -> RunLimits:
        return RunLimits(
            cpu_seconds=self.time_seconds,
            wall_seconds=3 * self.time_seconds + 1.0,
            hard_wall_seconds=10 * self.time_seconds + 10.0,
            address_space=self.memory_bytes + (64 << 20),
            cgroup_memory=self.memory_bytes,
            file_size=OUTPUT_LIMIT,
            processes=64,
            open_files=64,
        )


class CheckerRunner:
    """Prepares and runs checker programs for one judge: `executor` gives the judge's
    executor of a language (`Judge.executor`)."""

    def __init__(self, runner: Runner, executor: Callable[[str], Executor]) -> None:
        self.runner = runner
        self.executor = executor
        self._lock = threading.Lock()
        self._prepared: dict[tuple[str, str, str], Program] = {}

    def prepare(self, source: str, language: str, testlib: str = "") -> Program:
        """Build (once per source: the executor's cache) a checker program in `language`;
        CheckerError with the reason when it cannot run."""
        key = (source, language, testlib)
        with self._lock:
            found = self._prepared.get(key)
        if found is not None:
            return found
        try:
            declared = languages.get(language)
        except ValueError as exc:
            raise CheckerError(f"checker program: {exc}") from None
        prepared = self.executor(declared.name).checker(declared.checker_source(source, testlib))
        with self._lock:
            self._prepared[key] = prepared
        return prepared

    def check(
        self,
        checker: Program,
        *,
        input: str,
        output: bytes | str,
        expected: str,
        limits: CheckerLimits,
    ) -> CheckResult:
        """Run the checker once on one test; its verdict (see the module docstring)."""
        with self.runner.workspace() as private, self.runner.uids.take() as uid:
            folder = private / "checker"
            folder.mkdir()
            encode = "utf-8", "surrogateescape"
            (folder / "input.txt").write_bytes(input.encode(*encode))
            out = output if isinstance(output, bytes) else output.encode(*encode)
            (folder / "output.txt").write_bytes(out)
            (folder / "answer.txt").write_bytes(expected.encode(*encode))
            for name, cached in checker.files.items():  # e.g. a Python checker's source
                shutil.copyfile(cached, folder / name)
            for entry in folder.iterdir():
                entry.chmod(0o644)
            outcome = self.runner.run(
                [*checker.argv, "input.txt", "output.txt", "answer.txt"],
                cwd=folder,
                limits=limits.run_limits(),
                stdin=None,
                stdout=private / "stdout",
                stderr=private / "stderr",
                profile="checker",
                syscalls=checker.syscalls,
                readable=checker.readable,
                env={"LC_ALL": "C.UTF-8", "PATH": "/usr/bin:/bin"},
                uid=uid,
                writable_cwd=True,
            )
            message = _head(private / "stderr") or _head(private / "stdout")
        if outcome.error is not None:
            return _failed(f"the checker could not run: {outcome.error}")
        if outcome.killed == "cpu":
            return _failed(f"the checker exceeded its {limits.time_seconds:g} s of CPU")
        if outcome.killed == "wall":
            return _failed("the checker exceeded its wall-clock limit (it hung)")
        if outcome.memory_cap_hit:
            return _failed(f"the checker exceeded its {limits.memory_bytes >> 20} MiB of memory")
        if outcome.refused_syscall is not None:
            refused = name_of(outcome.refused_syscall)
            return _failed(f"the checker made a forbidden system call: {refused}")
        if outcome.signal is not None or outcome.exit_code is None:
            return _failed(f"the checker was killed by signal {outcome.signal}: {message}")
        return result_of(outcome.exit_code, message)


def _failed(message: str) -> CheckResult:
    return CheckResult(False, message[:MESSAGE_CHARS], internal_error=True)


def _head(path: Path) -> str:
    try:
        with path.open("rb") as f:
            return f.read(MESSAGE_CHARS).decode(errors="replace").strip()
    except FileNotFoundError:
        return ""


def result_of(code: int, message: str) -> CheckResult:
    """A testlib checker's verdict from its exit code and message (module docstring; exit
    7's points are the first number in the message, a fraction of the test's score:
    accepted only at 1 or more)."""
    if code == 0:
        return CheckResult(True, message)
    if code == 1:
        return CheckResult(False, message or "wrong answer")
    if code == 2:
        return CheckResult(False, f"presentation error: {message}")
    if code == 7:
        found = _POINTS.search(message)
        if found is None:
            return CheckResult(
                False, f"checker gave points without a number: {message}", internal_error=True
            )
        return CheckResult(float(found.group()) >= 1.0, message)
    return CheckResult(False, f"checker failed (exit {code}): {message}", internal_error=True)
