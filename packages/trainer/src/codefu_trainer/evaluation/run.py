"""Running an evaluation: plan, generate, judge, record, summarize; resumable.

The plan is fixed by the identity: every (problem, sample) of the evaluated problems, in
order, cut into batches of `eval.batch_size`, each sample with a seed derived from
`eval.seed` and its place in the plan. A batch that has any sample missing from
samples.jsonl is generated again with the same seeds, and only its missing samples are
judged and written. Judging a batch (`RewardService`, the reward veRL and the rehearsal
use: on the Ray judge pool when RAY_ADDRESS names a cluster, else in local judge worker
processes) overlaps generating the next.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codefu_sandbox import Verdict
from codefu_trainer.evaluation.config import EvalConfig, EvalSettings, check_eval_config
from codefu_trainer.evaluation.generation import (
    Generated,
    Generator,
    choose_backend,
    load_generator,
)
from codefu_trainer.evaluation.identity import default_out_dir, evaluation_identity, resolve_model
from codefu_trainer.evaluation.prepared import date_window, release_record, with_prepared_data
from codefu_trainer.evaluation.problems import (
    EvalProblem,
    absent_record,
    load_problems,
    problem_limits,
    prompt_char_limit,
)
from codefu_trainer.evaluation.store import (
    SAMPLES_FILE,
    SUMMARY_FILE,
    append_samples,
    open_store,
    read_samples,
)
from codefu_trainer.evaluation.summary import absent_line, format_table, summarize
from codefu_trainer.run import console
from codefu_trainer.run.config import TrainConfig, mlflow_tracking_uri

Log = Callable[[str], None]


def say(text: str) -> None:
    """An evaluation's lines and table: on the terminal even when the console is quiet."""
    print(text, file=console.stdout(), flush=True)


@dataclass(frozen=True)
class Unit:
    """One sample to produce: its problem, its index among the problem's samples, its seed."""

    problem: EvalProblem
    sample: int
    seed: int

    @property
    def key(self) -> tuple[str, int]:
        return (self.problem.name, self.sample)


@dataclass
class EvalOutcome:
    """Where the results are, the summary, and how long generation and judging took."""

    out_dir: Path
    summary: dict[str, Any]
    judged: int = 0  # samples judged by this call (a resumed run: the missing ones)
    generate_seconds: float = 0.0
    judge_seconds: float = 0.0
    wall_seconds: float = 0.0


def sample_seed(seed: int, index: int) -> int:
    """The seed of the `index`-th sample of the plan (32 bits, spread by a hash)."""
    digest = hashlib.sha256(f"{seed}/{index}".encode()).digest()
    return int.from_bytes(digest[:4], "little")


def plan_batches(problems: Sequence[EvalProblem], settings: EvalSettings) -> list[list[Unit]]:
    """Every (problem, sample) in order with its seed, in batches of `eval.batch_size`."""
    units = [
        Unit(p, j, sample_seed(settings.seed, i * settings.samples + j))
        for i, p in enumerate(problems)
        for j in range(settings.samples)
    ]
    size = settings.batch_size
    return [units[i : i + size] for i in range(0, len(units), size)]


def judged_record(problem: EvalProblem, sample: int, result: Any) -> dict[str, Any]:
    """What a samples.jsonl line says of a judged sample (`result`: the reward's
    `RewardResult`) and its problem."""
    return {
        "problem": problem.name,
        "sample": sample,
        "tier": problem.tier,
        "rating": problem.rating,
        "difficulty": problem.difficulty,
        "platform": problem.platform,
        "verdict": result.verdict,
        "score": result.score,
        "passed": result.passed,
        "total": result.total,
        "correct": result.verdict == str(Verdict.AC),
        "has_code": result.has_code,
        "language": result.language,
        "judge_failure": result.judge_failure,
    }


def sample_record(unit: Unit, generated: Generated, result: Any) -> dict[str, Any]:
    """A samples.jsonl line (`result`: the reward's `RewardResult`)."""
    return {
        **judged_record(unit.problem, unit.sample, result),
        "seed": generated.seed,
        "response_tokens": generated.tokens,
        "response": generated.text,
    }


