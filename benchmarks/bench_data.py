"""Benchmark `codefu-data prepare` on a synthetic dataset of CodeContests' size.

Generates a raw dataset in the CodeContests schema and HF shard layout (default: 13,610
problems, ~3 GB of test text, 60% of it in `generated_tests` as in the real data) in a
temporary directory, prepares it in a child process, and reports wall time, peak RSS of
that process, throughput, and the time of an unchanged rerun (skipped). Targets: peak RSS
under 2 GB and under 10 minutes for the full size.

    python benchmarks/bench_data.py                       # full size (takes minutes, ~4 GB disk)
    python benchmarks/bench_data.py --problems 500 --gb 0.1   # a quick small run
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from codefu_data.synthetic import SyntheticSpec, write_synthetic

FULL_PROBLEMS = 13_610
TARGET_RSS_MB = 2048
TARGET_SECONDS = 600


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _prepare(raw: Path, out: Path) -> tuple[float, float, float, str]:
    """(wall s, CPU s, peak RSS MB of the child, stdout) for one prepare in a fresh process."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    before, cpu_before = usage.ru_maxrss, usage.ru_utime + usage.ru_stime
    start = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "codefu_data.cli",
            "prepare",
            "--no-progress",
            "--source",
            str(raw),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"prepare failed ({done.returncode}):\n{done.stderr}")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = usage.ru_utime + usage.ru_stime - cpu_before
    # ru_maxrss of children is the max over all children so far (KiB on Linux).
    return wall, cpu, max(usage.ru_maxrss, before) / 1024, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--problems", type=int, default=FULL_PROBLEMS, help="problems over all splits"
    )
    parser.add_argument(
        "--gb", type=float, default=3.0, help="test text in GB (private + generated)"
    )
    parser.add_argument("--shards", type=int, default=39, help="train shards (CodeContests has 39)")
    parser.add_argument(
        "--keep", type=Path, help="write the raw and processed data here and keep them"
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-data-") as tmp:
        root = args.keep or Path(tmp)
        raw, out = root / "raw", root / "processed"
        per_problem = int(args.gb * 1e9 / max(1, args.problems))
        spec = SyntheticSpec(
            problems=args.problems,
            test_bytes_per_problem=per_problem,
            train_shards=min(args.shards, max(1, args.problems // 50)),
            row_group_rows=32,
        )
        t0 = time.perf_counter()
        sizes = write_synthetic(raw, spec)
        gen_seconds = time.perf_counter() - t0
        raw_bytes = _du(raw)

        wall, cpu, peak_mb, _ = _prepare(raw, out)
        rerun_wall, rerun_cpu, _, rerun_out = _prepare(raw, out)
        manifest = json.loads((out / "manifest.json").read_text())
        out_bytes = _du(out)

    rows = [
        (
            "problems (train/valid/test)",
            f"{args.problems} ({sizes['train']}/{sizes['valid']}/{sizes['test']})",
        ),
        ("test text generated", f"{args.gb:.2f} GB ({per_problem / 1e3:.0f} kB/problem)"),
        ("raw parquet on disk", f"{raw_bytes / 1e6:.0f} MB"),
        ("generate", f"{gen_seconds:.1f} s"),
        ("prepare wall", f"{wall:.1f} s (target < {TARGET_SECONDS} s), CPU {cpu:.1f} s"),
        ("prepare peak RSS", f"{peak_mb:.0f} MB (target < {TARGET_RSS_MB} MB)"),
        (
            "throughput",
            f"{args.problems / wall:.0f} problems/s, {args.gb * 1e3 / wall:.0f} MB test text/s",
        ),
        (
            "kept / dropped",
            f"{manifest['totals']['kept']} / {sum(manifest['totals']['dropped'].values())}",
        ),
        ("processed on disk", f"{out_bytes / 1e6:.0f} MB"),
        (
            "unchanged rerun",
            f"{rerun_wall:.2f} s, CPU {rerun_cpu:.2f} s "
            f"({rerun_cpu / cpu:.1%} of a full run's CPU)",
        ),
    ]
    width = max(len(k) for k, _ in rows)
    print("codefu-data prepare benchmark (synthetic CodeContests-shaped data)")
    for key, value in rows:
        print(f"  {key.ljust(width)}  {value}")
    ok = peak_mb < TARGET_RSS_MB and wall < TARGET_SECONDS
    if "up to date" not in rerun_out:
        sys.exit("the unchanged rerun was not skipped")
    print(
        f"BENCH data problems={args.problems} gb={args.gb} wall_s={wall:.1f} "
        f"peak_rss_mb={peak_mb:.0f} "
        f"cpu_s={cpu:.1f} rerun_cpu_s={rerun_cpu:.2f} targets={'met' if ok else 'MISSED'}"
    )


if __name__ == "__main__":
    main()
