"""Compile C++ solutions: precompiled bits/stdc++.h, content-addressed binary cache, limits.

Untrusted source is compiled by g++ running in the sandbox (`Runner`, compile profile):
unprivileged uid when root, Landlock limiting reads to system trees + the precompiled
header, no network, CPU/wall/memory/file-size limits. So `#include "/etc/shadow"` or
`.incbin "secret"` fail, `#include "/dev/random"` fails (not readable under Landlock;
stopped at the wall limit otherwise), and huge diagnostics are truncated.

Time: each compiler process may use `cpu_seconds` of CPU (RLIMIT_CPU); a source that makes
the compiler work longer is a compile error. The wall limit is only a backstop, several
times larger: on a host so loaded that a compile takes that long in wall time, the judge
failed (SandboxError → IE), and the program is not blamed (a CE would cost it a reward).

Binaries are linked statically where the toolchain can (as Codeforces does): a static
binary starts in ~0.4 ms instead of ~1.1 ms, which judging pays on every test. gold links
them about as fast as the default linker links a dynamic one.

Cache layout under the cache directory (all writes atomic: temp file/dir + rename):
  link/<key>.txt                the link flags chosen for a compiler version (probed once)
  pch/<key>/bits/stdc++.h.gch   one per (compiler version, flags); <key>.lock serialises builds
  bin/<k2>/<key>                binaries keyed by sha256(compiler version, flags, source)
  ce/<k2>/<key>.txt             diagnostics of deterministic compile errors
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import os
import shutil
import struct
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from codefu_sandbox.runner import RunLimits, Runner, SandboxError
from codefu_sandbox.verdicts import CompileResult, RunOutcome

DEFAULT_FLAGS = ("-O2", "-DONLINE_JUDGE", "-pipe")
# Link flags in order of preference; the first this toolchain links a C++ program with is
# used (static needs libc.a and libstdc++.a; gold is missing from some binutils builds).
LINK_CHOICES: tuple[tuple[str, ...], ...] = (
    ("-static", "-fuse-ld=gold"),
    ("-static",),
    ("-fuse-ld=gold",),
    (),
)
PCH_HEADER = "bits/stdc++.h"


class CompilerNotFoundError(SandboxError):
    """No usable C++ compiler; the message names the package to install."""


@dataclass(frozen=True)
class CompilerConfig:
    compiler: str = "g++"
    std: str = "c++17"
    flags: tuple[str, ...] = DEFAULT_FLAGS
    cpu_seconds: float = 10.0  # per compiler process; past it: CE
    wall_seconds: float = 60.0  # backstop; past it: the judge failed (overloaded host), IE
    memory_bytes: int = 2 << 30  # address space per compiler process
    output_bytes: int = 128 << 20  # object files, the binary and diagnostics
    diagnostics_chars: int = 16_384
    max_source_bytes: int = 1 << 20
    use_pch: bool = True
    cache_errors: bool = True
    extra: tuple[str, ...] = field(default=())
    # None: the first of LINK_CHOICES that works with this compiler (probed once per cache).
    link_flags: tuple[str, ...] | None = None

    def all_flags(self) -> list[str]:
        return [self.flags[0], f"-std={self.std}", *self.flags[1:], *self.extra]


def digest(*parts: bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()


def atomic_write(path: Path, data: bytes, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        Path(tmp).chmod(mode)
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class Compiler:
    """Compiles sources to cached binaries; thread- and process-safe on one cache dir."""

    def __init__(
        self, cache_dir: Path, runner: Runner, config: CompilerConfig | None = None
    ) -> None:
        self.config = config or CompilerConfig()
        found = shutil.which(self.config.compiler)
        if found is None:
            raise CompilerNotFoundError(
                f"C++ compiler {self.config.compiler!r} not found on PATH: install g++ "
                "(Debian/Ubuntu: apt-get install g++; Fedora: dnf install gcc-c++)."
            )
        self.path = str(Path(found).resolve())
        self.cache_dir = cache_dir
        self.runner = runner
        self.version = self._version()
        self.flags = self.config.all_flags()
        self.link_flags = (
            self.config.link_flags if self.config.link_flags is not None else self._probe_link()
        )
        self._flag_key = digest(
            self.version.encode(), "\0".join([*self.flags, *self.link_flags]).encode()
        )
        self._pch: Path | None = None
        self._pch_checked = False

    def _version(self) -> str:
        done = subprocess.run(
            [self.path, "-v"], capture_output=True, text=True, check=False, timeout=30
        )
        if done.returncode != 0:
            raise CompilerNotFoundError(f"{self.path} -v failed: {done.stderr[-500:]}")
        return f"{self.path}\n{done.stderr.strip()}"

    def _probe_link(self) -> tuple[str, ...]:
        """The first of LINK_CHOICES that links a C++ program here (cached per version)."""
        record = self.cache_dir / "link" / f"{digest(self.version.encode())[:24]}.txt"
        with contextlib.suppress(OSError):
            return tuple(record.read_text().split())
        chosen: tuple[str, ...] = ()
        with tempfile.TemporaryDirectory(dir=self.cache_dir) as work:
            probe = Path(work) / "probe.cpp"
            probe.write_text("#include <iostream>\nint main() { std::cout << 1 << std::endl; }\n")
            for flags in LINK_CHOICES:
                done = subprocess.run(
                    [self.path, *self.flags, *flags, str(probe), "-o", str(Path(work) / "probe")],
                    capture_output=True,
                    check=False,
                    timeout=120,
                )
                if done.returncode == 0:
                    ran = subprocess.run(
                        [str(Path(work) / "probe")], capture_output=True, check=False, timeout=30
                    )
                    if ran.returncode == 0 and ran.stdout == b"1\n":
                        chosen = flags
                        break
        atomic_write(record, (" ".join(chosen) + "\n").encode())
        return chosen

    # ------------------------------------------------------------ precompiled header
    def pch_dir(self) -> Path | None:
        """The directory holding bits/stdc++.h.gch for these flags, built on first use.

        Built once per (compiler version, flags) under a file lock, in a temporary
        directory renamed into place, then verified: a probe compiled with `-H
        -Winvalid-pch` must report the .gch as used (g++ silently ignores a PCH whose
        flags differ). A PCH that fails the check is recorded and not used.
        """
        if not self.config.use_pch:
            return None
        if self._pch_checked:
            return self._pch
        root = self.cache_dir / "pch"
        target = root / self._flag_key[:24]
        unusable = root / f"{self._flag_key[:24]}.unusable"
        if not (target / PCH_HEADER).with_suffix(".h.gch").exists() and not unusable.exists():
            root.mkdir(parents=True, exist_ok=True)
            with (root / f"{self._flag_key[:24]}.lock").open("w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                if not target.exists() and not unusable.exists():
                    self._build_pch(root, target, unusable)
        self._pch = target if target.exists() else None
        self._pch_checked = True
        return self._pch

    def _build_pch(self, root: Path, target: Path, unusable: Path) -> None:
        tmp = Path(tempfile.mkdtemp(dir=root, prefix=".build-"))
        try:
            (tmp / "bits").mkdir()
            header = tmp / "wrapper.h"
            header.write_text(f"#include <{PCH_HEADER}>\n")
            gch = tmp / "bits" / "stdc++.h.gch"
            done = subprocess.run(
                [self.path, *self.flags, "-x", "c++-header", str(header), "-o", str(gch)],
                capture_output=True,
                text=True,
                check=False,
                timeout=300,
            )
            header.unlink()
            if done.returncode != 0 or not self._pch_works(tmp):
                unusable.write_text(done.stderr[-4000:] or "the PCH was built but not used\n")
                return
            for path in (tmp, tmp / "bits"):
                path.chmod(0o755)
            gch.chmod(0o644)
            with contextlib.suppress(OSError):  # another process won the race: same PCH
                tmp.rename(target)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def _pch_works(self, pch: Path) -> bool:
        with tempfile.TemporaryDirectory(dir=self.cache_dir) as work:
            probe = Path(work) / "probe.cpp"
            probe.write_text(f"#include <{PCH_HEADER}>\nint main() {{ return 0; }}\n")
            done = subprocess.run(
                [
                    self.path,
                    *self.flags,
                    "-I",
                    str(pch),
                    "-Winvalid-pch",
                    "-H",
                    "-fsyntax-only",
                    str(probe),
                ],
                capture_output=True,
                text=True,
                check=False,
                timeout=60,
            )
        return done.returncode == 0 and any(
            line.startswith("!") and line.endswith(".gch") for line in done.stderr.splitlines()
        )

    # ------------------------------------------------------------------- compiling
    def key(self, source: str) -> str:
        return digest(self._flag_key.encode(), source.encode("utf-8", "surrogateescape"))

    def binary_path(self, key: str) -> Path:
        return self.cache_dir / "bin" / key[:2] / key

    def compile(self, source: str) -> tuple[CompileResult, Path | None]:
        """Compile (or fetch from the cache); the binary path when ok."""
        started = time.perf_counter()
        data = source.encode("utf-8", "surrogateescape")
        if len(data) > self.config.max_source_bytes:
            return CompileResult(
                False,
                0.0,
                False,
                f"source is {len(data)} bytes, over the {self.config.max_source_bytes}-byte limit",
            ), None
        key = self.key(source)
        binary = self.binary_path(key)
        if binary.exists():
            return CompileResult(True, time.perf_counter() - started, True, ""), binary
        error_file = self.cache_dir / "ce" / key[:2] / f"{key}.txt"
        if self.config.cache_errors and error_file.exists():
            text = error_file.read_text(errors="replace")
            return CompileResult(False, time.perf_counter() - started, True, text), None
        pch = self.pch_dir()
        result = self._compile_sandboxed(data, pch, binary)
        result.seconds = time.perf_counter() - started
        if result.ok:
            result.pch_used = result.pch_used and PCH_HEADER in source
            return result, binary
        if (
            self.config.cache_errors
            and result.diagnostics
            and not result.diagnostics.startswith("[")
        ):
            atomic_write(error_file, result.diagnostics.encode())
        return result, None

    def _compile_sandboxed(self, data: bytes, pch: Path | None, binary: Path) -> CompileResult:
        """Run g++ in the sandbox; on success install the binary at `binary` atomically."""
        cfg = self.config
        with self.runner.workspace() as private, self.runner.uids.take() as uid:
            work = private / "w"
            work.mkdir()
            (work / "sol.cpp").write_bytes(data)
            (work / "sol.cpp").chmod(0o644)
            args = [self.path, *self.flags]
            if pch is not None:
                args += ["-I/proc/self/fd/3", "-Winvalid-pch"]
            args += [*self.link_flags, "-fdiagnostics-color=never", "sol.cpp", "-o", "sol"]
            limits = RunLimits(
                cpu_seconds=cfg.cpu_seconds,
                wall_seconds=cfg.wall_seconds,
                address_space=cfg.memory_bytes,
                file_size=cfg.output_bytes,
                processes=256,
                open_files=256,
                stack_unlimited=False,
            )
            outcome = self.runner.run(
                args,
                cwd=work,
                limits=limits,
                stdin=None,
                stdout=private / "stdout",
                stderr=private / "stderr",
                profile="compile",
                readable=(pch,) if pch is not None else (),
                writable=(Path("/dev/null"),),
                pch_dir=pch,
                env={"PATH": "/usr/local/bin:/usr/bin:/bin", "TMPDIR": ".", "LC_ALL": "C"},
                uid=uid,
            )
            diagnostics = read_head(private / "stderr", cfg.diagnostics_chars)
            failed = compile_failure(outcome, diagnostics, cfg.cpu_seconds, cfg.wall_seconds)
            if failed is not None:
                return failed
            if not install_output(work / "sol", binary, 0o755):
                return CompileResult(False, 0.0, False, "[the compiler produced no binary]")
            pch_used = pch is not None and "not using" not in diagnostics
            return CompileResult(True, 0.0, False, diagnostics, pch_used=pch_used)


def compile_failure(
    outcome: RunOutcome,
    diagnostics: str,
    cpu_seconds: float,
    wall_seconds: float,
    step: str = "compilation",
) -> CompileResult | None:
    """The compile error of a sandboxed compiler run that did not exit 0 (over its CPU, an
    error, killed by a signal); None when it did. SandboxError when the judge failed, not
    the source: the sandbox, or the wall backstop on an overloaded host. `step` names the
    run in the messages ("compilation", "byte-compilation")."""
    if outcome.error is not None:
        raise SandboxError(f"{step} in the sandbox failed: {outcome.error}")
    if outcome.killed == "wall":
        raise SandboxError(
            f"{step} took over {wall_seconds:g} s of wall time within its {cpu_seconds:g} s "
            "of CPU: the host is overloaded (fewer judge workers per CPU), not a compile error"
        )
    over_cpu = f"[{step} exceeded {cpu_seconds:g} s of CPU]"
    if outcome.killed == "cpu":
        return CompileResult(False, 0.0, False, over_cpu)
    if outcome.exit_code == 0:
        return None
    if "CPU time limit exceeded" in diagnostics:  # RLIMIT_CPU stopped a child (cc1plus)
        diagnostics = f"{over_cpu}\n{diagnostics}"
    if outcome.signal is not None:
        diagnostics = f"[{step} killed by signal {outcome.signal}]\n{diagnostics}"
    return CompileResult(False, 0.0, False, diagnostics or f"{step} failed")


def install_output(built: Path, target: Path, mode: int) -> bool:
    """Copy a compiler's output `built` to `target` atomically with `mode`; False when it
    wrote none (or a link, not a file)."""
    if not built.is_file() or built.is_symlink():
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    staged = target.parent / f".tmp-{os.getpid()}-{time.monotonic_ns()}"
    shutil.copyfile(built, staged)
    staged.chmod(mode)
    staged.replace(target)
    return True


@functools.lru_cache(maxsize=4096)
def static_memory_bytes(binary: Path) -> int:
    """Memory the kernel maps at exec for a 64-bit ELF binary: the sum of its PT_LOAD
    segments' sizes (code, data, bss). 0 when the file is not a 64-bit ELF."""
    try:
        with binary.open("rb") as f:
            header = f.read(64)
            if len(header) < 64 or header[:4] != b"\x7fELF" or header[4] != 2:
                return 0
            order = "<" if header[5] == 1 else ">"
            phoff = struct.unpack_from(order + "Q", header, 0x20)[0]
            phentsize, phnum = struct.unpack_from(order + "HH", header, 0x36)
            f.seek(phoff)
            table = f.read(phentsize * phnum)
    except OSError:
        return 0
    total = 0
    for i in range(phnum):
        entry = table[i * phentsize : (i + 1) * phentsize]
        if len(entry) >= 0x30 and struct.unpack_from(order + "I", entry, 0)[0] == 1:  # PT_LOAD
            total += struct.unpack_from(order + "Q", entry, 0x28)[0]
    return total


def read_head(path: Path, limit: int) -> str:
    try:
        with path.open("rb") as f:
            data = f.read(limit + 1)
    except OSError:
        return ""
    text = data[:limit].decode(errors="replace")
    if len(data) > limit:
        text += "\n[diagnostics truncated]"
    return text
