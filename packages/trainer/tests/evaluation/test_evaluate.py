"""Evaluations end to end with the real judge on Ray: pass@k from judged samples, resuming after
a kill, the CLI with the tiny model, MLflow, compare, and bad inputs as one clear line."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from codefu_trainer.evaluation import run as eval_run
from codefu_trainer.evaluation.cli import main
from codefu_trainer.evaluation.config import compose_eval
from codefu_trainer.evaluation.generation import BackendChoice, Generated, Messages
from codefu_trainer.evaluation.passk import pass_at_k
from codefu_trainer.evaluation.store import SAMPLES_FILE, SUMMARY_FILE

from ..conftest import APLUSB_OK, CONF, own_ray_cluster
from ..reward.problems import DIFF_PROGRAM, respond

RESPONSES = (APLUSB_OK, respond(DIFF_PROGRAM), "I cannot solve this.")  # AC, WA, NO_CODE


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[None]:
    pytest.importorskip("ray")
    with own_ray_cluster(num_cpus=2):
        yield


class ScriptedGenerator:
    """A test double for a model: the response of a sample is fixed by its seed."""

    def __init__(self, choice: BackendChoice) -> None:
        self.choice = choice
        self.batches: list[int] = []

    def generate(self, prompts: Sequence[Messages], seeds: Sequence[int]) -> list[Generated]:
        self.batches.append(len(prompts))
        return [Generated(RESPONSES[s % 3], 7, s) for s in seeds]


def _config_dir(tmp_path: Path) -> Path:
    model = tmp_path / "scripted-model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    return model


@pytest.mark.ray
@pytest.mark.slow
def test_pass_at_k_from_judged_samples_and_resume_after_a_kill(
    ray_cluster: None, prepared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "eval"
    cfg = compose_eval(
        CONF,
        [
            "cluster=cpu",
            f"model.path={_config_dir(tmp_path)}",
            f"data.out_dir={prepared_data}",
            "eval.samples=4",
            "eval.k=[1,2,4]",
            "eval.batch_size=3",
            f"eval.out={out}",
            "eval.tracking.mlflow=false",
        ],
    )
    generators: list[ScriptedGenerator] = []

    def load(cfg: object, model: str, choice: BackendChoice) -> ScriptedGenerator:
        generators.append(ScriptedGenerator(choice))
        return generators[-1]

    monkeypatch.setattr(eval_run, "load_generator", load)
    first = eval_run.evaluate(cfg, log=lambda line: None)
    assert first.judged == 8 and generators[0].batches == [3, 3, 2]

    # Each sample's seed comes from its place in the plan, and its verdict from the seed.
    lines = [json.loads(line) for line in (out / SAMPLES_FILE).read_text().splitlines()]
    problems = ["0_A. Sum", "1_A. Sum"]
    for r in lines:
        index = problems.index(r["problem"]) * 4 + r["sample"]
        assert r["seed"] == eval_run.sample_seed(0, index)
        assert r["verdict"] == ("AC", "WA", "NO_CODE")[r["seed"] % 3]
        assert r["correct"] == (r["verdict"] == "AC")
        assert (r["tier"], r["rating"]) == ("easy", 800)
    assert {r["verdict"] for r in lines} == {"AC", "WA", "NO_CODE"}
    counts = {p: sum(r["correct"] for r in lines if r["problem"] == p) for p in problems}
    summary = first.summary
    for k in (1, 2, 4):
        expected = sum(pass_at_k(4, c, k) for c in counts.values()) / 2
        assert summary["pass@k"][str(k)] == pytest.approx(expected)
    assert summary["backend"] == "transformers-cpu"
    assert json.loads((out / SUMMARY_FILE).read_text()) == summary

    # A kill: the first five lines whole, the sixth half written, no summary yet.
    text = (out / SAMPLES_FILE).read_text().splitlines(keepends=True)
    (out / SAMPLES_FILE).write_text("".join(text[:5]) + text[5][: len(text[5]) // 2])
    (out / SUMMARY_FILE).unlink()
    second = eval_run.evaluate(cfg, log=lambda line: None)
    assert second.judged == 3  # only the missing samples are judged
    assert generators[1].batches == [3, 2]  # the batch holding samples 3-5, then the last
    assert second.summary == summary
    lines = (out / SAMPLES_FILE).read_text().splitlines()
    keys = [(json.loads(line)["problem"], json.loads(line)["sample"]) for line in lines]
    assert len(keys) == len(set(keys)) == 8


def _main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.ray
@pytest.mark.slow
def test_cli_evaluates_the_tiny_model_refuses_another_in_its_dir_and_compares(
    ray_cluster: None,
    prepared_data: Path,
    tiny_model: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    common = [
        "--config-dir",
        str(CONF),
        "cluster=cpu",
        f"data.out_dir={prepared_data}",
        "eval.samples=2",
        "eval.k=[1,2]",
        "eval.max_new_tokens=8",
        f"eval.root_dir={tmp_path}",
    ]
    code, out, err = _main(capsys, *common, f"model.path={tiny_model}")
    assert code == 0, err
    (base,) = (tmp_path / "eval").iterdir()
    summary = json.loads((base / SUMMARY_FILE).read_text())
    assert summary["backend"] == "transformers-cpu" and "backend transformers-cpu" in out
    assert (summary["problems"], summary["samples"]) == (2, 4)
    assert len((base / SAMPLES_FILE).read_text().splitlines()) == 4
    assert (base / "plots" / "passk_by_rating.png").is_file()
    assert (base / "plots" / "verdicts.png").is_file()
    import mlflow

    run_id = (base / "mlflow_run_id.txt").read_text().strip()
    mlflow.set_tracking_uri(f"sqlite:///{base / 'mlflow.db'}")
    logged = mlflow.get_run(run_id).data
    assert logged.metrics["eval/pass_at_1"] == summary["pass@k"]["1"]
    assert logged.params["eval.samples"] == "2"

    # Another model's samples in that directory: refused, one line.
    other = tmp_path / "other-model"
    other.mkdir()
    for f in tiny_model.iterdir():
        (other / f.name).write_bytes(f.read_bytes())
    code, _, err = _main(capsys, *common, f"model.path={other}", f"eval.out={base}")
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "holds samples of another evaluation (model.path:" in err

    code, _, err = _main(capsys, *common, f"model.path={other}", "eval.tracking.mlflow=false")
    assert code == 0, err
    (second,) = set((tmp_path / "eval").iterdir()) - {base}
    code, out, err = _main(
        capsys, "compare", str(base), str(second), "--out", str(tmp_path / "c.json")
    )
    assert code == 0, err
    assert "pass@1" in out and "pass@2" in out and "mean_score" in out
    assert json.loads((tmp_path / "c.json").read_text())["problems"] == 2


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        (["model.path=/nonexistent/run/model"], (3, "model.path=/nonexistent/run/model: no such")),
        (
            ["model=deepseek_r1_distill_qwen_7b", "model.path=tests/model"],
            (3, "tests/model: no such"),
        ),
        (["data=bogus"], (2, "'bogus' is not an option of the config group 'data'")),
        (["eval.k=[1,5]", "eval.samples=2"], (2, "asks for pass@5 but eval.samples=2")),
        (["data.out_dir=/nonexistent"], (3, "Run `nox -s prepare` first")),
        (["eval.split=valid"], (2, "eval.split")),
    ],
)
def test_bad_inputs_give_one_clear_line(
    overrides: list[str],
    expected: tuple[int, str],
    tiny_model: Path,
    prepared_data: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    base = ["--config-dir", str(CONF), "cluster=cpu", f"model.path={tiny_model}"]
    code, message = expected
    got, _, err = _main(capsys, *base, f"data.out_dir={prepared_data}", *overrides)
    assert got == code
    assert message in err and "Traceback" not in err
    assert err.startswith("codefu-eval: ") and err.count("\n") == 1


def test_a_corrupt_prepared_split_is_one_line_naming_it(
    tiny_model: Path, prepared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    split = prepared_data / "easy" / "test.parquet"
    split.write_bytes(split.read_bytes()[:-100])  # truncated: the footer is gone
    got, _, err = _main(
        capsys, "--config-dir", str(CONF), "cluster=cpu", f"model.path={tiny_model}",
        f"data.out_dir={prepared_data}",
    )  # fmt: skip
    assert got == 2
    assert err.startswith(f"codefu-eval: {split}: not a readable parquet file")
    assert "data.force=true" in err and err.count("\n") == 1


def test_prompts_prepared_for_another_language_are_one_line(
    tiny_model: Path, prepared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from codefu_data.prepare import MANIFEST_FORMAT

    manifest = prepared_data / "manifest.json"
    manifest.write_text(json.dumps({"format": MANIFEST_FORMAT, "config": {"language": "cpp"}}))
    got, _, err = _main(
        capsys, "--config-dir", str(CONF), "cluster=cpu", f"model.path={tiny_model}",
        f"data.out_dir={prepared_data}", "data.language=python", "reward.languages=[python]",
    )  # fmt: skip
    assert got == 2
    assert err.startswith(f"codefu-eval: {manifest}: its prompts ask for cpp")
    assert err.count("\n") == 1


def test_compare_of_a_missing_directory_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _main(capsys, "compare", str(tmp_path / "a"), str(tmp_path / "b"))
    assert code == 2 and err.count("\n") == 1 and "not an evaluation directory" in err


@pytest.mark.ray
@pytest.mark.slow
def test_final_evaluation_of_a_rehearsal_logs_to_the_runs_mlflow_run(
    ray_cluster: None, prepared_data: Path, tiny_model: Path, tmp_path: Path
) -> None:
    import mlflow

    from codefu_trainer.run.config import mlflow_tracking_uri
    from codefu_trainer.run.tracking import Tracker
    from codefu_trainer.training.clusters.registry import compose_run

    run_dir = tmp_path / "run"
    train = compose_run(
        CONF,
        [
            "cluster=cpu",
            f"data.out_dir={prepared_data}",
            f"run.dir={run_dir}",
            "run.evaluate_final=true",
            "rehearsal.max_completion_tokens=8",
        ],
        with_verl=False,
    ).cfg
    uri = mlflow_tracking_uri(train.run.tracking, run_dir)
    tracker = Tracker(run_dir, uri, "codefu-grpo", "run")  # what the rehearsal leaves behind
    tracker.log(1, {"critic/score/mean": -1.0})
    tracker.close()
    outcome = eval_run.evaluate_trained_model(train, run_dir, tiny_model)
    assert outcome.out_dir == run_dir / "eval"
    settings = outcome.summary["settings"]
    assert (settings["eval.max_new_tokens"], settings["eval.max_prompt_chars"]) == (8, 160)
    mlflow.set_tracking_uri(uri)
    metrics = mlflow.get_run(tracker.mlflow_run_id).data.metrics
    assert metrics["eval/pass_at_1"] == outcome.summary["pass@k"]["1"]
    assert metrics["critic/score/mean"] == -1.0  # the same run as training's metrics
