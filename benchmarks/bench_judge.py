"""Judge benchmark (`nox -s bench -- judge`): compile latency, run overhead, stability, languages.

Measurements, each against a baseline measured in the same run where it has one:

1. Compile latency of typical `bits/stdc++.h` solutions (benchmarks/solutions/typical)
   with the precompiled header and without it, each in a fresh cache directory (the
   one-off PCH build is excluded by a warm-up compile), and the latency of a cache hit.
   Targets: PCH >= 3x faster, p50 with PCH <= 0.35 s, cache hit <= 5 ms.
2. Added run overhead per test: the judge running a trivial binary on N tests against a
   bare `subprocess.run` of the same binary N times. Target <= 3 ms. Then (2b) one launch
   per test (`Runner.run` of the judge's runner, `Judge.runner`, joining the submission's
   memory cgroup each time, as the judge did before `--serve`; the one part that reaches
   below the sandbox's public face, since the runner is what it measures) with this
   sandbox-exec against the one of `--baseline-ref` (the
   denylist seccomp filter, no new session, no IPC namespace), built from git, and the
   judge's served tests, alternating in one run. Target: <= 2 ms added per test by the
   filter.
3. Verdict stability: AC solutions and TLE-borderline spinners (calibrated to a fraction
   of the time limit on this machine) judged alone, then with the CPUs 4x oversubscribed
   by busy processes this script starts (and always stops). Target: zero changes.
4. Checker programs: one submission judged on N tests with the built-in `codecontests`
   comparison, with a C++ checker program and with a Python one (each run in the sandbox,
   once per test), alternating in one run; the ratio of the judge's time per submission
   (a reward step's judging) with each checker to the built-in one. No target: a figure.
5. Languages: C++ against Python 3 in one run, alternating: the judge's time per test of a
   trivial program (echo.cpp, echo.py; compiled beforehand), and per batch of submissions
   (`--batch` fresh sources judged together by `judge_many` on 10 tests each, compiling or
   byte-compiling included, as a reward step sees them). No target: figures.

`--parts` picks the parts to run (e.g. `--parts 1,2,2b,4,5`: all but the load of part 3;
`--only-checkers` is `--parts 4`, `--only-languages` `--parts 5`); the smallest run is
`--tests-per-round 1 --rounds 1` (and `--batch 1` for part 5).

Prints a table per part with PASS/MISS per target and a final line of key figures. Exits
non-zero only when something could not be measured (a compile failed, a known-correct
solution was not accepted), never because a target was missed.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from codefu_sandbox import (
    CheckerConfig,
    CompilerConfig,
    CompileResult,
    Judge,
    Limits,
    Submission,
    TestCase,
    Verdict,
    usable_cpus,
)
from codefu_sandbox.graders import per_test_run_limits
from codefu_sandbox.languages import Program

HERE = Path(__file__).resolve().parent
SOLUTIONS = HERE / "solutions"
TYPICAL = SOLUTIONS / "typical"
LIMITS = Limits(time_seconds=1.0, memory_bytes=256 << 20)
SANDBOX_EXEC_SOURCE = "packages/sandbox/src/codefu_sandbox/sandbox_exec.c"
# Its name before it was renamed (the baseline commits of part 2b have only this one).
OLD_SANDBOX_EXEC_SOURCE = "packages/sandbox/src/codefu_sandbox/launcher.c"
# The last commit whose solution filter was the denylist (part 2b's baseline).
PREVIOUS_FILTER = "07c8c47e74db295430dc436e14b184fb23390085"
# Its result line's format, and the same with the refused call's field (-1: none).
RESULT_LINE_WITHOUT_REFUSED = b'"ok %d %d %lld %lld %ld %lld %d\\n"'
RESULT_LINE_NONE_REFUSED = b'"ok %d %d %lld %lld %ld %lld %d -1\\n"'
# Fractions of the time limit that the spinner burns in CPU time: under it → AC, over → TLE.
AC_FRACTIONS = (0.4, 0.6)
TLE_FRACTIONS = (1.5, 2.5)
# A busy process that exits by itself as soon as its parent (this script) is gone.
LOAD_PROGRAM = (
    "import os\nparent = os.getppid()\nwhile os.getppid() == parent:\n"
    "    for _ in range(200000):\n        pass\n"
)


class BenchError(RuntimeError):
    """Something could not be measured; the benchmark exits non-zero."""


@dataclass
class Target:
    name: str
    value: float
    goal: float
    unit: str
    higher_is_better: bool = False

    @property
    def met(self) -> bool:
        return self.value >= self.goal if self.higher_is_better else self.value <= self.goal

    def line(self) -> str:
        op = ">=" if self.higher_is_better else "<="
        status = "PASS" if self.met else "MISS"
        goal = f"{op} {self.goal:g}{self.unit}"
        return f"  [{status}] {self.name}: {self.value:.3f}{self.unit} (target {goal})"


def p50(values: Sequence[float]) -> float:
    return statistics.median(values)


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    cells = [[str(h) for h in headers], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = ["  " + "  ".join(c.ljust(w) for c, w in zip(cells[0], widths, strict=True))]
    lines.append("  " + "  ".join("-" * w for w in widths))
    for row in cells[1:]:
        lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))
    return "\n".join(lines)


def compile_cpp(judge: Judge, source: str) -> tuple[CompileResult, Program | None]:
    """`source` built by `judge`'s C++ toolchain (or taken from its cache)."""
    return judge.executor("cpp").compile(source)


