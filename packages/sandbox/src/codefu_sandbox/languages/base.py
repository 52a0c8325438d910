"""What a language is to the judge, and the build every language shares.

A language module (`languages/<name>.py`) declares a `Language`: its name, how prompts,
code fences and datasets name it, how an untagged program in it looks, its default time
factor, the token whose removal breaks a program, the system calls its programs and builds
make beyond the sandbox's base policy, and its `Executor`. An `Executor` is the
language's toolchain on this host, built on the cached build written once here: the
source-size limit, the content-addressed cache of artifacts and of compile errors, the
build run in the sandbox under `BuildConfig`'s limits, the rule that tells a compile error
from the judge's failure (`compile_failure`) and the atomic install of the artifact. A
subclass says what the build runs (`build_command`) and how its artifact runs (`program`:
argv, the files copied into each test's folder, what it reads, its sandbox profile, the
calls its language declares for that profile, and its memory allowance).

Cache layout under an executor's `store` (all writes atomic: temp file + rename):
  <artifacts>/<k2>/<key><artifact_suffix>   artifacts of sources that built
  ce/<k2>/<key>.txt                         diagnostics of deterministic compile errors
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from codefu_sandbox.process import RunLimits
from codefu_sandbox.records import CompileResult, RunOutcome
from codefu_sandbox.runner import Runner, SandboxError
from codefu_sandbox.syscalls import check_declared, name_of

Config = TypeVar("Config", bound="BuildConfig")


class CheckerError(ValueError):
    """A checker program that cannot be prepared (no testlib.h given, a compile error)."""


@dataclass(frozen=True)
class Program:
    """A built submission (or checker), ready to run once per test.

    `argv`: what runs (argv[0] an absolute path, exec'd by descriptor). `files`: cached
    files copied into each test's fresh folder before it runs (name in the folder → cached
    file), e.g. a Python program's byte code. `readable`: what the program reads beyond
    the system trees (Landlock). `static_bytes`: the code and static data the kernel maps
    at exec (the static-data MLE check). `memory_allowance`: bytes added to the problem's
    memory limit for the language's runtime (an interpreter's own baseline), so the limit
    counts the program's memory. `profile`: the seccomp profile a submission runs under
    ("run", the solution allowlist; `Runner.run` lists the profiles). `syscalls`: the calls
    allowed beyond that profile's base policy (its language's `run_syscalls`).
    """

    argv: tuple[str, ...]
    files: Mapping[str, Path] = field(default_factory=dict)
    readable: tuple[Path, ...] = ()
    static_bytes: int = 0
    memory_allowance: int = 0
    profile: str = "run"
    syscalls: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class BuildConfig:
    """A build's limits per source: past `cpu_seconds` of CPU it is a compile error; past
    `wall_seconds` the host is overloaded (the judge failed, IE, not CE). `memory_bytes`:
    its address space; `output_bytes`: what it may write (the artifact and diagnostics);
    the first `diagnostics_chars` of its messages are kept; a source over
    `max_source_bytes` is refused; `cache_errors` remembers compile errors by content."""

    cpu_seconds: float = 10.0
    wall_seconds: float = 60.0
    memory_bytes: int = 1 << 30
    output_bytes: int = 64 << 20
    diagnostics_chars: int = 16_384
    max_source_bytes: int = 1 << 20
    cache_errors: bool = True


@dataclass(frozen=True)
class Command:
    """A command an executor runs in the sandbox, in a fresh folder (holding the source as
    `Executor.source_name` when it builds one): its argv, seccomp profile and the calls
    allowed beyond that profile's base policy (its language's `compile_syscalls` for the
    compile profile, `run_syscalls` for the run profile), what it reads and writes beyond
    the folder, the precompiled-header folder (opened as fd 3), its environment, and its
    process and open-file limits."""

    argv: tuple[str, ...]
    profile: str = "compile"
    syscalls: tuple[str, ...] = ()
    readable: tuple[Path, ...] = ()
    writable: tuple[Path, ...] = ()
    pch_dir: Path | None = None
    env: Mapping[str, str] | None = None
    processes: int = 64
    open_files: int = 64


@dataclass(frozen=True)
class SandboxRun:
    """How a command run by `Executor.run_in_sandbox` ended: its outcome, the head of its
    stderr, and whether its output was installed."""

    outcome: RunOutcome
    stderr: str
    kept: bool


class Language(ABC):
    """One language the judge runs, declared by class attributes, with its executor.

    `name`: the id configurations, ground truths and results use ("cpp"). `display_name`:
    how prompts name it ("C++"). `suffixes`: its source files' suffixes. `fence_tags`: the
    tags of a Markdown code fence that name it (lower case). `aliases`: the labels datasets
    give it (CodeContests' "CPP"). `program_pattern`: what an untagged block of code needs
    to be taken for a program in it. `closing_token`: a token whose last occurrence, removed,
    makes a program fail to build (the CPU rehearsal's compile errors). `time_factor`: the
    default factor on a problem's time limit. `preludes`: the named preludes written in this
    language (name → the source a program runs after, in the program's namespace: e.g. the
    imports LiveCodeBench gives every Python program); the executor's `with_prelude`
    applies one. `run_syscalls` / `compile_syscalls`: the system calls (x86-64 names, as in
    the kernel's syscall table) its programs (and its checker programs) and its builds make
    beyond the sandbox's base policy for them (the run profile's allowlist, the compile
    profile's denylist), as DMOJ's executors declare theirs: e.g. a runtime that polls its
    standard streams at start needs `("poll",)`. None may be above the ceiling
    (`syscalls.CEILING`: tracing, mounts, namespaces, sockets, the kernel…): a class that
    declares one is refused when it is defined (ValueError naming the call), and
    sandbox-exec refuses it again whatever asks.
    """

    name: ClassVar[str]
    display_name: ClassVar[str]
    suffixes: ClassVar[tuple[str, ...]]
    fence_tags: ClassVar[tuple[str, ...]]
    aliases: ClassVar[tuple[str, ...]] = ()
    program_pattern: ClassVar[re.Pattern[str]]
    closing_token: ClassVar[str]
    time_factor: ClassVar[float] = 1.0
    preludes: ClassVar[Mapping[str, str]] = {}
    run_syscalls: ClassVar[tuple[str, ...]] = ()
    compile_syscalls: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Refuse a declaration of system calls above the ceiling (or not calls at all)."""
        super().__init_subclass__(**kwargs)
        check_declared(cls.run_syscalls, f"{cls.__name__}.run_syscalls")
        check_declared(cls.compile_syscalls, f"{cls.__name__}.compile_syscalls")

    def looks_like_program(self, text: str) -> bool:
        """Whether `text` looks like a program in this language (`program_pattern`)."""
        return self.program_pattern.search(text) is not None

    def recognises(self, source: str) -> bool:
        """Whether a whole source file (a checker's) is in this language; by default,
        whether it looks like a program in it."""
        return self.looks_like_program(source)

    def checker_source(self, source: str, testlib: str | Path | None) -> str:
        """A checker program's source as it is built (C++: testlib.h inlined)."""
        return source

    @abstractmethod
    def executor(self, cache_dir: Path, runner: Runner, config: Any = None) -> Executor:
        """This language's toolchain on this host, its cache under `cache_dir`, its build
        settings `config` (None: the defaults); SandboxError when it cannot work here."""

    def __repr__(self) -> str:
        return f"<language {self.name}>"


class Executor(ABC):
    """A language's toolchain on this host: builds untrusted sources in the sandbox, once
    per content, into cached artifacts that run as `Program`s; thread- and process-safe on
    one cache dir. Subclasses set the class attributes and `build_command` / `program`."""

    source_name: ClassVar[str]  # the source's name in the build folder
    output_name: ClassVar[str]  # what the build writes there
    artifacts: ClassVar[str] = "bin"
    artifact_suffix: ClassVar[str] = ""
    artifact_mode: ClassVar[int] = 0o755
    step: ClassVar[str] = "compilation"  # names the build in messages
    no_output: ClassVar[str] = "[the compiler produced no binary]"
    # Bytes added to a problem's memory limit for the runtime (`Program.memory_allowance`).
    memory_allowance: int = 0

    def __init__(
        self,
        store: Path,
        runner: Runner,
        config: BuildConfig,
        identity: str,
        language: Language | None = None,
    ) -> None:
        """`store`: the cache folder; `identity`: a digest of what makes the toolchain's
        output differ (its version, flags), part of every cache key; `language`: the
        language it builds, whose declared system calls (`run_syscalls`, `compile_syscalls`)
        its `Program`s and `Command`s carry (None: none beyond the base policy)."""
        self.store = store
        self.runner = runner
        self.config = config
        self.identity = identity
        self.run_syscalls = language.run_syscalls if language is not None else ()
        self.compile_syscalls = language.compile_syscalls if language is not None else ()

    @staticmethod
    def settings(config: Any, kind: type[Config]) -> Config:
        """`config` when it is a `kind` (None: `kind`'s defaults); TypeError otherwise."""
        if config is None:
            return kind()
        if not isinstance(config, kind):
            raise TypeError(f"build settings must be a {kind.__name__}, got {config!r}")
        return config

    @abstractmethod
    def build_command(self) -> Command:
        """What builds `source_name` into `output_name` in the sandbox."""

    @abstractmethod
    def program(self, artifact: Path) -> Program:
        """How a cached artifact runs."""

    def with_prelude(self, program: Program, prelude: str) -> Program:
        """`program` run after `prelude` (one of its language's `preludes`) in its namespace;
        a language that declares preludes overrides this."""
        raise NotImplementedError(f"{type(self).__name__} runs no prelude")

    def built(self, diagnostics: str, source: bytes) -> CompileResult:
        """The result of a build that wrote its output (the compiler's warnings kept)."""
        return CompileResult(True, 0.0, False, diagnostics)

    def key(self, source: str) -> str:
        """The cache key of `source` under this toolchain."""
        return digest(self.identity.encode(), source.encode("utf-8", "surrogateescape"))

    def artifact_path(self, key: str) -> Path:
        return self.store / self.artifacts / key[:2] / f"{key}{self.artifact_suffix}"

    def compile(self, source: str) -> tuple[CompileResult, Program | None]:
        """Build `source` (or take the cached artifact); its `Program` when it built."""
        started = time.perf_counter()
        data = source.encode("utf-8", "surrogateescape")
        cfg = self.config
        if len(data) > cfg.max_source_bytes:
            message = f"source is {len(data)} bytes, over the {cfg.max_source_bytes}-byte limit"
            return CompileResult(False, 0.0, False, message), None
        key = self.key(source)
        artifact = self.artifact_path(key)
        if artifact.exists():
            hit = CompileResult(True, time.perf_counter() - started, True, "")
            return hit, self.program(artifact)
        error_file = self.store / "ce" / key[:2] / f"{key}.txt"
        if cfg.cache_errors and error_file.exists():
            text = error_file.read_text(errors="replace")
            return CompileResult(False, time.perf_counter() - started, True, text), None
        result = self._build(data, artifact)
        result.seconds = time.perf_counter() - started
        if result.ok:
            return result, self.program(artifact)
        if cfg.cache_errors and result.diagnostics and not result.diagnostics.startswith("["):
            atomic_write(error_file, result.diagnostics.encode())
        return result, None

    def checker(self, source: str) -> Program:
        """A checker program built from `source` (`checker_source`'s output): built as a
        submission is; CheckerError when it does not build."""
        compiled, program = self.compile(source)
        if program is None:
            raise CheckerError(f"the checker does not compile:\n{compiled.diagnostics[:2000]}")
        return program

    def _build(self, data: bytes, artifact: Path) -> CompileResult:
        """Run `build_command` in the sandbox on `data`; on success install the artifact."""
        cfg = self.config
        command = self.build_command()
        limits = RunLimits(
            cpu_seconds=cfg.cpu_seconds,
            wall_seconds=cfg.wall_seconds,
            address_space=cfg.memory_bytes,
            file_size=cfg.output_bytes,
            processes=command.processes,
            open_files=command.open_files,
            stack_unlimited=False,
        )
        ran = self.run_in_sandbox(command, limits, source=data, keep=artifact)
        failed = compile_failure(
            ran.outcome, ran.stderr, cfg.cpu_seconds, cfg.wall_seconds, self.step
        )
        if failed is not None:
            return failed
        if not ran.kept:
            return CompileResult(False, 0.0, False, self.no_output)
        return self.built(ran.stderr, data)

    def run_in_sandbox(
        self,
        command: Command,
        limits: RunLimits,
        *,
        source: bytes | None = None,
        keep: Path | None = None,
    ) -> SandboxRun:
        """Run `command` in the sandbox (the judge's uid, Landlock, seccomp, `limits`) in a
        fresh folder, holding `source` as `source_name` and writable when given, read-only
        otherwise. When it exits 0, its `output_name` is installed at `keep` if given."""
        with self.runner.workspace() as private, self.runner.uids.take() as uid:
            work = private / "w"
            work.mkdir()
            if source is not None:
                (work / self.source_name).write_bytes(source)
                (work / self.source_name).chmod(0o644)
            outcome = self.runner.run(
                list(command.argv),
                cwd=work,
                limits=limits,
                stdin=None,
                stdout=private / "stdout",
                stderr=private / "stderr",
                profile=command.profile,
                syscalls=command.syscalls,
                readable=command.readable,
                writable=command.writable,
                pch_dir=command.pch_dir,
                env=dict(command.env) if command.env is not None else None,
                uid=uid,
                writable_cwd=source is not None,
            )
            stderr = read_head(private / "stderr", self.config.diagnostics_chars)
            ok = outcome.error is None and outcome.killed is None and outcome.exit_code == 0
            kept = (
                ok
                and keep is not None
                and install_output(work / self.output_name, keep, self.artifact_mode)
            )
        return SandboxRun(outcome, stderr, kept)


def compile_failure(
    outcome: RunOutcome,
    diagnostics: str,
    cpu_seconds: float,
    wall_seconds: float,
    step: str = "compilation",
) -> CompileResult | None:
    """The compile error of a sandboxed build that did not exit 0 (over its CPU, an error,
    killed by a signal or for a refused system call); None when it did. SandboxError when
    the judge failed, not the source: the sandbox, or the wall backstop on an overloaded
    host. `step` names the build in the messages ("compilation", "byte-compilation")."""
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
    if outcome.refused_syscall is not None:
        refused = name_of(outcome.refused_syscall)
        diagnostics = f"[{step} made a forbidden system call: {refused}]\n{diagnostics}"
    elif outcome.signal is not None:
        diagnostics = f"[{step} killed by signal {outcome.signal}]\n{diagnostics}"
    return CompileResult(False, 0.0, False, diagnostics or f"{step} failed")


def digest(*parts: bytes) -> str:
    """sha256 of the parts, each prefixed by its length (no two splits collide)."""
    h = hashlib.sha256()
    for part in parts:
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()


def atomic_write(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Write `data` to `path` through a temporary file renamed into place."""
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


def install_output(built: Path, target: Path, mode: int) -> bool:
    """Copy a build's output `built` to `target` atomically with `mode`; False when it
    wrote none (or a link, not a file)."""
    if not built.is_file() or built.is_symlink():
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    staged = target.parent / f".tmp-{os.getpid()}-{time.monotonic_ns()}"
    shutil.copyfile(built, staged)
    staged.chmod(mode)
    staged.replace(target)
    return True


def read_head(path: Path, limit: int) -> str:
    """The first `limit` characters of a file (marked when cut), "" when unreadable."""
    try:
        with path.open("rb") as f:
            data = f.read(limit + 1)
    except OSError:
        return ""
    text = data[:limit].decode(errors="replace")
    if len(data) > limit:
        text += "\n[diagnostics truncated]"
    return text
