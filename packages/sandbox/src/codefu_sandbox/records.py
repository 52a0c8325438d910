"""Plain records the judge's parts hand each other: how a run ended (`RunOutcome`), how a
build ended (`CompileResult`) and a checker's answer (`CheckResult`).

The ground floor of the sandbox: it imports nothing of the package, so the modules that
produce these records (the runner, a language's build, the checkers) and those that read
them (the verdicts, the graders, the judge) all import it from below.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RunOutcome:
    """How one run ended, as the runner measured it (input of `verdicts.decide`)."""

    exit_code: int | None
    signal: int | None
    cpu_seconds: float
    wall_seconds: float
    peak_memory_bytes: int
    killed: str | None = None  # "cpu" or "wall" when the runner killed it
    output_bytes: int = 0
    stderr_head: str = ""
    error: str | None = None  # the runner failed (→ IE)
    memory_cap_hit: bool = False  # the memory cgroup's limit was hit (an OOM kill)
    # The x86-64 number of the system call the seccomp filter refused, for which the runner
    # killed the program (`syscalls.name_of` names it; -2: a refused call whose number the
    # runner could not read); None when none was refused.
    refused_syscall: int | None = None


@dataclass
class CompileResult:
    """How building a source ended: ok, the seconds it took, whether the cache answered,
    the compiler's diagnostics, and whether the precompiled header was used."""

    ok: bool
    seconds: float
    cached: bool
    diagnostics: str
    pch_used: bool = False


@dataclass(frozen=True)
class CheckResult:
    """A checker's answer: ok, and a short message."""

    ok: bool
    message: str = ""
    internal_error: bool = False  # the checker itself failed (→ IE, never the program's fault)
