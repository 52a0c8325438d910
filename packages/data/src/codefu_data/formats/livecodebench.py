"""LiveCodeBench `code_generation_lite` (JSONL or parquet files as the hub serves them).

A row: `question_title`, `question_content`, `platform`, `question_id`, `contest_id`,
`contest_date`, `starter_code`, `difficulty`, `public_test_cases` (JSON text of
`[{"input", "output", "testtype"}]`), `private_test_cases` (the same JSON text, or that text
pickled, zlib-compressed and base64-encoded), `metadata` (JSON text; `func_name` makes the
problem functional). A functional problem's input holds one JSON value per line, one
positional argument each, and its output one JSON value: the problem becomes a call-based
one (grader `call` with the `livecodebench` import prelude and LiveCodeBench's comparison,
`compare` livecodebench: a returned tuple reads as a list, a tuple inside the result never
equals). A stdin problem
is compared by the `livecodebench` checker, with the same prelude. LiveCodeBench states no
limits: rows get `data.default_time_limit_seconds` (its 6 s) and
`data.default_memory_limit_bytes`.

The pickled private tests are untrusted input: they are unpickled by `text_from_pickle`,
which refuses every global (no class, no function: nothing runs) and any result but a
string, and decompresses at most `MAX_PRIVATE_TESTS_BYTES`.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import io
import json
import pickle
import sys
import zlib
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa

from codefu_data.formats.base import FileColumn, FormatError
from codefu_data.formats.problems import (
    UNKNOWN_SOURCE,
    Problem,
    RowFormat,
    call_arguments,
    call_grader,
    difficulty,
    json_value,
)
from codefu_data.schema import CODEFORCES_SOURCE
from codefu_sandbox import LIVECODEBENCH_INT_DIGITS, GraderConfig, stdio_grader

DATA_SOURCE = "livecodebench"
# The run-time prelude of imports LiveCodeBench gives every program, and its comparison of
# stdin problems' outputs (codefu_sandbox: the prelude and checkers/livecodebench.py).
PRELUDE = "livecodebench"
CHECKER = {"name": "livecodebench", "params": None}
COMPARE = "livecodebench"  # the call grader's LiveCodeBench comparison
MAX_PRIVATE_TESTS_BYTES = 1 << 30


def _file(version: int) -> str:
    return "test.jsonl" if version == 1 else f"test{version}.jsonl"


def _releases(last: int) -> dict[str, tuple[str, ...]]:
    """Every `version_tag` of LiveCodeBench's dataset loading script (code_generation_lite.py)
    and the files it reads: `release_vN` the cumulative files test.jsonl … testN.jsonl,
    `release_latest` all of them, `vN` the one file of version N, `vA_vB` the files of
    versions A to B."""
    releases = {f"release_v{n}": tuple(map(_file, range(1, n + 1))) for n in range(1, last + 1)}
    releases["release_latest"] = releases[f"release_v{last}"]
    releases.update({f"v{n}": (_file(n),) for n in range(1, last + 1)})
    for a in range(1, last + 1):
        for b in range(a + 1, last + 1):
            releases[f"v{a}_v{b}"] = tuple(map(_file, range(a, b + 1)))
    return releases


RELEASES = _releases(6)
COLUMNS = (
    "question_title",
    "question_content",
    "platform",
    "question_id",
    "contest_id",
    "contest_date",
    "starter_code",
    "difficulty",
    "public_test_cases",
    "private_test_cases",
    "metadata",
)


class _TextOnlyUnpickler(pickle.Unpickler):
    """An unpickler that loads no global: a pickle that names a class or a function (the
    only way a pickle runs code) is refused before anything of it runs."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"it loads the global {module}.{name}")


def text_from_pickle(data: bytes) -> str:
    """The string a pickle holds; FormatError for any global or any other object."""
    try:
        value = _TextOnlyUnpickler(io.BytesIO(data)).load()
    except Exception as exc:  # any malformed pickle: UnpicklingError, EOFError, ValueError, …
        raise FormatError(f"refused pickle: {exc}; only a pickled text string is read") from exc
    if not isinstance(value, str):
        raise FormatError(f"refused pickle: it holds a {type(value).__name__}, not a text string")
    return value


