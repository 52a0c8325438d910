"""The CPU rehearsal (`cluster=cpu`): the GRPO loop end to end on a CPU-only machine.

prompts of a few training problems from the prepared dataset → responses sampled from a
tiny model warm-started on their accepted, rejected and broken programs (`base_model`;
byte-level tokenizer) → our Ray-dispatched judge (`RewardService`, the same code veRL's
reward calls) → group-relative advantages → PPO-clip policy update with a KL loss to the
reference → a checkpoint per step → metrics under veRL's names (console table,
metrics.jsonl, MLflow).

The single-machine loop is TRL's `GRPOTrainer`. One rehearsal step is one veRL step: one
generation batch (`prompts_per_step` x `num_generations`) followed by `MINI_BATCHES` PPO
mini-batch updates (veRL's ppo_mini_batch_size < train_batch_size), so the second update
is off-policy and `actor/ppo_kl` and `actor/pg_clipfrac` measure something.
Algorithm settings (lr, KL coefficient, clip ratio, entropy coefficient, group-std
normalisation) are read from the composed veRL config, so both paths share them.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from codefu_trainer.reward.step_metrics import failure_alert, step_metrics
from codefu_trainer.run import console
from codefu_trainer.run.config import (
    ModelKind,
    RehearsalConfig,
    TrainConfig,
    checkpoint_dir,
    final_model_dir,
    mlflow_tracking_uri,
)
from codefu_trainer.run.local_ray import start_ray
from codefu_trainer.run.overrides import ConfigError
from codefu_trainer.run.progress import Heartbeat
from codefu_trainer.run.prompt_rows import load_prompts
from codefu_trainer.run.tracking import Tracker
from codefu_trainer.training.rehearsal.base_model import select_problems

MINI_BATCHES = 2  # PPO updates per generation batch
# A GRPO step prints its row when it ends; one still running after this many seconds prints
# a progress line as well (under 10 s of silence; a step that ends sooner prints only its row).
STEP_BEAT_S = 9.0
# Dynamic sampling (algorithm.filter_groups): generation batches tried per step before the
# step trains on what it has (veRL: max_num_gen_batches; 0 there means unbounded).
MAX_GENERATION_BATCHES = 4
ALERT_TAG = "codefu.judge_failure_alert"  # MLflow tag of a step with too many judge failures


def check_rehearsal(r: RehearsalConfig) -> None:
    """The rehearsal's numbers are in range: a ConfigError naming the key, before anything
    starts (`codefu-train` checks this before it composes veRL's config)."""
    minimums = {
        "steps": 1,
        "problems": 0,
        "problems_without_programs": 0,
        "prompts_per_step": 1,
        "num_generations": 2,  # a group of one has no relative advantage
        "max_prompt_tokens": 1,
        "max_completion_tokens": 1,
        "max_program_bytes": 1,
        "warmup_steps": 0,
        "save_steps": 1,
    }
    for key, least in minimums.items():
        if getattr(r, key) < least:
            raise ConfigError(f"rehearsal.{key}={getattr(r, key)}: use a number >= {least}.")
    if r.problems + r.problems_without_programs < 1:
        raise ConfigError(
            "rehearsal.problems and rehearsal.problems_without_programs are both 0: train on "
            "at least one problem."
        )
    for key in ("warmup_lr", "learning_rate", "temperature"):
        value = getattr(r, key)
        if value is not None and not value > 0:
            raise ConfigError(f"rehearsal.{key}={value}: use a number > 0.")
    if r.reward_sign not in (1, -1):
        raise ConfigError(f"rehearsal.reward_sign={r.reward_sign}: use 1 or -1.")
    if (r.prompts_per_step * r.num_generations) % MINI_BATCHES:
        raise ConfigError(
            f"rehearsal.prompts_per_step x rehearsal.num_generations = "
            f"{r.prompts_per_step * r.num_generations} must be a multiple of {MINI_BATCHES}: one "
            "generation batch is split into that many PPO mini-batches."
        )


def warm_start_line(
    rows: Sequence[Mapping[str, Any]],
    examples: Sequence[tuple[Any, str]],
    r: RehearsalConfig,
    kind: ModelKind,
    language: str,
) -> str:
    """What the warm start teaches: the problems whose programs it memorises, those it
    teaches nothing (no program in `language`), or that it is skipped."""
    names = [str(row["name"]) for row in rows]
    taught, untaught = names[: r.problems], names[r.problems :]
    if kind is not ModelKind.tiny:
        return f"codefu-train: no warm start (model.kind={kind.value}): model.path starts as it is"
    if not taught:
        return (
            "codefu-train: warm start skipped: no rehearsal problem has programs in "
            f"{language} (rehearsal.problems=0); the tiny model starts from random weights"
        )
    line = (
        f"codefu-train: the warm start teaches {len(examples)} programs in {language} of "
        + ", ".join(taught)
    )
    if untaught:
        line += (
            f"; {', '.join(untaught)} have none (rehearsal.problems_without_programs): "
            "trained, not taught"
        )
    return line


def latest_checkpoint(ckpt_dir: Path) -> Path | None:
    """The newest complete `checkpoint-N` directory (it has trainer_state.json)."""
    best: tuple[int, Path] | None = None
    for p in ckpt_dir.glob("checkpoint-*"):
        suffix = p.name.removeprefix("checkpoint-")
        complete = suffix.isdigit() and (p / "trainer_state.json").is_file()
        if complete and (best is None or int(suffix) > best[0]):
            best = (int(suffix), p)
    return best[1] if best else None


class JudgeReward:
    """A TRL reward function backed by RewardService; keeps each batch's results for metrics.

    The update gets `sign` x the judge's score (-1 is the rehearsal's control run); the
    results kept for metrics are the judge's own.
    """

    __name__ = "codefu_judge"

    def __init__(self, service: Any, sign: int = 1) -> None:
        self.service = service
        self.sign = sign
        self.last: list[dict[str, Any]] = []
        self.last_seconds = 0.0

    def __call__(
        self, prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any
    ) -> list[float]:
        texts = [c[-1]["content"] if isinstance(c, list) else str(c) for c in completions]
        truths = [json.loads(g) for g in kwargs["ground_truth"]]
        start = time.perf_counter()
        self.last = self.service.score(texts, truths)
        self.last_seconds = time.perf_counter() - start
        return [self.sign * float(r["score"]) for r in self.last]


def score_metrics(
    results: Sequence[Mapping[str, Any]], window: Mapping[str, Any] | None = None
) -> dict[str, float]:
    """veRL's critic/score/* plus the judge metrics (`reward.step_metrics`, the names a veRL
    run logs) from reward dicts and the judge pool's window of the step."""
    if not results:
        return {}
    scores = [float(r["score"]) for r in results]
    n = len(results)
    out = {
        "critic/score/mean": sum(scores) / n,
        "critic/score/max": max(scores),
        "critic/score/min": min(scores),
        "critic/rewards/mean": sum(scores) / n,
    }
    out.update(step_metrics(results, window))
    return out


# TRL metric → veRL metric (means over the step's mini-batches).
TRL_TO_VERL = {
    "kl": "actor/kl_loss",
    "entropy": "actor/entropy",
    "clip_ratio/region_mean": "actor/pg_clipfrac",
    "policy_loss": "actor/pg_loss",
    "grad_norm": "actor/grad_norm",
    "learning_rate": "actor/lr",
    "completions/mean_length": "response_length/mean",
    "completions/max_length": "response_length/max",
    "completions/min_length": "response_length/min",
    "completions/clipped_ratio": "response_length/clip_ratio",
}


def zero_variance_groups(scores: Sequence[float], group_size: int) -> list[bool]:
    """Per group of `group_size` consecutive samples: do all its scores agree?"""
    return [len(set(scores[i : i + group_size])) == 1 for i in range(0, len(scores), group_size)]


def select_rows(
    outputs: Sequence[Mapping[str, Any]], rows: Sequence[tuple[int, int]], pad_id: int
) -> dict[str, Any]:
    """TRL generation outputs → one output of `rows` ((output, row) pairs), in that order.

    Completion-shaped tensors are right-padded to the widest (ids with `pad_id`, the rest
    with 0); prompt tensors are left-padded the same way; `num_items_in_batch` becomes the
    selected rows' completion tokens.
    """
    import torch
    import torch.nn.functional as F

    for i, r in rows:
        if not 0 <= r < int(outputs[i]["completion_ids"].shape[0]):
            raise IndexError(f"row {r} of generation batch {i} does not exist")
    first = outputs[0]
    width = max(int(o["completion_ids"].shape[1]) for o in outputs)
    p_width = max(int(o["prompt_ids"].shape[1]) for o in outputs)
    out: dict[str, Any] = {}
    for key, value in first.items():
        if key == "num_items_in_batch" or not isinstance(value, torch.Tensor):
            continue
        parts = []
        for i, r in rows:
            t = outputs[i][key][r : r + 1]
            if t.dim() == 2 and key.startswith("prompt"):
                fill = pad_id if key == "prompt_ids" else 0
                t = F.pad(t, (p_width - t.shape[1], 0), value=fill)
            elif t.dim() == 2:
                fill = pad_id if key == "completion_ids" else 0
                t = F.pad(t, (0, width - t.shape[1]), value=fill)
            parts.append(t)
        out[key] = torch.cat(parts)
    out["num_items_in_batch"] = out["completion_mask"].sum()
    return out


def _make_trainer_class() -> type:
    from trl import GRPOTrainer

    class RehearsalGRPOTrainer(GRPOTrainer):
        """GRPOTrainer that also measures veRL's actor/ppo_kl (old vs current policy), the
        share of zero-variance groups, and drops them with dynamic sampling
        (`filter_groups`): the step's prompts are sampled again, at most
        MAX_GENERATION_BATCHES times, and their groups whose judge scores disagree replace
        the ones that agree (a step that finds too few keeps some that agree).

        It overrides three private GRPOTrainer methods, TRL's only hooks for these; each is
        anchored to TRL's lines in `codefu_trainer.training.verl.anchors.OVERRIDES`."""

        _capture = False
        _captured: Any = None
        ppo_kls: list[float]
        judge: JudgeReward | None = None
        filter_groups = False
        sampling_stats: dict[str, float] | None = None

        def _generate_and_score_completions(self, inputs: Any) -> Any:
            out = super()._generate_and_score_completions(inputs)
            if self.judge is None:
                return out
            g = int(self.num_generations)
            first = list(self.judge.last)
            zero = zero_variance_groups([float(r["score"]) for r in first], g)
            stats = {
                "sampling/zero_variance_groups": sum(zero) / len(zero),
                "sampling/generation_batches": 1.0,
            }
            # Share of zero-variance groups in the batch the update trains on.
            stats["sampling/zero_variance_trained"] = stats["sampling/zero_variance_groups"]
            if self.filter_groups and any(zero):
                outputs, kept = [out], [(0, k) for k, z in enumerate(zero) if not z]
                dropped = [(0, k) for k, z in enumerate(zero) if z]
                while len(kept) < len(zero) and len(outputs) < MAX_GENERATION_BATCHES:
                    outputs.append(super()._generate_and_score_completions(inputs))
                    scores = [float(r["score"]) for r in self.judge.last]
                    for k, z in enumerate(zero_variance_groups(scores, g)):
                        (dropped if z else kept).append((len(outputs) - 1, k))
                groups = (kept + dropped)[: len(zero)]
                rows = [(i, k * g + j) for i, k in groups for j in range(g)]
                pad = self.processing_class.pad_token_id
                out = select_rows(outputs, rows, 0 if pad is None else int(pad))
                stats["sampling/generation_batches"] = float(len(outputs))
                stats["sampling/zero_variance_trained"] = sum(
                    1 for group in groups if group in dropped
                ) / len(zero)
                # The step's metrics describe the policy's first sample of its prompts.
                self.judge.last = first
            self.sampling_stats = stats
            return out

        def _get_per_token_logps_and_entropies(self, *args: Any, **kwargs: Any) -> Any:
            out = super()._get_per_token_logps_and_entropies(*args, **kwargs)
            if self._capture and self._captured is None:
                self._captured = out[0]
            return out

        def _compute_loss(self, model: Any, inputs: Any) -> Any:
            self._capture, self._captured = True, None
            try:
                loss = super()._compute_loss(model, inputs)
            finally:
                self._capture = False
            old = inputs.get("old_per_token_logps")
            if self._captured is not None:
                new = self._captured.detach()
                mask = inputs["completion_mask"].float()
                old_t = new if old is None else old
                kl = ((old_t - new) * mask).sum() / mask.sum().clamp(min=1.0)
                if not hasattr(self, "ppo_kls"):
                    self.ppo_kls = []
                self.ppo_kls.append(float(kl))
            return loss

    return RehearsalGRPOTrainer


def _make_callback(reward: JudgeReward, tracker: Tracker, trainer_ref: list[Any]) -> Any:
    from transformers import TrainerCallback

    class VerlMetrics(TrainerCallback):
        """Groups TRL's per-update logs into veRL steps and writes them under veRL names."""

        def __init__(self) -> None:
            self.pending: list[dict[str, float]] = []
            self.step_start = time.perf_counter()
            # Called with the step number once its row is printed (the progress heartbeat).
            self.after_step: Callable[[int], object] | None = None

        def on_log(
            self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any
        ) -> None:
            if logs and "train_runtime" not in logs:
                self.pending.append({k: v for k, v in logs.items() if isinstance(v, int | float)})

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if state.global_step % MINI_BATCHES:
                return
            step = state.global_step // MINI_BATCHES
            metrics: dict[str, float] = {}
            for trl_key, verl_key in TRL_TO_VERL.items():
                values = [p[trl_key] for p in self.pending if trl_key in p]
                if values:
                    metrics[verl_key] = sum(values) / len(values)
            trainer = trainer_ref[0]
            kls = getattr(trainer, "ppo_kls", [])
            if kls:
                metrics["actor/ppo_kl"] = sum(kls) / len(kls)
                trainer.ppo_kls = []
            # The judge pool's window covers every judging of the step (all its batches).
            metrics.update(score_metrics(reward.last, reward.service.take_window()))
            metrics.update(getattr(trainer, "sampling_stats", None) or {})
            alert = failure_alert(metrics, reward.service.config.failure_alert.max_rate)
            if alert is not None:
                print(f"codefu-train: WARNING step {step}: {alert}", flush=True)
                if tracker.mlflow_run_id is not None:
                    import mlflow

                    mlflow.set_tag(ALERT_TAG, f"step {step}: {alert}")
                if reward.service.config.failure_alert.stop:
                    raise RuntimeError(f"step {step}: {alert} (reward.failure_alert.stop=true)")
            metrics["timing_s/reward"] = reward.last_seconds
            now = time.perf_counter()
            metrics["timing_s/step"] = now - self.step_start
            self.step_start = now
            tracker.log(step, metrics)
            self.pending = []
            if self.after_step is not None:
                self.after_step(step)

    return VerlMetrics()


def _algorithm_settings(verl: DictConfig) -> dict[str, Any]:
    actor = verl.actor_rollout_ref.actor
    return {
        "learning_rate": float(actor.optim.lr),
        "beta": float(actor.kl_loss_coef) if actor.use_kl_loss else 0.0,
        # veRL clips the ratio to [1 - clip_ratio_low, 1 + clip_ratio_high]; TRL the same.
        "epsilon": float(actor.clip_ratio_low),
        "epsilon_high": float(actor.clip_ratio_high),
        "entropy_coef": float(actor.entropy_coeff),
        "scale_rewards": "group" if verl.algorithm.norm_adv_by_std_in_grpo else "none",
    }


def _base_model(cfg: TrainConfig, examples: Sequence[tuple[Any, str]], run_dir: Path) -> Path:
    """The policy's starting point: the warm-started tiny model or `model.path`."""
    if cfg.model.kind is not ModelKind.tiny:
        return Path(cfg.model.path)
    from codefu_trainer.training.rehearsal.base_model import cached_base_model

    return cached_base_model(cfg.model.tiny, cfg.rehearsal, examples, run_dir / "base_model")


def _grpo_args(cfg: TrainConfig, algo: Mapping[str, Any], ckpt_dir: Path) -> Any:
    """TRL's GRPOConfig for one veRL step = one generation batch + MINI_BATCHES updates."""
    from trl import GRPOConfig

    r = cfg.rehearsal
    generation_batch = r.prompts_per_step * r.num_generations
    if generation_batch % MINI_BATCHES:
        raise ValueError(
            f"rehearsal.prompts_per_step x rehearsal.num_generations = {generation_batch} must be "
            f"a multiple of {MINI_BATCHES}: one generation batch is split into that many PPO "
            "mini-batches."
        )
    return GRPOConfig(
        output_dir=str(ckpt_dir),
        max_steps=r.steps * MINI_BATCHES,
        per_device_train_batch_size=generation_batch // MINI_BATCHES,
        gradient_accumulation_steps=1,
        steps_per_generation=MINI_BATCHES,
        num_generations=r.num_generations,
        max_completion_length=r.max_completion_tokens,
        temperature=r.temperature,
        loss_type="dapo",  # token-mean over the batch, veRL's loss_agg_mode=token-mean
        use_cpu=True,
        bf16=False,
        fp16=False,
        logging_steps=1,
        save_strategy="steps",
        save_steps=r.save_steps * MINI_BATCHES,
        report_to="none",
        seed=r.seed,
        data_seed=r.seed,
        dataloader_num_workers=0,
        disable_tqdm=True,
        **algo,
    )


def run(cfg: TrainConfig, verl: DictConfig, run_dir: Path) -> Path:
    """Run the rehearsal; returns the final model directory."""
    console.log_to(run_dir)  # library output to <run dir>/codefu-train.log
    # MLflow's INFO lines (database setup, new experiment) would land in the step table.
    os.environ.setdefault("MLFLOW_LOGGING_LEVEL", "WARNING")
    with Heartbeat("codefu-train: loading the training stack (Ray, transformers, TRL)"):
        import ray
        import trl  # noqa: F401  (the GRPO trainer's import, the slowest)
        from datasets import Dataset
        from transformers import AutoTokenizer, PrinterCallback
        from transformers.utils import logging as hf_logging

        from codefu_trainer.reward.service import RewardService
        from codefu_trainer.run.config import data_files

    hf_logging.disable_progress_bar()
    r = cfg.rehearsal
    check_rehearsal(r)
    run_dir.mkdir(parents=True, exist_ok=True)
    train_file, _ = data_files(cfg)
    rows, examples = select_problems(
        load_prompts(train_file, max_prompt_chars=r.max_prompt_tokens),
        cfg.data.source,
        r,
        language=cfg.data.language,
    )
    print(
        "codefu-train: rehearsal problems: " + ", ".join(str(row["name"]) for row in rows),
        flush=True,
    )
    print(warm_start_line(rows, examples, r, cfg.model.kind, cfg.data.language), flush=True)
    model_path = _base_model(cfg, examples, run_dir)
    tokenizer = AutoTokenizer.from_pretrained(str(model_path))
    algo = _algorithm_settings(verl)
    if r.learning_rate is not None:  # the tiny model's own learning rate
        algo["learning_rate"] = r.learning_rate
    ckpt_dir = checkpoint_dir(run_dir)
    resume = latest_checkpoint(ckpt_dir) if r.resume else None
    args = _grpo_args(cfg, algo, ckpt_dir)
    with Heartbeat("codefu-train: starting Ray"):
        started_ray = start_ray()
    service = RewardService(cfg.reward)
    reward = JudgeReward(service, r.reward_sign)
    params = {
        "rehearsal": OmegaConf.to_container(OmegaConf.structured(r)),
        "algorithm": algo,
        "model": str(model_path),
        "data": str(train_file),
    }
    with Heartbeat("codefu-train: opening the run's metrics (MLflow)"):
        tracker = Tracker(
            run_dir,
            mlflow_tracking_uri(cfg.run.tracking, run_dir) if cfg.run.tracking.mlflow else None,
            cfg.run.tracking.experiment,
            run_dir.name,
            params=params,
        )
    trainer_ref: list[Any] = []
    callback = _make_callback(reward, tracker, trainer_ref)
    try:
        with Heartbeat("codefu-train: loading the model into the GRPO trainer"):
            trainer = _make_trainer_class()(
                model=str(model_path),
                reward_funcs=[reward],
                args=args,
                train_dataset=Dataset.from_list(rows),
                processing_class=tokenizer,
                callbacks=[callback],
            )
        trainer_ref.append(trainer)
        trainer.judge = reward
        trainer.filter_groups = bool(OmegaConf.select(verl, "algorithm.filter_groups.enable"))
        trainer.remove_callback(PrinterCallback)  # the per-step table replaces raw log dicts
        if resume is not None:
            print(f"codefu-train: resuming from {resume}", flush=True)
        step_label = f"codefu-train: GRPO step {{}}/{r.steps} (sampling, judging, update)"
        with Heartbeat(step_label.format(1), every_s=STEP_BEAT_S) as beat:
            callback.after_step = lambda step: beat.mark(step_label.format(step + 1))
            trainer.train(resume_from_checkpoint=str(resume) if resume else None)
        out = final_model_dir(run_dir)
        with Heartbeat("codefu-train: saving the final model"):
            trainer.save_model(str(out))
            tokenizer.save_pretrained(str(out))
    finally:
        tracker.close()
        service.close()
        if started_ray:
            ray.shutdown()
    from codefu_trainer.training.report.plots import make_plots

    with Heartbeat("codefu-train: drawing the plots"):
        plots = make_plots(run_dir)
    print(
        f"codefu-train: rehearsal done. Run dir {run_dir}\n"
        f"  checkpoints: {ckpt_dir}\n  final model: {out}\n"
        f"  metrics: {run_dir / 'metrics.jsonl'} (MLflow run {tracker.mlflow_run_id}, "
        f"store {mlflow_tracking_uri(cfg.run.tracking, run_dir)})\n"
        f"  plots: {plots[0].parent} (redraw: nox -s report -- {run_dir})",
        flush=True,
    )
    return out
