"""Writes this folder's problems.jsonl and generations.json: problems in LiveCodeBench's
`code_generation_lite` row schema (stdin and functional; public tests, then private ones, some
pickled as its hub files pack them) and answers to them as a chat model writes them (raw
outputs, code in fences), for the parity test against LiveCodeBench's own grader.

The answers are right and wrong ones of the kinds a model writes, the extraction cases,
failures on an example test, blank lines in the output, nested tuples, big integers,
`exit()`, and the programs LiveCodeBench's in-process harness judges wrongly or is fooled
by. `ANSWERS` names each answer's kind; the test (test_lcb_parity.py) lists the kinds where
our verdict differs from LiveCodeBench's, and why.

    python packages/trainer/tests/evaluation/lcb_parity/make_answers.py

run_livecodebench.py then grades them with LiveCodeBench's code into lcb_verdicts.json.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # the trainer's tests/, for source_rows
from source_rows import row  # noqa: E402

FENCE = "```"


DATE = "2025-01-18T00:00:00"


def problem(qid: str, title: str, content: str, **fields: Any) -> dict[str, Any]:
    """A `code_generation_lite` row (source_rows.row), dated in January 2025."""
    return row(qid, content, title=title, date=DATE, **fields)


sys.set_int_max_str_digits(0)  # the tests hold integers of up to 47,713 digits
rng = random.Random(55)
BIG = str(rng.randrange(10**9999, 10**10000))

PROBLEMS = [
    problem(
        "abc900_a",
        "Sum",
        "You are given N integers A_1, ..., A_N. Print their sum.\n\nInput\n\nN\nA_1 ... A_N\n\n"
        "Output\n\nPrint the sum.\n\nSample Input 1\n\n3\n1 2 3\n\nSample Output 1\n\n6",
        platform="atcoder",
        difficulty="easy",
        public=[("3\n1 2 3\n", "6\n"), ("1\n-5\n", "-5\n")],
        private=[("4\n10 20 30 40\n", "100\n"), ("2\n0 0\n", "0\n")],
        pickled=True,
    ),
    problem(
        "1900_B",
        "Pairs",
        "The first line holds t. Each of the next t lines holds two integers a and b. For each "
        "line print a + b on a line of its own.",
        platform="codeforces",
        difficulty="medium",
        public=[("2\n1 2\n3 4\n", "3\n7\n"), ("1\n5 5\n", "10\n")],
        private=[("3\n0 0\n-1 1\n100 200\n", "0\n0\n300\n"), ("2\n7 8\n9 10\n", "15\n19\n")],
    ),
    problem(
        "abc900_c",
        "Power of Three",
        "Given N (1 <= N <= 100000), print 3^N.",
        platform="atcoder",
        difficulty="hard",
        public=[("2\n", "9\n"), ("5\n", "243\n")],
        private=[("10000\n", f"{3**10000}\n"), ("100000\n", f"{3**100000}\n")],
        pickled=True,
    ),
    problem(
        "abc900_b",
        "Huge Remainder",
        "Given an integer X with up to 10000 digits, print X modulo 1000000007.",
        platform="atcoder",
        difficulty="medium",
        public=[("12345\n", "12345\n"), ("1000000007\n", "0\n")],
        private=[(f"{BIG}\n", f"{int(BIG) % 1000000007}\n")],
    ),
    problem(
        "1900_A",
        "Division",
        "Given integers a and b, print a / b. Answers within 1e-6 are accepted.",
        platform="codeforces",
        difficulty="easy",
        public=[("1 2\n", "0.500000\n"), ("3 4\n", "0.750000\n")],
        private=[("10 4\n", "2.500000\n")],
    ),
    problem(
        "1900_C",
        "Length",
        "Given a string S of lowercase letters, print its length.",
        platform="codeforces",
        difficulty="hard",
        public=[("abc\n", "3\n"), ("hello\n", "5\n")],
        private=[("x\n", "1\n")],
    ),
    problem(
        "3900",
        "two-sum",
        "Given an array of integers nums and an integer target, return indices of the two "
        "numbers such that they add up to target.",
        platform="leetcode",
        difficulty="easy",
        public=[("[2, 7, 11, 15]\n9", "[0, 1]"), ("[3, 2, 4]\n6", "[1, 2]")],
        private=[("[3, 3]\n6", "[0, 1]"), ("[1, 5, 9, 14]\n23", "[2, 3]")],
        func_name="twoSum",
        starter_code=(
            "class Solution:\n"
            "    def twoSum(self, nums: List[int], target: int) -> List[int]:\n        "
        ),
    ),
    problem(
        "3901",
        "pair-up",
        "Given an array nums of even length, return the list of pairs [nums[0], nums[1]], "
        "[nums[2], nums[3]], and so on.",
        platform="leetcode",
        difficulty="medium",
        public=[("[1, 2, 3, 4]", "[[1, 2], [3, 4]]"), ("[5, 6]", "[[5, 6]]")],
        private=[("[9, 8, 7, 6]", "[[9, 8], [7, 6]]")],
        func_name="pairUp",
        starter_code=(
            "class Solution:\n    def pairUp(self, nums: List[int]) -> List[List[int]]:\n        "
        ),
        pickled=True,
    ),
    problem(
        "3902",
        "big-power",
        "Given n, return 7 to the power n.",
        platform="leetcode",
        difficulty="hard",
        public=[("1", "7"), ("2", "49")],
        private=[("20000", str(7**20000))],
        func_name="bigPower",
        starter_code="class Solution:\n    def bigPower(self, n: int) -> int:\n        ",
    ),
]


def fenced(code: str, tag: str = "python", before: str = "Here is my solution.") -> str:
    """A chat model's answer: a sentence, the code in a fence, a closing sentence."""
    return (
        f"{before}\n\n{FENCE}{tag}\n{code}\n{FENCE}\n\nThis reads the input and prints the answer."
    )


