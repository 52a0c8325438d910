"""The CPU path's entry point (cluster=cpu_verl): compose, write the inputs, patch veRL, run.

`codefu-train` (training/cli.py, and `--smoke` in training/smoke/stages.py, which also takes the
`hf` rollout's overrides for a GPU without vLLM from here) reaches veRL on CPU only through
this module; nothing outside `verl/cpu/` imports the others (tests/test_layout.py). The run
itself is the one GPU runs make (`verl.main.train`), with the CPU settings composed in
(`config.EXTENSION`), veRL patched in this process too, and a Ray cluster of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from codefu_trainer.run import console
from codefu_trainer.run.config import TrainConfig
from codefu_trainer.training.compose import (
    ComposedRun,
    compose_run,
    require_data,
    write_resolved,
)
from codefu_trainer.training.verl.cpu.config import EXTENSION


def hf_rollout_overrides() -> list[str]:
    """veRL overrides for the `hf` rollout (transformers) on a GPU machine without vLLM
    (`codefu-train --smoke`): its name, and the Ray hook that registers it in every process."""
    from codefu_trainer.training.verl.cpu.hook import HOOK
    from codefu_trainer.training.verl.cpu.patches import ROLLOUT_NAME

    return [
        f"actor_rollout_ref.rollout.name={ROLLOUT_NAME}",
        f"++ray_kwargs.ray_init.runtime_env.worker_process_setup_hook={HOOK}",
    ]


def compose(conf_dir: Path, overrides: Sequence[str], **kwargs: Any) -> ComposedRun:
    """`compose_run` with the CPU path's veRL settings (`config.EXTENSION`)."""
    return compose_run(conf_dir, overrides, extension=EXTENSION, **kwargs)


def main(conf_dir: Path, overrides: Sequence[str]) -> int:
    """`codefu-train cluster=cpu_verl`: veRL's own trainer on this machine's CPU (docs/train.md,
    "veRL on CPU"); returns the exit code."""
    composed = compose(conf_dir, overrides)
    require_data(composed.cfg)
    write_resolved(composed)
    assert composed.verl is not None
    return run(composed.verl, composed.cfg, composed.run_dir)


def run(verl: DictConfig, cfg: TrainConfig, run_dir: Path) -> int:
    """Write the run's inputs (every tier of a curriculum), patch veRL in this process too,
    train (veRL's trainer and the model export, `verl.main.train`), and stop the Ray
    cluster it started, whatever happens."""
    import os

    console.log_to(run_dir)  # library output to <run dir>/codefu-train.log

    import ray

    from codefu_trainer.run.local_ray import ray_temp_dir_outside_venv, workers_at_normal_priority
    from codefu_trainer.training.verl import main as verl_main
    from codefu_trainer.training.verl.cpu.config import prepare_inputs
    from codefu_trainer.training.verl.cpu.hook import setup

    tiers = OmegaConf.select(verl, "data.curriculum.tiers", default=None) or ()
    prepare_inputs(cfg, run_dir, [str(t) for t in tiers])
    os.environ.setdefault("VERL_PLATFORM", "cpu")  # the driver reads veRL's platform too
    setup()  # (auto_set_device, run_ppo); the workers get both from the runtime env
    ray_temp_dir_outside_venv()
    workers_at_normal_priority()  # the Ray cluster veRL starts here (ray_init.address=local)
    try:
        return verl_main.train(verl, cfg, run_dir)
    finally:
        if ray.is_initialized():
            ray.shutdown()
