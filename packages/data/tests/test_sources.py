"""LiveCodeBench, TACO, APPS, PrimeIntellect and DeepCoder rows through `prepare`: rows written
in each published schema, and real CodeContests problems rewritten in each of them (the same
problem must give the same tests, limits and verdicts through every format)."""

from __future__ import annotations

import base64
import json
import os
import pickle
import zlib
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from codefu_data.cli import main
from codefu_data.config import DataConfig, check_config
from codefu_data.formats.livecodebench import RELEASES
from codefu_data.formats.verl import statement_from_prompt
from codefu_data.livecodebench_prompts import SYSTEM_GENERIC, TEXT_ROLE
from codefu_data.prepare import prepare
from codefu_data.reader import DataError
from codefu_data.sample import sample_dataset_dir

# CodeContests problems rewritten in each published source format.
PYTHON3 = 3
BIG = "9" * 6000  # an integer of 6,000 digits


def _pairs(row: dict[str, Any]) -> list[tuple[str, str]]:
    pairs = []
    for key in ("public_tests", "private_tests"):
        tests = row[key] or {"input": [], "output": []}
        pairs += list(zip(tests["input"], tests["output"], strict=True))
    return pairs


def _python(row: dict[str, Any], key: str = "solutions") -> list[str]:
    found = row.get(key) or {"language": [], "solution": []}
    return [
        s for lang, s in zip(found["language"], found["solution"], strict=True) if lang == PYTHON3
    ]


def _seconds(row: dict[str, Any]) -> float:
    limit = row["time_limit"]
    return float(limit["seconds"]) + float(limit.get("nanos") or 0) / 1e9


def _memory_text(memory_bytes: int) -> str:
    """A limit as the statements write it: megabytes of 10^6 bytes, or MiB."""
    if memory_bytes % 1_000_000 == 0:
        return f"{memory_bytes // 1_000_000} megabytes"
    return f"{memory_bytes >> 20} MiB"


def packed(text: str) -> str:
    """base64(zlib(pickle(text))), as LiveCodeBench ships its private tests."""
    return base64.b64encode(zlib.compress(pickle.dumps(text))).decode()


def livecodebench(
    row: dict[str, Any], *, pickled: bool, date: str = "2024-09-01T00:00:00"
) -> dict[str, Any]:
    public = row["public_tests"]
    private = row["private_tests"]

    def cases(tests: dict[str, list[str]]) -> str:
        return json.dumps(
            [
                {"input": i, "output": o, "testtype": "stdin"}
                for i, o in zip(tests["input"], tests["output"], strict=True)
            ]
        )

    return {
        "question_title": row["name"],
        "question_content": row["description"],
        "platform": "codeforces",
        "question_id": row["name"],
        "contest_id": "1",
        "contest_date": date,
        "starter_code": "",
        "difficulty": "easy",
        "public_test_cases": cases(public),
        "private_test_cases": packed(cases(private)) if pickled else cases(private),
        "metadata": "{}",
    }


def taco(row: dict[str, Any], solutions: list[str] | None = None) -> dict[str, Any]:
    pairs = _pairs(row)
    return {
        "question": row["description"],
        "solutions": json.dumps(_python(row) if solutions is None else solutions),
        "starter_code": "",
        "input_output": json.dumps(
            {"inputs": [p[0] for p in pairs], "outputs": [p[1] for p in pairs]}
        ),
        "difficulty": "EASY",
        "raw_tags": "[]",
        "name": row["name"],
        "source": "codeforces",
        "tags": "[]",
        "skill_types": "[]",
        "url": f"https://codeforces.com/problemset/problem/{row['name']}",
        "Expected Auxiliary Space": None,
        "time_limit": f"{_seconds(row):g} seconds",
        "date": "2021-05-18",
        "picture_num": "0",
        "memory_limit": _memory_text(row["memory_limit_bytes"]),
        "Expected Time Complexity": None,
    }


def apps(
    row: dict[str, Any], problem_id: int, solutions: list[str] | None = None
) -> dict[str, Any]:
    pairs = _pairs(row)
    return {
        "problem_id": problem_id,
        "question": row["description"],
        "solutions": json.dumps(_python(row) if solutions is None else solutions),
        "input_output": json.dumps(
            {"inputs": [p[0] for p in pairs], "outputs": [p[1] for p in pairs]}
        ),
        "difficulty": "introductory",
        "url": f"https://codeforces.com/problemset/problem/{row['name']}",
        "starter_code": "",
    }


