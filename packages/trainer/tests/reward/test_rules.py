"""Reward rules: every verdict × mode, the same keys every time."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codefu_trainer.reward.config import RewardConfig, RewardMode
from codefu_trainer.reward.rules import RESULT_KEYS, JudgeSummary, score_report

JUDGE_VERDICTS = ["AC", "WA", "TLE", "MLE", "RE", "OLE", "CE", "SV", "IE"]


def summary(verdict: str, passed: int, total: int, tests: list[str] | None = None) -> JudgeSummary:
    if tests is None:
        tests = ["AC"] * passed + [verdict if verdict != "AC" else "WA"] * (total - passed)
    return JudgeSummary(verdict, tuple(tests), passed, total, 0.3, 0.01 * total)


def test_defaults_match_design() -> None:
    cfg = RewardConfig()
    assert score_report(None, cfg, has_code=False).score == -1.0
    ce = score_report(summary("CE", 0, 5, tests=[]), cfg)
    assert (ce.score, ce.verdict) == (-0.5, "CE")
    tle = score_report(summary("TLE", 3, 5, tests=["AC", "AC", "AC", "TLE", "WA"]), cfg)
    assert (tle.score, tle.verdict) == (0.0, "TLE")
    assert score_report(summary("WA", 3, 4), cfg).score == 0.75
    assert score_report(summary("AC", 4, 4), cfg).score == 1.0


def test_tle_anywhere_gives_timeout_score_even_if_overall_verdict_differs() -> None:
    cfg = RewardConfig(timeout_score=-0.1)
    res = score_report(summary("WA", 1, 3, tests=["AC", "TLE", "WA"]), cfg)
    assert (res.score, res.verdict) == (-0.1, "TLE")


@pytest.mark.parametrize("mode", list(RewardMode))
@pytest.mark.parametrize("verdict", JUDGE_VERDICTS)
def test_every_verdict_every_mode(mode: RewardMode, verdict: str) -> None:
    cfg = RewardConfig(mode=mode, power_exponent=2.0, judge_failure_score=-0.25)
    total = 4
    passed = 4 if verdict == "AC" else (0 if verdict in {"CE", "IE"} else 2)
    tests = [] if verdict == "CE" else None
    res = score_report(summary(verdict, passed, total, tests=tests), cfg).to_dict()
    assert tuple(res) == RESULT_KEYS
    expected = {
        "CE": -0.5,
        "TLE": 0.0,
        "IE": -0.25,
    }.get(verdict)
    if expected is None:
        ratio = passed / total
        expected = {
            RewardMode.linear: ratio,
            RewardMode.power: ratio**2.0,
            RewardMode.all_or_nothing: float(passed == total),
        }[mode]
    assert res["score"] == pytest.approx(expected)
    assert res["judge_failure"] == (1 if verdict == "IE" else 0)
    assert res["has_code"] == 1
    assert (res["passed"], res["total"]) == (passed, total)


@pytest.mark.parametrize("failure", ["DEADLINE", "WORKER_LOST", "JUDGE_ERROR"])
def test_failures_are_judge_failures(failure: str) -> None:
    cfg = RewardConfig(judge_failure_score=0.0, languages=["cpp", "python"])
    res = score_report(None, cfg, failure=failure, language="python").to_dict()
    assert res == {
        "score": 0.0,
        "verdict": failure,
        "passed": 0,
        "total": 0,
        "compile_seconds": 0.0,
        "run_seconds": 0.0,
        "judge_failure": 1,
        "has_code": 1,
        "language": "python",
    }


def test_no_report_without_reason_is_a_judge_error() -> None:
    assert score_report(None, RewardConfig()).verdict == "JUDGE_ERROR"


def test_zero_tests_is_a_judge_error_not_a_division() -> None:
    res = score_report(summary("AC", 0, 0, tests=[]), RewardConfig())
    assert (res.verdict, res.judge_failure) == ("JUDGE_ERROR", 1)


def test_no_code_keys() -> None:
    res = score_report(None, RewardConfig(), has_code=False).to_dict()
    assert tuple(res) == RESULT_KEYS
    assert (res["verdict"], res["has_code"], res["judge_failure"]) == ("NO_CODE", 0, 0)


@pytest.mark.parametrize("languages", [["cpp"], ["python"]])
def test_a_language_the_run_does_not_accept_gets_the_no_code_reward(languages: list[str]) -> None:
    cfg = RewardConfig(languages=languages, no_code_score=-0.75)
    other = "python" if languages == ["cpp"] else "cpp"
    # Even a report that passed: code in a refused language is never judged nor rewarded.
    res = score_report(summary("AC", 4, 4), cfg, language=other).to_dict()
    assert tuple(res) == RESULT_KEYS
    assert (res["score"], res["verdict"], res["has_code"], res["language"]) == (
        -0.75,
        "LANGUAGE",
        0,
        other,
    )
    assert (res["passed"], res["total"], res["judge_failure"]) == (0, 0, 0)
    accepted = score_report(summary("AC", 4, 4), cfg, language=languages[0]).to_dict()
    assert (accepted["score"], accepted["verdict"], accepted["language"]) == (
        1.0,
        "AC",
        languages[0],
    )


def test_summary_dict_round_trip() -> None:
    s = summary("WA", 1, 2)
    assert score_report(s.to_dict(), RewardConfig()) == score_report(s, RewardConfig())


def test_bad_config_values_are_rejected() -> None:
    with pytest.raises(ValueError, match="power_exponent"):
        RewardConfig(power_exponent=0)
    with pytest.raises(ValueError):
        RewardConfig(mode="bogus")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"reward\.languages is empty"):
        RewardConfig(languages=[])
    with pytest.raises(ValueError, match="unknown language 'java'"):
        RewardConfig(languages=["cpp", "java"])
    with pytest.raises(ValueError, match="twice"):
        RewardConfig(languages=["cpp", "cpp"])
    with pytest.raises(ValueError, match=r"reward\.time_factors: unknown language 'rust'"):
        RewardConfig(time_factors={"rust": 2.0})
    with pytest.raises(ValueError, match=r"reward\.time_factors\.python must be > 0"):
        RewardConfig(time_factors={"python": 0.0})


@given(
    passed=st.integers(0, 50),
    extra=st.integers(0, 50),
    mode=st.sampled_from(list(RewardMode)),
    exponent=st.floats(0.1, 5),
)
def test_property_fraction_reward_bounded_and_monotone(
    passed: int, extra: int, mode: RewardMode, exponent: float
) -> None:
    total = passed + extra
    if total == 0:
        return
    cfg = RewardConfig(mode=mode, power_exponent=exponent)
    verdict = "AC" if extra == 0 else "WA"
    score = score_report(summary(verdict, passed, total), cfg).score
    assert 0.0 <= score <= 1.0
    assert (score == 1.0) == (extra == 0) or (mode is RewardMode.power and math.isclose(score, 1.0))
    if passed < total:
        better = score_report(summary("WA" if extra > 1 else "AC", passed + 1, total), cfg).score
        assert better >= score
