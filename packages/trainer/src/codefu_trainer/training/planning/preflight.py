"""Checks a GPU run must pass before anything is started or submitted.

`preflight(run, target)` reads the composed configs, the prepared data's row counts (parquet
footers) and the model's shape, then makes the GPU memory plan (planning/memory.py) and checks
the data, lengths and disk against the configuration; where the run goes (its GPU and its
disk) is the `Target`, its cluster kind (`training/clusters/`). A run that cannot work is
refused with each failing check's value, limit and fix (`gate`); `codefu-train --force`
starts it anyway.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from omegaconf import DictConfig

from codefu_trainer.run.config import TrainConfig, data_files
from codefu_trainer.run.overrides import ConfigError
from codefu_trainer.training.composed_run import ComposedRun
from codefu_trainer.training.planning.inputs import Gpu, plan_inputs
from codefu_trainer.training.planning.inputs import select as _select
from codefu_trainer.training.planning.memory import (
    PLANNED_STRATEGY,
    MemoryPlan,
    make_plan,
    plan_json,
    plan_table,
)
from codefu_trainer.training.planning.model_shape import ModelShape, ShapeError, resolve_shape

# Bytes per parameter of one veRL FSDP checkpoint step (save_contents model + optimizer):
# fp32 params and two fp32 Adam moments.
CHECKPOINT_BYTES_PER_PARAM = {"model": 4, "optimizer": 8}
WEIGHT_FILES = ("*.safetensors", "*.bin", "*.pt")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "vocab.json")


@dataclass(frozen=True)
class Check:
    """One preflight check: what was compared, whether it passed, and the fix when not."""

    name: str
    ok: bool
    detail: str
    fix: str = ""


@dataclass(frozen=True)
class Preflight:
    plan: MemoryPlan | None
    checks: tuple[Check, ...]

    @property
    def refused(self) -> bool:
        return any(not c.ok for c in self.checks)

    def to_json(self) -> dict[str, Any]:
        return {
            "plan": plan_json(self.plan) if self.plan else None,
            "checks": [c.__dict__ for c in self.checks],
            "refused": self.refused,
        }


def strategy_check(verl: DictConfig) -> Check:
    """FSDP2 for the actor, the reference (when the run has one) and a critic (when a recipe
    adds one): the memory plan, checkpoints, manifests, resume and export are FSDP2's."""
    roles = ["actor_rollout_ref.actor"]
    if bool(_select(verl, "actor_rollout_ref.actor.use_kl_loss")) or bool(
        _select(verl, "algorithm.use_kl_in_reward")
    ):
        roles.append("actor_rollout_ref.ref")
    critic = _select(verl, "critic.enable")
    if critic or (critic is None and _select(verl, "algorithm.adv_estimator") == "gae"):
        roles.append("critic")
    values = {f"{role}.strategy": str(_select(verl, f"{role}.strategy")) for role in roles}
    other = {key: value for key, value in values.items() if value != PLANNED_STRATEGY}
    return Check(
        "fsdp: strategy",
        not other,
        ", ".join(f"{key}={value}" for key, value in (other or values).items())
        + (
            f": the memory plan, checkpoints, manifests, resume and export are "
            f"{PLANNED_STRATEGY}'s only (docs/fsdp.md)"
            if other
            else ""
        ),
        " ".join(f"{key}={PLANNED_STRATEGY}" for key in other) + " (or drop the override)",
    )


def memory_checks(plan: MemoryPlan) -> list[Check]:
    checks = []
    for phase in plan.phases:
        detail = (
            f"{phase.total_gib:.1f} GiB per GPU of {phase.usable_gib:.1f} usable "
            f"({', '.join(f'{k} {v:.1f}' for k, v in phase.parts.items())})"
        )
        fix = plan.fixes.get(phase.name)
        fix_text = (
            f"{fix.override}  (then {fix.total_gib:.1f} GiB)"
            if fix
            else "no single override found: use more GPUs (trainer.nnodes) or a smaller model"
        )
        checks.append(
            Check(f"memory: {phase.name}", phase.fits, detail, "" if phase.fits else fix_text)
        )
    kv = plan.kv_cache
    checks.append(
        Check(
            "memory: vLLM KV cache",
            kv["full_sequences"] >= 1,
            f"vLLM's KV cache holds {kv['kv_tokens']:,.0f} tokens per tensor-parallel rank; one "
            f"sequence needs {kv['max_model_len']:,.0f}",
            "raise actor_rollout_ref.rollout.gpu_memory_utilization or "
            "actor_rollout_ref.rollout.tensor_model_parallel_size",
        )
    )
    return checks


