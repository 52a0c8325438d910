"""Tests `prepare` cannot judge with: expected outputs the dataset visibly cut off
(`judging_rules.truncated_output`) are dropped, and a problem left without a private test
is dropped (reason `all_private_tests_truncated`).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from codefu_data.judging_rules import truncated_output
from codefu_data.manifest import PrepareStats

# Drop reason of a problem whose private tests all had a truncated expected output.
ALL_PRIVATE_TESTS_TRUNCATED = "all_private_tests_truncated"
# Outputs worth asking `truncated_output` about: those ending in an ellipsis.
TRUNCATION_HINT = r"(?:\.\.\.|…)\s*$"
# The (public, private) tests of some rows, each {"input": [...], "output": [...]}.
TestsOverride = tuple[list[dict[str, list[str]]], list[dict[str, list[str]]]]


def tests_of(value: dict[str, Any] | None) -> dict[str, list[str]]:
    """A CodeContests tests struct (or null) as plain lists."""
    value = value or {}
    return {"input": list(value.get("input") or []), "output": list(value.get("output") or [])}


def without_truncated_outputs(
    table: pa.Table, rows: list[int], stats: PrepareStats
) -> TestsOverride | None:
    """The (public, private) tests of `rows` without the tests whose expected output is
    visibly truncated; None when no row has such a test (the tests stay in Arrow)."""
    suspects: set[int] = set()
    for column in ("public_tests", "private_tests"):
        outputs = pc.struct_field(table.column(column).combine_chunks(), "output")
        ends = pc.match_substring_regex(pc.list_flatten(outputs), TRUNCATION_HINT)
        if not pc.any(ends).as_py():
            continue
        parents = pc.list_parent_indices(outputs).to_numpy()
        suspects.update(int(p) for p in parents[ends.to_numpy(zero_copy_only=False)])
    if not suspects.intersection(rows):
        return None
    sub = table.take(pa.array(rows, pa.int64()))
    publics, privates = [], []
    for public, private in zip(
        sub.column("public_tests").to_pylist(), sub.column("private_tests").to_pylist(), strict=True
    ):
        kept_sets = []
        for tests in (tests_of(public), tests_of(private)):
            keep = [j for j, out in enumerate(tests["output"]) if not truncated_output(out)]
            stats.truncated_tests += len(tests["output"]) - len(keep)
            kept_sets.append(
                {
                    "input": [tests["input"][j] for j in keep],
                    "output": [tests["output"][j] for j in keep],
                }
            )
        publics.append(kept_sets[0])
        privates.append(kept_sets[1])
    return publics, privates


def drop_untestable(
    rows: list[int], tests: TestsOverride, counts: dict[str, int]
) -> tuple[list[int], TestsOverride]:
    """Drop the rows left without a private test (reason `all_private_tests_truncated`)."""
    kept_rows: list[int] = []
    publics, privates = [], []
    for row, public, private in zip(rows, *tests, strict=True):
        if not private["input"]:
            counts["kept"] -= 1
            counts[ALL_PRIVATE_TESTS_TRUNCATED] += 1
            continue
        kept_rows.append(row)
        publics.append(public)
        privates.append(private)
    return kept_rows, (publics, privates)
