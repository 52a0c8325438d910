"""Reward rules: a judge outcome → a reward with the same extra keys every time.

Pure functions, no I/O. The judge's report is first reduced to a ``JudgeSummary`` (small,
picklable, JSON-able: what travels back from Ray workers), then scored.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from codefu_sandbox import Verdict
from codefu_trainer.reward.config import RewardConfig, RewardMode

if TYPE_CHECKING:
    from codefu_sandbox import JudgeReport

__all__ = [
    "FAILURE_VERDICTS",
    "LANGUAGE",
    "RESULT_KEYS",
    "REWARD_VERDICTS",
    "JudgeSummary",
    "RewardResult",
    "score_report",
    "summarize",
]

# The verdicts a reward result carries: the judge's (codefu_sandbox.Verdict: AC WA TLE MLE
# RE OLE CE SV IE) and these of the reward's own.
NO_CODE = "NO_CODE"  # nothing extractable in the response
LANGUAGE = "LANGUAGE"  # code in a language the run does not accept (reward.languages)
DEADLINE = "DEADLINE"  # the response's deadline passed before the judge answered
WORKER_LOST = "WORKER_LOST"  # its worker (or node) died, and the retry too
JUDGE_ERROR = "JUDGE_ERROR"  # the judge raised, or the ground truth was unusable
REWARD_VERDICTS: tuple[str, ...] = (
    *(str(v) for v in Verdict),
    NO_CODE,
    LANGUAGE,
    DEADLINE,
    WORKER_LOST,
    JUDGE_ERROR,
)
# Judge failures, never the program's fault (ordered as the step metrics list them).
FAILURE_VERDICTS: tuple[str, ...] = (DEADLINE, WORKER_LOST, JUDGE_ERROR, str(Verdict.IE))

RESULT_KEYS = (
    "score",
    "verdict",
    "passed",
    "total",
    "compile_seconds",
    "run_seconds",
    "judge_failure",
    "has_code",
    "language",
)


@dataclass(frozen=True)
class JudgeSummary:
    """What the reward needs from a judge report.

    ``run_seconds`` is the CPU time of the program over all tests run.
    """

    verdict: str
    test_verdicts: tuple[str, ...]
    passed: int
    total: int
    compile_seconds: float
    run_seconds: float
    compile_cached: bool = False
    node_id: str = ""

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["test_verdicts"] = list(self.test_verdicts)
        return d


def summarize(report: JudgeReport, node_id: str = "") -> JudgeSummary:
    """Reduce a Contract-1 ``JudgeReport`` to a ``JudgeSummary``."""
    tests = list(report.tests)
    return JudgeSummary(
        verdict=str(report.verdict),
        test_verdicts=tuple(str(t.verdict) for t in tests),
        passed=int(report.passed),
        total=int(report.total),
        compile_seconds=float(report.compile.seconds),
        run_seconds=float(sum(t.cpu_seconds for t in tests)),
        compile_cached=bool(report.compile.cached),
        node_id=node_id,
    )


@dataclass(frozen=True)
class RewardResult:
    """A reward and the extra keys veRL logs per sample (``RESULT_KEYS``, always all of them).

    ``has_code``: 1 when the response has code in a language the run accepts.
    ``language``: the judge language of the response's code ("" without code).
    """

    score: float
    verdict: str
    passed: int
    total: int
    compile_seconds: float
    run_seconds: float
    judge_failure: int
    has_code: int
    language: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {key: getattr(self, key) for key in RESULT_KEYS}


def _fraction_reward(passed: int, total: int, config: RewardConfig) -> float:
    ratio = passed / total
    if config.mode is RewardMode.all_or_nothing:
        return 1.0 if passed == total else 0.0
    if config.mode is RewardMode.power:
        return float(ratio**config.power_exponent)
    return float(ratio)


def score_report(
    report: JudgeReport | JudgeSummary | Mapping[str, Any] | None,
    config: RewardConfig,
    *,
    has_code: bool = True,
    failure: str | None = None,
    language: str = "",
) -> RewardResult:
    """The reward for one response.

    Args:
        report: the judge's report (or its summary / summary dict); ``None`` when the
            response was never judged (no code, or a failure).
        config: reward rules.
        has_code: False when no code could be extracted (→ ``no_code_score``).
        language: the code's language; one outside ``config.languages`` → ``no_code_score``
            and the verdict ``LANGUAGE`` (the code is not judged).
        failure: a judge failure (``DEADLINE``, ``WORKER_LOST``, ``JUDGE_ERROR``) →
            ``judge_failure_score`` and ``judge_failure=1``.
    """
    if not has_code:
        return RewardResult(config.no_code_score, NO_CODE, 0, 0, 0.0, 0.0, 0, 0)
    if language and language not in config.languages:
        return RewardResult(config.no_code_score, LANGUAGE, 0, 0, 0.0, 0.0, 0, 0, language)
    if failure is None and report is None:
        failure = JUDGE_ERROR
    if failure is not None:
        return RewardResult(config.judge_failure_score, failure, 0, 0, 0.0, 0.0, 1, 1, language)
    assert report is not None
    if isinstance(report, JudgeSummary):
        summary = report
    elif isinstance(report, Mapping):
        fields = dict(report)
        fields["test_verdicts"] = tuple(fields.get("test_verdicts", ()))
        summary = JudgeSummary(**fields)
    else:
        summary = summarize(report)

    def result(score: float, judge_failure: int = 0, verdict: str | None = None) -> RewardResult:
        return RewardResult(
            score=float(score),
            verdict=verdict or summary.verdict,
            passed=summary.passed,
            total=summary.total,
            compile_seconds=summary.compile_seconds,
            run_seconds=summary.run_seconds,
            judge_failure=judge_failure,
            has_code=1,
            language=language,
        )

    if summary.total <= 0:
        return result(config.judge_failure_score, 1, JUDGE_ERROR)
    if summary.verdict in FAILURE_VERDICTS:
        return result(config.judge_failure_score, 1)
    if summary.verdict == Verdict.CE:
        return result(config.compile_error_score)
    if Verdict.TLE in (summary.verdict, *summary.test_verdicts):
        return result(config.timeout_score, verdict=str(Verdict.TLE))
    passed = min(max(summary.passed, 0), summary.total)
    return result(_fraction_reward(passed, summary.total, config))
