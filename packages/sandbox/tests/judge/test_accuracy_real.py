"""Accuracy on real Codeforces problems: exact verdicts for hand-written solutions.

For each problem listed in `real_solutions/manifest.json` there is a correct C++17
solution (`ac.cpp`, checked against every private and public test) and five variants
derived from it that must get exactly one verdict each: `wa.cpp` (a logic bug),
`tle.cpp` (a loop or sleep far beyond the limit), `re.cpp` (a crash or a non-zero
exit), `mle.cpp` (allocates several times the memory limit) and `ce.cpp` (does not
compile). Each is judged with the problem's own time and memory limits on its real
tests from `$CODEFU_REAL_DATA/codefu_easy/{train,test}.parquet` by the suite's
shared `judge` fixture (conftest.py); skipped when `CODEFU_REAL_DATA` is unset (the root
conftest's `codefu_easy` fixture).

Some problems also hold Python 3 variants, judged through the `codefu-judge` command line
(`.py`: inferred as Python): `ac.py`, `wa.py`, `re.py` and `ce.py` each, and among them
`tle.py`, `mle.py` and `ole.py` (a flood of output) once or more (they cost the most).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from codefu_sandbox import GraderConfig, Judge, JudgeReport, Limits, TestCase, Verdict
from codefu_sandbox.cli import main

SOLUTIONS = Path(__file__).resolve().parent / "real_solutions"
MANIFEST: dict[str, dict[str, str]] = json.loads((SOLUTIONS / "manifest.json").read_text())
EXPECTED: dict[str, Verdict] = {
    "ac": Verdict.AC,
    "wa": Verdict.WA,
    "tle": Verdict.TLE,
    "re": Verdict.RE,
    "mle": Verdict.MLE,
    "ce": Verdict.CE,
}
PY_EXPECTED: dict[str, Verdict] = {**EXPECTED, "ole": Verdict.OLE}
PY_CASES = sorted(f"{p.parent.name}/{p.stem}" for p in SOLUTIONS.glob("*/*.py"))


@dataclass(frozen=True)
class Problem:
    """One real problem: its tests (private, then public) and its own limits."""

    name: str
    tests: tuple[TestCase, ...]
    limits: Limits
    checker: str


def _tests(block: Mapping[str, Any] | None) -> list[TestCase]:
    if not block:
        return []
    return [TestCase(i, o) for i, o in zip(block["input"], block["output"], strict=True)]


def _load_problems(easy: Path) -> dict[str, Problem]:
    """The manifest's problems, read from the real parquet files in `easy`."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        pytest.fail(
            "CODEFU_REAL_DATA is set but pyarrow is not installed: install pyarrow "
            "(the sandbox package's `test` extra should provide it) or unset CODEFU_REAL_DATA."
        )
    wanted = {meta["name"]: slug for slug, meta in MANIFEST.items()}
    found: dict[str, Problem] = {}
    files = [easy / f"{split}.parquet" for split in ("train", "test")]
    for path in files:
        table = pq.read_table(path, columns=["reward_model"])
        for row in table.column("reward_model").to_pylist():
            truth = row["ground_truth"]
            slug = wanted.get(truth["name"])
            if slug is None:
                continue
            limit = truth["time_limit"]
            seconds = float(limit["seconds"]) + float(limit["nanos"]) / 1e9
            found[slug] = Problem(
                name=truth["name"],
                tests=tuple(_tests(truth["private_tests"]) + _tests(truth["public_tests"])),
                limits=Limits(time_seconds=seconds, memory_bytes=int(truth["memory_limit_bytes"])),
                checker=MANIFEST[slug]["checker"],
            )
    absent = sorted(set(MANIFEST) - set(found))
    if absent:
        pytest.fail(f"problems {absent} of real_solutions/manifest.json are not in {easy}")
    return found


@pytest.fixture(scope="module")
def problems(codefu_easy: Path) -> dict[str, Problem]:
    return _load_problems(codefu_easy)


def _describe(report: JudgeReport) -> str:
    """A failure message that shows what the judge saw."""
    lines = [f"verdict {report.verdict} ({report.passed}/{report.total} passed)"]
    if not report.compile.ok:
        lines.append(f"compile diagnostics: {report.compile.diagnostics[:800]}")
    for index, result in enumerate(report.tests):
        if result.verdict != Verdict.AC:
            lines.append(
                f"test {index}: {result.verdict} cpu={result.cpu_seconds:.3f}s "
                f"wall={result.wall_seconds:.3f}s peak={result.peak_memory_bytes} "
                f"exit={result.exit_code} signal={result.signal}"
            )
            if len(lines) > 6:
                break
    return "\n".join(lines)


def test_manifest_lists_complete_problem_folders() -> None:
    """Every manifest entry has all six sources; every folder is in the manifest."""
    assert len(MANIFEST) >= 10
    folders = {p.name for p in SOLUTIONS.iterdir() if p.is_dir()}
    assert folders == set(MANIFEST)
    for slug, meta in MANIFEST.items():
        assert set(meta) == {"name", "checker"}, slug
        assert meta["checker"] in {"tokens", "codecontests"}, slug
        for variant in EXPECTED:
            assert (SOLUTIONS / slug / f"{variant}.cpp").is_file(), f"{slug}/{variant}.cpp"
    checkers = {meta["checker"] for meta in MANIFEST.values()}
    assert "codecontests" in checkers, "at least one problem must have a real-number answer"


