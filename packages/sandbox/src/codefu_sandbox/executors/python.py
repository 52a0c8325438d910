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

Cache layout under <cache dir>/python/ (writes atomic, as the compiler's):
  pyc/<k2>/<key>.pyc   byte code of sources that compiled
  ce/<k2>/<key>.txt    the message of sources that did not
"""

from __future__ import annotations

import math
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from codefu_sandbox.checker_runner import python_interpreter
from codefu_sandbox.compiler import (
    atomic_write,
    compile_failure,
    digest,
    install_output,
    read_head,
)
from codefu_sandbox.executors.base import Program
from codefu_sandbox.runner import RunLimits, Runner, SandboxError
from codefu_sandbox.verdicts import CompileResult, RunOutcome

FLAGS = ("-I", "-S", "-B")
SOURCE_NAME = "sol.py"
BYTECODE_NAME = "sol.pyc"
MiB = 1 << 20
# Runs in the sandbox in a folder holding sol.py; writes sol.pyc or prints why not. The
# header past the magic number is not read when a .pyc is run as a script.
BYTE_COMPILE = (
    "import marshal, sys, traceback\n"
    "from importlib.util import MAGIC_NUMBER\n"
    f"with open({SOURCE_NAME!r}, 'rb') as f:\n"
    "    source = f.read()\n"
    "try:\n"
    f"    code = compile(source, {SOURCE_NAME!r}, 'exec', dont_inherit=True)\n"
    "except Exception as exc:\n"
    "    sys.stderr.write(''.join(traceback.format_exception_only(type(exc), exc)))\n"
    "    sys.exit(1)\n"
    f"with open({BYTECODE_NAME!r}, 'wb') as f:\n"
    "    f.write(MAGIC_NUMBER + bytes(12) + marshal.dumps(code))\n"
)
# Runs the byte code in the test's folder as the __main__ module. Not `python3 sol.pyc`:
# the interpreter opens a script by its absolute path, through the judge's private
# folders that the sandbox uid cannot enter; a relative open from the folder works.
RUN_BYTECODE = f"exec(__import__('marshal').loads(open({BYTECODE_NAME!r}, 'rb').read()[16:]))"
VERSION_PROBE = (
    "import sys, importlib.util\n"
    "print(sys.version.replace(chr(10), ' '))\n"
    "print(importlib.util.MAGIC_NUMBER.hex())\n"
)


@dataclass(frozen=True)
class PythonConfig:
    """Byte-compilation limits (per source; past `cpu_seconds`: CE) and the interpreter
    (None: /usr/bin/python3, else this process's interpreter)."""

    interpreter: str | None = None
    cpu_seconds: float = 10.0
    wall_seconds: float = 60.0  # backstop; past it the host is overloaded: IE, not CE
    memory_bytes: int = 1 << 30
    output_bytes: int = 64 << 20  # the byte code and the message
    diagnostics_chars: int = 16_384
    max_source_bytes: int = 1 << 20
    cache_errors: bool = True


class PythonExecutor:
    """Python 3 submissions; thread- and process-safe on one cache dir."""

    language = "python"

    def __init__(self, cache_dir: Path, runner: Runner, config: PythonConfig | None = None) -> None:
        self.config = config or PythonConfig()
        if self.config.interpreter is None:
            self.interpreter, self.readable = python_interpreter()
        else:
            found = shutil.which(self.config.interpreter)
            if found is None:
                raise SandboxError(
                    f"Python interpreter {self.config.interpreter!r} not found: install "
                    "python3 (Debian/Ubuntu: apt-get install python3) or pass its path"
                )
            self.interpreter, self.readable = str(Path(found).resolve()), ()
        self.cache_dir = cache_dir / "python"
        self.runner = runner
        self.version = self._version()
        self._key = digest(self.interpreter.encode(), self.version.encode())
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

    def _baseline(self) -> int:
        """Peak RSS of an empty program run as a submission runs (the interpreter's own)."""
        limits = RunLimits(
            cpu_seconds=10.0, wall_seconds=30.0, address_space=1 << 30, file_size=1 << 20
        )
        ran = self._run("pass", limits)
        outcome = ran.outcome
        if outcome.error is not None or outcome.exit_code != 0:
            raise SandboxError(
                f"{self.interpreter} does not run in the sandbox ({outcome.error or ''}"
                f"exit {outcome.exit_code}, signal {outcome.signal}): {ran.stderr}"
            )
        return outcome.peak_memory_bytes

    def _run(
        self, code: str, limits: RunLimits, source: bytes | None = None, keep: Path | None = None
    ) -> _Ran:
        """Run `code` with the interpreter in the sandbox (the judge's uid, Landlock, seccomp,
        `limits`) in a fresh folder, holding `source` as sol.py and writable when given,
        read-only otherwise. When it exits 0, its sol.pyc is installed at `keep` if given."""
        with self.runner.workspace() as private, self.runner.uids.take() as uid:
            work = private / "w"
            work.mkdir()
            if source is not None:
                (work / SOURCE_NAME).write_bytes(source)
                (work / SOURCE_NAME).chmod(0o644)
            outcome = self.runner.run(
                [self.interpreter, *FLAGS, "-c", code],
                cwd=work,
                limits=limits,
                stdin=None,
                stdout=private / "stdout",
                stderr=private / "stderr",
                readable=self.readable,
                uid=uid,
                writable_cwd=source is not None,
            )
            stderr = read_head(private / "stderr", self.config.diagnostics_chars)
            ok = outcome.error is None and outcome.killed is None and outcome.exit_code == 0
            kept = ok and keep is not None and install_output(work / BYTECODE_NAME, keep, 0o644)
        return _Ran(outcome, stderr, kept)

    def key(self, source: str) -> str:
        return digest(self._key.encode(), source.encode("utf-8", "surrogateescape"))

    def program(self, bytecode: Path) -> Program:
        """How cached byte code runs: the interpreter on the copy in the test's folder."""
        return Program(
            (self.interpreter, *FLAGS, "-c", RUN_BYTECODE),
            files={BYTECODE_NAME: bytecode},
            readable=self.readable,
            memory_allowance=self.memory_allowance,
        )

    def compile(self, source: str) -> tuple[CompileResult, Program | None]:
        """Byte-compile (or take the cached byte code)."""
        started = time.perf_counter()
        data = source.encode("utf-8", "surrogateescape")
        cfg = self.config
        if len(data) > cfg.max_source_bytes:
            message = f"source is {len(data)} bytes, over the {cfg.max_source_bytes}-byte limit"
            return CompileResult(False, 0.0, False, message), None
        key = self.key(source)
        bytecode = self.cache_dir / "pyc" / key[:2] / f"{key}.pyc"
        if bytecode.exists():
            return CompileResult(True, time.perf_counter() - started, True, ""), self.program(
                bytecode
            )
        error_file = self.cache_dir / "ce" / key[:2] / f"{key}.txt"
        if cfg.cache_errors and error_file.exists():
            text = error_file.read_text(errors="replace")
            return CompileResult(False, time.perf_counter() - started, True, text), None
        result = self._compile_sandboxed(data, bytecode)
        result.seconds = time.perf_counter() - started
        if result.ok:
            return result, self.program(bytecode)
        if cfg.cache_errors and result.diagnostics and not result.diagnostics.startswith("["):
            atomic_write(error_file, result.diagnostics.encode())
        return result, None

    def _compile_sandboxed(self, data: bytes, bytecode: Path) -> CompileResult:
        """Run BYTE_COMPILE in the sandbox; on success install the byte code atomically."""
        cfg = self.config
        limits = RunLimits(
            cpu_seconds=cfg.cpu_seconds,
            wall_seconds=cfg.wall_seconds,
            address_space=cfg.memory_bytes,
            file_size=cfg.output_bytes,
            stack_unlimited=False,
        )
        ran = self._run(BYTE_COMPILE, limits, source=data, keep=bytecode)
        step = "byte-compilation"
        failed = compile_failure(ran.outcome, ran.stderr, cfg.cpu_seconds, cfg.wall_seconds, step)
        if failed is not None:
            return failed
        if not ran.kept:
            return CompileResult(False, 0.0, False, "[the byte-compiler wrote no byte code]")
        return CompileResult(True, 0.0, False, ran.stderr)


@dataclass(frozen=True)
class _Ran:
    """How an interpreter run in the sandbox ended: its outcome, the head of its stderr, and
    whether its byte code was installed."""

    outcome: RunOutcome
    stderr: str
    kept: bool
