"""Inputs of the judge: tests and limits, a memory size as users write it, and the stored
form of a checker's or a grader's configuration."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TestCase:
    """One test: the program's standard input and the expected standard output."""

    __test__ = False  # not a pytest test class

    input: str
    output: str


@dataclass(frozen=True)
class Limits:
    """Per-test limits: CPU time in seconds and memory in bytes."""

    time_seconds: float
    memory_bytes: int

    def __post_init__(self) -> None:
        if not self.time_seconds > 0:
            raise ValueError(f"time limit must be > 0 seconds, got {self.time_seconds!r}")
        if self.memory_bytes <= 0:
            raise ValueError(f"memory limit must be > 0 bytes, got {self.memory_bytes!r}")


def parse_memory(text: str) -> int:
    """Bytes from `268435456`, `256M`, `256MiB`, `1G`, `512k` (binary units)."""
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    value = text.strip().upper().removesuffix("B").removesuffix("I")
    suffix = value[-1:] if value[-1:] in "KMG" else ""
    number = value[: len(value) - len(suffix)]
    try:
        amount = float(number)
    except ValueError:
        raise ValueError(
            f"memory limit {text!r} is not a size: use bytes or a K/M/G suffix, e.g. 256M"
        ) from None
    result = int(amount * units[suffix])
    if result <= 0:
        raise ValueError(f"memory limit {text!r} must be positive")
    return result


def name_and_params(data: Any, what: str) -> tuple[Any, Any]:
    """The name and params of a stored `{"name": ..., "params": {...}}` configuration of a
    `what` ("checker", "grader"; params None when left out); ValueError on another shape."""
    if not isinstance(data, Mapping) or "name" not in data:
        raise ValueError(
            f'a {what} configuration is {{"name": {what.upper()}, "params": {{...}}}}, got {data!r}'
        )
    extra = sorted(set(data) - {"name", "params"})
    if extra:
        raise ValueError(f"a {what} configuration has only the keys name and params, not {extra}")
    return data["name"], data.get("params")
