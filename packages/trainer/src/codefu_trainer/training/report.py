"""`python -m codefu_trainer.training.report RUN_DIR`: PNG plots of a run's metrics over steps.

Reads RUN_DIR/metrics.jsonl (written by the rehearsal; veRL metric names) and writes
RUN_DIR/plots/{learning,reward,kl,clipfrac,response_length,verdicts}.png.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from codefu_trainer.training.tracking import METRICS_FILE, read_metrics

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


def _series(records: Sequence[dict[str, Any]], key: str) -> tuple[list[int], list[float]]:
    steps = [int(r["step"]) for r in records if key in r]
    return steps, [float(r[key]) for r in records if key in r]


def make_plots(run_dir: Path, out_dir: Path | None = None) -> list[Path]:
    """Write the PNGs; returns their paths. Raises FileNotFoundError without metrics."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    metrics = run_dir / METRICS_FILE
    if not metrics.is_file():
        raise FileNotFoundError(
            f"No {METRICS_FILE} in {run_dir}: pass the run directory that `nox -s train` printed."
        )
    records = read_metrics(run_dir)
    if not records:
        raise FileNotFoundError(f"{metrics} holds no steps yet.")
    out = out_dir or run_dir / "plots"
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name, title, keys in PLOTS:
        fig, ax = plt.subplots(figsize=(6, 3.5))
        plotted = False
        for key in keys:
            xs, ys = _series(records, key)
            if xs:
                ax.plot(xs, ys, marker="o", label=key)
                plotted = True
        if not plotted:
            ax.text(
                0.5, 0.5, "not logged in this run", ha="center", va="center", transform=ax.transAxes
            )
        ax.set_title(title)
        ax.set_xlabel("step")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        if plotted:
            ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
        fig.tight_layout()
        path = out / f"{name}.png"
        fig.savefig(path, dpi=100)
        plt.close(fig)
        written.append(path)
    verdicts = sorted({k for r in records for k in r if k.startswith(VERDICT_PREFIX)})
    fig, ax = plt.subplots(figsize=(6, 3.5))
    steps = [int(r["step"]) for r in records]
    bottom = [0.0] * len(records)
    for key in verdicts:
        values = [float(r.get(key, 0.0)) for r in records]
        if any(values):
            ax.bar(steps, values, bottom=bottom, label=key.removeprefix(VERDICT_PREFIX))
            bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    ax.set_title("Judge verdict mix")
    ax.set_xlabel("step")
    ax.set_ylabel("fraction of responses")
    ax.set_ylim(0, 1.05)
    if any(bottom):
        ax.legend(fontsize=7, ncol=3)
    fig.tight_layout()
    path = out / "verdicts.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    written.append(path)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m codefu_trainer.training.report", description=__doc__
    )
    parser.add_argument("run_dir", type=Path, help="a run directory written by `nox -s train`")
    parser.add_argument(
        "--out", type=Path, default=None, help="where to write PNGs (default RUN_DIR/plots)"
    )
    args = parser.parse_args(argv)
    try:
        paths = make_plots(args.run_dir, args.out)
    except FileNotFoundError as exc:
        print(f"report: {exc}", file=sys.stderr)
        return 2
    for p in paths:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
