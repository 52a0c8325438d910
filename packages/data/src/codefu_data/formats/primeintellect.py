"""PrimeIntellect's verifiable coding problems (SYNTHETIC-1; parquet as the hub serves it, or
JSONL).

A row: `problem_id`, `source`, `task_type`, `in_source_id`, the statement (`prompt`; the
copies that reformatted it call it `problem_statement` or `problem`),
`gold_standard_solution` (a program, often in a code fence), `verification_info` (JSON
text or a struct: `{"language", "test_cases": [{"type", "input", "output", "fn_name"?}]}`)
and `metadata` (JSON text or a struct: `difficulty`, `time_limit` / `memory_limit` as text,
`memory_limit_bytes`). A test of type `stdin_stdout` is a stdin test; `function_call`
tests call `fn_name` with `input`, the list of arguments (a list, or its JSON or Python
literal text), and compare the result with `output` as APPS does (`compare` "apps").
"""

from __future__ import annotations

import ast
import json
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from codefu_data.formats.base import FileColumn, FormatError
from codefu_data.formats.problems import (
    Problem,
    RowFormat,
    bytes_from_text,
    call_arguments,
    call_grader,
    difficulty,
    json_value,
    language_code,
    program_text,
    seconds_from_text,
    stdin_text,
)
from codefu_data.schema import CODEFORCES_SOURCE
from codefu_sandbox import GraderConfig

STATEMENT_COLUMNS = ("prompt", "problem_statement", "problem")
COLUMNS = (
    "problem_id",
    "source",
    "in_source_id",
    "gold_standard_solution",
    "verification_info",
    "metadata",
)
STDIN = "stdin_stdout"
FUNCTION_CALL = "function_call"


def literal(value: Any, what: str) -> Any:
    """A value given as itself, as JSON text, or as a Python literal's text."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        pass
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError, MemoryError, RecursionError) as exc:
        raise FormatError(f"{what} is neither JSON nor a Python literal ({exc})") from exc


def test_case_tests(
    cases: Any, what: str = "test_cases"
) -> tuple[tuple[list[str], list[str]], GraderConfig | None]:
    """((inputs, outputs), grader) of PrimeIntellect's test cases: all stdin, or all calls."""
    if not isinstance(cases, list) or not all(isinstance(c, dict) for c in cases):
        raise FormatError(f"{what} is not a list of test cases")
    kinds = {c.get("type") or STDIN for c in cases}
    if kinds - {STDIN, FUNCTION_CALL} or len(kinds) > 1:
        raise FormatError(f"{what} mix or hold unknown test types {sorted(map(str, kinds))}")
    if kinds != {FUNCTION_CALL}:
        return (
            [stdin_text(c.get("input"), f"{what}[{i}].input") for i, c in enumerate(cases)],
            [stdin_text(c.get("output"), f"{what}[{i}].output") for i, c in enumerate(cases)],
        ), None
    names = {c.get("fn_name") for c in cases}
    if len(names) != 1:
        raise FormatError(f"{what} call {len(names)} different functions")
    grader = call_grader(names.pop(), prelude=None, compare="apps")
    inputs = [
        call_arguments(literal(c.get("input"), f"{what}[{i}].input"), f"{what}[{i}].input")
        for i, c in enumerate(cases)
    ]
    outputs = [
        json.dumps(literal(c.get("output"), f"{what}[{i}].output")) for i, c in enumerate(cases)
    ]
    return (inputs, outputs), grader


class PrimeIntellect(RowFormat):
    name = "primeintellect"
    key_columns = frozenset(
        {"problem_id", "in_source_id", "verification_info", "gold_standard_solution"}
    )
    described = (
        f"a PrimeIntellect file has {', '.join(COLUMNS)} and its statement in one of "
        f"{', '.join(STATEMENT_COLUMNS)}"
    )

    def file_columns(self, wanted: Sequence[str]) -> list[FileColumn]:
        return [
            *(FileColumn(c, None, required=c != "source") for c in COLUMNS),
            *(FileColumn(c, pa.string(), required=False) for c in STATEMENT_COLUMNS),
        ]

    def row_id(self, row: dict[str, Any]) -> str | None:
        return row.get("problem_id")

    def problem(self, row: dict[str, Any]) -> Problem:
        statement = next((row[c] for c in STATEMENT_COLUMNS if row.get(c)), "")
        info = json_value(row.get("verification_info") or "{}", "verification_info")
        meta = json_value(row.get("metadata") or "{}", "metadata")
        if not isinstance(info, dict) or not isinstance(meta, dict):
            raise FormatError("verification_info and metadata are not JSON objects")
        tests, grader = test_case_tests(
            info.get("test_cases") or [], "verification_info.test_cases"
        )
        label, rating = difficulty(meta.get("difficulty"))
        code = language_code(info.get("language"))
        gold = row.get("gold_standard_solution")
        return Problem(
            name=str(row.get("problem_id") or ""),
            description=statement,
            data_source=self.name,
            private=tests,
            grader=grader,
            difficulty_label=label,
            cf_rating=rating,
            source=CODEFORCES_SOURCE if rating else 0,
            time_seconds=seconds_from_text(meta.get("time_limit")),
            memory_bytes=bytes_from_text(meta.get("memory_limit_bytes"))
            or bytes_from_text(meta.get("memory_limit")),
            solutions=[(code, program_text(gold))] if code is not None and gold else [],
        )
