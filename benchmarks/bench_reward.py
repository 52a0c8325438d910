"""Reward benchmark (`nox -s bench -- reward`): our Ray reward against the reference's.

A batch of responses with known verdicts (correct, wrong, TLE, runtime error, MLE, compile
error, no code; correct answers twice, as GRPO groups repeat) is scored by

(a) ours: ``RewardService`` (judge pool, one worker per CPU, PCH + binary cache, static
    binaries, limits from the problem, token/float checker, stop at the first TLE,
    identical responses to a problem judged once), and
(b) a baseline in this file reproducing the reference reward: one Ray task per response,
    ``g++`` without a precompiled header, a pool of min(100, tests) concurrent test
    processes, a fixed 1.5 s timeout whatever the problem says, memory ignored, exact
    compare after ``strip()``, exceptions swallowed as a failure.

Problems: the real ones in ``$CODEFU_REAL_DATA/codefu_easy`` with the hand-written
solutions in ``packages/sandbox/tests/judge/real_solutions`` when both exist; else the raw
dataset shipped with codefu-data, prepared by ``codefu_data.prepare`` in a temp dir (every
tier). There the correct answer is the problem's first accepted C++ solution (the one whose
outputs are the tests, so problems with several valid answers stay exact), and WA, TLE,
RE, MLE and CE responses are that solution with a few lines added (an extra output token
at exit, a spin before main, an abort at exit, an allocation past the memory limit before
main, an undefined name).

Reported: throughput ratio ours/baseline (target >= 3x), verdict agreement with the known
truth for both (target 100% for ours), and our wall time against the lower bound
Σ(compile + run CPU seconds) / CPUs (target within 1.5x). Both sides start warm (Ray
workers up; our PCH built once per node, as in a training run; binaries not cached).
Timings on a shared machine are noisy: the final line says the load average.

Part ``audit``: the verdict audit's cost, the step's wall time with ``audit_share`` 1% and
10% against none (targets 1.02x and 1.12x), and the flip rate with the CPUs oversubscribed
4x and every submission judged twice (target 0).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ray

from codefu_trainer.reward.config import RewardConfig, WorkerConfig
from codefu_trainer.reward.service import RewardService

ROOT = Path(__file__).resolve().parents[1]
REAL_SOLUTIONS = ROOT / "packages" / "sandbox" / "tests" / "judge" / "real_solutions"
VARIANTS = {"ac": "AC", "wa": "WA", "tle": "TLE", "re": "RE", "mle": "MLE", "ce": "CE"}


@dataclass(frozen=True)
class Case:
    problem: str
    variant: str
    truth: str
    response: str
    ground_truth: dict[str, Any]


def _respond(code: str | None) -> str:
    if code is None:
        return "<think>\nThis looks hard.\n</think>\nI am not sure how to solve this problem."
    return (
        "<think>\nFirst idea:\n```cpp\nint main() { return 0; }\n```\nNo, let me redo it.\n"
        f"</think>\nHere is my solution:\n```cpp\n{code}\n```\n"
    )


def _add_group(cases: list[Case], name: str, gt: dict[str, Any], sources: dict[str, str]) -> None:
    for variant, truth in VARIANTS.items():
        if variant not in sources:
            continue
        repeats = 2 if variant == "ac" else 1
        for _ in range(repeats):
            cases.append(Case(name, variant, truth, _respond(sources[variant]), gt))
    cases.append(Case(name, "none", "NO_CODE", _respond(None), gt))


Problems = list[tuple[str, dict[str, Any], dict[str, str]]]  # name, ground truth, sources


def reference_cases(problems: Problems) -> list[Case]:
    """The 104-response batch: each variant once per problem, AC twice, and no code."""
    cases: list[Case] = []
    for name, gt, sources in problems:
        _add_group(cases, name, gt, sources)
    return cases


def real_problems(data_dir: Path, limit: int | None) -> Problems:
    import pyarrow.parquet as pq

    truths: dict[str, dict[str, Any]] = {}
    for split in ("train", "test"):
        path = data_dir / f"{split}.parquet"
        if path.is_file():
            for rm in (
                pq.read_table(path, columns=["reward_model"]).column("reward_model").to_pylist()
            ):
                truths[rm["ground_truth"]["name"]] = rm["ground_truth"]
    manifest = json.loads((REAL_SOLUTIONS / "manifest.json").read_text())
    problems: Problems = []
    for slug, entry in sorted(manifest.items())[: limit or None]:
        gt = truths.get(entry["name"])
        if gt is None:
            continue
        folder = REAL_SOLUTIONS / slug
        sources = {
            v: (folder / f"{v}.cpp").read_text()
            for v in VARIANTS
            if (folder / f"{v}.cpp").is_file()
        }
        if "ac" in sources:
            memory = int(gt.get("memory_limit_bytes") or 256 << 20)
            sources["ole"] = _derive(sources["ac"], "ole", memory)
        problems.append((entry["name"], gt, sources))
    return problems


# Derived variants of an accepted solution: includes first, the added lines after it
# (globals run in definition order, so ours come after the solution's own).
_PRELUDE = "#include <cstdio>\n#include <cstdlib>\n#include <cstring>\n#include <vector>\n"
_DERIVED = {
    # One more output token: WA on every test (token and exact compare alike).
    "wa": 'struct CodefuExtra { ~CodefuExtra() { std::printf("\\n-1\\n"); } } codefu_extra;',
    "tle": (
        "struct CodefuSpin { CodefuSpin() { volatile double x = 1.0;"
        " for (;;) x = x * 1.0000001 + 1e-9; } } codefu_spin;"
    ),
    # Prints its (correct) answer, then dies by SIGABRT.
    "re": "struct CodefuCrash { ~CodefuCrash() { std::abort(); } } codefu_crash;",
    "mle": (
        "struct CodefuHog { std::vector<char> v; CodefuHog() : v({mle_bytes}u) {"
        " for (size_t i = 0; i < v.size(); i += 4096) v[i] = 1; } } codefu_hog;"
    ),
    "ce": "int codefu_broken() { return undefined_name; }",
    # Writes until the output limit stops it (OLE); the step's output flood.
    "ole": (
        "struct CodefuFlood { CodefuFlood() { static char b[1 << 16];"
        " std::memset(b, 'x', sizeof b); for (;;) std::fwrite(b, 1, sizeof b, stdout); } }"
        " codefu_flood;"
    ),
}


def _derive(correct: str, variant: str, memory_limit_bytes: int) -> str:
    if variant == "ac":
        return correct
    mle_bytes = memory_limit_bytes + max(memory_limit_bytes // 4, 64 << 20)
    added = _DERIVED[variant].replace("{mle_bytes}", str(mle_bytes))
    return f"{_PRELUDE}{correct}\n{added}\n"


def sample_problems(limit: int | None) -> tuple[Problems, str]:
    """Cases on the shipped raw dataset, prepared (all tiers) by codefu_data in a temp dir."""
    import pyarrow.parquet as pq

    from codefu_data.config import DataConfig
    from codefu_data.prepare import prepare
    from codefu_data.sample import sample_dataset_dir
    from codefu_data.solutions import programs

    raw_dir = sample_dataset_dir()
    with tempfile.TemporaryDirectory(prefix="codefu-bench-sample-") as tmp:
        cfg = DataConfig(source=str(raw_dir), out_dir=str(Path(tmp) / "processed"))
        out = prepare(cfg, progress=False, log=lambda _msg: None).out_dir
        by_tier: dict[str, dict[str, dict[str, Any]]] = {}
        for path in sorted(out.glob("*/*.parquet")):
            for rm in pq.read_table(path, columns=["reward_model"]).column("reward_model"):
                gt = rm.as_py()["ground_truth"]
                by_tier.setdefault(path.parent.name, {})[gt["name"]] = gt
    accepted: dict[str, str] = {}
    for shard in sorted((raw_dir / "data").glob("*.parquet")):
        for row in pq.read_table(shard, columns=["name", "solutions"]).to_pylist():
            cpp = programs(row["solutions"])
            if cpp:  # the first accepted C++ solution produced the expected outputs
                accepted.setdefault(row["name"], cpp[0])
    # Round-robin over the tiers (names sorted inside each), so a small --problems mixes them.
    queues = [sorted(probs.items()) for _, probs in sorted(by_tier.items())]
    order = [q[i] for i in range(max(map(len, queues), default=0)) for q in queues if i < len(q)]
    order = [(name, gt) for name, gt in order if name in accepted][: limit or None]
    problems: Problems = []
    for name, gt in order:
        memory = int(gt.get("memory_limit_bytes") or 256 << 20)
        sources = {v: _derive(accepted[name], v, memory) for v in [*VARIANTS, "ole"]}
        problems.append((name, gt, sources))
    tiers = ", ".join(f"{t} {len(p)}" for t, p in sorted(by_tier.items()))
    return problems, f"shipped sample dataset prepared by codefu_data ({tiers} problems)"


# A GRPO step: 64 prompts x 8 responses, verdict shares a young policy produces.
STEP_SHARES = {
    "ac": 0.30,
    "wa": 0.20,
    "ce": 0.12,
    "none": 0.08,
    "tle": 0.10,
    "re": 0.08,
    "mle": 0.06,
    "ole": 0.06,
}
TRUTH = {**VARIANTS, "ole": "OLE", "none": "NO_CODE"}


def step_cases(problems: Problems, prompts: int = 64, group: int = 8, seed: int = 0) -> list[Case]:
    """A GRPO-step batch: ``prompts`` groups of ``group`` responses, variants drawn with
    ``STEP_SHARES``. A variant drawn twice in a group is the same text (a policy repeats
    itself); prompts on the same problem get different programs (a comment naming the
    prompt), so nothing is shared across groups that a real batch would not share."""
    rng = random.Random(seed)
    variants, weights = list(STEP_SHARES), list(STEP_SHARES.values())
    cases: list[Case] = []
    for prompt in range(prompts):
        name, gt, sources = problems[prompt % len(problems)]
        for drawn in rng.choices(variants, weights, k=group):
            variant = drawn if drawn == "none" or drawn in sources else "ac"
            code = None if variant == "none" else f"// prompt {prompt}\n{sources[variant]}"
            cases.append(Case(name, variant, TRUTH[variant], _respond(code), gt))
    return cases


# (b) The reference reward, reproduced ------------------------------------------------------


def _extract_reference(text: str) -> str | None:
    """The reference's extraction: the last ```cpp block (it missed ```c++)."""
    marker = "```cpp"
    start = text.rfind(marker)
    if start < 0:
        return None
    body = text[start + len(marker) :]
    end = body.find("```")
    return body[:end] if end >= 0 else None


