"""Small files in published source schemas: LiveCodeBench (`code_generation_lite` rows: stdin
and functional problems of each difficulty and platform, one of them dated outside the window
the tests use, and Python answers to them, right and wrong), and TACO rows of call-based
problems with their accepted Python programs (LiveCodeBench ships none)."""

from __future__ import annotations

import base64
import json
import pickle
import zlib
from pathlib import Path
from typing import Any

# The window the tests evaluate: every problem below but the last is dated inside it.
WINDOW = ("2024-08-01", "2025-01-31")


def packed(text: str) -> str:
    """base64(zlib(pickle(text))), as LiveCodeBench ships its private tests."""
    return base64.b64encode(zlib.compress(pickle.dumps(text))).decode()


def row(
    question_id: str,
    content: str,
    *,
    platform: str,
    difficulty: str,
    date: str,
    public: list[tuple[str, str]],
    private: list[tuple[str, str]],
    func_name: str | None = None,
    starter_code: str = "",
    pickled: bool = False,
    title: str | None = None,
) -> dict[str, Any]:
    """One row; a functional problem's input holds one JSON value per line."""
    kind = "functional" if func_name else "stdin"

    def cases(tests: list[tuple[str, str]]) -> str:
        return json.dumps([{"input": i, "output": o, "testtype": kind} for i, o in tests])

    return {
        "question_title": title or f"Problem {question_id}",
        "question_content": content,
        "platform": platform,
        "question_id": question_id,
        "contest_id": question_id.split("_", maxsplit=1)[0],
        "contest_date": date,
        "starter_code": starter_code,
        "difficulty": difficulty,
        "public_test_cases": cases(public),
        "private_test_cases": packed(cases(private)) if pickled else cases(private),
        "metadata": json.dumps({"func_name": func_name} if func_name else {}),
    }


ROWS = [
    row(
        "abc001_a",
        "Read two integers A and B and print A + B.",
        platform="atcoder",
        difficulty="easy",
        date="2024-08-10T12:00:00",
        public=[("1 2\n", "3\n")],
        private=[("10 -4\n", "6\n"), ("0 0\n", "0\n")],
        pickled=True,
    ),
    row(
        "3301",
        "Given an integer array nums and an integer k, return the sum of nums plus k.",
        platform="leetcode",
        difficulty="medium",
        date="2024-09-01T00:00:00",
        public=[("[1, 2, 3]\n4", "10")],
        private=[("[]\n-1", "-1"), ("[5]\n0", "5")],
        func_name="addAll",
        starter_code=(
            "class Solution:\n    def addAll(self, nums: List[int], k: int) -> int:\n        "
        ),
    ),
    row(
        "2001_B",
        "Read an integer n and print the numbers 1 to n on one line, separated by spaces.",
        platform="codeforces",
        difficulty="hard",
        date="2025-01-20T14:35:00",
        public=[("3\n", "1 2 3\n")],
        private=[("1\n", "1\n"), ("5\n", "1 2 3 4 5\n")],
    ),
    row(
        "abc300_b",
        "Read an integer n and print n squared.",
        platform="atcoder",
        difficulty="easy",
        date="2023-04-29T12:00:00",  # before the window
        public=[("3\n", "9\n")],
        private=[("-2\n", "4\n")],
    ),
]

# Answers as a model writes them (a fenced Python block), right and wrong per problem.
RIGHT = {
    "abc001_a": "a, b = map(int, input().split())\nprint(a + b)",
    "3301": (
        "class Solution:\n    def addAll(self, nums: List[int], k: int) -> int:\n"
        "        return sum(nums) + k"
    ),
    "2001_B": "n = int(input())\nprint(*range(1, n + 1))",
}
WRONG = {
    "abc001_a": "a, b = map(int, input().split())\nprint(a - b)",
    "3301": "class Solution:\n    def addAll(self, nums, k):\n        return sum(nums)",
    "2001_B": "n = int(input())\nprint(n)",
}


# A functional answer whose result says it equals anything (LiveCodeBench compares objects).
LIAR = (
    "class Liar:\n    def __eq__(self, other):\n        return True\n\n"
    "class Solution:\n    def addAll(self, nums, k):\n        return Liar()"
)


def answer(program: str) -> str:
    return f"Here is my solution.\n```python\n{program}\n```"


def write(path: Path, rows: list[dict[str, Any]] = ROWS) -> Path:
    """The rows as a JSONL file, as the hub serves `code_generation_lite`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def taco_row(
    name: str,
    question: str,
    fn_name: str,
    solution: str,
    tests: list[tuple[list[Any], Any]],
) -> dict[str, Any]:
    """A call-based TACO row: `input_output` with `fn_name`, each input the argument list."""
    return {
        "question": question,
        "solutions": json.dumps([solution]),
        "starter_code": f"def {fn_name}(",
        "input_output": json.dumps(
            {"inputs": [a for a, _ in tests], "outputs": [o for _, o in tests], "fn_name": fn_name}
        ),
        "difficulty": "EASY",
        "raw_tags": "[]",
        "name": name,
        "source": "codewars",
        "tags": "[]",
        "skill_types": "[]",
        "url": f"https://www.codewars.com/kata/{name}",
        "Expected Auxiliary Space": None,
        "time_limit": None,
        "date": None,
        "picture_num": "0",
        "memory_limit": None,
        "Expected Time Complexity": None,
    }


TACO_ROWS = [
    taco_row(
        "largest",
        "Write a function that returns the largest number of the list xs.",
        "largest",
        "def largest(xs):\n    return max(xs)\n",
        [([[1, 5, 2]], 5), ([[-3]], -3), ([[7, 7]], 7)],
    ),
    taco_row(
        "vowels",
        "Count the vowels (a, e, i, o, u) in the lower-case word s and return the count.",
        "count_vowels",
        "def count_vowels(s):\n    return sum(c in 'aeiou' for c in s)\n",
        [(["hello"], 2), (["xyz"], 0), (["aeiou"], 5)],
    ),
]
