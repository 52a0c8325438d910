"""Python 3: the system's CPython, isolated, byte-compiled in the sandbox and cached.

The interpreter is /usr/bin/python3 (else this process's own interpreter, its installation
then readable), run as `python3 -I -S -B -c RUN_BYTECODE`: isolated mode (no environment
variables, no user site, no script folder on sys.path), no `site` (so no site or
dist-packages: the standard library only), no byte-code writing; `RUN_BYTECODE` loads
sol.pyc from the test's folder and runs it as the __main__ module. It runs under the same
layers as a C++ binary: seccomp profile "run" (the allowlist; CPython's start-up, imports
and threads need nothing beyond it, so fork, exec, sockets and pipes end the program as a
security violation), exec'd by descriptor, Landlock (the system trees, where the standard
library lives, and the test's folder), rlimits, the memory cgroup and the output cap.

"Compiling" is byte-compilation: `compile()` of the source by the same interpreter in the
sandbox (uid, Landlock, seccomp, CPU and memory limits), which writes sol.pyc; a
SyntaxError, IndentationError or any other failure to compile is a CE whose diagnostics
are the interpreter's message. The byte code is cached by sha256(interpreter, version,
magic number, source) like C++ binaries, and copied into each test's fresh folder.

Memory: the interpreter's own resident memory (measured once per executor: an empty
program's peak RSS in the sandbox, rounded up to a MiB) is added to the problem's memory
limit as `Program.memory_allowance`, so a limit counts the program's data, as it does
for C++, whose static binary starts at about 1 MiB (docs/languages.md has the figures).

A checker program in Python runs as `python3 -I -S -B -c CHECKER_BOOT` on checker.py in
its folder (the source, cached by content): an uncaught exception exits 3, the checker
failing, not a wrong answer.

Cache layout under <cache dir>/python/ (writes atomic, `base.Executor`'s):
  pyc/<k2>/<key>.pyc        byte code of sources that compiled
  ce/<k2>/<key>.txt         the message of sources that did not
  checkers/<k2>/<key>.py    checker programs' sources
"""

from __future__ import annotations

import ast
import math
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from codefu_sandbox.languages.base import (
    BuildConfig,
    Command,
    Executor,
    Language,
    Program,
    atomic_write,
    digest,
)
from codefu_sandbox.process import RunLimits
from codefu_sandbox.runner import Runner, SandboxError
from codefu_sandbox.syscalls import name_of

