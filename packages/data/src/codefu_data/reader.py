"""One reader for every raw source: a directory of HF parquet shards, one parquet or JSONL
file, or a Hugging Face hub id (optional `datasets`, when the network allows). A parquet
file in veRL's format (prompt + reward_model, such as the CodeFu reference's) is read as
the raw columns it carries (`codefu_data.verl_source`).

Rows come out in Arrow batches of the requested columns only (a row group at a time for
parquet, `batch_size` lines for JSONL), so memory stays bounded on the full dataset and the
big columns nobody asked for (generated tests, solutions) are never read. Any structural
problem — unknown source, corrupt file, missing column, wrong type — raises `DataError`
naming the file and the row(s) or column.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from codefu_data.schema import OUTPUT_SCHEMA, RAW_SCHEMA, READABLE_REWARD_MODEL_TYPES
from codefu_data.verl_source import VERL_COLUMNS, check_derivable, is_verl_schema, raw_table

SPLIT_ORDER = ("train", "valid", "test")
_SPLIT_RE = re.compile(r"^(train|valid|validation|test)(?:[-_.]|$)")
_HUB_ID_RE = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


class DataError(ValueError):
    """Bad input or configuration; the message names the file/row/column and what to do."""


@dataclass(frozen=True)
class RawFile:
    path: Path
    split: str  # raw split: train, valid or test
    fmt: str  # "parquet", "verl" (a veRL-format parquet) or "jsonl"


@dataclass
class Batch:
    """Consecutive rows of one raw file (or hub split), columns cast to the raw schema."""

    origin: str  # file path or hub id + split, for messages
    split: str
    first_row: int  # 0-based row number of the first row within its file/split
    table: pa.Table


def split_of(path: Path) -> str | None:
    """Raw split from a file name (`train-00000-of-00039.parquet` → train), else None."""
    m = _SPLIT_RE.match(path.name)
    if not m:
        return None
    return "valid" if m.group(1) == "validation" else m.group(1)


def _target_schema(columns: Sequence[str]) -> pa.Schema:
    return pa.schema([RAW_SCHEMA.field(c) for c in columns])


def _cast(table: pa.Table, columns: Sequence[str], origin: str, rows: str) -> pa.Table:
    """Select and cast `columns`; a wrong type names the file, rows and column."""
    arrays = []
    for name in columns:
        want = RAW_SCHEMA.field(name).type
        if name not in table.column_names:
            raise DataError(f"{origin}: missing column {name!r} ({rows}).")
        col = table.column(name)
        if col.type != want:
            try:
                col = col.cast(want)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
                raise DataError(
                    f"{origin}: column {name!r} ({rows}) has type {col.type}, "
                    f"expected {want}: {exc}"
                ) from exc
        arrays.append(col)
    return pa.Table.from_arrays(arrays, schema=_target_schema(columns))


class LocalSource:
    """Parquet and/or JSONL files on disk, each belonging to one raw split."""

    kind = "local"

    def __init__(self, files: Sequence[RawFile], description: str) -> None:
        self.files = sorted(files, key=lambda f: (SPLIT_ORDER.index(f.split), f.path.name))
        self.description = description

    def check_columns(self, columns: Sequence[str]) -> None:
        """Open every file's footer / first line: corrupt files and missing columns fail now."""
        for f in self.files:
            if f.fmt == "verl":
                try:
                    check_derivable(columns)
                except ValueError as exc:
                    raise DataError(f"{f.path}: {exc}.") from exc
            elif f.fmt == "parquet":
                try:
                    schema = pq.read_schema(f.path)
                except (OSError, pa.ArrowException) as exc:
                    raise DataError(
                        f"{f.path}: not a readable parquet file ({exc}); re-download or remove it."
                    ) from exc
                for name in columns:
                    if name not in schema.names:
                        raise DataError(
                            f"{f.path}: missing column {name!r}; a CodeContests file has "
                            f"{', '.join(RAW_SCHEMA.names)}."
                        )
                    _cast(  # a cast of an empty column: type errors surface before any writing
                        pa.Table.from_arrays(
                            [pa.array([], type=schema.field(name).type)], names=[name]
                        ),
                        [name],
                        str(f.path),
                        "schema",
                    )

    def num_rows(self) -> int | None:
        total = 0
        for f in self.files:
            if f.fmt == "jsonl":
                return None
            total += pq.ParquetFile(f.path).metadata.num_rows
        return total

    def iter_batches(self, columns: Sequence[str], batch_size: int) -> Iterator[Batch]:
        for f in self.files:
            if f.fmt != "jsonl":
                yield from self._parquet_batches(f, columns, batch_size)
            else:
                yield from self._jsonl_batches(f, columns, batch_size)

    def _parquet_batches(
        self, f: RawFile, columns: Sequence[str], batch_size: int
    ) -> Iterator[Batch]:
        origin = str(f.path)
        try:
            pf = pq.ParquetFile(f.path)
        except (OSError, pa.ArrowException) as exc:
            raise DataError(f"{origin}: not a readable parquet file ({exc}).") from exc
        row = 0
        verl = f.fmt == "verl"
        read = list(VERL_COLUMNS) if verl else list(columns)
        with pf:
            for rg in range(pf.num_row_groups):
                rg_rows = pf.metadata.row_group(rg).num_rows
                try:
                    for rb in pf.iter_batches(batch_size=batch_size, row_groups=[rg], columns=read):
                        rows = f"rows {row}-{row + rb.num_rows - 1}"
                        table = pa.Table.from_batches([rb])
                        if verl:
                            try:
                                table = raw_table(table, columns)
                            except (KeyError, ValueError, TypeError) as exc:
                                raise DataError(
                                    f"{origin} ({rows}): not a veRL row with "
                                    f"reward_model.ground_truth {{name, tests, limits}}: {exc}"
                                ) from exc
                        yield Batch(origin, f.split, row, _cast(table, columns, origin, rows))
                        row += rb.num_rows
                except (OSError, pa.ArrowException) as exc:
                    raise DataError(
                        f"{origin}: corrupt data in row group {rg} "
                        f"(rows {row}-{row + rg_rows - 1}): {exc}"
                    ) from exc

    def _jsonl_batches(
        self, f: RawFile, columns: Sequence[str], batch_size: int
    ) -> Iterator[Batch]:
        origin = str(f.path)
        rows: list[dict[str, Any]] = []
        first = 0
        try:
            handle = f.path.open("r", encoding="utf-8")
        except OSError as exc:
            raise DataError(f"{origin}: cannot open ({exc}).") from exc
        with handle:
            lineno = 0
            try:
                for lineno, line in enumerate(handle, start=1):
                    if not line.strip():
                        continue
                    try:
                        obj = json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise DataError(
                            f"{origin}: line {lineno} is not valid JSON ({exc})."
                        ) from exc
                    if not isinstance(obj, dict):
                        raise DataError(f"{origin}: line {lineno} is not a JSON object.")
                    for name in columns:
                        if name not in obj:
                            raise DataError(
                                f"{origin}: line {lineno} (row {first + len(rows)}) "
                                f"has no column {name!r}."
                            )
                    rows.append({c: obj[c] for c in columns})
                    if len(rows) == batch_size:
                        yield self._jsonl_table(origin, f.split, first, rows, columns)
                        first += len(rows)
                        rows = []
            except UnicodeDecodeError as exc:
                raise DataError(f"{origin}: not UTF-8 text after line {lineno} ({exc}).") from exc
        if rows:
            yield self._jsonl_table(origin, f.split, first, rows, columns)

    @staticmethod
    def _jsonl_table(
        origin: str, split: str, first: int, rows: list[dict[str, Any]], columns: Sequence[str]
    ) -> Batch:
        arrays = []
        for name in columns:
            want = RAW_SCHEMA.field(name).type
            try:
                arrays.append(pa.array([r[name] for r in rows], type=want))
            except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError) as exc:
                for i, r in enumerate(rows):  # find the offending row for the message
                    try:
                        pa.array([r[name]], type=want)
                    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):
                        raise DataError(
                            f"{origin}: row {first + i}, column {name!r}: "
                            f"value does not fit {want} ({exc})."
                        ) from exc
                raise DataError(f"{origin}: column {name!r}: {exc}") from exc
        return Batch(
            origin, split, first, pa.Table.from_arrays(arrays, schema=_target_schema(columns))
        )

    def stat_key(self) -> str:
        """Cheap identity of the input (names, sizes, mtimes) for the up-to-date check."""
        parts = []
        for f in self.files:
            st = f.path.stat()
            parts.append([str(f.path.resolve()), st.st_size, st.st_mtime_ns])
        return json.dumps(parts)

    def fingerprint(self) -> dict[str, Any]:
        """Content digest of every input file (sha256) and of them all."""
        files = []
        total = hashlib.sha256()
        for f in self.files:
            h = hashlib.sha256()
            with f.path.open("rb") as fh:
                while chunk := fh.read(1 << 20):
                    h.update(chunk)
            digest = h.hexdigest()
            files.append({"file": f.path.name, "split": f.split, "sha256": digest})
            total.update(f"{f.split}\x00{f.path.name}\x00{digest}\n".encode())
        return {"kind": "local", "sha256": total.hexdigest(), "files": files}


