"""Per-step judge metrics from reward results and a pool window (pure)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codefu_trainer.reward.config import RewardConfig
from codefu_trainer.reward.rules import REWARD_VERDICTS, JudgeSummary, score_report
from codefu_trainer.reward.step_metrics import (
    FAILURE_KINDS,
    Flip,
    JudgeWindow,
    WindowStats,
    failure_alert,
    step_metrics,
)

CFG = RewardConfig()


def _judged(verdict: str, passed: int, total: int, compile_s: float = 0.5) -> dict[str, Any]:
    summary = JudgeSummary(verdict, (verdict,) * total, passed, total, compile_s, 0.1 * total)
    return score_report(summary, CFG).to_dict()


# One step of a known batch: 2 AC, 1 WA (1 of 4), 1 CE, 1 TLE, 2 no code, 1 deadline.
BATCH = [
    _judged("AC", 4, 4),
    _judged("AC", 4, 4),
    _judged("WA", 1, 4),
    _judged("CE", 0, 4),
    _judged("TLE", 2, 4),
    score_report(None, CFG, has_code=False).to_dict(),
    score_report(None, CFG, has_code=False).to_dict(),
    score_report(None, CFG, failure="DEADLINE").to_dict(),
]


def test_known_batch() -> None:
    m = step_metrics(BATCH)
    assert m["judge/samples"] == 8
    assert m["judge/verdict/AC"] == pytest.approx(2 / 8)
    assert m["judge/verdict/WA"] == m["judge/verdict/CE"] == m["judge/verdict/TLE"] == 1 / 8
    assert m["judge/verdict/NO_CODE"] == pytest.approx(2 / 8)
    assert m["judge/verdict/DEADLINE"] == pytest.approx(1 / 8)
    assert m["judge/verdict/MLE"] == 0.0
    assert m["judge/has_code"] == pytest.approx(6 / 8)
    assert m["judge/compiled"] == pytest.approx(4 / 8)  # AC AC WA TLE
    # (1 + 1 + 0.25 + 0 + 0.5 + 0 + 0 + 0) / 8
    assert m["judge/tests_passed_frac"] == pytest.approx(2.75 / 8)
    assert m["judge/failure"] == pytest.approx(1 / 8)
    assert m["judge/failures/DEADLINE"] == 1
    assert m["judge/failures/WORKER_LOST"] == m["judge/failures/JUDGE_ERROR"] == 0
    assert "judge/cpu_seconds" not in m  # no window: nothing the samples cannot tell


def test_languages_and_refused_languages_are_counted() -> None:
    both = RewardConfig(languages=["cpp", "python"])
    summary = JudgeSummary("AC", ("AC",), 1, 1, 0.1, 0.1)
    results = [
        score_report(summary, both, language="python").to_dict(),
        score_report(summary, both, language="cpp").to_dict(),
        score_report(summary, CFG, language="python").to_dict(),  # C++-only run: refused
        score_report(None, CFG, has_code=False).to_dict(),
    ]
    m = step_metrics(results)
    assert m["judge/verdict/LANGUAGE"] == m["judge/verdict/NO_CODE"] == 1 / 4
    assert m["judge/verdict/AC"] == 2 / 4
    assert m["judge/language/python"] == 2 / 4 and m["judge/language/cpp"] == 1 / 4
    assert m["judge/has_code"] == 2 / 4 and m["judge/compiled"] == 2 / 4
    assert step_metrics([_judged("AC", 1, 1)])["judge/language/python"] == 0.0


def test_every_verdict_is_always_reported() -> None:
    m = step_metrics([_judged("AC", 1, 1)])
    assert {f"judge/verdict/{v}" for v in REWARD_VERDICTS} <= set(m)
    assert {f"judge/failures/{k}" for k in FAILURE_KINDS} <= set(m)
    assert all(isinstance(v, float) for v in m.values())


def test_empty_step_has_no_sample_metrics() -> None:
    assert step_metrics([]) == {}


def test_window_bound_and_ratio() -> None:
    w = WindowStats(
        jobs=6,
        duplicates=2,
        wall_seconds=3.0,
        compile_cpu_seconds=2.0,
        run_cpu_seconds=2.0,
        cpus=2.0,
        queue_high_water=5,
        audited=4,
        flips=1,
        audit_failures=2,
    )
    m = step_metrics(BATCH, w)
    assert m["judge/cpu_seconds"] == 4.0
    assert m["judge/cpu_bound_seconds"] == 2.0
    assert m["judge/wall_over_bound"] == 1.5
    assert m["judge/duplicates"] == 2 and m["judge/jobs"] == 6
    assert m["judge/queue_high_water"] == 5
    assert m["judge/audit/flip_rate"] == 0.5  # 1 flip out of 2 audits that compared
    # The same from the window's dict form (what crosses Ray).
    assert step_metrics(BATCH, w.to_dict()) == m


def test_window_without_cpus_or_work_has_no_ratio() -> None:
    m = step_metrics([], WindowStats())
    assert m["judge/cpu_bound_seconds"] == 0.0 and m["judge/wall_over_bound"] == 0.0
    assert m["judge/audit/flip_rate"] == 0.0


def test_judge_window_counts_and_restarts() -> None:
    w = JudgeWindow()
    for _ in range(3):
        w.queued()
    w.dequeued()
    w.dequeued()
    w.duplicate()
    w.done(arrived=10.0, ended=12.0, busy_seconds=2.0, compile_cpu_seconds=0.5, run_cpu_seconds=1)
    w.done(arrived=9.0, ended=11.0, busy_seconds=1.5, compile_cpu_seconds=0.25)
    flip = Flip("abc", "AC", "TLE", 0.2, 1.1, "n1", "n2")
    w.audit(1.1, flip)
    w.audit(0.3)
    w.audit(0.4, failed=True)
    s = w.take(cpus=4)
    assert (s.jobs, s.duplicates, s.queue_high_water) == (2, 1, 3)
    assert s.wall_seconds == 3.0  # 9.0 → 12.0
    assert s.tail_seconds == 2.0  # the last job arrived at 10.0; judging ended at 12.0
    assert step_metrics([], s)["judge/tail_seconds"] == 2.0
    assert s.compile_cpu_seconds == 0.75 and s.run_cpu_seconds == 1.0
    assert (s.audited, s.flips, s.audit_failures) == (3, 1, 1)
    assert s.flip_details == [flip] and s.cpus == 4.0
    assert "abc" in flip.describe() and "AC" in flip.describe() and "TLE" in flip.describe()
    # Restarted; the job still waiting is the next window's starting high-water mark.
    s2 = w.take(cpus=4)
    assert (s2.jobs, s2.wall_seconds, s2.queue_high_water, s2.flip_details) == (0, 0.0, 1, [])
    assert s2.tail_seconds == 0.0
    assert WindowStats.from_dict(s.to_dict()) == s


verdicts = st.sampled_from([*REWARD_VERDICTS, "OTHER"])


@st.composite
def results(draw: st.DrawFn) -> dict[str, Any]:
    verdict = draw(verdicts)
    total = draw(st.integers(0, 50))
    return {
        "score": draw(st.floats(-1, 1)),
        "verdict": verdict,
        "passed": draw(st.integers(0, total)),
        "total": total,
        "compile_seconds": 0.0,
        "run_seconds": 0.0,
        "judge_failure": draw(st.sampled_from([0, 1])),
        "has_code": int(verdict != "NO_CODE"),
    }


@settings(max_examples=200, deadline=None)
@given(st.lists(results(), min_size=1, max_size=40))
def test_shares_are_fractions_that_add_up(batch: list[dict[str, Any]]) -> None:
    m = step_metrics(batch)
    shares = [v for k, v in m.items() if k.startswith("judge/verdict/")]
    assert sum(shares) == pytest.approx(1.0)
    for key in ("judge/has_code", "judge/compiled", "judge/tests_passed_frac", "judge/failure"):
        assert 0.0 <= m[key] <= 1.0
    assert m["judge/compiled"] <= m["judge/has_code"] + 1e-12
    failures = sum(m[f"judge/failures/{k}"] for k in FAILURE_KINDS)
    assert failures <= m["judge/failure"] * len(batch) + 1e-9
    # Order of the samples never matters.
    assert step_metrics(list(reversed(batch))) == pytest.approx(m)


@settings(max_examples=100, deadline=None)
@given(st.floats(0, 1), st.floats(0, 1))
def test_failure_alert_threshold(rate: float, limit: float) -> None:
    alert = failure_alert({"judge/failure": rate, "judge/failures/DEADLINE": 3.0}, limit)
    assert (alert is not None) == (rate > limit)
    if alert is not None:
        assert "DEADLINE 3" in alert and "max_rate" in alert


def test_failure_alert_warns_tags_mlflow_and_stops_when_configured(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    mlflow = pytest.importorskip("mlflow")
    from codefu_trainer.reward.config import FailureAlertConfig
    from codefu_trainer.reward.verl_metrics import (
        ALERT_TAG,
        JudgeFailureStop,
        record_judge_metrics,
    )

    failing = [score_report(None, CFG, failure="WORKER_LOST").to_dict(), _judged("AC", 1, 1)]
    flip = Flip("f00d", "AC", "WA", 0.1, 0.2, "node-a", "node-b")
    mlflow.set_tracking_uri(f"sqlite:///{tmp_path}/mlflow.db")
    mlflow.set_experiment("judge-alert")  # not an experiment id another test left active
    with mlflow.start_run() as run:
        metrics: dict[str, float] = {}
        record_judge_metrics(metrics, failing, WindowStats(flip_details=[flip]), CFG, step=7)
    assert metrics["judge/failure"] == 0.5 and metrics["judge/failures/WORKER_LOST"] == 1
    printed = capsys.readouterr().out
    assert "step 7" in printed and "WORKER_LOST 1" in printed and "f00d" in printed
    tags = mlflow.get_run(run.info.run_id).data.tags
    assert tags[ALERT_TAG].startswith("step 7: judge failure rate 50.0%")
    # Under the limit: no alert; with stop on, over the limit: training stops.
    record_judge_metrics({}, [_judged("AC", 1, 1)], None, CFG, step=8)
    assert "WARNING" not in capsys.readouterr().out
    stopping = RewardConfig(failure_alert=FailureAlertConfig(max_rate=0.1, stop=True))
    with pytest.raises(JudgeFailureStop, match="step 9"):
        record_judge_metrics({}, failing, None, stopping, step=9)
