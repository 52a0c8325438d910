"""Evaluation benchmark (`nox -s bench -- eval`): samples judged per second by `codefu-eval`.

The shipped raw dataset is prepared by codefu_data in a temp dir; the rehearsal's tiny model
is built and warm-started as `nox -s train -- cluster=cpu` does (its samples mix intact C++,
corrupted C++ and no code, so the judge compiles, runs every private test of a program that
compiles, and extracts nothing from the rest); then the whole evaluation runs on the test
split of every tier: generation (transformers on CPU), judging (the Ray judge pool through
RewardService, overlapping the next batch's generation), samples.jsonl, summary.

Reported: samples judged per second of judging time, samples per second end to end, the
verdict mix, and the load average (timings on a shared machine are noisy).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# What the benchmark's tiny model is warm-started to write: a C++ program the judge compiles.
BENCH_RESPONSE = "<code>\n#include <cstdio>\nint main(){return 0;}\n</code>"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=10, help="samples per problem")
    parser.add_argument("--warmup-steps", type=int, default=60, help="tiny model warm start")
    args = parser.parse_args()

    from codefu_data.config import DataConfig
    from codefu_data.prepare import prepare
    from codefu_data.sample import sample_dataset_dir
    from codefu_trainer.evaluation.config import compose_eval
    from codefu_trainer.evaluation.run import evaluate
    from codefu_trainer.run.config import RehearsalConfig, TinyModelConfig
    from codefu_trainer.run.prompt_rows import load_prompts
    from codefu_trainer.training.rehearsal.tiny_model import warm_start, write_tiny_model

    rehearsal = RehearsalConfig()
    with tempfile.TemporaryDirectory(prefix="codefu-bench-eval-") as tmp:
        data = DataConfig(source=str(sample_dataset_dir()), out_dir=str(Path(tmp) / "processed"))
        processed = prepare(data, progress=False, log=lambda _msg: None).out_dir
        prompts = [
            row["prompt"]
            for row in load_prompts(
                processed / "easy" / "train.parquet", rehearsal.max_prompt_tokens
            )
        ]

        def warmup(model: Any, tok: Any) -> None:
            warm_start(
                model,
                tok,
                [(p, BENCH_RESPONSE) for p in prompts],
                steps=args.warmup_steps,
                lr=rehearsal.warmup_lr,
            )

        model = write_tiny_model(TinyModelConfig(), Path(tmp) / "model", warmup)
        cfg = compose_eval(
            ROOT / "conf",
            [
                "cluster=cpu",
                f"model.path={model}",
                f"data.out_dir={processed}",
                "eval.tiers=[easy,hard,expert]",
                f"eval.samples={args.samples}",
                "eval.k=[1]",
                f"eval.max_new_tokens={rehearsal.max_completion_tokens}",
                f"eval.out={Path(tmp) / 'eval'}",
                "eval.tracking.mlflow=false",
            ],
        )
        start = time.perf_counter()
        outcome = evaluate(cfg, log=lambda _line: None)
        wall = time.perf_counter() - start
    s = outcome.summary
    mix = ", ".join(f"{v} {c}" for v, c in s["verdicts"].items())
    print(
        f"eval bench: {outcome.judged} samples ({s['problems']} test problems x {args.samples}, "
        f"all tiers), backend {s['backend']}, {os.cpu_count()} CPUs; verdicts {mix}\n"
        f"  judging: {outcome.judge_seconds:.1f} s = "
        f"{outcome.judged / outcome.judge_seconds:.2f} samples judged/s\n"
        f"  generation: {outcome.generate_seconds:.1f} s; end to end (model load, Ray start, "
        f"generation, judging, summary): {wall:.1f} s = {outcome.judged / wall:.2f} samples/s\n"
        f"  load average {os.getloadavg()[0]:.1f} (a shared machine: timings are noisy)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
