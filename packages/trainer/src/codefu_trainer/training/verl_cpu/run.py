"""A veRL run on this machine's CPU (cluster=cpu_verl): inputs, patches, a Ray of its own."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from codefu_trainer.training.config import TrainConfig


def run(verl: DictConfig, cfg: TrainConfig, run_dir: Path, train: Callable[[], int]) -> int:
    """Write the run's inputs (every tier of a curriculum), patch veRL in this process too,
    call `train` (veRL's trainer and the model export), and stop the Ray cluster it started,
    whatever happens."""
    import ray

    from codefu_trainer.training.local_ray import ray_temp_dir_outside_venv
    from codefu_trainer.training.verl_cpu.config import prepare_inputs
    from codefu_trainer.training.verl_cpu.hook import setup

    tiers = OmegaConf.select(verl, "data.curriculum.tiers", default=None) or ()
    prepare_inputs(cfg, run_dir, [str(t) for t in tiers])
    setup()  # the driver reads veRL's platform too (auto_set_device, run_ppo)
    ray_temp_dir_outside_venv()
    try:
        return train()
    finally:
        if ray.is_initialized():
            ray.shutdown()