SUM = "n = int(input())\na = list(map(int, input().split()))\nprint(sum(a))"
PAIRS = (
    "t = int(input())\nfor _ in range(t):\n    a, b = map(int, input().split())\n    print(a + b)"
)
TWO_SUM = (
    "class Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n"
    "        seen = {}\n        for i, x in enumerate(nums):\n"
    "            if target - x in seen:\n                return [seen[target - x], i]\n"
    "            seen[x] = i\n"
)

# question_id -> [(kind, raw output)], in the order of its output_list.
ANSWERS: dict[str, list[tuple[str, str]]] = {
    "abc900_a": [
        ("right", fenced(SUM)),
        ("wrong", fenced("n = int(input())\nprint(n)")),
        (
            "raises on the second example",
            fenced(
                "n = int(input())\na = list(map(int, input().split()))\n"
                "if n == 1:\n    raise ValueError('one number')\nprint(sum(a))"
            ),
        ),
        (
            "os.read(0)",
            fenced(
                "import os\ndata = os.read(0, 1 << 20).split()\nn = int(data[0])\n"
                "print(sum(map(int, data[1:n + 1])))"
            ),
        ),
        (
            "module-level global",
            fenced(
                "total = 0\n\ndef add(x):\n    global total\n    total += x\n\n"
                "n = int(input())\nfor v in map(int, input().split()):\n    add(v)\nprint(total)"
            ),
        ),
        (
            "sys.stdout.buffer",
            fenced(
                "import sys\nn = int(input())\ns = sum(map(int, input().split()))\n"
                "sys.stdout.buffer.write(f'{s}\\n'.encode())"
            ),
        ),
        ("quit()", fenced(SUM.replace("print(sum(a))", "print(sum(a))\nquit()"))),
        ("exit()", fenced(SUM.replace("print(sum(a))", "print(sum(a))\nexit()"))),
        ("sys.exit(0)", fenced("import sys\n" + SUM + "\nsys.exit(0)")),
        ("open(0)", fenced("data = open(0).read().split()\nprint(sum(map(int, data[1:])))")),
        ("no code block", "Add the numbers up and print the sum; that is all there is to it."),
        (
            "the code, then an example in a block of its own",
            fenced(SUM) + f"\n\nFor example, with this input:\n\n{FENCE}\n3\n1 2 3\n{FENCE}\n",
        ),
        (
            "a blank line before the answer",
            fenced("n = int(input())\na = list(map(int, input().split()))\nprint()\nprint(sum(a))"),
        ),
        (
            "if __name__ == '__main__'",
            fenced(
                "def main():\n    n = int(input())\n    print(sum(map(int, input().split())))\n\n"
                "if __name__ == '__main__':\n    main()"
            ),
        ),
        (
            "numpy",
            fenced(
                "import numpy as np\nn = int(input())\n"
                "a = np.array(list(map(int, input().split())))\nprint(int(a.sum()))"
            ),
        ),
        (
            "patching its comparison",
            fenced(
                "import sys\nm = sys.modules.get('lcb_runner.evaluation.testing_util')\n"
                "if m is not None:\n    m.get_stripped_lines = lambda value: ['0']\nprint(0)"
            ),
        ),
        (
            "a thread with a deep stack",
            fenced(
                "import sys, threading\n\ndef main():\n    n = int(input())\n"
                "    print(sum(map(int, input().split())))\n\n"
                "threading.stack_size(1 << 26)\nt = threading.Thread(target=main)\nt.start()\n"
                "t.join()"
            ),
        ),
    ],
    "1900_B": [
        ("right", fenced(PAIRS)),
        (
            "a blank line between answers",
            fenced(PAIRS.replace("print(a + b)", "print(a + b)\n    print()")),
        ),
        (
            "trailing spaces and blank lines",
            fenced(PAIRS.replace("print(a + b)", "print(a + b, '  ')") + "\nprint()\nprint()"),
        ),
        (
            "sys.stdin.buffer.readline",
            fenced("import sys\ninput = sys.stdin.buffer.readline\n" + PAIRS),
        ),
        (
            "iterating over sys.stdin",
            fenced(
                "import sys\nlines = iter(sys.stdin)\nt = int(next(lines))\nfor _ in range(t):\n"
                "    a, b = map(int, next(lines).split())\n    print(a + b)"
            ),
        ),
        (
            "sys.stdin.readlines",
            fenced(
                "import sys\nlines = sys.stdin.readlines()\nfor line in lines[1:]:\n"
                "    a, b = map(int, line.split())\n    print(a + b)"
            ),
        ),
        (
            "sys.stdin.readline to the end",
            fenced(
                "import sys\nsys.stdin.readline()\nwhile True:\n    line = sys.stdin.readline()\n"
                "    if not line:\n        break\n    a, b = map(int, line.split())\n"
                "    print(a + b)"
            ),
        ),
        ("wrong", fenced(PAIRS.replace("a + b", "a - b"))),
        (
            "sys.stdin.read",
            fenced(
                "import sys\ndata = sys.stdin.read().split()\nt = int(data[0])\n"
                "for i in range(t):\n    print(int(data[1 + 2 * i]) + int(data[2 + 2 * i]))"
            ),
        ),
        (
            "a wrong tagged draft, then the untagged final answer",
            "First attempt:\n\n"
            + f"{FENCE}python\n{PAIRS.replace('a + b', 'a * b')}\n{FENCE}\n\n"
            + "That multiplies. Fixed:\n\n"
            + f"{FENCE}\n{PAIRS}\n{FENCE}\n",
        ),
        (
            "the code only inside <think>",
            f"<think>\nI will loop over the pairs.\n\n{FENCE}python\n{PAIRS}\n{FENCE}\n</think>\n\n"
            "The program above prints each sum.",
        ),
        ("the last line missing", fenced(PAIRS.replace("range(t)", "range(t - 1)"))),
    ],
    "abc900_c": [
        ("big integer output", fenced("print(3 ** int(input()))")),
        (
            "big integer output, digit limit lifted",
            fenced("import sys\nsys.set_int_max_str_digits(0)\nprint(3 ** int(input()))"),
        ),
        ("wrong", fenced("print(3 ** int(input()) - 1)")),
    ],
    "abc900_b": [
        ("big integer input", fenced("print(int(input()) % 1000000007)")),
        (
            "big integer input, digit by digit",
            fenced(
                "r = 0\nfor c in input().strip():\n    r = (r * 10 + int(c)) % 1000000007\nprint(r)"
            ),
        ),
    ],
    "1900_A": [
        ("a shorter decimal", fenced("a, b = map(int, input().split())\nprint(a / b)")),
        ("right", fenced("a, b = map(int, input().split())\nprint(f'{a / b:.6f}')")),
        ("wrong", fenced("a, b = map(int, input().split())\nprint(a // b)")),
    ],
    "1900_C": [
        ("right", fenced("print(len(input()))")),
        (
            "sys.stdin.readline keeps its newline",
            fenced("import sys\ninput = sys.stdin.readline\nprint(len(input()))"),
        ),
        ("right, stripped", fenced("print(len(input().strip()))")),
        (
            "sys.stdin.readline stripped",
            fenced("import sys\nprint(len(sys.stdin.readline().strip()))"),
        ),
    ],
    "3900": [
        ("right", fenced(TWO_SUM)),
        ("an untagged block", fenced(TWO_SUM, tag="")),
        (
            "a returned tuple",
            fenced(TWO_SUM.replace("[seen[target - x], i]", "seen[target - x], i")),
        ),
        (
            "an object that says it equals anything",
            fenced(
                "class Anything:\n    def __eq__(self, other):\n        return True\n\n"
                "class Solution:\n    def twoSum(self, nums, target):\n        return Anything()"
            ),
        ),
        (
            "reading the grader's frame",
            fenced(
                "import sys\n\nclass Solution:\n    def twoSum(self, nums, target):\n"
                "        frame = sys._getframe(1)\n        while frame is not None:\n"
                "            if 'gt_out' in frame.f_locals:\n"
                "                return frame.f_locals['gt_out']\n"
                "            frame = frame.f_back\n        return []"
            ),
        ),
        (
            "a module-level function",
            fenced(
                "def twoSum(nums, target):\n    for i in range(len(nums)):\n"
                "        for j in range(i + 1, len(nums)):\n"
                "            if nums[i] + nums[j] == target:\n                return [i, j]"
            ),
        ),
        (
            "class Solution named in a comment only",
            fenced(
                "# No class Solution needed: a plain function.\ndef twoSum(nums, target):\n"
                "    seen = {}\n    for i, x in enumerate(nums):\n"
                "        if target - x in seen:\n            return [seen[target - x], i]\n"
                "        seen[x] = i"
            ),
        ),
        ("from __future__ import", fenced("from __future__ import annotations\n\n" + TWO_SUM)),
        ("no such function", fenced(TWO_SUM.replace("def twoSum", "def two_sum"))),
        ("a syntax error", fenced(TWO_SUM.replace("enumerate(nums):", "enumerate(nums)"))),
        ("raises while loading", fenced("import no_such_module\n\n" + TWO_SUM)),
        ("wrong", fenced(TWO_SUM.replace("[seen[target - x], i]", "[i, seen[target - x]]"))),
        (
            "prints while returning",
            fenced(
                TWO_SUM.replace(
                    "            seen[x] = i\n", "            seen[x] = i\n            print(x)\n"
                )
            ),
        ),
        (
            "raises on the second example",
            fenced(
                TWO_SUM.replace(
                    "        seen = {}\n",
                    "        seen = {}\n"
                    "        if target == 6:\n            raise ValueError(target)\n",
                )
            ),
        ),
        (
            "a block indented in a list",
            "1. The solution:\n\n"
            + "\n".join("   " + line for line in f"{FENCE}python\n{TWO_SUM}{FENCE}".split("\n"))
            + "\n",
        ),
    ],
    "3901": [
        (
            "right",
            fenced(
                "class Solution:\n    def pairUp(self, nums):\n"
                "        return [[nums[i], nums[i + 1]] for i in range(0, len(nums), 2)]"
            ),
        ),
        (
            "a list of tuples",
            fenced(
                "class Solution:\n    def pairUp(self, nums):\n"
                "        return [(nums[i], nums[i + 1]) for i in range(0, len(nums), 2)]"
            ),
        ),
        (
            "a tuple of lists",
            fenced(
                "class Solution:\n    def pairUp(self, nums):\n"
                "        return tuple([nums[i], nums[i + 1]] for i in range(0, len(nums), 2))"
            ),
        ),
    ],
    "3902": [
        (
            "a big integer",
            fenced("class Solution:\n    def bigPower(self, n):\n        return 7 ** n"),
        ),
        (
            "a string",
            fenced("class Solution:\n    def bigPower(self, n):\n        return str(7 ** n)"),
        ),
        (
            "a float that overflows",
            fenced("class Solution:\n    def bigPower(self, n):\n        return float(7 ** n)"),
        ),
    ],
}


def main() -> None:
    ids = [p["question_id"] for p in PROBLEMS]
    assert sorted(ids) == sorted(ANSWERS), "every problem has answers"
    (HERE / "problems.jsonl").write_text("".join(json.dumps(p) + "\n" for p in PROBLEMS))
    generations = [
        {
            "question_id": qid,
            "kinds": [kind for kind, _ in ANSWERS[qid]],
            "output_list": [output for _, output in ANSWERS[qid]],
        }
        for qid in ids
    ]
    (HERE / "generations.json").write_text(json.dumps(generations, indent=1) + "\n")
    print(f"{len(PROBLEMS)} problems, {sum(len(a) for a in ANSWERS.values())} answers")


if __name__ == "__main__":
    main()