def primeintellect(row: dict[str, Any], solution: str | None = None) -> dict[str, Any]:
    pairs = _pairs(row)
    gold = (_python(row) or [""])[0] if solution is None else solution
    return {
        "problem_id": f"vfc_{row['name']}",
        "source": "codeforces",
        "task_type": "verifiable_code",
        "in_source_id": row["name"],
        "prompt": row["description"],
        "gold_standard_solution": f"```python\n{gold}\n```" if gold else None,
        "verification_info": json.dumps(
            {
                "language": "python",
                "test_cases": [{"input": i, "output": o, "type": "stdin_stdout"} for i, o in pairs],
            }
        ),
        "metadata": json.dumps(
            {
                "difficulty": "EASY",
                "time_limit": f"{_seconds(row):g} seconds",
                "memory_limit": _memory_text(row["memory_limit_bytes"]),
            }
        ),
    }


def deepcoder(row: dict[str, Any], subset: str) -> dict[str, Any]:
    pairs = _pairs(row)
    if subset == "codeforces":
        tests: Any = [{"input": i, "output": o} for i, o in pairs]
    elif subset == "lcbv5":
        tests = [{"input": i, "output": o, "testtype": "stdin", "metadata": {}} for i, o in pairs]
    elif subset == "taco":
        tests = {"inputs": [p[0] for p in pairs], "outputs": [p[1] for p in pairs]}
    else:
        tests = [{"input": i, "output": o, "type": "stdin_stdout"} for i, o in pairs]
    return {
        "problem": row["description"],
        "tests": json.dumps(tests),
        "starter_code": "",
        "metadata": "{}",
        "solutions": _python(row),
    }


TIERS = ("easy", "expert", "hard")


def _sample_rows() -> list[dict[str, Any]]:
    return pq.read_table(sample_dataset_dir() / "data" / "train-00000-of-00001.parquet").to_pylist()


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def _prepared(out: Path) -> dict[str, dict[str, Any]]:
    """Every written row, keyed by its statement (read back from the prompt)."""
    found = {}
    for tier in TIERS:
        for split in ("train", "test"):
            for row in pq.read_table(out / tier / f"{split}.parquet").to_pylist():
                found[statement_from_prompt(row["prompt"])] = row
    return found


def _tests(row: dict[str, Any]) -> tuple[list[str], list[str]]:
    gt = row["reward_model"]["ground_truth"]
    return (
        gt["public_tests"]["input"] + gt["private_tests"]["input"],
        gt["public_tests"]["output"] + gt["private_tests"]["output"],
    )


def _prepare(source: Any, out: Path, **changes: Any) -> dict[str, Any]:
    cfg = DataConfig(source=source, out_dir=str(out))
    for key, value in changes.items():
        setattr(cfg, key, value)
    return prepare(cfg, progress=False).manifest


FORMATS: dict[str, Callable[[list[dict[str, Any]]], list[dict[str, Any]]]] = {
    "livecodebench": lambda rows: [
        livecodebench(r, pickled=i % 2 == 0) for i, r in enumerate(rows)
    ],
    "taco": lambda rows: [taco(r) for r in rows],
    "apps": lambda rows: [apps(r, i) for i, r in enumerate(rows)],
    "primeintellect": lambda rows: [primeintellect(r) for r in rows],
    "deepcoder": lambda rows: [
        deepcoder(r, ("lcbv5", "codeforces", "taco", "primeintellect")[i % 4])
        for i, r in enumerate(rows)
    ],
}
STATES_LIMITS = {"taco", "primeintellect"}


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_a_problem_gets_the_same_tests_and_limits_through_every_format(
    fmt: str, tmp_path: Path
) -> None:
    raw = _sample_rows()
    base = _prepared_sample(tmp_path)
    source = _write(tmp_path / fmt / "train.jsonl", FORMATS[fmt](raw))
    manifest = _prepare(str(source), tmp_path / "out", other_sources="easy")
    assert manifest["input"]["files"][0]["format"] == fmt
    got = _prepared(tmp_path / "out")
    assert set(base) <= set(got)  # every problem CodeContests keeps, this format keeps
    for statement, row in base.items():
        mine = got[statement]
        assert mine["data_source"] == fmt
        assert _tests(mine) == _tests(row), statement[:40]
        gt, ref = mine["reward_model"]["ground_truth"], row["reward_model"]["ground_truth"]
        if fmt in STATES_LIMITS:
            assert (gt["time_limit"], gt["memory_limit_bytes"]) == (
                ref["time_limit"],
                ref["memory_limit_bytes"],
            )
        else:  # none stated: the defaults
            assert gt["time_limit"] == {"nanos": 0.0, "seconds": 6.0}
            assert gt["memory_limit_bytes"] == 256 << 20
        assert gt["judging_rules"] == ref["judging_rules"]
    names = {r["reward_model"]["ground_truth"]["name"] for r in got.values()}
    if fmt == "livecodebench":
        assert names <= {r["name"] for r in raw}  # question_id
    if fmt == "apps":
        assert names <= {str(i) for i in range(len(raw))}  # problem_id


