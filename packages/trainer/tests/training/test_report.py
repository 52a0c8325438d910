"""Plots from a run's metrics.jsonl, and the metrics sinks that write it."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from codefu_trainer.training.report import main
from codefu_trainer.training.tracking import Tracker, read_metrics

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
    names = {"learning", "reward", "kl", "clipfrac", "response_length", "verdicts"}
    for name in names:
        png = tmp_path / "plots" / f"{name}.png"
        assert png.read_bytes()[:8] == PNG
        assert png.stat().st_size > 5000  # a drawn figure, not an empty canvas
    assert len(capsys.readouterr().out.splitlines()) == len(names)


def test_report_without_metrics_says_what_to_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(tmp_path)]) == 2
    assert "run directory" in capsys.readouterr().err


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