def typical_sources() -> dict[str, str]:
    sources = {p.stem: p.read_text() for p in sorted(TYPICAL.glob("*.cpp"))}
    if len(sources) < 10:
        raise BenchError(f"need at least 10 typical solutions in {TYPICAL}, found {len(sources)}")
    return sources


def typical_tests() -> dict[str, list[TestCase]]:
    raw = json.loads((SOLUTIONS / "typical_tests.json").read_text())
    return {name: [TestCase(t["input"], t["output"]) for t in tests] for name, tests in raw.items()}


# ---------------------------------------------------------------------- 1. compile
def bench_compile(sources: dict[str, str], work: Path) -> tuple[list[Target], dict[str, float]]:
    timings: dict[str, dict[str, float]] = {name: {} for name in sources}
    pch_used: dict[str, bool] = {}
    judges = {
        mode: Judge(work / f"cache-{mode}", toolchains={"cpp": CompilerConfig(use_pch=use_pch)})
        for mode, use_pch in (("pch", True), ("no_pch", False))
    }
    for mode, judge in judges.items():
        # Warm-up: builds sandbox-exec and (with PCH) the precompiled header once.
        warm, _ = compile_cpp(judge, "#include <bits/stdc++.h>\nint main() { return 0; }\n")
        if not warm.ok:
            raise BenchError(f"warm-up compile failed ({mode}): {warm.diagnostics[:500]}")
    # Interleaved (one source in both modes, alternating which goes first) so that
    # other load on the machine weighs on both columns alike.
    for index, (name, source) in enumerate(sources.items()):
        order = list(judges.items()) if index % 2 == 0 else list(reversed(judges.items()))
        for mode, judge in order:
            started = time.perf_counter()
            result, built = compile_cpp(judge, source)
            elapsed = time.perf_counter() - started
            if not result.ok or built is None:
                raise BenchError(f"{name}.cpp did not compile ({mode}): {result.diagnostics[:500]}")
            if result.cached:
                raise BenchError(f"{name}.cpp came from the cache in a fresh cache dir ({mode})")
            timings[name][mode] = elapsed
            if mode == "pch":
                pch_used[name] = result.pch_used
    hits: list[float] = []
    for source in sources.values():
        started = time.perf_counter()
        result, _ = compile_cpp(judges["pch"], source)
        hits.append(time.perf_counter() - started)
        if not result.cached:
            raise BenchError("a second compile of the same source missed the cache")
    rows = [
        [
            name,
            f"{t['no_pch']:.3f}",
            f"{t['pch']:.3f}",
            f"{t['no_pch'] / t['pch']:.1f}x",
            "yes" if pch_used[name] else "NO",
        ]
        for name, t in timings.items()
    ]
    with_pch = p50([t["pch"] for t in timings.values()])
    without = p50([t["no_pch"] for t in timings.values()])
    hit = p50(hits)
    rows.append(["p50", f"{without:.3f}", f"{with_pch:.3f}", f"{without / with_pch:.1f}x", ""])
    print("\n== 1. Compile latency (s), fresh cache dir per mode, PCH build excluded")
    print(table(["solution", "no PCH", "PCH", "speed-up", "PCH used"], rows))
    print(f"  cache hit: p50 {hit * 1000:.2f} ms, max {max(hits) * 1000:.2f} ms over {len(hits)}")
    targets = [
        Target("PCH speed-up of compile p50", without / with_pch, 3.0, "x", higher_is_better=True),
        Target("compile p50 with PCH", with_pch, 0.35, " s"),
        Target("cache-hit latency p50", hit * 1000, 5.0, " ms"),
    ]
    figures = {
        "compile_p50_pch_s": with_pch,
        "compile_p50_nopch_s": without,
        "pch_speedup": without / with_pch,
        "cache_hit_ms": hit * 1000,
    }
    return targets, figures


