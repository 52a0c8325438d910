"""TACO and APPS (parquet or JSONL files as the hub serves them).

Both hold the tests in `input_output`, the JSON text of `{"inputs": [...], "outputs": [...],
"fn_name"?}`: without `fn_name` a stdin problem (an input or output given as a list of
lines is those lines joined), with it a call-based one: `inputs[i]` is the list of
positional arguments, `outputs[i]` the expected value, compared as their graders compare
(`compare` "apps": also equal when the expected value is a list whose first element equals
the result). `solutions` is the JSON text of a list of Python 3 programs.

TACO's own columns: `question`, `difficulty` (EASY … VERY_HARD), `source`, `url`,
`time_limit` / `memory_limit` as text ("2 seconds", "256 megabytes"), `date`. It has no id:
a problem's name is its `url`, else `taco-` and its statement's digest. APPS': `problem_id`,
`question`, `difficulty` (introductory, interview, competition), `url`; it states no limits.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Sequence
from typing import Any

from codefu_data.formats.base import FileColumn, FormatError
from codefu_data.formats.problems import (
    Problem,
    RowFormat,
    bytes_from_text,
    call_arguments,
    call_grader,
    difficulty,
    json_value,
    seconds_from_text,
    statement_id,
    stdin_text,
)
from codefu_data.schema import PYTHON3_LANGUAGE
from codefu_sandbox import GraderConfig

TACO_COLUMNS = (
    "question",
    "solutions",
    "starter_code",
    "input_output",
    "difficulty",
    "source",
    "url",
    "time_limit",
    "memory_limit",
    "date",
)
APPS_COLUMNS = (
    "problem_id",
    "question",
    "solutions",
    "input_output",
    "difficulty",
    "url",
    "starter_code",
)


def input_output_tests(
    value: Any, what: str = "input_output"
) -> tuple[tuple[list[str], list[str]], GraderConfig | None]:
    """((inputs, outputs), grader) of TACO/APPS' `input_output` (empty: no tests)."""
    tests = json_value(value, what) if value not in (None, "") else {}
    if not isinstance(tests, dict):
        raise FormatError(f"{what} is not a JSON object with inputs and outputs")
    inputs = tests.get("inputs") or []
    outputs = tests.get("outputs") or []
    if not isinstance(inputs, list) or not isinstance(outputs, list):
        raise FormatError(f"{what}: inputs and outputs are not lists")
    if len(inputs) != len(outputs):
        raise FormatError(f"{what} has {len(inputs)} inputs and {len(outputs)} outputs")
    fn_name = tests.get("fn_name")
    if fn_name is None:
        return (
            [stdin_text(v, f"{what}.inputs[{i}]") for i, v in enumerate(inputs)],
            [stdin_text(v, f"{what}.outputs[{i}]") for i, v in enumerate(outputs)],
        ), None
    grader = call_grader(fn_name, prelude=None, compare="apps")
    return (
        [call_arguments(v, f"{what}.inputs[{i}]") for i, v in enumerate(inputs)],
        [json.dumps(v) for v in outputs],
    ), grader


def python_solutions(value: Any) -> list[tuple[int, str]]:
    """TACO/APPS' `solutions` (JSON text of a list of Python 3 programs; empty: none)."""
    if value in (None, ""):
        return []
    programs = json_value(value, "solutions")
    if not isinstance(programs, list):
        raise FormatError("solutions is not a JSON list of programs")
    return [(PYTHON3_LANGUAGE, p) for p in programs if isinstance(p, str) and p.strip()]


def iso_date(text: Any) -> str | None:
    """An ISO date from a date text TACO may hold ('2021-05-18', '18.05.2021'), else None."""
    value = str(text or "").strip()
    for layout in ("%Y-%m-%d", "%d.%m.%Y", "%Y/%m/%d"):
        try:
            return datetime.datetime.strptime(value[:10], layout).date().isoformat()
        except ValueError:
            continue
    return None


class _InputOutput(RowFormat):
    """What TACO and APPS share: their rows' columns."""

    columns: tuple[str, ...]

    def problem(self, row: dict[str, Any]) -> Problem:
        statement = str(row.get("question") or "")
        tests, grader = input_output_tests(row.get("input_output"))
        label, rating = difficulty(row.get("difficulty"))
        return Problem(
            name=self.row_id(row) or statement_id(self.name, statement),
            description=statement,
            data_source=self.name,
            private=tests,
            grader=grader,
            difficulty_label=label,
            cf_rating=rating,
            starter_code=str(row.get("starter_code") or ""),
            solutions=python_solutions(row.get("solutions")),
            time_seconds=seconds_from_text(row.get("time_limit")),
            memory_bytes=bytes_from_text(row.get("memory_limit")),
            contest_date=iso_date(row.get("date")),
        )


class Taco(_InputOutput):
    name = "taco"
    columns = TACO_COLUMNS
    key_columns = frozenset({"question", "input_output", "solutions", "raw_tags", "skill_types"})
    described = f"a TACO file has {', '.join(TACO_COLUMNS)}"

    def file_columns(self, wanted: Sequence[str]) -> list[FileColumn]:
        return [
            FileColumn(c, None, required=c in ("question", "input_output")) for c in self.columns
        ]

    def row_id(self, row: dict[str, Any]) -> str | None:
        return str(row.get("url") or "").strip() or None


class Apps(_InputOutput):
    name = "apps"
    columns = APPS_COLUMNS
    key_columns = frozenset({"problem_id", "question", "input_output", "solutions", "url"})
    described = f"an APPS file has {', '.join(APPS_COLUMNS)}"

    def file_columns(self, wanted: Sequence[str]) -> list[FileColumn]:
        return [FileColumn(c, None, required=c != "starter_code") for c in self.columns]

    def row_id(self, row: dict[str, Any]) -> str | None:
        return str(row.get("problem_id") or "").strip() or None