_BASE: dict[str, Any] = {}


def _prepared_sample(tmp_path: Path) -> dict[str, dict[str, Any]]:
    if "rows" not in _BASE:
        source = _write(tmp_path / "cc" / "train.parquet", _sample_rows())
        _prepare(str(source), tmp_path / "cc-out")
        _BASE["rows"] = _prepared(tmp_path / "cc-out")
    return _BASE["rows"]


def test_livecodebench_rows_are_judged_as_livecodebench_judges(tmp_path: Path) -> None:
    stdin = livecodebench(_sample_rows()[0], pickled=True)
    functional = {
        **stdin,
        "question_id": "2847",
        "question_content": "Return the sum of the numbers in nums plus k, as an integer.",
        "platform": "leetcode",
        "starter_code": (
            "class Solution:\n    def addAll(self, nums: List[int], k: int) -> int:\n        "
        ),
        "difficulty": "medium",
        "public_test_cases": json.dumps(
            [{"input": "[1, 2, 3]\n4", "output": "10", "testtype": "functional"}]
        ),
        "private_test_cases": packed(
            json.dumps(
                [
                    {"input": "[]\n-1", "output": "-1", "testtype": "functional"},
                    # Longer than Python's default digit limit, within LiveCodeBench's.
                    {"input": "[]\n" + BIG, "output": BIG, "testtype": "functional"},
                ]
            )
        ),
        "metadata": json.dumps({"func_name": "addAll"}),
    }
    source = _write(tmp_path / "test5.jsonl", [stdin, functional])
    _prepare(str(source), tmp_path / "out", language="python")
    test_rows = {
        r["reward_model"]["ground_truth"]["name"]: r
        for tier in TIERS
        for r in pq.read_table(tmp_path / "out" / tier / "test.parquet").to_pylist()
    }
    call = test_rows["2847"]
    gt = call["reward_model"]["ground_truth"]
    assert call["extra_info"]["tier"] == "hard"  # medium → hard (data.difficulty_tiers)
    # What an evaluation groups by: LiveCodeBench's difficulty, platform and contest date.
    assert (call["extra_info"]["difficulty"], call["extra_info"]["platform"]) == (
        "medium",
        "leetcode",
    )
    assert call["extra_info"]["contest_date"] == "2024-09-01T00:00:00"
    # The grader's parameters as the grader defines them, stored as their JSON text.
    assert gt["grader"]["name"] == "call" and json.loads(gt["grader"]["params"]) == {
        "fn_name": "addAll",
        "prelude": "livecodebench",
        "compare": "livecodebench",
    }
    assert gt["public_tests"] == {"input": ["[[1, 2, 3], 4]"], "output": ["10"]}
    assert gt["private_tests"] == {"input": ["[[], -1]", f"[[], {BIG}]"], "output": ["-1", BIG]}
    assert gt["checker"] is None
    prompt = call["prompt"][0]["content"]
    assert "complete the function `addAll`" in prompt and "do not read the input" in prompt
    assert "```python\nclass Solution:\n    def addAll(" in prompt
    plain = test_rows[stdin["question_id"]]["reward_model"]["ground_truth"]
    assert plain["checker"] == {"name": "livecodebench", "params": None}
    assert json.loads(plain["grader"]["params"]) == {"prelude": "livecodebench"}
    assert plain["private_tests"]["input"] == _sample_rows()[0]["private_tests"]["input"]
    # Asked for C++, the call-based problem cannot be answered: dropped, and counted.
    manifest = _prepare(str(source), tmp_path / "cpp")
    assert manifest["totals"]["dropped"]["grader_language"] == 1


