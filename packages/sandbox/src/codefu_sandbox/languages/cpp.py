"""C++17: g++ in the sandbox with a precompiled bits/stdc++.h, a static binary exec'd directly.

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

A checker program in C++ is built the same way, with its `#include "testlib.h"` replaced
by the user's copy of testlib.h (`with_testlib`), so the cache key covers its content.

Cache layout under the cache directory (all writes atomic: temp file/dir + rename; the
binaries and compile errors are `base.Executor`'s):
  link/<key>.txt                the link flags chosen for a compiler version (probed once)
  pch/<key>/bits/stdc++.h.gch   one per (compiler version, flags); <key>.lock serialises builds
  bin/<k2>/<key>                binaries keyed by sha256(compiler version, flags, source)
  ce/<k2>/<key>.txt             diagnostics of deterministic compile errors
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import re
import shutil
import struct
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codefu_sandbox.languages.base import (
    BuildConfig,
    CheckerError,
    Command,
    Executor,
    Language,
    Program,
    atomic_write,
    digest,
)
from codefu_sandbox.records import CompileResult
from codefu_sandbox.runner import Runner, SandboxError

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
_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]', re.MULTILINE)
_TESTLIB_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]testlib\.h[>"][^\n]*$', re.MULTILINE)


class CompilerNotFoundError(SandboxError):
    """No usable C++ compiler; the message names the package to install."""


@dataclass(frozen=True, kw_only=True)
class CompilerConfig(BuildConfig):
    """g++ and its flags, on top of the build limits (`BuildConfig`). `link_flags` None:
    the first of LINK_CHOICES that works with this compiler (probed once per cache)."""

    compiler: str = "g++"
    std: str = "c++17"
    flags: tuple[str, ...] = DEFAULT_FLAGS
    memory_bytes: int = 2 << 30  # address space per compiler process
    output_bytes: int = 128 << 20  # object files, the binary and diagnostics
    use_pch: bool = True
    extra: tuple[str, ...] = field(default=())
    link_flags: tuple[str, ...] | None = None

    def all_flags(self) -> list[str]:
        return [self.flags[0], f"-std={self.std}", *self.flags[1:], *self.extra]


class Cpp(Language):
    """C++17, the judge's default language."""

    name = "cpp"
    display_name = "C++"
    suffixes = (".cpp", ".cc", ".cxx")
    fence_tags = ("cpp", "c++", "cc", "cxx")
    aliases = ("CPP",)  # CodeContests' label
    program_pattern = re.compile(r"\bmain\s*\(")
    closing_token = "}"

    def recognises(self, source: str) -> bool:
        """A C++ source includes a header (a comment "# include x" in Python names none)."""
        return _INCLUDE.search(source) is not None

    def checker_source(self, source: str, testlib: str | Path | None) -> str:
        return with_testlib(source, testlib)

    def executor(self, cache_dir: Path, runner: Runner, config: Any = None) -> CppExecutor:
        return CppExecutor(cache_dir, runner, config, language=self)


class CppExecutor(Executor):
    """Compiles sources to cached binaries; thread- and process-safe on one cache dir."""

    source_name = "sol.cpp"
    output_name = "sol"
    config: CompilerConfig

    def __init__(
        self,
        cache_dir: Path,
        runner: Runner,
        config: CompilerConfig | None = None,
        language: Language | None = None,
    ) -> None:
        cfg = self.settings(config, CompilerConfig)
        found = shutil.which(cfg.compiler)
        if found is None:
            raise CompilerNotFoundError(
                f"C++ compiler {cfg.compiler!r} not found on PATH: install g++ "
                "(Debian/Ubuntu: apt-get install g++; Fedora: dnf install gcc-c++)."
            )
        self.path = str(Path(found).resolve())
        self.version = self._version()
        self.flags = cfg.all_flags()
        self.link_flags = (
            cfg.link_flags if cfg.link_flags is not None else self._probe_link(cache_dir)
        )
        identity = digest(
            self.version.encode(), "\0".join([*self.flags, *self.link_flags]).encode()
        )
        super().__init__(cache_dir, runner, cfg, identity, language)
        self._pch: Path | None = None
        self._pch_checked = False

    def _version(self) -> str:
        done = subprocess.run(
            [self.path, "-v"], capture_output=True, text=True, check=False, timeout=30
        )
        if done.returncode != 0:
            raise CompilerNotFoundError(f"{self.path} -v failed: {done.stderr[-500:]}")
        return f"{self.path}\n{done.stderr.strip()}"

    def _probe_link(self, cache_dir: Path) -> tuple[str, ...]:
        """The first of LINK_CHOICES that links a C++ program here (cached per version)."""
        record = cache_dir / "link" / f"{digest(self.version.encode())[:24]}.txt"
        with contextlib.suppress(OSError):
            return tuple(record.read_text().split())
        chosen: tuple[str, ...] = ()
        with tempfile.TemporaryDirectory(dir=cache_dir) as work:
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
        root = self.store / "pch"
        target = root / self.identity[:24]
        unusable = root / f"{self.identity[:24]}.unusable"
        if not (target / PCH_HEADER).with_suffix(".h.gch").exists() and not unusable.exists():
            root.mkdir(parents=True, exist_ok=True)
            with (root / f"{self.identity[:24]}.lock").open("w") as lock:
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
        with tempfile.TemporaryDirectory(dir=self.store) as work:
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
    def build_command(self) -> Command:
        """g++ in the sandbox (compile profile), with the precompiled header when usable."""
        pch = self.pch_dir()
        args = [self.path, *self.flags]
        if pch is not None:
            args += ["-I/proc/self/fd/3", "-Winvalid-pch"]
        args += [
            *self.link_flags,
            "-fdiagnostics-color=never",
            self.source_name,
            "-o",
            self.output_name,
        ]
        return Command(
            tuple(args),
            readable=(pch,) if pch is not None else (),
            writable=(Path("/dev/null"),),
            syscalls=self.compile_syscalls,
            pch_dir=pch,
            env={"PATH": "/usr/local/bin:/usr/bin:/bin", "TMPDIR": ".", "LC_ALL": "C"},
            processes=256,
            open_files=256,
        )

    def built(self, diagnostics: str, source: bytes) -> CompileResult:
        """Compiled: `pch_used` when the source includes the header and g++ used it."""
        pch_used = (
            self._pch is not None
            and "not using" not in diagnostics
            and PCH_HEADER.encode() in source
        )
        return CompileResult(True, 0.0, False, diagnostics, pch_used=pch_used)

    def program(self, artifact: Path) -> Program:
        """A binary runs with no argument."""
        return Program(
            (str(artifact),),
            static_bytes=static_memory_bytes(artifact),
            syscalls=self.run_syscalls,
        )


def with_testlib(source: str, testlib: str | Path | None) -> str:
    """`source` with its `#include "testlib.h"` replaced by that file's text.

    Raises CheckerError when the source includes testlib.h and no path (or a missing
    file) is given: testlib.h is not shipped with codefu; point to your copy."""
    match = _TESTLIB_INCLUDE.search(source)
    if match is None:
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
    header = path.read_text(errors="surrogateescape")
    return source[: match.start()] + header + "\n" + source[match.end() :]


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


LANGUAGE = Cpp()
