"""Call-based answers (`nox -s bench -- callbased`): the judge's CPU per answer against an
in-process runner, on the same programs.

The programs: LeetCode-style answers to eight functional problems (LiveCodeBench's form:
`class Solution`, its import prelude) and two TACO-style ones (a module-level function,
APPS' comparison, no prelude), each with 40-60 small tests generated here (seeded; the
expected values from a reference solution in this process). Some answers are right, some
wrong (WA), some raise (RE), some run over the time limit (TLE) on part of the tests.

- **judge**: `Judge.judge(..., language="python", grader=GraderConfig("call", ...))`, as the
  reward calls it (judging stops at the first TLE, `reward.stop_on_timeout`): the byte
  compilation and the harness run in the sandbox (uid, Landlock, seccomp, rlimits, memory
  cgroup), all tests in one process.
- **in-process**: what LiveCodeBench does, without a sandbox: one fresh Python process per
  answer (the same interpreter and flags) that `exec`s the prelude and the program, calls
  the function on every test with a CPU timer of the time limit, compares with `==` (a
  tuple as a list; APPS' list-wrapped expected value too) and stops at the first TLE.

CPU counts every process involved: this process's own (`time.process_time`, its threads)
and its children's (`RUSAGE_CHILDREN`: sandbox-exec, the interpreters). Each answer is
measured `--rounds` times, the two alternating; the per-answer figure is the median. Prints
one row per answer, the totals, and the ratios: over all answers, and over those without a
TLE (a TLE costs the time limit in both, which hides the overhead). Exits non-zero when a
verdict is not the one the answer was written to get.
"""

from __future__ import annotations

import argparse
import datetime
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench_languages import host

from codefu_sandbox import LANGUAGES, GraderConfig, Judge, JudgeReport, Limits, TestCase, Verdict

LIMITS = Limits(1.0, 256 << 20)
TESTS = 50

# The in-process runner: LiveCodeBench's way (exec in one fresh process, call each test,
# `==` on the objects), with a CPU timer per call instead of its wall-clock alarm so that
# a TLE costs both sides the same CPU.
RUNNER = r"""
import json, signal, sys
job = json.loads(sys.stdin.read())
class Timeout(Exception):
    pass
def on_timer(signum, frame):
    raise Timeout
signal.signal(signal.SIGPROF, on_timer)
verdicts = []
scope = {"__name__": "tmp_sol"}
try:
    exec((job["prelude"] or "") + "\n" + job["code"], scope)
    target = scope["Solution"]() if "class Solution" in job["code"] else None
    method = getattr(target, job["fn"]) if target is not None else scope[job["fn"]]
except Exception:
    method = None
    verdicts.append("CE")
for args, expected in job["tests"] if method is not None else ():
    signal.setitimer(signal.ITIMER_PROF, job["seconds"])
    try:
        got = method(*args)
        signal.setitimer(signal.ITIMER_PROF, 0)
        if isinstance(got, tuple):
            got = list(got)
        ok = got == expected or (
            job["apps"] and isinstance(expected, list) and expected and got == expected[0]
        )
        verdicts.append("AC" if ok else "WA")
    except Timeout:
        verdicts.append("TLE")
        break
    except Exception:
        signal.setitimer(signal.ITIMER_PROF, 0)
        verdicts.append("RE")
print(json.dumps(verdicts))
"""


@dataclass(frozen=True)
class Problem:
    name: str
    fn: str
    tests: list[tuple[list[Any], Any]]  # (arguments, expected value)
    answers: dict[str, str]  # "<expected verdict> <what>" → source
    prelude: bool = True  # LiveCodeBench's import prelude
    apps: bool = False  # APPS' comparison

    def grader(self) -> GraderConfig:
        params: dict[str, Any] = {"fn_name": self.fn, "compare": "apps" if self.apps else "exact"}
        if self.prelude:
            params["prelude"] = "livecodebench"
        return GraderConfig("call", params)

    def cases(self) -> list[TestCase]:
        return [TestCase(json.dumps(a), json.dumps(e)) for a, e in self.tests]


def generated(
    rng: random.Random, make: Callable[[random.Random], list[Any]], solve: Callable[..., Any]
) -> list[tuple[list[Any], Any]]:
    tests = []
    for _ in range(TESTS):
        args = make(rng)
        tests.append((args, solve(*args)))
    return tests


