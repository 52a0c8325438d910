"""Metrics sinks for a run: console table, metrics.jsonl in the run dir, and MLflow.

MLflow's store is a SQLite file in the run directory unless `run.tracking.tracking_uri`
names another (a SageMaker managed MLflow tracking server ARN needs `sagemaker-mlflow`).
A resumed run appends to the same jsonl and continues the same MLflow run.

veRL's trainer logs to MLflow itself and opens a new run unless MLFLOW_RUN_ID is set:
`continue_mlflow_run` finds the run of a run name (tag `codefu.run_name`) or creates it,
and hands its id to veRL's processes, so every resubmission of a run name that reaches the
same tracking store (a tracking server; a SQLite file only where it survives, e.g. a local
run directory) logs into one MLflow run. MLflow never changes a logged parameter, and
veRL's logger gives up MLflow for the whole run when it cannot log its parameters: a resume
whose config changed values (more steps, another learning rate) continues in a new MLflow
run tagged `codefu.continues` = the run before (`run_taking_params`); `nox -s report`
follows that chain.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from codefu_trainer.run import console

METRICS_FILE = "metrics.jsonl"
MLFLOW_RUN_ID_FILE = "mlflow_run_id.txt"
RUN_NAME_TAG = "codefu.run_name"
# On a run opened because a resume changed parameter values: the run it continues.
CONTINUES_TAG = "codefu.continues"
RUN_ID_ENV = "MLFLOW_RUN_ID"
# MLflow's longest parameter value; longer values are compared on this prefix.
MAX_PARAM_CHARS = 6000

# Columns of the per-step console table: (metric, header, format).
CONSOLE_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("critic/score/mean", "score", "{:7.3f}"),
    ("critic/score/min", "min", "{:6.2f}"),
    ("critic/score/max", "max", "{:6.2f}"),
    ("actor/kl_loss", "kl_loss", "{:8.5f}"),
    ("actor/ppo_kl", "ppo_kl", "{:8.5f}"),
    ("actor/pg_clipfrac", "clipfrac", "{:8.4f}"),
    ("actor/entropy", "entropy", "{:7.3f}"),
    ("response_length/mean", "resp_len", "{:8.1f}"),
    ("judge/has_code", "has_code", "{:8.2f}"),
    ("judge/compiled", "compiled", "{:8.2f}"),
    ("judge/verdict/AC", "AC", "{:5.2f}"),
    ("timing_s/step", "step_s", "{:7.1f}"),
)


def read_metrics(run_dir: Path) -> list[dict[str, Any]]:
    """Every step record of a run's metrics.jsonl (later records of a step win)."""
    path = run_dir / METRICS_FILE if run_dir.is_dir() else run_dir
    by_step: dict[int, dict[str, Any]] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            record = json.loads(line)
            by_step[int(record["step"])] = record
    return [by_step[s] for s in sorted(by_step)]


def mlflow_run_for(uri: str, experiment: str, run_name: str) -> str:
    """The id of `run_name`'s MLflow run in `experiment`: the newest one tagged with it
    (`codefu.run_name`), else a new run so tagged."""
    from mlflow.entities import ViewType
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    exp = client.get_experiment_by_name(experiment)
    if exp is not None and exp.lifecycle_stage == "deleted":
        raise RuntimeError(
            f"MLflow experiment {experiment!r} at {uri} is deleted: restore it "
            "(mlflow experiments restore) or set run.tracking.experiment to another name."
        )
    exp_id = exp.experiment_id if exp is not None else client.create_experiment(experiment)
    tagged = f"tags.`{RUN_NAME_TAG}`"
    plain = not any(c in run_name for c in "'\"\\")
    runs = [
        r
        for r in client.search_runs(
            [exp_id],
            filter_string=f"{tagged} = '{run_name}'" if plain else f"{tagged} != ''",
            run_view_type=ViewType.ACTIVE_ONLY,
            order_by=["attributes.start_time DESC"],
            max_results=1 if plain else 5000,
        )
        if r.data.tags.get(RUN_NAME_TAG) == run_name
    ]
    if runs:
        return str(runs[0].info.run_id)
    return str(
        client.create_run(exp_id, run_name=run_name, tags={RUN_NAME_TAG: run_name}).info.run_id
    )


def continue_mlflow_run(verl: Any) -> str | None:
    """Point veRL's MLflow logger at the run of this run name (one run across resubmissions).

    Sets MLFLOW_RUN_ID in the Ray runtime environment veRL's processes get (and here);
    an MLFLOW_RUN_ID the user already set wins. None when veRL does not log to MLflow.
    """
    import os

    from omegaconf import OmegaConf

    loggers = verl.trainer.get("logger") or []
    if "mlflow" not in ([loggers] if isinstance(loggers, str) else list(loggers)):
        return None
    env_vars = OmegaConf.select(verl, "ray_kwargs.ray_init.runtime_env.env_vars") or {}
    run_id = env_vars.get(RUN_ID_ENV) or os.environ.get(RUN_ID_ENV)
    if not run_id:
        uri = env_vars.get("MLFLOW_TRACKING_URI") or os.environ.get("MLFLOW_TRACKING_URI")
        if not uri:
            return None  # veRL falls back to its own store; nothing to continue
        run_id = mlflow_run_for(
            str(uri), str(verl.trainer.project_name), str(verl.trainer.experiment_name)
        )
    OmegaConf.update(
        verl, f"ray_kwargs.ray_init.runtime_env.env_vars.{RUN_ID_ENV}", run_id, force_add=True
    )
    os.environ[RUN_ID_ENV] = str(run_id)
    print(f"codefu-train: MLflow run {run_id} ({verl.trainer.experiment_name})", flush=True)
    return str(run_id)