@ray.remote(num_cpus=1)
def reference_reward(response: str, gt: dict[str, Any]) -> dict[str, Any]:
    t0 = time.perf_counter()
    code = _extract_reference(response)
    if code is None:
        return {"verdict": "NO_CODE", "score": -1.0, "seconds": time.perf_counter() - t0}
    try:
        tests = list(zip(gt["private_tests"]["input"], gt["private_tests"]["output"], strict=True))
        with tempfile.TemporaryDirectory() as tmp:
            src, binary = Path(tmp) / "main.cpp", Path(tmp) / "main"
            src.write_text(code)
            compiled = subprocess.run(
                ["g++", "-O2", "-std=c++17", "-o", str(binary), str(src)],
                capture_output=True,
                check=False,
            )
            if compiled.returncode != 0:
                return {"verdict": "CE", "score": -0.5, "seconds": time.perf_counter() - t0}

            def run(test: tuple[str, str]) -> str:
                try:
                    out = subprocess.run(
                        [str(binary)],
                        input=test[0],
                        capture_output=True,
                        text=True,
                        timeout=1.5,
                        check=False,
                    )
                except subprocess.TimeoutExpired:
                    return "TLE"
                if out.returncode != 0:
                    return "RE"
                return "AC" if out.stdout.strip() == test[1].strip() else "WA"

            with ThreadPoolExecutor(max_workers=min(100, len(tests))) as pool:
                results = list(pool.map(run, tests))
    except Exception:  # the reference swallowed every exception as a zero reward
        return {"verdict": "ERROR", "score": 0.0, "seconds": time.perf_counter() - t0}
    for verdict in ("TLE", "RE", "WA"):
        if verdict in results:
            return {"verdict": verdict, "score": 0.0, "seconds": time.perf_counter() - t0}
    return {"verdict": "AC", "score": 1.0, "seconds": time.perf_counter() - t0}