def _rows(path: Path) -> int | str:
    """A parquet file's row count from its footer, or why it cannot be read."""
    import pyarrow.parquet as pq

    try:
        return int(pq.read_metadata(path).num_rows)
    except (OSError, ValueError) as exc:
        return f"{path} cannot be read as parquet ({exc})"


def data_checks(cfg: TrainConfig, verl: DictConfig) -> list[Check]:
    """Rows against batch sizes: veRL divides by len(train rows) // train_batch_size."""
    train, test = data_files(cfg)
    if str(train).startswith("s3:"):
        return [Check("data rows", True, f"{train.parent}: on S3, row counts not checked here")]
    batch = int(verl.data.train_batch_size)
    mini = int(_select(verl, "actor_rollout_ref.actor.ppo_mini_batch_size", batch))
    checks = []
    rows = _rows(train) if train.is_file() else f"{train} is missing"
    prepare = (
        "prepare the full set (`nox -s prepare -- data.source=<CodeContests parquet shards "
        "dir or hub id>`)"
    )
    if isinstance(rows, str):
        checks.append(Check("data: training rows", False, rows, f"{prepare}, then check again"))
    else:
        shrink = max(1, min(batch, rows))
        checks.append(
            Check(
                "data: training rows",
                rows >= batch,
                f"{rows} training rows in {train}, data.train_batch_size={batch} "
                f"({rows // batch} steps per epoch)",
                f"{prepare}, or shrink the batch: verl.data.train_batch_size={shrink} "
                f"actor_rollout_ref.actor.ppo_mini_batch_size={min(mini, shrink)}",
            )
        )
    validates = int(_select(verl, "trainer.test_freq", -1) or -1) > 0 or bool(
        _select(verl, "trainer.val_before_train", False)
    )
    if validates:
        val = _rows(test) if test.is_file() else f"{test} is missing"
        checks.append(
            Check(
                "data: validation rows",
                isinstance(val, int) and val >= 1,
                f"{val} validation rows in {test}" if isinstance(val, int) else val,
                f"{prepare}, or validate never: trainer.test_freq=-1",
            )
        )
    return checks


