"""The veRL settings and inputs of a run of veRL's own trainer on this machine's CPU.

`EXTENSION` is what the CPU path adds to the composed veRL config (`verl.config.
ClusterExtension`, which the cpu_verl kind passes): `judge_workers` sizes the judge for this
machine, `cpu_values` are veRL config values (added after the derived ones, before the
user's), VERL_PLATFORM=cpu selects veRL's CPU platform in every Ray process;
`prepare_inputs` writes what they point at: the warm-started tiny model and the rehearsal's
problems as veRL datasets laid out like prepared data (<run dir>/data/<tier>/...), one tier,
or every tier of a curriculum (`curriculum=tiers`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from codefu_trainer.run.config import ModelKind, TrainConfig
from codefu_trainer.training.verl.config import ClusterExtension
from codefu_trainer.training.verl.cpu.hook import HOOK
from codefu_trainer.training.verl.cpu.patches import ROLLOUT_NAME

# Ray's logical CPUs: veRL's TransferQueue controller and storage unit, the agent-loop and
# reward workers, the TaskRunner and the trainer's worker each hold one; they mostly wait.
RAY_CPUS = 16
# The template and role markers the chat template adds around a prompt (byte tokens).
TEMPLATE_TOKENS = 64
# Judge processes on this machine (veRL's reward loop sends them every sample).
JUDGE_WORKERS = 2


def model_dir(run_dir: Path) -> Path:
    return run_dir / "base_model"


def data_dir(run_dir: Path) -> Path:
    """The run's problems, laid out as `nox -s prepare` lays out tiers: <dir>/<tier>/."""
    return run_dir / "data"


def cpu_values(cfg: TrainConfig, run_dir: Path) -> dict[str, Any]:
    """veRL keys for its trainer on CPU: the hf rollout, FSDP2 (grpo.yaml's) in fp32, the
    rehearsal's sizes and algorithm settings, Ray and TransferQueue sized for a small machine."""
    r = cfg.rehearsal
    data = data_dir(run_dir) / cfg.data.tier
    mini = r.prompts_per_step // 2 if r.prompts_per_step % 2 == 0 else r.prompts_per_step
    values: dict[str, Any] = {
        "data.train_files": [str(data / "train.parquet")],
        "data.val_files": [str(data / "test.parquet")],
        "data.train_batch_size": r.prompts_per_step,
        "data.max_prompt_length": r.max_prompt_tokens + TEMPLATE_TOKENS,
        "data.max_response_length": r.max_completion_tokens,
        "data.dataloader_num_workers": 0,
        "actor_rollout_ref.rollout.name": ROLLOUT_NAME,
        "actor_rollout_ref.rollout.n": r.num_generations,
        "actor_rollout_ref.rollout.temperature": r.temperature,
        "actor_rollout_ref.rollout.tensor_model_parallel_size": 1,
        "actor_rollout_ref.rollout.agent.num_workers": 1,
        "actor_rollout_ref.actor.ppo_mini_batch_size": mini,
        "actor_rollout_ref.actor.use_torch_compile": False,
        "actor_rollout_ref.ref.use_torch_compile": False,
        # fp32 on both sides: the actor's and the reference's log_probs share one
        # TransferQueue field, which refuses a second dtype.
        "+actor_rollout_ref.actor.fsdp_config.mixed_precision": {"param_dtype": "fp32"},
        "+actor_rollout_ref.ref.fsdp_config.mixed_precision": {"param_dtype": "fp32"},
        "actor_rollout_ref.model.enable_gradient_checkpointing": False,
        # Padded batches, not packed ones: with remove padding, sdpa on CPU attends over the
        # whole packed batch (~11k tokens, a tokens² mask) instead of each sequence. Padded,
        # a step's actor update, old log-probs and reference took 2.4 s, 1.0 s and 1.0 s
        # instead of 12.8 s, 5.7 s and 5.5 s here, the 20-step run 640 s instead of 1072 s
        # (docs/train.md "veRL on CPU"). The log-probs are the same to 1e-6 (test_verl_on_cpu).
        "actor_rollout_ref.model.use_remove_padding": False,
        "trainer.total_training_steps": r.steps,
        "trainer.total_epochs": r.steps,  # a few problems: an epoch may be one step
        "trainer.save_freq": r.save_steps,
        "trainer.test_freq": -1,
        "trainer.val_before_train": False,
        "trainer.n_gpus_per_node": 1,
        "ray_kwargs.ray_init.num_cpus": RAY_CPUS,
        # A cluster of the run's own (a bare ray.init() joins any on this machine).
        "++ray_kwargs.ray_init.address": "local",
        "++ray_kwargs.ray_init.include_dashboard": False,
        "++ray_kwargs.ray_init.runtime_env.worker_process_setup_hook": HOOK,
        "transfer_queue.backend.SimpleStorage.num_data_storage_units": 1,
        "reward.num_workers": 1,
    }
    if r.learning_rate is not None:
        values["actor_rollout_ref.actor.optim.lr"] = r.learning_rate
    if cfg.model.kind is ModelKind.tiny:
        values["actor_rollout_ref.model.path"] = str(model_dir(run_dir))
    return values