def _judge(service: Any, pairs: list[tuple[Unit, Generated]]) -> tuple[list[dict[str, Any]], float]:
    start = time.perf_counter()
    scored = service.score_detailed(
        [g.text for _, g in pairs], [u.problem.ground_truth for u, _ in pairs]
    )
    records = [sample_record(u, g, s.result) for (u, g), s in zip(pairs, scored, strict=True)]
    return records, time.perf_counter() - start


def evaluate(cfg: EvalConfig, tracking_dir: Path | None = None, log: Log = say) -> EvalOutcome:
    """Evaluate (or finish evaluating) `cfg`; MLflow goes to `tracking_dir` (default: eval.out)."""
    from codefu_trainer.run.gpu import visible_gpu_count

    start = time.perf_counter()
    model = resolve_model(cfg)
    choice = choose_backend(cfg, visible_gpu_count())
    cfg = with_prepared_data(cfg, log)
    max_chars = prompt_char_limit(cfg)
    problems = load_problems(cfg, max_chars)
    absent = absent_record(cfg)
    if absent:
        log(f"codefu-eval: {absent_line({'absent': absent})}; evaluating the others")
    identity = evaluation_identity(cfg, model, choice.label, max_chars)
    out = Path(cfg.eval.out).expanduser().resolve() if cfg.eval.out else None
    out = out or default_out_dir(cfg, identity)
    open_store(out, identity)
    console.log_to(out)  # library output to <out>/codefu-eval.log (<run dir>'s under training)
    done = {(str(r["problem"]), int(r["sample"])) for r in read_samples(out)}
    batches = plan_batches(problems, cfg.eval)
    todo = [(i, b) for i, b in enumerate(batches) if any(u.key not in done for u in b)]
    n_units = sum(len(b) for b in batches)
    log(
        f"codefu-eval: {len(problems)} problems x {cfg.eval.samples} samples of {model} "
        f"({choice.label}); {n_units - len(done)} to judge, results in {out}"
    )
    outcome = EvalOutcome(out, {})
    if todo:
        generator = load_generator(cfg, model, choice)
        _generate_and_judge(
            cfg, generator, todo=todo, n_batches=len(batches), done=done, outcome=outcome, log=log
        )
    records = read_samples(out)
    missing = {u.key for b in batches for u in b} - {(r["problem"], r["sample"]) for r in records}
    if missing:
        raise RuntimeError(f"{len(missing)} planned samples are not in {out}; run it again.")
    outcome.summary = summarize(
        records,
        sorted(cfg.eval.k),
        cfg.eval.samples,
        choice.label,
        identity,
        protocol=cfg.eval.protocol,
        date_window=date_window(Path(cfg.data.out_dir)),
        limits=problem_limits(problems),
        release=release_record(cfg),
        absent=absent,
    )
    tmp = out / (SUMMARY_FILE + ".tmp")
    tmp.write_text(json.dumps(outcome.summary, indent=2) + "\n")
    tmp.replace(out / SUMMARY_FILE)
    outcome.wall_seconds = time.perf_counter() - start
    _report(cfg, outcome, tracking_dir or out, log)
    return outcome


def _generate_and_judge(
    cfg: EvalConfig,
    generator: Generator,
    *,
    todo: list[tuple[int, list[Unit]]],
    n_batches: int,
    done: set[tuple[str, int]],
    outcome: EvalOutcome,
    log: Log,
) -> None:
    import ray

    from codefu_trainer.reward.service import RewardService
    from codefu_trainer.run.local_ray import start_ray

    # A cluster to join (RAY_ADDRESS, or Ray already connected): its judge pool. Otherwise
    # local judge worker processes: the same verdicts without starting Ray.
    on_ray = bool(os.environ.get("RAY_ADDRESS")) or ray.is_initialized()
    started_ray = start_ray() if on_ray else False
    service = RewardService(cfg.reward, local=not on_ray)

    def finish(index: int, future: Future[tuple[list[dict[str, Any]], float]]) -> None:
        records, seconds = future.result()
        append_samples(outcome.out_dir, records)
        outcome.judged += len(records)
        outcome.judge_seconds += seconds
        mix = Counter(r["verdict"] for r in records)
        log(
            f"codefu-eval: batch {index + 1}/{n_batches}: {len(records)} judged in {seconds:.1f}s "
            f"({', '.join(f'{v} {c}' for v, c in sorted(mix.items()))})"
        )

    try:
        with ThreadPoolExecutor(max_workers=1) as judge:
            pending: tuple[int, Future[tuple[list[dict[str, Any]], float]]] | None = None
            for index, batch in todo:
                began = time.perf_counter()
                generated = generator.generate(
                    [u.problem.prompt for u in batch], [u.seed for u in batch]
                )
                outcome.generate_seconds += time.perf_counter() - began
                pairs = [(u, g) for u, g in zip(batch, generated, strict=True) if u.key not in done]
                if pending is not None:
                    finish(*pending)
                pending = (index, judge.submit(_judge, service, pairs))
            if pending is not None:
                finish(*pending)
    finally:
        service.close()
        if started_ray:
            ray.shutdown()


