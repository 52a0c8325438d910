"""codefu-reward score: input errors name file and line; a real run writes scores + summary."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from codefu_trainer.reward.cli import main

from .problems import COMPILE_ERROR_PROGRAM, DIFF_PROGRAM, SUM_PROGRAM, respond, sum_ground_truth

REPO = Path(__file__).resolve().parents[4]
# The judge's real-data programs: per problem, a correct one and variants with one verdict
# each (packages/sandbox/tests/judge/test_accuracy_real.py).
REAL_SOLUTIONS = REPO / "packages" / "sandbox" / "tests" / "judge" / "real_solutions"


def _write_data(path: Path) -> Path:
    rows = []
    for index, name in enumerate(["sum-a", "sum-b"]):
        rows.append(
            {
                "data_source": "code_contests",
                "prompt": [{"role": "user", "content": "Print a+b."}],
                "ability": "coding-cp",
                "reward_model": {"style": "rule", "ground_truth": sum_ground_truth(name=name)},
                "extra_info": {"index": index, "split": "test", "tier": "easy", "name": name},
            }
        )
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def _write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"name": "sum-a", "response": "x"}', "{not json"], ":2: not valid JSON"),
        (['{"name": "nope", "response": "x"}'], ":1: unknown problem 'nope'"),
        (['{"response": "x"}'], ':1: expected an object with a "name" string'),
        (['{"name": "sum-a"}'], ':1: expected a "response" string'),
    ],
)
def test_bad_responses_name_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lines: list[str], message: str
) -> None:
    data = _write_data(tmp_path / "data.parquet")
    responses = _write_lines(tmp_path / "responses.jsonl", lines)
    code = main(
        ["score", "--data", str(data), "--responses", str(responses), "--out", str(tmp_path / "o")]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert f"{responses}{message}" in err


def test_missing_or_bad_data_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    responses = _write_lines(tmp_path / "r.jsonl", ['{"name": "a", "response": "x"}'])
    assert (
        main(
            [
                "score",
                "--data",
                str(tmp_path / "none.parquet"),
                "--responses",
                str(responses),
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 2
    )
    assert "none.parquet: no such file" in capsys.readouterr().err
    bad = tmp_path / "bad.parquet"
    bad.write_text("not parquet")
    assert (
        main(
            [
                "score",
                "--data",
                str(bad),
                "--responses",
                str(responses),
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 2
    )
    assert "bad.parquet: not a processed dataset parquet" in capsys.readouterr().err


def test_bad_override(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _write_data(tmp_path / "data.parquet")
    responses = _write_lines(tmp_path / "r.jsonl", ['{"name": "sum-a", "response": "x"}'])
    code = main(
        [
            "score",
            "--data",
            str(data),
            "--responses",
            str(responses),
            "--out",
            str(tmp_path / "o"),
            "--config-dir",
            str(tmp_path),
            "oops",
        ]
    )
    assert code == 2
    assert "override 'oops' is not KEY=VALUE" in capsys.readouterr().err


@pytest.mark.ray
@pytest.mark.slow
def test_scores_a_file_on_a_local_ray(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _write_data(tmp_path / "data.parquet")
    lines = [
        json.dumps({"id": "r1", "name": "sum-a", "response": respond(SUM_PROGRAM)}),
        json.dumps({"id": "r2", "name": "sum-a", "response": respond(DIFF_PROGRAM)}),
        json.dumps({"name": "sum-b", "response": respond(COMPILE_ERROR_PROGRAM)}),
        json.dumps({"name": "sum-b", "response": "no code"}),
    ]
    responses = _write_lines(tmp_path / "responses.jsonl", lines)
    out = tmp_path / "scores" / "scores.jsonl"
    conf = Path(__file__).resolve().parents[4] / "conf"
    code = main(
        [
            "score",
            "--data",
            str(data),
            "--responses",
            str(responses),
            "--out",
            str(out),
            "--workers",
            "1",
            "--config-dir",
            str(conf),
            "--reward",
            "codefu",
            f"worker.cache_dir={tmp_path / 'cache'}",
        ]
    )
    assert code == 0
    scores = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(s.get("id"), s["name"], s["verdict"], s["score"]) for s in scores] == [
        ("r1", "sum-a", "AC", 1.0),
        ("r2", "sum-a", "WA", 0.25),
        (None, "sum-b", "CE", -0.5),
        (None, "sum-b", "NO_CODE", -1.0),
    ]
    assert scores[0]["passed"] == scores[0]["total"] == 4
    summary = capsys.readouterr().out
    for word in ("AC", "WA", "CE", "NO_CODE", "responses/s", "wall s"):
        assert word in summary


def _real_rows(easy: Path, names: set[str]) -> list[dict[str, object]]:
    """The processed rows of `names` in the real Easy set (both splits)."""
    rows = []
    for split in ("train", "test"):
        for row in pq.read_table(easy / f"{split}.parquet", columns=["reward_model"]).to_pylist():
            if row["reward_model"]["ground_truth"]["name"] in names:
                rows.append(row)
    assert {r["reward_model"]["ground_truth"]["name"] for r in rows} == names  # type: ignore[index]
    return rows


def _score(args: list[str]) -> int:
    return main(["score", "--workers", "2", "--config-dir", str(REPO / "conf"), *args])


@pytest.mark.real_data
@pytest.mark.slow
def test_real_python_programs_get_their_verdicts_and_a_cpp_run_refuses_them(
    codefu_easy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = json.loads((REAL_SOLUTIONS / "manifest.json").read_text())
    programs = sorted(REAL_SOLUTIONS.glob("*/*.py"))
    expected = {f"{p.parent.name}/{p.stem}": p.stem.upper() for p in programs}
    assert set(expected.values()) == {"AC", "WA", "TLE", "RE", "MLE", "CE", "OLE"}
    names = {p.parent.name: manifest[p.parent.name]["name"] for p in programs}
    data = tmp_path / "data.parquet"
    pq.write_table(pa.Table.from_pylist(_real_rows(codefu_easy, set(names.values()))), data)
    lines = [
        json.dumps(
            {
                "id": f"{p.parent.name}/{p.stem}",
                "name": names[p.parent.name],
                "response": f"Reading the input, then:\n```python\n{p.read_text()}```\nDone.",
            }
        )
        for p in programs
    ]
    responses = _write_lines(tmp_path / "responses.jsonl", lines)
    cache = f"worker.cache_dir={tmp_path / 'cache'}"

    both = tmp_path / "both.jsonl"
    args = ["--data", str(data), "--responses", str(responses)]
    # all_or_nothing: judging stops at a program's first failing test (the verdicts are the
    # same, the cost a fraction: the real sets have up to 250 tests).
    languages = "languages=[cpp,python]"
    assert _score([*args, "--out", str(both), cache, languages, "mode=all_or_nothing"]) == 0
    summary = capsys.readouterr().out
    scores = {s["id"]: s for s in map(json.loads, both.read_text().splitlines())}
    assert {i: s["verdict"] for i, s in scores.items()} == expected, scores
    for case, verdict in expected.items():
        score = scores[case]
        assert (score["language"], score["has_code"], score["judge_failure"]) == ("python", 1, 0)
        assert score["score"] == {"AC": 1.0, "CE": -0.5}.get(verdict, 0.0)
    assert "python" in summary and "OLE" in summary

    # The CodeFu recipe accepts C++ only: the Python answers get the no-code reward, with
    # the reason in the verdict, unjudged (C++ answers: test_scores_a_file_on_a_local_ray).
    cpp_only = tmp_path / "cpp_only.jsonl"
    assert _score([*args, "--out", str(cpp_only), cache, "mode=all_or_nothing"]) == 0
    summary = capsys.readouterr().out
    scores = {s["id"]: s for s in map(json.loads, cpp_only.read_text().splitlines())}
    assert {
        (s["verdict"], s["score"], s["has_code"], s["language"], s["total"])
        for s in scores.values()
    } == {("LANGUAGE", -1.0, 0, "python", 0)}
    assert f"LANGUAGE    python    {len(programs):>8}" in summary