# ---------------------------------------------------------------------- 2. overhead
def bench_overhead(judge: Judge, tests_per_round: int, rounds: int) -> tuple[list[Target], float]:
    source = (SOLUTIONS / "echo.cpp").read_text()
    result, built = compile_cpp(judge, source)
    if not result.ok or built is None:
        raise BenchError(f"echo.cpp did not compile: {result.diagnostics[:500]}")
    tests = [TestCase(f"{i}\n", f"{i}\n") for i in range(tests_per_round)]
    bare: list[float] = []
    judged: list[float] = []
    for _ in range(rounds):
        started = time.perf_counter()
        for test in tests:
            done = subprocess.run(
                list(built.argv), input=test.input.encode(), capture_output=True, check=False
            )
            if done.stdout.decode().split() != test.output.split():
                raise BenchError("the bare run of echo.cpp printed the wrong answer")
        bare.append((time.perf_counter() - started) / len(tests))
        started = time.perf_counter()
        report = judge.judge(source, tests, LIMITS)
        judged.append((time.perf_counter() - started) / len(tests))
        if report.verdict != Verdict.AC:
            raise BenchError(f"echo.cpp was judged {report.verdict}, expected AC")
    bare_ms, judged_ms = p50(bare) * 1000, p50(judged) * 1000
    overhead = judged_ms - bare_ms
    print(
        f"\n== 2. Run overhead per test ({rounds} rounds x {tests_per_round} tests, p50 of rounds)"
    )
    print(
        table(
            ["runner", "ms / test"],
            [
                ["bare subprocess.run", f"{bare_ms:.2f}"],
                [f"judge ({judge.isolation})", f"{judged_ms:.2f}"],
                ["added by the judge", f"{overhead:.2f}"],
            ],
        )
    )
    return [Target("added run overhead per test", overhead, 3.0, " ms")], overhead


CPP_CHECKER = """#include <bits/stdc++.h>
int main(int argc, char** argv) {
    std::ifstream out(argv[2]), ans(argv[3]);
    std::multiset<std::string> got, want;
    for (std::string s; out >> s;) got.insert(s);
    for (std::string s; ans >> s;) want.insert(s);
    return got == want ? 0 : 1;
}
"""
PY_CHECKER = """import sys
from pathlib import Path
out, ans = (sorted(Path(p).read_text().split()) for p in sys.argv[2:4])
sys.exit(0 if out == ans else 1)
"""


def bench_checkers(judge: Judge, tests_per_round: int, rounds: int) -> dict[str, float]:
    """Seconds per judged submission with the built-in comparison and with checker
    programs (C++, Python), alternating; the C++ checker compiled once beforehand."""
    source = (SOLUTIONS / "echo.cpp").read_text()
    tests = [TestCase(f"{i}\n", f"{i}\n") for i in range(tests_per_round)]
    checkers = {
        "built-in codecontests": CheckerConfig("codecontests"),
        "C++ checker program": CheckerConfig("program", {"source": CPP_CHECKER}),
        "Python checker program": CheckerConfig(
            "program", {"source": PY_CHECKER, "language": "python"}
        ),
    }
    times: dict[str, list[float]] = {name: [] for name in checkers}
    for name, config in checkers.items():  # warm-up: compiles, caches
        if judge.judge(source, tests[:1], LIMITS, config).verdict != Verdict.AC:
            raise BenchError(f"echo.cpp was not accepted with the {name}")
    for _ in range(rounds):
        for name, config in checkers.items():
            started = time.perf_counter()
            report = judge.judge(source, tests, LIMITS, config)
            times[name].append(time.perf_counter() - started)
            if report.verdict != Verdict.AC:
                raise BenchError(f"echo.cpp was judged {report.verdict} with the {name}")
    base = p50(times["built-in codecontests"])
    rows = [
        [name, f"{p50(t):.3f}", f"{p50(t) / tests_per_round * 1000:.2f}", f"{p50(t) / base:.1f}x"]
        for name, t in times.items()
    ]
    print(
        f"\n== 4. Checker programs ({rounds} alternating rounds x {tests_per_round} tests, "
        "p50 of rounds)"
    )
    print(table(["checker", "s / submission", "ms / test", "ratio"], rows))
    return {name: p50(t) / base for name, t in times.items()}


