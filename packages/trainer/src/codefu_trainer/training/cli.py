"""`codefu-train --config-dir CONF [OVERRIDES...]`: compose, validate, record, dispatch.

Composition is `codefu_trainer.training.compose` (stage 1: `codefu_trainer.run.compose`).
Then cluster.kind decides: local → veRL on this machine's GPUs (or a SageMaker job's Ray
cluster); cpu → the CPU rehearsal; cpu_verl → veRL's own trainer on this machine's CPU;
sagemaker → a SageMaker training job (dry run by default).

Exit codes: 0 done, 2 configuration error or an unreadable input file, 3 missing
prerequisite (no GPU, no data, no credentials), 1 the run itself failed.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from omegaconf import OmegaConf

from codefu_data.reader import DataError
from codefu_trainer.run import console
from codefu_trainer.run.compose import PrerequisiteError, default_conf_dir
from codefu_trainer.run.config import ClusterKind
from codefu_trainer.run.overrides import ConfigError, one_line, split_overrides
from codefu_trainer.run.prepared_data import BadInputError, check_prepared_data, check_raw_source
from codefu_trainer.run.progress import Heartbeat
from codefu_trainer.run.stack import require_training_stack
from codefu_trainer.training.compose import (
    ComposedRun,
    compose_run,
    compose_stage1,
    require_data,
    to_train_config,
    write_resolved,
)

EXIT_CONFIG = 2
EXIT_PREREQUISITE = 3


def gate(run: ComposedRun, force: bool, plan_json: Path | None) -> None:
    """The GPU preflight (memory plan, data, lengths, disk, model files): raises ConfigError
    when the run cannot work, unless `force`."""
    from codefu_trainer.training.planning.preflight import (
        preflight,
        print_report,
        refusal_message,
        write_plan_json,
    )

    result = preflight(run)
    print_report(result)
    if plan_json is not None:
        write_plan_json(result, plan_json)
    if result.refused:
        if not force:
            raise ConfigError(refusal_message(result))
        print("codefu-train: --force: starting although preflight checks failed.", file=sys.stderr)


def run_local(
    conf_dir: Path, overrides: Sequence[str], force: bool = False, plan_json: Path | None = None
) -> int:
    from codefu_trainer.run.gpu import NO_GPU_MESSAGE, visible_gpu_count

    gpus = visible_gpu_count()
    if gpus == 0:
        raise PrerequisiteError(NO_GPU_MESSAGE)
    run = compose_run(conf_dir, overrides, gpus_detected=gpus)
    require_data(run.cfg)
    gate(run, force, plan_json)
    write_resolved(run)
    from codefu_trainer.training.verl import main as verl_main

    assert run.verl is not None
    return verl_main.run(run.verl, run.cfg, run.run_dir)


def compose_checked(conf_dir: Path, overrides: Sequence[str], kind: ClusterKind) -> ComposedRun:
    """What --check composes: cluster=cpu_verl through the CPU path's entry point (the only
    importer of `verl/cpu/`), every other kind with `compose_run`."""
    if kind is ClusterKind.cpu_verl:
        from codefu_trainer.training.verl.cpu import run as cpu

        return cpu.compose(conf_dir, overrides, gpus_detected=8)
    return compose_run(conf_dir, overrides, gpus_detected=8)


@console.command("codefu-train")  # quiet once a run has its directory (run/console.py)
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="codefu-train",
        description=(
            "Compose conf/train.yaml + conf/verl/grpo.yaml and train: cluster=local (veRL on "
            "this machine's GPUs), cluster=cpu (CPU rehearsal), cluster=cpu_verl (veRL's "
            "trainer on CPU), cluster=sagemaker_* (submit a job). "
            "Overrides whose first key is cluster/data/reward/model/run/rehearsal are ours; others "
            "go to veRL (prefix verl. for veRL's own data./reward./model. keys)."
        ),
    )
    parser.add_argument(
        "--config-dir", type=Path, default=None, help="the repository's conf/ (default ./conf)"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="compose and validate both configs, print them and (GPU clusters) the memory "
        "plan and preflight checks; start nothing; exit 2 when a check fails",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="start or submit a GPU run even when its preflight checks fail",
    )
    parser.add_argument(
        "--plan-json",
        type=Path,
        default=None,
        metavar="FILE",
        help="write the GPU memory plan (parts in GiB) and the preflight checks as JSON",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="3 GRPO steps of veRL's trainer on this machine's GPU (its CPU without one): "
        "checkpoint, torn-step resume, export, and each phase's memory and time next to the "
        "memory plan (docs/smoke.md); exit 0 only when every stage passed",
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="show library output (warnings, veRL's configuration, Ray's messages; a SageMaker "
        "dry run's SDK log lines) here instead of in the run's log file <run dir>/codefu-train.log",
    )
    parser.add_argument(
        "overrides", nargs="*", help="Hydra overrides, e.g. cluster=cpu trainer.total_epochs=1"
    )
    args = parser.parse_args(argv)
    if args.verbose:
        console.show_everything()
    conf_dir: Path = (args.config_dir or default_conf_dir()).expanduser().resolve()
    try:
        require_training_stack("train")
        if args.smoke:
            from codefu_trainer.training.smoke import run as smoke

            return smoke.main(conf_dir, args.overrides)
        ours, _ = split_overrides(args.overrides)
        train_cfg = to_train_config(compose_stage1(conf_dir, ours))
        kind = train_cfg.cluster.kind
        if kind is ClusterKind.cpu:  # the rehearsal's own inputs, before veRL is imported
            from codefu_trainer.training.rehearsal.loop import check_rehearsal

            check_rehearsal(train_cfg.rehearsal)
            check_raw_source(train_cfg.data.source)
        if args.check:
            run = compose_checked(conf_dir, args.overrides, kind)
            assert run.verl is not None
            from codefu_trainer.training.verl.recipes import check_recipe

            check_recipe(run.verl)  # recipe=...: what veRL checks only once running
            print(OmegaConf.to_yaml(OmegaConf.structured(run.cfg), resolve=True))
            print("# --- veRL ---")
            print(OmegaConf.to_yaml(run.verl, resolve=False))
            if run.cfg.cluster.kind in (ClusterKind.local, ClusterKind.sagemaker):
                gate(run, force=False, plan_json=args.plan_json)
            print(
                "codefu-train: both configs composed and validated; nothing started.",
                file=sys.stderr,
            )
            return 0
        check_prepared_data(train_cfg)  # before a run directory exists
        if kind is ClusterKind.local:
            return run_local(conf_dir, args.overrides, args.force, args.plan_json)
        if kind is ClusterKind.cpu_verl:  # its own entry point (docs/train.md "veRL on CPU")
            from codefu_trainer.training.verl.cpu import run as cpu

            return cpu.main(conf_dir, args.overrides)
        if kind is ClusterKind.cpu:
            with Heartbeat("codefu-train: composing the run (imports veRL and torch)"):
                run = compose_run(conf_dir, args.overrides)
            require_data(run.cfg)
            from codefu_trainer.training.rehearsal import loop as rehearsal

            assert run.verl is not None
            made_here = not run.run_dir.exists()
            try:
                write_resolved(run)
                final = rehearsal.run(run.cfg, run.verl, run.run_dir)
            except (ConfigError, BadInputError, DataError):
                if made_here:  # a run stopped by its input leaves nothing behind
                    shutil.rmtree(run.run_dir, ignore_errors=True)
                raise
            if run.cfg.run.evaluate_final:
                from codefu_trainer.evaluation.run import evaluate_trained_model

                evaluate_trained_model(run.cfg, run.run_dir, final)
            return 0
        run = compose_run(conf_dir, args.overrides)
        gate(run, args.force, args.plan_json)
        if not run.cfg.cluster.sagemaker.dry_run:  # a dry run leaves nothing behind
            write_resolved(run)
        from codefu_trainer.training.sagemaker import job as sagemaker_job

        return sagemaker_job.submit_run(run, force=args.force, verbose=args.verbose)
    except ConfigError as exc:
        print(
            f"codefu-train: configuration error: {one_line(exc)} Nothing was started.",
            file=sys.stderr,
        )
        return EXIT_CONFIG
    except (BadInputError, DataError) as exc:
        print(f"codefu-train: {one_line(exc)} Nothing was started.", file=sys.stderr)
        return EXIT_CONFIG
    except PrerequisiteError as exc:
        print(f"codefu-train: {one_line(exc)}", file=sys.stderr)
        return EXIT_PREREQUISITE


if __name__ == "__main__":
    sys.exit(main())
