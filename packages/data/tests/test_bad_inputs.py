"""Every bad input to `codefu-data prepare` is refused with exit 2 before anything is
written: one line on stderr naming the value and the fix, no traceback, no file left
behind (README "Exit codes")."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from codefu_data.cli import main

CASES = {
    "missing source": (["--source", "nope"], "unknown source 'nope'"),
    "source of an unknown type": (["--source", "notes.txt"], "unsupported file type '.txt'"),
    "garbage jsonl": (["--source", "garbage.jsonl"], "garbage.jsonl: line 1 is not valid JSON"),
    "garbage parquet": (["--source", "garbage.parquet"], "not a readable parquet file"),
    "jsonl without the columns": (["--source", "names.jsonl"], "has no column"),
    "missing config dir": (["--config-dir", "nope"], "no prepare.yaml"),
    "unknown tier option": (["data=eas"], "did you mean 'easy'?"),
    "misspelled key": (["data.validat=true"], "did you mean 'data.validate'"),
    "misspelled key without data.": (["validat=true"], "did you mean 'data.validate'"),
    "misspelled tier key": (["data.tiers.easy.max_ratin=3"], "'data.tiers.<tier>.max_rating'"),
    "unknown top-level key": (["bogus.key=1"], "'bogus.key' is not a key of the data config"),
    "not an override": (["validate"], "cannot read override 'validate'"),
    "wrong type": (["data.batch_size=abc"], "data.batch_size=abc"),
    "out of range": (["data.batch_size=0"], "data.batch_size must be at least 1"),
    "crossed tier bounds": (["data.tiers.easy.max_rating=-5"], "max_rating -5"),
    "output is a file": (["--out", "notes.txt"], "notes.txt exists and is not a codefu-data"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_input_is_one_line_and_exit_2(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refused: Callable[..., None]
) -> None:
    argv, names = CASES[case]
    (tmp_path / "notes.txt").write_text("notes")
    (tmp_path / "garbage.jsonl").write_text("garbage\n")
    (tmp_path / "garbage.parquet").write_bytes(b"PAR1 not really a parquet file")
    (tmp_path / "names.jsonl").write_text('{"name": "a"}\n')
    monkeypatch.chdir(tmp_path)  # the default output, data/processed, would land here
    refused(main, ["prepare", "--no-progress", "--out", "data/processed", *argv], names, tmp_path)
