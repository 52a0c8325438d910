"""`python -m codefu_trainer.training.report [RUN_DIR] [--mlflow-run ID]`: a run's metrics.

The step records come from RUN_DIR/metrics.jsonl (the CPU rehearsal writes it), else from
the MLflow run the run directory's trainer logged to (a veRL run logs to MLflow only; its
store is `mlflow_tracking_uri(run.tracking, RUN_DIR)`, by default RUN_DIR/mlflow.db), or
from `--mlflow-run RUN_ID` in `--tracking-uri` (default: MLFLOW_TRACKING_URI, else RUN_DIR's
store). Writes PNGs {learning,reward,kl,clipfrac,response_length,verdicts,judge}.png into
RUN_DIR/plots (or --out; without RUN_DIR: runs/report-RUN_ID) and prints their paths and a
table of the judge metrics.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codefu_trainer.training.tracking import (
    CONTINUES_TAG,
    METRICS_FILE,
    MLFLOW_RUN_ID_FILE,
    RUN_NAME_TAG,
    read_metrics,
)

PLOTS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "learning",
        "Judge reward, AC share and compile rate",
        ("critic/score/mean", "judge/verdict/AC", "judge/compiled"),
    ),
    (
        "reward",
        "Reward (critic/score)",
        ("critic/score/mean", "critic/score/min", "critic/score/max"),
    ),
    ("kl", "KL", ("actor/kl_loss", "actor/ppo_kl")),
    ("clipfrac", "PPO clip fraction", ("actor/pg_clipfrac",)),
    (
        "response_length",
        "Response length (tokens)",
        ("response_length/mean", "response_length/max"),
    ),
)
VERDICT_PREFIX = "judge/verdict/"
FAILURE_PREFIX = "judge/failures/"
JUDGE_PREFIX = "judge/"
NOT_LOGGED = "not logged in this run"
# Row order of the judge table; names not listed follow in alphabetical order.
JUDGE_ORDER: tuple[str, ...] = (
    "judge/samples",
    "judge/has_code",
    "judge/compiled",
    "judge/tests_passed_frac",
    "judge/failure",
    "judge/jobs",
    "judge/duplicates",
    "judge/wall_seconds",
    "judge/cpu_seconds",
    "judge/cpus",
    "judge/cpu_bound_seconds",
    "judge/wall_over_bound",
    "judge/queue_high_water",
    "judge/audit/audited",
    "judge/audit/flips",
    "judge/audit/flip_rate",
    "judge/audit/failures",
    "judge/audit/seconds",
)
# Up to this many steps the verdict mix is stacked bars, beyond it a stacked area.
MAX_BAR_STEPS = 60


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
    if not run_dir.is_dir():
        raise NoMetricsError(
            f"{run_dir} is not a directory: pass the run directory that `nox -s train` printed."
        )
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

    As `training.config.mlflow_tracking_uri`: run.tracking.tracking_uri from
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


def _series(records: Sequence[dict[str, Any]], key: str) -> tuple[list[int], list[float]]:
    steps = [int(r["step"]) for r in records if key in r]
    return steps, [float(r[key]) for r in records if key in r]


def make_plots(
    run_dir: Path | None,
    out_dir: Path | None = None,
    records: Sequence[dict[str, Any]] | None = None,
) -> list[Path]:
    """Write the PNGs (default RUN_DIR/plots); returns their paths. `records` default: the
    run dir's (`load_records`). Raises NoMetricsError (a FileNotFoundError) without metrics."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    if records is None:
        records = load_records(run_dir).steps
    if out_dir is None:
        if run_dir is None:
            raise ValueError("make_plots needs out_dir when run_dir is None")
        out_dir = run_dir / "plots"
    out = out_dir
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name, title, keys in PLOTS:
        fig, ax = plt.subplots(figsize=(6, 3.5))
        _lines(ax, records, keys)
        ax.set_title(title)
        ax.set_xlabel("step")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
        fig.tight_layout()
        path = out / f"{name}.png"
        fig.savefig(path, dpi=100)
        plt.close(fig)
        written.append(path)
    fig, ax = plt.subplots(figsize=(6, 3.5))
    _verdict_mix(ax, records)
    fig.tight_layout()
    path = out / "verdicts.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    written.append(path)
    written.append(judge_panel(records, out / "judge.png"))
    return written


LINE_STYLES: tuple[tuple[str, str], ...] = (("-", "o"), ("--", "s"), ("-.", "^"), (":", "v"))