def two_sum_args(rng: random.Random) -> list[Any]:
    while True:
        nums = rng.sample(range(-1000, 1000), rng.randint(2, 60))
        i, j = sorted(rng.sample(range(len(nums)), 2))
        target = nums[i] + nums[j]
        pairs = [
            (a, b)
            for a in range(len(nums))
            for b in range(a + 1, len(nums))
            if nums[a] + nums[b] == target
        ]
        if pairs == [(i, j)]:
            return [nums, target]


def two_sum(nums: list[int], target: int) -> list[int]:
    seen: dict[int, int] = {}
    for j, x in enumerate(nums):
        if target - x in seen:
            return [seen[target - x], j]
        seen[x] = j
    return []


def max_subarray(nums: list[int]) -> int:
    best, run = nums[0], 0
    for x in nums:
        run = max(x, run + x)
        best = max(best, run)
    return best


def longest_unique(s: str) -> int:
    last: dict[str, int] = {}
    start = best = 0
    for i, c in enumerate(s):
        if last.get(c, -1) >= start:
            start = last[c] + 1
        last[c] = i
        best = max(best, i - start + 1)
    return best


def valid_brackets(s: str) -> bool:
    pairs = {")": "(", "]": "[", "}": "{"}
    stack: list[str] = []
    for c in s:
        if c in pairs:
            if not stack or stack.pop() != pairs[c]:
                return False
        else:
            stack.append(c)
    return not stack


def brackets_args(rng: random.Random) -> list[Any]:
    if rng.random() < 0.5:  # a valid one
        out: list[str] = []
        stack: list[str] = []
        for _ in range(rng.randint(0, 30)):
            if stack and rng.random() < 0.5:
                out.append({"(": ")", "[": "]", "{": "}"}[stack.pop()])
            else:
                stack.append(rng.choice("([{"))
                out.append(stack[-1])
        out += [{"(": ")", "[": "]", "{": "}"}[c] for c in reversed(stack)]
        return ["".join(out)]
    return ["".join(rng.choice("()[]{}") for _ in range(rng.randint(1, 40)))]


def merge_intervals(intervals: list[list[int]]) -> list[list[int]]:
    merged: list[list[int]] = []
    for a, b in sorted(intervals):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return merged


def intervals_args(rng: random.Random) -> list[Any]:
    out = []
    for _ in range(rng.randint(1, 40)):
        a = rng.randint(0, 200)
        out.append([a, a + rng.randint(0, 15)])
    return [out]


def islands(grid: list[list[str]]) -> int:
    seen, count = set(), 0
    for r0, row in enumerate(grid):
        for c0, cell in enumerate(row):
            if cell == "1" and (r0, c0) not in seen:
                count += 1
                todo = [(r0, c0)]
                seen.add((r0, c0))
                while todo:
                    r, c = todo.pop()
                    for nr, nc in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
                        if (
                            0 <= nr < len(grid)
                            and 0 <= nc < len(row)
                            and grid[nr][nc] == "1"
                            and (nr, nc) not in seen
                        ):
                            seen.add((nr, nc))
                            todo.append((nr, nc))
    return count


def grid_args(rng: random.Random) -> list[Any]:
    rows, cols = rng.randint(1, 15), rng.randint(1, 15)
    return [[[rng.choice("0011") for _ in range(cols)] for _ in range(rows)]]


def stairs(n: int) -> int:
    a, b = 1, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def digit_sum(n: int) -> int:
    return sum(map(int, str(n)))


