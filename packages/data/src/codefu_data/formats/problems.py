"""What the formats beyond CodeContests share: their rows, decoded one by one into plain
problem rows (`Problem`) by one loop (`RowFormat`), then into the problem columns
(`problem_table`); the time and
memory limits their text states; tests encoded as the judge reads them (stdin text, or the
JSON of a call's arguments and result: docs/ARCHITECTURE.md, "Ground truth").
"""

from __future__ import annotations

import hashlib
import json
import re
from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from codefu_data.formats.base import FormatError, ReadOptions, SourceFormat
from codefu_data.schema import (
    CODECONTESTS_LANGUAGES,
    PROBLEM_SCHEMA,
    REQUIRED_COLUMNS,
    VALIDATION_COLUMNS,
)
from codefu_sandbox import GraderConfig
from codefu_sandbox import call_grader as call_config
from codefu_sandbox.languages import LANGUAGES, for_alias, for_fence_tag

# The problem columns a format beyond CodeContests gives (solutions null where it has none).
PROVIDED = frozenset({*REQUIRED_COLUMNS, *VALIDATION_COLUMNS, "incorrect_solutions"})
UNKNOWN_SOURCE = 0

_SECONDS = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|sec|secs|seconds?)?\s*$", re.I)
_MEMORY = re.compile(
    r"^\s*(\d+(?:\.\d+)?)\s*(bytes?|b|kb|kilobytes?|mb|megabytes?|mib|gb|gigabytes?|gib)?\s*$",
    re.I,
)
_MEMORY_UNITS = {
    "b": 1,
    "byte": 1,
    "bytes": 1,
    "kb": 1000,
    "kilobyte": 1000,
    "kilobytes": 1000,
    "mb": 1_000_000,  # CodeContests' megabytes are 10^6 bytes; so are the statements'
    "megabyte": 1_000_000,
    "megabytes": 1_000_000,
    "mib": 1 << 20,
    "gb": 1_000_000_000,
    "gigabyte": 1_000_000_000,
    "gigabytes": 1_000_000_000,
    "gib": 1 << 30,
}
_FENCE = re.compile(r"^\s*```[\w+#-]*[ \t]*\n(.*?)\n?```\s*$", re.S)


@dataclass
class Problem:
    """One problem as the formats decode it (the problem columns of one row)."""

    name: str
    description: str
    data_source: str
    private: tuple[list[str], list[str]]
    public: tuple[list[str], list[str]] = ([], [])
    grader: GraderConfig | None = None  # None: the default grader
    source_checker: dict[str, Any] | None = None
    time_seconds: float | None = None
    memory_bytes: int | None = None
    difficulty_label: str | None = None
    cf_rating: int = 0
    source: int = UNKNOWN_SOURCE
    contest_date: str | None = None
    platform: str | None = None
    starter_code: str | None = None
    solutions: list[tuple[int, str]] = field(default_factory=list)  # (CodeContests code, text)

    def columns(self, options: ReadOptions) -> dict[str, Any]:
        """The problem columns; absent limits are `options`' defaults."""
        seconds = self.time_seconds if self.time_seconds else options.time_seconds
        whole = int(seconds)
        return {
            "name": self.name,
            "description": self.description,
            "public_tests": {"input": self.public[0], "output": self.public[1]},
            "private_tests": {"input": self.private[0], "output": self.private[1]},
            "source": self.source,
            "cf_rating": self.cf_rating,
            "time_limit": {"seconds": whole, "nanos": round((seconds - whole) * 1e9)},
            "memory_limit_bytes": self.memory_bytes or options.memory_bytes,
            "solutions": {
                "language": [code for code, _ in self.solutions],
                "solution": [text for _, text in self.solutions],
            }
            if self.solutions
            else None,
            "incorrect_solutions": None,
            "data_source": self.data_source,
            "difficulty_label": self.difficulty_label,
            "contest_date": self.contest_date,
            "platform": self.platform,
            "starter_code": self.starter_code,
            "grader": None if self.grader is None else self.grader.stored(),
            "source_checker": self.source_checker,
        }


class RowFormat(SourceFormat):
    """A format whose rows become problems one at a time: a subclass says how one row does
    (`problem`) and what names it in an error (`row_id`); this loop does the rest for all of
    them (each error naming its row), and refuses the problem columns such rows cannot
    give (`missing_columns`)."""

    def check(self, wanted: Sequence[str]) -> None:
        missing_columns(wanted, self.described)

    def to_problems(
        self, table: pa.Table, wanted: Sequence[str], first_row: int, options: ReadOptions
    ) -> pa.Table:
        problems = []
        for i, row in enumerate(table.to_pylist()):
            try:
                problems.append(self.problem(row))
            except FormatError as exc:
                raise row_error(first_row + i, self.row_id(row), exc) from exc
        return problem_table(problems, wanted, options)

    @abstractmethod
    def row_id(self, row: dict[str, Any]) -> str | None:
        """The id that names `row` in its errors (None: the row has none)."""

    @abstractmethod
    def problem(self, row: dict[str, Any]) -> Problem:
        """The problem of one row; FormatError saying what is wrong."""


