"""The source-format registry: a format is one module and one registration, detected from a
file's columns or named by `data.format`."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from codefu_data import formats
from codefu_data.cli import main
from codefu_data.config import DataConfig
from codefu_data.formats import FileColumn, FormatError, SourceFormat
from codefu_data.formats.problems import Problem, RowFormat
from codefu_data.prepare import prepare
from codefu_data.reader import DataError, resolve_source
from codefu_data.schema import RAW_SCHEMA


class Plain(RowFormat):
    """A format only this test knows: a title, a statement and `[[input, output], ...]`,
    its rows decoded one at a time (`RowFormat`: the loop and its errors are the base's)."""

    name = "plain"
    key_columns = frozenset({"title", "statement", "cases"})
    described = "a plain file has title, statement and cases"

    def file_columns(self, wanted: Sequence[str]) -> list[FileColumn]:
        return [FileColumn(c, pa.string()) for c in ("title", "statement", "cases")]

    def row_id(self, row: dict[str, Any]) -> str | None:
        return None  # its rows are named by their number only

    def problem(self, row: dict[str, Any]) -> Problem:
        try:
            cases = json.loads(row["cases"])
        except json.JSONDecodeError as exc:
            raise FormatError(f"cases is not JSON ({exc})") from exc
        return Problem(
            name=row["title"],
            description=row["statement"],
            data_source="plain",
            private=([c[0] for c in cases], [c[1] for c in cases]),
            difficulty_label="easy",
            time_seconds=1.0,
        )


@pytest.fixture
def plain() -> Iterator[SourceFormat]:
    """The test-only format, registered for one test (one registration), then gone."""
    fmt = formats.register(Plain())
    try:
        yield fmt
    finally:
        formats.unregister(fmt.name)
    assert fmt.name not in formats.FORMATS


def _plain_rows(n: int) -> list[dict[str, str]]:
    return [
        {
            "title": f"P{i}",
            "statement": f"Print the number {i} plus the input number, please.",
            "cases": json.dumps([["1\n", f"{i + 1}\n"], ["2\n", f"{i + 2}\n"]]),
        }
        for i in range(n)
    ]


def test_a_registered_format_is_detected_and_prepared(plain: SourceFormat, tmp_path: Path) -> None:
    source = tmp_path / "train.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in _plain_rows(3)))
    result = prepare(DataConfig(source=str(source), out_dir=str(tmp_path / "out")), progress=False)
    assert result.manifest["input"]["files"][0]["format"] == "plain"
    rows = pq.read_table(tmp_path / "out" / "easy" / "train.parquet").to_pylist()
    assert [r["reward_model"]["ground_truth"]["name"] for r in rows] == ["P0", "P1", "P2"]
    gt = rows[2]["reward_model"]["ground_truth"]
    assert gt["private_tests"]["output"] == ["3\n", "4\n"]
    assert rows[2]["data_source"] == "plain" and gt["grader"] is None
    assert gt["time_limit"]["seconds"] == 1.0 and gt["memory_limit_bytes"] == 256 << 20
    # The same rows as parquet, read through the same format.
    pq.write_table(pa.Table.from_pylist(_plain_rows(3)), tmp_path / "train.parquet")
    again = prepare(
        DataConfig(source=str(tmp_path / "train.parquet"), out_dir=str(tmp_path / "out2")),
        progress=False,
    )
    assert again.manifest["counts"] == result.manifest["counts"]


def test_a_format_error_names_the_file_and_row(plain: SourceFormat, tmp_path: Path) -> None:
    rows = _plain_rows(4)
    rows[2]["cases"] = "[[1, 2"
    source = tmp_path / "train.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(DataError, match=r"train\.jsonl: row 2: cases is not JSON"):
        prepare(DataConfig(source=str(source), out_dir=str(tmp_path / "out")), progress=False)
    assert not (tmp_path / "out").exists()


def test_every_registered_format_loads_under_its_name_and_auto_is_refused() -> None:
    for name in formats.FORMATS:
        assert formats.by_name(name).name == name
    assert list(formats.FORMATS) == sorted(formats.FORMATS)

    class Auto(Plain):
        name = formats.AUTO

    with pytest.raises(ValueError, match=r"data\.format.s word for detecting"):
        formats.register(Auto())


def test_detection_by_columns() -> None:
    assert formats.detect(RAW_SCHEMA.names).name == "codecontests"
    assert formats.detect(["data_source", "prompt", "ability", "reward_model"]).name == "verl"
    # A file with some of a format's key columns is read as it: its check names the rest.
    assert formats.detect(["name"]).name == "codecontests"
    with pytest.raises(FormatError, match=r"\(colour, size\) are of no known format"):
        formats.detect(["size", "colour"])


def test_a_forced_format_and_an_unknown_one(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="unknown format 'csv'"):
        resolve_source("sample", "csv")
    source = tmp_path / "train.jsonl"
    source.write_text(json.dumps({"size": 1, "colour": "red"}) + "\n")
    with pytest.raises(DataError, match=r"train\.jsonl: its columns .* no known format"):
        resolve_source(str(source))
    # Forced to CodeContests, the file's missing column is named instead.
    with pytest.raises(DataError, match=r"line 1 \(row 0\) has no column 'name'"):
        prepare(
            DataConfig(source=str(source), format="codecontests", out_dir=str(tmp_path / "o")),
            progress=False,
        )
    assert not (tmp_path / "o").exists()


def test_an_unknown_format_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refused: Callable[..., None]
) -> None:
    (tmp_path / "train.jsonl").write_text(json.dumps({"size": 1, "colour": "red"}) + "\n")
    monkeypatch.chdir(tmp_path)
    refused(
        main,
        ["prepare", "--no-progress", "--source", "train.jsonl", "--out", "out"],
        "no known format",
        tmp_path,
    )
    refused(
        main,
        ["prepare", "--no-progress", "--out", "out", "data.format=csv"],
        "data.format='csv'",
        tmp_path,
    )
