"""What every language's executor provides: how to compile a source, how to run the result,
and what the sandbox must allow it (DMOJ's executor shape, one module per language)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from codefu_sandbox.verdicts import CompileResult


@dataclass(frozen=True)
class Program:
    """A compiled submission, ready to run once per test.

    `argv`: what runs (argv[0] an absolute path, exec'd by descriptor under seccomp
    profile "run"). `files`: cached files copied into each test's fresh folder before it
    runs (name in the folder → cached file), e.g. a Python program's byte code.
    `readable`: what the program reads beyond the system trees (Landlock). `static_bytes`:
    the code and static data the kernel maps at exec (the static-data MLE check).
    `memory_allowance`: bytes added to the problem's memory limit for the language's
    runtime (an interpreter's own baseline), so the limit counts the program's memory.
    """

    argv: tuple[str, ...]
    files: Mapping[str, Path] = field(default_factory=dict)
    readable: tuple[Path, ...] = ()
    static_bytes: int = 0
    memory_allowance: int = 0


class Executor(Protocol):
    """One language: compiles (or byte-compiles) untrusted source in the sandbox, with a
    content-addressed cache, into a `Program`; CE is `(CompileResult(ok=False), None)`."""

    language: str

    def compile(self, source: str) -> tuple[CompileResult, Program | None]: ...
