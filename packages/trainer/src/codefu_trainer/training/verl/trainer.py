"""veRL's V1 trainer with the judge metrics of every step (veRL 0.9.1), without a fork.

veRL's V1 trainer reduces only prompts, responses, advantages and ``rm_scores`` into its
step metrics; the reward's extra keys stay in the TransferQueue (``extra_fields`` →
``reward_extra_info`` of each sample, where the agent loop puts what our
``compute_score_async`` returned). Two public extension points bring them out:

- ``register_trainer`` (``verl.trainer.ppo.v1``): ``judge_trainer_name(mode)`` registers
  ``codefu_<mode>``, a subclass of the trainer ``trainer.v1.trainer_mode`` names whose
  ``step(metrics, timing_raw)`` (the trainer's public per-step method; it receives the
  step's metrics dict) adds the judge metrics of the step's samples and of the judge pool's
  window (``codefu_trainer.reward.verl_metrics.record_judge_metrics``). Everything after
  ``step`` (console, MLflow, any veRL logger) then has them.
- ``run_ppo(config, task_runner_class=...)``: ``judge_task_runner()`` is veRL's
  ``TaskRunnerV1`` whose ``run`` first switches ``trainer.v1.trainer_mode`` to that
  subclass (the registry is per process, and the task runner is a Ray actor); the
  subclass's ``__init__`` sets it back to veRL's mode before veRL's trainer reads it.

Under ``codefu-train --smoke`` (``phase_probe.PHASE_LOG_ENV`` set) the subclass also measures
each phase of a step (``phase_probe.PhaseProbe``): the rollout from the step's start to
``on_sample_end`` (a public hook), and veRL's ``_compute_old_log_prob``,
``_compute_ref_log_prob`` and ``_update_actor``, which it wraps (anchored in ``anchors.py``).

The subclass's ``fit`` first points MLflow at a run that can take the parameters veRL
logs (``mlflow_run_for_this_config``). What these lean on beyond veRL's public names (the
trainer-mode switch, the MLflow parameters veRL computes, Ray's actor class) is anchored in
``codefu_trainer.training.verl.anchors``. This module imports veRL: only veRL's processes load
it.
"""

from __future__ import annotations

import logging
from typing import Any

from codefu_trainer.reward.verl_metrics import (
    batch_results,
    record_judge_metrics,
    reward_config_in,
)

__all__ = [
    "PREFIX",
    "judge_task_runner",
    "judge_trainer_name",
    "mlflow_run_for_this_config",
    "step_line",
]

log = logging.getLogger(__name__)

PREFIX = "codefu_"  # registered trainer mode: codefu_<veRL's mode>


def mlflow_run_for_this_config(config: Any) -> None:
    """Point MLFLOW_RUN_ID (read by veRL's logger in this process) at a run that can take
    the parameters veRL will log for `config` (`tracking.run_taking_params`)."""
    import os

    from omegaconf import OmegaConf

    loggers = config.trainer.get("logger") or []
    run_id = os.environ.get("MLFLOW_RUN_ID")
    uri = os.environ.get("MLFLOW_TRACKING_URI")
    if "mlflow" not in list(loggers) or not run_id or not uri:
        return
    # The parameters exactly as veRL's Tracking logs them (anchors.py: "veRL's MLflow
    # parameters"); veRL has no public name for them.
    from verl.utils.tracking import _compute_mlflow_params_from_objects

    from codefu_trainer.run.tracking import run_taking_params

    params = _compute_mlflow_params_from_objects(OmegaConf.to_container(config, resolve=True))
    try:
        os.environ["MLFLOW_RUN_ID"] = run_taking_params(uri, run_id, params)
    except Exception as e:  # veRL's logger reports its own MLflow failures
        log.warning("could not compare the config with MLflow run %s: %s", run_id, e)


