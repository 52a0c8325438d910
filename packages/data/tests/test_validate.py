"""Validation decisions (pure) and, when codefu_sandbox's Judge exists, a real validated run."""

from __future__ import annotations

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
