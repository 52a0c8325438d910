"""Reading ground truths under the reward's policy (the sandbox's requests) and
per-response deadlines: pure functions."""

from __future__ import annotations

import json
from typing import Any

import pytest

from codefu_sandbox import CheckerConfig, JudgeRequest, Problem
from codefu_sandbox.graders.base import per_test_run_limits, wall_backstop
from codefu_sandbox.judge import DEFAULT_OUTPUT_LIMIT
from codefu_trainer.reward.config import DeadlineConfig, RewardConfig
from codefu_trainer.reward.service import RewardService, deadline_seconds, problem_key

from .problems import sum_ground_truth


def problem_from_ground_truth(gt: Any, cfg: RewardConfig) -> Problem:
    return cfg.policy().problem(gt)


def request(gt: Any, cfg: RewardConfig, language: str = "cpp") -> JudgeRequest:
    return problem_from_ground_truth(gt, cfg).requests[language]


def test_reads_limits_and_private_tests() -> None:
    gt = sum_ground_truth(n_private=3, seconds=2.0, public=2)
    gt["time_limit"] = {"seconds": 2.0, "nanos": 500_000_000.0}
    p = problem_from_ground_truth(gt, RewardConfig())
    limits = p.requests["cpp"].limits
    assert (p.name, len(p.tests), limits.time_seconds, limits.memory_bytes) == (
        "sum",
        3,
        2.5,
        256 << 20,
    )
    assert p.tests[1] == ("7 2\n", "9\n")
    assert list(p.requests) == ["cpp"]  # one request per language the reward accepts


def test_public_tests_are_added_on_request_first_and_json_text_works() -> None:
    gt = sum_ground_truth(n_private=3, public=2)
    p = problem_from_ground_truth(json.dumps(gt), RewardConfig(include_public_tests=True))
    # The examples first, then the private tests, as LiveCodeBench runs them.
    assert len(p.tests) == 5 and p.tests[:2] == (("1 2\n", "3\n"),) * 2
    assert p.tests[2:] == problem_from_ground_truth(gt, RewardConfig()).tests


def test_missing_limits_take_defaults_and_scale() -> None:
    gt = sum_ground_truth()
    gt["time_limit"] = None
    gt["memory_limit_bytes"] = 0
    cfg = RewardConfig(default_time_limit_seconds=3.0, time_limit_scale=2.0)
    limits = request(gt, cfg).limits
    assert (limits.time_seconds, limits.memory_bytes) == (6.0, cfg.default_memory_limit_bytes)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda gt: gt["private_tests"]["output"].pop(), "inputs but"),
        (lambda gt: gt.__setitem__("private_tests", [1, 2]), "mapping with 'input'"),
    ],
)
def test_malformed_tests_are_errors(mutate, message: str) -> None:  # type: ignore[no-untyped-def]
    gt = sum_ground_truth()
    mutate(gt)
    with pytest.raises(ValueError, match=message):
        problem_from_ground_truth(gt, RewardConfig())


def test_deadline_grows_with_tests_and_limit_and_is_capped() -> None:
    cfg = RewardConfig(
        deadline=DeadlineConfig(
            compile_seconds=10,
            wall_factor=3,
            per_test_overhead_seconds=0.5,
            slack_seconds=5,
            max_seconds=100,
        )
    )
    small = request(sum_ground_truth(n_private=4, seconds=1.0), cfg)
    assert deadline_seconds(small, cfg.deadline) == pytest.approx(10 + 4 * 3.5 + 5)
    big = request(sum_ground_truth(n_private=400, seconds=2.0), cfg)
    assert deadline_seconds(big, cfg.deadline) == 100


