"""`prepare`'s judging of a batch's kept rows: the accepted solutions over their tests
(`data.validate`, `validate.Validator`) and each problem's checker program
(`data.checkers`, `checkers.validate_checker`).
"""

from __future__ import annotations

from collections.abc import Collection

import pyarrow as pa

from codefu_data.checkers import Checker, CheckerCandidate, validate_checker
from codefu_data.clean_tests import TestsOverride, tests_of
from codefu_data.config import DataConfig
from codefu_data.manifest import Counts, PrepareStats
from codefu_data.solutions import programs
from codefu_data.validate import NO_PRIVATE_TESTS_AFTER_VALIDATION, Candidate, Validator
from codefu_sandbox import Judge, judge_time_seconds
from codefu_sandbox.rules import JudgingRules


def validate_rows(
    validator: Validator,
    *,
    table: pa.Table,
    rows: list[int],
    rules: list[JudgingRules],
    tests: TestsOverride | None,
    tier: str,
    split: str,
    counts: Counts,
    skip: Collection[int] = (),
) -> tuple[list[int], TestsOverride, set[int]]:
    """Run the accepted solutions, each problem through its grader and with the comparison
    its source fixes, if any; returns the rows still kept, their (public, private) tests,
    and those of them that were validated.

    Rows in `skip` (those with a checker program, validated by `validate_checker_rows`) are
    kept as they are."""
    sub = table.take(pa.array(rows, pa.int64())).to_pylist()
    if tests is None:
        tests = (
            [tests_of(r["public_tests"]) for r in sub],
            [tests_of(r["private_tests"]) for r in sub],
        )
    candidates = []
    for row, r, rule, pub, priv in zip(rows, sub, rules, *tests, strict=True):
        # The problem as its ground truth will state it (its tests the cleaned ones).
        ground_truth = {
            "name": r["name"],
            "time_limit": r["time_limit"],
            "memory_limit_bytes": r["memory_limit_bytes"],
            "public_tests": pub,
            "private_tests": priv,
            "judging_rules": rule.to_dict(),
            "checker": r.get("source_checker"),
            "grader": r.get("grader"),
        }
        candidates.append(
            Candidate(
                validator.policy.problem(ground_truth),
                None if row in skip else r.get("solutions"),
            )
        )
    decisions = validator.run(candidates)
    kept_rows: list[int] = []
    validated: set[int] = set()
    publics: list[dict[str, list[str]]] = []
    privates: list[dict[str, list[str]]] = []
    for row, pub, cand, d in zip(rows, tests[0], candidates, decisions, strict=True):
        n_pub = len(pub["input"])
        keep = range(len(cand.problem.tests)) if d is None else d.kept_tests
        reason = None if d is None else d.reason
        pub_idx = [t for t in keep if t < n_pub]
        priv_idx = [t for t in keep if t >= n_pub]
        if reason is None and not priv_idx:
            reason = NO_PRIVATE_TESTS_AFTER_VALIDATION
        if reason is not None:
            counts[tier][split]["kept"] -= 1
            counts[tier][split][reason] += 1
            continue
        kept_rows.append(row)
        if d is not None:
            validated.add(row)
        publics.append(
            {
                "input": [cand.problem.tests[t][0] for t in pub_idx],
                "output": [cand.problem.tests[t][1] for t in pub_idx],
            }
        )
        privates.append(
            {
                "input": [cand.problem.tests[t][0] for t in priv_idx],
                "output": [cand.problem.tests[t][1] for t in priv_idx],
            }
        )
    return kept_rows, (publics, privates), validated


def validate_checker_rows(
    cfg: DataConfig,
    judge: Judge,
    *,
    table: pa.Table,
    rows: list[int],
    checkers: dict[int, Checker],
    tests: TestsOverride | None,
    stats: PrepareStats,
    counts: dict[str, int],
) -> tuple[list[int], TestsOverride, dict[int, str]]:
    """Validate the checker of each row that has one on all its tests; returns the rows
    kept, their tests, and the source to judge with (testlib.h inlined) per kept row."""
    sub = table.take(pa.array(rows, pa.int64())).to_pylist()
    if tests is None:
        tests = (
            [tests_of(r["public_tests"]) for r in sub],
            [tests_of(r["private_tests"]) for r in sub],
        )
    kept_rows: list[int] = []
    publics: list[dict[str, list[str]]] = []
    privates: list[dict[str, list[str]]] = []
    sources: dict[int, str] = {}
    for row, r, pub, priv in zip(rows, sub, *tests, strict=True):
        if row in checkers:
            pairs = list(zip(pub["input"], pub["output"], strict=True)) + list(
                zip(priv["input"], priv["output"], strict=True)
            )
            verdict = validate_checker(
                judge,
                CheckerCandidate(
                    name=r["name"],
                    checker=checkers[row],
                    tests=pairs,
                    time_seconds=judge_time_seconds(
                        r["time_limit"], scale=cfg.time_limit_scale, default=1.0
                    ),
                    memory_bytes=r["memory_limit_bytes"],
                    accepted=programs(r.get("solutions")),
                    incorrect=programs(r.get("incorrect_solutions")),
                ),
                cfg.checkers,
            )
            stats.checkers[r["name"]] = verdict.to_dict()
            if verdict.reason is not None:
                counts["kept"] -= 1
                counts[verdict.reason] += 1
                continue
            sources[row] = verdict.source
        kept_rows.append(row)
        publics.append(pub)
        privates.append(priv)
    return kept_rows, (publics, privates), sources
