"""PNG plots of an evaluation's summary: pass@k by rating bucket, and the verdict mix."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

ALL_ZERO_NOTE = "every pass@k is 0: no sample passed any problem"


def passk_figure(summary: Mapping[str, Any]) -> Any:
    """Bars of pass@k per rating bucket, with a note on the chart when every value is 0."""
    import matplotlib.pyplot as plt

    buckets = list(summary["by_rating"])
    ks = list(summary["pass@k"])
    fig, ax = plt.subplots(figsize=(7, 3.8))
    width = 0.8 / max(len(ks), 1)
    for i, k in enumerate(ks):
        xs = [b + (i - (len(ks) - 1) / 2) * width for b in range(len(buckets))]
        ax.bar(
            xs, [summary["by_rating"][b]["pass@k"][k] for b in buckets], width, label=f"pass@{k}"
        )
    ax.set_xticks(
        range(len(buckets)), [f"{b}\n({summary['by_rating'][b]['problems']})" for b in buckets]
    )
    ax.set_xlabel("Codeforces rating (problems)")
    ax.set_ylabel("pass@k")
    ax.set_ylim(0, 1.05)
    ax.set_title(f"pass@k by rating, {summary['samples_per_problem']} samples per problem")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    if not any(v for b in buckets for v in summary["by_rating"][b]["pass@k"].values()):
        ax.text(0.5, 0.5, ALL_ZERO_NOTE, transform=ax.transAxes, ha="center", va="center")
    fig.tight_layout()
    return fig


def make_plots(summary: Mapping[str, Any], out_dir: Path) -> list[Path]:
    """Write `passk_by_rating.png` and `verdicts.png` into `out_dir`; returns their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    fig = passk_figure(summary)
    passk = out_dir / "passk_by_rating.png"
    fig.savefig(passk, dpi=100)
    plt.close(fig)

    verdicts = summary["verdicts"]
    total = max(summary["samples"], 1)
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.bar(list(verdicts), [c / total for c in verdicts.values()], color="tab:gray")
    ax.set_ylabel("fraction of samples")
    ax.set_ylim(0, 1.05)
    ax.set_title(f"Verdict mix of {summary['samples']} samples")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    mix = out_dir / "verdicts.png"
    fig.savefig(mix, dpi=100)
    plt.close(fig)
    return [passk, mix]