def bench_languages(
    judge: Judge, tests_per_round: int, rounds: int, batch: int
) -> dict[str, float]:
    """ms per test (cached program) and s per batch (fresh sources) for C++ and Python."""
    sources = {
        "cpp": (SOLUTIONS / "echo.cpp").read_text(),
        "python": (SOLUTIONS / "echo.py").read_text(),
    }
    comment = {"cpp": "// {}\n", "python": "# {}\n"}
    tests = [TestCase(f"{i}\n", f"{i}\n") for i in range(tests_per_round)]
    batch_tests = tests[:10]
    per_test: dict[str, list[float]] = {language: [] for language in sources}
    per_batch: dict[str, list[float]] = {language: [] for language in sources}
    for language, source in sources.items():  # warm-up: compiles, starts the interpreter
        if judge.judge(source, tests[:1], LIMITS, language=language).verdict != Verdict.AC:
            raise BenchError(f"echo was not accepted in {language}")
    for index in range(rounds):
        order = list(sources) if index % 2 == 0 else list(sources)[::-1]
        for language in order:
            started = time.perf_counter()
            report = judge.judge(sources[language], tests, LIMITS, language=language)
            per_test[language].append((time.perf_counter() - started) / len(tests))
            if report.verdict != Verdict.AC:
                raise BenchError(f"echo in {language} was judged {report.verdict}")
            fresh = [
                Submission(
                    comment[language].format(f"{time.time_ns()}-{k}") + sources[language],
                    batch_tests,
                    LIMITS,
                    language=language,
                )
                for k in range(batch)
            ]
            started = time.perf_counter()
            reports = judge.judge_many(fresh)
            per_batch[language].append(time.perf_counter() - started)
            if any(r.verdict != Verdict.AC or r.compile.cached for r in reports):
                raise BenchError(f"a fresh echo in {language} was cached or not accepted")
    rows = [
        [
            language,
            f"{p50(per_test[language]) * 1000:.2f}",
            f"{p50(per_batch[language]):.2f}",
            f"{p50(per_batch[language]) / batch:.3f}",
        ]
        for language in sources
    ]
    print(
        f"\n== 5. Languages ({rounds} alternating rounds: {tests_per_round} tests of a cached "
        f"program; a batch of {batch} fresh sources x {len(batch_tests)} tests on "
        f"{usable_cpus()} CPUs; p50)"
    )
    print(table(["language", "ms / test", "s / batch", "s / submission in a batch"], rows))
    return {
        f"{language}_{kind}": value
        for language in sources
        for kind, value in (
            ("ms_per_test", p50(per_test[language]) * 1000),
            ("s_per_batch", p50(per_batch[language])),
        )
    }


def previous_sandbox_exec(ref: str, directory: Path) -> Path:
    """sandbox-exec of git `ref` (the denylist filter before issue 15), built here. A
    sandbox-exec older than the refused system call's field of the result line (the
    default ref's) prints it as -1 (none refused), the runner now reading one: nothing else
    of its source changes."""
    for source_path in (SANDBOX_EXEC_SOURCE, OLD_SANDBOX_EXEC_SOURCE):
        shown = subprocess.run(
            ["git", "-C", str(HERE), "show", f"{ref}:{source_path}"],
            capture_output=True,
            check=False,
        )
        if shown.returncode == 0:
            break
    else:
        raise BenchError(
            f"cannot read {SANDBOX_EXEC_SOURCE} at {ref} (a git checkout with that commit is "
            f"needed; pass --baseline-ref): {shown.stderr.decode()[:300]}"
        )
    source = directory / "previous-sandbox_exec.c"
    source.write_bytes(shown.stdout.replace(RESULT_LINE_WITHOUT_REFUSED, RESULT_LINE_NONE_REFUSED))
    binary = directory / "previous-sandbox-exec"
    subprocess.run(["gcc", "-O2", "-static", "-o", str(binary), str(source)], check=True)
    return binary