class HubSource:
    """A Hugging Face hub dataset streamed with `datasets` (optional dependency)."""

    kind = "hub"

    def __init__(self, hub_id: str) -> None:
        self.hub_id = hub_id
        self.description = f"hub:{hub_id}"
        try:
            import datasets
        except ImportError as exc:
            raise DataError(
                f"source {hub_id!r} looks like a Hugging Face hub id, but the optional dependency "
                "'datasets' is not installed: pip install 'codefu-data[hub]', or pass a local "
                "directory of parquet shards."
            ) from exc
        self._datasets = datasets
        try:
            names = datasets.get_dataset_split_names(hub_id)
        except Exception as exc:  # network errors, unknown repo, offline mode, …
            raise DataError(
                f"could not reach hub dataset {hub_id!r} ({type(exc).__name__}: {exc}); when "
                "offline, download its parquet shards and pass their directory as the source."
            ) from exc
        self.splits = [s for s in SPLIT_ORDER if s in names] + (
            ["valid"] if "validation" in names else []
        )
        self._names = {
            s: ("validation" if s == "valid" and "valid" not in names else s) for s in self.splits
        }

    def check_columns(self, columns: Sequence[str]) -> None:
        return  # checked per split when streaming starts

    def num_rows(self) -> int | None:
        return None

    def iter_batches(self, columns: Sequence[str], batch_size: int) -> Iterator[Batch]:
        for split in self.splits:
            origin = f"hub:{self.hub_id}[{self._names[split]}]"
            try:
                ds = self._datasets.load_dataset(
                    self.hub_id, split=self._names[split], streaming=True
                )
            except Exception as exc:
                raise DataError(f"{origin}: could not load ({type(exc).__name__}: {exc}).") from exc
            missing = [
                c for c in columns if ds.column_names is not None and c not in ds.column_names
            ]
            if missing:
                raise DataError(f"{origin}: missing column(s) {missing}.")
            row = 0
            for chunk in ds.iter(batch_size=batch_size):
                rows = [{c: chunk[c][i] for c in columns} for i in range(len(chunk[columns[0]]))]
                batch = LocalSource._jsonl_table(origin, split, row, rows, columns)
                row += batch.table.num_rows
                yield batch

    def stat_key(self) -> str | None:
        return None  # a hub source is always read again

    def fingerprint(self) -> dict[str, Any]:
        return {"kind": "hub", "hub_id": self.hub_id}