def _report(cfg: EvalConfig, outcome: EvalOutcome, tracking_dir: Path, log: Log) -> None:
    from codefu_trainer.evaluation.plots import make_plots
    from codefu_trainer.run.tracking import Tracker

    summary = outcome.summary
    plots = make_plots(summary, outcome.out_dir / "plots")
    log(format_table(summary))
    if outcome.judged:
        log(
            f"codefu-eval: {outcome.judged} samples judged; generation "
            f"{outcome.generate_seconds:.1f}s, judging {outcome.judge_seconds:.1f}s "
            f"({outcome.judged / max(outcome.judge_seconds, 1e-9):.2f} samples/s), "
            f"wall {outcome.wall_seconds:.1f}s"
        )
    tracking = cfg.eval.tracking
    run_id = None
    if tracking.mlflow:
        tracker = Tracker(
            tracking_dir,
            mlflow_tracking_uri(tracking, tracking_dir),
            tracking.experiment,
            outcome.out_dir.name,
            params=summary["settings"],
        )
        tracker.log_final(mlflow_metrics(summary))
        tracker.close()
        run_id = tracker.mlflow_run_id
    log(
        f"codefu-eval: summary {outcome.out_dir / SUMMARY_FILE}, samples "
        f"{outcome.out_dir / SAMPLES_FILE}, plots {plots[0].parent}"
        + (
            f", MLflow run {run_id} ({mlflow_tracking_uri(tracking, tracking_dir)})"
            if run_id
            else ""
        )
    )


def mlflow_metrics(summary: dict[str, Any], prefix: str = "eval/") -> dict[str, float]:
    """`eval/pass_at_<k>`, `eval/mean_score`, rates, verdict fractions; per tier,
    difficulty, platform, rating bucket and language too."""
    metrics: dict[str, float] = {}
    groups = [("", summary)]
    groups += [(f"tier/{t}/", s) for t, s in summary["by_tier"].items()]
    groups += [(f"difficulty/{d}/", s) for d, s in summary.get("by_difficulty", {}).items()]
    groups += [(f"platform/{p}/", s) for p, s in summary.get("by_platform", {}).items()]
    groups += [(f"rating/{b}/", s) for b, s in summary["by_rating"].items()]
    groups += [(f"language/{lang}/", s) for lang, s in summary.get("by_language", {}).items()]
    for name, s in groups:
        base = prefix + name
        for k, value in s["pass@k"].items():
            metrics[f"{base}pass_at_{k}"] = value
        for key in ("mean_score", "compile_rate", "code_rate"):
            metrics[base + key] = s[key]
    metrics[prefix + "response_tokens/mean"] = summary["response_tokens"]["mean"]
    total = max(summary["samples"], 1)
    for verdict, count in summary["verdicts"].items():
        metrics[f"{prefix}verdict/{verdict}"] = count / total
    return metrics


def evaluate_trained_model(train: TrainConfig, run_dir: Path, model_dir: Path) -> EvalOutcome:
    """`run.evaluate_final=true`: the rehearsal's final model on the test split, with the
    rehearsal's prompt cut and response length, into `<run dir>/eval` and the run's MLflow run."""
    r = train.rehearsal
    cfg = EvalConfig(
        cluster=train.cluster,
        data=train.data,
        reward=train.reward,
        model=dataclasses.replace(train.model, path=str(model_dir)),
        eval=EvalSettings(
            max_new_tokens=r.max_completion_tokens,
            max_prompt_chars=r.max_prompt_tokens,
            seed=train.run.seed,
            out=str(run_dir / "eval"),
            tracking=train.run.tracking,
        ),
    )
    check_eval_config(cfg)
    return evaluate(cfg, tracking_dir=run_dir)
