"""The verdict model: per-run decisions, priority, aggregation, to_dict."""

from __future__ import annotations

import json
import signal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codefu_sandbox import PRIORITY, CompileResult, TestResult, Verdict
from codefu_sandbox.checkers import CheckResult
from codefu_sandbox.verdicts import (
    EXEC_MARGIN,
    RunOutcome,
    aggregate,
    checked,
    decide,
    internal_error,
    static_data_verdict,
    worst,
)

LIMITS = {"time_seconds": 1.0, "memory_bytes": 256 << 20, "output_limit": 64 << 20}


def outcome(**kw: object) -> RunOutcome:
    base: dict[str, object] = {
        "exit_code": 0,
        "signal": None,
        "cpu_seconds": 0.1,
        "wall_seconds": 0.1,
        "peak_memory_bytes": 10 << 20,
    }
    base.update(kw)
    return RunOutcome(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kw", "expected"),
    [
        ({}, None),
        ({"error": "launcher broke"}, Verdict.IE),
        ({"exit_code": None, "signal": signal.SIGSYS}, Verdict.SV),
        # The runner killed it for a refused call (named or not), over its CPU time too.
        ({"exit_code": None, "signal": signal.SIGKILL, "refused_syscall": 7}, Verdict.SV),
        ({"exit_code": None, "signal": signal.SIGKILL, "refused_syscall": -2}, Verdict.SV),
        ({"cpu_seconds": 2.0, "signal": signal.SIGKILL, "refused_syscall": 101}, Verdict.SV),
        ({"cpu_seconds": 1.01}, Verdict.TLE),
        ({"killed": "wall", "exit_code": None, "signal": signal.SIGKILL}, Verdict.TLE),
        ({"exit_code": None, "signal": signal.SIGXCPU}, Verdict.TLE),
        ({"peak_memory_bytes": (256 << 20) + 1}, Verdict.MLE),
        (
            {"exit_code": None, "signal": signal.SIGABRT, "stderr_head": "what():  std::bad_alloc"},
            Verdict.MLE,
        ),
        ({"exit_code": None, "signal": signal.SIGKILL, "memory_cap_hit": True}, Verdict.MLE),
        ({"exit_code": None, "signal": signal.SIGSEGV, "memory_cap_hit": True}, Verdict.MLE),
        ({"exit_code": None, "signal": signal.SIGXFSZ}, Verdict.OLE),
        ({"output_bytes": 64 << 20}, Verdict.OLE),
        ({"exit_code": 1}, Verdict.RE),
        ({"exit_code": None, "signal": signal.SIGSEGV}, Verdict.RE),
        ({"exit_code": 0, "stderr_head": "std::bad_alloc"}, None),  # ended normally: check output
    ],
)
def test_decide(kw: dict[str, object], expected: Verdict | None) -> None:
    assert decide(outcome(**kw), **LIMITS) == expected  # type: ignore[arg-type]


def test_priority_order_is_documented_order() -> None:
    assert [str(v) for v in PRIORITY] == ["IE", "CE", "SV", "TLE", "MLE", "OLE", "RE", "WA", "AC"]
    assert set(PRIORITY) == set(Verdict)


def test_tle_beats_memory_and_crash_in_one_run() -> None:
    run = outcome(cpu_seconds=2.0, peak_memory_bytes=1 << 30, exit_code=None, signal=signal.SIGSEGV)
    assert decide(run, **LIMITS) is Verdict.TLE  # type: ignore[arg-type]


def result(verdict: Verdict) -> TestResult:
    return TestResult(verdict, 0.1, 0.1, 1 << 20, 0, None)


@given(st.lists(st.sampled_from([v for v in Verdict if v is not Verdict.CE]), min_size=1))
def test_aggregate_is_the_worst_and_counts_passes(verdicts: list[Verdict]) -> None:
    report = aggregate(
        [result(v) for v in verdicts], CompileResult(True, 0.2, False, ""), len(verdicts), "x"
    )
    assert report.verdict is worst(verdicts)
    assert report.passed == verdicts.count(Verdict.AC)
    assert (report.verdict is Verdict.AC) == all(v is Verdict.AC for v in verdicts)


