"""`codefu-eval grade`: the generations shapes it reads (LiveCodeBench's custom output and
saved generations, JSONL responses), its results beside LiveCodeBench's per-problem shape,
and bad files in one line naming the row, with nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codefu_trainer.evaluation.cli import main
from codefu_trainer.evaluation.grade import LCB_FILE, read_generations
from codefu_trainer.run.prepared_data import BadInputError

from ..conftest import CONF
from ..source_rows import RIGHT, WRONG, answer, write


def _grade(tmp_path: Path, generations: Path, *extra: str) -> list[str]:
    data = write(tmp_path / "lcb" / "test6.jsonl")
    return [
        "grade",
        "--config-dir",
        str(CONF),
        "--data",
        str(data),
        "--generations",
        str(generations),
        f"eval.root_dir={tmp_path / 'runs'}",
        *extra,
    ]


def test_custom_output_is_judged_as_given_with_pass_at_k_and_its_per_problem_shape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    custom = tmp_path / "custom.json"
    custom.write_text(
        json.dumps(
            [
                {"question_id": "3301", "code_list": [RIGHT["3301"], WRONG["3301"]]},
                {"question_id": "abc001_a", "code_list": [RIGHT["abc001_a"], WRONG["abc001_a"]]},
            ]
        )
    )
    assert main(_grade(tmp_path, custom)) == 0
    out = capsys.readouterr().out
    assert "codefu-eval: 2 problems of the data have no generations and are not counted" in out
    (folder,) = (tmp_path / "runs" / "eval" / "grade").iterdir()
    records = [json.loads(line) for line in (folder / "samples.jsonl").read_text().splitlines()]
    assert [(r["problem"], r["verdict"]) for r in records] == [  # the data's order
        ("abc001_a", "AC"),
        ("abc001_a", "WA"),
        ("3301", "AC"),
        ("3301", "WA"),
    ]
    summary = json.loads((folder / "summary.json").read_text())
    assert list(summary["by_tier"]) == ["easy", "hard"]  # the data's order, not the file's
    assert summary["pass@k"] == {"1": 0.5}  # pass@5 and pass@10 need as many samples
    assert summary["by_difficulty"]["easy"]["pass@k"]["1"] == 0.5
    assert summary["by_platform"]["leetcode"]["pass@k"]["1"] == 0.5
    assert "platform atcoder" in out and "difficulty medium" in out
    lcb = json.loads((folder / LCB_FILE).read_text())
    assert [p["question_id"] for p in lcb] == ["3301", "abc001_a"]  # its order
    assert lcb[1]["graded_list"] == [True, False] and lcb[1]["pass@1"] == 0.5
    assert lcb[1]["code_list"] == [RIGHT["abc001_a"], WRONG["abc001_a"]]
    assert [json.loads(m).get("error_code") for m in lcb[1]["metadata"]] == [None, -2]
    assert (lcb[1]["platform"], lcb[1]["difficulty"]) == ("atcoder", "easy")


def test_saved_generations_and_jsonl_responses_are_raw_outputs(tmp_path: Path) -> None:
    saved = tmp_path / "saved.json"
    saved.write_text(
        json.dumps([{"question_id": "3301", "output_list": ["a", "b"], "code_list": ["x", "y"]}])
    )
    (generation,) = read_generations(saved)
    assert (generation.question_id, generation.texts, generation.raw) == ("3301", ["a", "b"], True)
    lines = tmp_path / "responses.jsonl"
    responses = [("3301", answer(RIGHT["3301"])), ("abc001_a", "no code"), ("3301", "x")]
    lines.write_text(
        "".join(json.dumps({"question_id": q, "response": r}) + "\n" for q, r in responses)
    )
    found = {g.question_id: g for g in read_generations(lines)}
    assert found["3301"].texts == [answer(RIGHT["3301"]), "x"] and found["3301"].raw
    assert found["3301"].where == "lines 1, 3"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"response": "x"}\n', "line 1: no question_id"),
        ('{"question_id": "3301", "response": 1}\n', "line 1 (3301): response is not a text"),
        (
            '[{"question_id": "3301", "code_list": ["a"]}, {"code_list": []}]',
            "row 2: no question_id",
        ),
        (
            '[{"question_id": "3301", "code_list": [1]}]',
            "row 1 (3301): code_list is not a list of texts",
        ),
        ('[{"question_id": "3301", "output_list": []}]', "row 1 (3301): output_list is empty"),
        ('[{"question_id": "3301"}]', "row 1 (3301): neither code_list nor output_list"),
        (
            '[{"question_id": "3301", "code_list": ["a"]}, '
            '{"question_id": "3301", "code_list": ["b"]}]',
            "row 2 (3301): question 3301 again (first: row 1 (3301))",
        ),
        ("[1, 2", "the file: not JSON"),
        ("[]", "the file: not a non-empty JSON list"),
        ("", "the file: no {question_id, response} line"),
    ],
)
def test_a_bad_generations_file_is_refused_naming_the_row(
    content: str, message: str, tmp_path: Path
) -> None:
    generations = tmp_path / "generations.json"
    generations.write_text(content)
    with pytest.raises(BadInputError) as refused:
        read_generations(generations)
    assert str(refused.value).startswith(f"--generations {generations}: {message}")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('[{"question_id": "3301", "code_list": 1}]', "row 1 (3301): code_list is not a list"),
        (
            '[{"question_id": "9999", "code_list": ["a"]}]',
            "row 1 (9999): question 9999 is not among",
        ),
    ],
)
def test_grade_stops_at_a_bad_file_in_one_line_and_writes_nothing(
    content: str, message: str, *, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    generations = tmp_path / "generations.json"
    generations.write_text(content)
    code = main(_grade(tmp_path, generations))
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"codefu-eval: --generations {generations}: ") and err.count("\n") == 1
    assert message in err
    assert not (tmp_path / "runs" / "eval" / "grade").exists()