def _lines(
    ax: Any,
    records: Sequence[dict[str, Any]],
    keys: Sequence[str],
    legend: bool = True,
    **style: Any,
) -> bool:
    """Plot each key's series on `ax` (each its own line style, so equal series stay
    visible); says NOT_LOGGED on it when none was logged."""
    plotted = False
    for i, key in enumerate(keys):
        xs, ys = _series(records, key)
        if xs:
            line, marker = LINE_STYLES[i % len(LINE_STYLES)]
            ax.plot(
                xs,
                ys,
                linestyle=line,
                marker=marker if len(xs) <= MAX_BAR_STEPS else None,
                markersize=3,
                label=key,
                **style,
            )
            plotted = True
    if not plotted:
        _not_logged(ax)
    elif legend:
        ax.legend(fontsize=7)
    return plotted


def _twin(
    ax: Any,
    records: Sequence[dict[str, Any]],
    keys: Sequence[str],
    ylabel: str,
    counts: bool = False,
) -> None:
    """`keys` on a right-hand axis of `ax` (whole numbers when `counts`), one legend for both."""
    from matplotlib.ticker import MaxNLocator

    twin = ax.twinx()
    for key in keys:
        xs, ys = _series(records, key)
        twin.plot(xs, ys, linestyle=":", linewidth=1.5, label=key)
    twin.set_ylabel(ylabel)
    if counts:
        twin.yaxis.set_major_locator(MaxNLocator(integer=True))
    _from_zero(twin, 1.0 if counts else 0.0)
    handles = ax.get_legend_handles_labels()
    more = twin.get_legend_handles_labels()
    twin.legend(handles[0] + more[0], handles[1] + more[1], fontsize=7, loc="upper right")


def _from_zero(ax: Any, least_top: float) -> None:
    """Shares and counts start at 0; an axis of zeros still spans [0, least_top]."""
    ax.set_ylim(bottom=0, top=max(ax.get_ylim()[1], least_top))


def _not_logged(ax: Any) -> None:
    ax.text(0.5, 0.5, NOT_LOGGED, ha="center", va="center", transform=ax.transAxes)


def _verdict_mix(ax: Any, records: Sequence[dict[str, Any]]) -> None:
    """Stacked shares of judge/verdict/* per step (verdicts never seen are left out)."""
    judged = [r for r in records if any(k.startswith(VERDICT_PREFIX) for k in r)]
    verdicts = sorted({k for r in judged for k in r if k.startswith(VERDICT_PREFIX)})
    steps = [int(r["step"]) for r in judged]
    layers = [
        (key.removeprefix(VERDICT_PREFIX), [float(r.get(key, 0.0)) for r in judged])
        for key in verdicts
    ]
    layers = [(label, values) for label, values in layers if any(values)]
    from matplotlib.ticker import MaxNLocator

    ax.set_title("Judge verdict mix")
    ax.set_xlabel("step")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # steps, not 2.5
    ax.set_ylabel("share of samples")
    ax.set_ylim(0, 1.3)  # room for the legend above the stacks
    ax.set_yticks([0, 0.25, 0.5, 0.75, 1])
    if not layers:
        _not_logged(ax)
        return
    if len(steps) <= MAX_BAR_STEPS:
        bottom = [0.0] * len(steps)
        for label, values in layers:
            ax.bar(steps, values, bottom=bottom, label=label)
            bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    else:
        ax.stackplot(steps, *[v for _, v in layers], labels=[label for label, _ in layers])
    ax.legend(fontsize=7, ncol=min(len(layers), 7), loc="upper center")


