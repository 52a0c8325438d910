"""One reader for every raw source: a directory of parquet/JSONL files, one such file, a
Hugging Face hub id (optional `datasets`, when the network allows), or several of them.
Each file is of one source format (`codefu_data.formats`: CodeContests, a veRL-format
parquet, …), detected from its columns or named by `data.format`; the format says which
columns to read and turns them into the raw problem columns.

Rows come out in Arrow batches of the requested columns only (a row group at a time for
parquet, `batch_size` lines for JSONL), so memory stays bounded on the full dataset and the
big columns nobody asked for (generated tests, solutions) are never read. Any structural
problem — unknown source or format, corrupt file, missing column, wrong type — raises
`DataError` naming the file and the row(s) or column.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from codefu_data import formats
from codefu_data.containers import (
    Batch,
    DataError,
    RawFile,
    check_columns,
    check_format,
    column_names,
    format_of,
    jsonl_batches,
    parquet_batches,
    rows_batch,
)
from codefu_data.formats import DEFAULT_OPTIONS, ReadOptions
from codefu_data.schema import (
    GROUND_TRUTH_TYPE,
    OUTPUT_SCHEMA,
    REFERENCE_GROUND_TRUTH_TYPE,
)

SPLIT_ORDER = ("train", "valid", "test")
_SPLIT_RE = re.compile(r"^(train|valid|validation|test)\d*(?:[-_.]|$)")
_HUB_ID_RE = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_CONTAINERS = {".parquet": "parquet", ".jsonl": "jsonl", ".json": "jsonl"}

__all__ = [
    "SPLIT_ORDER",
    "Batch",
    "DataError",
    "HubSource",
    "LocalSource",
    "RawFile",
    "Source",
    "read_processed",
    "resolve_source",
    "split_of",
]


def split_of(path: Path) -> str | None:
    """Raw split from a file name (`train-00000-of-00039.parquet`, `test5.jsonl` → train,
    test), else None."""
    m = _SPLIT_RE.match(path.name)
    if not m:
        return None
    return "valid" if m.group(1) == "validation" else m.group(1)


class LocalSource:
    """Parquet and/or JSONL files on disk, each belonging to one raw split."""

    kind = "local"

    def __init__(self, files: Sequence[RawFile], description: str) -> None:
        self.files = sorted(files, key=lambda f: (SPLIT_ORDER.index(f.split), f.order, f.path.name))
        self.description = description

    def check_columns(self, columns: Sequence[str]) -> None:
        """Open every file's footer / first line: corrupt files and missing columns fail now."""
        for f in self.files:
            check_columns(f, columns)

    def num_rows(self) -> int | None:
        total = 0
        for f in self.files:
            if f.container == "jsonl":
                return None
            total += pq.ParquetFile(f.path).metadata.num_rows
        return total

    def iter_batches(self, columns: Sequence[str], batch_size: int) -> Iterator[Batch]:
        for f in self.files:
            if f.container == "parquet":
                yield from parquet_batches(f, columns, batch_size)
            else:
                yield from jsonl_batches(f, columns, batch_size)

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
            entry = {"file": f.path.name, "split": f.split, "sha256": digest}
            if f.fmt is not None:
                entry["format"] = f.fmt.name
            files.append(entry)
            total.update(f"{f.split}\x00{f.path.name}\x00{digest}\n".encode())
        return {"kind": "local", "sha256": total.hexdigest(), "files": files}


class HubSource:
    """A Hugging Face hub dataset streamed with `datasets` (optional dependency)."""

    kind = "hub"

    def __init__(
        self, hub_id: str, fmt: str = formats.AUTO, options: ReadOptions = DEFAULT_OPTIONS
    ) -> None:
        self.hub_id = hub_id
        self.description = f"hub:{hub_id}"
        self.format = fmt
        self.options = options
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
            fmt = check_format(
                format_of(ds.column_names or [], self.format, origin), columns, origin
            )
            wanted = fmt.file_columns(columns)
            missing = [
                c.name
                for c in wanted
                if c.required and ds.column_names is not None and c.name not in ds.column_names
            ]
            if missing:
                raise DataError(f"{origin}: missing column(s) {missing}.")
            row = 0
            for chunk in ds.iter(batch_size=batch_size):
                n = len(next(iter(chunk.values()))) if chunk else 0
                rows = [
                    {c.name: (chunk.get(c.name) or [None] * n)[i] for c in wanted} for i in range(n)
                ]
                batch = rows_batch(
                    fmt,
                    origin,
                    split=split,
                    first=row,
                    rows=rows,
                    wanted=wanted,
                    columns=columns,
                    options=self.options,
                )
                row += batch.table.num_rows
                yield batch

    def stat_key(self) -> str | None:
        return None  # a hub source is always read again

    def fingerprint(self) -> dict[str, Any]:
        return {"kind": "hub", "hub_id": self.hub_id}