@pytest.mark.real_data
@pytest.mark.parametrize("variant", list(EXPECTED))
@pytest.mark.parametrize("slug", sorted(MANIFEST))
def test_real_solution_gets_exact_verdict(
    judge: Judge, problems: dict[str, Problem], slug: str, variant: str
) -> None:
    problem = problems[slug]
    source = (SOLUTIONS / slug / f"{variant}.cpp").read_text()
    expected = EXPECTED[variant]
    report = judge.judge(
        source,
        problem.tests,
        problem.limits,
        checker=problem.checker,
        # A failing variant has shown its verdict at its first failing test.
        stop_on_first_failure=expected != Verdict.AC,
    )
    assert report.verdict == expected, f"{problem.name} {variant}.cpp: " + _describe(report)
    if expected == Verdict.CE:
        assert not report.compile.ok
        assert report.compile.diagnostics.strip(), "a compile error comes with diagnostics"
        assert report.passed == 0
        return
    assert report.compile.ok
    if expected == Verdict.AC:
        assert report.passed == report.total == len(problem.tests)
        assert all(r.cpu_seconds <= problem.limits.time_seconds for r in report.tests)
        assert all(r.peak_memory_bytes <= problem.limits.memory_bytes for r in report.tests)
    else:
        assert report.passed < report.total
        failing = next(r for r in report.tests if r.verdict != Verdict.AC)
        assert failing.verdict == expected, _describe(report)
        if expected == Verdict.TLE:
            # The evidence behind TLE: the CPU limit was used up (busy loops), or the
            # wall-clock backstop ended a program that sleeps.
            limit = problem.limits.time_seconds
            assert failing.cpu_seconds >= 0.9 * limit or failing.wall_seconds >= limit


def test_python_variants_are_complete() -> None:
    """Every verdict has a Python variant; each problem with Python variants has the four
    cheap ones; a real-number problem is among them."""
    slugs = {case.split("/")[0] for case in PY_CASES}
    assert len(slugs) >= 3
    assert slugs <= set(MANIFEST)
    assert {case.split("/")[1] for case in PY_CASES} == set(PY_EXPECTED)
    for slug in slugs:
        for variant in ("ac", "wa", "re", "ce"):
            assert f"{slug}/{variant}" in PY_CASES
    assert any(MANIFEST[slug]["checker"] == "codecontests" for slug in slugs)


@pytest.mark.real_data
@pytest.mark.parametrize("case", PY_CASES)
def test_real_python_solution_gets_exact_verdict_through_the_cli(
    judge: Judge,
    problems: dict[str, Problem],
    case: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    slug, variant = case.split("/")
    problem = problems[slug]
    expected = PY_EXPECTED[variant]
    tests = tmp_path / "tests.json"
    tests.write_text(json.dumps([{"input": t.input, "output": t.output} for t in problem.tests]))
    argv = [
        str(SOLUTIONS / slug / f"{variant}.py"),
        "--tests", str(tests),
        "--time-limit", str(problem.limits.time_seconds),
        "--memory-limit", str(problem.limits.memory_bytes),
        "--checker", problem.checker,
        "--cache-dir", str(judge.cache_dir),
    ]  # fmt: skip
    if expected != Verdict.AC:  # its verdict shows at the first failing test
        argv.append("--stop-on-first-failure")
    if expected == Verdict.TLE:  # the TLE variants burn the limit: the cheapest factor
        argv += ["--time-factor", "1"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    failing = [t for t in report["tests"] if t["verdict"] != "AC"]
    detail = f"{problem.name} {variant}.py: {json.dumps(report)[:1500]}"
    assert report["verdict"] == expected, detail
    if expected == Verdict.CE:
        assert not report["compile"]["ok"]
        assert "Error" in report["compile"]["diagnostics"], detail  # Syntax/IndentationError
        assert 'File "sol.py", line' in report["compile"]["diagnostics"], detail
        return
    assert report["compile"]["ok"], detail
    if expected == Verdict.AC:
        assert report["passed"] == report["total"] == len(problem.tests)
        return
    assert failing[0]["verdict"] == expected, detail
    if expected == Verdict.RE:
        assert failing[0]["exit_code"] not in (0, None) or failing[0]["signal"], detail


@pytest.mark.real_data
@pytest.mark.parametrize(
    "case", [c for c in PY_CASES if c.split("/")[1] in ("ac", "wa", "re")], ids=str
)
def test_real_python_solutions_keep_their_verdicts_judged_as_livecodebench_judges(
    judge: Judge, problems: dict[str, Problem], case: str
) -> None:
    """LiveCodeBench's prelude run before a real program, and its comparison for a problem
    compared token by token: the same verdict as without (a real-number problem keeps its
    tolerance: LiveCodeBench's comparison wants the same decimals)."""
    slug, variant = case.split("/")
    problem = problems[slug]
    report = judge.judge(
        (SOLUTIONS / slug / f"{variant}.py").read_text(),
        problem.tests,
        problem.limits,
        checker="livecodebench" if problem.checker == "tokens" else problem.checker,
        stop_on_first_failure=variant != "ac",
        language="python",
        grader=GraderConfig("stdio", {"prelude": "livecodebench"}),
    )
    assert report.verdict == PY_EXPECTED[variant], f"{problem.name} {variant}.py: " + _describe(
        report
    )
