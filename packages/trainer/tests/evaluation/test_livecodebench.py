"""`eval.protocol=livecodebench` on a LiveCodeBench file: prepared in a folder beside the
evaluations, judged by our sandbox, summarised per difficulty and platform with the window
and the settings beside the numbers; compared across runs; bad files in one line."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from codefu_trainer.evaluation.cli import main
from codefu_trainer.evaluation.generation import BackendChoice, Generated, Messages
from codefu_trainer.evaluation.passk import pass_at_k
from codefu_trainer.evaluation.store import SAMPLES_FILE, SUMMARY_FILE

from ..conftest import CONF
from ..source_rows import LIAR, RIGHT, ROWS, WINDOW, WRONG, answer, write


def _main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _protocol(tmp_path: Path, source: Path | str, *extra: str) -> list[str]:
    return [
        "--config-dir",
        str(CONF),
        "cluster=cpu",
        "eval.protocol=livecodebench",
        f"data.source={source}",
        f"data.date_from={WINDOW[0]}",
        f"data.date_to={WINDOW[1]}",
        f"eval.root_dir={tmp_path}",
        *extra,
    ]


@pytest.mark.slow
def test_the_tiny_model_is_evaluated_by_the_protocol_per_difficulty_in_the_window(
    tiny_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write(tmp_path / "lcb" / "test6.jsonl")
    small = ["eval.samples=2", "eval.k=[1]", "eval.max_new_tokens=8", "eval.tracking.mlflow=false"]
    args = _protocol(tmp_path, source, f"model.path={tiny_model}", *small)
    code, out, err = _main(capsys, *args)
    assert code == 0, err

    (prepared,) = (tmp_path / "eval" / "data").iterdir()
    assert prepared.name.startswith("test6.jsonl_") and (prepared / "manifest.json").is_file()
    (run,) = [d for d in (tmp_path / "eval").iterdir() if d.name != "data"]
    summary = json.loads((run / SUMMARY_FILE).read_text())
    assert summary["protocol"] == "livecodebench"
    assert summary["date_window"] == {
        "from": WINDOW[0],
        "to": WINDOW[1],
        "selected": 3,
        "outside": 1,
        "undated": 0,
    }
    assert (summary["problems"], summary["samples"]) == (3, 6)
    assert list(summary["by_difficulty"]) == ["easy", "medium", "hard"]
    assert list(summary["by_platform"]) == ["atcoder", "codeforces", "leetcode"]
    for group in (*summary["by_difficulty"].values(), *summary["by_platform"].values()):
        assert (group["problems"], group["samples"]) == (1, 2)
        assert 0.0 <= group["pass@k"]["1"] <= 1.0
    assert summary["limits"] == {"time_seconds": [6.0, 6.0], "memory_bytes": [1 << 30, 1 << 30]}
    settings = summary["settings"]
    assert (settings["eval.protocol"], settings["eval.temperature"], settings["eval.top_p"]) == (
        "livecodebench",
        0.2,
        0.95,
    )
    assert settings["reward.languages"] == ["python"]
    # The console table: the protocol, its settings and the window above the numbers.
    assert (
        "protocol livecodebench: 2 samples per problem, temperature 0.2, top_p 0.95, at most "
        "8 new tokens; per test 6 s CPU, 1024 MiB; backend transformers-cpu"
    ) in out
    assert f"window: contest dates {WINDOW[0]} to {WINDOW[1]} (inclusive): 3 problems" in out
    for row in ("difficulty easy", "difficulty medium", "difficulty hard", "platform leetcode"):
        assert row in out
    assert "rating " not in out  # LiveCodeBench problems have no Codeforces rating
    records = [json.loads(line) for line in (run / SAMPLES_FILE).read_text().splitlines()]
    assert {(r["problem"], r["difficulty"], r["platform"]) for r in records} == {
        ("abc001_a", "easy", "atcoder"),
        ("3301", "medium", "leetcode"),
        ("2001_B", "hard", "codeforces"),
    }
    assert (run / "plots" / "passk_by_difficulty.png").is_file()

    # The same command again: the prepared folder and the samples are reused.
    code, out, err = _main(capsys, *args)
    assert code == 0, err
    assert "is up to date" in out and "0 to judge" in out

    # Another run of the protocol (another seed) compares with the first.
    code, _, err = _main(capsys, *args, "eval.seed=1")
    assert code == 0, err
    (second,) = [d for d in (tmp_path / "eval").iterdir() if d.name not in ("data", run.name)]
    code, out, err = _main(capsys, "compare", str(run), str(second))
    assert code == 0, err
    assert "3 problems in both" in out and "note: eval.seed differs" in out

    # A prepared folder as data.source is evaluated as it is.
    code, out, err = _main(capsys, *args[:-4], f"data.source={prepared}", *small)
    assert code == 0, err
    assert "is a prepared dataset: evaluating it as it is" in out


@pytest.mark.parametrize(
    ("source", "extra", "message"),
    [
        ("sample", [], "data.source=sample: "),  # CodeContests rows are not LiveCodeBench's
        (
            "lcb.jsonl",
            ["data.date_from=2030-01-01", "data.date_to=2030-12-31"],
            "selects no problem",
        ),
        ("missing.jsonl", [], "missing.jsonl"),
        ("empty.jsonl", [], "holds no problem"),
    ],
)
def test_a_file_the_protocol_cannot_evaluate_is_one_line_and_writes_nothing(
    source: str,
    extra: list[str],
    message: str,
    *,
    tiny_model: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write(tmp_path / "lcb.jsonl")
    (tmp_path / "empty.jsonl").write_text("")
    path = source if source == "sample" else str(tmp_path / source)
    code, _, err = _main(
        capsys, *_protocol(tmp_path / "runs", path, f"model.path={tiny_model}", *extra)
    )
    assert code == 2
    assert err.startswith("codefu-eval: ") and message in err and err.count("\n") == 1
    assert not (tmp_path / "runs").exists()


class ScriptedModel:
    """A test double for a model: per problem (found by its statement in the prompt) a right
    or wrong answer, chosen by the sample's seed where the problem mixes them."""

    def __init__(self, choice: BackendChoice) -> None:
        self.choice = choice

    def generate(self, prompts: Sequence[Messages], seeds: Sequence[int]) -> list[Generated]:
        out = []
        for messages, seed in zip(prompts, seeds, strict=True):
            text = messages[-1]["content"]
            (qid,) = [r["question_id"] for r in ROWS if r["question_content"][:40] in text]
            if qid == "abc001_a":
                program = RIGHT[qid]
            elif qid == "3301":  # an object that says it equals anything, or a wrong sum
                program = LIAR if seed % 2 == 0 else WRONG[qid]
            else:
                program = RIGHT[qid] if seed % 2 == 0 else WRONG[qid]
            out.append(Generated(answer(program), 20, seed))
        return out


