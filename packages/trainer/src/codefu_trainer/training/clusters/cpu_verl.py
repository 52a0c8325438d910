"""cluster kind `cpu_verl`: veRL's own trainer on this machine's CPU (docs/train.md, "veRL on
CPU"), with the CPU path's veRL settings (`verl.cpu.config.EXTENSION`) composed in."""

from __future__ import annotations

from codefu_trainer.run.config import TrainConfig
from codefu_trainer.training.clusters.base import Cluster, Launch
from codefu_trainer.training.compose import require_data, write_resolved
from codefu_trainer.training.verl.cpu.config import EXTENSION


class CpuVerl(Cluster):
    name = "cpu_verl"
    extension = EXTENSION

    def start(self, cfg: TrainConfig, launch: Launch) -> int:
        from codefu_trainer.training.verl.cpu import run as cpu

        require_data(cfg)  # before veRL's config is composed
        composed = self.compose(cfg, launch.conf_dir, launch.overrides)
        write_resolved(composed)
        assert composed.verl is not None
        return cpu.run(composed.verl, composed.cfg, composed.run_dir)


CPU_VERL = CpuVerl()
