"""PNG plots of an evaluation's summary: pass@k by rating bucket (and by difficulty, when its
source labels them), and the verdict mix."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

ALL_ZERO_NOTE = "every pass@k is 0: no sample passed any problem"


# The summary's groups a pass@k chart is drawn for: key → (x label, title word).
GROUPS = {
    "by_rating": ("Codeforces rating", "rating"),
    "by_difficulty": ("difficulty", "difficulty"),
}


def passk_figure(summary: Mapping[str, Any], group: str = "by_rating") -> Any:
    """Bars of pass@k per group (`by_rating` or `by_difficulty`), with a note on the chart
    when every value is 0."""
    import matplotlib.pyplot as plt

    by = summary[group]
    buckets = list(by)
    ks = list(summary["pass@k"])
    fig, ax = plt.subplots(figsize=(7, 3.8))
    width = 0.8 / max(len(ks), 1)
    for i, k in enumerate(ks):
        xs = [b + (i - (len(ks) - 1) / 2) * width for b in range(len(buckets))]
        ax.bar(xs, [by[b]["pass@k"][k] for b in buckets], width, label=f"pass@{k}")
    ax.set_xticks(range(len(buckets)), [f"{b}\n({by[b]['problems']})" for b in buckets])
    label, word = GROUPS[group]
    ax.set_xlabel(f"{label} (problems)")
    ax.set_ylabel("pass@k")
    ax.set_ylim(0, 1.05)
    ax.set_title(f"pass@k by {word}, {summary['samples_per_problem']} samples per problem")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    if not any(v for b in buckets for v in by[b]["pass@k"].values()):
        ax.text(0.5, 0.5, ALL_ZERO_NOTE, transform=ax.transAxes, ha="center", va="center")
    fig.tight_layout()
    return fig


def make_plots(summary: Mapping[str, Any], out_dir: Path) -> list[Path]:
    """Write `passk_by_rating.png`, `passk_by_difficulty.png` (when the problems have
    difficulty labels) and `verdicts.png` into `out_dir`; returns their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for group in GROUPS:
        if not summary.get(group):
            continue
        fig = passk_figure(summary, group)
        paths.append(out_dir / f"passk_{group}.png")
        fig.savefig(paths[-1], dpi=100)
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
    return [*paths, mix]
