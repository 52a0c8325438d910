"""C++: g++ in the sandbox (`codefu_sandbox.compiler`), a static binary exec'd directly."""

from __future__ import annotations

from codefu_sandbox.compiler import Compiler, static_memory_bytes
from codefu_sandbox.executors.base import Program
from codefu_sandbox.verdicts import CompileResult


class CppExecutor:
    """C++17 (the judge's default language) through the judge's `Compiler`."""

    language = "cpp"

    def __init__(self, compiler: Compiler) -> None:
        self.compiler = compiler

    def compile(self, source: str) -> tuple[CompileResult, Program | None]:
        """Compile (or take the cached binary); the binary runs with no argument."""
        result, binary = self.compiler.compile(source)
        if binary is None:
            return result, None
        return result, Program((str(binary),), static_bytes=static_memory_bytes(binary))
