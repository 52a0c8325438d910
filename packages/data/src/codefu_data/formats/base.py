"""What a source format is: the columns it reads from a file and how its rows become problems.

A format adapter (`SourceFormat`) says whether a file's columns are its own (`detect`),
which of the file's columns to read for the problem columns asked for (`file_columns`,
each with the Arrow type it is cast to), and how a batch of those columns becomes the
problem columns (`to_problems`, types of `codefu_data.schema.PROBLEM_SCHEMA`). The reader
(`codefu_data.reader`) does the rest for every format alike: finding the files, reading
parquet a row group at a time and JSONL a batch of lines at a time, casting, and naming
the file, row and column of any error.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import pyarrow as pa


class FormatError(ValueError):
    """A file or row a format cannot read; the message names the row(s) and what is wrong
    (the reader adds the file)."""


@dataclass(frozen=True)
class ReadOptions:
    """The limits a problem gets when its row states none (`data.default_time_limit_seconds`,
    `data.default_memory_limit_bytes`)."""

    time_seconds: float = 6.0  # LiveCodeBench's timeout per test
    memory_bytes: int = 256 << 20


@dataclass(frozen=True)
class FileColumn:
    """A column a format reads from its files: its name, the Arrow type it is cast to
    (None: read as stored), and whether a file must have it (an optional one that is
    absent reads as nulls)."""

    name: str
    type: pa.DataType | None
    required: bool = True


class SourceFormat(ABC):
    """One source format: register an instance in `codefu_data.formats`."""

    name: str  # the registry key, `data.format`
    # The columns that identify the format: a file with all of them is of this format.
    key_columns: frozenset[str]
    # What a file of this format holds, for error messages ("a CodeContests file has …").
    described: str

    def detect(self, columns: Collection[str]) -> bool:
        """True when a file with these column names is of this format."""
        return self.key_columns <= set(columns)

    def check(self, wanted: Sequence[str]) -> None:
        """FormatError when this format cannot give one of the problem columns `wanted`."""
        return None

    @abstractmethod
    def file_columns(self, wanted: Sequence[str]) -> list[FileColumn]:
        """The file columns to read for the problem columns `wanted`."""

    @abstractmethod
    def to_problems(
        self, table: pa.Table, wanted: Sequence[str], first_row: int, options: ReadOptions
    ) -> pa.Table:
        """The problem columns `wanted` (`schema.PROBLEM_SCHEMA`) of a batch of rows
        (`file_columns`, cast), whose first row is row `first_row` of its file; a row without
        limits gets `options`'. FormatError names the row that cannot be read."""
