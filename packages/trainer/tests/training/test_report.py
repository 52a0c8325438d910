"""Plots and judge table from a run's metrics.jsonl or MLflow run; the sinks that write them."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from codefu_trainer.run.tracking import Tracker, read_metrics
from codefu_trainer.training.report.cli import main

PNG = b"\x89PNG\r\n\x1a\n"


def _write_metrics(run_dir: Path, steps: int = 4) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    with (run_dir / "metrics.jsonl").open("w") as f:
        for s in range(1, steps + 1):
            record = {
                "step": s,
                "critic/score/mean": -1 + s / steps,
                "critic/score/min": -1.0,
                "critic/score/max": s / steps,
                "actor/kl_loss": 1e-3 * s,
                "actor/ppo_kl": 1e-4 * s,
                "actor/pg_clipfrac": 0.01 * s,
                "response_length/mean": 100.0 + s,
                "judge/verdict/AC": 0.25,
                "judge/compiled": 0.75,
                "judge/verdict/WA": 0.5,
                "judge/verdict/NO_CODE": 0.25,
            }
            f.write(json.dumps(record) + "\n")


def test_report_writes_every_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write_metrics(tmp_path)
    assert main([str(tmp_path)]) == 0
    names = {"learning", "reward", "kl", "clipfrac", "response_length", "verdicts", "judge"}
    for name in names:
        png = tmp_path / "plots" / f"{name}.png"
        assert png.read_bytes()[:8] == PNG
        assert png.stat().st_size > 5000  # a drawn figure, not an empty canvas
    printed = capsys.readouterr().out.splitlines()
    assert {Path(p).stem for p in printed[: len(names)]} == names
    assert printed[len(names)] == ""
    assert printed[len(names) + 1].startswith(f"judge metrics of {tmp_path / 'metrics.jsonl'}")


def test_tracker_appends_steps_and_resumes_the_same_mlflow_run(tmp_path: Path) -> None:
    import mlflow

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    out = io.StringIO()
    t = Tracker(tmp_path, uri, "exp", "run-a", params={"a": {"b": 1}}, out=out)
    t.log(1, {"critic/score/mean": -1.0, "judge/verdict/NO_CODE": 1.0, "bad": float("nan")})
    first_id = t.mlflow_run_id
    t.close()
    t = Tracker(tmp_path, uri, "exp", "run-a", out=out)  # a resumed run
    t.log(2, {"critic/score/mean": -0.5})
    t.close()
    assert t.mlflow_run_id == first_id
    records = read_metrics(tmp_path)
    assert [r["step"] for r in records] == [1, 2]
    assert "bad" not in records[0]
    history = mlflow.MlflowClient(tracking_uri=uri).get_metric_history(
        first_id, "critic/score/mean"
    )
    assert [(m.step, m.value) for m in history] == [(1, -1.0), (2, -0.5)]
    table = out.getvalue()
    assert "score" in table.splitlines()[0] and "NO_CODE=1.00" in table


JUDGE_STEPS = 4


def _judge_record(s: int) -> dict[str, float]:
    """The judge metrics of step s, as `reward.step_metrics` names them."""
    return {
        "judge/samples": 8.0,
        "judge/verdict/AC": 0.125 * s,
        "judge/verdict/WA": 0.5 - 0.125 * s if s < 4 else 0.0,
        "judge/verdict/CE": 0.25,
        "judge/verdict/NO_CODE": 0.25,
        "judge/verdict/TLE": 0.0,
        "judge/has_code": 0.75,
        "judge/compiled": 0.5,
        "judge/tests_passed_frac": 0.1 * s,
        "judge/failure": 0.125 if s == 2 else 0.0,
        "judge/failures/DEADLINE": 1.0 if s == 2 else 0.0,
        "judge/failures/WORKER_LOST": 0.0,
        "judge/jobs": 7.0,
        "judge/duplicates": 1.0,
        "judge/wall_seconds": 10.0 * s,
        "judge/cpu_seconds": 8.0 * s,
        "judge/cpus": 2.0,
        "judge/cpu_bound_seconds": 4.0 * s,
        "judge/wall_over_bound": 2.5,
        "judge/queue_high_water": float(s + 2),
    }


def _table_row(table: str, key: str) -> list[float]:
    """The numbers of `key`'s row in the judge table: steps, first, last, mean, max."""
    rows = [line.split() for line in table.splitlines() if line.split()[:1] == [key]]
    assert len(rows) == 1, table
    return [float(v) for v in rows[0][1:]]


