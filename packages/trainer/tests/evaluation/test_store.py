"""samples.jsonl and meta.json: a killed evaluation resumes without losing or repeating samples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codefu_trainer.evaluation.store import (
    META_FILE,
    SAMPLES_FILE,
    StoreError,
    append_samples,
    open_store,
    read_samples,
)

IDENTITY = {"model.path": "/runs/a/model", "eval.samples": 4, "eval.temperature": 0.6}


def _records(problem: str, samples: range) -> list[dict]:
    return [{"problem": problem, "sample": j, "verdict": "WA", "response": "x\ny"} for j in samples]


def test_a_half_written_last_line_is_cut_off_and_never_read(tmp_path: Path) -> None:
    open_store(tmp_path, IDENTITY)
    append_samples(tmp_path, _records("p", range(3)))
    path = tmp_path / SAMPLES_FILE
    whole = path.read_bytes()
    with path.open("ab") as f:  # a kill in the middle of writing the next line
        f.write(b'{"problem": "p", "sample": 3, "verdict": "A')
    records = read_samples(tmp_path)
    assert [(r["problem"], r["sample"]) for r in records] == [("p", 0), ("p", 1), ("p", 2)]
    assert path.read_bytes() == whole  # truncated back to the last whole line
    append_samples(tmp_path, _records("p", range(3, 4)))
    assert [r["sample"] for r in read_samples(tmp_path)] == [0, 1, 2, 3]


def test_a_sample_written_twice_is_read_once(tmp_path: Path) -> None:
    open_store(tmp_path, IDENTITY)
    append_samples(tmp_path, _records("p", range(2)))
    append_samples(tmp_path, [{**_records("p", range(1, 2))[0], "verdict": "AC"}])
    records = read_samples(tmp_path)
    assert len(records) == 2 and records[1]["verdict"] == "WA"  # the first one counts


def test_the_same_identity_reopens_and_another_is_refused_naming_the_differences(
    tmp_path: Path,
) -> None:
    open_store(tmp_path, IDENTITY)
    open_store(tmp_path, dict(IDENTITY))
    other = {**IDENTITY, "model.path": "/runs/a/base_model"}
    with pytest.raises(StoreError) as err:
        open_store(tmp_path, other)
    message = str(err.value)
    assert "holds samples of another evaluation" in message and "\n" not in message
    assert "model.path: '/runs/a/base_model' here, '/runs/a/model' there" in message
    assert "eval.samples" not in message  # only what differs is named
    assert json.loads((tmp_path / META_FILE).read_text())["identity"] == IDENTITY


def test_samples_without_meta_and_a_corrupt_line_are_refused(tmp_path: Path) -> None:
    (tmp_path / SAMPLES_FILE).write_text('{"problem": "p", "sample": 0}\n')
    with pytest.raises(StoreError, match=r"without meta\.json"):
        open_store(tmp_path, IDENTITY)
    (tmp_path / SAMPLES_FILE).write_text('{"problem": "p", "sample": 0}\nnot json\n')
    with pytest.raises(StoreError, match=r"samples\.jsonl:2 is not a sample line"):
        read_samples(tmp_path)
