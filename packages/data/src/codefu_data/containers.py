"""How a source's files are read, whatever their format: parquet a row group at a time,
JSONL a batch of lines at a time, rows from the hub as they stream. Each batch is cast to
the columns its format reads (`SourceFormat.file_columns`) and turned into problem columns
by the format (`to_problems`); every error names the file, the row(s) and the column.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from codefu_data import formats
from codefu_data.formats import (
    DEFAULT_OPTIONS,
    FileColumn,
    FormatError,
    ReadOptions,
    SourceFormat,
)
from codefu_data.schema import PROBLEM_SCHEMA


class DataError(ValueError):
    """Bad input or configuration; the message names the file/row/column and what to do."""


@dataclass(frozen=True)
class RawFile:
    path: Path
    split: str  # raw split: train, valid or test
    container: str  # "parquet" or "jsonl"
    fmt: SourceFormat | None  # None: unreadable, reported when its columns are checked
    order: int = 0  # position of the source (of several) it came from
    options: ReadOptions = DEFAULT_OPTIONS


@dataclass
class Batch:
    """Consecutive rows of one raw file (or hub split): problem columns (`PROBLEM_SCHEMA`)."""

    origin: str  # file path or hub id + split, for messages
    split: str
    first_row: int  # 0-based row number of the first row within its file/split
    table: pa.Table


def _problem_type(name: str) -> pa.DataType:
    """The Arrow type of problem column `name` (a column beside the problem's is text)."""
    return PROBLEM_SCHEMA.field(name).type if name in PROBLEM_SCHEMA.names else pa.string()


def cast_columns(
    table: pa.Table, columns: Sequence[FileColumn], origin: str, rows: str
) -> pa.Table:
    """Select and cast `columns`; a wrong type names the file, rows and column. An optional
    column the table lacks is read as nulls."""
    arrays = []
    fields = []
    for column in columns:
        name = column.name
        if name not in table.column_names:
            if column.required:
                raise DataError(f"{origin}: missing column {name!r} ({rows}).")
            want = column.type or pa.null()
            arrays.append(pa.nulls(table.num_rows, want))
            fields.append(pa.field(name, want))
            continue
        col = table.column(name)
        want = column.type or col.type
        if col.type != want:
            try:
                col = col.cast(want)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
                raise DataError(
                    f"{origin}: column {name!r} ({rows}) has type {col.type}, "
                    f"expected {want}: {exc}"
                ) from exc
        arrays.append(col)
        fields.append(pa.field(name, want))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def _problems(
    fmt: SourceFormat,
    table: pa.Table,
    columns: Sequence[str],
    *,
    origin: str,
    first: int,
    options: ReadOptions,
) -> pa.Table:
    """The problem columns of a batch of `fmt`'s rows, cast to the problem schema's types."""
    try:
        problems = fmt.to_problems(table, columns, first, options)
    except FormatError as exc:
        raise DataError(f"{origin}: {exc}") from exc
    rows = f"rows {first}-{first + table.num_rows - 1}"
    wanted = [FileColumn(name, _problem_type(name)) for name in columns]
    return cast_columns(problems, wanted, origin, rows)


def check_format(fmt: SourceFormat | None, columns: Sequence[str], origin: str) -> SourceFormat:
    """`fmt`, once it says it can give the problem columns `columns`; else a DataError."""
    if fmt is None:
        raise DataError(f"{origin}: cannot tell its format; set data.format.")
    try:
        fmt.check(columns)
    except FormatError as exc:
        raise DataError(f"{origin}: {exc}.") from exc
    return fmt


def format_of(columns: Sequence[str], name: str, origin: str) -> SourceFormat:
    """The format `name` (`data.format`), or the one detected from `columns`."""
    try:
        return formats.by_name(name) if name != formats.AUTO else formats.detect(columns)
    except FormatError as exc:
        raise DataError(f"{origin}: {exc}.") from exc


def column_names(path: Path, container: str) -> list[str] | None:
    """A file's column names (a parquet footer's, the first JSONL object's keys); None when
    it cannot be read (reported when its columns are checked or its rows read)."""
    if container == "parquet":
        try:
            return list(pq.read_schema(path).names)
        except (OSError, pa.ArrowException):
            return None
    try:
        with path.open("r", encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    obj = json.loads(line)
                    return list(obj) if isinstance(obj, dict) else None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return []


def check_columns(f: RawFile, columns: Sequence[str]) -> None:
    """Open the file's footer: a corrupt file, a missing column or a wrong type fails now (a
    JSONL file's lines are checked as they are read)."""
    if f.container == "parquet":
        try:
            schema = pq.read_schema(f.path)
        except (OSError, pa.ArrowException) as exc:
            raise DataError(
                f"{f.path}: not a readable parquet file ({exc}); re-download or remove it."
            ) from exc
        fmt = check_format(f.fmt, columns, str(f.path))
        for column in fmt.file_columns(columns):
            if column.name not in schema.names:
                if not column.required:
                    continue
                raise DataError(f"{f.path}: missing column {column.name!r}; {fmt.described}.")
            empty = pa.array([], type=schema.field(column.name).type)
            # a cast of an empty column: type errors surface before any writing
            cast_columns(pa.table({column.name: empty}), [column], str(f.path), "schema")
    elif f.fmt is not None:
        check_format(f.fmt, columns, str(f.path))


def parquet_batches(f: RawFile, columns: Sequence[str], batch_size: int) -> Iterator[Batch]:
    origin = str(f.path)
    try:
        pf = pq.ParquetFile(f.path)
    except (OSError, pa.ArrowException) as exc:
        raise DataError(f"{origin}: not a readable parquet file ({exc}).") from exc
    fmt = check_format(f.fmt, columns, origin)
    wanted = fmt.file_columns(columns)
    present = set(pf.schema_arrow.names)
    read = [c.name for c in wanted if c.name in present]
    row = 0
    with pf:
        for rg in range(pf.num_row_groups):
            rg_rows = pf.metadata.row_group(rg).num_rows
            try:
                for rb in pf.iter_batches(batch_size=batch_size, row_groups=[rg], columns=read):
                    rows = f"rows {row}-{row + rb.num_rows - 1}"
                    table = cast_columns(pa.Table.from_batches([rb]), wanted, origin, rows)
                    problems = _problems(
                        fmt, table, columns, origin=origin, first=row, options=f.options
                    )
                    yield Batch(origin, f.split, row, problems)
                    row += rb.num_rows
            except (OSError, pa.ArrowException) as exc:
                raise DataError(
                    f"{origin}: corrupt data in row group {rg} "
                    f"(rows {row}-{row + rg_rows - 1}): {exc}"
                ) from exc


def jsonl_batches(f: RawFile, columns: Sequence[str], batch_size: int) -> Iterator[Batch]:
    origin = str(f.path)
    rows: list[dict[str, Any]] = []
    first = 0
    try:
        handle = f.path.open("r", encoding="utf-8")
    except OSError as exc:
        raise DataError(f"{origin}: cannot open ({exc}).") from exc
    with handle:
        lineno = 0
        fmt: SourceFormat | None = None
        wanted: list[FileColumn] = []
        try:
            for lineno, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise DataError(f"{origin}: line {lineno} is not valid JSON ({exc}).") from exc
                if not isinstance(obj, dict):
                    raise DataError(f"{origin}: line {lineno} is not a JSON object.")
                if fmt is None:
                    fmt = check_format(f.fmt, columns, origin)
                    wanted = fmt.file_columns(columns)
                for column in wanted:
                    if column.required and column.name not in obj:
                        raise DataError(
                            f"{origin}: line {lineno} (row {first + len(rows)}) "
                            f"has no column {column.name!r}."
                        )
                rows.append({c.name: obj.get(c.name) for c in wanted})
                if len(rows) == batch_size:
                    yield rows_batch(
                        fmt,
                        origin,
                        split=f.split,
                        first=first,
                        rows=rows,
                        wanted=wanted,
                        columns=columns,
                        options=f.options,
                    )
                    first += len(rows)
                    rows = []
        except UnicodeDecodeError as exc:
            raise DataError(f"{origin}: not UTF-8 text after line {lineno} ({exc}).") from exc
    if rows and fmt is not None:
        yield rows_batch(
            fmt,
            origin,
            split=f.split,
            first=first,
            rows=rows,
            wanted=wanted,
            columns=columns,
            options=f.options,
        )


def _rows_table(
    origin: str, first: int, rows: list[dict[str, Any]], columns: Sequence[FileColumn]
) -> pa.Table:
    """Rows of plain values (JSONL lines, hub rows) as a table of `columns`: each cast to its
    type; a column read as stored holds text (a non-text value as its JSON)."""
    arrays = []
    fields = []
    for column in columns:
        want = column.type or pa.string()
        values = [r.get(column.name) for r in rows]
        if column.type is None:
            values = [v if v is None or isinstance(v, str) else json.dumps(v) for v in values]
        try:
            arrays.append(pa.array(values, type=want))
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError) as exc:
            for i, value in enumerate(values):  # find the offending row for the message
                try:
                    pa.array([value], type=want)
                except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):
                    raise DataError(
                        f"{origin}: row {first + i}, column {column.name!r}: "
                        f"value does not fit {want} ({exc})."
                    ) from exc
            raise DataError(f"{origin}: column {column.name!r}: {exc}") from exc
        fields.append(pa.field(column.name, want))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def rows_batch(
    fmt: SourceFormat,
    origin: str,
    *,
    split: str,
    first: int,
    rows: list[dict[str, Any]],
    wanted: Sequence[FileColumn],
    columns: Sequence[str],
    options: ReadOptions,
) -> Batch:
    """A batch of rows of plain values, as problem columns."""
    table = _rows_table(origin, first, rows, wanted)
    problems = _problems(fmt, table, columns, origin=origin, first=first, options=options)
    return Batch(origin, split, first, problems)
