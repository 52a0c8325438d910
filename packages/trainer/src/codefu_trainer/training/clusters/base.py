"""What a cluster kind is: its facts, checks, what the preflight reads of it, how its run
starts.

`Cluster` holds what most kinds share (a run on this machine: its GPU, its disk) on top of
a kind's facts (`run.cluster_kinds.ClusterKind`: runs here, uses this machine's GPUs, its
own settings); a kind's module subclasses it, sets `name` and overrides what differs, and
joins the registry (`run.cluster_kinds.CLUSTER_KINDS`) by one entry point.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from omegaconf import DictConfig

from codefu_trainer.run.cluster_kinds import ClusterKind
from codefu_trainer.run.config import TrainConfig
from codefu_trainer.run.overrides import ConfigError
from codefu_trainer.run.stack import MLFLOW, VERL
from codefu_trainer.training.compose import compose_stages
from codefu_trainer.training.composed_run import ComposedRun
from codefu_trainer.training.planning.inputs import Gpu, this_machine_gpu
from codefu_trainer.training.planning.preflight import DiskRoom, this_machine_disk
from codefu_trainer.training.verl.config import ClusterExtension


@dataclass(frozen=True)
class Launch:
    """How `codefu-train` was asked to start a run."""

    conf_dir: Path
    overrides: Sequence[str]
    force: bool = False  # start or submit although the preflight refuses
    plan_json: Path | None = None  # where to write the preflight as JSON
    verbose: bool = False  # a SageMaker dry run shows the SDK's log lines


class Cluster(ClusterKind):
    """One cluster kind. Subclasses set `name` and override what differs."""

    # The veRL settings only this kind adds to the derived ones (veRL on CPU's), or None.
    extension: ClusterExtension | None = None
    # `--check` shows the GPU memory plan and the preflight; the start refuses what they refuse.
    plans_gpu_memory: bool = False
    # The run's GPUs may be on another machine than the one checking (`--check cluster=local`
    # off the GPU box): an unknown GPU is then no refusal, and this disk not the run's.
    gpu_may_be_elsewhere: bool = False
    # Whether `run.evaluate_final=true` evaluates the final model after training.
    evaluates_final_model: bool = False
    # What its run imports here (pip's names; run/stack.py's groups): veRL and Ray.
    distributions: tuple[str, ...] = VERL

    def needs(self, cfg: TrainConfig) -> tuple[str, ...]:
        """The distributions a run of this kind imports here: its own, and MLflow when it
        tracks here (`run.tracking.mlflow`)."""
        tracks = cfg.run.tracking.mlflow and self.runs_here
        return (*self.distributions, *(MLFLOW if tracks else ()))

    def check(self, cfg: TrainConfig) -> None:
        """Checks across keys that types cannot express, from the configuration alone."""
        if cfg.run.evaluate_final and not self.evaluates_final_model:
            raise ConfigError(
                "run.evaluate_final=true evaluates the CPU rehearsal's final model (cluster=cpu); "
                "evaluate another run's model with `nox -s evaluate -- model.path=<run dir>/model`."
            )

    def check_inputs(self, cfg: TrainConfig) -> None:
        """The files this kind reads besides the prepared data, checked before the training
        stack is imported (most kinds: none)."""

    def check_verl(self, verl: DictConfig) -> None:
        """veRL's own checks of the composed veRL config, and the attention settings."""
        from codefu_trainer.training.verl.config import check_attention, validate_verl_config

        validate_verl_config(verl)
        check_attention(verl, loads_here=False)

    def compose(
        self,
        cfg: TrainConfig,
        conf_dir: Path,
        overrides: Sequence[str],
        gpus_detected: int | None = None,
        with_verl: bool = True,
    ) -> ComposedRun:
        """Stage 2 on the checked stage 1 `cfg`, with this kind's settings and checks."""
        return compose_stages(
            cfg, self, conf_dir, overrides, gpus_detected=gpus_detected, with_verl=with_verl
        )

    def gpu(self, cfg: TrainConfig) -> Gpu | str:
        """The GPU the memory plan is made for (a run on this machine: its GPU)."""
        return this_machine_gpu(cfg)

    def disk(self, cfg: TrainConfig, verl: DictConfig) -> DiskRoom:
        """The disk each node keeps checkpoints on (a run on this machine: its disk)."""
        return this_machine_disk(verl)

    def start(self, cfg: TrainConfig, launch: Launch) -> int:
        """Start (or submit) the run of the checked stage 1 `cfg`; the exit code."""
        raise NotImplementedError(f"cluster kind {self.name} cannot start a run")