def _make_trainer(base: type, mode: str) -> type:
    class CodeFuJudgeTrainer(base):
        """veRL's trainer plus the judge metrics of every step (module docstring)."""

        codefu_probe: Any = None  # phase_probe.PhaseProbe under `codefu-train --smoke`

        def __init__(self, config: Any, *args: Any, **kwargs: Any) -> None:
            # The task runner found this class by its registered name (codefu_<mode>);
            # veRL's trainer, its replay buffer and a custom sampler branch on
            # trainer.v1.trainer_mode == "sync" and read trainer.v1.<mode>, so from here on
            # the config names veRL's own mode again (anchors.py: "veRL's trainer mode").
            from omegaconf import open_dict

            with open_dict(config):
                config.trainer.v1.trainer_mode = mode
            super().__init__(config, *args, **kwargs)
            from codefu_trainer.training.phase_probe import probe_from_env

            # `codefu-train --smoke` measures each phase (None otherwise: nothing runs).
            self.codefu_probe = probe_from_env()

        def fit(self, *args: Any, **kwargs: Any) -> Any:
            """veRL's fit, whose MLflow logger (`verl/utils/tracking.py`, `Tracking`) joins
            MLFLOW_RUN_ID and logs the config as parameters, or drops MLflow when a value
            differs: a resume with a changed config gets a run that takes them."""
            mlflow_run_for_this_config(self.config)
            return super().fit(*args, **kwargs)

        def step(self, metrics: dict, timing_raw: dict) -> Any:
            probe = self.codefu_probe
            if probe is not None:  # the step's rollouts start in prepare_step, inside step
                probe.begin("rollout")
            batch = super().step(metrics, timing_raw)
            self.codefu_judge_metrics(batch, metrics)
            total = getattr(self, "total_training_steps", None)
            print(step_line(int(self.global_steps), total, metrics), flush=True)
            if probe is not None:
                probe.write_step(int(self.global_steps), metrics)
            return batch

        def on_sample_end(self) -> None:
            # Every response of the step is in (and judged): the rollout's memory before
            # veRL's sync trainer puts the rollout to sleep.
            if self.codefu_probe is not None:
                self.codefu_probe.end("rollout")
            super().on_sample_end()

        def _compute_old_log_prob(self, batch: Any, metrics: dict) -> Any:
            with self._codefu_phase("old log-probs"):
                return super()._compute_old_log_prob(batch, metrics)

        def _compute_ref_log_prob(self, batch: Any, metrics: dict) -> Any:
            with self._codefu_phase("reference log-probs"):
                return super()._compute_ref_log_prob(batch, metrics)

        def _update_actor(self, batch: Any, metrics: dict) -> Any:
            with self._codefu_phase("actor update"):
                return super()._update_actor(batch, metrics)

        def _codefu_phase(self, name: str) -> Any:
            import contextlib

            probe = self.codefu_probe
            return probe.phase(name) if probe is not None else contextlib.nullcontext()

        def codefu_judge_metrics(self, batch: Any, metrics: dict) -> None:
            import transfer_queue as tq

            from codefu_trainer.reward.verl_adapter import get_service, reward_config_of

            raw = reward_config_in(self.config)
            config = reward_config_of(raw)
            try:
                data = tq.kv_batch_get(
                    keys=batch.keys,
                    partition_id=batch.partition_id,
                    select_fields=["extra_fields"],
                )
                results = batch_results(list(data["extra_fields"]), list(batch.tags))
            except Exception as e:  # metrics never stop training; a judge outage may
                log.warning("the step's reward extra info is unreadable: %s", e)
                results = []
            window: dict[str, Any] | None = None
            try:
                window = get_service(raw).take_window()
            except Exception as e:  # metrics of the samples still go out
                log.warning("the judge pool's window is unavailable this step: %s", e)
            record_judge_metrics(metrics, results, window, config, int(self.global_steps))

    CodeFuJudgeTrainer.__name__ = CodeFuJudgeTrainer.__qualname__ = f"CodeFu{base.__name__}"
    return CodeFuJudgeTrainer


def step_line(step: int, total: int | None, metrics: dict) -> str:
    """The project's line for a finished veRL step (veRL's own `step:N - …` line, with every
    metric, goes to the run's log): the step and the judge's verdicts of its samples."""
    of = f"/{total}" if total else ""
    shares = [
        f"{label} {metrics[key]:.2f}"
        for label, key in (
            ("AC", "judge/verdict/AC"),
            ("compiled", "judge/compiled"),
            ("has code", "judge/has_code"),
        )
        if key in metrics
    ]
    samples = metrics.get("judge/samples")
    judged = f" of {samples:.0f} samples" if samples else ""
    return (
        f"codefu-train: step {step}{of} judged: {', '.join(shares) or 'no judge metrics'}{judged}"
    )


def _registered(name: str) -> bool:
    from verl.trainer.ppo.v1 import get_trainer_cls

    try:
        get_trainer_cls(name)
    except ValueError:  # veRL's answer for a name nothing registered
        return False
    return True


def judge_trainer_name(mode: str) -> str:
    """Register (once per process) ``codefu_<mode>``: veRL's trainer ``mode`` with the judge
    metrics; returns that name. A name that already has the prefix is returned as is."""
    from verl.trainer.ppo.v1 import get_trainer_cls, register_trainer

    if mode.startswith(PREFIX) and _registered(mode):
        return mode
    name = PREFIX + mode
    if not _registered(name):
        register_trainer(name)(_make_trainer(get_trainer_cls(mode), mode))
    return name


def judge_task_runner() -> Any:
    """veRL's ``TaskRunnerV1`` (a Ray actor class) that trains with the judge metrics."""
    import ray
    from verl.trainer.main_ppo import TaskRunnerV1

    # The class under Ray's actor wrapper (anchors.py: "Ray's actor class").
    base: Any = TaskRunnerV1.__ray_actor_class__

    class CodeFuTaskRunner(base):
        """Selects ``codefu_<trainer.v1.trainer_mode>`` in the task runner's process."""

        def run(self, config: Any) -> Any:
            from omegaconf import open_dict

            with open_dict(config):
                config.trainer.v1.trainer_mode = judge_trainer_name(
                    str(config.trainer.v1.trainer_mode)
                )
            return super().run(config)

    return ray.remote(CodeFuTaskRunner)