def test_compile_error_report() -> None:
    report = aggregate([], CompileResult(False, 0.3, False, "error: x"), 5, "x")
    assert (report.verdict, report.passed, report.total) == (Verdict.CE, 0, 5)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (CheckResult(True), Verdict.AC),
        (CheckResult(False, "token 1: got '2', expected '3'"), Verdict.WA),
        (CheckResult(False, "checker crashed", internal_error=True), Verdict.IE),
        (CheckResult(True, "odd checker", internal_error=True), Verdict.IE),
    ],
)
def test_checked_run_is_ac_wa_or_ie(answer: CheckResult, expected: Verdict) -> None:
    assert checked(answer) is expected


@given(static=st.integers(0, 1 << 34), cap=st.integers(1, 1 << 34))
def test_static_data_over_the_cap_is_mle_on_the_first_test(static: int, cap: int) -> None:
    result = static_data_verdict(static, address_space=cap)
    if static + EXEC_MARGIN <= cap:
        assert result is None
    else:
        assert result is not None and result.verdict is Verdict.MLE
        assert result.peak_memory_bytes == static and "over the memory limit" in result.message
        report = aggregate([result], CompileResult(True, 0.1, False, ""), 7, "x")
        assert (report.verdict, report.passed, report.total) == (Verdict.MLE, 0, 7)


def test_a_judge_failure_before_any_test_is_ie_never_ce() -> None:
    report = internal_error("the compiler vanished", 4, "rlimits")
    assert (report.verdict, report.passed, report.total, report.tests) == (Verdict.IE, 0, 4, [])
    assert not report.compile.ok
    assert report.compile.diagnostics == "[internal error] the compiler vanished"


def test_report_without_tests_is_never_ac() -> None:
    assert aggregate([], CompileResult(True, 0.1, False, ""), 0, "x").verdict is Verdict.IE


def test_to_dict_is_json() -> None:
    report = aggregate(
        [result(Verdict.AC), result(Verdict.WA)], CompileResult(True, 0.2, True, ""), 2, "rlimits"
    )
    data = json.loads(json.dumps(report.to_dict()))
    assert data["verdict"] == "WA" and data["passed"] == 1 and data["total"] == 2
    assert data["tests"][1]["verdict"] == "WA"
    assert set(data["tests"][0]) >= {
        "verdict",
        "cpu_seconds",
        "wall_seconds",
        "peak_memory_bytes",
        "exit_code",
        "signal",
    }
    assert set(data["compile"]) >= {"ok", "seconds", "cached", "diagnostics"}


runs = st.builds(
    RunOutcome,
    exit_code=st.one_of(st.none(), st.integers(0, 255)),
    signal=st.one_of(
        st.none(),
        st.sampled_from(
            [signal.SIGSYS, signal.SIGKILL, signal.SIGSEGV, signal.SIGXFSZ, signal.SIGABRT]
        ),
    ),
    cpu_seconds=st.floats(0, 3),
    wall_seconds=st.floats(0, 10),
    peak_memory_bytes=st.integers(0, 1 << 31),
    killed=st.sampled_from([None, "cpu", "wall"]),
    output_bytes=st.integers(0, 1 << 27),
    stderr_head=st.sampled_from(["", "std::bad_alloc", "boom"]),
    error=st.sampled_from([None, "broken"]),
)


@given(runs)
def test_decide_follows_the_priority(run: RunOutcome) -> None:
    verdict = decide(run, **LIMITS)  # type: ignore[arg-type]
    if run.error is not None:
        assert verdict is Verdict.IE
    elif run.signal == signal.SIGSYS:
        assert verdict is Verdict.SV
    elif run.killed or run.cpu_seconds > 1.0:
        assert verdict is Verdict.TLE
    elif run.peak_memory_bytes > 256 << 20:
        assert verdict is Verdict.MLE
    abnormal = run.signal is not None or run.exit_code != 0
    if verdict is None:  # only clean, in-limit runs reach the checker
        assert not abnormal and run.output_bytes < 64 << 20 and run.error is None
