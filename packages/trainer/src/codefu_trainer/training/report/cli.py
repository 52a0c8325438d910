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
import sys
from collections.abc import Sequence
from pathlib import Path

from codefu_trainer.training.report.plots import make_plots
from codefu_trainer.training.report.records import NoMetricsError, load_records, require_run_dir
from codefu_trainer.training.report.table import judge_table


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
    try:
        if not args.mlflow_run:  # a wrong path is answered before MLflow is imported
            require_run_dir(args.run_dir)
    except NoMetricsError as exc:
        print(f"report: {exc}", file=sys.stderr)
        return 2
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