def private_tests_text(value: str) -> str:
    """The JSON text of LiveCodeBench's `private_test_cases`: as given, or decoded from
    base64(zlib(pickle(JSON text)))."""
    if value.lstrip().startswith("["):
        return value
    try:
        packed = base64.b64decode(value.encode("ascii"), validate=True)
        inflate = zlib.decompressobj()
        data = inflate.decompress(packed, MAX_PRIVATE_TESTS_BYTES)
    except (binascii.Error, UnicodeEncodeError, ValueError, zlib.error) as exc:
        raise FormatError(
            f"private_test_cases is neither JSON nor base64(zlib(pickle)) text ({exc})"
        ) from exc
    if inflate.unconsumed_tail:
        raise FormatError(
            f"private_test_cases inflate to more than {MAX_PRIVATE_TESTS_BYTES} bytes"
        )
    return text_from_pickle(data)


@contextlib.contextmanager
def livecodebench_digits() -> Iterator[None]:
    """Integers convert to and from text up to LiveCodeBench's digit limit (its grader reads
    its tests under it): a functional test's big integers load as they do there."""
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(LIVECODEBENCH_INT_DIGITS)
    try:
        yield
    finally:
        sys.set_int_max_str_digits(old)


def lcb_tests(cases: Any, fn_name: str | None, what: str) -> tuple[list[str], list[str]]:
    """(inputs, outputs) of LiveCodeBench's test list; for a functional problem (`fn_name`)
    each input becomes the JSON array of its lines' values and each output its JSON value
    (integers of up to LiveCodeBench's 50,000 digits)."""
    if fn_name is not None:
        with livecodebench_digits():
            return _tests(cases, fn_name, what)
    return _tests(cases, fn_name, what)


def _tests(cases: Any, fn_name: str | None, what: str) -> tuple[list[str], list[str]]:
    if not isinstance(cases, list):
        raise FormatError(f"{what} is not a list of tests")
    inputs: list[str] = []
    outputs: list[str] = []
    for i, case in enumerate(cases):
        if not isinstance(case, dict) or not isinstance(case.get("input"), str):
            raise FormatError(f"{what}[{i}] has no text input")
        if not isinstance(case.get("output"), str):
            raise FormatError(f"{what}[{i}] has no text output")
        if fn_name is None:
            inputs.append(case["input"])
            outputs.append(case["output"])
            continue
        lines = case["input"].split("\n")
        args = [json_value(line, f"{what}[{i}] input line {n + 1}") for n, line in enumerate(lines)]
        inputs.append(call_arguments(args, f"{what}[{i}] input"))
        outputs.append(json.dumps(json_value(case["output"], f"{what}[{i}] output")))
    return inputs, outputs


def lcb_judging(fn_name: str | None) -> tuple[GraderConfig, dict[str, Any] | None]:
    """(grader, checker) of a LiveCodeBench problem: a call with the prelude, or stdin with
    the prelude and the `livecodebench` checker."""
    if fn_name is not None:
        return call_grader(fn_name, prelude=PRELUDE, compare=COMPARE), None
    return stdio_grader(prelude=PRELUDE), dict(CHECKER)


def function_name(metadata: Any) -> str | None:
    """`metadata.func_name` (None for a stdin problem)."""
    if not isinstance(metadata, dict):
        return None
    name = metadata.get("func_name")
    return name if isinstance(name, str) and name.strip() else None


class LiveCodeBench(RowFormat):
    name = DATA_SOURCE
    key_columns = frozenset({"question_id", "question_content", "public_test_cases"})
    described = f"a LiveCodeBench file has {', '.join(COLUMNS)}"

    def file_columns(self, wanted: Sequence[str]) -> list[FileColumn]:
        return [FileColumn(c, pa.string()) for c in COLUMNS]

    def row_id(self, row: dict[str, Any]) -> str | None:
        return row.get("question_id")

    def problem(self, row: dict[str, Any]) -> Problem:
        fn_name = function_name(json_value(row["metadata"] or "{}", "metadata"))
        public = lcb_tests(
            json_value(row["public_test_cases"] or "[]", "public_test_cases"),
            fn_name,
            "public_test_cases",
        )
        private_text = private_tests_text(row["private_test_cases"] or "[]")
        private = lcb_tests(
            json_value(private_text, "private_test_cases"), fn_name, "private_test_cases"
        )
        grader, checker = lcb_judging(fn_name)
        label, _ = difficulty(row["difficulty"])
        platform = str(row["platform"] or "").strip().lower() or None
        return Problem(
            name=str(row["question_id"] or ""),
            description=row["question_content"] or "",
            data_source=DATA_SOURCE,
            public=public,
            private=private,
            grader=grader,
            source_checker=checker,
            difficulty_label=label,
            source=CODEFORCES_SOURCE if platform == "codeforces" else UNKNOWN_SOURCE,
            contest_date=row["contest_date"] or None,
            platform=platform,
            starter_code=row["starter_code"] or "",
        )
