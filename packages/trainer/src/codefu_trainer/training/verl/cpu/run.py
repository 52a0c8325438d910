"""The CPU path's entry point (cluster=cpu_verl): write the inputs, patch veRL, run.

The cpu_verl cluster kind (training/clusters/cpu_verl.py, which composes with
`config.EXTENSION`) and `codefu-train --smoke` (training/smoke/stages.py, which takes the
`hf` rollout's overrides for a GPU without vLLM from here) reach veRL on CPU only through
this module and `config.EXTENSION`; nothing else outside `verl/cpu/` imports it
(tests/test_layout.py). The run itself is the one GPU runs make (`verl.main.train`), with
veRL patched in this process too, and a Ray cluster of its own.
"""

from __future__ import annotations

from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from codefu_trainer.run import console
from codefu_trainer.run.config import TrainConfig


def hf_rollout_overrides() -> list[str]:
    """veRL overrides for the `hf` rollout (transformers) on a GPU machine without vLLM
    (`codefu-train --smoke`): its name, and the Ray hook that registers it in every process."""
    from codefu_trainer.training.verl.cpu.hook import HOOK
    from codefu_trainer.training.verl.cpu.patches import ROLLOUT_NAME

    return [
        f"actor_rollout_ref.rollout.name={ROLLOUT_NAME}",
        f"++ray_kwargs.ray_init.runtime_env.worker_process_setup_hook={HOOK}",
    ]


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
