"""The judge metrics of a run's step records as a text table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from codefu_trainer.training.report.records import (
    FAILURE_PREFIX,
    JUDGE_PREFIX,
    NOT_LOGGED,
    VERDICT_PREFIX,
    series,
)

# Row order of the judge table; names not listed follow in alphabetical order.
JUDGE_ORDER: tuple[str, ...] = (
    "judge/samples",
    "judge/has_code",
    "judge/compiled",
    "judge/tests_passed_frac",
    "judge/failure",
    "judge/jobs",
    "judge/duplicates",
    "judge/wall_seconds",
    "judge/cpu_seconds",
    "judge/cpus",
    "judge/cpu_bound_seconds",
    "judge/wall_over_bound",
    "judge/queue_high_water",
    "judge/audit/audited",
    "judge/audit/flips",
    "judge/audit/flip_rate",
    "judge/audit/failures",
    "judge/audit/seconds",
)


def _judge_rank(key: str) -> tuple[int, int, str]:
    """Verdicts first, then JUDGE_ORDER (failure kinds after judge/failure), then the rest."""
    order = {k: i for i, k in enumerate(JUDGE_ORDER)}
    if key.startswith(VERDICT_PREFIX):
        return (0, 0, key)
    if key.startswith(FAILURE_PREFIX):
        return (1, order["judge/failure"], key)
    if key in order:
        return (1, order[key], key)
    return (2, 0, key)


def judge_table(records: Sequence[dict[str, Any]], source: str = "") -> str:
    """The judge metrics as rows of first / last / mean / max over the steps that logged them;
    verdicts and failure kinds that stayed 0 at every step are left out."""
    keys = {k for r in records for k in r if k.startswith(JUDGE_PREFIX)}
    head = f"judge metrics{f' of {source}' if source else ''}"
    if not keys:
        return f"{head}: {NOT_LOGGED}"
    rows: list[str] = []
    omitted = 0
    for key in sorted(keys, key=_judge_rank):
        steps, values = series(records, key)
        zero_kind = key.startswith((VERDICT_PREFIX, FAILURE_PREFIX))
        if zero_kind and not any(values):
            omitted += 1
            continue
        mean = sum(values) / len(values)
        rows.append(
            f"{key:<28} {len(steps):>5} "
            + " ".join(f"{v:>9.4g}" for v in (values[0], values[-1], mean, max(values)))
        )
    all_steps = sorted({int(r["step"]) for r in records if keys & r.keys()})
    lines = [
        f"{head}, {len(all_steps)} steps ({all_steps[0]}..{all_steps[-1]})",
        f"{'metric':<28} {'steps':>5} {'first':>9} {'last':>9} {'mean':>9} {'max':>9}",
        *rows,
    ]
    if omitted:
        lines.append(f"({omitted} verdicts / failure kinds 0 at every step not shown)")
    return "\n".join(lines)