# Measurement ----------------------------------------------------------------------------------


def run_ours(cases: list[Case], cpus: int, cache: Path) -> tuple[float, list[Any], dict[str, int]]:
    config = RewardConfig(worker=WorkerConfig(cache_dir=str(cache), num_workers=cpus))
    service = RewardService(config)
    try:
        service.workers()  # start the pool (as a training run does once)
        # One warm-up compile per worker builds the node's PCH (once per node in a run).
        warm = next(c for c in cases if c.variant == "ac")
        service.score([warm.response.replace("main()", "main( )")], [warm.ground_truth])
        start = time.perf_counter()
        scored = service.score_detailed(
            [c.response for c in cases], [c.ground_truth for c in cases]
        )
        wall = time.perf_counter() - start
        stats = service.stats()
    finally:
        service.close()
    return wall, scored, stats


def run_baseline(cases: list[Case], cpus: int) -> tuple[float, list[dict[str, Any]]]:
    """The reference on every case but MLE ones (see SKIP_IN_BASELINE)."""
    ray.get([reference_reward.remote(_respond(None), {}) for _ in range(cpus)])  # warm workers
    start = time.perf_counter()
    results = ray.get([reference_reward.remote(c.response, c.ground_truth) for c in cases])
    return time.perf_counter() - start, results


