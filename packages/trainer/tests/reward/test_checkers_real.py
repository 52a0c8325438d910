"""Real several-answer problems judged by their own checker programs, end to end.

For 12 several-answer problems of the shared Easy set we wrote a checker (Python, in
`checkers/`, one file per problem: the folder form of `data.checkers`), an accepted program
that prints another valid answer than the expected one, and a close but wrong program
(`checkers/programs/`). The raw rows are the shared problems with those two programs as
the known `solutions` and `incorrect_solutions`: `prepare` validates each checker (the
expected outputs, TPR and TNR) and keeps the problems; then `codefu-reward score` on the
prepared parquet gives the accepted programs reward 1 and the wrong ones less. Validation
drops a checker that accepts everything and one that rejects a correct alternative
answer, each with its reason in the manifest.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from codefu_data.checkers import (
    CHECKER_ACCEPTS_INCORRECT,
    CHECKER_REJECTS_ACCEPTED,
    checker_file_stem,
)
from codefu_data.config import CheckersConfig, DataConfig
from codefu_data.formats.verl import statement_from_prompt
from codefu_data.prepare import SEVERAL_VALID_ANSWERS, prepare
from codefu_data.schema import CODEFORCES_SOURCE, CPP_LANGUAGE, RAW_SCHEMA
from codefu_trainer.reward.cli import main as reward_main

pytestmark = [pytest.mark.real_data, pytest.mark.slow]

HERE = Path(__file__).resolve().parent / "checkers"
PROBLEMS = sorted(path.stem for path in HERE.glob("*.py"))


def _program(name: str, kind: str) -> str:
    return (HERE / "programs" / f"{name.split('.', maxsplit=1)[0]}_{kind}.cpp").read_text()


def _raw_rows(easy: Path, names: list[str]) -> list[dict[str, Any]]:
    """The shared Easy set's (`easy`) rows of `names` as raw CodeContests rows, with our
    programs as the known accepted and incorrect solutions."""
    rows = []
    for split in ("train", "test"):
        for row in pq.read_table(easy / f"{split}.parquet").to_pylist():
            gt = row["reward_model"]["ground_truth"]
            if gt["name"] not in names:
                continue
            limit = gt["time_limit"]
            rows.append(
                {
                    "name": gt["name"],
                    "description": statement_from_prompt(row["prompt"]),
                    "public_tests": gt["public_tests"],
                    "private_tests": gt["private_tests"],
                    "source": CODEFORCES_SOURCE,
                    "cf_rating": gt["cf_rating"],
                    "time_limit": {"seconds": int(limit["seconds"]), "nanos": int(limit["nanos"])},
                    "memory_limit_bytes": gt["memory_limit_bytes"],
                    "solutions": {
                        "language": [CPP_LANGUAGE],
                        "solution": [_program(gt["name"], "ok")],
                    },
                    "incorrect_solutions": {
                        "language": [CPP_LANGUAGE],
                        "solution": [_program(gt["name"], "wrong")],
                    },
                }
            )
    assert sorted(r["name"] for r in rows) == sorted(names)
    return rows


def _prepare(easy: Path, tmp: Path, names: list[str], folder: Path) -> tuple[dict[str, Any], Path]:
    raw = tmp / "raw.parquet"
    pq.write_table(pa.Table.from_pylist(_raw_rows(easy, names), schema=RAW_SCHEMA), raw)
    out = tmp / "processed"
    cfg = DataConfig(source=str(raw), out_dir=str(out), checkers=CheckersConfig(folder=str(folder)))
    result = prepare(cfg, progress=False, log=lambda _: None)
    return result.manifest, out


def _response(program: str) -> str:
    return f"<think>construct one</think>\n```cpp\n{program}\n```"


def test_checked_problems_are_kept_and_scored_by_their_checkers(
    codefu_easy: Path, tmp_path: Path
) -> None:
    assert len(PROBLEMS) >= 10
    manifest, out = _prepare(codefu_easy, tmp_path, PROBLEMS, HERE)
    verdicts = manifest["checkers"]
    assert sorted(verdicts) == PROBLEMS
    for name, v in verdicts.items():
        assert (v["verdict"], v["tpr"], v["tnr"]) == ("kept", 1.0, 1.0), (name, v)
    assert SEVERAL_VALID_ANSWERS not in manifest["totals"]["dropped"]
    assert manifest["several_answers_kept_with_checker"] == len(PROBLEMS)
    rows = [
        row
        for split in ("train", "test")
        if (out / "easy" / f"{split}.parquet").exists()
        for row in pq.read_table(out / "easy" / f"{split}.parquet").to_pylist()
    ]
    assert sorted(r["reward_model"]["ground_truth"]["name"] for r in rows) == PROBLEMS
    data = tmp_path / "checked.parquet"
    pq.write_table(pa.Table.from_pylist(rows), data)
    responses = tmp_path / "responses.jsonl"
    cases = [(name, kind) for name in PROBLEMS for kind in ("ok", "wrong")]
    with responses.open("w") as f:
        for i, (name, kind) in enumerate(cases):
            line = {"id": str(i), "name": name, "response": _response(_program(name, kind))}
            f.write(json.dumps(line) + "\n")
    scores = tmp_path / "scores.jsonl"
    assert reward_main(["score", "--data", str(data), "--responses", str(responses),
                        "--out", str(scores)]) == 0  # fmt: skip
    by_id = {s["id"]: s for s in map(json.loads, scores.read_text().splitlines())}
    wrong = []
    for i, (name, kind) in enumerate(cases):
        got = by_id[str(i)]
        expected_ok = kind == "ok"
        if (got["score"] == 1.0) != expected_ok or got["judge_failure"]:
            wrong.append((name, kind, got["verdict"], got["score"]))
    assert not wrong


@pytest.mark.parametrize(
    ("checker", "reason"),
    [
        ("import sys\nsys.exit(0)\n", CHECKER_ACCEPTS_INCORRECT),
        (  # compares with the expected output: rejects the correct other answer
            "import sys\nout, ans = (open(p).read().split() for p in sys.argv[2:4])\n"
            "sys.exit(0 if out == ans else 1)\n",
            CHECKER_REJECTS_ACCEPTED,
        ),
    ],
    ids=["accepts_everything", "rejects_another_valid_answer"],
)
def test_validation_drops_a_bad_checker(
    codefu_easy: Path, tmp_path: Path, checker: str, reason: str
) -> None:
    name = "1096_A. Find Divisible"
    folder = tmp_path / "checkers"
    folder.mkdir()
    (folder / f"{checker_file_stem(name)}.py").write_text(checker)
    manifest, _ = _prepare(codefu_easy, tmp_path, [name], folder)
    assert manifest["checkers"][name]["verdict"] == reason
    assert manifest["totals"]["kept"] == 0
    assert manifest["totals"]["dropped"] == {reason: 1}


def test_without_a_checker_the_problem_stays_dropped(codefu_easy: Path, tmp_path: Path) -> None:
    name = "1096_A. Find Divisible"
    folder = tmp_path / "empty"
    folder.mkdir()
    manifest, _ = _prepare(codefu_easy, tmp_path, [name], folder)
    assert manifest["totals"]["dropped"] == {SEVERAL_VALID_ANSWERS: 1}
    assert manifest["checkers"] == {}