def test_livecodebench_prompts_per_model_style(tmp_path: Path) -> None:
    """data.prompt.style: LiveCodeBench's generic chat prompt (system and user messages) or
    its DeepSeekR1 text (one message given as it is), the statement as the row has it."""
    row = livecodebench(_sample_rows()[0], pickled=False)
    source = _write(tmp_path / "test.jsonl", [row])
    prompts = {}
    for style in ("livecodebench", "livecodebench_deepseek_r1"):
        cfg = DataConfig(source=str(source), out_dir=str(tmp_path / style), language="python")
        cfg.prompt.style = style
        prepare(cfg, progress=False)
        (prompts[style],) = [
            r["prompt"]
            for tier in TIERS
            for r in pq.read_table(tmp_path / style / tier / "test.parquet").to_pylist()
        ]
    system, user = prompts["livecodebench"]
    assert system == {"content": SYSTEM_GENERIC, "role": "system"}
    assert user["role"] == "user"
    assert user["content"].startswith(f"### Question:\n{row['question_content']}\n\n### Format: ")
    assert user["content"].endswith("### Answer: (use the provided format with backticks)\n\n")
    (text,) = prompts["livecodebench_deepseek_r1"]
    assert text["role"] == TEXT_ROLE and text["content"].endswith("<｜Assistant｜>")
    assert f"Question: {row['question_content']}\n\n" in text["content"]
    with pytest.raises(ValueError, match=r"data\.prompt\.style='chat': use one of codefu, "):
        check_config(replace(cfg, prompt=replace(cfg.prompt, style="chat")))


def test_livecodebench_releases_are_the_files_its_version_tags_read() -> None:
    """Its dataset's loading script: cumulative releases, single versions, their ranges."""
    files = ("test.jsonl", "test2.jsonl", "test3.jsonl", "test4.jsonl", "test5.jsonl")
    assert RELEASES["release_v5"] == files
    assert RELEASES["release_v1"] == ("test.jsonl",)
    assert RELEASES["release_latest"] == RELEASES["release_v6"] == (*files, "test6.jsonl")
    assert RELEASES["v1"] == ("test.jsonl",) and RELEASES["v6"] == ("test6.jsonl",)
    assert RELEASES["v4_v5"] == ("test4.jsonl", "test5.jsonl")
    assert RELEASES["v1_v3"] == files[:3]
    ranges = [f"v{a}_v{b}" for a in range(1, 7) for b in range(a + 1, 7)]
    names = [f"release_v{n}" for n in range(1, 7)] + ["release_latest"]
    assert list(RELEASES) == names + [f"v{n}" for n in range(1, 7)] + ranges


def test_a_hostile_pickle_is_refused_without_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refused: Callable[..., None]
) -> None:
    marker = tmp_path / "ran"

    class Hostile:
        def __reduce__(self) -> tuple[Any, tuple[str]]:
            return (os.system, (f"touch {marker}",))

    rows = [livecodebench(r, pickled=True) for r in _sample_rows()[:3]]
    rows[1]["private_test_cases"] = base64.b64encode(
        zlib.compress(pickle.dumps(Hostile()))
    ).decode()
    source = _write(tmp_path / "src" / "test.jsonl", rows)
    monkeypatch.chdir(tmp_path)
    refused(
        main,
        ["prepare", "--no-progress", "--source", str(source), "--out", "out"],
        f"row 1 ({rows[1]['question_id']}): refused pickle: it loads the global",
        tmp_path,
    )
    assert not marker.exists()
    rows[1]["private_test_cases"] = base64.b64encode(
        zlib.compress(pickle.dumps(["not", "text"]))
    ).decode()
    _write(source, rows)
    with pytest.raises(DataError, match=r"row 1 .*refused pickle: it holds a list"):
        _prepare(str(source), tmp_path / "out")