def judge_panel(records: Sequence[dict[str, Any]], path: Path) -> Path:
    """Write `judge_figure(records)` to `path` (PNG)."""
    import matplotlib.pyplot as plt

    fig = judge_figure(records)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def judge_figure(records: Sequence[dict[str, Any]]) -> Any:
    """The judge panel, one matplotlib figure: verdict mix, code/compile/tests, failures,
    judging time against its CPU bound, jobs and queue, verdict audit (axes in that order)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, axes = plt.subplots(3, 2, figsize=(12, 10))
    mix, code, fail, time_ax, queue, audit = axes.flat
    _verdict_mix(mix, records)

    _lines(code, records, ("judge/has_code", "judge/compiled", "judge/tests_passed_frac"))
    code.set_title("Code, compiled, tests passed")
    code.set_ylabel("share of samples")
    code.set_ylim(-0.02, 1.05)

    kinds = sorted({k for r in records for k in r if k.startswith(FAILURE_PREFIX)})
    if _lines(fail, records, ("judge/failure",), legend=not kinds, color="black"):
        fail.set_ylabel("share of samples failed")
        _from_zero(fail, 0.1)
        if kinds:
            _twin(fail, records, kinds, "failures by kind (count)", counts=True)
    fail.set_title("Judge failures (never the program's fault)")

    timing = ("judge/wall_seconds", "judge/cpu_bound_seconds")
    ratio = any("judge/wall_over_bound" in r for r in records)
    if _lines(time_ax, records, timing, legend=not ratio):
        time_ax.set_ylabel("seconds")
        _from_zero(time_ax, 1.0)
        if ratio:
            _twin(time_ax, records, ("judge/wall_over_bound",), "wall / CPU bound")
    time_ax.set_title("Judging wall time vs its CPU bound")

    if _lines(queue, records, ("judge/queue_high_water", "judge/jobs", "judge/duplicates")):
        _from_zero(queue, 1.0)
    queue.set_title("Jobs, duplicates, queue high-water mark")
    queue.set_ylabel("count")

    audit_keys = ("judge/audit/audited", "judge/audit/flips", "judge/audit/failures")
    if _lines(audit, records, audit_keys):
        _from_zero(audit, 1.0)
    audit.set_title("Verdict audit: audited, flips")
    audit.set_ylabel("count")

    for ax in axes.flat:
        ax.set_xlabel("step")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
    fig.suptitle("Judge metrics per training step")
    fig.tight_layout()
    return fig


def _judge_rank(key: str) -> tuple[int, int, str]:
    """Verdicts first, then JUDGE_ORDER (failure kinds after judge/failure), then the rest."""
    order = {k: i for i, k in enumerate(JUDGE_ORDER)}
    if key.startswith(VERDICT_PREFIX):
        return (0, 0, key)
    if key.startswith(FAILURE_PREFIX):
        return (1, order["judge/failure"], key)
    if key in order:
        return (1, order[key], key)
    return (2, 0, key)


def judge_table(records: Sequence[dict[str, Any]], source: str = "") -> str:
    """The judge metrics as rows of first / last / mean / max over the steps that logged them;
    verdicts and failure kinds that stayed 0 at every step are left out."""
    keys = {k for r in records for k in r if k.startswith(JUDGE_PREFIX)}
    head = f"judge metrics{f' of {source}' if source else ''}"
    if not keys:
        return f"{head}: {NOT_LOGGED}"
    rows: list[str] = []
    omitted = 0
    for key in sorted(keys, key=_judge_rank):
        steps, values = _series(records, key)
        zero_kind = key.startswith((VERDICT_PREFIX, FAILURE_PREFIX))
        if zero_kind and not any(values):
            omitted += 1
            continue
        mean = sum(values) / len(values)
        rows.append(
            f"{key:<28} {len(steps):>5} "
            + " ".join(f"{v:>9.4g}" for v in (values[0], values[-1], mean, max(values)))
        )
    all_steps = sorted({int(r["step"]) for r in records if keys & r.keys()})
    lines = [
        f"{head}, {len(all_steps)} steps ({all_steps[0]}..{all_steps[-1]})",
        f"{'metric':<28} {'steps':>5} {'first':>9} {'last':>9} {'mean':>9} {'max':>9}",
        *rows,
    ]
    if omitted:
        lines.append(f"({omitted} verdicts / failure kinds 0 at every step not shown)")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m codefu_trainer.training.report",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "run_dir",
        type=Path,
        nargs="?",
        default=None,
        help="a run directory written by `nox -s train`",
    )
    parser.add_argument(
        "--mlflow-run", default=None, metavar="RUN_ID", help="read this MLflow run's metrics"
    )
    parser.add_argument(
        "--tracking-uri",
        default=None,
        metavar="URI",
        help="MLflow tracking URI of --mlflow-run (default: MLFLOW_TRACKING_URI, else RUN_DIR's)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="where to write PNGs (default RUN_DIR/plots, else runs/report-RUN_ID)",
    )
    args = parser.parse_args(argv)
    if args.run_dir is None and not args.mlflow_run:
        parser.error("pass a run directory, or --mlflow-run RUN_ID [--tracking-uri URI]")
    from mlflow.exceptions import MlflowException

    try:
        records = load_records(args.run_dir, args.mlflow_run, args.tracking_uri)
    except NoMetricsError as exc:
        print(f"report: {exc}", file=sys.stderr)
        return 2
    except MlflowException as exc:  # an unknown run id, an unreachable store
        print(
            f"report: MLflow: {exc}\nCheck --mlflow-run and --tracking-uri "
            "(or MLFLOW_TRACKING_URI).",
            file=sys.stderr,
        )
        return 2
    out = args.out
    if out is None and args.run_dir is None:
        out = Path("runs") / f"report-{args.mlflow_run}"
    for p in make_plots(args.run_dir, out, records.steps):
        print(p)
    print()
    print(judge_table(records.steps, records.source))
    return 0


if __name__ == "__main__":
    sys.exit(main())