def launched_per_test(
    judge: Judge,
    program: Program,
    tests: Sequence[TestCase],
    sandbox_exec: Path | None = None,
) -> float:
    """Seconds per test of one launch per test (`Runner.run` of the judge's runner) under
    the judge's limits, in one memory cgroup for all the tests (the judge's runs before
    `--serve`). `sandbox_exec`: that binary instead of the runner's (the baseline of part
    2b, older than `--ipcns`: it runs in the host's IPC namespace)."""
    runner = judge.runner
    if sandbox_exec is not None:  # the judge's runner (its uids, cgroups) with that binary
        runner = copy.copy(runner)
        runner.sandbox_exec = sandbox_exec
        runner.isolation = dataclasses.replace(runner.isolation, ipcns=False)
    limits = per_test_run_limits(LIMITS, judge.output_limit)
    assert limits.cgroup_memory is not None  # per_test_run_limits always sets the cap
    with (
        runner.workspace() as private,
        runner.uids.take() as uid,
        runner.memory_group(limits.cgroup_memory) as group,
    ):
        stdin, stdout, stderr = private / "in", private / "out", private / "err"
        started = time.perf_counter()
        for test in tests:
            stdin.write_text(test.input)
            outcome = runner.run(
                list(program.argv),
                cwd=private,
                limits=limits,
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                uid=uid,
                writable_cwd=False,
                group=group,
            )
            if outcome.error or stdout.read_text().split() != test.output.split():
                raise BenchError(f"a launch of echo.cpp failed: {outcome}")
        return (time.perf_counter() - started) / len(tests)


def bench_filter_overhead(
    judge: Judge, ref: str, work: Path, tests_per_round: int, rounds: int
) -> tuple[list[Target], float]:
    """Per-test cost of this sandbox-exec (allowlist, new session, IPC namespace) against
    the one of `ref`, one launch per test, and of the judge's served tests, alternating."""
    previous = previous_sandbox_exec(ref, work)
    previous_isolation = dataclasses.replace(judge.runner.isolation, ipcns=False).describe()
    source = (SOLUTIONS / "echo.cpp").read_text()
    _, program = compile_cpp(judge, source)
    if program is None:
        raise BenchError("echo.cpp did not compile")
    tests = [TestCase(f"{i}\n", f"{i}\n") for i in range(tests_per_round)]

    def served() -> float:
        started = time.perf_counter()
        report = judge.judge(source, tests, LIMITS)
        if report.verdict != Verdict.AC:
            raise BenchError(f"echo.cpp was judged {report.verdict}, expected AC")
        return (time.perf_counter() - started) / len(tests)

    order = {
        "previous": lambda: launched_per_test(judge, program, tests, previous),
        "current": lambda: launched_per_test(judge, program, tests),
        "served": served,
    }
    times: dict[str, list[float]] = {name: [] for name in order}
    for index in range(2 * rounds):
        names = list(order) if index % 2 == 0 else list(order)[::-1]
        for name in names:
            times[name].append(order[name]())
    before_ms, now_ms, served_ms = (p50(times[name]) * 1000 for name in order)
    added = now_ms - before_ms
    print(f"\n== 2b. This sandbox-exec against {ref[:12]}'s ({2 * rounds} alternating rounds)")
    print(
        table(
            ["sandbox-exec", "ms / test"],
            [
                [
                    f"previous, a launch per test ({previous_isolation}, denylist)",
                    f"{before_ms:.2f}",
                ],
                [f"current, a launch per test ({judge.isolation}, allowlist)", f"{now_ms:.2f}"],
                ["added per test by the filter", f"{added:.2f}"],
                [
                    "current, served (the judge: one sandbox-exec per submission)",
                    f"{served_ms:.2f}",
                ],
                ["saved per test by serving", f"{now_ms - served_ms:.2f}"],
            ],
        )
    )
    return [Target("added per test by the new filter", added, 2.0, " ms")], added


# ---------------------------------------------------------------------- 3. stability
@dataclass
class Case:
    name: str
    source: str
    tests: list[TestCase]
    expected: Verdict


def spin_rate(judge: Judge, source: str) -> float:
    """Loop iterations per CPU second of solutions/spin.cpp on this machine."""
    iterations = 200_000_000
    report = judge.judge(source, [TestCase(f"{iterations}\n", "done\n")], Limits(20.0, 256 << 20))
    if report.verdict != Verdict.AC or report.tests[0].cpu_seconds <= 0:
        raise BenchError(f"calibrating spin.cpp failed: {report.verdict}")
    return iterations / report.tests[0].cpu_seconds