def problems() -> list[Problem]:
    rng = random.Random(20261128)

    def lcb(fn: str, signature: str, body: str) -> str:
        """A LeetCode-style answer: `class Solution` with method `fn`."""
        return f"class Solution:\n    def {fn}(self, {signature}:\n{body}"

    return [
        Problem(
            "two sum",
            "twoSum",
            generated(rng, two_sum_args, two_sum),
            {
                "AC hash map": lcb(
                    "twoSum",
                    "nums: List[int], target: int) -> List[int]",
                    "        seen = {}\n        for j, x in enumerate(nums):\n"
                    "            if target - x in seen:\n"
                    "                return [seen[target - x], j]\n"
                    "            seen[x] = j\n",
                ),
                "AC two loops": lcb(
                    "twoSum",
                    "nums, target)",
                    "        for i in range(len(nums)):\n"
                    "            for j in range(i + 1, len(nums)):\n"
                    "                if nums[i] + nums[j] == target:\n"
                    "                    return (i, j)\n",
                ),
                "WA 1-based": lcb(
                    "twoSum",
                    "nums, target)",
                    "        seen = {}\n        for j, x in enumerate(nums):\n"
                    "            if target - x in seen:\n"
                    "                return [seen[target - x] + 1, j + 1]\n"
                    "            seen[x] = j\n",
                ),
            },
        ),
        Problem(
            "maximum subarray",
            "maxSubArray",
            generated(
                rng,
                lambda r: [[r.randint(-50, 30) for _ in range(r.randint(1, 200))]],
                max_subarray,
            ),
            {
                "AC Kadane": lcb(
                    "maxSubArray",
                    "nums: List[int]) -> int",
                    "        best, run = -inf, 0\n        for x in nums:\n"
                    "            run = max(x, run + x)\n            best = max(best, run)\n"
                    "        return best\n",
                ),
                "WA starts at 0": lcb(
                    "maxSubArray",
                    "nums)",
                    "        best = run = 0\n        for x in nums:\n"
                    "            run = max(0, run + x)\n            best = max(best, run)\n"
                    "        return best\n",
                ),
            },
        ),
        Problem(
            "longest substring without repeats",
            "lengthOfLongestSubstring",
            generated(
                rng,
                lambda r: [
                    "".join(r.choice("abcdef") for _ in range(r.choice((0, r.randint(1, 120)))))
                ],
                longest_unique,
            ),
            {
                "AC window": lcb(
                    "lengthOfLongestSubstring",
                    "s: str) -> int",
                    "        last, start, best = {}, 0, 0\n"
                    "        for i, c in enumerate(s):\n"
                    "            if last.get(c, -1) >= start:\n"
                    "                start = last[c] + 1\n"
                    "            last[c] = i\n"
                    "            best = max(best, i - start + 1)\n"
                    "        return best\n",
                ),
                "RE on the empty string": lcb(
                    "lengthOfLongestSubstring",
                    "s)",
                    "        best, seen, start = 1, {s[0]: 0}, 0\n"
                    "        for i in range(1, len(s)):\n"
                    "            if seen.get(s[i], -1) >= start:\n"
                    "                start = seen[s[i]] + 1\n"
                    "            seen[s[i]] = i\n"
                    "            best = max(best, i - start + 1)\n"
                    "        return best\n",
                ),
            },
        ),
        Problem(
            "valid brackets",
            "isValid",
            generated(rng, brackets_args, valid_brackets),
            {
                "AC stack": lcb(
                    "isValid",
                    "s: str) -> bool",
                    "        pairs, stack = {')': '(', ']': '[', '}': '{'}, []\n"
                    "        for c in s:\n"
                    "            if c in pairs:\n"
                    "                if not stack or stack.pop() != pairs[c]:\n"
                    "                    return False\n"
                    "            else:\n"
                    "                stack.append(c)\n"
                    "        return not stack\n",
                ),
                "WA counts only": lcb(
                    "isValid",
                    "s)",
                    "        return all(s.count(a) == s.count(b) for a, b in ('()', '[]', '{}'))\n",
                ),
            },
        ),
        Problem(
            "merge intervals",
            "merge",
            generated(rng, intervals_args, merge_intervals),
            {
                "AC sort and sweep": lcb(
                    "merge",
                    "intervals: List[List[int]]) -> List[List[int]]",
                    "        out = []\n"
                    "        for a, b in sorted(intervals):\n"
                    "            if out and a <= out[-1][1]:\n"
                    "                out[-1][1] = max(out[-1][1], b)\n"
                    "            else:\n"
                    "                out.append([a, b])\n"
                    "        return out\n",
                ),
            },
        ),
        Problem(
            "number of islands",
            "numIslands",
            generated(rng, grid_args, islands),
            {
                "AC flood fill": lcb(
                    "numIslands",
                    "grid: List[List[str]]) -> int",
                    "        rows, cols, count = len(grid), len(grid[0]), 0\n"
                    "        seen = set()\n"
                    "        for r in range(rows):\n"
                    "            for c in range(cols):\n"
                    "                if grid[r][c] == '1' and (r, c) not in seen:\n"
                    "                    count += 1\n"
                    "                    todo = deque([(r, c)])\n"
                    "                    seen.add((r, c))\n"
                    "                    while todo:\n"
                    "                        y, x = todo.popleft()\n"
                    "                        for ny, nx in ((y+1, x), (y-1, x), (y, x+1), "
                    "(y, x-1)):\n"
                    "                            if 0 <= ny < rows and 0 <= nx < cols and "
                    "grid[ny][nx] == '1' and (ny, nx) not in seen:\n"
                    "                                seen.add((ny, nx))\n"
                    "                                todo.append((ny, nx))\n"
                    "        return count\n",
                ),
                "RE no bounds check": lcb(
                    "numIslands",
                    "grid)",
                    "        def sink(r, c):\n"
                    "            if grid[r][c] != '1':\n"
                    "                return\n"
                    "            grid[r][c] = '0'\n"
                    "            for y, x in ((r+1, c), (r-1, c), (r, c+1), (r, c-1)):\n"
                    "                sink(y, x)\n"
                    "        count = 0\n"
                    "        for r in range(len(grid)):\n"
                    "            for c in range(len(grid[0])):\n"
                    "                if grid[r][c] == '1':\n"
                    "                    count += 1\n"
                    "                    sink(r, c)\n"
                    "        return count\n",
                ),
            },
        ),
        Problem(
            "climbing stairs",
            "climbStairs",
            generated(rng, lambda r: [r.randint(1, 45)], stairs),
            {
                "AC iterative": lcb(
                    "climbStairs",
                    "n: int) -> int",
                    "        a, b = 1, 1\n        for _ in range(n):\n"
                    "            a, b = b, a + b\n        return a\n",
                ),
                "AC cached recursion": "@cache\ndef ways(n):\n"
                "    return 1 if n < 2 else ways(n - 1) + ways(n - 2)\n\n"
                + lcb("climbStairs", "n)", "        return ways(n)\n"),
                "TLE plain recursion": "def ways(n):\n"
                "    return 1 if n < 2 else ways(n - 1) + ways(n - 2)\n\n"
                + lcb("climbStairs", "n)", "        return ways(n)\n"),
            },
        ),
        Problem(
            "count primes",
            "countPrimes",
            generated(
                rng,
                lambda r: [r.randint(0, 5000)],
                lambda n: sum(
                    1 for k in range(2, n) if all(k % d for d in range(2, int(k**0.5) + 1))
                ),
            ),
            {
                "AC sieve": lcb(
                    "countPrimes",
                    "n: int) -> int",
                    "        if n < 3:\n            return 0\n"
                    "        sieve = bytearray([1]) * n\n        sieve[0] = sieve[1] = 0\n"
                    "        for k in range(2, isqrt(n - 1) + 1):\n"
                    "            if sieve[k]:\n"
                    "                sieve[k*k::k] = bytearray(len(range(k*k, n, k)))\n"
                    "        return sum(sieve)\n",
                ),
                "WA counts n": lcb(
                    "countPrimes",
                    "n)",
                    "        return sum(1 for k in range(2, n + 1) "
                    "if all(k % d for d in range(2, isqrt(k) + 1)))\n",
                ),
            },
        ),
        Problem(
            "digit sum (TACO)",
            "digit_sum",
            [(a, [e]) for a, e in generated(rng, lambda r: [r.randint(0, 10**18)], digit_sum)],
            {
                "AC function": "def digit_sum(n):\n    return sum(int(d) for d in str(n))\n",
                "WA last digit": "def digit_sum(n):\n    return n % 10\n",
            },
            prelude=False,
            apps=True,
        ),
        Problem(
            "sorted squares (TACO)",
            "sorted_squares",
            generated(
                rng,
                lambda r: [sorted(r.randint(-100, 100) for _ in range(r.randint(1, 80)))],
                lambda xs: sorted(x * x for x in xs),
            ),
            {
                "AC function": "def sorted_squares(xs):\n    return sorted(x * x for x in xs)\n",
                "RE on negatives": "import math\n\ndef sorted_squares(xs):\n"
                "    return sorted(int(math.sqrt(x)) ** 4 for x in xs)\n",
            },
            prelude=False,
            apps=True,
        ),
    ]