def run_taking_params(uri: str, run_id: str, params: Mapping[str, Any]) -> str:
    """`run_id` when it can take `params` (no logged value differs); else a new run in its
    experiment, with its run name and tags plus `codefu.continues` = `run_id`."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    run = client.get_run(run_id)
    logged = run.data.params
    changed = sorted(
        key
        for key, value in params.items()
        if key in logged and str(value)[:MAX_PARAM_CHARS] != logged[key][:MAX_PARAM_CHARS]
    )
    if not changed:
        return run_id
    tags = {k: v for k, v in run.data.tags.items() if not k.startswith("mlflow.")}
    new = client.create_run(
        run.info.experiment_id,
        run_name=run.info.run_name,
        tags={**tags, CONTINUES_TAG: run_id},
    ).info.run_id
    shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
    print(
        f"codefu-train: the config changed since MLflow run {run_id} ({shown}); MLflow keeps "
        f"parameters as first logged, so this run logs into MLflow run {new} (tag "
        f"{CONTINUES_TAG}={run_id}; `nox -s report` reads both).",
        flush=True,
    )
    return str(new)


class Tracker:
    """Writes each step's metrics to the console, metrics.jsonl and (optionally) MLflow."""

    def __init__(
        self,
        run_dir: Path,
        mlflow_uri: str | None,
        experiment: str,
        run_name: str,
        *,
        params: Mapping[str, Any] | None = None,
        out: TextIO | None = None,
    ) -> None:
        self.run_dir = run_dir
        self.out = out  # None: the console's stdout (the terminal even when quiet)
        self._header_printed = False
        self._mlflow: Any = None
        run_dir.mkdir(parents=True, exist_ok=True)
        if mlflow_uri:
            self._start_mlflow(mlflow_uri, experiment, run_name, params or {})

    def _start_mlflow(
        self, uri: str, experiment: str, run_name: str, params: Mapping[str, Any]
    ) -> None:
        import mlflow

        mlflow.set_tracking_uri(uri)
        id_file = self.run_dir / MLFLOW_RUN_ID_FILE
        if id_file.is_file():
            mlflow.start_run(run_id=id_file.read_text().strip())
        else:
            exp = mlflow.set_experiment(experiment)
            run = mlflow.start_run(experiment_id=exp.experiment_id, run_name=run_name)
            id_file.write_text(run.info.run_id)
            flat = {k: str(v)[:500] for k, v in _flatten(params).items()}
            for i in range(0, len(flat), 100):
                mlflow.log_params(dict(list(flat.items())[i : i + 100]))
        self._mlflow = mlflow

    @property
    def mlflow_run_id(self) -> str | None:
        id_file = self.run_dir / MLFLOW_RUN_ID_FILE
        return id_file.read_text().strip() if id_file.is_file() else None

    def log(self, step: int, metrics: Mapping[str, float]) -> None:
        clean = {
            k: float(v)
            for k, v in metrics.items()
            if isinstance(v, int | float) and math.isfinite(v)
        }
        with (self.run_dir / METRICS_FILE).open("a") as f:
            f.write(json.dumps({"step": step, **clean}, sort_keys=True) + "\n")
        if self._mlflow is not None:
            self._mlflow.log_metrics({_mlflow_key(k): v for k, v in clean.items()}, step=step)
        self._print(step, clean)

    def log_final(self, metrics: Mapping[str, float]) -> None:
        """Metrics of the whole run, without a step (an evaluation's results): MLflow only."""
        if self._mlflow is not None:
            self._mlflow.log_metrics({_mlflow_key(k): float(v) for k, v in metrics.items()})

    def _print(self, step: int, metrics: Mapping[str, float]) -> None:
        if not self._header_printed:
            header = f"{'step':>5} " + " ".join(
                f"{h:>{_width(fmt)}}" for _, h, fmt in CONSOLE_COLUMNS
            )
            print(header + "  verdicts", file=self.out or console.stdout())
            self._header_printed = True
        cells = []
        for key, _, fmt in CONSOLE_COLUMNS:
            value = metrics.get(key)
            cells.append(fmt.format(value) if value is not None else f"{'-':>{_width(fmt)}}")
        verdicts = ", ".join(
            f"{k.removeprefix('judge/verdict/')}={v:.2f}"
            for k, v in sorted(metrics.items())
            if k.startswith("judge/verdict/") and v > 0
        )
        print(
            f"{step:>5} " + " ".join(cells) + f"  {verdicts}",
            file=self.out or console.stdout(),
            flush=True,
        )

    def close(self) -> None:
        if self._mlflow is not None:
            self._mlflow.end_run()
            self._mlflow = None


def _width(fmt: str) -> int:
    return int(fmt.split(":")[1].split(".", maxsplit=1)[0].lstrip("<>^"))


def _mlflow_key(key: str) -> str:
    # MLflow accepts [A-Za-z0-9_-./ ]: keep veRL's slashes, replace anything else.
    return "".join(c if c.isalnum() or c in "_-./ " else "_" for c in key)


def _flatten(params: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in params.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(_flatten(v, key + "."))
        elif isinstance(v, Sequence) and not isinstance(v, str):
            out[key] = json.dumps(list(v), default=str)
        else:
            out[key] = v
    return out
