"""Validation decisions (pure) and, when codefu_sandbox's Judge exists, a real validated run."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codefu_data.validate import (
    ACCEPTED_SOLUTIONS_DISAGREE,
    ACCEPTED_SOLUTIONS_FAIL,
    VALIDATION_JUDGE_ERROR,
    Decision,
    decide,
)


def test_all_pass_keeps_every_test() -> None:
    assert decide([["AC", "AC", "AC"], ["AC", "AC", "AC"]], 3, 0.5) == Decision(None, (0, 1, 2))


def test_a_test_nobody_passes_is_dropped() -> None:
    assert decide([["AC", "WA", "AC", "AC"], ["AC", "TLE", "AC", "AC"]], 4, 0.5) == Decision(
        None, (0, 2, 3)
    )


def test_disagreement_drops_the_problem() -> None:
    assert decide([["AC", "AC"], ["AC", "WA"]], 2, 0.5).reason == ACCEPTED_SOLUTIONS_DISAGREE


def test_failing_solutions_drop_the_problem() -> None:
    assert decide([None, None], 3, 0.5).reason == ACCEPTED_SOLUTIONS_FAIL
    assert decide([["WA", "WA", "AC"]], 3, 0.5).reason == ACCEPTED_SOLUTIONS_FAIL
    assert decide([["RE", "RE"]], 2, 1.0).reason == ACCEPTED_SOLUTIONS_FAIL
    assert decide([["AC", "AC", "IE"]], 3, 0.5).reason == VALIDATION_JUDGE_ERROR


def test_a_solution_that_does_not_compile_is_ignored() -> None:
    assert decide([None, ["AC", "AC"]], 2, 0.5) == Decision(None, (0, 1))


VERDICTS = st.sampled_from(["AC", "WA", "TLE", "RE", "MLE"])


@given(
    st.integers(min_value=1, max_value=6).flatmap(
        lambda n: st.tuples(
            st.just(n), st.lists(st.lists(VERDICTS, min_size=n, max_size=n), min_size=1, max_size=3)
        )
    )
)
def test_kept_tests_are_passed_by_some_solution_and_by_none_wrongly(
    case: tuple[int, list[list[str]]],
) -> None:
    n, runs = case
    d = decide(runs, n, 0.5)
    if d.reason is None:
        assert d.kept_tests
        for t in d.kept_tests:
            column = [r[t] for r in runs]
            assert "AC" in column and "WA" not in column
        for t in set(range(n)) - set(d.kept_tests):
            assert all(r[t] != "AC" for r in runs)


def test_the_judges_time_limit_is_the_statements_times_the_scale() -> None:
    from codefu_data.schema import judge_time_seconds

    assert judge_time_seconds({"seconds": 2, "nanos": 500_000_000}, scale=2.0) == 5.0
    assert judge_time_seconds(1.5, scale=1.0) == 1.5
    assert judge_time_seconds(None, scale=3.0, default=2.0) == 6.0  # the default is scaled too
    assert judge_time_seconds({"seconds": 0, "nanos": 0}, scale=1.0, default=2.0) == 2.0
    with pytest.raises(ValueError, match="no time limit"):
        judge_time_seconds({"seconds": None}, scale=1.0)


def test_validation_judges_under_the_scaled_time_limit() -> None:
    import pyarrow as pa

    from codefu_data.batch_checks import validate_rows
    from codefu_data.config import DataConfig
    from codefu_sandbox.rules import JudgingRules

    class Recorder:
        def __init__(self) -> None:
            self.cfg = DataConfig(time_limit_scale=2.5)
            self.seen: list[object] = []

        def run(self, candidates: list[object]) -> list[None]:
            self.seen.extend(candidates)
            return [None for _ in candidates]

    tests = {"input": ["1\n"], "output": ["1\n"]}
    row = {
        "public_tests": tests,
        "private_tests": tests,
        "time_limit": {"seconds": 2, "nanos": 0},
        "memory_limit_bytes": 256 << 20,
        "solutions": None,
    }
    counts: dict[str, dict[str, dict[str, int]]] = {"easy": {"train": {"kept": 1}}}
    recorder = Recorder()
    validate_rows(
        recorder,  # type: ignore[arg-type]
        table=pa.Table.from_pylist([row]),
        rows=[0],
        rules=[JudgingRules()],
        tests=None,
        tier="easy",
        split="train",
        counts=counts,  # type: ignore[arg-type]
    )
    assert [c.time_seconds for c in recorder.seen] == [5.0]  # type: ignore[attr-defined]
