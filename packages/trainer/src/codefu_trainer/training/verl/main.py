"""cluster.kind=local: veRL's PPO/GRPO trainer (main_ppo's run_ppo) with the composed config.

Runs on this machine's GPUs, or inside a SageMaker job on the Ray cluster the launcher
formed (RAY_ADDRESS). After training, the newest FSDP checkpoint's actor is merged into
a Hugging Face model in SM_MODEL_DIR or <run dir>/model. veRL on CPU (cluster=cpu_verl)
trains with the same `train`, from its own entry point (`verl/cpu/run.py`).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from codefu_trainer.run import console
from codefu_trainer.run.config import TrainConfig, final_model_dir
from codefu_trainer.run.tracking import continue_mlflow_run
from codefu_trainer.training.checkpoints.export import export_final_model
from codefu_trainer.training.checkpoints.hosts import CheckpointError, prepare_resume_everywhere

EXIT_CHECKPOINT = 4  # checkpoints that cannot be resumed from or exported as they are


def run(verl: DictConfig, cfg: TrainConfig, run_dir: Path) -> int:
    """Train with veRL on GPUs (vLLM rollouts, or the smoke's `hf` rollout where vLLM is
    missing); returns an exit code."""
    vllm_rollout = str(OmegaConf.select(verl, "actor_rollout_ref.rollout.name")) == "vllm"
    if vllm_rollout and importlib.util.find_spec("vllm") is None:
        print(
            "codefu-train: vLLM is not installed; veRL's rollouts need it. `nox -s train` installs "
            "it on a CUDA machine (trainer[gpu]); elsewhere: pip install 'codefu-trainer[gpu]'.",
            file=sys.stderr,
        )
        return 3
    return train(verl, cfg, run_dir)


def train(verl: DictConfig, cfg: TrainConfig, run_dir: Path) -> int:
    """veRL's trainer, then the final model; returns an exit code (EXIT_CHECKPOINT when the
    checkpoints cannot be resumed from or exported as they are)."""
    console.log_to(run_dir)  # library output to <run dir>/codefu-train.log
    try:
        return _train_and_export(verl, cfg, run_dir)
    except CheckpointError as exc:
        print(f"codefu-train: {exc}", file=sys.stderr, flush=True)
        return EXIT_CHECKPOINT


def _train_and_export(verl: DictConfig, cfg: TrainConfig, run_dir: Path) -> int:
    from verl.trainer.main_ppo import run_ppo
    from verl.utils.device import auto_set_device

    env_vars = OmegaConf.to_container(
        verl.ray_kwargs.ray_init.runtime_env.get("env_vars", {}), resolve=True
    )
    assert isinstance(env_vars, dict)
    os.environ.update({str(k): str(v) for k, v in env_vars.items()})  # the driver logs too
    auto_set_device(verl)
    nodes, gpus = verl.trainer.nnodes, verl.trainer.n_gpus_per_node
    print(f"codefu-train: veRL on {nodes} node(s) x {gpus} GPUs; run dir {run_dir}", flush=True)
    # Resubmissions of a run name: one MLflow run, every host resumes from one complete step.
    continue_mlflow_run(verl)
    prepare_resume_everywhere(verl)
    if verl.trainer.use_v1:
        # veRL's TaskRunnerV1 training with codefu_<trainer.v1.trainer_mode>: veRL's trainer
        # plus the judge metrics of every step (codefu_trainer.training.verl.trainer).
        from codefu_trainer.training.verl.trainer import judge_task_runner

        run_ppo(verl, task_runner_class=judge_task_runner())
    else:
        from verl.trainer.main_ppo_v0 import TaskRunner

        run_ppo(verl, task_runner_class=TaskRunner)
    summary = {"run_dir": str(run_dir), "checkpoints": str(verl.trainer.default_local_dir)}
    if cfg.run.export_final:
        out = export_final_model(  # gathers the shards of every node (export.py)
            Path(verl.trainer.default_local_dir),
            final_model_dir(run_dir),
            trust_remote_code=cfg.model.trust_remote_code,
        )
        summary["model"] = str(out)
    print("codefu-train: done " + json.dumps(summary), flush=True)
    return 0
