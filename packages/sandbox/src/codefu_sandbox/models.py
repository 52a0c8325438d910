"""Inputs of the judge: tests, limits, checker configurations, submissions."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codefu_sandbox.checkers import BUILTIN, PROGRAM, check_params


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


@dataclass(frozen=True)
class CheckerConfig:
    """A checker and its parameters, e.g. a problem's judging rules:
    `CheckerConfig("codecontests", {"tolerance": 1e-4, "any_case_words": ["YES", "NO"]})`.

    `name` is a built-in checker (`checkers.BUILTIN`), `testlib:PATH`, the path of an
    existing checker program, or "program" with the program's `source` and `language`
    in `params` (`checkers.program.config` builds one). Construction raises ValueError
    for an unknown name, a parameter the checker's `check` does not take (naming those it
    takes), or a value it cannot use, so a typo never judges silently under the defaults.
    """

    name: str = "tokens"
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise ValueError(f"checker name must be a string, got {self.name!r}")
        if not isinstance(self.params, Mapping) or not all(
            isinstance(key, str) for key in self.params
        ):
            raise ValueError(
                f"checker params must map parameter names to values, got {self.params!r}"
            )
        if (
            self.name not in BUILTIN
            and self.name != PROGRAM
            and not self.name.startswith("testlib:")
            and not Path(self.name).is_file()
        ):
            raise ValueError(
                f"unknown checker {self.name!r}: choose one of {', '.join(BUILTIN)}, "
                "or give the path of a testlib-style checker program (testlib:PATH)"
            )
        check_params(self.name, self.params)
        object.__setattr__(self, "params", dict(self.params))

    def __hash__(self) -> int:
        return hash(json.dumps(self.to_dict(), sort_keys=True, default=_json_list))

    def to_dict(self) -> dict[str, Any]:
        """`{"name": ..., "params": {...}}`, JSON-able (word collections become lists): the
        form a configuration is stored in (a ground truth's `checker`, a JSON file)."""
        params = {
            key: _json_list(value) if isinstance(value, tuple | set | frozenset) else value
            for key, value in self.params.items()
        }
        return {"name": self.name, "params": params}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CheckerConfig:
        """The inverse of `to_dict`; `params` may be left out. ValueError on any other shape."""
        if not isinstance(data, Mapping) or "name" not in data:
            raise ValueError(
                f'a checker configuration is {{"name": CHECKER, "params": {{...}}}}, got {data!r}'
            )
        extra = sorted(set(data) - {"name", "params"})
        if extra:
            raise ValueError(
                f"a checker configuration has only the keys name and params, not {extra}"
            )
        params = data.get("params")
        return cls(data["name"], {} if params is None else params)


def _json_list(value: Any) -> list[Any]:
    """A set or tuple as a JSON list (sets sorted, so equal configurations hash equal)."""
    if isinstance(value, set | frozenset):
        return sorted(value)
    return list(value)


@dataclass(frozen=True)
class Submission:
    """Everything `Judge.judge_many` needs to judge one program."""

    source: str
    tests: Sequence[TestCase]
    limits: Limits
    checker: str | CheckerConfig = "tokens"
    stop_on_first_failure: bool = False
    checker_params: Mapping[str, Any] | None = None
    language: str = "cpp"  # or "python" (codefu_sandbox.executors.LANGUAGES)


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
