"""An evaluation's statistics from its judged samples, and the console table.

For all problems, each tier, each difficulty label and platform its source states
(LiveCodeBench's easy/medium/hard; leetcode, atcoder, codeforces) and each Codeforces rating
bucket: unbiased pass@k, mean score (veRL's `test_score`: the mean reward over samples), the
verdict mix, the compile rate (code that compiled, over all samples), the code rate (samples
with extractable code), judge failures and the response length in tokens. Per language of
the samples' code (`cpp`, `python`; `none`: no code), the same over that language's
samples, except pass@k: the chance that k of a problem's samples hold a correct answer in
that language. The table opens with what the numbers depend on: the protocol, its sampling
settings and limits, the LiveCodeBench release and the contest-date window of the problems,
and the tiers (difficulties) evaluated that hold no problem.
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


# LiveCodeBench's difficulties in its order; other labels follow alphabetically.
DIFFICULTY_ORDER = ("easy", "medium", "hard")


def _difficulty_order(label: str) -> tuple[int, str]:
    known = label in DIFFICULTY_ORDER
    return (DIFFICULTY_ORDER.index(label) if known else len(DIFFICULTY_ORDER), label)


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


def _groups(records: Sequence[Mapping[str, Any]], key: str) -> dict[str, list[Mapping[str, Any]]]:
    """The records by their `key` (those without one left out)."""
    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for r in records:
        if r.get(key):
            groups[str(r[key])].append(r)
    return groups


def summarize(
    records: Sequence[Mapping[str, Any]],
    ks: Sequence[int],
    samples_per_problem: int | str,
    backend: str,
    settings: Mapping[str, Any],
    *,
    protocol: str | None = None,
    date_window: Mapping[str, Any] | None = None,
    limits: Mapping[str, Any] | None = None,
    release: Mapping[str, Any] | None = None,
    absent: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """summary.json: the overall statistics (`samples_per_problem`: a count, or a range such
    as `2 to 17` for generations graded as they came), `by_tier`, `by_difficulty`, `by_platform`,
    `by_rating`, `by_language`, the backend that generated the samples, every setting of
    the evaluation (its identity), the protocol, the prepared data's contest-date window
    (its manifest's `date_window`; None: none recorded), the problems' `limits`
    (`time_seconds` and `memory_bytes`, each [lowest, highest]), the LiveCodeBench
    `release` ({name, files}; None: none chosen) and the `absent` tiers (tier → the
    difficulties mapped to it) that were to be evaluated and hold no problem."""
    tiers: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    buckets: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for r in records:
        tiers[str(r["tier"])].append(r)
        buckets[rating_bucket(r.get("rating"))].append(r)
    ordered = sorted(buckets, key=_bucket_order)
    difficulties = _groups(records, "difficulty")
    platforms = _groups(records, "platform")
    return {
        "protocol": protocol,
        "backend": backend,
        "samples_per_problem": samples_per_problem,
        "date_window": dict(date_window) if date_window is not None else None,
        "limits": dict(limits) if limits is not None else None,
        "release": dict(release) if release is not None else None,
        "absent": {tier: list(labels) for tier, labels in (absent or {}).items()},
        **group_stats(records, ks),
        "by_tier": {t: group_stats(rs, ks) for t, rs in tiers.items()},
        "by_difficulty": {
            d: group_stats(difficulties[d], ks) for d in sorted(difficulties, key=_difficulty_order)
        },
        "by_platform": {p: group_stats(platforms[p], ks) for p in sorted(platforms)},
        "by_rating": {b: group_stats(buckets[b], ks) for b in ordered},
        "by_language": language_stats(records, ks),
        "settings": dict(settings),
    }


def _seconds(value: float) -> str:
    return f"{value:g} s"


def _mib(value: int) -> str:
    return f"{value / (1 << 20):g} MiB"


def _span(values: Sequence[Any], show: Any) -> str:
    low, high = values
    return show(low) if low == high else f"{show(low)} to {show(high)}"


def settings_line(summary: Mapping[str, Any]) -> str:
    """`protocol livecodebench: 10 samples per problem, temperature 0.2, top_p 0.95, at most
    2000 new tokens; per test 6 s CPU, 1024 MiB; backend vllm-tp1`."""
    settings = summary.get("settings") or {}
    parts = [f"{summary['samples_per_problem']} samples per problem"]
    if "eval.temperature" in settings:
        parts.append(f"temperature {settings['eval.temperature']:g}")
    if "eval.top_p" in settings:
        parts.append(f"top_p {settings['eval.top_p']:g}")
    if "eval.max_new_tokens" in settings:
        parts.append(f"at most {settings['eval.max_new_tokens']} new tokens")
    line = f"protocol {summary.get('protocol') or '?'}: {', '.join(parts)}"
    limits = summary.get("limits")
    if limits:
        line += (
            f"; per test {_span(limits['time_seconds'], _seconds)} CPU, "
            f"{_span(limits['memory_bytes'], _mib)}"
        )
    return f"{line}; backend {summary['backend']}"


def window_line(summary: Mapping[str, Any]) -> str:
    """The contest-date window of the evaluated problems, as their manifest records it."""
    window = summary.get("date_window")
    if window is None:
        return "window: not recorded (data prepared without a manifest)"
    if window.get("from") is None and window.get("to") is None:
        return "window: none (every contest date)"
    low, high = window.get("from") or "the first", window.get("to") or "the last"
    return (
        f"window: contest dates {low} to {high} (inclusive): {window.get('selected')} "
        f"problems in it, {window.get('outside')} outside, {window.get('undated')} undated"
    )


def release_line(summary: Mapping[str, Any]) -> str | None:
    """`release release_v5: test.jsonl, …` (None when no release was chosen)."""
    release = summary.get("release")
    if not release:
        return None
    return f"release {release['name']}: {', '.join(release['files'])}"


def absent_line(summary: Mapping[str, Any]) -> str | None:
    """The evaluated tiers that hold no problem, with their difficulties (None: none)."""
    absent = summary.get("absent") or {}
    if not absent:
        return None
    parts = [
        f"tier {tier}" + (f" (difficulty {', '.join(labels)})" if labels else "")
        for tier, labels in absent.items()
    ]
    return f"absent: {'; '.join(parts)}: no problem of it in the data or the window"


def format_table(summary: Mapping[str, Any]) -> str:
    """The console table: the settings and window lines, then one row for all problems,
    each tier, difficulty, platform, rating bucket (none when no problem is rated) and
    language."""
    ks = list(summary["pass@k"])
    rows = [("all", summary)]
    rows += [(f"tier {t}", s) for t, s in summary["by_tier"].items()]
    rows += [(f"difficulty {d}", s) for d, s in (summary.get("by_difficulty") or {}).items()]
    rows += [(f"platform {p}", s) for p, s in (summary.get("by_platform") or {}).items()]
    if list(summary["by_rating"]) != [UNRATED]:  # no rating at all: no rows of it
        rows += [(f"rating {b}", s) for b, s in summary["by_rating"].items()]
    by_language = summary.get("by_language") or {}
    rows += [(f"language {language}", s) for language, s in by_language.items()]
    width = max(16, *(len(name) + 1 for name, _ in rows))
    head = f"{'group':<{width}}{'problems':>9}{'samples':>8}"
    head += "".join(f"{'pass@' + k:>9}" for k in ks)
    head += f"{'score':>8}{'compile':>8}{'code':>7}{'tokens':>8}"
    lines = [settings_line(summary)]
    lines += [line for line in (release_line(summary),) if line]
    lines.append(window_line(summary))
    lines += [line for line in (absent_line(summary),) if line]
    lines += [head, "-" * len(head)]
    for name, s in rows:
        cells = "".join(f"{s['pass@k'][k]:>9.3f}" for k in ks)
        lines.append(
            f"{name:<{width}}{s['problems']:>9}{s['samples']:>8}{cells}{s['mean_score']:>8.3f}"
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
