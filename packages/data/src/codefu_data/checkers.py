"""Per-problem checker programs: where they come from and how `prepare` validates them.

A checker enters from the data (`data.checkers`): a dataset column holding its source
(`column`), or a folder of files named after the problem (`folder`: `<stem><suffix>` with a
judge language's suffix, `<stem>.cpp` or `<stem>.py`, the stem from `checker_file_stem`).
It is untrusted code, run by codefu-sandbox in its sandbox (protocol: `checker INPUT OUTPUT
ANSWER`, testlib's exit codes). A problem trains with its checker only once the checker
passed validation on every kept test (`validate_checker`):

- the expected output is accepted;
- true positive rate: the share of known accepted C++ programs (`solutions`) that it
  accepts on every test, among those that ran within the limits on every test;
- true negative rate: the share of known incorrect C++ programs (`incorrect_solutions`)
  that exit normally within the limits on every test and print something else than the
  expected output (compared token by token) on some test, that it rejects on some test.

Pure of I/O except reading the folder and running the judge.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codefu_data.config import AUTO, CheckersConfig
from codefu_sandbox import (
    CheckerConfig,
    CheckerError,
    Judge,
    Limits,
    Submission,
    TestCase,
    Verdict,
    checker_program,
)
from codefu_sandbox.languages import DEFAULT_LANGUAGE, LANGUAGES, get

# Drop reasons (manifest `checkers`).
CHECKER_BROKEN = "checker_broken"
CHECKER_FAILED = "checker_failed"
CHECKER_REJECTS_EXPECTED = "checker_rejects_expected_output"
CHECKER_REJECTS_ACCEPTED = "checker_rejects_accepted_program"
CHECKER_ACCEPTS_INCORRECT = "checker_accepts_incorrect_program"
CHECKER_UNVALIDATED = "checker_without_known_programs"
# Verdicts of a program that did not end normally within its limits.
ABNORMAL = frozenset({Verdict.TLE, Verdict.MLE, Verdict.RE, Verdict.OLE, Verdict.SV, Verdict.CE})
_UNSAFE = re.compile(r'[/\\<>:"|?*\x00-\x1f]')


@dataclass(frozen=True)
class Checker:
    """A checker program: its (judge) language and source."""

    language: str
    source: str

    def to_dict(self) -> dict[str, str]:
        return {"language": self.language, "source": self.source}


def checker_file_stem(name: str) -> str:
    """The file name (without suffix) of problem `name`'s checker in a checker folder:
    the name with each character a file name cannot hold on Linux, macOS or Windows
    (`/ \\ < > : " | ? *` and control characters) replaced by `_`, and leading dots
    dropped ("1056_A. Determine Line" stays as it is)."""
    return _UNSAFE.sub("_", name).lstrip(".") or "_"


def detect_language(source: str) -> str:
    """The language of a checker source: the first judge language that recognises it
    (`Language.recognises`: C++ when it has an `#include <...>` or `#include "..."` line,
    Python when it parses as Python 3), else the default language."""
    found = next((lang for lang in LANGUAGES.values() if lang.recognises(source)), None)
    return found.name if found is not None else DEFAULT_LANGUAGE


def checker_from_column(value: Any, language: str) -> Checker | None:
    """The checker in a row's column value (a source string; null or blank: none)."""
    if not isinstance(value, str) or not value.strip():
        return None
    return Checker(detect_language(value) if language == AUTO else language, value)


def checker_from_folder(folder: str | Path, name: str) -> Checker | None:
    """The checker file of problem `name` in `folder` (`<stem><suffix>`, a judge language's
    suffix: `<stem>.cpp`, `<stem>.py`).

    Raises ValueError when both exist: say which one is the checker by removing the other."""
    stem = checker_file_stem(name)
    found = [
        (Path(folder) / f"{stem}{suffix}", language.name)
        for language in LANGUAGES.values()
        for suffix in language.suffixes
        if (Path(folder) / f"{stem}{suffix}").is_file()
    ]
    if len(found) > 1:
        raise ValueError(
            f"{folder}: both {found[0][0].name} and {found[1][0].name} exist for problem "
            f"{name!r}; keep one"
        )
    if not found:
        return None
    path, language = found[0]
    return Checker(language, path.read_text(errors="surrogateescape"))


@dataclass
class CheckerVerdict:
    """The validation of one problem's checker: `reason` None when it passed."""

    reason: str | None
    tpr: float | None = None
    tnr: float | None = None
    accepted_programs: int = 0  # known accepted programs that ran within the limits
    incorrect_programs: int = 0  # known incorrect programs that exit normally and differ
    detail: str = ""
    source: str = ""  # the source the judge runs (testlib.h inlined)

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": "kept" if self.reason is None else self.reason,
            "tpr": self.tpr,
            "tnr": self.tnr,
            "accepted_programs": self.accepted_programs,
            "incorrect_programs": self.incorrect_programs,
            "detail": self.detail[:300],
        }


@dataclass(frozen=True)
class CheckerCandidate:
    """One problem whose checker to validate."""

    name: str
    checker: Checker
    tests: list[tuple[str, str]]
    time_seconds: float
    memory_bytes: int
    accepted: list[str] = field(default_factory=list)
    incorrect: list[str] = field(default_factory=list)


