"""One MLflow run across the resubmissions of a run name, through veRL's own MLflow logger."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from omegaconf import OmegaConf

from codefu_trainer.run.tracking import (
    RUN_ID_ENV,
    RUN_NAME_TAG,
    continue_mlflow_run,
    mlflow_run_for,
)


def _verl(uri: str, run_name: str, logger: list[str] | None = None) -> Any:
    """The parts of a composed veRL config that continue_mlflow_run reads."""
    return OmegaConf.create(
        {
            "trainer": {
                "logger": logger or ["console", "mlflow"],
                "project_name": "codefu-grpo",
                "experiment_name": run_name,
            },
            "ray_kwargs": {"ray_init": {"runtime_env": {"env_vars": {"MLFLOW_TRACKING_URI": uri}}}},
        }
    )


def _job(uri: str, run_name: str, steps: range, monkeypatch: pytest.MonkeyPatch) -> str:
    """One SageMaker job of the run: resolve the run, then veRL's Tracking logs its steps."""
    from verl.utils.tracking import Tracking

    monkeypatch.delenv(RUN_ID_ENV, raising=False)
    verl = _verl(uri, run_name)
    run_id = continue_mlflow_run(verl)
    assert run_id is not None
    # What veRL's processes get through Ray's runtime environment.
    env = verl.ray_kwargs.ray_init.runtime_env.env_vars
    monkeypatch.setenv("MLFLOW_TRACKING_URI", env.MLFLOW_TRACKING_URI)
    monkeypatch.setenv(RUN_ID_ENV, env[RUN_ID_ENV])
    tracking = Tracking(
        project_name="codefu-grpo",
        experiment_name=run_name,
        default_backend=["mlflow"],
        config={"actor": {"lr": 1e-5}},
    )
    for step in steps:
        tracking.log({"critic/score/mean": step / 10}, step=step)
    del tracking  # veRL's Tracking ends the MLflow run when collected
    import mlflow

    if mlflow.active_run() is not None:
        mlflow.end_run()
    return run_id


@pytest.mark.slow
def test_resubmissions_of_a_run_name_log_into_one_mlflow_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    first = _job(uri, "run-a", range(1, 4), monkeypatch)
    second = _job(uri, "run-a", range(4, 6), monkeypatch)  # the resubmission resumes at 4
    other = _job(uri, "run-b", range(1, 2), monkeypatch)
    assert first == second != other
    client = MlflowClient(tracking_uri=uri)
    history = client.get_metric_history(first, "critic/score/mean")
    assert sorted(m.step for m in history) == [1, 2, 3, 4, 5]
    exp = client.get_experiment_by_name("codefu-grpo")
    assert exp is not None
    runs = client.search_runs([exp.experiment_id])
    assert sorted(r.data.tags[RUN_NAME_TAG] for r in runs) == ["run-a", "run-b"]


def test_a_run_id_the_user_set_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(RUN_ID_ENV, "0123abcd")
    verl = _verl(f"sqlite:///{tmp_path / 'mlflow.db'}", "run-a")
    assert continue_mlflow_run(verl) == "0123abcd"
    assert verl.ray_kwargs.ray_init.runtime_env.env_vars[RUN_ID_ENV] == "0123abcd"
    assert not (tmp_path / "mlflow.db").exists()  # no store was touched


def test_without_mlflow_logging_nothing_is_resolved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(RUN_ID_ENV, raising=False)
    verl = _verl(f"sqlite:///{tmp_path / 'mlflow.db'}", "run-a", logger=["console"])
    assert continue_mlflow_run(verl) is None
    assert RUN_ID_ENV not in verl.ray_kwargs.ray_init.runtime_env.env_vars


@pytest.mark.slow
def test_run_names_with_quotes_find_their_own_run(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    quoted = mlflow_run_for(uri, "exp", "it's")
    assert mlflow_run_for(uri, "exp", "it's") == quoted != mlflow_run_for(uri, "exp", "its")


def test_a_resume_with_a_changed_config_keeps_logging_to_mlflow(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """veRL's logger drops MLflow for the whole run when a parameter's value changed since
    the run it joins (a resume with more steps did): our veRL trainer's fit first moves
    MLFLOW_RUN_ID to a run that takes the new values, chained by codefu.continues, and the
    report reads the steps of both."""
    import os

    import mlflow
    from verl.utils.tracking import Tracking

    from codefu_trainer.run.tracking import CONTINUES_TAG
    from codefu_trainer.training.report.records import read_mlflow_run
    from codefu_trainer.training.verl.trainer import mlflow_run_for_this_config

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"

    def job(total_steps: int, steps: range) -> tuple[str, bool]:
        verl = _verl(uri, "run-b")
        verl.trainer.total_training_steps = total_steps
        monkeypatch.delenv(RUN_ID_ENV, raising=False)
        continue_mlflow_run(verl)
        monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
        monkeypatch.setenv(RUN_ID_ENV, verl.ray_kwargs.ray_init.runtime_env.env_vars[RUN_ID_ENV])
        mlflow_run_for_this_config(verl)  # what CodeFuJudgeTrainer.fit does first
        run_id = os.environ[RUN_ID_ENV]
        monkeypatch.setattr("time.sleep", lambda _: None)  # veRL retries MLflow 3 times
        tracking = Tracking(
            project_name="codefu-grpo",
            experiment_name="run-b",
            default_backend=["mlflow"],
            config=OmegaConf.to_container(verl, resolve=True),
        )
        logs = "mlflow" in tracking.logger
        for step in steps:
            tracking.log({"critic/score/mean": step / 10}, step=step)
        del tracking
        if mlflow.active_run() is not None:
            mlflow.end_run()
        return run_id, logs

    first, logs_first = job(30, range(1, 4))
    same, logs_same = job(30, range(4, 5))  # resubmitted unchanged: the same run
    changed, logs_changed = job(50, range(5, 7))  # more steps: a new, chained run
    assert logs_first and logs_same and logs_changed  # MLflow never dropped
    assert same == first and changed != first
    client = mlflow.tracking.MlflowClient(uri)
    tags = client.get_run(changed).data.tags
    assert tags[CONTINUES_TAG] == first and tags[RUN_NAME_TAG] == "run-b"
    assert client.get_run(changed).data.params["trainer/total_training_steps"] == "50"
    assert [r["step"] for r in read_mlflow_run(uri, changed)] == [1, 2, 3, 4, 5, 6]
    # The next resume of the run name continues the newest run of the chain.
    assert mlflow_run_for(uri, "codefu-grpo", "run-b") == changed