Source = LocalSource | HubSource


def _raw_file(path: Path, split: str, fmt: str, order: int) -> RawFile:
    container = _CONTAINERS[path.suffix]
    columns = column_names(path, container)
    found = None if columns is None else format_of(columns, fmt, str(path))
    return RawFile(path, split, container, found, order)


def _files_in(directory: Path, fmt: str, order: int) -> list[RawFile]:
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
        files.append(_raw_file(p, split, fmt, order))
    return files


def _local_files(spec: str, fmt: str, order: int) -> list[RawFile] | None:
    """The files of one local source (a directory or a file); None when `spec` is no path."""
    path = Path(spec).expanduser()
    if path.is_dir():
        return _files_in(path, fmt, order)
    if path.is_file():
        if path.suffix not in _CONTAINERS:
            raise DataError(
                f"{path}: unsupported file type {path.suffix!r}; use .parquet or .jsonl."
            )
        return [_raw_file(path, split_of(path) or "train", fmt, order)]
    return None


def resolve_source(
    spec: str | Sequence[str], fmt: str = formats.AUTO, options: ReadOptions = DEFAULT_OPTIONS
) -> Source:
    """A source from a path, "sample" (the shipped raw dataset), a hub id, or a list of
    paths (their files together). `fmt` is a format name (`codefu_data.formats`) or "auto";
    `options` holds the limits of rows that state none."""
    specs = [spec] if isinstance(spec, str) else list(spec)
    if not specs:
        raise DataError("data.source is an empty list: name a file or a directory.")
    files: list[RawFile] = []
    for order, one in enumerate(specs):
        found = _local_files(_sample_dir() if one == "sample" else one, fmt, order)
        if found is None:
            if len(specs) == 1:
                return _hub_source(one, fmt, options)
            raise DataError(
                f"unknown source {one!r} in data.source: several sources must all be "
                "files or directories."
            )
        files += [replace(f, options=options) for f in found]
    paths = [f.path.resolve() for f in files]
    if len(set(paths)) != len(paths):
        raise DataError(f"data.source {specs} names a file twice.")
    described = [_sample_dir() if one == "sample" else str(Path(one).expanduser()) for one in specs]
    return LocalSource(files, ", ".join(described))


def _hub_source(spec: str, fmt: str, options: ReadOptions) -> HubSource:
    path = Path(spec).expanduser()
    looks_like_hub = _HUB_ID_RE.match(spec) and not spec.startswith((".", "/", "~"))
    if looks_like_hub and not path.parent.is_dir():  # `existing_dir/typo` is a missing path
        return HubSource(spec, fmt, options)
    raise DataError(
        f"unknown source {spec!r}: not a file or directory, and not a hub id (owner/name); pass a "
        "directory of parquet shards, a .parquet/.jsonl file, or a hub id such as "
        "deepmind/code_contests."
    )


def _sample_dir() -> str:
    try:
        from codefu_data.sample import sample_dataset_dir
    except ImportError as exc:
        raise DataError(
            "the shipped sample dataset (codefu_data.sample) is not installed; pass --source DIR."
        ) from exc
    return str(sample_dataset_dir())


def read_processed(path: str | Path) -> pa.Table:
    """Read a processed (veRL) parquet file and check its columns against our schema.

    Raises DataError naming the column whose type differs. `extra_info` may be absent, and
    the ground truth may lack the fields after the reference's (`judging_rules`, `checker`,
    `grader`: the CodeFu reference files, and those prepared before the grader, have not
    all of them) or hold only nulls in them; every other column must match exactly.
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
        if got != field.type and not (field.name == "reward_model" and _reward_model_fits(got)):
            raise DataError(f"{path}: column {field.name!r} has type {got}, expected {field.type}.")
    return table


def _reward_model_fits(got: pa.DataType) -> bool:
    """A reward model of ours, or one whose ground truth has the reference's fields and of
    ours after them only some, each of our type or all null."""
    if not pa.types.is_struct(got) or [f.name for f in got] != ["ground_truth", "style"]:
        return False
    gt = got.field("ground_truth").type
    if not pa.types.is_struct(gt) or got.field("style").type != pa.string():
        return False
    ours = {f.name: f.type for f in GROUND_TRUTH_TYPE}
    reference = [f.name for f in REFERENCE_GROUND_TRUTH_TYPE]
    names = [f.name for f in gt]
    if names[: len(reference)] != reference:
        return False
    for f in gt:
        if f.name not in reference and f.type not in (ours.get(f.name), pa.null()):
            return False
    return all(gt.field(name).type == ours[name] for name in reference)
