"""One executor per language behind one interface (`Executor`): how a source compiles,
how the result runs, what the sandbox allows it. The judge picks one by `language`."""

from __future__ import annotations

from pathlib import Path

from codefu_sandbox.executors.base import Executor, Program
from codefu_sandbox.executors.cpp import CppExecutor
from codefu_sandbox.executors.python import PythonConfig, PythonExecutor

LANGUAGES = ("cpp", "python")
DEFAULT_LANGUAGE = "cpp"
# The factor on a problem's time limit per language (`Judge(time_factors=...)` overrides);
# docs/languages.md has the measurement behind Python's.
DEFAULT_TIME_FACTORS: dict[str, float] = {"cpp": 1.0, "python": 1.0}
# Source file suffixes → language (the CLI infers --language from them; the judge, the
# language of a checker program given by its path).
SUFFIXES = {".cpp": "cpp", ".cc": "cpp", ".cxx": "cpp", ".py": "python"}


def check_language(language: str) -> str:
    """`language` when the judge has an executor for it, else ValueError naming them."""
    if language not in LANGUAGES:
        raise ValueError(f"unknown language {language!r}: choose one of {', '.join(LANGUAGES)}")
    return language


def language_of(path: Path) -> str:
    """The language a source file's suffix names (C++ for any other suffix)."""
    return SUFFIXES.get(path.suffix.lower(), DEFAULT_LANGUAGE)


__all__ = [
    "DEFAULT_LANGUAGE",
    "DEFAULT_TIME_FACTORS",
    "LANGUAGES",
    "SUFFIXES",
    "CppExecutor",
    "Executor",
    "Program",
    "PythonConfig",
    "PythonExecutor",
    "check_language",
    "language_of",
]