# The reference ignores memory and runs up to 100 tests at once: an MLE program (~1.25x a
# 256 MB limit) would ask for ~32 GB on this shared machine. Its MLE cases are not run;
# throughput is compared on the cases both run, and ours is also reported on all cases.
SKIP_IN_BASELINE = {"mle"}


def part_reference(problems: Problems, source: str, cpus: int, prompts: int = 64) -> None:
    """Ours against the reference on the 104-response batch."""
    cases = reference_cases(problems)
    if len(cases) < 64:
        print(f"note: only {len(cases)} responses (fewer problems were asked for or found)")
    cfg = RewardConfig()
    policy = cfg.policy()
    n_tests = sum(len(policy.problem(c.ground_truth).tests) for c in cases)
    print(
        f"reward benchmark: {len(cases)} responses, {len({c.problem for c in cases})} problems, "
        f"{n_tests} tests in all, {source}; {cpus} CPUs"
    )

    ray.init(address="local", num_cpus=cpus, log_to_driver=False, include_dashboard=False)
    cache = Path(tempfile.mkdtemp(prefix="codefu-bench-reward-"))
    try:
        common = [c for c in cases if c.variant not in SKIP_IN_BASELINE]
        ours_wall, scored, stats = run_ours(cases, cpus, cache)
        shutil.rmtree(cache, ignore_errors=True)  # cold binary cache again
        common_wall, common_scored, _ = run_ours(common, cpus, cache)
        base_wall, base_common = run_baseline(common, cpus)
    finally:
        ray.shutdown()
        shutil.rmtree(cache, ignore_errors=True)

    ours_ok = [s.result.verdict == c.truth for s, c in zip(scored, cases, strict=True)]
    not_run = {"verdict": "not run", "score": 0.0}
    it = iter(base_common)
    base = [not_run if c.variant in SKIP_IN_BASELINE else next(it) for c in cases]
    base_ok = [b["verdict"] == c.truth for b, c in zip(base, cases, strict=True)]
    common_ok = all(s.result.verdict == c.truth for s, c in zip(common_scored, common, strict=True))
    # A response identical to another on the same problem shares its judging: count it once.
    judged = {(c.problem, c.response): s.result for s, c in zip(scored, cases, strict=True)}
    cpu_work = sum(r.compile_seconds + r.run_seconds for r in judged.values())
    bound = cpu_work / cpus
    ratio = base_wall / common_wall if common_wall > 0 else float("inf")

    print()
    print(f"{'variant':<9}{'truth':<9}{'n':>4}  {'ours':<16}{'reference':<22}")
    by_variant: dict[str, list[int]] = {}
    for i, c in enumerate(cases):
        by_variant.setdefault(c.variant, []).append(i)
    for variant, idx in by_variant.items():
        ours_v = Counter(scored[i].result.verdict for i in idx)
        base_v = Counter(base[i]["verdict"] for i in idx)
        fmt = lambda cnt: ",".join(f"{k}:{v}" for k, v in cnt.most_common())  # noqa: E731
        print(
            f"{variant:<9}{cases[idx[0]].truth:<9}{len(idx):>4}  {fmt(ours_v):<16}{fmt(base_v):<22}"
        )
    print()
    n_common = len(common)
    over = ours_wall / bound if bound > 0 else 0.0
    rows = [
        (f"wall s ({n_common} both)", f"{common_wall:.2f}", f"{base_wall:.2f}", "cases both ran"),
        (
            "responses / s",
            f"{n_common / common_wall:.2f}",
            f"{n_common / base_wall:.2f}",
            f"ratio {ratio:.2f}x (target >= 3x) {'PASS' if ratio >= 3 else 'MISS'}"
            + ("" if common_ok else " (ours not all correct!)"),
        ),
        (f"wall s (all {len(cases)})", f"{ours_wall:.2f}", "", "ours, MLE cases included"),
        (
            "verdicts = truth",
            f"{sum(ours_ok)}/{len(cases)}",
            f"{sum(base_ok)}/{len(cases)}",
            f"ours target 100% {'PASS' if all(ours_ok) else 'MISS'}; reference MLE not run",
        ),
        (
            "lower bound s",
            f"{bound:.2f}",
            "",
            f"ours(all)/bound {over:.2f}x (target <= 1.5x) {'PASS' if over <= 1.5 else 'MISS'}",
        ),
    ]
    print(f"{'':<20}{'ours':>10}{'reference':>12}  note")
    for name, a, b, note in rows:
        print(f"{name:<20}{a:>10}{b:>12}  {note}")
    print(f"pool stats: {stats}")
    mismatches = [
        (c.problem, c.variant, s.result.verdict)
        for s, c in zip(scored, cases, strict=True)
        if s.result.verdict != c.truth
    ]
    if mismatches:
        print(f"our mismatches: {mismatches[:10]}")
    load = os.getloadavg()[0]
    print(
        f"KEY reward: responses={len(cases)} throughput_ratio={ratio:.2f}x "
        f"ours_agree={sum(ours_ok) / len(cases):.1%} ref_agree={sum(base_ok) / len(cases):.1%} "
        f"wall_over_bound={over:.2f}x ours_wall_all={ours_wall:.2f}s load1={load:.1f}"
    )


