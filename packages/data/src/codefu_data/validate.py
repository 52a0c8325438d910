"""Optional validation of a problem's tests with the dataset's accepted solutions.

Each kept problem's first `validate_max_solutions` accepted solutions in each language of
`validate_languages` (CodeContests: C++, and PYTHON3 where it has them) run on all its
public and private tests through codefu_sandbox's Judge (checker `validate_checker`, the
time limit times `time_factors` per language). The decision (`decide`) is a pure function
of the verdicts of all of them together:

- no solution compiles, or more than `validate_max_dropped_fraction` of the tests (or all
  of them) are passed by no solution → drop the problem (`accepted_solutions_fail`);
- a test that one accepted solution passes and another gets WA on → the accepted solutions
  disagree on its output (the problem has several valid answers, and exact checking would
  punish correct code) → drop the problem (`accepted_solutions_disagree`);
- the judge reports an internal error → drop (`validation_judge_error`), never a guess;
- otherwise drop the individual tests no accepted solution passes.

Each problem is judged as the reward judges it: by its grader (a call-based problem's
function called on each test; LiveCodeBench's import prelude) and its source's comparison
(the `livecodebench` checker), with the solutions in the languages its grader runs.
Problems without an accepted solution in those languages are kept unvalidated and counted.
Per language, the stats say what that language's solutions alone would decide (problems,
kept, dropped by reason): how many problems a Python answer can pass, say. Verdicts depend
on timing (TLE), so validated output is only as reproducible as the judge's timings.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from codefu_data.config import DataConfig
from codefu_data.solutions import programs
from codefu_sandbox import (
    Judge,
    JudgingPolicy,
    Problem,
    RequestedSubmission,
    TestCase,
    Verdict,
)

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
class LanguageStats:
    """One language's accepted solutions: the problems that have some, what those alone
    would decide (kept, or dropped by reason), and how many ran."""

    problems: int = 0
    kept: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    solutions_run: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "problems": self.problems,
            "kept": self.kept,
            "dropped": dict(sorted(self.dropped.items())),
            "solutions_run": self.solutions_run,
        }


@dataclass
class ValidationStats:
    problems_validated: int = 0
    problems_without_solution: int = 0
    tests_dropped: int = 0
    solutions_run: int = 0
    languages: dict[str, LanguageStats] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "problems_validated": self.problems_validated,
            "problems_without_solution": self.problems_without_solution,
            "tests_dropped": self.tests_dropped,
            "solutions_run": self.solutions_run,
            "languages": {name: stats.as_dict() for name, stats in self.languages.items()},
        }


@dataclass(frozen=True)
class Candidate:
    """One problem to validate: the problem as the judge reads its ground truth under the
    validation's policy (`Validator.policy`: every test, the public ones first;
    `data.validate_checker`
    under its judging rules, or the comparison its source fixes; its grader; a request per
    validated language), and its CodeContests `solutions` struct."""

    problem: Problem
    solutions: dict[str, Any] | None


class Validator:
    """Runs accepted solutions through codefu_sandbox's Judge."""

    def __init__(self, cfg: DataConfig) -> None:
        self.cfg = cfg
        self.judge = Judge()
        # How validation judges (`data.time_limit_scale`, `data.time_factors`: the reward's
        # settings too), in each language it validates, on every test (the public ones first).
        self.policy = JudgingPolicy(
            checker=cfg.validate_checker,
            time_limit_scale=cfg.time_limit_scale,
            time_factors=cfg.time_factors,
            languages=tuple(cfg.validate_languages),
            include_public_tests=True,
        )
        self.stats = ValidationStats(
            languages={language: LanguageStats() for language in cfg.validate_languages}
        )

    def solutions(self, solutions: dict[str, Any] | None, language: str) -> list[str]:
        """The accepted programs of `language` that validation runs."""
        return programs(solutions, language)[: self.cfg.validate_max_solutions]

    def run(self, candidates: Sequence[Candidate]) -> list[Decision | None]:
        """A decision per candidate; None for a problem with no accepted solution in the
        validated languages (kept as is)."""
        submissions = []
        owners: list[tuple[int, str]] = []
        for i, cand in enumerate(candidates):
            tests = [TestCase(input=a, output=b) for a, b in cand.problem.tests]
            for language, request in cand.problem.requests.items():
                graded = request.grader.grader().languages
                if graded is not None and language not in graded:
                    continue
                for src in self.solutions(cand.solutions, language):
                    submissions.append(RequestedSubmission(src, tests, request))
                    owners.append((i, language))
        workers = self.cfg.validate_workers or None
        reports = self.judge.judge_many(submissions, max_workers=workers) if submissions else []
        self.stats.solutions_run += len(submissions)
        runs: list[dict[str, list[list[str] | None]]] = [{} for _ in candidates]
        for (owner, language), report in zip(owners, reports, strict=True):
            verdicts = [str(t.verdict) for t in report.tests] if report.compile.ok else None
            runs[owner].setdefault(language, []).append(verdicts)
            self.stats.languages[language].solutions_run += 1
        decisions: list[Decision | None] = []
        limit = self.cfg.validate_max_dropped_fraction
        for cand, by_language in zip(candidates, runs, strict=True):
            if not by_language:
                self.stats.problems_without_solution += 1
                decisions.append(None)
                continue
            for language, language_runs in by_language.items():
                alone = decide(language_runs, len(cand.problem.tests), limit)
                stats = self.stats.languages[language]
                stats.problems += 1
                if alone.reason is None:
                    stats.kept += 1
                else:
                    stats.dropped[alone.reason] += 1
            self.stats.problems_validated += 1
            every = [run for language_runs in by_language.values() for run in language_runs]
            d = decide(every, len(cand.problem.tests), limit)
            if d.reason is None:
                self.stats.tests_dropped += len(cand.problem.tests) - len(d.kept_tests)
            decisions.append(d)
        return decisions


def language_table(validation: dict[str, Any]) -> str:
    """The manifest's validation per language as a console table: problems with accepted
    solutions in the language, kept and dropped (by reason) by those alone."""
    languages: dict[str, dict[str, Any]] = validation.get("languages") or {}
    reasons = sorted({r for stats in languages.values() for r in stats["dropped"]})
    header = ["language", "problems", "kept", "dropped", *reasons, "solutions run"]
    rows = [
        [
            name,
            str(stats["problems"]),
            str(stats["kept"]),
            str(sum(stats["dropped"].values())),
            *(str(stats["dropped"].get(r, 0)) for r in reasons),
            str(stats["solutions_run"]),
        ]
        for name, stats in languages.items()
    ]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(lines)