FLAGS = ("-I", "-S", "-B")
SOURCE_NAME = "sol.py"
BYTECODE_NAME = "sol.pyc"
CHECKER_NAME = "checker.py"
MiB = 1 << 20
# Runs in the sandbox in a folder holding sol.py; writes sol.pyc or prints why not. The
# header past the magic number is not read when a .pyc is run as a script.
# Its imports are those the interpreter has already loaded (importlib.util and traceback
# would double a build's CPU); traceback only to report a compile error.
BYTE_COMPILE = (
    "import marshal, sys\n"
    "from _frozen_importlib_external import MAGIC_NUMBER\n"
    f"with open({SOURCE_NAME!r}, 'rb') as f:\n"
    "    source = f.read()\n"
    "try:\n"
    f"    code = compile(source, {SOURCE_NAME!r}, 'exec', dont_inherit=True)\n"
    "except Exception as exc:\n"
    "    import traceback\n"
    "    sys.stderr.write(''.join(traceback.format_exception_only(type(exc), exc)))\n"
    "    sys.exit(1)\n"
    f"with open({BYTECODE_NAME!r}, 'wb') as f:\n"
    "    f.write(MAGIC_NUMBER + bytes(12) + marshal.dumps(code))\n"
)
# What `site` gives every program and `-S` leaves out: the builtins exit() and quit(),
# defined as site.setquit defines them (`_sitebuiltins.Quitter`: closes stdin, raises
# SystemExit with its argument). One line, no name left in the program's globals. site's
# other builtins (help, copyright, credits, license) are for the interactive prompt; its
# other work (site and user packages on sys.path, sitecustomize) is left out on purpose.
SITE_BUILTINS = (
    "[setattr(__import__('builtins'), name, __import__('_sitebuiltins').Quitter(name, "
    "'Ctrl-D (i.e. EOF)')) for name in ('exit', 'quit')]\n"
)
# Runs the byte code in the test's folder as the __main__ module. Not `python3 sol.pyc`:
# the interpreter opens a script by its absolute path, through the judge's private
# folders that the sandbox uid cannot enter; a relative open from the folder works.
RUN_BYTECODE = (
    SITE_BUILTINS + f"exec(__import__('marshal').loads(open({BYTECODE_NAME!r}, 'rb').read()[16:]))"
)
# Runs checker.py from the checker's folder (a relative path: the folders above it are the
# judge's, closed to the checker's uid); an uncaught exception is the checker failing
# (exit 3), not a wrong answer (Python's own exit status 1).
CHECKER_BOOT = (
    SITE_BUILTINS + "import sys, traceback\n"
    f"sys.argv = [{CHECKER_NAME!r}, *sys.argv[1:]]\n"
    "try:\n"
    f"    with open({CHECKER_NAME!r}, 'rb') as f:\n"
    f"        code = compile(f.read(), {CHECKER_NAME!r}, 'exec')\n"
    f"    exec(code, {{'__name__': '__main__', '__file__': {CHECKER_NAME!r}}})\n"
    "except SystemExit:\n"
    "    raise\n"
    "except BaseException:\n"
    "    traceback.print_exc()\n"
    "    sys.exit(3)\n"
)
# The imports LiveCodeBench's runner puts before every program it judges (its
# `import_string`, in its order: a later module's names win): each module's names, the
# modules themselves, and a deep recursion limit; then the limit on integer digits its
# grading process sets for every program (`sys.set_int_max_str_digits(50000)`: an int
# of up to 50,000 digits converts to and from text, where Python's default stops at 4,300).
LIVECODEBENCH_MODULES = (
    "string",
    "re",
    "datetime",
    "collections",
    "heapq",
    "bisect",
    "copy",
    "math",
    "random",
    "statistics",
    "itertools",
    "functools",
    "operator",
    "io",
    "sys",
    "json",
)
LIVECODEBENCH_INT_DIGITS = 50_000
LIVECODEBENCH_PRELUDE = (
    "".join(
        f"from {module} import *\n" for module in (*LIVECODEBENCH_MODULES, "builtins", "typing")
    )
    + f"import {', '.join(LIVECODEBENCH_MODULES)}\n"
    + "sys.setrecursionlimit(50000)\n"
    # An interpreter older than the limit (before 3.10.7) has none to raise.
    + "if hasattr(sys, 'set_int_max_str_digits'):\n"
    + f"    sys.set_int_max_str_digits({LIVECODEBENCH_INT_DIGITS})\n"
)
VERSION_PROBE = (
    "import sys, importlib.util\n"
    "print(sys.version.replace(chr(10), ' '))\n"
    "print(importlib.util.MAGIC_NUMBER.hex())\n"
)


@dataclass(frozen=True, kw_only=True)
class PythonConfig(BuildConfig):
    """The interpreter (None: /usr/bin/python3, else this process's interpreter), on top of
    the byte-compilation limits (`BuildConfig`)."""

    interpreter: str | None = None


class Python(Language):
    """Python 3, the standard library only."""

    name = "python"
    display_name = "Python 3"
    suffixes = (".py",)
    fence_tags = ("python", "py", "python3")
    aliases = ("PYTHON3",)  # CodeContests' label (its PYTHON is Python 2)
    # Reads or writes: a block of sample input is not taken for code.
    program_pattern = re.compile(r"\b(?:input|print)\s*\(|\bsys\.std(?:in|out)\b|\bopen\s*\(\s*0\b")
    closing_token = ")"
    preludes: ClassVar[Mapping[str, str]] = {"livecodebench": LIVECODEBENCH_PRELUDE}

    def recognises(self, source: str) -> bool:
        """A Python source parses as Python 3 (parsed only, never run)."""
        try:
            ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
        return True

    def executor(self, cache_dir: Path, runner: Runner, config: Any = None) -> PythonExecutor:
        return PythonExecutor(cache_dir, runner, config, language=self)


def python_interpreter() -> tuple[str, tuple[Path, ...]]:
    """The Python programs run under and what it must read beyond the system trees:
    /usr/bin/python3 when present (nothing more), else this process's interpreter and
    its installation prefix."""
    system = shutil.which("python3", path="/usr/bin:/bin")
    if system is not None:
        return str(Path(system).resolve()), ()
    exe = Path(sys.executable).resolve()
    return str(exe), (Path(sys.base_prefix).resolve(),)


