"""LiveCodeBench problems end to end: rows in its published schema prepared by
`codefu-data prepare`, answers scored by `codefu-reward score` (the real CLIs): call-based
and stdin answers get their verdicts, hostile ones are contained and not accepted; and the
reward's deadline covers what the judge allows a call-based answer."""

from __future__ import annotations

import base64
import json
import pickle
import uuid
import zlib
from pathlib import Path
from typing import Any

import pytest

from codefu_data.cli import main as data_main
from codefu_trainer.reward.cli import main as reward_main
from codefu_trainer.reward.config import DeadlineConfig, RewardConfig
from codefu_trainer.reward.service import deadline_seconds

REPO = Path(__file__).resolve().parents[4]


def functional(question_id: str, func: str, cases: list[tuple[list[Any], Any]]) -> dict[str, Any]:
    """A LiveCodeBench functional row: one JSON value per input line, private tests pickled."""
    tests = [
        {
            "input": "\n".join(json.dumps(a) for a in args),
            "output": json.dumps(out),
            "testtype": "functional",
        }
        for args, out in cases
    ]
    private = base64.b64encode(zlib.compress(pickle.dumps(json.dumps(tests[1:])))).decode()
    return {
        "question_title": func,
        "question_content": f"Return the sum of the numbers in nums plus k ({func}).",
        "platform": "leetcode",
        "question_id": question_id,
        "contest_id": "weekly-1",
        "contest_date": "2024-09-01T00:00:00",
        "starter_code": f"class Solution:\n    def {func}(self, nums: List[int], k: int) -> int:\n",
        "difficulty": "easy",
        "public_test_cases": json.dumps(tests[:1]),
        "private_test_cases": private,
        "metadata": json.dumps({"func_name": func}),
    }


def stdin(question_id: str, cases: list[tuple[str, str]]) -> dict[str, Any]:
    tests = [{"input": i, "output": o, "testtype": "stdin"} for i, o in cases]
    return {
        "question_title": "half",
        "question_content": "Read a and b; print the greatest common divisor, then a / b.",
        "platform": "atcoder",
        "question_id": question_id,
        "contest_id": "abc1",
        "contest_date": "2024-09-02T00:00:00",
        "starter_code": "",
        "difficulty": "easy",
        "public_test_cases": json.dumps(tests[:1]),
        "private_test_cases": json.dumps(tests[1:]),
        "metadata": "{}",
    }


CALL = "2847"
PLAIN = "abc1_a"
ADD_CASES = [([[1, 2, 3], 4], 10), ([[], -1], -1), ([[5], 0], 5), ([list(range(100)), 1], 4951)]
GCD_CASES = [("4 6\n", "2\n0.6666666667\n"), ("9 3\n", "3\n3\n"), ("5 2\n", "1\n2.5\n")]

LIAR = "class Liar:\n    def __eq__(self, other):\n        return True\n"
SOLUTION = "class Solution:\n    def addAll(self, nums: List[int], k: int) -> int:\n"
FORGE = (
    "import os, sys\n" + SOLUTION + "        frame = sys._getframe()\n"
    "        while 'job' not in frame.f_locals or 'watch' not in frame.f_locals:\n"
    "            frame = frame.f_back\n"
    "        job, watch = frame.f_locals['job'], frame.f_locals['watch']\n"
    "        for index in range(job['tests']):\n"
    "            line = f\"{job['nonce']} test {index} 0 0 0 value 0\\n\"\n"
    "            os.write(watch.records, line.encode())\n"
    "        os._exit(0)\n"
)
PEEK = (
    "import gc, os\n"
    + SOLUTION
    + "        seen = [o for o in gc.get_objects() if isinstance(o, dict)]\n"
    "        for name in os.listdir('.'):\n"
    "            open(name, 'rb').read()\n"
    "        return -len(seen)\n"
)


