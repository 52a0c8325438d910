"""CodeContests (`deepmind/code_contests`): parquet shards, one parquet or JSONL file, or the
hub dataset; its columns are the raw problem columns (`schema.RAW_SCHEMA`) themselves.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from codefu_data.formats.base import FileColumn, SourceFormat
from codefu_data.schema import RAW_SCHEMA


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
        ]

    def to_problems(self, table: pa.Table, wanted: Sequence[str], first_row: int) -> pa.Table:
        return table.select(list(wanted))