class PythonExecutor(Executor):
    """Python 3 submissions; thread- and process-safe on one cache dir."""

    source_name = SOURCE_NAME
    output_name = BYTECODE_NAME
    artifacts = "pyc"
    artifact_suffix = ".pyc"
    artifact_mode = 0o644
    step = "byte-compilation"
    no_output = "[the byte-compiler wrote no byte code]"
    config: PythonConfig

    def __init__(
        self,
        cache_dir: Path,
        runner: Runner,
        config: PythonConfig | None = None,
        language: Language | None = None,
    ) -> None:
        cfg = self.settings(config, PythonConfig)
        if cfg.interpreter is None:
            self.interpreter, self.readable = python_interpreter()
        else:
            found = shutil.which(cfg.interpreter)
            if found is None:
                raise SandboxError(
                    f"Python interpreter {cfg.interpreter!r} not found: install "
                    "python3 (Debian/Ubuntu: apt-get install python3) or pass its path"
                )
            self.interpreter, self.readable = str(Path(found).resolve()), ()
        self.version = self._version()
        identity = digest(self.interpreter.encode(), self.version.encode())
        super().__init__(cache_dir / "python", runner, cfg, identity, language)
        self.baseline_bytes = self._baseline()
        self.memory_allowance = math.ceil(self.baseline_bytes / MiB) * MiB

    def _version(self) -> str:
        done = subprocess.run(
            [self.interpreter, *FLAGS, "-c", VERSION_PROBE],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        if done.returncode != 0:
            raise SandboxError(
                f"{self.interpreter} does not start: {done.stderr[-500:]}; install python3 "
                "(Debian/Ubuntu: apt-get install python3) or pass PythonConfig(interpreter=...)"
            )
        return done.stdout.strip()

    def _command(self, code: str) -> Command:
        """The interpreter running `code`, as a submission runs (profile "run")."""
        return Command(
            (self.interpreter, *FLAGS, "-c", code),
            profile="run",
            syscalls=self.run_syscalls,
            readable=self.readable,
        )

    def _baseline(self) -> int:
        """Peak RSS of an empty program run as a submission runs (the interpreter's own)."""
        limits = RunLimits(
            cpu_seconds=10.0, wall_seconds=30.0, address_space=1 << 30, file_size=1 << 20
        )
        ran = self.run_in_sandbox(self._command("pass"), limits)
        outcome = ran.outcome
        if outcome.error is not None or outcome.exit_code != 0:
            refused = outcome.refused_syscall
            call = f", forbidden system call {name_of(refused)}" if refused is not None else ""
            raise SandboxError(
                f"{self.interpreter} does not run in the sandbox ({outcome.error or ''}"
                f"exit {outcome.exit_code}, signal {outcome.signal}{call}): {ran.stderr}"
            )
        return outcome.peak_memory_bytes

    def build_command(self) -> Command:
        """BYTE_COMPILE in the sandbox: writes sol.pyc, or the interpreter's message."""
        return self._command(BYTE_COMPILE)

    def program(self, artifact: Path) -> Program:
        """How cached byte code runs: the interpreter on the copy in the test's folder."""
        return Program(
            (self.interpreter, *FLAGS, "-c", RUN_BYTECODE),
            files={BYTECODE_NAME: artifact},
            readable=self.readable,
            memory_allowance=self.memory_allowance,
            syscalls=self.run_syscalls,
        )

    def with_prelude(self, program: Program, prelude: str) -> Program:
        """`program` run after `prelude` in the same module (`__main__`): the prelude's names
        are the program's globals; the program's own byte code, and so its line numbers,
        stay as they are."""
        return replace(program, argv=(self.interpreter, *FLAGS, "-c", prelude + RUN_BYTECODE))

    def checker(self, source: str) -> Program:
        """The interpreter on the checker's source (cached by content) under CHECKER_BOOT."""
        key = self.key(source)
        script = self.store / "checkers" / key[:2] / f"{key}.py"
        if not script.exists():
            atomic_write(script, source.encode("utf-8", "surrogateescape"))
        return Program(
            (self.interpreter, *FLAGS, "-c", CHECKER_BOOT),
            files={CHECKER_NAME: script},
            readable=self.readable,
            syscalls=self.run_syscalls,
        )


LANGUAGE = Python()
