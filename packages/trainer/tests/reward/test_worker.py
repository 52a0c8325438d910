"""The judge worker body in-process (no Ray): judging that stops at the first TLE."""

from __future__ import annotations

import pytest

from codefu_sandbox import CheckerConfig, GraderConfig, JudgeRequest, Limits, Verdict
from codefu_sandbox.request import request_for
from codefu_trainer.reward.config import RewardConfig
from codefu_trainer.reward.rules import score_report
from codefu_trainer.reward.worker import JudgeJob, JudgeWorker

from .problems import (
    COMPILE_ERROR_PROGRAM,
    DIFF_PROGRAM,
    PY_BURN_PROGRAM,
    PY_SUM_PROGRAM,
    SUM_PROGRAM,
)

pytest.importorskip("codefu_sandbox")

# Prints a + b, but spins forever when a == 21 (the 4th test of `_tests`).
LATE_TLE = (
    "#include <bits/stdc++.h>\n"
    "int main() { long long a, b; std::cin >> a >> b;\n"
    "  if (a == 21) { volatile unsigned long x = 0; for (;;) x = x + 1; }\n"
    "  std::cout << a + b << '\\n'; }\n"
)


def _tests(n: int) -> list[tuple[str, str]]:
    return [
        (f"{7 * i} {0 if i == 0 else i + 1}\n", f"{7 * i + (0 if i == 0 else i + 1)}\n")
        for i in range(n)
    ]


@pytest.fixture(scope="module")
def worker(tmp_path_factory: pytest.TempPathFactory) -> JudgeWorker:
    return JudgeWorker(str(tmp_path_factory.mktemp("cache")))


def _request(
    n: int, language: str = "cpp", factors: dict[str, float] | None = None, **kw: bool
) -> JudgeRequest:
    return request_for(
        Limits(0.5, 256 << 20),
        n,
        language=language,
        checker=CheckerConfig("codecontests"),
        grader=GraderConfig(),
        time_factors=factors or {},
        stop_on_first_failure=kw.get("stop_on_first_failure", False),
        stop_on=(Verdict.TLE,) if kw.get("stop_on_timeout", True) else (),
    )


def _judge(
    worker: JudgeWorker,
    source: str,
    n: int,
    language: str = "cpp",
    factors: dict[str, float] | None = None,
    **kw: bool,
) -> object:
    return worker.judge(source, _tests(n), _request(n, language, factors, **kw))


def test_judging_counts_every_test_without_timeouts(worker: JudgeWorker) -> None:
    ok = _judge(worker, SUM_PROGRAM, 12)
    wrong = _judge(worker, DIFF_PROGRAM, 12)
    assert (ok.verdict, ok.passed, ok.total, len(ok.test_verdicts)) == ("AC", 12, 12, 12)
    assert (wrong.verdict, wrong.passed, wrong.total, len(wrong.test_verdicts)) == ("WA", 1, 12, 12)
    assert score_report(wrong, RewardConfig()).score == pytest.approx(1 / 12)


def test_judging_stops_at_the_first_tle(worker: JudgeWorker) -> None:
    s = _judge(worker, LATE_TLE, 12)
    # The 4th test times out; tests 5-12 never run.
    assert s.verdict == "TLE" and s.total == 12
    assert s.test_verdicts == ("AC", "AC", "AC", "TLE")
    assert score_report(s, RewardConfig()).score == 0.0
    full = _judge(worker, LATE_TLE, 12, stop_on_timeout=False)
    assert len(full.test_verdicts) == 12 and full.verdict == "TLE"


def test_compile_error_and_early_stop(worker: JudgeWorker) -> None:
    ce = _judge(worker, COMPILE_ERROR_PROGRAM, 5)
    assert (ce.verdict, ce.passed, ce.total, ce.test_verdicts) == ("CE", 0, 5, ())
    first_fail = _judge(worker, DIFF_PROGRAM, 5, stop_on_first_failure=True)
    assert first_fail.verdict == "WA" and first_fail.test_verdicts == ("AC", "WA")


def test_the_rewards_float_tolerance_reaches_the_checker(worker: JudgeWorker) -> None:
    source = '#include <cstdio>\nint main(){ std::printf("0.3334\\n"); }\n'
    truth = {
        "name": "third",
        "time_limit": {"seconds": 1, "nanos": 0},
        "memory_limit_bytes": 256 << 20,
        "private_tests": {"input": [""], "output": ["0.333333\n"]},
    }
    verdicts = []
    for tolerance in (1e-6, 1e-3):
        problem = RewardConfig(float_tolerance=tolerance).policy().problem(truth)
        summary = worker.judge(source, problem.tests, problem.requests["cpp"])
        verdicts.append(summary.verdict)
    assert verdicts == ["WA", "AC"]


def test_python_is_judged_as_python_under_its_time_factor(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    cache = str(tmp_path_factory.mktemp("py-cache"))
    plain = JudgeWorker(cache)
    ok = _judge(plain, PY_SUM_PROGRAM, 3, language="python")
    assert (ok.verdict, ok.passed, ok.total) == ("AC", 3, 3)
    # 0.4 s of CPU against a 0.5 s limit at factor 1 (AC), 0.25 s at factor 0.5 (TLE): the
    # factor the request applied reaches the judge, for Python only.
    assert _judge(plain, PY_BURN_PROGRAM, 1, language="python").verdict == "AC"
    halved = {"python": 0.5}
    assert _judge(plain, PY_BURN_PROGRAM, 1, "python", halved).verdict == "TLE"
    assert _request(1, "python", halved).limits.time_seconds == 0.25
    assert _judge(plain, SUM_PROGRAM, 2, factors=halved).verdict == "AC"  # C++ keeps its own


def test_the_same_source_in_two_languages_is_two_jobs() -> None:
    def job(language: str, source: str = "print(1)") -> JudgeJob:
        return JudgeJob(
            source=source,
            tests=[],
            request=_request(1, language),
            deadline_seconds=10.0,
            tests_key="t",
        )

    assert job("python").identity() == job("python").identity()
    assert job("python").identity() != job("cpp").identity()
    assert job("python").submission_id() != job("cpp").submission_id()
    assert job("python").language == "python"
