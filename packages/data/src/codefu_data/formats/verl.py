"""A veRL-format parquet (``prompt`` + ``reward_model.ground_truth``) read as a raw source.

The CodeFu reference's pre-processed data has this shape: no ``description`` column, the
statement inside the prompt, the tests and limits in the ground truth. ``raw_table`` turns
such rows into the raw CodeContests columns ``prepare`` reads, so the same filters, tiers,
judging rules and prompts apply to them as to CodeContests itself.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from codefu_data.formats.base import FileColumn, FormatError, ReadOptions, SourceFormat
from codefu_data.schema import (
    CHECKER_TYPE,
    CODEFORCES_SOURCE,
    DATA_SOURCE,
    GRADER_TYPE,
    PROBLEM_SCHEMA,
    RAW_SCHEMA,
    REQUIRED_COLUMNS,
)
from codefu_sandbox import GraderConfig

VERL_COLUMNS = ("prompt", "reward_model")
# Raw columns a veRL row carries (in its ground truth or prompt): those `prepare` needs.
DERIVED_COLUMNS = frozenset(REQUIRED_COLUMNS)
UNKNOWN_SOURCE = 0

_PROBLEM_MARK = re.compile(r"(?:^|\n)Problem:[ \t]*\n")
# What may follow the statement: the reference's chat-template tail, then our template's limits.
_CHAT_TAIL = re.compile(r"\s*(?:<\|im_end\|>\s*)?<\|im_start\|>assistant\s*$")
_LIMITS_TAIL = re.compile(r"\n\s*Time limit per test:[^\n]*\n\s*Memory limit per test:[^\n]*\s*$")
_CHAT_HEAD = re.compile(r"^\s*<\|im_start\|>(?:user|system)\s*\n")


def statement_from_prompt(messages: Sequence[Mapping[str, Any]] | None) -> str:
    """The problem statement inside a veRL prompt: the last user message's text after its
    ``Problem:`` line, without the chat-template or time/memory-limit tail. A message
    without a ``Problem:`` line is taken whole."""
    user = [m for m in messages or () if (m or {}).get("role") == "user"]
    text = str((user[-1] if user else {}).get("content") or "")
    found = _PROBLEM_MARK.search(text)
    text = text[found.end() :] if found is not None else _CHAT_HEAD.sub("", text)
    return _LIMITS_TAIL.sub("", _CHAT_TAIL.sub("", text)).strip()


class Verl(SourceFormat):
    """A veRL-format parquet: `prompt` + `reward_model`, no raw `description`."""

    name = "verl"
    key_columns = frozenset(VERL_COLUMNS)
    described = "a veRL-format file has prompt and reward_model.ground_truth"

    def detect(self, columns: Collection[str]) -> bool:
        return super().detect(columns) and "description" not in columns

    def check(self, wanted: Sequence[str]) -> None:
        check_derivable(wanted)

    def file_columns(self, wanted: Sequence[str]) -> list[FileColumn]:
        return [
            *(FileColumn(name, None) for name in VERL_COLUMNS),
            FileColumn("data_source", pa.string(), required=False),
        ]

    def to_problems(
        self, table: pa.Table, wanted: Sequence[str], first_row: int, options: ReadOptions
    ) -> pa.Table:
        try:
            return raw_table(table, wanted)
        except (KeyError, ValueError, TypeError, pa.ArrowException) as exc:
            last = first_row + table.num_rows - 1
            raise FormatError(
                f"rows {first_row}-{last}: not a veRL row with reward_model.ground_truth "
                f"{{name, tests, limits}}: {exc}"
            ) from exc


def check_derivable(columns: Sequence[str]) -> None:
    """FormatError naming the raw columns a veRL row cannot provide (`solutions`, …)."""
    missing = [c for c in columns if c not in DERIVED_COLUMNS]
    if missing:
        raise FormatError(
            f"a veRL-format parquet has no {', '.join(missing)} (only tests and limits in its "
            "ground truth); data.validate=true needs raw CodeContests shards"
        )


def raw_table(table: pa.Table, columns: Sequence[str]) -> pa.Table:
    """The problem columns `columns` of veRL rows (types of ``PROBLEM_SCHEMA``).

    ``source`` is Codeforces for a ground truth with a Codeforces rating, unknown otherwise
    (a veRL row does not say where a problem comes from). ``data_source`` is the row's own
    (CodeContests' when it has none), and the ground truth's grader and named comparison
    (a checker without parameters, such as ``livecodebench``) stay; its statement keeps what
    the prompt showed after it (a functional problem's starter code), so it has no starter
    code of its own, nor a difficulty label or a date.
    """
    check_derivable(columns)
    gt = pc.struct_field(table.column("reward_model").combine_chunks(), "ground_truth")
    rating = pc.fill_null(pc.struct_field(gt, "cf_rating"), 0).cast(pa.int32())
    limit = pc.struct_field(gt, "time_limit")
    time_type = RAW_SCHEMA.field("time_limit").type
    derived: dict[str, Any] = {
        "name": pc.struct_field(gt, "name").cast(pa.string()),
        "description": pa.array(
            [statement_from_prompt(p) for p in table.column("prompt").to_pylist()], pa.string()
        ),
        "public_tests": pc.struct_field(gt, "public_tests"),
        "private_tests": pc.struct_field(gt, "private_tests"),
        "source": pc.if_else(pc.greater(rating, 0), CODEFORCES_SOURCE, UNKNOWN_SOURCE).cast(
            pa.int64()
        ),
        "cf_rating": rating,
        "time_limit": pa.StructArray.from_arrays(
            [
                pc.struct_field(limit, "seconds").cast(pa.int64(), safe=False),
                pc.fill_null(pc.struct_field(limit, "nanos"), 0).cast(pa.int64(), safe=False),
            ],
            fields=list(time_type),
            mask=pc.is_null(limit),
        ),
        "memory_limit_bytes": pc.struct_field(gt, "memory_limit_bytes").cast(pa.int64()),
        "data_source": pc.fill_null(table.column("data_source"), DATA_SOURCE),
        "grader": _graders(gt),
        "source_checker": pa.array(
            [c if c and c.get("params") is None else None for c in _checkers(gt)],
            CHECKER_TYPE,
        ),
    }
    arrays = [
        derived[c].cast(PROBLEM_SCHEMA.field(c).type)
        if c in derived
        else pa.nulls(table.num_rows, PROBLEM_SCHEMA.field(c).type)
        for c in columns
    ]
    return pa.Table.from_arrays(
        arrays, schema=pa.schema([PROBLEM_SCHEMA.field(c) for c in columns])
    )


def _graders(gt: pa.StructArray) -> pa.Array:
    """The ground truths' graders as this version stores them (a file prepared when the
    parameters were fields of a fixed struct reads too); nulls where the file has none."""
    if gt.type.get_field_index("grader") < 0:
        return pa.nulls(len(gt), GRADER_TYPE)
    stored = pc.struct_field(gt, "grader").to_pylist()
    return pa.array(
        [None if g is None else GraderConfig.from_dict(g).stored() for g in stored], GRADER_TYPE
    )


def _checkers(gt: pa.StructArray) -> list[dict[str, Any] | None]:
    if gt.type.get_field_index("checker") < 0:
        return [None] * len(gt)
    return pc.struct_field(gt, "checker").to_pylist()
