"""Time limits per language (`nox -s bench -- languages`): C++ against Python 3 on real problems.

For each pair of equivalent solutions in benchmarks/solutions/cpp/ and .../python/ (same
algorithm, written for this measurement; `1293b` is problem 1293_B of the data), judged on
the problem's real tests from `$CODEFU_REAL_DATA/codefu_easy/{train,test}.parquet` with its
own limits and the `codecontests` checker:

1. C++ (factor 1) and Python at time factor 1: CPU time per test of each;
2. a Python solution that fails at factor 1 is judged at a generous factor (`--generous`,
   default 10: it must be AC there, the solutions are right, and that run's CPU times are
   reported), then at factors 2 and 3. A pass at a factor implies one at every larger
   factor (the CPU limit only grows), so those are not judged again.

Prints one table row per problem (CPU per test: median and max in ms, the Python/C++ ratio
of the maxima, the verdict at each factor), the totals, and the host (CPU model, cores,
date) for docs/languages.md. Exits non-zero when a solution is not accepted.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from codefu_sandbox import Judge, JudgeReport, Limits, TestCase, Verdict

HERE = Path(__file__).resolve().parent
SOLUTIONS = HERE / "solutions"
FACTORS = (1.0, 2.0, 3.0)
CHECKER = "codecontests"


@dataclass(frozen=True)
class Problem:
    name: str
    tests: list[TestCase]
    limits: Limits


def load_problems(data_dir: Path, ids: list[str]) -> dict[str, Problem]:
    """The problems `ids` name (`1293b` → `1293_B. ...`), private tests then public."""
    import pyarrow.parquet as pq

    prefixes = {f"{i[:-1]}_{i[-1].upper()}." if i[-1].isalpha() else i: i for i in ids}
    found: dict[str, Problem] = {}
    for split in ("train", "test"):
        path = data_dir / "codefu_easy" / f"{split}.parquet"
        for row in pq.read_table(path, columns=["reward_model"]).column("reward_model").to_pylist():
            truth = row["ground_truth"]
            key = prefixes.get(truth["name"].split(" ", 1)[0])
            if key is None:
                continue
            tests = [
                TestCase(i, o)
                for block in (truth["private_tests"], truth["public_tests"])
                for i, o in zip(block["input"], block["output"], strict=True)
            ]
            limit = truth["time_limit"]
            seconds = float(limit["seconds"]) + float(limit["nanos"]) / 1e9
            found[key] = Problem(
                truth["name"], tests, Limits(seconds, int(truth["memory_limit_bytes"]))
            )
    missing = sorted(set(ids) - set(found))
    if missing:
        raise SystemExit(f"problems {missing} are not in {data_dir}/codefu_easy")
    return found


def cpu_ms(report: JudgeReport) -> tuple[float, float]:
    """Median and maximum CPU time per test, in ms."""
    times = [t.cpu_seconds * 1000 for t in report.tests]
    return statistics.median(times), max(times)


def host() -> str:
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0))
    return f"{model}, {cores} usable cores, load average {os.getloadavg()[0]:.1f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=os.environ.get("CODEFU_REAL_DATA"))
    parser.add_argument("--generous", type=float, default=10.0)
    parser.add_argument("--only", nargs="*", default=None, help="problem ids, e.g. 1293b 4a")
    args = parser.parse_args(argv)
    if args.data is None:
        print(
            "set CODEFU_REAL_DATA (or --data) to the folder holding codefu_easy/", file=sys.stderr
        )
        return 2
    ids = sorted(p.stem for p in (SOLUTIONS / "python").glob("*.py"))
    ids = [i for i in ids if args.only is None or i in args.only]
    missing = [i for i in ids if not (SOLUTIONS / "cpp" / f"{i}.cpp").is_file()]
    if missing:
        print(f"no C++ solution for {missing}", file=sys.stderr)
        return 2
    problems = load_problems(args.data, ids)
    started = time.perf_counter()
    print(f"Host: {host()}; {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC")
    rows = []
    passes = dict.fromkeys(FACTORS, 0)
    failed = []
    with tempfile.TemporaryDirectory(prefix="codefu-bench-languages-") as tmp:
        judges = {
            factor: Judge(Path(tmp), time_factors={"python": factor})
            for factor in (args.generous, *FACTORS)
        }
        measure = judges[args.generous]
        print(f"Isolation: {measure.isolation}")
        for pid in ids:
            problem = problems[pid]
            cpp_src = (SOLUTIONS / "cpp" / f"{pid}.cpp").read_text()
            py_src = (SOLUTIONS / "python" / f"{pid}.py").read_text()
            cpp = measure.judge(cpp_src, problem.tests, problem.limits, CHECKER)
            verdicts: list[str] = []
            for factor in FACTORS:
                if verdicts and verdicts[-1] == "AC":
                    verdicts.append("AC")
                else:
                    report = judges[factor].judge(
                        py_src, problem.tests, problem.limits, CHECKER, language="python"
                    )
                    verdicts.append(str(report.verdict))
                    if factor == FACTORS[0]:
                        py = report
            if py.verdict is not Verdict.AC:
                py = measure.judge(
                    py_src, problem.tests, problem.limits, CHECKER, language="python"
                )
            for language, report in (("C++", cpp), ("Python", py)):
                if report.verdict is not Verdict.AC:
                    failed.append(f"{pid} {language}: {report.verdict} {report.to_dict()}"[:800])
            if cpp.verdict is not Verdict.AC or py.verdict is not Verdict.AC:
                continue
            for factor, verdict in zip(FACTORS, verdicts, strict=True):
                passes[factor] += verdict == "AC"
            (cpp_med, cpp_max), (py_med, py_max) = cpu_ms(cpp), cpu_ms(py)
            rows.append(
                f"| {problem.name} | {problem.limits.time_seconds:g} | {len(problem.tests)} "
                f"| {cpp_med:.1f} / {cpp_max:.1f} | {py_med:.1f} / {py_max:.1f} "
                f"| {py_max / max(cpp_max, 0.001):.0f}x | {' | '.join(verdicts)} |"
            )
    print(
        "\n| problem | TL s | tests | C++ CPU ms (median / max) | Python CPU ms (median / max) "
        "| max ratio | Python at 1x | 2x | 3x |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    measured = len(rows)
    print(
        "\nPython passes: "
        + ", ".join(f"{passes[f]}/{measured} at {f:g}x" for f in FACTORS)
        + f" (wall {time.perf_counter() - started:.0f} s)"
    )
    if failed:
        print("\nNOT ACCEPTED (fix the solution):\n" + "\n".join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
