"""Parity with LiveCodeBench's own grader: `codefu-eval grade` under the protocol gives, on
answers written in its `code_generation_lite` row schema (lcb_parity/make_answers.py), the
verdict LiveCodeBench gave them (lcb_parity/lcb_verdicts.json, graded once with its code at
`LCB_COMMIT` by lcb_parity/run_livecodebench.py) on every answer but those of the kinds in
`DIVERGENCES`, where it is fooled or its in-process harness is wrong, and where ours is
asserted. It takes the same code from every answer, stops at the same test (public tests
first), and its prompts for both model styles are LiveCodeBench's to the character."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codefu_data.livecodebench_prompts import DEEPSEEK_R1, GENERIC, livecodebench_messages
from codefu_trainer.evaluation.cli import main
from codefu_trainer.evaluation.grade import LCB_FILE

from ..conftest import CONF

PARITY = Path(__file__).parent / "lcb_parity"
LCB_COMMIT = "28fef95ea8c9f7a547c8329f2cd3d32b92c1fa24"
# Kinds of answers where our verdict is not LiveCodeBench's: our verdict, and why. Harness
# artifacts (a correct program it rejects, or a wrong one it accepts, because it runs the
# program inside its grading process with mocked stdin and stdout) and hacks (it compares
# the program's own objects in its own process).
DIVERGENCES: dict[str, tuple[str, str]] = {
    "os.read(0)": ("AC", "artifact: fd 0 of its grading process is not the test's input"),
    "module-level global": ("AC", "artifact: it runs the program as the body of a function"),
    "sys.stdout.buffer": ("AC", "artifact: its stdout is a StringIO, without a buffer"),
    "quit()": ("AC", "artifact: its reliability guard sets builtins.quit to None"),
    "open(0)": ("AC", "artifact: its mock of open does not read the test's input"),
    "sys.stdin.buffer.readline": ("AC", "artifact: its mock buffer's readline repeats line 1"),
    "iterating over sys.stdin": ("AC", "artifact: its mock stdin is not iterable"),
    "sys.stdin.readlines": ("AC", "artifact: its mock's readlines has no newlines, one more"),
    "class Solution named in a comment only": (
        "AC",
        "artifact: it looks for the text `class Solution`, not for the class",
    ),
    "from __future__ import": ("AC", "artifact: it pastes its imports before the program"),
    "numpy": ("RE", "artifact: libraries its grading process happens to have installed"),
    "patching its comparison": ("WA", "hack: the program replaces its comparison function"),
    "an object that says it equals anything": ("WA", "hack: it compares the program's object"),
    "reading the grader's frame": ("WA", "hack: the program reads the expected value"),
}


def lcb_class(problem: dict[str, Any], j: int) -> str:
    """LiveCodeBench's verdict of answer `j`: AC, WA (-2), TLE (-3) or ERROR (-4: a runtime
    error, or an error during testing: no code, a syntax error, no such function)."""
    if problem["graded_list"][j]:
        return "AC"
    return {-2: "WA", -3: "TLE"}.get(problem["metadata"][j].get("error_code"), "ERROR")


def our_class(verdict: str) -> str:
    return verdict if verdict in ("AC", "WA", "TLE") else "ERROR"


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`codefu-eval grade` on the parity answers (LiveCodeBench's saved-generations shape)."""
    root = tmp_path_factory.mktemp("parity")
    code = main(
        [
            "grade",
            "--config-dir",
            str(CONF),
            "--data",
            str(PARITY / "problems.jsonl"),
            "--generations",
            str(PARITY / "generations.json"),
            "--out",
            str(root / "graded"),
            f"eval.root_dir={root}",
        ]
    )
    assert code == 0
    return root / "graded"


def test_grade_gives_livecodebench_s_verdict_but_where_it_is_fooled_or_wrong(graded: Path) -> None:
    lcb = json.loads((PARITY / "lcb_verdicts.json").read_text())
    assert lcb["livecodebench"]["commit"] == LCB_COMMIT
    theirs = {p["question_id"]: p for p in lcb["problems"]}
    kinds = {
        g["question_id"]: g["kinds"] for g in json.loads((PARITY / "generations.json").read_text())
    }
    records = [json.loads(line) for line in (graded / "samples.jsonl").read_text().splitlines()]
    assert len(records) == sum(len(p["code_list"]) for p in theirs.values()) == 62
    seen = set()
    for r in records:
        problem, j = theirs[r["problem"]], r["sample"]
        kind = kinds[r["problem"]][j]
        where = (r["problem"], kind, r["verdict"], problem["metadata"][j])
        assert r["code"] == problem["code_list"][j], where  # its extract_code, to the character
        if kind in DIVERGENCES:
            seen.add(kind)
            ours, _ = DIVERGENCES[kind]
            assert r["verdict"] == ours, where
            assert our_class(ours) != lcb_class(problem, j), where
            continue
        assert our_class(r["verdict"]) == lcb_class(problem, j), where
        # The same tests passed before the first failure (public tests first).
        assert r["passed"] == sum(x is True for x in problem["results"][j]), where
    assert seen == set(DIVERGENCES)

    # LiveCodeBench's per-problem shape beside ours: its graded_list where it is not fooled.
    lcb_shape = {p["question_id"]: p for p in json.loads((graded / LCB_FILE).read_text())}
    assert list(lcb_shape) == sorted(theirs)
    for qid, problem in theirs.items():
        mine = lcb_shape[qid]
        assert mine["code_list"] == problem["code_list"]
        for j, kind in enumerate(kinds[qid]):
            if kind not in DIVERGENCES:
                assert mine["graded_list"][j] == problem["graded_list"][j], (qid, kind)
                code = json.loads(mine["metadata"][j]).get("error_code")
                assert code == problem["metadata"][j].get("error_code"), (qid, kind)


def test_the_summary_is_pass_at_1_per_difficulty_and_platform(graded: Path) -> None:
    summary = json.loads((graded / "summary.json").read_text())
    records = [json.loads(line) for line in (graded / "samples.jsonl").read_text().splitlines()]
    leetcode = [r for r in records if r["platform"] == "leetcode"]
    per_problem: dict[str, list[bool]] = {}
    for r in leetcode:
        per_problem.setdefault(r["problem"], []).append(r["correct"])
    expected = sum(sum(c) / len(c) for c in per_problem.values()) / len(per_problem)
    assert summary["by_platform"]["leetcode"]["pass@k"]["1"] == pytest.approx(expected)
    assert list(summary["by_difficulty"]) == ["easy", "medium", "hard"]
    assert list(summary["pass@k"]) == ["1"]  # pass@5 needs 5 samples of every problem


def test_the_prompts_are_livecodebench_s_for_both_styles() -> None:
    lcb = {
        p["question_id"]: p
        for p in json.loads((PARITY / "lcb_verdicts.json").read_text())["problems"]
    }
    for line in (PARITY / "problems.jsonl").read_text().splitlines():
        row = json.loads(line)
        prompts = lcb[row["question_id"]]["prompts"]
        generic = livecodebench_messages(GENERIC, row["question_content"], row["starter_code"])
        assert [{"role": m["role"], "content": m["content"]} for m in generic] == prompts["generic"]
        (text,) = livecodebench_messages(DEEPSEEK_R1, row["question_content"], row["starter_code"])
        assert text["content"] == prompts["deepseek_r1"]