def answers(outside: Path) -> dict[str, tuple[str, str, str]]:
    """id → (problem, program, the verdict it must get)."""
    body = "        return sum(nums) + k\n"
    return {
        "call-ac": (CALL, SOLUTION + body, "AC"),
        "call-ac-function": (CALL, "def addAll(nums, k):\n    return sum(nums) + k\n", "AC"),
        "call-wa": (CALL, SOLUTION + "        return sum(nums)\n", "WA"),
        "call-re": (CALL, SOLUTION + "        return nums[0] + k\n", "RE"),
        "call-tle": (CALL, SOLUTION + "        while nums or True:\n            pass\n", "TLE"),
        "call-ce-missing": (CALL, "def add_all(nums, k):\n    return sum(nums) + k\n", "CE"),
        "call-ce-syntax": (CALL, SOLUTION + "        return sum(nums +\n", "CE"),
        "stdin-ac": (
            PLAIN,
            "a, b = map(int, input().split())\nprint(f'{gcd(a, b)}\\n{a / b:.10f}')\n",
            "AC",
        ),
        "stdin-wa": (PLAIN, "a, b = map(int, input().split())\nprint(gcd(a, b))\n", "WA"),
        "hostile-write": (
            CALL,
            SOLUTION + f"        open({str(outside)!r}, 'w').write('x')\n" + body,
            "RE",
        ),
        "hostile-fork": (CALL, "import os\n" + SOLUTION + "        os.fork()\n" + body, "SV"),
        "hostile-socket": (
            CALL,
            "import socket\n"
            + SOLUTION
            + "        socket.create_connection(('127.0.0.1', 9))\n"
            + body,
            "SV",
        ),
        "hostile-liar": (CALL, LIAR + SOLUTION + "        return Liar()\n", "WA"),
        "hostile-memory": (
            CALL,
            SOLUTION + "        hoard = []\n        while True:\n"
            "            hoard.append(bytearray(1 << 20))\n",
            "MLE",
        ),
        "hostile-forge": (CALL, FORGE, "WA"),
        "hostile-peek": (CALL, PEEK, "WA"),
    }


@pytest.mark.slow
def test_livecodebench_answers_are_judged_and_hostile_ones_contained(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [functional(CALL, "addAll", ADD_CASES), stdin(PLAIN, GCD_CASES)]
    source = tmp_path / "lcb" / "test.jsonl"
    source.parent.mkdir()
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "prepared"
    prepare = ["prepare", "--no-progress", "--source", str(source), "--out", str(out)]
    # The default 6 s (LiveCodeBench's) would make the TLE answer cost 7 s of CPU.
    assert data_main([*prepare, "language=python", "default_time_limit_seconds=1"]) == 0
    data = out / "easy" / "test.parquet"

    outside = Path("/tmp") / f"codefu-call-escape-{uuid.uuid4().hex}"
    cases = answers(outside)
    responses = tmp_path / "responses.jsonl"
    responses.write_text(
        "".join(
            json.dumps({"id": key, "name": name, "response": f"Here:\n```python\n{code}```\n"})
            + "\n"
            for key, (name, code, _) in cases.items()
        )
        + json.dumps({"id": "no-code", "name": CALL, "response": "I cannot solve it."})
        + "\n"
    )
    scores_path = tmp_path / "scores.jsonl"
    code = reward_main(
        [
            "score",
            "--data",
            str(data),
            "--responses",
            str(responses),
            "--out",
            str(scores_path),
            "--workers",
            "2",
            "--config-dir",
            str(REPO / "conf"),
            "reward.languages=[python]",
            f"worker.cache_dir={tmp_path / 'cache'}",
        ]
    )
    assert code == 0
    scores = {s["id"]: s for s in map(json.loads, scores_path.read_text().splitlines())}
    got = {key: scores[key]["verdict"] for key in cases}
    assert got == {key: verdict for key, (_, _, verdict) in cases.items()}, scores
    assert scores["no-code"]["verdict"] == "NO_CODE"
    for key, score in scores.items():
        assert score["judge_failure"] == 0, key
        if key.startswith("hostile"):
            assert score["score"] <= 0, key
    assert scores["call-ac"]["score"] == 1.0 and scores["call-ac"]["total"] == len(ADD_CASES) - 1
    assert scores["call-ce-missing"]["score"] == -0.5
    assert not outside.exists()
    assert "hostile" not in capsys.readouterr().err


def test_the_deadline_covers_a_call_based_answers_budget() -> None:
    """The call grader may take one more test's time than there are tests (loading the
    module): the deadline counts it, at the language's time factor."""
    cfg = RewardConfig(
        deadline=DeadlineConfig(
            compile_seconds=10,
            wall_factor=3,
            per_test_overhead_seconds=0.5,
            slack_seconds=5,
            max_seconds=1000,
        ),
        time_factors={"cpp": 1.0, "python": 2.0},
    )
    tests = {"input": ["[1]", "[2]", "[3]", "[4]"], "output": ["1", "2", "3", "4"]}
    truth: dict[str, Any] = {
        "name": "call",
        "time_limit": {"seconds": 1, "nanos": 0},
        "memory_limit_bytes": 256 << 20,
        "private_tests": tests,
        "grader": {"name": "call", "params": {"fn_name": "f"}},
    }
    cfg.languages = ["cpp", "python"]
    call = cfg.policy().problem(truth).requests
    stdio = cfg.policy().problem({**truth, "grader": None}).requests
    assert deadline_seconds(stdio["cpp"], cfg.deadline) == pytest.approx(10 + 4 * 3.5 + 5)
    assert deadline_seconds(stdio["python"], cfg.deadline) == pytest.approx(10 + 4 * 6.5 + 5)
    assert deadline_seconds(call["python"], cfg.deadline) == pytest.approx(10 + 5 * 6.5 + 5)
