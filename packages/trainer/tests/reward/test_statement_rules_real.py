"""Real problems whose statements relax the comparison, end to end.

The shared Easy set (a veRL-format parquet, the CodeFu reference's) → `codefu-data prepare`
(judging rules read from each statement) → `codefu-reward score`. The programs in
`statement_rules/` were written for these problems and checked against their statements:
a correct program printing the answer words in another letter case, a real number
within the statement's tolerance, or its items in another order where only the order is
free, gets reward 1; a close but wrong one gets less.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from codefu_data.config import DataConfig
from codefu_data.prepare import (
    ALL_PRIVATE_TESTS_TRUNCATED,
    SEVERAL_VALID_ANSWERS,
    prepare,
    rule_names,
)
from codefu_sandbox.rules import JudgingRules
from codefu_trainer.reward.cli import main as reward_main
from codefu_trainer.reward.config import RewardConfig
from codefu_trainer.reward.service import RewardService

pytestmark = [pytest.mark.real_data, pytest.mark.slow]

HERE = Path(__file__).resolve().parent / "statement_rules"
CASES: list[dict[str, str]] = json.loads((HERE / "cases.json").read_text())
# Statements that accept several outputs ("print any of them"), read by hand; by default
# `prepare` drops them: comparing with one expected output would punish correct programs.
SEVERAL_ANSWERS = (
    "1400_A. String Similarity",
    "1405_A. Permutation Forgery",
    "1450_A. Avoid Trygub",
    "898_A. Rounding",
    "727_A. Transformation: from A to B",
    "988_A. Diverse Team",
    "244_A. Dividing Orange",
    "1178_A. Prime Minister",
)


def _shared_easy() -> Path:
    root = os.environ.get("CODEFU_REAL_DATA")
    if not root:
        pytest.skip(
            "CODEFU_REAL_DATA is unset: set it to a folder holding "
            "codefu_easy/{train,test}.parquet (real CodeContests problems) to run this"
        )
    path = Path(root) / "codefu_easy"
    if not path.is_dir():
        pytest.skip(f"{path} does not exist")
    return path


def _prepare(out: Path, **changes: Any) -> dict[str, dict[str, Any]]:
    """Prepare the shared Easy set into `out`; its rows by problem name (both splits)."""
    cfg = DataConfig(source=str(_shared_easy()), out_dir=str(out), **changes)
    prepare(cfg, progress=False, log=lambda _: None)
    rows: dict[str, dict[str, Any]] = {}
    for split in ("train", "test"):
        for row in pq.read_table(out / "easy" / f"{split}.parquet").to_pylist():
            rows[row["reward_model"]["ground_truth"]["name"]] = row
    return rows


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict[str, Any]]]:
    out = tmp_path_factory.mktemp("easy") / "processed"
    return out, _prepare(out)


@pytest.fixture(scope="module")
def service() -> Iterator[RewardService]:
    svc = RewardService(RewardConfig(), local=True)
    yield svc
    svc.close()


def _response(program: str) -> str:
    return f"<think>as the statement says</think>\n<code>\n```cpp\n{program}\n```\n</code>"


def test_there_are_enough_cases_per_rule() -> None:
    for rule, least in (("any_case", 8), ("tolerance", 8), ("any_order", 5)):
        problems = {c["problem"] for c in CASES if c["rule"] == rule}
        accepted = {c["problem"] for c in CASES if c["rule"] == rule and c["expect"] == "accept"}
        rejected = {c["problem"] for c in CASES if c["rule"] == rule and c["expect"] == "reject"}
        assert len(problems) >= least and accepted == problems == rejected, rule


def test_each_case_problem_is_kept_with_its_rule(
    prepared: tuple[Path, dict[str, dict[str, Any]]],
) -> None:
    _, rows = prepared
    for case in CASES:
        gt = rows[case["problem"]]["reward_model"]["ground_truth"]
        rules = JudgingRules.from_dict(gt["judging_rules"])
        assert case["rule"] in rule_names(rules), (case["problem"], rules)


def test_several_answer_problems_are_dropped_unless_kept(
    prepared: tuple[Path, dict[str, dict[str, Any]]], tmp_path: Path
) -> None:
    out, rows = prepared
    manifest = json.loads((out / "manifest.json").read_text())
    dropped = manifest["totals"]["dropped"].get(SEVERAL_VALID_ANSWERS, 0)
    found = manifest["judging_rules"]
    # only-the-order-free ones are kept, judged with any_order
    assert dropped == found["several_answers"]["found"] - found["any_order"]["kept"] >= 100
    assert not set(SEVERAL_ANSWERS) & set(rows)
    kept = _prepare(tmp_path / "kept", keep_several_answers=True)
    kept_manifest = json.loads((tmp_path / "kept" / "manifest.json").read_text())
    truncated = ALL_PRIVATE_TESTS_TRUNCATED  # 1461_A, kept, has only cut-off private tests
    assert kept_manifest["totals"]["kept"] + kept_manifest["totals"]["dropped"].get(
        truncated, 0
    ) == manifest["totals"]["kept"] + dropped + manifest["totals"]["dropped"].get(truncated, 0)
    assert SEVERAL_VALID_ANSWERS not in kept_manifest["totals"]["dropped"]
    for name in SEVERAL_ANSWERS:
        rules = JudgingRules.from_dict(kept[name]["reward_model"]["ground_truth"]["judging_rules"])
        assert rules.several_answers, name


def test_programs_score_as_the_statement_allows(
    prepared: tuple[Path, dict[str, dict[str, Any]]], tmp_path: Path
) -> None:
    """`codefu-reward score` on the prepared parquet: the path users run."""
    _, rows = prepared
    names = sorted({c["problem"] for c in CASES})
    data = tmp_path / "cases.parquet"
    pq.write_table(pa.Table.from_pylist([rows[n] for n in names]), data)
    responses = tmp_path / "responses.jsonl"
    with responses.open("w") as f:
        for i, case in enumerate(CASES):
            program = (HERE / case["program"]).read_text()
            line = {"id": str(i), "name": case["problem"], "response": _response(program)}
            f.write(json.dumps(line) + "\n")
    scores = tmp_path / "scores.jsonl"
    assert reward_main(["score", "--data", str(data), "--responses", str(responses),
                        "--out", str(scores)]) == 0  # fmt: skip
    by_id = {s["id"]: s for s in map(json.loads, scores.read_text().splitlines())}
    wrong = []
    for i, case in enumerate(CASES):
        got = by_id[str(i)]
        ok = got["score"] == 1.0 and got["verdict"] == "AC"
        if ok != (case["expect"] == "accept") or got["judge_failure"]:
            wrong.append((case["program"], case["expect"], got["verdict"], got["score"]))
    assert not wrong


def test_without_rules_the_relaxed_answers_score_as_before(
    prepared: tuple[Path, dict[str, dict[str, Any]]], service: RewardService
) -> None:
    """A ground truth without rules (the reference's) judges exactly as before: another
    letter case, or a float outside the default 1e-6, is a wrong answer there."""
    _, rows = prepared
    picked = []
    for case in CASES:
        gt = dict(rows[case["problem"]]["reward_model"]["ground_truth"])
        rules = JudgingRules.from_dict(gt.pop("judging_rules"))
        loose = rules.float_tolerance is not None and rules.float_tolerance > 1e-6
        if case["expect"] == "accept" and (case["rule"] == "any_case" or loose):
            picked.append((case, gt))
    assert len(picked) >= 10
    results = service.score(
        [_response((HERE / c["program"]).read_text()) for c, _ in picked], [g for _, g in picked]
    )
    assert [r["verdict"] for r in results] == ["WA"] * len(picked)