def load_problems(limit: int | None) -> tuple[Problems, str]:
    """The real problems with hand-written solutions when CODEFU_REAL_DATA has them, else
    the shipped sample."""
    real = Path(os.environ.get("CODEFU_REAL_DATA", "")) / "codefu_easy"
    if (
        os.environ.get("CODEFU_REAL_DATA")
        and real.is_dir()
        and (REAL_SOLUTIONS / "manifest.json").is_file()
    ):
        return real_problems(real, limit), f"real problems ({real})"
    problems, source = sample_problems(limit)
    return problems, source + "; no CODEFU_REAL_DATA"


def cpu_bound(cases: list[Case], results: list[dict[str, Any]], cpus: int) -> float:
    """Σ(compile + program CPU) over the distinct programs of a batch, over the CPUs."""
    judged = {(c.problem, c.response): r for c, r in zip(cases, results, strict=True)}
    return sum(r["compile_seconds"] + r["run_seconds"] for r in judged.values()) / cpus


@dataclass(frozen=True)
class StepFigures:
    label: str
    wall: float
    bound: float
    p50: float
    p99: float
    busy: float
    agree: int
    n: int


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else 0.0


def measure_step(label: str, service: RewardService, cases: list[Case], cpus: int) -> StepFigures:
    """Score ``cases`` once on a started, PCH-warm pool: wall, bound, latency, busy share."""
    workers = len(service.workers())
    warm = next(c for c in cases if c.variant == "ac")
    service.score([warm.response.replace("main()", "main( )")], [warm.ground_truth])
    before = service.stats()["busy_ms"]
    start = time.perf_counter()
    scored = service.score_detailed([c.response for c in cases], [c.ground_truth for c in cases])
    wall = time.perf_counter() - start
    busy = (service.stats()["busy_ms"] - before) / 1000
    latencies = [s.outcome.seconds for s in scored if s.outcome is not None]
    return StepFigures(
        label=label,
        wall=wall,
        bound=cpu_bound(cases, [s.result.to_dict() for s in scored], cpus),
        p50=_percentile(latencies, 0.50),
        p99=_percentile(latencies, 0.99),
        busy=busy / (wall * workers) if wall > 0 else 0.0,
        agree=sum(s.result.verdict == c.truth for s, c in zip(scored, cases, strict=True)),
        n=len(cases),
    )