def test_call_based_taco_apps_primeintellect_and_deepcoder_rows(tmp_path: Path) -> None:
    statement = "Given a list of integers, return the largest one; the list is never empty."
    io = {"fn_name": "largest", "inputs": [[[1, 5, 2]], [[-3]]], "outputs": [[5], -3]}
    taco_row = {**taco(_sample_rows()[0]), "question": statement, "input_output": json.dumps(io)}
    taco_row["time_limit"], taco_row["memory_limit"] = "None", "64 MiB"
    cases = [
        {"type": "function_call", "fn_name": "largest", "input": "[[1, 5, 2]]", "output": "[5]"},
        {"type": "function_call", "fn_name": "largest", "input": [[-3]], "output": -3},
    ]
    pi_row = {**primeintellect(_sample_rows()[0]), "prompt": statement + " (PI)"}
    pi_row["verification_info"] = json.dumps({"language": "python", "test_cases": cases})
    deep_row = {
        "problem": statement + " (DC)",
        "tests": json.dumps(io),
        "starter_code": "def largest(xs):\n",
    }
    sources = [
        _write(tmp_path / "taco" / "train.jsonl", [taco_row]),
        _write(tmp_path / "pi" / "train-00000-of-00001.parquet", [pi_row]),
        _write(tmp_path / "deep" / "train.jsonl", [deep_row]),
    ]
    manifest = _prepare(
        [str(s) for s in sources], tmp_path / "out", language="python", other_sources="easy"
    )
    assert [f["format"] for f in manifest["input"]["files"]] == [
        "taco",
        "primeintellect",
        "deepcoder",
    ]
    assert manifest["unvalidated"] == {"deepcoder": 1, "primeintellect": 1, "taco": 1}
    got = {
        r["data_source"]: r["reward_model"]["ground_truth"]
        for r in _prepared(tmp_path / "out").values()
    }
    for gt in got.values():
        assert gt["grader"]["name"] == "call" and json.loads(gt["grader"]["params"]) == {
            "fn_name": "largest",
            "compare": "apps",
        }
        assert gt["private_tests"] == {"input": ["[[1, 5, 2]]", "[[-3]]"], "output": ["[5]", "-3"]}
    assert (
        got["taco"]["time_limit"]["seconds"] == 6.0
        and got["taco"]["memory_limit_bytes"] == 64 << 20
    )
    assert got["taco"]["name"].startswith("https://codeforces.com/")
    assert got["deepcoder"]["name"].startswith("deepcoder-")


def test_call_based_and_livecodebench_solutions_are_validated_as_the_reward_judges(
    tmp_path: Path,
) -> None:
    """`data.validate=true` judges a call-based problem's solutions through the call grader
    (APPS' comparison: `[5]` expects 5), and a LiveCodeBench stdin problem's through its
    prelude and checker (`gcd` without an import; `2.0` for `2`)."""
    statement = "Given a list of integers, return the largest one; the list is never empty."
    io = {
        "fn_name": "largest",
        "inputs": [[[1, 5, 2]], [[-3]], [[7, 7]], [[0]]],
        "outputs": [[5], -3, 7, 1],  # the last one is wrong: no solution passes it
    }
    right = "def largest(xs):\n    return max(xs)\n"
    method = "class Solution:\n    def largest(self, xs):\n        return sorted(xs)[-1]\n"
    wrong = "def largest(xs):\n    return min(xs) - 1\n"
    rows = [
        {
            **taco(_sample_rows()[0], [right, method]),
            "question": statement,
            "input_output": json.dumps(io),
        },
        {
            **taco(_sample_rows()[1], [wrong]),
            "question": statement + " Twice.",
            "input_output": json.dumps(io),
        },
    ]
    lcb = {
        **deepcoder(_sample_rows()[0], "lcbv5"),
        "problem": "Print the greatest common divisor of a and b.",
        "tests": json.dumps(
            [
                {"input": "4 6\n", "output": "2\n", "testtype": "stdin", "metadata": {}},
                {"input": "9 6\n", "output": "3\n", "testtype": "stdin", "metadata": {}},
            ]
        ),
        "solutions": ["a, b = map(int, input().split())\nprint(float(gcd(a, b)))\n"],
    }
    sources = [
        _write(tmp_path / "taco" / "train.jsonl", rows),
        _write(tmp_path / "deep" / "train.jsonl", [lcb]),
    ]
    manifest = _prepare(
        [str(s) for s in sources],
        tmp_path / "out",
        language="python",
        validate=True,
        validate_languages=["python"],
        other_sources="easy",
    )
    validation = manifest["validation"]
    assert validation["problems_validated"] == 3
    assert validation["problems_without_solution"] == 0
    assert validation["tests_dropped"] == 1
    assert validation["languages"]["python"]["solutions_run"] == 4
    assert manifest["totals"]["dropped"]["accepted_solutions_fail"] == 1
    assert manifest["unvalidated"] == {}
    got = {r["data_source"]: r for r in _prepared(tmp_path / "out").values()}
    assert set(got) == {"taco", "deepcoder"}
    kept = got["taco"]["reward_model"]["ground_truth"]
    assert kept["name"] == rows[0]["url"]
    assert kept["private_tests"] == {
        "input": ["[[1, 5, 2]]", "[[-3]]", "[[7, 7]]"],
        "output": ["[5]", "-3", "7"],
    }
    gcd = got["deepcoder"]["reward_model"]["ground_truth"]
    assert gcd["checker"] == {"name": "livecodebench", "params": None}
    assert len(gcd["private_tests"]["input"]) + len(gcd["public_tests"]["input"]) == 2


