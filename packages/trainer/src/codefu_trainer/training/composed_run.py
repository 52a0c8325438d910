"""The composed run: what composing a training run yields (`compose.py`) and what the cluster
kinds, the preflight and the SageMaker job read. A plain record on the ground floor."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from omegaconf import DictConfig

from codefu_trainer.run.config import TrainConfig


@dataclass
class ComposedRun:
    """Everything a dispatch needs: both configs, where the run writes, the raw overrides."""

    cfg: TrainConfig
    verl: DictConfig | None
    run_dir: Path
    conf_dir: Path
    overrides: list[str]
