"""`codefu-eval compare DIR_A DIR_B`: two evaluations side by side, paired by problem.

For each k both evaluations have, and for the mean score: A, B, the mean over the problems
both evaluated of the per-problem difference B − A, how many problems went up or down, and
a percentile bootstrap confidence interval of that mean (problems resampled with
replacement, the same resamples for every metric, seeded). An interval above zero is the
measured statement "B beats A on these problems".
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codefu_trainer.evaluation.passk import pass_at_k
from codefu_trainer.evaluation.store import META_FILE, SUMMARY_FILE, StoreError, read_samples
from codefu_trainer.evaluation.summary import correct_counts

# Identity keys expected to differ between the two sides of a comparison.
COMPARED = ("model.path", "model.fingerprint")


@dataclass(frozen=True)
class Evaluation:
    """A finished evaluation read back: its settings and per-problem results."""

    path: Path
    settings: dict[str, Any]
    ks: list[int]
    counts: dict[str, tuple[int, int]]  # problem → (samples, correct)
    scores: dict[str, float]  # problem → mean score


def load_evaluation(path: Path) -> Evaluation:
    """Read `path`'s summary.json and samples.jsonl; StoreError says what is missing."""
    summary_file = path / SUMMARY_FILE
    if not (path / META_FILE).is_file():
        raise StoreError(f"{path} is not an evaluation directory (no {META_FILE}).")
    if not summary_file.is_file():
        raise StoreError(
            f"{path} has no {SUMMARY_FILE}: the evaluation did not finish; run the same "
            "`nox -s evaluate` command again to complete it."
        )
    summary = json.loads(summary_file.read_text())
    records = read_samples(path)
    totals: dict[str, list[float]] = defaultdict(list)
    for r in records:
        totals[r["problem"]].append(float(r["score"]))
    return Evaluation(
        path=path,
        settings=dict(summary["settings"]),
        ks=sorted(int(k) for k in summary["pass@k"]),
        counts=correct_counts(records),
        scores={p: sum(s) / len(s) for p, s in totals.items()},
    )


def bootstrap_interval(
    differences: Sequence[float], resamples: int, confidence: float, seed: int
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of paired differences (problems resampled)."""
    import numpy as np

    d = np.asarray(differences, dtype=float)
    rng = np.random.default_rng(seed)
    means = d[rng.integers(0, len(d), size=(resamples, len(d)))].mean(axis=1)
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return float(low), float(high)


def compare(
    a: Evaluation, b: Evaluation, resamples: int = 10_000, confidence: float = 0.95, seed: int = 0
) -> dict[str, Any]:
    """Per metric: A, B, mean paired difference, ups/downs and its bootstrap interval."""
    problems = sorted(set(a.counts) & set(b.counts))
    if not problems:
        raise StoreError(f"{a.path} and {b.path} have no problem in common: nothing to compare.")
    ks = [k for k in a.ks if k in b.ks]
    metrics: dict[str, tuple[list[float], list[float]]] = {}
    for k in ks:
        metrics[f"pass@{k}"] = (
            [pass_at_k(*a.counts[p], k) for p in problems],
            [pass_at_k(*b.counts[p], k) for p in problems],
        )
    metrics["mean_score"] = ([a.scores[p] for p in problems], [b.scores[p] for p in problems])
    rows: dict[str, Any] = {}
    for name, (xs, ys) in metrics.items():
        diffs = [y - x for x, y in zip(xs, ys, strict=True)]
        low, high = bootstrap_interval(diffs, resamples, confidence, seed)
        rows[name] = {
            "a": sum(xs) / len(xs),
            "b": sum(ys) / len(ys),
            "difference": sum(diffs) / len(diffs),
            "interval": [low, high],
            "problems_up": sum(d > 0 for d in diffs),
            "problems_down": sum(d < 0 for d in diffs),
        }
    return {
        "a": str(a.path),
        "b": str(b.path),
        "problems": len(problems),
        "only_in_a": len(set(a.counts) - set(b.counts)),
        "only_in_b": len(set(b.counts) - set(a.counts)),
        "bootstrap": {"resamples": resamples, "confidence": confidence, "seed": seed},
        "setting_differences": setting_differences(a.settings, b.settings),
        "metrics": rows,
    }


def setting_differences(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, list[Any]]:
    """Settings other than the model that differ: key → [A's, B's]."""
    keys = sorted((set(a) | set(b)) - set(COMPARED))
    return {k: [a.get(k), b.get(k)] for k in keys if a.get(k) != b.get(k)}


def format_comparison(result: Mapping[str, Any]) -> str:
    """The side-by-side console table."""
    boot = result["bootstrap"]
    level = f"{boot['confidence']:.0%}"
    lines = [
        f"A: {result['a']}",
        f"B: {result['b']}",
        f"{result['problems']} problems in both (only in A: {result['only_in_a']}, only in B: "
        f"{result['only_in_b']}); {level} intervals from {boot['resamples']} bootstrap "
        f"resamples of the problems (seed {boot['seed']})",
    ]
    for key, (va, vb) in result["setting_differences"].items():
        lines.append(f"note: {key} differs: A {va!r}, B {vb!r}")
    head = (
        f"{'metric':<12}{'A':>9}{'B':>9}{'B - A':>9}  {level + ' interval':<20}{'up':>5}{'down':>6}"
    )
    lines += [head, "-" * len(head)]
    verdicts: list[str] = []
    for name, row in result["metrics"].items():
        low, high = row["interval"]
        interval = f"[{low:+.3f}, {high:+.3f}]"
        lines.append(
            f"{name:<12}{row['a']:>9.3f}{row['b']:>9.3f}{row['difference']:>+9.3f}  "
            f"{interval:<20}{row['problems_up']:>5}{row['problems_down']:>6}"
        )
        if low > 0:
            verdicts.append(f"B beats A on {name}")
        elif high < 0:
            verdicts.append(f"A beats B on {name}")
    lines.append(
        "; ".join(verdicts) + f" ({level} interval excludes 0)."
        if verdicts
        else f"No difference is measured: every {level} interval contains 0."
    )
    return "\n".join(lines)
