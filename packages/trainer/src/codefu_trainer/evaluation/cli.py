"""`codefu-eval`: pass@k of a model on held-out problems, and two evaluations compared.

    codefu-eval [--config-dir CONF] [OVERRIDES...]
    codefu-eval compare DIR_A DIR_B [--resamples N] [--confidence C] [--seed S] [--out FILE]
    codefu-eval grade --data FILE [FILE...] --generations FILE [--out DIR] [OVERRIDES...]

Overrides are Hydra overrides of conf/eval.yaml: the groups cluster, data, reward, model
(as in training) and eval.* (`model.path=runs/<run>/model eval.samples=10 eval.k=[1,5,10]`);
`eval.protocol=livecodebench data.source=FILE` evaluates a LiveCodeBench file with its
runner's settings (conf/protocol/livecodebench.yaml; each still an override away). `grade`
judges generations made elsewhere under that protocol (evaluation/grade.py).

Exit codes: 0 done, 2 configuration or input error, 3 missing prerequisite (model, data,
GPU or vLLM), 1 the evaluation itself failed.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from codefu_trainer.evaluation.config import compose_eval
from codefu_trainer.evaluation.store import StoreError
from codefu_trainer.run import console
from codefu_trainer.run.compose import PrerequisiteError, default_conf_dir
from codefu_trainer.run.overrides import ConfigError, one_line
from codefu_trainer.run.prepared_data import BadInputError
from codefu_trainer.run.stack import require_training_stack

EXIT_INPUT = 2
EXIT_PREREQUISITE = 3


def config_dir_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config-dir", type=Path, default=None, help="the repository's conf/ (default ./conf)"
    )


def evaluate_command(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="codefu-eval",
        description=(
            "Evaluate a model: sample eval.samples responses per held-out problem, judge them "
            "with the reward's judge, report pass@k. Subcommand: `codefu-eval compare DIR_A "
            "DIR_B` (see `codefu-eval compare --help`)."
        ),
    )
    config_dir_argument(parser)
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="show library output (warnings, Ray's messages) here instead of in the "
        "evaluation's log file <eval dir>/codefu-eval.log",
    )
    parser.add_argument(
        "overrides",
        nargs="*",
        help="Hydra overrides of conf/eval.yaml, e.g. cluster=cpu model.path=runs/<run>/model",
    )
    args = parser.parse_args(argv)
    if args.verbose:
        console.show_everything()
    conf_dir = (args.config_dir or default_conf_dir()).expanduser().resolve()
    require_training_stack("evaluate")
    try:
        cfg = compose_eval(conf_dir, args.overrides)
    except ConfigError as exc:
        print(
            f"codefu-eval: configuration error: {one_line(exc)} Nothing was started.",
            file=sys.stderr,
        )
        return EXIT_INPUT
    from codefu_trainer.evaluation.run import evaluate

    evaluate(cfg)
    return 0


def compare_command(argv: Sequence[str]) -> int:
    from codefu_trainer.evaluation.compare import compare, format_comparison, load_evaluation

    parser = argparse.ArgumentParser(
        prog="codefu-eval compare",
        description=(
            "Two finished evaluations side by side: per k and for the mean score, A, B, the "
            "mean per-problem difference B - A over the problems both evaluated, and its "
            "bootstrap confidence interval."
        ),
    )
    parser.add_argument("a", type=Path, help="evaluation directory A (e.g. the base model's)")
    parser.add_argument("b", type=Path, help="evaluation directory B (e.g. the trained model's)")
    parser.add_argument("--resamples", type=int, default=10_000, help="bootstrap resamples")
    parser.add_argument("--confidence", type=float, default=0.95, help="interval level")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    parser.add_argument("--out", type=Path, default=None, help="also write the result as JSON")
    args = parser.parse_args(argv)
    if args.resamples < 1 or not 0 < args.confidence < 1:
        raise StoreError("--resamples must be >= 1 and --confidence within (0, 1).")
    result = compare(
        load_evaluation(args.a),
        load_evaluation(args.b),
        resamples=args.resamples,
        confidence=args.confidence,
        seed=args.seed,
    )
    print(format_comparison(result))
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n")
        print(f"codefu-eval: comparison written to {args.out}")
    return 0


def grade_command(argv: Sequence[str]) -> int:
    from codefu_trainer.evaluation.grade import grade, read_generations
    from codefu_trainer.evaluation.summary import format_table

    parser = argparse.ArgumentParser(
        prog="codefu-eval grade",
        description=(
            "Judge generations made elsewhere under LiveCodeBench's protocol: its verdict per "
            "answer, pass@k per difficulty and platform. The generations: LiveCodeBench's "
            "custom output ([{question_id, code_list}]: code as given), its saved generations "
            "([{question_id, output_list}]: raw outputs, code taken by its extract_code), or "
            "JSONL lines {question_id, response} (the same)."
        ),
    )
    parser.add_argument(
        "--data",
        nargs="+",
        required=True,
        help="LiveCodeBench code_generation_lite files (JSONL or parquet) or their folder",
    )
    parser.add_argument("--generations", type=Path, required=True, help="the generations file")
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="results folder (default <eval.root_dir>/eval/grade/<generations>_<digest>)",
    )
    config_dir_argument(parser)
    parser.add_argument(
        "overrides",
        nargs="*",
        help="Hydra overrides of conf/eval.yaml under eval.protocol=livecodebench, e.g. "
        "eval.release=release_v5 data.date_from=2024-08-01",
    )
    args = parser.parse_args(argv)
    generations = read_generations(args.generations)  # a bad file stops before anything
    conf_dir = (args.config_dir or default_conf_dir()).expanduser().resolve()
    try:
        cfg = compose_eval(conf_dir, ["eval.protocol=livecodebench", *args.overrides])
    except ConfigError as exc:
        print(
            f"codefu-eval grade: configuration error: {one_line(exc)} Nothing was written.",
            file=sys.stderr,
        )
        return EXIT_INPUT
    source = args.data[0] if len(args.data) == 1 else list(args.data)
    cfg = dataclasses.replace(cfg, data=dataclasses.replace(cfg.data, source=source))
    outcome = grade(cfg, args.generations, generations, args.out, log=print)
    print(format_table(outcome.summary))
    print(f"codefu-eval: results in {outcome.out_dir}")
    return 0


@console.command("codefu-eval")  # quiet once the evaluation has its directory (run/console.py)
def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        if args[:1] == ["compare"]:
            return compare_command(args[1:])
        if args[:1] == ["grade"]:
            return grade_command(args[1:])
        return evaluate_command(args)
    except (StoreError, BadInputError) as exc:
        print(f"codefu-eval: {one_line(exc)}", file=sys.stderr)
        return EXIT_INPUT
    except PrerequisiteError as exc:
        print(f"codefu-eval: {one_line(exc)}", file=sys.stderr)
        return EXIT_PREREQUISITE


if __name__ == "__main__":
    sys.exit(main())
