"""Optional validation of a problem's tests with the dataset's accepted C++ solutions.

Each kept problem's first `validate_max_solutions` accepted C++ solutions run on all its
public and private tests through codefu_sandbox's Judge (checker `validate_checker`).
The decision (`decide`) is a pure function of the verdicts:

- no solution compiles, or more than `validate_max_dropped_fraction` of the tests (or all
  of them) are passed by no solution → drop the problem (`accepted_solutions_fail`);
- a test that one accepted solution passes and another gets WA on → the accepted solutions
  disagree on its output (the problem has several valid answers, and exact checking would
  punish correct code) → drop the problem (`accepted_solutions_disagree`);
- the judge reports an internal error → drop (`validation_judge_error`), never a guess;
- otherwise drop the individual tests no accepted solution passes.

Problems without any C++ solution are kept unvalidated and counted. Verdicts depend on
timing (TLE), so validated output is only as reproducible as the judge's timings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from codefu_data.config import DataConfig
from codefu_data.solutions import cpp_programs
from codefu_sandbox import CheckerConfig, Judge, Limits, Submission, TestCase, Verdict

ACCEPTED_SOLUTIONS_FAIL = "accepted_solutions_fail"
ACCEPTED_SOLUTIONS_DISAGREE = "accepted_solutions_disagree"
VALIDATION_JUDGE_ERROR = "validation_judge_error"
NO_PRIVATE_TESTS_AFTER_VALIDATION = "no_private_tests_after_validation"


@dataclass(frozen=True)
class Decision:
    reason: str | None  # drop reason, None when the problem stays
    kept_tests: tuple[int, ...]  # indices (public first, then private) of the tests kept


def decide(
    solution_verdicts: Sequence[Sequence[str] | None], n_tests: int, max_dropped_fraction: float
) -> Decision:
    """Decide from per-solution verdict lists (None: that solution did not compile)."""
    runs = [list(v) for v in solution_verdicts if v is not None]
    if not runs:
        return Decision(ACCEPTED_SOLUTIONS_FAIL, ())
    if any(Verdict.IE in run for run in runs):
        return Decision(VALIDATION_JUDGE_ERROR, ())
    kept = []
    for t in range(n_tests):
        verdicts = [run[t] if t < len(run) else Verdict.IE for run in runs]
        if Verdict.IE in verdicts:
            return Decision(VALIDATION_JUDGE_ERROR, ())
        if Verdict.AC in verdicts and Verdict.WA in verdicts:
            return Decision(ACCEPTED_SOLUTIONS_DISAGREE, ())
        if Verdict.AC in verdicts:
            kept.append(t)
    if not kept or (n_tests - len(kept)) > max_dropped_fraction * n_tests:
        return Decision(ACCEPTED_SOLUTIONS_FAIL, ())
    return Decision(None, tuple(kept))


@dataclass
class ValidationStats:
    problems_validated: int = 0
    problems_without_cpp_solution: int = 0
    tests_dropped: int = 0
    solutions_run: int = 0
    extra: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, int]:
        return {
            "problems_validated": self.problems_validated,
            "problems_without_cpp_solution": self.problems_without_cpp_solution,
            "tests_dropped": self.tests_dropped,
            "solutions_run": self.solutions_run,
        }


@dataclass(frozen=True)
class Candidate:
    """One problem to validate: its tests and limits as plain values."""

    tests: list[tuple[str, str]]  # public then private
    time_seconds: float
    memory_bytes: int
    solutions: dict[str, Any] | None  # CodeContests `solutions` struct
    # `data.validate_checker` under the problem's judging rules (`rules.checker_config`).
    checker: CheckerConfig


class Validator:
    """Runs accepted solutions through codefu_sandbox's Judge."""

    def __init__(self, cfg: DataConfig) -> None:
        self.cfg = cfg
        self.judge = Judge()
        self.stats = ValidationStats()

    def cpp_solutions(self, solutions: dict[str, Any] | None) -> list[str]:
        return cpp_programs(solutions)[: self.cfg.validate_max_solutions]

    def run(self, candidates: Sequence[Candidate]) -> list[Decision | None]:
        """A decision per candidate; None for a problem with no C++ solution (kept as is)."""
        submissions = []
        owners: list[int] = []
        per_problem: list[list[str]] = []
        for i, cand in enumerate(candidates):
            sources = self.cpp_solutions(cand.solutions)
            per_problem.append(sources)
            tests = [TestCase(input=a, output=b) for a, b in cand.tests]
            limits = Limits(time_seconds=cand.time_seconds, memory_bytes=cand.memory_bytes)
            for src in sources:
                submissions.append(
                    Submission(
                        source=src,
                        tests=tests,
                        limits=limits,
                        checker=cand.checker,
                    )
                )
                owners.append(i)
        workers = self.cfg.validate_workers or None
        reports = self.judge.judge_many(submissions, max_workers=workers) if submissions else []
        self.stats.solutions_run += len(submissions)
        verdicts: list[list[list[str] | None]] = [[] for _ in candidates]
        for owner, report in zip(owners, reports, strict=True):
            if not report.compile.ok:
                verdicts[owner].append(None)
            else:
                verdicts[owner].append([str(t.verdict) for t in report.tests])
        decisions: list[Decision | None] = []
        for cand, sources, runs in zip(candidates, per_problem, verdicts, strict=True):
            if not sources:
                self.stats.problems_without_cpp_solution += 1
                decisions.append(None)
                continue
            self.stats.problems_validated += 1
            d = decide(runs, len(cand.tests), self.cfg.validate_max_dropped_fraction)
            if d.reason is None:
                self.stats.tests_dropped += len(cand.tests) - len(d.kept_tests)
            decisions.append(d)
        return decisions