@contextmanager
def cpu_load(processes: int) -> Iterator[None]:
    """`processes` busy Python processes for the duration of the block, always stopped."""
    started: list[subprocess.Popen[bytes]] = []
    previous = signal.getsignal(signal.SIGTERM)

    def stop(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, stop)
    try:
        for _ in range(processes):
            started.append(subprocess.Popen([sys.executable, "-c", LOAD_PROGRAM]))
        time.sleep(0.5)  # let the scheduler spread them
        yield
    finally:
        for proc in started:
            proc.kill()
        for proc in started:
            proc.wait()
        signal.signal(signal.SIGTERM, previous)


def judge_cases(judge: Judge, cases: Sequence[Case]) -> list[tuple[str, float, float]]:
    """(verdict, CPU s, wall s) per case; TLE says whether CPU time or the wall backstop."""
    out = []
    for case in cases:
        report = judge.judge(case.source, case.tests, LIMITS, stop_on_first_failure=True)
        cpu = max((t.cpu_seconds for t in report.tests), default=0.0)
        wall = max((t.wall_seconds for t in report.tests), default=0.0)
        verdict = str(report.verdict)
        if report.verdict == Verdict.TLE:
            verdict += "(cpu)" if cpu >= LIMITS.time_seconds else "(wall)"
        out.append((verdict, cpu, wall))
    return out


def bench_stability(
    judge: Judge, sources: dict[str, str], tests: dict[str, list[TestCase]], factor: int
) -> tuple[list[Target], int]:
    spin = (SOLUTIONS / "spin.cpp").read_text()
    rate = spin_rate(judge, spin)
    cases = [Case(name, sources[name], tests[name], Verdict.AC) for name in sources]
    for fraction in (*AC_FRACTIONS, *TLE_FRACTIONS):
        iterations = int(rate * LIMITS.time_seconds * fraction)
        expected = Verdict.AC if fraction < 1 else Verdict.TLE
        cases.append(
            Case(f"spin {fraction:g}x TL", spin, [TestCase(f"{iterations}\n", "done\n")], expected)
        )
    alone = judge_cases(judge, cases)
    wrong = [
        c.name for c, (v, _, _) in zip(cases, alone, strict=True) if v.split("(")[0] != c.expected
    ]
    if wrong:
        raise BenchError(f"judged alone, these did not get their expected verdict: {wrong}")
    load = factor * usable_cpus()
    background = os.getloadavg()[0]
    with cpu_load(load):
        loaded = judge_cases(judge, cases)
        during = os.getloadavg()[0]
    rows = []
    changes = 0
    for case, (v1, cpu1, wall1), (v2, cpu2, wall2) in zip(cases, alone, loaded, strict=True):
        changed = v1.split("(")[0] != v2.split("(")[0]
        changes += changed
        rows.append(
            [
                case.name,
                v1,
                f"{cpu1:.3f}/{wall1:.3f}",
                v2,
                f"{cpu2:.3f}/{wall2:.3f}",
                "CHANGED" if changed else "",
            ]
        )
    print(
        f"\n== 3. Verdict stability: alone vs {load} busy processes on {usable_cpus()} CPUs "
        f"(TL {LIMITS.time_seconds:g} s; spinner {rate / 1e6:.0f}M iterations per CPU second; "
        f"load average {background:.1f} before, {during:.1f} at the end of the loaded run)"
    )
    print(table(["case", "alone", "cpu/wall s", f"{factor}x load", "cpu/wall s", "change"], rows))
    by_wall = sum(
        v1.split("(")[0] != v2.split("(")[0] and v2 == "TLE(wall)"
        for (v1, _, _), (v2, _, _) in zip(alone, loaded, strict=True)
    )
    if by_wall:
        print(
            f"  {by_wall} change(s) came from the wall-clock backstop: the program was starved "
            "of CPU (see its cpu/wall share), not over its CPU limit."
        )
    return [Target("verdict changes under load", changes, 0, "")], changes


PARTS = ("1", "2", "2b", "3", "4", "5")


