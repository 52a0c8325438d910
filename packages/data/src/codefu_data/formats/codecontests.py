"""CodeContests (`deepmind/code_contests`): parquet shards, one parquet or JSONL file, or the
hub dataset; its columns are the raw problem columns (`schema.RAW_SCHEMA`) themselves. Its
problems are stdin problems of source `code_contests`, without a difficulty label, contest
date or starter code.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from codefu_data.formats.base import FileColumn, ReadOptions, SourceFormat
from codefu_data.schema import DATA_SOURCE, PROBLEM_EXTRA, RAW_SCHEMA

EXTRA = {field.name: field for field in PROBLEM_EXTRA}


class CodeContests(SourceFormat):
    name = "codecontests"
    key_columns = frozenset({"name", "description", "public_tests", "private_tests"})
    described = f"a CodeContests file has {', '.join(RAW_SCHEMA.names)}"

    def file_columns(self, wanted: Sequence[str]) -> list[FileColumn]:
        # A column beside CodeContests' own (a checker column, `data.checkers.column`) is text.
        return [
            FileColumn(
                name, RAW_SCHEMA.field(name).type if name in RAW_SCHEMA.names else pa.string()
            )
            for name in wanted
            if name not in EXTRA
        ]

    def to_problems(
        self, table: pa.Table, wanted: Sequence[str], first_row: int, options: ReadOptions
    ) -> pa.Table:
        return pa.table({name: self._column(table, name) for name in wanted})

    @staticmethod
    def _column(table: pa.Table, name: str) -> pa.Array | pa.ChunkedArray:
        if name == "data_source":
            return pa.array([DATA_SOURCE] * table.num_rows, pa.string())
        if name in EXTRA:
            return pa.nulls(table.num_rows, EXTRA[name].type)
        return table.column(name)
