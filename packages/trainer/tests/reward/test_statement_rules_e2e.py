"""Judging rules end to end on problems made here: raw CodeContests rows → `codefu-data
prepare` → `codefu-reward score`, and the same from a veRL-format parquet of those rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from codefu_data.config import DataConfig
from codefu_data.prepare import prepare
from codefu_trainer.reward.cli import main as reward_main

pytestmark = pytest.mark.slow

CASE_STATEMENT = (
    "Given an integer n, tell whether it is even.\n\nInput\n\nOne integer n (1 ≤ n ≤ 100).\n\n"
    'Output\n\nPrint "YES" if n is even, and "NO" otherwise.\n\n'
    "You can print each letter in any case (upper or lower)."
)
FLOAT_STATEMENT = (
    "Given an integer n, print n divided by 3.\n\nInput\n\nOne integer n (1 ≤ n ≤ 100).\n\n"
    "Output\n\nPrint one real number. Your answer is considered correct if its absolute or "
    "relative error does not exceed 10^{-4}."
)
PLAIN_STATEMENT = (
    "Given an integer n, tell whether it is even.\n\nInput\n\nOne integer n (1 ≤ n ≤ 100).\n\n"
    'Output\n\nPrint "YES" if n is even, and "NO" otherwise.'
)
NS = ["2\n", "7\n", "10\n", "33\n", "64\n"]


def _row(name: str, statement: str, outputs: list[str]) -> dict[str, Any]:
    return {
        "name": name,
        "description": statement,
        "public_tests": {"input": NS[:1], "output": outputs[:1]},
        "private_tests": {"input": NS, "output": outputs},
        "source": 2,
        "cf_rating": 800,
        "time_limit": {"seconds": 1, "nanos": 0},
        "memory_limit_bytes": 256 << 20,
    }


RAW = [
    _row("1_A. Even", CASE_STATEMENT, [("YES" if int(n) % 2 == 0 else "NO") + "\n" for n in NS]),
    _row("2_A. Third", FLOAT_STATEMENT, [f"{int(n) / 3:.6f}\n" for n in NS]),
    _row(
        "3_A. Even exactly",
        PLAIN_STATEMENT,
        [("YES" if int(n) % 2 == 0 else "NO") + "\n" for n in NS],
    ),
]

LOWER = 'int main(){int n;std::cin>>n;std::cout<<(n%2?"no":"yes");}'
FLOAT_CLOSE = 'int main(){int n;std::cin>>n;printf("%.9f", n/3.0*(1+3e-5));}'
FLOAT_FAR = 'int main(){int n;std::cin>>n;printf("%.9f", n/3.0*(1+3e-3));}'
WRONG_WORDS = 'int main(){int n;std::cin>>n;std::cout<<(n%3?"no":"yes");}'
RESPONSES = [
    ("1_A. Even", LOWER, 1.0),  # another letter case: the statement allows it
    ("1_A. Even", WRONG_WORDS, 0.2),  # right words, wrong logic (1 of 5 tests)
    ("2_A. Third", FLOAT_CLOSE, 1.0),  # within the statement's 1e-4, not within 1e-6
    ("2_A. Third", FLOAT_FAR, 0.0),  # 30x the statement's tolerance
    ("3_A. Even exactly", LOWER, 0.0),  # no rule in the statement: exact case
]


def _response(body: str) -> str:
    return f"<code>\n```cpp\n#include <bits/stdc++.h>\n{body}\n```\n</code>"


def _score(data: Path, tmp: Path) -> list[dict[str, Any]]:
    responses = tmp / "responses.jsonl"
    responses.write_text(
        "".join(json.dumps({"name": n, "response": _response(b)}) + "\n" for n, b, _ in RESPONSES)
    )
    out = tmp / "scores.jsonl"
    assert reward_main(["score", "--data", str(data), "--responses", str(responses),
                        "--out", str(out), "--workers", "2"]) == 0  # fmt: skip
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_raw_rows_to_rewards_through_the_statement_rules(tmp_path: Path) -> None:
    raw = tmp_path / "raw" / "train.jsonl"
    raw.parent.mkdir()
    raw.write_text("".join(json.dumps(r) + "\n" for r in RAW))
    cfg = DataConfig(source=str(raw), out_dir=str(tmp_path / "out"), split_map={"train": "train"})
    cfg.heldout_split = "train"
    result = prepare(cfg, progress=False, log=lambda _: None)
    rules = result.manifest["judging_rules"]
    assert rules["any_case"] == {"found": 1, "kept": 1}
    assert rules["tolerance"] == {"found": 1, "kept": 1}
    scores = _score(tmp_path / "out" / "easy" / "train.parquet", tmp_path)
    assert [s["score"] for s in scores] == [want for _, _, want in RESPONSES]

    # The same problems as a veRL-format parquet (the reference's shape: no rules, the
    # statement inside the prompt) prepared again: the rules come back from the prompts.
    table = pq.read_table(tmp_path / "out" / "easy" / "train.parquet")
    rows = table.to_pylist()
    for row in rows:
        del row["extra_info"]
        del row["reward_model"]["ground_truth"]["judging_rules"]
        prompt = row["prompt"][0]["content"]
        row["prompt"] = [
            {"role": "user", "content": f"<|im_start|>user\n{prompt}\n<|im_start|>assistant"}
        ]
    verl_dir = tmp_path / "verl"
    verl_dir.mkdir()
    pq.write_table(pa.Table.from_pylist(rows), verl_dir / "train.parquet")
    cfg2 = DataConfig(
        source=str(verl_dir), out_dir=str(tmp_path / "out2"), split_map={"train": "train"}
    )
    cfg2.heldout_split = "train"
    again = prepare(cfg2, progress=False, log=lambda _: None)
    assert again.manifest["judging_rules"] == rules
    scores2 = _score(tmp_path / "out2" / "easy" / "train.parquet", tmp_path)
    assert [s["score"] for s in scores2] == [want for _, _, want in RESPONSES]