def checker_config(checker: Checker, source: str, cfg: CheckersConfig) -> CheckerConfig:
    """The codefu-sandbox configuration that judges with `checker`, whose `source` has
    testlib.h inlined (its own limits per test: `data.checkers`); the ground truth stores
    its `to_dict()`."""
    return checker_program(
        source,
        checker.language,
        time_seconds=cfg.time_seconds,
        memory_bytes=cfg.memory_bytes,
    )


def validate_checker(judge: Judge, cand: CheckerCandidate, cfg: CheckersConfig) -> CheckerVerdict:
    """Validate one checker with a codefu_sandbox `Judge`, through its public face (see the
    module docstring): the checker is built (`Judge.prepare_checker`), then asked about each
    expected output (`Judge.check_output`), then judges the known programs (`judge_many`)."""
    try:
        language = get(cand.checker.language)
        source = language.checker_source(cand.checker.source, cfg.testlib or "")
        config = checker_config(cand.checker, source, cfg)
        judge.prepare_checker(config)
    except CheckerError as exc:
        return CheckerVerdict(CHECKER_BROKEN, detail=str(exc))
    for index, (test_in, test_out) in enumerate(cand.tests):
        result = judge.check_output(config, test_out, test_out, input=test_in)
        if result.internal_error:
            return CheckerVerdict(CHECKER_FAILED, detail=f"test {index}: {result.message}")
        if not result.ok:
            return CheckerVerdict(
                CHECKER_REJECTS_EXPECTED, detail=f"test {index}: {result.message}"
            )
    tests = [TestCase(a, b) for a, b in cand.tests]
    problem_limits = Limits(cand.time_seconds, cand.memory_bytes)
    accepted = cand.accepted[: cfg.max_programs]
    incorrect = cand.incorrect[: cfg.max_programs]
    workers = cfg.workers or None
    plain = judge.judge_many(
        [Submission(src, tests, problem_limits, "tokens") for src in incorrect],
        max_workers=workers,
    )
    differing = [
        src
        for src, report in zip(incorrect, plain, strict=True)
        if report.compile.ok
        and not ABNORMAL.intersection(t.verdict for t in report.tests)
        and any(t.verdict is Verdict.WA for t in report.tests)
    ]
    reports = judge.judge_many(
        [  # a verdict per program is enough: each stops at its first failing test
            Submission(src, tests, problem_limits, config, stop_on_first_failure=True)
            for src in [*accepted, *differing]
        ],
        max_workers=workers,
    )
    for report in reports:
        failed = [t for t in report.tests if t.verdict is Verdict.IE]
        if failed:
            return CheckerVerdict(CHECKER_FAILED, detail=failed[0].message, source=source)
    ran = [r for r in reports[: len(accepted)] if _within_limits(r)]
    positives = sum(r.verdict is Verdict.AC for r in ran)
    negatives = sum(r.verdict is not Verdict.AC for r in reports[len(accepted) :])
    verdict = CheckerVerdict(
        None,
        tpr=positives / len(ran) if ran else None,
        tnr=negatives / len(differing) if differing else None,
        accepted_programs=len(ran),
        incorrect_programs=len(differing),
        source=source,
    )
    if len(ran) < cfg.min_accepted or len(differing) < cfg.min_incorrect:
        verdict.reason = CHECKER_UNVALIDATED
        verdict.detail = (
            f"{len(ran)} accepted and {len(differing)} incorrect known programs to validate "
            f"with; data.checkers asks for {cfg.min_accepted} and {cfg.min_incorrect}"
        )
    elif verdict.tpr is not None and verdict.tpr < cfg.min_tpr:
        verdict.reason = CHECKER_REJECTS_ACCEPTED
        verdict.detail = f"TPR {verdict.tpr:.2f} < {cfg.min_tpr}"
    elif verdict.tnr is not None and verdict.tnr < cfg.min_tnr:
        verdict.reason = CHECKER_ACCEPTS_INCORRECT
        verdict.detail = f"TNR {verdict.tnr:.2f} < {cfg.min_tnr}"
    return verdict


def _within_limits(report: Any) -> bool:
    """Compiled, and no test ended by a limit or a crash (those say nothing of the checker)."""
    return bool(report.compile.ok) and not ABNORMAL.intersection(t.verdict for t in report.tests)


def verdict_table(verdicts: Mapping[str, Mapping[str, Any]]) -> str:
    """A text table of the manifest's checker verdicts, one problem per line."""
    rows = [("problem", "verdict", "TPR", "TNR", "accepted", "incorrect")]
    for name, v in sorted(verdicts.items()):
        rows.append(
            (
                name,
                str(v["verdict"]),
                _rate(v["tpr"]),
                _rate(v["tnr"]),
                str(v["accepted_programs"]),
                str(v["incorrect_programs"]),
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


__all__: Sequence[str] = (
    "CHECKER_ACCEPTS_INCORRECT",
    "CHECKER_BROKEN",
    "CHECKER_FAILED",
    "CHECKER_REJECTS_ACCEPTED",
    "CHECKER_REJECTS_EXPECTED",
    "CHECKER_UNVALIDATED",
    "Checker",
    "CheckerCandidate",
    "CheckerVerdict",
    "checker_file_stem",
    "checker_from_column",
    "checker_from_folder",
    "validate_checker",
    "verdict_table",
)
