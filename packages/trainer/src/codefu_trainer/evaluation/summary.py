"""An evaluation's statistics from its judged samples, and the console table.

For all problems, each tier and each Codeforces rating bucket: unbiased pass@k, mean score
(veRL's `test_score`: the mean reward over samples), the verdict mix, the compile rate (code
that compiled, over all samples), the code rate (samples with extractable code), judge
failures and the response length in tokens. Per language of the samples' code (`cpp`,
`python`; `none`: no code), the same over that language's samples, except pass@k: the
chance that k of a problem's samples hold a correct answer in that language.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from codefu_sandbox import Verdict
from codefu_trainer.evaluation.passk import mean_pass_at_k

RATING_BUCKET = 200  # Codeforces rating points per bucket
UNRATED = "unrated"
NO_LANGUAGE = "none"  # the language group of samples without code
# Judge verdicts of a program that compiled and ran (IE is the judge's failure, CE did not compile).
COMPILED = frozenset(str(v) for v in Verdict) - {str(Verdict.CE), str(Verdict.IE)}


def rating_bucket(rating: int | None) -> str:
    """`800-999`, `1000-1199`, …; `unrated` without a rating."""
    if not rating:
        return UNRATED
    low = rating // RATING_BUCKET * RATING_BUCKET
    return f"{low}-{low + RATING_BUCKET - 1}"


def _bucket_order(bucket: str) -> tuple[int, int]:
    return (1, 0) if bucket == UNRATED else (0, int(bucket.split("-", maxsplit=1)[0]))


def correct_counts(records: Iterable[Mapping[str, Any]]) -> dict[str, tuple[int, int]]:
    """Problem → (samples, correct samples)."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in records:
        counts[r["problem"]][0] += 1
        counts[r["problem"]][1] += int(bool(r["correct"]))
    return {p: (n, c) for p, (n, c) in counts.items()}


def group_stats(
    records: Sequence[Mapping[str, Any]],
    ks: Sequence[int],
    counts_for_pass: Mapping[str, tuple[int, int]] | None = None,
) -> dict[str, Any]:
    """The statistics of one group of samples (pass@k and problems from
    `counts_for_pass`, problem → (samples, correct), when given)."""
    n = len(records)
    counts = (correct_counts(records) if counts_for_pass is None else counts_for_pass).values()
    tokens = [int(r["response_tokens"]) for r in records]
    verdicts = Counter(str(r["verdict"]) for r in records)
    return {
        "problems": len(counts),
        "samples": n,
        "pass@k": {str(k): mean_pass_at_k(counts, k) for k in ks},
        "mean_score": sum(float(r["score"]) for r in records) / n if n else 0.0,
        "verdicts": dict(sorted(verdicts.items())),
        "compile_rate": sum(verdicts[v] for v in COMPILED) / n if n else 0.0,
        "code_rate": sum(int(r["has_code"]) for r in records) / n if n else 0.0,
        "judge_failures": sum(int(r["judge_failure"]) for r in records),
        "response_tokens": {
            "mean": sum(tokens) / n if n else 0.0,
            "max": max(tokens, default=0),
        },
    }


def sample_language(record: Mapping[str, Any]) -> str:
    """The language of a sample's code (`none` without code)."""
    return str(record.get("language") or NO_LANGUAGE)


def language_stats(records: Sequence[Mapping[str, Any]], ks: Sequence[int]) -> dict[str, Any]:
    """Per language of the samples' code: `group_stats` of its samples, with pass@k over
    every sample of each problem counting correct only the answers in that language."""
    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for r in records:
        groups[sample_language(r)].append(r)
    out = {}
    for language in sorted(groups):
        in_language = [
            {**r, "correct": bool(r["correct"]) and sample_language(r) == language} for r in records
        ]
        out[language] = group_stats(groups[language], ks, correct_counts(in_language))
    return out


def summarize(
    records: Sequence[Mapping[str, Any]],
    ks: Sequence[int],
    samples_per_problem: int,
    backend: str,
    settings: Mapping[str, Any],
) -> dict[str, Any]:
    """summary.json: the overall statistics, `by_tier`, `by_rating`, `by_language`, the
    backend that generated the samples and every setting of the evaluation (its identity)."""
    tiers: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    buckets: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for r in records:
        tiers[str(r["tier"])].append(r)
        buckets[rating_bucket(r.get("rating"))].append(r)
    ordered = sorted(buckets, key=_bucket_order)
    return {
        "backend": backend,
        "samples_per_problem": samples_per_problem,
        **group_stats(records, ks),
        "by_tier": {t: group_stats(rs, ks) for t, rs in tiers.items()},
        "by_rating": {b: group_stats(buckets[b], ks) for b in ordered},
        "by_language": language_stats(records, ks),
        "settings": dict(settings),
    }


def format_table(summary: Mapping[str, Any]) -> str:
    """The console table: one row for all problems, each tier and each rating bucket."""
    ks = list(summary["pass@k"])
    head = f"{'group':<16}{'problems':>9}{'samples':>8}" + "".join(f"{'pass@' + k:>9}" for k in ks)
    head += f"{'score':>8}{'compile':>8}{'code':>7}{'tokens':>8}"
    rows = [("all", summary)]
    rows += [(f"tier {t}", s) for t, s in summary["by_tier"].items()]
    rows += [(f"rating {b}", s) for b, s in summary["by_rating"].items()]
    by_language = summary.get("by_language") or {}
    rows += [(f"language {language}", s) for language, s in by_language.items()]
    lines = [
        f"backend {summary['backend']}, {summary['samples_per_problem']} samples per problem",
        head,
        "-" * len(head),
    ]
    for name, s in rows:
        cells = "".join(f"{s['pass@k'][k]:>9.3f}" for k in ks)
        lines.append(
            f"{name:<16}{s['problems']:>9}{s['samples']:>8}{cells}{s['mean_score']:>8.3f}"
            f"{s['compile_rate']:>8.2f}{s['code_rate']:>7.2f}{s['response_tokens']['mean']:>8.1f}"
        )
    total = max(summary["samples"], 1)
    mix = ", ".join(f"{v} {c} ({c / total:.0%})" for v, c in summary["verdicts"].items())
    lines.append(f"verdicts: {mix}")
    if len(by_language) > 1:
        for language, s in by_language.items():
            mix = ", ".join(
                f"{v} {c} ({c / max(s['samples'], 1):.0%})" for v, c in s["verdicts"].items()
            )
            lines.append(f"verdicts {language}: {mix}")
    if summary["judge_failures"]:
        lines.append(
            f"judge failures: {summary['judge_failures']} samples were not judged to the end "
            "(DEADLINE, WORKER_LOST, JUDGE_ERROR or IE) and count as not passed."
        )
    return "\n".join(lines)
