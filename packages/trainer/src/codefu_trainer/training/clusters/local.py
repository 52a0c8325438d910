"""cluster kind `local`: veRL on this machine's GPUs (inside a SageMaker job: on the job's Ray
cluster, which the launcher started)."""

from __future__ import annotations

from pathlib import Path

from omegaconf import DictConfig

from codefu_trainer.run.compose import PrerequisiteError
from codefu_trainer.run.config import TrainConfig, names_a_folder
from codefu_trainer.run.gpu import NO_GPU_MESSAGE, visible_gpu_count
from codefu_trainer.training.clusters.base import Cluster, Launch
from codefu_trainer.training.compose import require_data, write_resolved
from codefu_trainer.training.planning.preflight import gate


class Local(Cluster):
    name = "local"
    plans_gpu_memory = True
    gpu_may_be_elsewhere = True

    def check_verl(self, verl: DictConfig) -> None:
        from codefu_trainer.training.verl.config import check_attention, validate_verl_config

        validate_verl_config(verl)
        check_attention(verl, loads_here=True)  # the model loads on this machine

    def start(self, cfg: TrainConfig, launch: Launch) -> int:
        gpus = visible_gpu_count()
        if gpus == 0:
            raise PrerequisiteError(NO_GPU_MESSAGE)
        require_data(cfg)  # before veRL's config is composed
        require_model_folder(cfg)
        run = self.compose(cfg, launch.conf_dir, launch.overrides, gpus_detected=gpus)
        gate(run, self, launch.force, launch.plan_json)
        write_resolved(run)
        from codefu_trainer.training.verl import main as verl_main

        assert run.verl is not None
        return verl_main.run(run.verl, run.cfg, run.run_dir)


def require_model_folder(cfg: TrainConfig) -> None:
    """A `model.path` that names a folder is one here (a hub id or s3:// is veRL's to load)."""
    path = cfg.model.path
    if names_a_folder(path) and not Path(path).expanduser().is_dir():
        raise PrerequisiteError(
            f"model.path={path}: no such model directory here. Pass the folder of a Hugging "
            "Face model (config.json, tokenizer, weights), or a hub id such as org/name."
        )


LOCAL = Local()
