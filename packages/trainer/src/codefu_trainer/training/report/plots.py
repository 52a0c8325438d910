"""PNG plots of a run's step records: learning, reward, KL, clip fraction, response length,
the verdict mix and the judge panel."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from codefu_trainer.training.report.records import (
    FAILURE_PREFIX,
    NOT_LOGGED,
    VERDICT_PREFIX,
    load_records,
    series,
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
# Up to this many steps the verdict mix is stacked bars, beyond it a stacked area.
MAX_BAR_STEPS = 60


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
        xs, ys = series(records, key)
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
        xs, ys = series(records, key)
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