def test_the_date_window_selects_problems_and_is_in_the_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refused: Callable[..., None]
) -> None:
    dates = [
        "2023-05-01T00:00:00",
        "2024-08-15T00:00:00",
        "2024-12-31T23:00:00",
        "2025-03-01T00:00:00",
    ]
    rows = [
        livecodebench(r, pickled=False, date=d) for r, d in zip(_sample_rows(), dates, strict=False)
    ]
    source = _write(tmp_path / "src" / "test.jsonl", rows)
    manifest = _prepare(str(source), tmp_path / "out", date_from="2024-08-01", date_to="2024-12-31")
    assert manifest["date_window"] == {
        "from": "2024-08-01",
        "to": "2024-12-31",
        "selected": 2,
        "outside": 2,
        "undated": 0,
    }
    assert manifest["totals"]["dropped"]["outside_date_window"] == 2
    monkeypatch.chdir(tmp_path)
    refused(
        main,
        [
            "prepare",
            "--no-progress",
            "--source",
            str(source),
            "--out",
            "o",
            "data.date_from=2026-01-01",
        ],
        "selects no problem",
        tmp_path,
    )
    refused(
        main,
        ["prepare", "--no-progress", "--out", "o", "data.date_to=someday"],
        "is not a date",
        tmp_path,
    )


def test_a_file_without_a_row_is_one_line_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refused: Callable[..., None]
) -> None:
    """An empty file of a known format prepares nothing: one line, exit 2, no folder."""
    empty = tmp_path / "src" / "test.jsonl"
    empty.parent.mkdir()
    empty.write_text("")
    monkeypatch.chdir(tmp_path)
    argv = ["prepare", "--no-progress", "--source", str(empty), "--out", "o"]
    refused(main, [*argv, "data.format=livecodebench"], "holds no problem", tmp_path)


@pytest.mark.parametrize("case", ["corrupt tests", "not base64 nor JSON", "no function name"])
def test_a_corrupt_row_is_one_line_naming_it(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refused: Callable[..., None]
) -> None:
    rows = [livecodebench(r, pickled=False) for r in _sample_rows()[:3]]
    if case == "corrupt tests":
        rows[2]["public_test_cases"] = '[{"input": 1'
        said = "row 2 ("
    elif case == "not base64 nor JSON":
        rows[2]["private_test_cases"] = "%%% not base64 %%%"
        said = "neither JSON nor base64"
    else:
        rows[2] = {
            **taco(_sample_rows()[2]),
            "input_output": '{"fn_name": "", "inputs": [], "outputs": []}',
        }
        rows = [rows[2]]
        said = "without a function name"
    source = _write(tmp_path / "src" / "train.jsonl", rows)
    monkeypatch.chdir(tmp_path)
    refused(
        main, ["prepare", "--no-progress", "--source", str(source), "--out", "o"], said, tmp_path
    )