@pytest.mark.parametrize("factor", [1.5, 2.0, 3.0, 5.0])
def test_a_python_deadline_covers_the_time_the_judge_allows_every_test(factor: float) -> None:
    """At time factor f a Python answer's request gives it f times the problem's limit on
    each test, which the judge applies as it is, and each run that CPU limit's wall
    backstop (`per_test_run_limits`): the response's deadline must cover all of it, or a
    slow but passing answer ends as DEADLINE (a judge failure) instead of AC."""
    cfg = RewardConfig(
        languages=["cpp", "python"],
        time_factors={"cpp": 1.0, "python": factor},
        deadline=DeadlineConfig(max_seconds=1e9),
    )
    allowance = cfg.deadline.compile_seconds + cfg.deadline.slack_seconds
    for seconds in (0.5, 1.0, 2.5):
        for tests in (1, 7, 40):
            problem = problem_from_ground_truth(
                sum_ground_truth(n_private=tests, seconds=seconds), cfg
            )
            python, cpp = problem.requests["python"], problem.requests["cpp"]
            assert python.limits.time_seconds == pytest.approx(factor * seconds)
            wall = per_test_run_limits(python.limits, DEFAULT_OUTPUT_LIMIT).wall_seconds
            judged = deadline_seconds(python, cfg.deadline) - allowance
            assert judged >= tests * wall - 1e-9, (seconds, tests)
            # C++ keeps the problem's own limit.
            assert cpp.limits.time_seconds == seconds
            judged_cpp = deadline_seconds(cpp, cfg.deadline) - allowance
            assert judged_cpp == pytest.approx(tests * wall_backstop(seconds))


def test_judging_rules_become_the_checkers_parameters() -> None:
    gt = sum_ground_truth()
    assert request(gt, RewardConfig()).checker == CheckerConfig(
        "codecontests", {"tolerance": 1e-6}
    )  # no rules: the reward's default tolerance, as before rules existed
    gt["judging_rules"] = {
        "any_case_words": ["YES", "NO"],
        "float_tolerance": 1e-4,
        "tolerance_mode": "absolute",
        "several_answers": False,
    }
    assert request(json.dumps(gt), RewardConfig()).checker.params == {
        "tolerance": 1e-4,
        "tolerance_mode": "absolute",
        "real_numbers": True,
        "any_case_words": ["NO", "YES"],
    }
    floats = request(gt, RewardConfig(checker="floats")).checker
    assert floats == CheckerConfig("floats", {"precision": 1e-4})
    assert request(gt, RewardConfig(checker="tokens")).checker == CheckerConfig("tokens")
    gt["judging_rules"]["tolerance_mode"] = "loose"
    with pytest.raises(ValueError, match="tolerance_mode"):
        problem_from_ground_truth(gt, RewardConfig())


def test_the_request_carries_the_rewards_stopping_rules() -> None:
    gt = sum_ground_truth()
    linear = request(gt, RewardConfig())
    assert (linear.stop_on_first_failure, set(linear.stop_on)) == (False, {"TLE"})
    strict = request(gt, RewardConfig(mode="all_or_nothing", stop_on_timeout=False))
    assert (strict.stop_on_first_failure, set(strict.stop_on)) == (True, set())


def test_a_groups_samples_share_one_prepared_problem() -> None:
    """veRL scores a group's samples one call each: the tests are parsed and stored once."""
    service = RewardService(RewardConfig(), local=True)
    try:
        gt = sum_ground_truth()
        first = service._prepared(gt)
        assert service._prepared(json.dumps(gt)) is first  # equal ground truths, one entry
        other = sum_ground_truth(name="other")
        assert service._prepared(other) is not first
        changed = sum_ground_truth()
        changed["private_tests"]["output"][0] = "1000\n"  # same name, other tests
        assert service._prepared(changed).digest != first.digest
        ruled = {**sum_ground_truth(), "judging_rules": {"any_case_words": ["YES"]}}
        assert service._prepared(ruled).problem.rules.any_case_words == ("YES",)
    finally:
        service.close()


def test_a_ground_truth_checker_program_judges_instead_of_the_comparison() -> None:
    gt = sum_ground_truth()
    checker = {
        "name": "program",
        "params": {
            "source": "import sys\nsys.exit(0)\n",
            "language": "python",
            "time_seconds": 5.0,
            "memory_bytes": 1 << 28,
        },
    }
    plain = request(gt, RewardConfig())
    assert plain.checker == CheckerConfig("codecontests", {"tolerance": 1e-6})
    gt["checker"] = checker
    judged = request(json.dumps(gt), RewardConfig())
    assert judged.checker == CheckerConfig.from_dict(checker)
    assert judged.checker.to_dict() == checker  # what prepare stores, read back as it was
    assert problem_key(gt) != problem_key(sum_ground_truth())  # not shared with the plain one
    gt["checker"] = {"name": "program", "params": {"source": "x", "language": "ruby"}}
    with pytest.raises(ValueError, match="language must be one of"):
        problem_from_ground_truth(gt, RewardConfig())