def problem_table(
    problems: Sequence[Problem], wanted: Sequence[str], options: ReadOptions
) -> pa.Table:
    """The problem columns `wanted` of decoded rows, typed as `PROBLEM_SCHEMA`."""
    rows = [p.columns(options) for p in problems]
    schema = pa.schema([PROBLEM_SCHEMA.field(name) for name in wanted])
    return pa.Table.from_pylist([{name: r[name] for name in wanted} for r in rows], schema=schema)


def missing_columns(wanted: Sequence[str], described: str) -> None:
    """FormatError naming the problem columns beyond `PROVIDED` (generated tests, tags, …)."""
    missing = [c for c in wanted if c not in PROVIDED]
    if missing:
        raise FormatError(f"{described}, nothing to read {', '.join(missing)} from")


def json_value(value: Any, what: str) -> Any:
    """A JSON value given as its text (or already decoded, as a parquet struct)."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError as exc:  # not JSON, or an integer over the interpreter's digit limit
        raise FormatError(f"{what} is not JSON ({exc})") from exc


def statement_id(prefix: str, statement: str) -> str:
    """An id for a row without one: `prefix-` and 16 hex digits of the statement's sha256."""
    return f"{prefix}-{hashlib.sha256(statement.encode()).hexdigest()[:16]}"


def seconds_from_text(text: Any) -> float | None:
    """'2 seconds', '1.5 s', '1000 ms', 2 → seconds; None when absent or unreadable."""
    if isinstance(text, int | float) and not isinstance(text, bool):
        return float(text) if text > 0 else None
    found = _SECONDS.match(str(text or ""))
    if not found:
        return None
    value = float(found.group(1))
    if (found.group(2) or "").lower().startswith("m"):
        value /= 1000
    return value if value > 0 else None


def bytes_from_text(text: Any) -> int | None:
    """'256 megabytes' (10^6 bytes each, as the statements count), '64 MiB', 268435456 →
    bytes; None when absent or unreadable."""
    if isinstance(text, int) and not isinstance(text, bool):
        return text if text > 0 else None
    found = _MEMORY.match(str(text or ""))
    if not found:
        return None
    unit = (found.group(2) or "bytes").lower()
    value = int(float(found.group(1)) * _MEMORY_UNITS[unit])
    return value if value > 0 else None


def difficulty(label: Any) -> tuple[str | None, int]:
    """A difficulty label in `data.difficulty_tiers`' spelling (lower case, `_` for spaces and
    dashes: 'MEDIUM_HARD' → 'medium_hard'), or a rating: (label, 0) or (None, rating)."""
    text = str(label or "").strip()
    if text.isdigit():
        return None, int(text)
    if not text:
        return None, 0
    return re.sub(r"[\s-]+", "_", text.lower()), 0


def stdin_text(value: Any, what: str) -> str:
    """A test's stdin or expected stdout: text, or a list of lines (joined by newlines)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    raise FormatError(f"{what} is neither text nor a list of lines")


def call_arguments(args: Any, what: str) -> str:
    """The JSON text of a call's positional arguments (a list)."""
    if not isinstance(args, list):
        raise FormatError(f"{what} is not a list of arguments")
    return json.dumps(args)


def call_grader(fn_name: Any, *, prelude: str | None, compare: str) -> GraderConfig:
    """The grader of a call-based problem: its function `fn_name` called on each test's
    arguments (`codefu_sandbox.call_grader`; `compare` one of its comparisons: "exact", or
    "apps" as APPS' and TACO's own graders compare)."""
    if not isinstance(fn_name, str) or not fn_name.strip():
        raise FormatError("a call-based problem without a function name")
    try:
        return call_config(fn_name.strip(), prelude=prelude, compare=compare)
    except ValueError as exc:
        raise FormatError(str(exc)) from None


def program_text(text: str) -> str:
    """A solution without the code fence around it (```python … ```), if it has one."""
    found = _FENCE.match(text)
    return found.group(1) if found else text


def language_code(language: Any) -> int | None:
    """The CodeContests code of a judge language named in a row ('python', 'cpp'); None for
    one the judge does not run."""
    name = str(language or "").strip().lower()
    found = LANGUAGES.get(name) or for_fence_tag(name)
    codes = [code for code, label in CODECONTESTS_LANGUAGES.items() if for_alias(label) is found]
    return min(codes) if found is not None and codes else None


def row_error(row: int, name: str | None, exc: Exception) -> FormatError:
    """A FormatError naming the row (and its id when known) and what is wrong."""
    label = f"row {row}" + (f" ({name})" if name else "")
    return FormatError(f"{label}: {exc}")