def length_checks(verl: DictConfig, shape: ModelShape | None) -> list[Check]:
    """Sequence length against the token budgets, vLLM's max_model_len and the model."""
    prompt, response = int(verl.data.max_prompt_length), int(verl.data.max_response_length)
    full = prompt + response
    sp = int(_select(verl, "actor_rollout_ref.actor.ulysses_sequence_parallel_size", 1) or 1)
    checks = []
    arf = "actor_rollout_ref"
    budgets = (
        (f"{arf}.actor.use_dynamic_bsz", f"{arf}.actor.ppo_max_token_len_per_gpu"),
        (f"{arf}.ref.log_prob_use_dynamic_bsz", f"{arf}.ref.log_prob_max_token_len_per_gpu"),
        (
            f"{arf}.rollout.log_prob_use_dynamic_bsz",
            f"{arf}.rollout.log_prob_max_token_len_per_gpu",
        ),
    )
    for dynamic, key in budgets:
        if not _select(verl, dynamic, False):
            continue
        tokens = int(_select(verl, key))
        need = -(-full // sp)
        checks.append(
            Check(
                f"length: {key.rsplit('.', 2)[-2]} token budget",
                tokens * sp >= full,
                f"{key}={tokens} x sequence parallel {sp} vs prompt {prompt} + response "
                f"{response} = {full} tokens (a micro-batch must hold one whole sequence)",
                f"{key}={need}",
            )
        )
    max_model_len = _select(verl, "actor_rollout_ref.rollout.max_model_len")
    if max_model_len is not None:
        checks.append(
            Check(
                "length: vLLM max_model_len",
                int(max_model_len) >= full,
                f"actor_rollout_ref.rollout.max_model_len={max_model_len} vs {full} tokens",
                f"actor_rollout_ref.rollout.max_model_len={full} (or null: veRL sets it)",
            )
        )
    if shape is not None:
        longest = int(max_model_len or full)
        checks.append(
            Check(
                "length: model positions",
                shape.max_position_embeddings >= longest,
                f"the model's max_position_embeddings={shape.max_position_embeddings} vs "
                f"{longest} tokens",
                "shorten data.max_prompt_length / data.max_response_length (verl.data.*)",
            )
        )
        tp = int(_select(verl, "actor_rollout_ref.rollout.tensor_model_parallel_size", 1) or 1)
        heads, kv = shape.num_attention_heads, shape.num_key_value_heads
        checks.append(
            Check(
                "parallel: sequence parallel vs heads",
                heads % sp == 0,
                f"ulysses_sequence_parallel_size={sp}, {heads} attention heads",
                f"actor_rollout_ref.actor.ulysses_sequence_parallel_size=<a divisor of {heads}>",
            )
        )
        checks.append(
            Check(
                "parallel: tensor parallel vs heads",
                heads % tp == 0 and (kv % tp == 0 or tp % kv == 0),
                f"tensor_model_parallel_size={tp}, {heads} attention / {kv} KV heads",
                f"actor_rollout_ref.rollout.tensor_model_parallel_size=<a divisor of {heads} "
                f"and of {kv}, or a multiple of {kv}>",
            )
        )
    return checks


def checkpoint_bytes(verl: DictConfig, shape: ModelShape) -> int:
    contents = _select(verl, "actor_rollout_ref.actor.checkpoint.save_contents") or ["model"]
    per_param = sum(CHECKPOINT_BYTES_PER_PARAM.get(str(c), 0) for c in contents)
    return shape.params * per_param


@dataclass(frozen=True)
class DiskRoom:
    """The disk each node keeps checkpoints on: the bytes it has for them, how many copies of
    the model's bf16 weights it also holds, where that was read, and the fix for a need."""

    have_bytes: float
    model_copies: int
    where: str
    fix: Callable[[float], str]


class Target(Protocol):
    """Where a GPU run goes, as the preflight reads it: its cluster kind (training/clusters/)."""

    # True where the run's GPUs may be on another machine than this check (`--check
    # cluster=local` off the GPU box): an unknown GPU is then no refusal, and this
    # machine's disk is not the run's.
    gpu_may_be_elsewhere: bool

    def gpu(self, cfg: TrainConfig) -> Gpu | str: ...

    def disk(self, cfg: TrainConfig, verl: DictConfig) -> DiskRoom: ...


def this_machine_disk(verl: DictConfig) -> DiskRoom:
    """This machine's disk under the checkpoint directory: the base model is already here;
    checkpoints already written (a resumed run) count as room, since pruning replaces them."""
    checkpoints = Path(str(verl.trainer.default_local_dir))
    directory = checkpoints
    while not directory.exists() and directory != directory.parent:
        directory = directory.parent
    written = sum(f.stat().st_size for f in checkpoints.rglob("*") if f.is_file())
    have = shutil.disk_usage(directory).free + written
    return DiskRoom(
        have,
        1,
        f"{have / 1e9:.0f} GB free or held by checkpoints under {directory}",
        lambda _need: "free disk space, or point run.dir at a larger disk",
    )


def disk_check(
    cfg: TrainConfig, verl: DictConfig, shape: ModelShape, target: Target
) -> Check | None:
    """Checkpoints kept (+1 being written before pruning; every save of a run with a set
    number of steps when none are pruned) and the models, per node's disk."""
    keep = _select(verl, "trainer.max_actor_ckpt_to_keep")
    save_freq = int(_select(verl, "trainer.save_freq", -1) or -1)
    if save_freq <= 0:
        return None
    total = int(_select(verl, "trainer.total_training_steps", 0) or 0)
    steps = int(keep) + 1 if keep else -(-total // save_freq)
    nodes = int(verl.trainer.nnodes)
    per_step = checkpoint_bytes(verl, shape) / nodes
    room = target.disk(cfg, verl)
    models = room.model_copies * shape.params * 2
    need = per_step * steps + models
    if not keep and not total:
        return Check(
            "disk: checkpoints",
            False,
            f"trainer.max_actor_ckpt_to_keep is unset: every checkpoint ({per_step / 1e9:.0f} GB "
            f"per node) of a run of unset length is kept; {room.where}",
            "trainer.max_actor_ckpt_to_keep=3",
        )
    return Check(
        "disk: checkpoints",
        need <= room.have_bytes,
        f"{steps} checkpoint steps x {per_step / 1e9:.0f} GB per node + models "
        f"{models / 1e9:.0f} GB = {need / 1e9:.0f} GB; {room.where}",
        room.fix(need),
    )


def model_files_check(model_path: str) -> Check | None:
    """A local model directory holds its config, tokenizer and every weight shard."""
    local = Path(model_path).expanduser()
    if not local.is_dir():
        return None
    missing = [n for n in ("config.json",) if not (local / n).is_file()]
    if not any((local / n).is_file() for n in TOKENIZER_FILES):
        missing.append(f"a tokenizer ({' or '.join(TOKENIZER_FILES)})")
    indexes = sorted(local.glob("*.index.json"))
    if indexes:
        for index in indexes:
            try:
                shards = set(json.loads(index.read_text()).get("weight_map", {}).values())
            except (OSError, json.JSONDecodeError):
                missing.append(f"a readable {index.name}")
                continue
            missing += sorted(s for s in shards if not (local / s).is_file())
    elif not any(any(local.glob(p)) for p in WEIGHT_FILES):
        missing.append("weights (*.safetensors)")
    return Check(
        "model: files",
        not missing,
        f"{local}: "
        + (f"missing {', '.join(missing)}" if missing else "config, tokenizer, weights"),
        f"download the whole model into {local} (e.g. `hf download <repo id> --local-dir {local}`)",
    )


def preflight(run: ComposedRun, target: Target) -> Preflight:
    """The plan and every check for a GPU run going to `target` (its cluster kind)."""
    cfg, verl = run.cfg, run.verl
    assert verl is not None
    checks: list[Check] = [strategy_check(verl)]
    shape: ModelShape | None
    try:
        shape = resolve_shape(cfg.model.path, cfg.model.shape, cfg.model.name)
    except ShapeError as exc:
        shape = None
        checks.append(Check("model: shape", False, str(exc), "see above"))
    gpu = target.gpu(cfg)
    plan = None
    elsewhere = isinstance(gpu, str) and target.gpu_may_be_elsewhere
    if isinstance(gpu, str):
        # A job's GPUs must be known; `--check cluster=local` may run off the GPU box.
        checks.append(Check("gpu: memory", elsewhere, f"not planned: {gpu}", "see above"))
    else:
        name, gib_per_gpu, per_instance = gpu
        if per_instance is not None and int(verl.trainer.n_gpus_per_node) > per_instance:
            checks.append(
                Check(
                    "gpu: count",
                    False,
                    f"cluster.gpus_per_node={verl.trainer.n_gpus_per_node}, the instance has "
                    f"{per_instance}",
                    f"cluster.gpus_per_node={per_instance}",
                )
            )
        if shape is not None:
            plan = make_plan(plan_inputs(verl, shape, name, gib_per_gpu), shape)
            checks += memory_checks(plan)
    checks += data_checks(cfg, verl)
    checks += length_checks(verl, shape)
    if shape is not None and not elsewhere:  # no GPU here: not this machine's disk
        disk = disk_check(cfg, verl, shape, target)
        if disk is not None:
            checks.append(disk)
    files = model_files_check(cfg.model.path)
    if files is not None:
        checks.append(files)
    return Preflight(plan, tuple(checks))


def report(result: Preflight, out: Callable[[str], None] = print) -> None:
    """The plan's table and one line per check."""
    if result.plan is not None:
        plan_table(result.plan, out)
    for check in result.checks:
        if check.ok and check.name.startswith("memory:") and result.plan is not None:
            continue  # the table above shows it
        mark = "ok     " if check.ok else "REFUSED"
        out(f"  {mark} {check.name}: {check.detail}")
        if not check.ok and check.fix:
            out(f"          fix: {check.fix}")


def refusal_message(result: Preflight) -> str:
    failed = [c for c in result.checks if not c.ok]
    lines = [f"this run cannot work ({len(failed)} preflight check(s) failed):"]
    for check in failed:
        lines.append(f"  {check.name}: {check.detail}")
        if check.fix:
            lines.append(f"    fix: {check.fix}")
    lines.append("  (codefu-train --force starts it anyway)")
    return "\n".join(lines)


def write_plan_json(result: Preflight, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result.to_json(), indent=1) + "\n")


def print_report(result: Preflight) -> None:
    report(result, lambda line: print(line, file=sys.stderr))


def gate(run: ComposedRun, target: Target, force: bool, plan_json: Path | None) -> None:
    """The preflight of a GPU run, printed (and written to `plan_json`): raises ConfigError
    when the run cannot work, unless `force`."""
    result = preflight(run, target)
    print_report(result)
    if plan_json is not None:
        write_plan_json(result, plan_json)
    if result.refused:
        if not force:
            raise ConfigError(refusal_message(result))
        print("codefu-train: --force: starting although preflight checks failed.", file=sys.stderr)
