"""`codefu-train --config-dir CONF [OVERRIDES...]`: compose, validate, record, dispatch.

Composition is `codefu_trainer.training.compose` (stage 1: `codefu_trainer.run.compose`).
Then the kind of the cluster (`cluster.kind`, `training/clusters/registry.py`) checks its
inputs and starts the run: local → veRL on this machine's GPUs (or a SageMaker job's Ray
cluster); cpu → the CPU rehearsal; cpu_verl → veRL's own trainer on this machine's CPU;
sagemaker → a SageMaker training job (dry run by default).

Exit codes: 0 done, 2 configuration error or an unreadable input file, 3 missing
prerequisite (no GPU, no data, no credentials), 1 the run itself failed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from omegaconf import OmegaConf

from codefu_data.reader import DataError
from codefu_trainer.run import console
from codefu_trainer.run.compose import PrerequisiteError, default_conf_dir
from codefu_trainer.run.config import TrainConfig
from codefu_trainer.run.overrides import ConfigError, one_line, split_overrides
from codefu_trainer.run.prepared_data import BadInputError, check_prepared_data
from codefu_trainer.run.stack import require
from codefu_trainer.training.clusters.base import Cluster, Launch
from codefu_trainer.training.clusters.registry import cluster_of, train_config

EXIT_CONFIG = 2
EXIT_PREREQUISITE = 3


def check(cluster: Cluster, cfg: TrainConfig, launch: Launch) -> int:
    """`--check`: compose both stages, run every check that starts nothing, print them."""
    from codefu_trainer.training.planning.preflight import gate
    from codefu_trainer.training.verl.recipes import check_recipe

    run = cluster.compose(cfg, launch.conf_dir, launch.overrides, gpus_detected=8)
    assert run.verl is not None
    check_recipe(run.verl)  # recipe=...: what veRL checks only once running
    print(OmegaConf.to_yaml(OmegaConf.structured(run.cfg), resolve=True))
    print("# --- veRL ---")
    print(OmegaConf.to_yaml(run.verl, resolve=False))
    if cluster.plans_gpu_memory:
        gate(run, cluster, force=False, plan_json=launch.plan_json)
    print("codefu-train: both configs composed and validated; nothing started.", file=sys.stderr)
    return 0


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
        help="2 GRPO steps of veRL's trainer on this machine's GPU (its CPU without one): "
        "checkpoint, torn-step resume, export, and each phase's memory and time next to the "
        "memory plan (docs/smoke.md); exit 0 only when every stage passed; with --check: "
        "compose and check both stages, start nothing",
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
        if args.smoke:
            from codefu_trainer.training.smoke import run as smoke

            require(smoke.NEEDS, "smoke")
            if args.check:
                return smoke.check(conf_dir, args.overrides)
            return smoke.main(conf_dir, args.overrides)
        ours, _ = split_overrides(args.overrides)
        cfg = train_config(conf_dir, ours)
        cluster = cluster_of(cfg)
        require(cluster.needs(cfg), "train")  # what this run imports, nothing more
        cluster.check_inputs(cfg)  # before veRL is imported
        launch = Launch(conf_dir, args.overrides, args.force, args.plan_json, args.verbose)
        if args.check:
            return check(cluster, cfg, launch)
        check_prepared_data(cfg)  # before a run directory exists
        return cluster.start(cfg, launch)
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
