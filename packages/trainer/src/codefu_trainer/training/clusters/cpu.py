"""cluster kind `cpu`: the CPU rehearsal (TRL's GRPO loop on a tiny model, our judge), and
with `run.evaluate_final=true` the evaluation of its final model. It runs here and uses no
GPU, whatever this machine has."""

from __future__ import annotations

import shutil
from pathlib import Path

from omegaconf import DictConfig

from codefu_data.reader import DataError
from codefu_trainer.run.config import ModelKind, TrainConfig
from codefu_trainer.run.overrides import ConfigError
from codefu_trainer.run.prepared_data import BadInputError, check_raw_source
from codefu_trainer.run.progress import Heartbeat
from codefu_trainer.run.stack import TRL
from codefu_trainer.training.clusters.base import Cluster, Launch
from codefu_trainer.training.compose import require_data, write_resolved


class Cpu(Cluster):
    name = "cpu"
    uses_gpus_here = False
    evaluates_final_model = True
    # TRL's loop, Ray for the judge, veRL's config files for the algorithm settings.
    distributions = ("verl", "ray", *TRL)

    def check(self, cfg: TrainConfig) -> None:
        super().check(cfg)
        if cfg.model.kind is not ModelKind.tiny and not Path(cfg.model.path).is_dir():
            raise ConfigError(
                f"cluster=cpu rehearses with a small model: use model=tiny, or model.path=<local "
                f"HF model dir>; {cfg.model.path!r} is neither (nothing is downloaded at run time)."
            )

    def check_inputs(self, cfg: TrainConfig) -> None:
        """The rehearsal's own settings, and the raw dataset its warm start reads."""
        from codefu_trainer.training.rehearsal.loop import check_rehearsal

        check_rehearsal(cfg.rehearsal)
        check_raw_source(cfg.data.source)

    def check_verl(self, verl: DictConfig) -> None:
        """None: TRL's loop reads the algorithm settings of veRL's config, veRL never runs."""

    def start(self, cfg: TrainConfig, launch: Launch) -> int:
        require_data(cfg)  # before veRL's config is composed
        with Heartbeat("codefu-train: composing the run"):
            run = self.compose(cfg, launch.conf_dir, launch.overrides)
        from codefu_trainer.training.rehearsal import loop as rehearsal

        assert run.verl is not None
        made_here = not run.run_dir.exists()
        try:
            write_resolved(run)
            final = rehearsal.run(run.cfg, run.verl, run.run_dir)
        except (ConfigError, BadInputError, DataError):
            if made_here:  # a run stopped by its input leaves nothing behind
                shutil.rmtree(run.run_dir, ignore_errors=True)
            raise
        if run.cfg.run.evaluate_final:
            from codefu_trainer.evaluation.run import evaluate_trained_model

            evaluate_trained_model(run.cfg, run.run_dir, final)
        return 0


CPU = Cpu()