VALIDATED_FORMATS = {
    "taco": taco,
    "apps": lambda r, s: apps(r, sum(map(ord, r["name"])), s),
    "primeintellect": lambda r, s: primeintellect(r, s[0]),
}


@pytest.mark.parametrize("fmt", list(VALIDATED_FORMATS))
def test_the_sample_programs_get_the_same_verdicts_through_every_format(
    fmt: str, tmp_path: Path
) -> None:
    """The sample's Python programs for three problems as each format's solutions, judged by
    `prepare data.validate=true`: the same problems kept or dropped, for the same reasons,
    with the same tests, as through CodeContests itself; accepted programs keep all three."""
    raw = [r for r in _sample_rows() if _python(r)]
    assert len(raw) == 3
    for kind, key in (("accepted", "solutions"), ("wrong", "incorrect_solutions")):
        programs = [_python(r, key) for r in raw]
        python = [{"language": [PYTHON3] * len(p), "solution": p} for p in programs]
        as_cc = [{**r, "solutions": s} for r, s in zip(raw, python, strict=True)]
        rows = [VALIDATED_FORMATS[fmt](r, p) for r, p in zip(raw, programs, strict=True)]
        results = {}
        for name, source in (
            ("cc", _write(tmp_path / kind / "cc" / "train.parquet", as_cc)),
            (fmt, _write(tmp_path / kind / fmt / "train.jsonl", rows)),
        ):
            manifest = _prepare(
                str(source),
                tmp_path / kind / f"{name}-out",
                validate=True,
                validate_languages=["python"],
                other_sources="easy",
            )
            kept = _prepared(tmp_path / kind / f"{name}-out")
            results[name] = (
                manifest["totals"]["kept"],
                manifest["totals"]["dropped"],
                manifest["validation"]["problems_validated"],
                {s: _tests(r) for s, r in kept.items()},
            )
        assert results[fmt] == results["cc"], kind
        if kind == "accepted":
            assert results[fmt][0] == 3 and results[fmt][2] == 3
        else:
            assert results[fmt][1].get("accepted_solutions_fail", 0) >= 1


@pytest.mark.real_data
def test_real_problems_get_the_same_tests_through_every_format(
    codefu_easy: Path, tmp_path: Path
) -> None:
    """Real CodeContests problems (the shared Easy set, veRL parquet), rewritten in each
    format: the same tests, statements' rules and (where the format states them) limits."""
    table = pq.read_table(codefu_easy / "train.parquet").slice(0, 24)
    (tmp_path / "verl").mkdir()
    pq.write_table(table, tmp_path / "verl" / "train.parquet")
    _prepare(str(tmp_path / "verl"), tmp_path / "base", keep_several_answers=True)
    base = _prepared(tmp_path / "base")
    assert len(base) >= 20
    raw = []
    for row in table.to_pylist():
        gt = row["reward_model"]["ground_truth"]
        raw.append(
            {
                "name": gt["name"],
                "description": statement_from_prompt(row["prompt"]),
                "public_tests": gt["public_tests"],
                "private_tests": gt["private_tests"],
                "time_limit": {
                    "seconds": int(gt["time_limit"]["seconds"]),
                    "nanos": int(gt["time_limit"]["nanos"] or 0),
                },
                "memory_limit_bytes": gt["memory_limit_bytes"],
                "solutions": None,
            }
        )
    for fmt, convert in FORMATS.items():
        source = _write(tmp_path / fmt / "train.parquet", convert(raw))
        _prepare(
            str(source), tmp_path / f"{fmt}-out", keep_several_answers=True, other_sources="easy"
        )
        got = _prepared(tmp_path / f"{fmt}-out")
        assert set(base) <= set(got), fmt
        for statement, row in base.items():
            assert _tests(got[statement]) == _tests(row), (fmt, statement[:40])
            if fmt in STATES_LIMITS:
                mine, ref = (
                    got[statement]["reward_model"]["ground_truth"],
                    row["reward_model"]["ground_truth"],
                )
                assert mine["time_limit"] == ref["time_limit"], fmt