def judge_workers(cfg: TrainConfig) -> None:
    """Size the judge pool for this machine (it would count Ray's logical CPUs)."""
    if cfg.reward.worker.num_workers is None:
        cfg.reward.worker.num_workers = JUDGE_WORKERS


EXTENSION = ClusterExtension(
    prepare=judge_workers,
    values=cpu_values,
    env_vars={"VERL_PLATFORM": "cpu"},
)


def prepare_inputs(cfg: TrainConfig, run_dir: Path, tiers: Sequence[str] = ()) -> Path:
    """The rehearsal's problems (prompts cut to rehearsal.max_prompt_tokens) as
    <run dir>/data/<tier>/{train,test}.parquet and problems.json, and the warm-started tiny
    model in <run dir>/base_model (model.kind=tiny). Returns the data directory.

    Without `tiers`: data.tier's first rehearsal.problems problems with short accepted and
    rejected programs, all memorised by the warm start. With a curriculum's `tiers`: per tier
    its first rehearsal.problems problems, those with short programs first (memorised), the
    rest filled with the tier's other problems, which the tiny model never saw (the
    curriculum should retire them as unsolvable). A resumed run keeps what it has.
    """
    from codefu_trainer.training.rehearsal.base_model import cached_base_model

    r = cfg.rehearsal
    out = data_dir(run_dir)
    picked: dict[str, list[dict[str, Any]]] = {}
    examples: list[tuple[Any, str]] = []
    for tier in tiers or (cfg.data.tier,):
        rows, memorised = _tier_problems(cfg, tier, fill=bool(tiers))
        picked[tier] = rows
        examples += memorised
    if cfg.model.kind is ModelKind.tiny:
        cached_base_model(cfg.model.tiny, r, examples, model_dir(run_dir))
    for tier, rows in picked.items():
        _write_tier(out / tier, rows)
    return out


def _tier_problems(
    cfg: TrainConfig, tier: str, *, fill: bool
) -> tuple[list[dict[str, Any]], list[tuple[Any, str]]]:
    """A tier's chosen veRL rows (prompts cut) and the warm-start examples of the memorised."""
    import pyarrow.parquet as pq

    from codefu_trainer.run.config import data_files
    from codefu_trainer.run.prompt_rows import load_prompts
    from codefu_trainer.training.rehearsal.base_model import select_problems

    r = cfg.rehearsal
    train_file = data_files(cfg)[0].parent.parent / tier / "train.parquet"
    if not train_file.is_file():
        raise FileNotFoundError(
            f"cluster=cpu_verl: no prepared tier {tier!r} ({train_file}); run `nox -s prepare` "
            "with the same data.out_dir (it writes every tier)."
        )
    rows = load_prompts(train_file, max_prompt_chars=r.max_prompt_tokens)
    chosen, examples = select_problems(
        rows, cfg.data.source, r, require_all=not fill, language=cfg.data.language
    )
    names = [str(row["name"]) for row in chosen]
    if fill:
        names += [str(row["name"]) for row in rows if str(row["name"]) not in names]
        names = names[: r.problems]
    prompts = {str(row["name"]): row["prompt"] for row in rows}
    table = pq.read_table(train_file).to_pylist()
    by_name = {str((row.get("extra_info") or {}).get("name", "")): row for row in table}
    return [{**by_name[name], "prompt": prompts[name]} for name in names], examples


def _write_tier(out: Path, rows: Sequence[dict[str, Any]]) -> None:
    """<out>/{train,test}.parquet (the same rows: the rehearsal has no held-out problems) and
    problems.json (their names, in order); kept when already there."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if (out / "train.parquet").is_file() and (out / "test.parquet").is_file():
        return
    out.mkdir(parents=True, exist_ok=True)
    for split in ("train", "test"):
        pq.write_table(pa.Table.from_pylist(list(rows)), out / f"{split}.parquet")
    names = [str((row.get("extra_info") or {}).get("name", "")) for row in rows]
    (out / "problems.json").write_text(json.dumps(names, indent=1))
