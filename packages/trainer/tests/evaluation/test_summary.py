"""Statistics of an evaluation, and two evaluations compared with a paired bootstrap."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codefu_trainer.evaluation.compare import (
    bootstrap_interval,
    compare,
    format_comparison,
    load_evaluation,
)
from codefu_trainer.evaluation.passk import pass_at_k
from codefu_trainer.evaluation.store import SUMMARY_FILE, StoreError, append_samples, open_store
from codefu_trainer.evaluation.summary import format_table, rating_bucket, summarize


def _record(
    problem: str,
    sample: int,
    verdict: str,
    *,
    tier: str = "easy",
    rating: int = 800,
    language: str = "cpp",
) -> dict:
    scores = {"AC": 1.0, "WA": 0.25, "CE": -0.5, "NO_CODE": -1.0, "DEADLINE": 0.0}
    scores["LANGUAGE"] = -1.0
    return {
        "problem": problem,
        "sample": sample,
        "tier": tier,
        "rating": rating,
        "verdict": verdict,
        "score": scores[verdict],
        "correct": verdict == "AC",
        "has_code": int(verdict not in ("NO_CODE", "LANGUAGE")),
        "language": "" if verdict == "NO_CODE" else language,
        "judge_failure": int(verdict == "DEADLINE"),
        "response_tokens": 10 * (sample + 1),
    }


def _records(verdicts: dict[str, list[str]], tier: str = "easy", rating: int = 800) -> list[dict]:
    return [
        _record(p, j, v, tier=tier, rating=rating)
        for p, vs in verdicts.items()
        for j, v in enumerate(vs)
    ]


def test_rating_buckets() -> None:
    assert [rating_bucket(r) for r in (800, 999, 1000, 3500)] == [
        "800-999",
        "800-999",
        "1000-1199",
        "3400-3599",
    ]
    assert rating_bucket(None) == rating_bucket(0) == "unrated"


def test_summary_statistics_by_tier_and_rating() -> None:
    records = _records({"a": ["AC", "WA", "CE", "NO_CODE"], "b": ["WA", "WA", "DEADLINE", "CE"]})
    records += _records({"c": ["AC", "AC", "AC", "AC"]}, tier="hard", rating=1500)
    s = summarize(records, [1, 2, 4], 4, "transformers-cpu", {"eval.seed": 0})
    assert s["backend"] == "transformers-cpu" and s["settings"] == {"eval.seed": 0}
    assert (s["problems"], s["samples"], s["samples_per_problem"]) == (3, 12, 4)
    for k in (1, 2, 4):
        expected = (pass_at_k(4, 1, k) + pass_at_k(4, 0, k) + pass_at_k(4, 4, k)) / 3
        assert s["pass@k"][str(k)] == pytest.approx(expected)
    assert s["verdicts"] == {"AC": 5, "CE": 2, "DEADLINE": 1, "NO_CODE": 1, "WA": 3}
    assert s["compile_rate"] == pytest.approx(
        8 / 12
    )  # AC and WA ran; CE, NO_CODE, DEADLINE did not
    assert s["code_rate"] == pytest.approx(11 / 12)
    assert s["judge_failures"] == 1
    assert s["mean_score"] == pytest.approx(sum(r["score"] for r in records) / 12)
    assert s["response_tokens"] == {"mean": 25.0, "max": 40}
    assert list(s["by_tier"]) == ["easy", "hard"]
    assert s["by_tier"]["hard"]["pass@k"]["1"] == 1.0
    assert list(s["by_rating"]) == ["800-999", "1400-1599"]
    assert s["by_rating"]["800-999"]["problems"] == 2
    table = format_table(s)
    assert "tier hard" in table and "rating 1400-1599" in table and "judge failures: 1" in table
    json.dumps(s)  # summary.json is plain JSON


def test_pass_at_k_and_the_verdict_mix_per_language() -> None:
    # Problem a: C++ AC, Python AC, Python WA, no code; b: C++ WA, Python refused by the run.
    records = [
        _record("a", 0, "AC"),
        _record("a", 1, "AC", language="python"),
        _record("a", 2, "WA", language="python"),
        _record("a", 3, "NO_CODE"),
        _record("b", 0, "WA"),
        _record("b", 1, "LANGUAGE", language="python"),
        _record("b", 2, "CE"),
        _record("b", 3, "CE", language="python"),
    ]
    s = summarize(records, [1, 2], 4, "transformers-cpu", {})
    by = s["by_language"]
    assert list(by) == ["cpp", "none", "python"]
    assert [by[lang]["samples"] for lang in by] == [3, 1, 4]
    assert by["python"]["verdicts"] == {"AC": 1, "CE": 1, "LANGUAGE": 1, "WA": 1}
    assert by["cpp"]["verdicts"] == {"AC": 1, "CE": 1, "WA": 1}
    # pass@k per language: over each problem's 4 samples, correct only in that language.
    for k in (1, 2):
        assert by["python"]["pass@k"][str(k)] == pytest.approx(pass_at_k(4, 1, k) / 2)
        assert by["cpp"]["pass@k"][str(k)] == pytest.approx(pass_at_k(4, 1, k) / 2)
        assert by["none"]["pass@k"][str(k)] == 0.0
    assert by["python"]["problems"] == 2 and by["python"]["code_rate"] == pytest.approx(3 / 4)
    assert by["python"]["compile_rate"] == pytest.approx(2 / 4)
    table = format_table(s)
    assert "language python" in table and "language cpp" in table
    assert "verdicts python: AC 1 (25%), CE 1 (25%), LANGUAGE 1 (25%), WA 1 (25%)" in table
    # One language: the table has its row and no per-language verdict lines.
    single = format_table(summarize(_records({"a": ["AC", "WA"]}), [1], 2, "x", {}))
    assert "language cpp" in single and "verdicts cpp" not in single


def _evaluation(
    tmp_path: Path,
    name: str,
    verdicts: dict[str, list[str]],
    language: str = "cpp",
    settings: dict[str, object] | None = None,
) -> Path:
    out = tmp_path / name
    open_store(out, {"model.path": name, "eval.samples": 4})
    records = [
        _record(p, j, v, language=language) for p, vs in verdicts.items() for j, v in enumerate(vs)
    ]
    append_samples(out, records)
    settings = {"model.path": name, **(settings or {})}
    summary = summarize(records, [1, 4], 4, "transformers-cpu", settings)
    (out / SUMMARY_FILE).write_text(json.dumps(summary))
    return out


def test_compare_measures_a_paired_improvement(tmp_path: Path) -> None:
    problems = [f"p{i}" for i in range(12)]
    base = _evaluation(
        tmp_path,
        "base",
        {p: ["WA", "WA", "CE", "AC" if i < 2 else "WA"] for i, p in enumerate(problems)},
    )
    trained = _evaluation(tmp_path, "trained", {p: ["AC", "AC", "WA", "CE"] for p in problems})
    result = compare(load_evaluation(base), load_evaluation(trained), resamples=2000, seed=1)
    row = result["metrics"]["pass@1"]
    assert row["a"] == pytest.approx(2 / 12 * 0.25) and row["b"] == pytest.approx(0.5)
    assert row["difference"] == pytest.approx(row["b"] - row["a"])
    assert 0 < row["interval"][0] <= row["difference"] <= row["interval"][1]
    assert (row["problems_up"], row["problems_down"]) == (12, 0)
    assert result["setting_differences"] == {}
    text = format_comparison(result)
    assert "B beats A on pass@1" in text and "mean_score" in text
    again = compare(load_evaluation(base), load_evaluation(trained), resamples=2000, seed=1)
    assert again == result  # seeded


def test_a_cpp_and_a_python_run_of_one_model_compare(tmp_path: Path) -> None:
    problems = [f"p{i}" for i in range(10)]
    cpp = _evaluation(
        tmp_path,
        "cpp",
        {p: ["AC", "AC", "WA", "CE"] for p in problems},
        settings={"reward.languages": ["cpp"], "data.easy/test.parquet": "c0ffee"},
    )
    python = _evaluation(
        tmp_path,
        "python",
        {p: ["AC", "WA", "WA", "WA"] for p in problems},
        language="python",
        settings={"reward.languages": ["python"], "data.easy/test.parquet": "beef00"},
    )
    result = compare(load_evaluation(cpp), load_evaluation(python), resamples=500)
    assert result["metrics"]["pass@1"]["a"] == pytest.approx(0.5)
    assert result["metrics"]["pass@1"]["b"] == pytest.approx(0.25)
    assert result["setting_differences"]["reward.languages"] == [["cpp"], ["python"]]
    text = format_comparison(result)
    assert "A beats B on pass@1" in text and "note: reward.languages differs" in text
    summary = json.loads((python / SUMMARY_FILE).read_text())
    assert list(summary["by_language"]) == ["python"]


def test_equal_evaluations_show_no_difference(tmp_path: Path) -> None:
    verdicts = {"p": ["AC", "WA", "WA", "WA"], "q": ["WA", "WA", "WA", "WA"]}
    a, b = _evaluation(tmp_path, "a", verdicts), _evaluation(tmp_path, "b", verdicts)
    result = compare(load_evaluation(a), load_evaluation(b), resamples=500)
    assert all(row["interval"] == [0.0, 0.0] for row in result["metrics"].values())
    assert "No difference is measured" in format_comparison(result)


def test_bootstrap_interval_covers_the_mean_and_narrows_with_more_problems() -> None:
    small = bootstrap_interval([0.0, 1.0] * 5, 4000, 0.95, seed=0)
    large = bootstrap_interval([0.0, 1.0] * 200, 4000, 0.95, seed=0)
    assert small[0] < 0.5 < small[1] and large[0] < 0.5 < large[1]
    assert large[1] - large[0] < small[1] - small[0]


def test_compare_refuses_unfinished_and_disjoint_evaluations(tmp_path: Path) -> None:
    a = _evaluation(tmp_path, "a", {"p": ["AC", "WA", "WA", "WA"]})
    b = _evaluation(tmp_path, "b", {"q": ["AC", "WA", "WA", "WA"]})
    with pytest.raises(StoreError, match="no problem in common"):
        compare(load_evaluation(a), load_evaluation(b))
    (b / SUMMARY_FILE).unlink()
    with pytest.raises(StoreError, match="did not finish"):
        load_evaluation(b)
    with pytest.raises(StoreError, match="not an evaluation directory"):
        load_evaluation(tmp_path / "missing")


@pytest.mark.parametrize("solved", [False, True])
def test_the_passk_chart_says_so_when_every_pass_at_k_is_0(solved: bool) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from codefu_trainer.evaluation.plots import ALL_ZERO_NOTE, passk_figure

    verdicts = {"a": ["WA", "CE"], "b": ["NO_CODE", "AC" if solved else "WA"]}
    fig = passk_figure(summarize(_records(verdicts), [1, 2], 2, "transformers-cpu", {}))
    notes = [t.get_text() for t in fig.axes[0].texts]
    plt.close(fig)
    assert notes == ([] if solved else [ALL_ZERO_NOTE])


def test_difficulty_and_platform_groups_and_the_lines_above_the_table() -> None:
    """LiveCodeBench's difficulties in its order (others after), platforms, no rating rows
    when nothing is rated, and the protocol, settings, limits and window lines."""
    records = []
    for problem, difficulty, platform, verdicts in (
        ("h", "hard", "atcoder", ["WA", "WA"]),
        ("e", "easy", "leetcode", ["AC", "AC"]),
        ("m", "medium", "leetcode", ["AC", "WA"]),
        ("v", "very_hard", None, ["WA", "AC"]),
        ("x", None, None, ["WA", "WA"]),
    ):
        for j, verdict in enumerate(verdicts):
            record = _record(problem, j, verdict, rating=0, language="python")
            records.append({**record, "difficulty": difficulty, "platform": platform})
    settings = {"eval.temperature": 0.2, "eval.top_p": 0.95, "eval.max_new_tokens": 2000}
    window = {"from": "2024-08-01", "to": None, "selected": 4, "outside": 2, "undated": 1}
    limits = {"time_seconds": [6.0, 6.0], "memory_bytes": [1 << 28, 1 << 30]}
    s = summarize(
        records, [1, 2], 2, "vllm-tp1", settings,
        protocol="livecodebench", date_window=window, limits=limits,
    )  # fmt: skip
    assert list(s["by_difficulty"]) == ["easy", "medium", "hard", "very_hard"]
    assert s["by_difficulty"]["medium"]["pass@k"]["1"] == pytest.approx(0.5)
    assert s["by_difficulty"]["easy"]["pass@k"]["1"] == 1.0
    assert list(s["by_platform"]) == ["atcoder", "leetcode"]
    assert s["by_platform"]["leetcode"]["problems"] == 2
    assert (s["protocol"], s["date_window"], s["limits"]) == ("livecodebench", window, limits)
    lines = format_table(s).splitlines()
    assert lines[0] == (
        "protocol livecodebench: 2 samples per problem, temperature 0.2, top_p 0.95, at most "
        "2000 new tokens; per test 6 s CPU, 256 MiB to 1024 MiB; backend vllm-tp1"
    )
    assert lines[1] == (
        "window: contest dates 2024-08-01 to the last (inclusive): 4 problems in it, "
        "2 outside, 1 undated"
    )
    table = "\n".join(lines)
    assert "difficulty very_hard" in table and "platform atcoder" in table
    assert "rating unrated" not in table
    # No window set, and a summary of data without a manifest.
    open_window = {"from": None, "to": None, "selected": None, "outside": 0, "undated": 0}
    plain = summarize(records, [1], 2, "x", {}, date_window=open_window)
    assert format_table(plain).splitlines()[1] == "window: none (every contest date)"
    unknown = format_table(summarize(records, [1], 2, "x", {})).splitlines()
    assert unknown[:2] == [
        "protocol ?: 2 samples per problem; backend x",
        "window: not recorded (data prepared without a manifest)",
    ]