def test_report_draws_the_judge_panel_and_table_from_metrics_jsonl(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from codefu_trainer.training.report.plots import NOT_LOGGED, judge_figure

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    with (run_dir / "metrics.jsonl").open("w") as f:
        for s in range(1, JUDGE_STEPS + 1):
            f.write(json.dumps({"step": s, "critic/score/mean": -0.5, **_judge_record(s)}) + "\n")
    assert main([str(run_dir)]) == 0
    out = capsys.readouterr().out
    png = run_dir / "plots" / "judge.png"
    assert str(png) in out.splitlines()
    assert png.read_bytes()[:8] == PNG and png.stat().st_size > 20000
    assert _table_row(out, "judge/wall_seconds") == [4, 10, 40, 25, 40]
    assert _table_row(out, "judge/verdict/AC") == [4, 0.125, 0.5, 0.3125, 0.5]
    assert _table_row(out, "judge/failures/DEADLINE") == [4, 0, 0, 0.25, 1]
    assert _table_row(out, "judge/queue_high_water") == [4, 3, 6, 4.5, 6]
    # Verdicts and failure kinds that stayed 0 are left out, and the table says so.
    assert "judge/verdict/TLE" not in out and "judge/failures/WORKER_LOST" not in out
    assert "2 verdicts / failure kinds 0 at every step not shown" in out
    assert "audit" not in out  # never logged: no row

    import matplotlib.pyplot as plt

    records = read_metrics(run_dir)
    fig = judge_figure(records)
    try:
        mix, code, fail, timing, queue, audit = fig.axes[:6]
        texts = [[t.get_text() for t in ax.texts] for ax in (mix, code, fail, timing, queue)]
        assert all(NOT_LOGGED not in t for t in texts)
        assert NOT_LOGGED in [t.get_text() for t in audit.texts]
        # Stacked verdict bars: the tops of each step's stack add up to its shares (1.0).
        tops: dict[float, float] = {}
        for bar in mix.patches:
            x = round(bar.get_x() + bar.get_width() / 2, 6)
            tops[x] = max(tops.get(x, 0.0), bar.get_y() + bar.get_height())
        assert sorted(tops) == [1.0, 2.0, 3.0, 4.0]
        assert all(abs(top - 1.0) < 1e-9 for top in tops.values())
        labels = {line.get_label() for ax in fig.axes for line in ax.get_lines()}
        assert {"judge/wall_seconds", "judge/cpu_bound_seconds", "judge/wall_over_bound"} <= labels
        assert {"judge/failure", "judge/failures/DEADLINE", "judge/queue_high_water"} <= labels
    finally:
        plt.close(fig)


def _veRL_run(run_dir: Path, uri: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """Log JUDGE_STEPS steps the way a veRL run does: the run of the run dir's name
    (`tracking.mlflow_run_for`, as `continue_mlflow_run`), then veRL's own MLflow logger."""
    import mlflow
    from verl.utils.tracking import Tracking

    from codefu_trainer.run.tracking import mlflow_run_for

    # veRL's logger sets MLflow's global URI: put back what was there (None: unset).
    previous_uri = mlflow.get_tracking_uri() if mlflow.tracking.is_tracking_uri_set() else None
    run_id = mlflow_run_for(uri, "codefu-grpo", run_dir.name)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.setenv("MLFLOW_RUN_ID", run_id)
    try:
        logger = Tracking("codefu-grpo", run_dir.name, default_backend=["mlflow"])
        logger.log({"val-core/code_contests/reward/mean@4": -0.75}, step=0)
        for s in range(1, JUDGE_STEPS + 1):
            logger.log({"critic/score/mean": -1 + s / JUDGE_STEPS, **_judge_record(s)}, step=s)
        logger.finish()
    finally:
        mlflow.set_tracking_uri(previous_uri)
    return run_id


def test_report_reads_a_verl_runs_mlflow_store_in_the_run_dir(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from mlflow.tracking import MlflowClient

    from codefu_trainer.training.report.records import load_records

    run_dir = tmp_path / "grpo-20260101-000000"
    run_dir.mkdir()
    uri = f"sqlite:///{run_dir / 'mlflow.db'}"
    run_id = _veRL_run(run_dir, uri, monkeypatch)
    # Another run in the same store (an evaluation): the run dir's own is still found.
    client = MlflowClient(tracking_uri=uri)
    other = client.create_run(
        client.get_experiment_by_name("codefu-grpo").experiment_id, run_name="eval"
    )
    client.log_metric(other.info.run_id, "judge/wall_seconds", 99.0, step=1)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.delenv("MLFLOW_RUN_ID", raising=False)  # end_run drops it

    records = load_records(run_dir)
    assert run_id in records.source
    assert [r["step"] for r in records.steps] == [0, 1, 2, 3, 4]
    assert records.steps[0] == {"step": 0, "val-core/code_contests/reward/mean@4": -0.75}
    for r in records.steps[1:]:
        s = r["step"]
        assert r == pytest.approx(
            {"step": s, "critic/score/mean": -1 + s / JUDGE_STEPS, **_judge_record(s)}
        )

    assert main([str(run_dir)]) == 0
    out = capsys.readouterr().out
    assert (run_dir / "plots" / "judge.png").read_bytes()[:8] == PNG
    assert _table_row(out, "judge/wall_seconds") == [4, 10, 40, 25, 40]
    assert run_id in out

    # The same run by id: --tracking-uri, or MLFLOW_TRACKING_URI; PNGs into --out.
    by_id = load_records(None, run_id, uri)
    assert by_id.steps == records.steps
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    assert main(["--mlflow-run", run_id, "--out", str(tmp_path / "by-id")]) == 0
    assert (tmp_path / "by-id" / "judge.png").read_bytes()[:8] == PNG
    assert _table_row(capsys.readouterr().out, "judge/queue_high_water") == [4, 3, 6, 4.5, 6]


def test_report_asks_for_mlflow_run_when_the_store_holds_several(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mlflow.tracking import MlflowClient

    run_dir = tmp_path / "moved-run"
    run_dir.mkdir()
    client = MlflowClient(tracking_uri=f"sqlite:///{run_dir / 'mlflow.db'}")
    exp = client.create_experiment("codefu-grpo")
    ids = [client.create_run(exp, run_name=f"grpo-{i}").info.run_id for i in range(2)]
    assert main([str(run_dir)]) == 2
    err = capsys.readouterr().err
    assert "--mlflow-run" in err and all(i in err for i in ids)
    assert main([str(run_dir), "--mlflow-run", "0" * 32]) == 2  # unknown id, same store
    assert "--mlflow-run" in capsys.readouterr().err


def test_report_of_a_dir_without_metrics_or_store_says_what_to_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "No metrics.jsonl and no MLflow store" in err and "--mlflow-run" in err
    assert not (tmp_path / "mlflow.db").exists()  # looking created no store


def test_a_wrong_run_dir_is_answered_before_mlflow_is_imported(tmp_path: Path) -> None:
    """`nox -s report -- /wrong/path` answers in a second, not after MLflow's imports."""
    code = (
        "import sys\n"
        "from codefu_trainer.training.report.cli import main\n"
        f"code = main([{str(tmp_path / 'nowhere')!r}])\n"
        "print(code, 'mlflow' in sys.modules, 'matplotlib' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.stdout.split() == ["2", "False", "False"], done.stdout + done.stderr
    assert done.stderr.startswith(f"report: {tmp_path / 'nowhere'} is not a directory")


def test_report_of_a_run_killed_mid_line_names_the_file_and_draws_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    metrics = tmp_path / "metrics.jsonl"
    metrics.write_text('{"step": 1, "critic/score/mean": 0.5}\n{"step": 2, "critic/sc')
    assert main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"report: {metrics}: a line is not a step record")
    assert "delete it" in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["metrics.jsonl"]


def test_the_verdict_mix_labels_whole_steps() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from codefu_trainer.training.report.plots import _verdict_mix

    records = [
        {"step": step, "judge/verdict/AC": ac, "judge/verdict/WA": 1 - ac}
        for step, ac in ((1, 0.25), (2, 0.5))  # a two-step run: matplotlib's ticks were 0.5 apart
    ]
    fig, ax = plt.subplots()
    _verdict_mix(ax, records)
    fig.canvas.draw()
    ticks = [float(t) for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
    plt.close(fig)
    assert ticks and all(t == int(t) for t in ticks), ticks
