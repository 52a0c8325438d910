"""The output of `prepare`: one parquet file per tier and split, appended in row groups of
bounded size, and the veRL rows (`schema.OUTPUT_SCHEMA`) a batch's kept problems become.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from codefu_data.schema import (
    ABILITY,
    CHECKER_TYPE,
    DATA_SOURCE,
    EXTRA_INFO_TYPE,
    GRADER_TYPE,
    GROUND_TRUTH_TYPE,
    JUDGING_RULES_TYPE,
    OUTPUT_SCHEMA,
    PROMPT_TYPE,
    REWARD_MODEL_TYPE,
    TESTS_TYPE,
)
from codefu_sandbox.rules import JudgingRules

FLUSH_ROWS = 1024
FLUSH_BYTES = 32 << 20


class TierWriter:
    """One output parquet file, appended in row groups of bounded size."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.writer = pq.ParquetWriter(path, OUTPUT_SCHEMA, compression="zstd")
        self.pending: list[pa.Table] = []
        self.pending_rows = 0
        self.pending_bytes = 0
        self.rows = 0

    def append(self, table: pa.Table) -> None:
        self.pending.append(table)
        self.pending_rows += table.num_rows
        self.pending_bytes += table.nbytes
        self.rows += table.num_rows
        if self.pending_rows >= FLUSH_ROWS or self.pending_bytes >= FLUSH_BYTES:
            self.flush()

    def flush(self) -> None:
        if self.pending:
            self.writer.write_table(pa.concat_tables(self.pending))
            self.pending, self.pending_rows, self.pending_bytes = [], 0, 0

    def close(self) -> None:
        self.flush()
        self.writer.close()


def _non_null_tests(arr: pa.Array) -> pa.Array:
    """Tests struct with nulls (struct or lists) replaced by empty lists."""
    if arr.null_count == 0 and all(arr.field(i).null_count == 0 for i in range(2)):
        return arr
    rows = [
        {"input": (v or {}).get("input") or [], "output": (v or {}).get("output") or []}
        for v in arr.to_pylist()
    ]
    return pa.array(rows, type=TESTS_TYPE)


def build_rows(
    sub: pa.Table,
    *,
    prompts: list[list[dict[str, str]]],
    rules: list[JudgingRules],
    split: str,
    tier: str,
    first_index: int,
    tests_override: tuple[list[dict[str, list[str]]], list[dict[str, list[str]]]] | None,
    checkers: list[dict[str, Any] | None] | None = None,
) -> pa.Table:
    """The veRL rows of the problems `sub` (problem columns): `checkers` holds each one's
    checker configuration (`CheckerConfig.to_dict()`; None: none)."""
    n = sub.num_rows
    if tests_override is None:
        public = _non_null_tests(sub.column("public_tests").combine_chunks())
        private = _non_null_tests(sub.column("private_tests").combine_chunks())
    else:
        public = pa.array(tests_override[0], type=TESTS_TYPE)
        private = pa.array(tests_override[1], type=TESTS_TYPE)
    tl = sub.column("time_limit").combine_chunks()
    time_limit = pa.StructArray.from_arrays(
        [
            pc.fill_null(pc.struct_field(tl, "nanos"), 0).cast(pa.float64()),
            pc.struct_field(tl, "seconds").cast(pa.float64()),
        ],
        fields=list(GROUND_TRUTH_TYPE.field("time_limit").type),
    )
    ground_truth = pa.StructArray.from_arrays(
        [
            pc.fill_null(sub.column("cf_rating").combine_chunks(), 0).cast(pa.int64()),
            sub.column("memory_limit_bytes").combine_chunks().cast(pa.int64()),
            sub.column("name").combine_chunks(),
            private,
            public,
            time_limit,
            pa.array([r.to_dict() for r in rules], JUDGING_RULES_TYPE),
            pa.array(checkers or [None] * n, CHECKER_TYPE),
            sub.column("grader").combine_chunks().cast(GRADER_TYPE),
        ],
        fields=list(GROUND_TRUTH_TYPE),
    )
    reward_model = pa.StructArray.from_arrays(
        [ground_truth, pa.array(["rule"] * n, pa.string())], fields=list(REWARD_MODEL_TYPE)
    )
    extra_info = pa.StructArray.from_arrays(
        [
            pa.array(range(first_index, first_index + n), pa.int64()),
            pa.array([split] * n, pa.string()),
            pa.array([tier] * n, pa.string()),
            sub.column("name").combine_chunks(),
        ],
        fields=list(EXTRA_INFO_TYPE),
    )
    return pa.Table.from_arrays(
        [
            pc.fill_null(sub.column("data_source").combine_chunks(), DATA_SOURCE),
            pa.array(prompts, PROMPT_TYPE),
            pa.array([ABILITY] * n, pa.string()),
            reward_model,
            extra_info,
        ],
        schema=OUTPUT_SCHEMA,
    )