def cpu_now() -> float:
    """CPU seconds of this process (all its threads) and its waited-for children."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


@dataclass
class Measured:
    judge_cpu: list[float] = field(default_factory=list)
    runner_cpu: list[float] = field(default_factory=list)
    judge_verdict: str = ""
    runner_verdict: str = ""


def judge_once(judge: Judge, problem: Problem, source: str) -> tuple[float, JudgeReport]:
    start = cpu_now()
    report = judge.judge(
        source,
        problem.cases(),
        LIMITS,
        language="python",
        grader=problem.grader(),
        stop_on=(Verdict.TLE,),
    )
    return cpu_now() - start, report


def interpreter_command(judge: Judge) -> list[str]:
    """The Python interpreter and its flags as `judge` runs a Python program: its
    `Program.argv` up to the `-c` of the code it runs."""
    compiled, program = judge.executor("python").compile("pass\n")
    if program is None:
        raise SystemExit(f"an empty Python program did not build: {compiled.diagnostics}")
    argv = list(program.argv)
    return argv[: argv.index("-c")]


def run_once(command: list[str], problem: Problem, source: str) -> tuple[float, list[str]]:
    job = {
        "code": source,
        "fn": problem.fn,
        "prelude": LANGUAGES["python"].preludes["livecodebench"] if problem.prelude else None,
        "seconds": LIMITS.time_seconds,
        "apps": problem.apps,
        "tests": problem.tests,
    }
    start = cpu_now()
    done = subprocess.run(
        [*command, "-c", RUNNER],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        check=False,
    )
    spent = cpu_now() - start
    if done.returncode != 0:
        raise SystemExit(f"the in-process runner failed: {done.stderr[-2000:]}")
    verdicts: list[str] = json.loads(done.stdout)
    return spent, verdicts


def summary(verdicts: list[str]) -> str:
    """The worst verdict of a run, in the judge's order."""
    order = ["CE", "TLE", "MLE", "RE", "WA", "AC"]
    return min(verdicts, key=order.index, default="AC")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    print(f"Host: {host()}; {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC")
    every = problems()
    wrong: list[str] = []
    with tempfile.TemporaryDirectory(prefix="codefu-bench-callbased-") as tmp:
        judge = Judge(Path(tmp))
        command = interpreter_command(judge)
        print(f"Isolation: {judge.isolation}; interpreter {' '.join(command)}")
        judge_once(judge, every[0], "def warm_up():\n    pass\n")  # the executor's set-up
        measured: dict[tuple[str, str], Measured] = {}
        for round_ in range(args.rounds):
            for problem in every:
                for label, source in problem.answers.items():
                    m = measured.setdefault((problem.name, label), Measured())
                    # A fresh cache each time: every answer is built, as in training.
                    judge_source = f"{source}\n# round {round_}\n"
                    order = [0, 1] if round_ % 2 == 0 else [1, 0]
                    for side in order:
                        if side == 0:
                            spent, report = judge_once(judge, problem, judge_source)
                            m.judge_cpu.append(spent)
                            m.judge_verdict = str(report.verdict)
                        else:
                            spent, verdicts = run_once(command, problem, source)
                            m.runner_cpu.append(spent)
                            m.runner_verdict = summary(verdicts)
    print(
        "\n| problem | answer | tests | judge verdict | in-process verdict "
        "| judge CPU ms | in-process CPU ms | ratio |"
    )
    print("|---|---|---|---|---|---|---|---|")
    totals = {"all": [0.0, 0.0], "without TLE": [0.0, 0.0]}
    ratios = []
    for problem in every:
        for label in problem.answers:
            m = measured[(problem.name, label)]
            judged, ran = statistics.median(m.judge_cpu), statistics.median(m.runner_cpu)
            ratio = judged / ran
            ratios.append(ratio)
            expected = label.split(" ", 1)[0]
            if m.judge_verdict != expected:
                wrong.append(f"{problem.name} / {label}: the judge said {m.judge_verdict}")
            print(
                f"| {problem.name} | {label} | {len(problem.tests)} | {m.judge_verdict} "
                f"| {m.runner_verdict} | {judged * 1000:.1f} | {ran * 1000:.1f} | {ratio:.2f} |"
            )
            for key, sums in totals.items():
                if key == "all" or m.judge_verdict != "TLE":
                    sums[0] += judged
                    sums[1] += ran
    count = len(ratios)
    print(f"\n{count} answers, {args.rounds} rounds, wall {time.perf_counter() - started:.0f} s")
    for key, (judged, ran) in totals.items():
        print(f"CPU, {key}: judge {judged:.3f} s, in-process {ran:.3f} s: ratio {judged / ran:.2f}")
    print(f"per-answer ratio: median {statistics.median(ratios):.2f}, max {max(ratios):.2f}")
    if wrong:
        print("\nVERDICTS NOT AS WRITTEN:\n" + "\n".join(wrong), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
