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
    from codefu_sandbox import judge_time_seconds

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
    from codefu_data.validate import Validator
    from codefu_sandbox.rules import JudgingRules

    class Recorder:
        def __init__(self) -> None:
            self.policy = Validator(DataConfig(time_limit_scale=2.5)).policy
            self.seen: list[object] = []

        def run(self, candidates: list[object]) -> list[None]:
            self.seen.extend(candidates)
            return [None for _ in candidates]

    tests = {"input": ["1\n"], "output": ["1\n"]}
    row = {
        "public_tests": tests,
        "private_tests": tests,
        "name": "p",
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
    [problem] = [c.problem for c in recorder.seen]  # type: ignore[attr-defined]
    assert problem.requests["cpp"].limits.time_seconds == 5.0
    assert problem.tests == (("1\n", "1\n"), ("1\n", "1\n"))  # public, then private


CPP_SUM = (
    '#include <cstdio>\nint main(){long long a,b;std::scanf("%lld %lld",&a,&b);'
    'std::printf("%lld\\n",a+b);}\n'
)
PY_SUM = "a, b = map(int, input().split())\nprint(a + b)\n"
PY_DIFF = "a, b = map(int, input().split())\nprint(a - b)\n"
# 0.4 s of CPU, then the sum: AC under a 0.5 s limit, TLE under half of it.
PY_BURN = "import time\nwhile time.process_time() < 0.4:\n    pass\n" + PY_SUM


@pytest.mark.slow
def test_python_solutions_are_validated_too_with_a_table_per_language() -> None:
    from codefu_data.config import DataConfig
    from codefu_data.validate import Candidate, Validator, language_table

    def ground_truth() -> dict[str, object]:
        inputs = [f"{a} 3\n" for a in (1, 5, 9)]
        return {
            "name": "sum",
            "time_limit": {"seconds": 0, "nanos": 500_000_000},
            "memory_limit_bytes": 256 << 20,
            "private_tests": {"input": inputs, "output": [f"{a + 3}\n" for a in (1, 5, 9)]},
        }

    def candidate(*solutions: tuple[int, str], on: Validator | None = None) -> Candidate:
        struct = {"language": [s[0] for s in solutions], "solution": [s[1] for s in solutions]}
        return Candidate((on or validator).policy.problem(ground_truth()), struct)

    cfg = DataConfig(validate_languages=["cpp", "python"], time_factors={"python": 0.5})
    validator = Validator(cfg)
    decisions = validator.run(
        [
            candidate((2, CPP_SUM), (3, PY_SUM), (1, "print 'python 2 is not run'")),
            # Python's solution is too slow under its factor: C++ alone keeps the tests.
            candidate((2, CPP_SUM), (3, PY_BURN)),
            candidate((3, PY_SUM), (3, PY_DIFF)),  # Python only, and they disagree
            candidate((4, "class Main {}")),  # Java: nothing to run
        ]
    )
    assert decisions == [
        Decision(None, (0, 1, 2)),
        Decision(None, (0, 1, 2)),
        Decision(ACCEPTED_SOLUTIONS_DISAGREE, ()),
        None,
    ]
    stats = validator.stats.as_dict()
    assert (stats["problems_validated"], stats["problems_without_solution"]) == (3, 1)
    assert stats["solutions_run"] == 6
    assert stats["languages"] == {
        "cpp": {"problems": 2, "kept": 2, "dropped": {}, "solutions_run": 2},
        "python": {
            "problems": 3,
            "kept": 1,
            "dropped": {ACCEPTED_SOLUTIONS_DISAGREE: 1, ACCEPTED_SOLUTIONS_FAIL: 1},
            "solutions_run": 4,
        },
    }
    table = language_table(stats).splitlines()
    assert table[0].split() == [
        "language", "problems", "kept", "dropped", ACCEPTED_SOLUTIONS_DISAGREE,
        ACCEPTED_SOLUTIONS_FAIL, "solutions", "run",
    ]  # fmt: skip
    assert table[2].split() == ["cpp", "2", "2", "0", "0", "0", "2"]
    assert table[3].split() == ["python", "3", "1", "2", "1", "1", "4"]
    # C++ only by default: the Python solutions are not run.
    cpp_only = Validator(DataConfig())
    assert cpp_only.run([candidate((3, PY_SUM), on=cpp_only)]) == [None]
    assert cpp_only.stats.as_dict()["languages"] == {
        "cpp": {"problems": 0, "kept": 0, "dropped": {}, "solutions_run": 0}
    }