def part_step(problems: Problems, source: str, cpus: int, prompts: int = 64) -> None:
    """A 512-response GRPO step on one Ray node, on two judge nodes, and on local workers."""
    from ray.cluster_utils import Cluster

    cases = step_cases(problems, prompts=prompts)
    mix = Counter(c.truth for c in cases)
    distinct = len({(c.problem, c.response) for c in cases if c.variant != "none"})
    print(
        f"GRPO step: {len(cases)} responses ({prompts} prompts x 8) on {len(problems)} problems, "
        f"{distinct} distinct programs, {source}; {cpus} CPUs; mix "
        + ", ".join(f"{k} {v}" for k, v in mix.most_common())
    )
    figures: list[StepFigures] = []

    def fresh_config() -> RewardConfig:
        cache = Path(tempfile.mkdtemp(prefix="codefu-bench-step-"))
        return RewardConfig(worker=WorkerConfig(cache_dir=str(cache)))

    config = fresh_config()
    ray.init(address="local", num_cpus=cpus, log_to_driver=False, include_dashboard=False)
    try:
        service = RewardService(config)
        try:
            figures.append(measure_step("Ray, one node", service, cases, cpus))
        finally:
            service.close()
    finally:
        ray.shutdown()

    config = fresh_config()
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    for _ in range(2):
        cluster.add_node(num_cpus=max(1, cpus // 2), resources={"judge": 1})
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False)
    try:
        service = RewardService(config)
        try:
            nodes = len(set(service.workers().values()))
            figures.append(measure_step(f"Ray, {nodes} judge nodes", service, cases, cpus))
        finally:
            service.close()
    finally:
        ray.shutdown()
        cluster.shutdown()

    config = fresh_config()
    service = RewardService(config, local=True)
    try:
        figures.append(measure_step("local workers", service, cases, cpus))
    finally:
        service.close()

    print()
    print(
        f"{'pool':<20}{'wall s':>8}{'bound s':>9}{'ratio':>7}{'p50 s':>8}{'p99 s':>8}"
        f"{'busy':>7}{'verdicts':>10}"
    )
    for f in figures:
        print(
            f"{f.label:<20}{f.wall:>8.1f}{f.bound:>9.1f}{f.wall / f.bound:>6.2f}x"
            f"{f.p50:>8.2f}{f.p99:>8.2f}{f.busy:>7.1%}{f'{f.agree}/{f.n}':>10}"
        )
    load = os.getloadavg()[0]
    print(
        "KEY reward-step: "
        + " ".join(f"{f.label.replace(' ', '_')}={f.wall / f.bound:.2f}x" for f in figures)
        + f" load1={load:.1f}"
    )


def part_cli(problems: Problems, source: str, cpus: int, prompts: int = 64) -> None:
    """``codefu-reward score`` end to end (a new process: imports, workers, judging, output)
    on the 104-response batch, against the batch's CPU bound."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    cases = reference_cases(problems)
    with tempfile.TemporaryDirectory(prefix="codefu-bench-cli-") as tmp:
        root = Path(tmp)
        truths = {c.problem: c.ground_truth for c in cases}
        rows = [{"reward_model": {"ground_truth": gt}} for gt in truths.values()]
        pq.write_table(pa.Table.from_pylist(rows), root / "data.parquet")

        def score(batch: list[Case], out: str) -> float:
            responses = root / f"{out}.in.jsonl"
            responses.write_text(
                "".join(
                    json.dumps({"name": c.problem, "response": c.response}) + "\n" for c in batch
                )
            )
            command = [
                sys.executable, "-m", "codefu_trainer.reward.cli", "score",
                "--data", str(root / "data.parquet"), "--responses", str(responses),
                "--out", str(root / out), "--config-dir", str(ROOT / "conf"),
                f"worker.cache_dir={root / 'cache'}",
            ]  # fmt: skip
            env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
            start = time.perf_counter()
            subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)
            return time.perf_counter() - start

        warm = next(c for c in cases if c.variant == "ac")
        warm_case = Case(warm.problem, "ac", "AC", warm.response.replace("main()", "main( )"), {})
        score([warm_case], "warm.jsonl")  # the user's cache holds the precompiled header
        wall = score(cases, "scores.jsonl")
        results = [json.loads(line) for line in (root / "scores.jsonl").read_text().splitlines()]
    bound = cpu_bound(cases, results, cpus)
    agree = sum(r["verdict"] == c.truth for r, c in zip(results, cases, strict=True))
    print(
        f"codefu-reward score, end to end: {len(cases)} responses ({source}); "
        f"wall {wall:.1f} s, bound {bound:.1f} s, ratio {wall / bound:.2f}x; "
        f"verdicts = truth {agree}/{len(cases)}"
    )
    print(
        f"KEY reward-cli: responses={len(cases)} wall_over_bound={wall / bound:.2f}x "
        f"load1={os.getloadavg()[0]:.1f}"
    )


def _audited_step(
    cases: list[Case], cpus: int, share: float, ray_cpus: int | None = None
) -> tuple[float, float, dict[str, Any], int]:
    """One step on a fresh pool (fresh cache, PCH warm) with ``audit_share=share``: the
    step's wall time (until ``score`` returns), the wall time until its audits are judged
    too, the pool's window of the step, and how many verdicts equal the truth."""
    cache = Path(tempfile.mkdtemp(prefix="codefu-bench-audit-"))
    ray.init(
        address="local", num_cpus=ray_cpus or cpus, log_to_driver=False, include_dashboard=False
    )
    try:
        config = RewardConfig(
            worker=WorkerConfig(cache_dir=str(cache), num_workers=ray_cpus, audit_share=share)
        )
        service = RewardService(config)
        try:
            service.workers()
            warm = next(c for c in cases if c.variant == "ac")
            service.score([warm.response.replace("main()", "main( )")], [warm.ground_truth])
            service.drain_audits()
            service.take_window()
            start = time.perf_counter()
            results = service.score([c.response for c in cases], [c.ground_truth for c in cases])
            wall = time.perf_counter() - start
            service.drain_audits()
            with_audits = time.perf_counter() - start
            window = service.take_window()
        finally:
            service.close()
    finally:
        ray.shutdown()
        shutil.rmtree(cache, ignore_errors=True)
    agree = sum(r["verdict"] == c.truth for r, c in zip(results, cases, strict=True))
    return wall, with_audits, window, agree


AUDIT_SHARES = (0.0, 0.01, 0.10)


def part_audit(
    problems: Problems, source: str, cpus: int, prompts: int = 64, repeats: int = 3
) -> None:
    """The verdict audit's cost: the step's wall time (until ``score`` returns) at audit_share
    0, 0.01 and 0.10, and the time until its audits are judged too (they run in the
    background), each share run ``repeats`` times in rotating order (0/1/10, 1/10/0, ...) so
    the machine's drift spreads over all three; the ratios are of the medians. Then the flip
    rate with every submission audited on a pool of 4 workers per CPU (4x oversubscribed)."""
    cases = step_cases(problems, prompts=prompts)
    print(
        f"GRPO step: {len(cases)} responses ({prompts} prompts x 8), {source}; {cpus} CPUs; "
        f"{repeats} runs per audit share"
    )
    runs: dict[float, list[tuple[float, float, dict[str, Any], int]]] = {
        share: [] for share in AUDIT_SHARES
    }
    for r in range(repeats):
        order = AUDIT_SHARES[r % 3 :] + AUDIT_SHARES[: r % 3]
        for share in order:
            runs[share].append(_audited_step(cases, cpus, share))
            wall, drained = runs[share][-1][:2]
            print(f"  run {r + 1}, audit {share:.0%}: step {wall:.1f} s, +audits {drained:.1f} s")

    base = statistics.median([run[0] for run in runs[0.0]])
    print(
        f"{'audit':>7}{'step s (median)':>17}{'x none':>8}{'+audits s':>11}{'x none':>8}"
        f"{'audited':>9}{'flips':>7}{'verdicts':>10}{'step s (each run)':>26}"
    )
    ratios: dict[float, tuple[float, float]] = {}
    for share, share_runs in runs.items():
        wall = statistics.median([run[0] for run in share_runs])
        drained = statistics.median([run[1] for run in share_runs])
        ratios[share] = (wall / base, drained / base)
        audited = sum(run[2]["audited"] for run in share_runs)
        flips = sum(run[2]["flips"] for run in share_runs)
        agree = sum(run[3] for run in share_runs)
        each = " ".join(f"{run[0]:.1f}" for run in share_runs)
        print(
            f"{share:>7.0%}{wall:>17.1f}{wall / base:>7.2f}x{drained:>11.1f}"
            f"{drained / base:>7.2f}x{audited:>9}{flips:>7}"
            f"{f'{agree}/{len(cases) * len(share_runs)}':>10}{each:>26}"
        )
    over = 4 * cpus
    _, _, window, agree = _audited_step(cases, cpus, 1.0, ray_cpus=over)
    compared = window["audited"] - window["audit_failures"]
    rate = window["flips"] / compared if compared else 0.0
    print(
        f"oversubscribed {over} workers on {cpus} CPUs, every submission audited: "
        f"{window['audited']} audits, {window['flips']} flips ({rate:.2%}), "
        f"{window['audit_failures']} audit failures; verdicts = truth {agree}/{len(cases)}"
    )
    for flip in window["flip_details"]:
        print(f"  flip: {flip}")
    print(
        f"KEY reward-audit: step_1pct={ratios[0.01][0]:.2f}x step_10pct={ratios[0.10][0]:.2f}x "
        f"drained_1pct={ratios[0.01][1]:.2f}x drained_10pct={ratios[0.10][1]:.2f}x "
        f"flip_rate_4x={rate:.4f} load1={os.getloadavg()[0]:.1f}"
    )


PARTS = {
    "reference": part_reference,
    "step": part_step,
    "cli": part_cli,
    "audit": part_audit,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--problems", type=int, default=None, help="use at most N problems")
    parser.add_argument("--cpus", type=int, default=os.cpu_count() or 1, help="Ray CPUs")
    parser.add_argument(
        "--part", choices=[*PARTS, "all"], default="all", help="which measurement (default all)"
    )
    parser.add_argument("--prompts", type=int, default=64, help="prompts of the step (x 8)")
    parser.add_argument(
        "--repeats", type=int, default=3, help="part audit: runs per audit share (default 3)"
    )
    args = parser.parse_args(argv)
    problems, source = load_problems(args.problems)
    for name, part in PARTS.items():
        if args.part in (name, "all"):
            print(f"== {name}")
            if name == "audit":
                part_audit(problems, source, args.cpus, args.prompts, args.repeats)
            else:
                part(problems, source, args.cpus, args.prompts)
            print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
