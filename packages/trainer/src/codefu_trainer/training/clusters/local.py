"""cluster kind `local`: veRL on this machine's GPUs (inside a SageMaker job: on the job's Ray
cluster, which the launcher started)."""

from __future__ import annotations

from omegaconf import DictConfig

from codefu_trainer.run.compose import PrerequisiteError
from codefu_trainer.run.config import ClusterKind, TrainConfig
from codefu_trainer.run.gpu import NO_GPU_MESSAGE, visible_gpu_count
from codefu_trainer.training.clusters.base import Cluster, Launch
from codefu_trainer.training.compose import require_data, write_resolved
from codefu_trainer.training.planning.preflight import gate


class Local(Cluster):
    kind = ClusterKind.local
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
        run = self.compose(cfg, launch.conf_dir, launch.overrides, gpus_detected=gpus)
        require_data(run.cfg)
        gate(run, self, launch.force, launch.plan_json)
        write_resolved(run)
        from codefu_trainer.training.verl import main as verl_main

        assert run.verl is not None
        return verl_main.run(run.verl, run.cfg, run.run_dir)


LOCAL = Local()