def parts_arg(text: str) -> tuple[str, ...]:
    """`--parts`: comma-separated part names, each one of PARTS."""
    chosen = tuple(part.strip() for part in text.split(",") if part.strip())
    unknown = [part for part in chosen if part not in PARTS]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(
            f"unknown part(s) {', '.join(unknown) or '(none given)'}: choose from "
            f"{', '.join(PARTS)}, comma-separated (e.g. --parts 1,2,2b)"
        )
    return chosen


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests-per-round", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--load-factor", type=int, default=4)
    parser.add_argument(
        "--baseline-ref",
        default=PREVIOUS_FILTER,
        help="git commit whose sandbox-exec is the baseline of part 2b (default: the last "
        "one with the denylist filter)",
    )
    parser.add_argument(
        "--parts",
        type=parts_arg,
        default=PARTS,
        help=f"the parts to run, comma-separated, in this order: {','.join(PARTS)} (default "
        "all; part 3 oversubscribes the CPUs)",
    )
    parser.add_argument(
        "--only-checkers",
        action="store_const",
        const=("4",),
        dest="parts",
        help="run part 4 (checker programs) alone: --parts 4",
    )
    parser.add_argument(
        "--only-languages",
        action="store_const",
        const=("5",),
        dest="parts",
        help="run part 5 (C++ against Python) alone: --parts 5",
    )
    parser.add_argument("--batch", type=int, default=16, help="submissions per batch (part 5)")
    args = parser.parse_args(argv)
    parts = set(args.parts)
    started = time.perf_counter()
    print(
        f"Judge benchmark, parts {','.join(p for p in PARTS if p in parts)}: {usable_cpus()} "
        f"usable CPUs, load average {os.getloadavg()[0]:.1f}"
    )
    targets: list[Target] = []
    key: list[str] = []
    try:
        with tempfile.TemporaryDirectory(prefix="codefu-bench-judge-") as tmp:
            work = Path(tmp)
            if "1" in parts:
                compile_targets, figures = bench_compile(typical_sources(), work)
                targets += compile_targets
                key += [
                    f"compile_p50_pch={figures['compile_p50_pch_s']:.3f}s",
                    f"compile_p50_nopch={figures['compile_p50_nopch_s']:.3f}s",
                    f"pch_speedup={figures['pch_speedup']:.1f}x",
                    f"cache_hit={figures['cache_hit_ms']:.2f}ms",
                ]
            judge = Judge(work / "cache-pch")  # reuses the warm PCH and binaries of part 1
            if "2" in parts:
                overhead_targets, overhead = bench_overhead(
                    judge, args.tests_per_round, args.rounds
                )
                targets += overhead_targets
                key.append(f"run_overhead={overhead:.2f}ms/test")
            if "2b" in parts:
                filter_targets, filter_added = bench_filter_overhead(
                    judge, args.baseline_ref, work, args.tests_per_round, args.rounds
                )
                targets += filter_targets
                key.append(f"filter_added={filter_added:.2f}ms/test")
            if "3" in parts:
                stability_targets, changes = bench_stability(
                    judge, typical_sources(), typical_tests(), args.load_factor
                )
                targets += stability_targets
                key.append(f"verdict_changes_under_load={changes}")
            if "4" in parts:
                key.append(_ratios(bench_checkers(judge, args.tests_per_round, args.rounds)))
            if "5" in parts:
                costs = bench_languages(judge, args.tests_per_round, args.rounds, args.batch)
                key.append(_costs(costs))
    except BenchError as exc:
        print(f"\nERROR: {exc}", file=sys.stderr)
        return 1
    if targets:
        print("\n== Targets")
        for target in targets:
            print(target.line())
        key.append(f"targets_met={sum(t.met for t in targets)}/{len(targets)}")
    print(f"\nKEY judge: {' '.join(key)} wall={time.perf_counter() - started:.0f}s")
    return 0


def _costs(costs: dict[str, float]) -> str:
    return (
        f"cpp={costs['cpp_ms_per_test']:.2f}ms/test,{costs['cpp_s_per_batch']:.2f}s/batch "
        f"python={costs['python_ms_per_test']:.2f}ms/test,{costs['python_s_per_batch']:.2f}s/batch"
    )


def _ratios(ratios: dict[str, float]) -> str:
    cpp, python = ratios["C++ checker program"], ratios["Python checker program"]
    return f"checker_cpp_ratio={cpp:.1f}x checker_python_ratio={python:.1f}x"


if __name__ == "__main__":
    sys.exit(main())
