"""Checker programs: untrusted code a problem brings, run under the sandbox's isolation.

Protocol (testlib's): `checker INPUT OUTPUT ANSWER`, run in a fresh folder of its own that
holds the three files; exit 0 accepted, 1 wrong answer, 2 presentation error (a wrong
answer here), 3 the checker failed, 7 partial points (`checkers.testlib.result_of`).
Anything else (another exit code, a crash, a CPU, wall, memory or output limit) is the
checker's failure: an internal error for that test, never the program's fault.

A checker runs like a submission (rlimits, an unprivileged uid of its own, Landlock: it
reads the system trees and writes only in its folder, no network, a memory cgroup where
available) under seccomp profile "checker": the compiler's denylist, and no new process,
no exec and no signal but to itself, which a Python interpreter lives under. C++ checkers
are compiled once by the judge's compiler and cached like submissions; a line
`#include "testlib.h"` is replaced by the user's copy of testlib.h (`testlib`, a path), so
the cache key covers its content. Python checkers run as `python3 -I -S -B` (isolated, no
site) on checker.py in the folder; an uncaught exception exits 3 (the checker failed).
"""

from __future__ import annotations

import re
import shutil
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from codefu_sandbox.checkers import CheckResult
from codefu_sandbox.checkers.testlib import result_of
from codefu_sandbox.compiler import Compiler
from codefu_sandbox.runner import RunLimits, Runner

LANGUAGES = ("cpp", "python")
# A checker's own limits per test, unless its configuration sets them.
DEFAULT_TIME_SECONDS = 10.0
DEFAULT_MEMORY_BYTES = 1 << 30
OUTPUT_LIMIT = 1 << 20  # its stdout, stderr and every file it writes
MESSAGE_CHARS = 500
# Runs checker.py from the checker's folder (a relative path: the folders above it are the
# judge's, closed to the checker's uid); an uncaught exception is the checker failing
# (exit 3), not a wrong answer (Python's own exit status 1).
PYTHON_BOOT = (
    "import sys, traceback\n"
    "sys.argv = ['checker.py', *sys.argv[1:]]\n"
    "try:\n"
    "    with open('checker.py', 'rb') as f:\n"
    "        code = compile(f.read(), 'checker.py', 'exec')\n"
    "    exec(code, {'__name__': '__main__', '__file__': 'checker.py'})\n"
    "except SystemExit:\n"
    "    raise\n"
    "except BaseException:\n"
    "    traceback.print_exc()\n"
    "    sys.exit(3)\n"
)
_TESTLIB_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]testlib\.h[>"][^\n]*$', re.MULTILINE)


class CheckerError(ValueError):
    """A checker program that cannot be prepared (no testlib.h given, a compile error)."""


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


@dataclass(frozen=True)
class PreparedChecker:
    """What to execute: `argv`, then the three file names; `script`: the Python source
    the checker's folder holds as checker.py ("" for a binary); `readable`: what it
    reads beyond the system trees."""

    argv: tuple[str, ...]
    script: str = ""
    readable: tuple[Path, ...] = ()


def with_testlib(source: str, testlib: str | Path | None) -> str:
    """`source` with its `#include "testlib.h"` replaced by that file's text.

    Raises CheckerError when the source includes testlib.h and no path (or a missing
    file) is given: testlib.h is not shipped with codefu; point to your copy."""
    if not _TESTLIB_INCLUDE.search(source):
        return source
    if not testlib:
        raise CheckerError(
            'the checker includes "testlib.h" but no testlib.h was given: download it '
            "(https://github.com/MikeMirzayanov/testlib) and pass its path (the checker "
            "parameter `testlib`, data.checkers.testlib for prepare)"
        )
    path = Path(testlib).expanduser()
    if not path.is_file():
        raise CheckerError(f"testlib.h not found at {path}: pass the path of your copy")
    text = path.read_text(errors="surrogateescape")
    return _replace_include(source, text)


def _replace_include(source: str, header: str) -> str:
    match = _TESTLIB_INCLUDE.search(source)
    assert match is not None
    return source[: match.start()] + header + "\n" + source[match.end() :]


def python_interpreter() -> tuple[str, tuple[Path, ...]]:
    """The Python a checker runs under and what it must read beyond the system trees:
    /usr/bin/python3 when present (nothing more), else this process's interpreter and
    its installation prefix."""
    system = shutil.which("python3", path="/usr/bin:/bin")
    if system is not None:
        return str(Path(system).resolve()), ()
    exe = Path(sys.executable).resolve()
    return str(exe), (Path(sys.base_prefix).resolve(),)


class CheckerRunner:
    """Prepares and runs checker programs for one judge (its runner and compiler)."""

    def __init__(self, runner: Runner, compiler: Compiler) -> None:
        self.runner = runner
        self.compiler = compiler
        self._lock = threading.Lock()
        self._prepared: dict[tuple[str, str, str], PreparedChecker] = {}

    def prepare(self, source: str, language: str, testlib: str = "") -> PreparedChecker:
        """Compile (C++, once per source: the compiler's cache) or set up (Python) a
        checker; CheckerError with the reason when it cannot run."""
        key = (source, language, testlib)
        with self._lock:
            found = self._prepared.get(key)
        if found is not None:
            return found
        if language == "cpp":
            compiled, binary = self.compiler.compile(with_testlib(source, testlib))
            if binary is None:
                raise CheckerError(f"the checker does not compile:\n{compiled.diagnostics[:2000]}")
            prepared = PreparedChecker((str(binary),))
        elif language == "python":
            python, readable = python_interpreter()
            prepared = PreparedChecker(
                (python, "-I", "-S", "-B", "-c", PYTHON_BOOT), script=source, readable=readable
            )
        else:
            raise CheckerError(f"checker language {language!r}: use one of {', '.join(LANGUAGES)}")
        with self._lock:
            self._prepared[key] = prepared
        return prepared

    def check(
        self,
        checker: PreparedChecker,
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
            if checker.script:
                (folder / "checker.py").write_bytes(checker.script.encode(*encode))
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
