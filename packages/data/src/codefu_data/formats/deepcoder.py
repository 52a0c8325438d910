"""DeepCoder's training and test sets (`DeepCoder-Preview-Dataset`, parquet per subset).

A row: `problem` (the statement), `tests` (JSON text, its form by subset), and where the
subset has them `starter_code`, `metadata` (LiveCodeBench's `func_name`) and `solutions`
(a list of Python 3 programs). The form of `tests` says how to read it:
- lcbv5: LiveCodeBench's list of `{"input", "output", "testtype"}` (functional when
  `metadata.func_name`, or a test's `metadata.func_name`, is set): judged as LiveCodeBench
  judges (`formats.livecodebench`);
- codeforces: a list of `{"input", "output"}`: stdin tests;
- taco: TACO's `{"inputs", "outputs", "fn_name"?}` (`formats.taco`);
- primeintellect: PrimeIntellect's test cases `{"type", "input", "output", "fn_name"?}`
  (`formats.primeintellect`).
The rows carry no id, difficulty, date or limits: a problem's name is `deepcoder-` and its
statement's digest; it gets the default limits, and no tier but `data.other_sources`'.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from codefu_data.formats.base import FileColumn, FormatError
from codefu_data.formats.livecodebench import function_name, lcb_judging, lcb_tests
from codefu_data.formats.primeintellect import test_case_tests
from codefu_data.formats.problems import (
    Problem,
    RowFormat,
    json_value,
    program_text,
    statement_id,
    stdin_text,
)
from codefu_data.formats.taco import input_output_tests
from codefu_data.schema import PYTHON3_LANGUAGE
from codefu_sandbox import GraderConfig

DATA_SOURCE = "deepcoder"
COLUMNS = ("problem", "tests", "starter_code", "metadata", "solutions")


def deepcoder_tests(
    tests: Any, metadata: Any
) -> tuple[tuple[list[str], list[str]], GraderConfig | None, dict[str, Any] | None]:
    """((inputs, outputs), grader, checker) of a row's `tests`, in whichever subset's form."""
    if isinstance(tests, dict):
        found, grader = input_output_tests(tests, "tests")
        return found, grader, None
    if not isinstance(tests, list) or not all(isinstance(t, dict) for t in tests):
        raise FormatError("tests is neither a list of tests nor TACO's inputs and outputs")
    if any("testtype" in t for t in tests):
        fn_name = function_name(metadata) or function_name(
            (tests[0] if tests else {}).get("metadata")
        )
        grader, checker = lcb_judging(fn_name)
        return lcb_tests(tests, fn_name, "tests"), grader, checker
    if any("type" in t or "fn_name" in t for t in tests):
        found, grader = test_case_tests(tests, "tests")
        return found, grader, None
    return (
        (
            [stdin_text(t.get("input"), f"tests[{i}].input") for i, t in enumerate(tests)],
            [stdin_text(t.get("output"), f"tests[{i}].output") for i, t in enumerate(tests)],
        ),
        None,
        None,
    )


class DeepCoder(RowFormat):
    name = DATA_SOURCE
    key_columns = frozenset({"problem", "tests"})
    described = (
        f"a DeepCoder file has {', '.join(COLUMNS)} (the last three where its subset has them)"
    )

    def file_columns(self, wanted: Sequence[str]) -> list[FileColumn]:
        return [
            FileColumn("problem", pa.string()),
            FileColumn("tests", None),
            FileColumn("starter_code", pa.string(), required=False),
            FileColumn("metadata", None, required=False),
            FileColumn("solutions", None, required=False),
        ]

    def row_id(self, row: dict[str, Any]) -> str:
        return statement_id(DATA_SOURCE, str(row.get("problem") or ""))

    def problem(self, row: dict[str, Any]) -> Problem:
        name = self.row_id(row)
        metadata = json_value(row.get("metadata") or "{}", "metadata")
        tests, grader, checker = deepcoder_tests(json_value(row.get("tests"), "tests"), metadata)
        solutions = json_value(row.get("solutions") or "[]", "solutions")
        if not isinstance(solutions, list):
            raise FormatError("solutions is not a list of programs")
        return Problem(
            name=name,
            description=str(row.get("problem") or ""),
            data_source=DATA_SOURCE,
            private=tests,
            grader=grader,
            source_checker=checker,
            starter_code=row.get("starter_code") or "",
            solutions=[
                (PYTHON3_LANGUAGE, program_text(s))
                for s in solutions
                if isinstance(s, str) and s.strip()
            ],
        )
