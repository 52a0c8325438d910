"""A training run's step records: from its metrics.jsonl, else from the MLflow run it
logged to (its own store or another), as one record per step."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codefu_trainer.run.tracking import (
    CONTINUES_TAG,
    METRICS_FILE,
    MLFLOW_RUN_ID_FILE,
    RUN_NAME_TAG,
    read_metrics,
)

VERDICT_PREFIX = "judge/verdict/"
FAILURE_PREFIX = "judge/failures/"
JUDGE_PREFIX = "judge/"
NOT_LOGGED = "not logged in this run"


class NoMetricsError(FileNotFoundError):
    """No step records where the user pointed; the message says what to pass instead."""


@dataclass
class Records:
    """A run's step records ({"step": int, name: float}, sorted by step) and their source."""

    steps: list[dict[str, Any]]
    source: str


def _read_metrics_file(run_dir: Path) -> list[dict[str, Any]]:
    """`read_metrics`, its failures (unreadable, a line that is not a step record) as one
    NoMetricsError naming the file and what to do."""
    path = run_dir / METRICS_FILE
    try:
        return read_metrics(run_dir)
    except OSError as exc:
        raise NoMetricsError(
            f"{path}: cannot be read ({exc.strerror}); check its permissions, or pass "
            "--mlflow-run RUN_ID --tracking-uri URI to read the run's MLflow metrics."
        ) from None
    except (UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        raise NoMetricsError(
            f"{path}: a line is not a step record ({type(exc).__name__}: {exc}); a run killed "
            "while writing can leave a partial last line: delete it, or pass --mlflow-run "
            "RUN_ID --tracking-uri URI to read the run's MLflow metrics."
        ) from None


def require_run_dir(run_dir: Path) -> None:
    """NoMetricsError unless `run_dir` is a directory (checked before MLflow is imported)."""
    if not run_dir.is_dir():
        raise NoMetricsError(
            f"{run_dir} is not a directory: pass the run directory that `nox -s train` printed."
        )


def load_records(
    run_dir: Path | None = None,
    mlflow_run: str | None = None,
    tracking_uri: str | None = None,
) -> Records:
    """The step records of a run directory or an MLflow run (see the module docstring)."""
    if mlflow_run:
        uri = tracking_uri or os.environ.get("MLFLOW_TRACKING_URI")
        if not uri and run_dir is not None:
            uri = _run_dir_store(run_dir)[0]
        if not uri:
            raise NoMetricsError(
                f"No tracking URI for MLflow run {mlflow_run}: pass --tracking-uri URI "
                "or set MLFLOW_TRACKING_URI."
            )
        return Records(read_mlflow_run(uri, mlflow_run), f"MLflow run {mlflow_run} ({uri})")
    if run_dir is None:
        raise NoMetricsError("Pass a run directory, or --mlflow-run RUN_ID [--tracking-uri URI].")
    if (run_dir / METRICS_FILE).is_file():
        steps = _read_metrics_file(run_dir)
        if not steps:
            raise NoMetricsError(f"{run_dir / METRICS_FILE} holds no steps yet.")
        return Records(steps, str(run_dir / METRICS_FILE))
    require_run_dir(run_dir)
    uri, own_store = _run_dir_store(run_dir)
    if uri is None:
        raise NoMetricsError(
            f"No {METRICS_FILE} and no MLflow store in {run_dir}: pass the run directory that "
            "`nox -s train` printed, or --mlflow-run RUN_ID --tracking-uri URI for a run "
            "logged elsewhere."
        )
    run_id = _find_run(uri, run_dir, own_store)
    steps = read_mlflow_run(uri, run_id)
    if not steps:
        raise NoMetricsError(f"MLflow run {run_id} ({uri}) holds no step metrics yet.")
    return Records(steps, f"MLflow run {run_id} ({uri})")


def _run_dir_store(run_dir: Path) -> tuple[str | None, bool]:
    """The MLflow URI the trainer gave this run dir's run, and whether it is the dir's own file.

    As `run.config.mlflow_tracking_uri`: run.tracking.tracking_uri from
    RUN_DIR/config/train.yaml when set, else RUN_DIR/mlflow.db (None when that file is absent).
    """
    config = run_dir / "config" / "train.yaml"
    if config.is_file():
        from omegaconf import OmegaConf

        tracking = OmegaConf.select(OmegaConf.load(config), "run.tracking") or {}
        if tracking.get("mlflow") is False:
            raise NoMetricsError(
                f"{run_dir} has no {METRICS_FILE} and its run logged to no MLflow store "
                "(run.tracking.mlflow=false in config/train.yaml): nothing to report."
            )
        if tracking.get("tracking_uri"):
            return str(tracking["tracking_uri"]), False
    db = run_dir / "mlflow.db"
    if db.is_file():
        return f"sqlite:///{db.resolve()}", True
    return None, False


def _find_run(uri: str, run_dir: Path, own_store: bool) -> str:
    """The MLflow run of `run_dir`: RUN_DIR/mlflow_run_id.txt (the rehearsal's), else the
    newest run tagged `codefu.run_name` = the dir's name (the run veRL continued), else the
    one run so named, else the store's only run when it is the dir's own file."""
    from mlflow.entities import ViewType
    from mlflow.tracking import MlflowClient

    id_file = run_dir / MLFLOW_RUN_ID_FILE
    if id_file.is_file():
        return id_file.read_text().strip()
    client = MlflowClient(tracking_uri=uri)
    experiments = [e.experiment_id for e in client.search_experiments(ViewType.ACTIVE_ONLY)]
    runs = (
        client.search_runs(
            experiments,
            run_view_type=ViewType.ACTIVE_ONLY,
            order_by=["attributes.start_time DESC"],
            max_results=5000,
        )
        if experiments
        else []
    )
    name = run_dir.name
    tagged = [r for r in runs if r.data.tags.get(RUN_NAME_TAG) == name]
    if tagged:
        return str(tagged[0].info.run_id)
    named = [r for r in runs if r.info.run_name == name]
    if len(named) == 1:
        return str(named[0].info.run_id)
    if own_store and len(runs) == 1 and not named:
        return str(runs[0].info.run_id)
    candidates = named or runs
    if not candidates:
        raise NoMetricsError(
            f"The MLflow store {uri} of {run_dir} holds no run: the run logged nothing yet. "
            "Pass --mlflow-run RUN_ID --tracking-uri URI for a run logged elsewhere."
        )
    listing = "\n".join(
        f"  {r.info.run_id}  name={r.info.run_name!r}  "
        f"{RUN_NAME_TAG}={r.data.tags.get(RUN_NAME_TAG)!r}  experiment={r.info.experiment_id}"
        for r in candidates[:20]
    )
    more = f"\n  ... and {len(candidates) - 20} more" if len(candidates) > 20 else ""
    raise NoMetricsError(
        f"The MLflow store {uri} holds {len(candidates)} runs and none is this run dir's "
        f"alone ({RUN_NAME_TAG} or run name {name!r}): pass --mlflow-run RUN_ID, one of\n"
        f"{listing}{more}"
    )


_VERL_AT = re.compile(r"_at_(?=\d)")


def metric_name(mlflow_key: str) -> str:
    """The veRL name of an MLflow metric key: veRL's MLflow logger writes `@` as `_at_`
    (`val-core/…/mean@4` -> `mean_at_4`); every other name the report reads is unchanged."""
    return _VERL_AT.sub("@", mlflow_key)


def read_mlflow_run(uri: str, run_id: str) -> list[dict[str, Any]]:
    """Every metric's history of an MLflow run and of the runs it continues (tag
    codefu.continues), merged into one record per step (for a step logged twice, as after a
    resumed run, the later value wins)."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    runs = [client.get_run(run_id)]
    # A resume whose config changed continued in a new run (tag codefu.continues).
    while (earlier := runs[-1].data.tags.get(CONTINUES_TAG)) and len(runs) < 1000:
        runs.append(client.get_run(earlier))
    by_step: dict[int, dict[str, Any]] = {}
    stamps: dict[tuple[int, str], int] = {}
    for run in runs:
        for key in sorted(run.data.metrics):
            name = metric_name(key)
            for m in client.get_metric_history(run.info.run_id, key):
                step = int(m.step)
                if stamps.get((step, name), -1) > m.timestamp:
                    continue
                stamps[(step, name)] = m.timestamp
                by_step.setdefault(step, {"step": step})[name] = float(m.value)
    return [by_step[s] for s in sorted(by_step)]


def series(records: Sequence[dict[str, Any]], key: str) -> tuple[list[int], list[float]]:
    steps = [int(r["step"]) for r in records if key in r]
    return steps, [float(r[key]) for r in records if key in r]