@pytest.mark.slow
def test_pass_at_1_per_difficulty_from_answers_our_judge_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Right and wrong Python answers to LiveCodeBench's stdin and functional problems, judged
    by the sandbox (the functional one as a call, with its prelude; the stdin ones by its
    comparison): pass@1 per difficulty is the unbiased estimate from those verdicts, and an
    object that says it equals anything is not accepted."""
    from codefu_trainer.evaluation import run as eval_run
    from codefu_trainer.evaluation.config import compose_eval

    model = tmp_path / "scripted-model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    source = write(tmp_path / "test6.jsonl")
    settings = ["eval.samples=4", "eval.k=[1,4]", "eval.max_prompt_chars=100000"]
    overrides = _protocol(tmp_path, source, f"model.path={model}", *settings)
    cfg = compose_eval(CONF, [*overrides[2:], "eval.tracking.mlflow=false"])
    monkeypatch.setattr(
        eval_run, "load_generator", lambda cfg, model, choice: ScriptedModel(choice)
    )
    summary = eval_run.evaluate(cfg, log=lambda line: None).summary

    (run,) = (tmp_path / "eval").glob("*_test_*")
    records = [json.loads(line) for line in (run / SAMPLES_FILE).read_text().splitlines()]
    verdicts = {(r["problem"], r["sample"]): r["verdict"] for r in records}
    plan = ["abc001_a", "3301", "2001_B"]  # tiers easy, hard, expert, in order
    for (problem, sample), verdict in verdicts.items():
        seed = eval_run.sample_seed(0, plan.index(problem) * 4 + sample)
        if problem == "abc001_a" or (problem == "2001_B" and seed % 2 == 0):
            assert verdict == "AC", (problem, sample, verdict)
        else:
            assert verdict == "WA", (problem, sample, verdict)  # the liar included
    hard_right = sum(verdicts[("2001_B", j)] == "AC" for j in range(4))
    assert 0 < hard_right < 4  # the seeds of this plan mix right and wrong answers there
    by = summary["by_difficulty"]
    assert by["easy"]["pass@k"]["1"] == 1.0 and by["medium"]["pass@k"]["1"] == 0.0
    assert by["hard"]["pass@k"]["1"] == pytest.approx(pass_at_k(4, hard_right, 1))
    assert by["hard"]["pass@k"]["4"] == pytest.approx(pass_at_k(4, hard_right, 4))
    assert summary["pass@k"]["1"] == pytest.approx((1.0 + 0.0 + hard_right / 4) / 3)
    assert summary["by_platform"]["atcoder"]["pass@k"]["1"] == 1.0


def test_a_release_selects_its_files_and_a_missing_difficulty_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """eval.release=release_v2 reads test.jsonl and test2.jsonl of data.source, as its
    version_tag does; their problems are easy and medium, so the hard tier is evaluated
    without problems: said, not an error. A release whose file is missing is refused."""
    from codefu_trainer.evaluation import run as eval_run
    from codefu_trainer.evaluation.config import compose_eval
    from codefu_trainer.evaluation.prepared import with_prepared_data
    from codefu_trainer.run.prepared_data import BadInputError

    model = tmp_path / "scripted-model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    by_id = {r["question_id"]: r for r in ROWS}
    lcb = tmp_path / "lcb"
    for name, qid in (
        ("test.jsonl", "abc001_a"),
        ("test2.jsonl", "3301"),
        ("test6.jsonl", "2001_B"),
    ):
        write(lcb / name, [by_id[qid]])
    overrides = [
        "cluster=cpu",
        "eval.protocol=livecodebench",
        f"data.source={lcb}",
        f"eval.root_dir={tmp_path}",
        f"model.path={model}",
        "eval.samples=1",
        "eval.k=[1]",
        "eval.tracking.mlflow=false",
    ]
    monkeypatch.setattr(
        eval_run, "load_generator", lambda cfg, model, choice: ScriptedModel(choice)
    )
    lines: list[str] = []
    summary = eval_run.evaluate(
        compose_eval(CONF, [*overrides, "eval.release=release_v2"]), log=lines.append
    ).summary
    assert summary["release"] == {"name": "release_v2", "files": ["test.jsonl", "test2.jsonl"]}
    assert summary["problems"] == 2 and list(summary["by_difficulty"]) == ["easy", "medium"]
    assert summary["absent"] == {"expert": ["hard"]}
    absent = "absent: tier expert (difficulty hard): no problem of it in the data or the window"
    assert any(line.startswith(f"codefu-eval: {absent}") for line in lines)
    (table,) = [line for line in lines if line.startswith("protocol livecodebench")]
    assert "\nrelease release_v2: test.jsonl, test2.jsonl\n" in table and absent in table
    (prepared,) = (tmp_path / "eval" / "data").iterdir()
    assert prepared.name.startswith("release_v2_")

    with pytest.raises(BadInputError, match=r"files lack test3\.jsonl: add them"):
        with_prepared_data(compose_eval(CONF, [*overrides, "eval.release=release_v3"]))