Source = LocalSource | HubSource


def _parquet_format(path: Path) -> str:
    """ "verl" for a veRL-format parquet (prompt + reward_model), else "parquet" (an unreadable
    file is reported when its columns are checked)."""
    try:
        names = pq.read_schema(path).names
    except (OSError, pa.ArrowException):
        return "parquet"
    return "verl" if is_verl_schema(names) else "parquet"


def _files_in(directory: Path) -> list[RawFile]:
    base = directory / "data" if (directory / "data").is_dir() else directory
    found = sorted(p for p in base.iterdir() if p.suffix in (".parquet", ".jsonl"))
    if not found:
        raise DataError(
            f"{directory}: no parquet shards found (expected data/train-00000-of-000NN.parquet, "
            "valid-…, test-… as in the Hugging Face layout)."
        )
    files = []
    for p in found:
        split = split_of(p)
        if split is None:
            raise DataError(
                f"{p}: cannot tell its split from the name; name shards train-…, valid-… or test-…."
            )
        files.append(RawFile(p, split, _parquet_format(p) if p.suffix == ".parquet" else "jsonl"))
    return files


def resolve_source(spec: str) -> Source:
    """A source from a path, "sample" (the shipped raw dataset), or a hub id."""
    if spec == "sample":
        try:
            from codefu_data.sample import sample_dataset_dir
        except ImportError as exc:
            raise DataError(
                "the shipped sample dataset (codefu_data.sample) is not installed; "
                "pass --source DIR."
            ) from exc
        return resolve_source(str(sample_dataset_dir()))
    path = Path(spec).expanduser()
    if path.is_dir():
        return LocalSource(_files_in(path), str(path))
    if path.is_file():
        if path.suffix == ".parquet":
            fmt = _parquet_format(path)
        elif path.suffix in (".jsonl", ".json"):
            fmt = "jsonl"
        else:
            raise DataError(
                f"{path}: unsupported file type {path.suffix!r}; use .parquet or .jsonl."
            )
        return LocalSource([RawFile(path, split_of(path) or "train", fmt)], str(path))
    looks_like_hub = _HUB_ID_RE.match(spec) and not spec.startswith((".", "/", "~"))
    if looks_like_hub and not path.parent.is_dir():  # `existing_dir/typo` is a missing path
        return HubSource(spec)
    raise DataError(
        f"unknown source {spec!r}: not a file or directory, and not a hub id (owner/name); pass a "
        "directory of parquet shards, a .parquet/.jsonl file, or a hub id such as "
        "deepmind/code_contests."
    )


def read_processed(path: str | Path) -> pa.Table:
    """Read a processed (veRL) parquet file and check its columns against our schema.

    Raises DataError naming the column whose type differs. `extra_info` may be absent
    and the ground truth may lack `grader` (files prepared before it), or `judging_rules`
    and `checker` too (the CodeFu reference files have none of them); every other column
    must match exactly.
    """
    path = Path(path)
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException) as exc:
        raise DataError(f"{path}: not a readable parquet file ({exc}).") from exc
    for field in OUTPUT_SCHEMA:
        if field.name not in table.column_names:
            if field.name == "extra_info":
                continue
            raise DataError(f"{path}: missing column {field.name!r}.")
        got = table.schema.field(field.name).type
        if got != field.type and not (
            field.name == "reward_model" and got in READABLE_REWARD_MODEL_TYPES
        ):
            raise DataError(f"{path}: column {field.name!r} has type {got}, expected {field.type}.")
    return table
