"""What the memory plan is computed from: the cluster's GPU (each cluster kind's; a run on this
machine: `this_machine_gpu`) and veRL's composed settings (`plan_inputs`); the plan itself is
`memory.py`'s arithmetic, the checks `preflight.py`'s."""

from __future__ import annotations

from typing import Any

from omegaconf import DictConfig, OmegaConf

from codefu_trainer.run.config import TrainConfig
from codefu_trainer.run.gpu import local_gpu_memory
from codefu_trainer.training.planning.memory import PlanInputs
from codefu_trainer.training.planning.model_shape import ModelShape


def select(verl: DictConfig, key: str, default: Any = None) -> Any:
    """A key of veRL's composed config, `default` where it is absent."""
    return OmegaConf.select(verl, key, default=default)


# (GPU name, GiB per GPU as torch reports it, GPUs per instance or None): the GPU a run
# plans for, as its cluster kind gives it (`training/clusters/`), or why it is unknown.
Gpu = tuple[str, float, int | None]


def this_machine_gpu(cfg: TrainConfig) -> Gpu | str:
    """The GPU of a run on this machine: `cluster.gpu_memory_gib` when set, else nvidia-smi's
    first visible GPU, or why it is unknown."""
    if cfg.cluster.gpu_memory_gib:
        return "configured", float(cfg.cluster.gpu_memory_gib), None
    found = local_gpu_memory()
    if found is None:
        return "no GPU found by nvidia-smi: set cluster.gpu_memory_gib=<GiB per GPU> to plan"
    return found[0], found[1], None


def plan_inputs(verl: DictConfig, shape: ModelShape, gpu_name: str, gpu_gib: float) -> PlanInputs:
    """The plan's inputs read from veRL's composed config."""
    actor = "actor_rollout_ref.actor"
    ref_needed = bool(select(verl, f"{actor}.use_kl_loss")) or bool(
        select(verl, "algorithm.use_kl_in_reward")
    )
    sp = int(select(verl, f"{actor}.ulysses_sequence_parallel_size", 1) or 1)
    prompt = int(verl.data.max_prompt_length)
    response = int(verl.data.max_response_length)
    full = prompt + response

    def budget(dynamic_key: str, tokens_key: str, micro_key: str) -> int:
        if select(verl, dynamic_key, False):
            return int(select(verl, tokens_key))
        micro = select(verl, micro_key) or 1
        return int(micro) * full

    attention = str(
        select(verl, "actor_rollout_ref.model.override_config.attn_implementation")
        or "flash_attention_2"
    )
    return PlanInputs(
        nnodes=int(verl.trainer.nnodes),
        gpus_per_node=int(verl.trainer.n_gpus_per_node),
        gpu_memory_gib=gpu_gib,
        gpu_name=gpu_name,
        prompt_length=prompt,
        response_length=response,
        actor_tokens=budget(
            f"{actor}.use_dynamic_bsz",
            f"{actor}.ppo_max_token_len_per_gpu",
            f"{actor}.ppo_micro_batch_size_per_gpu",
        ),
        use_fused_kernels=bool(select(verl, "actor_rollout_ref.model.use_fused_kernels", False)),
        entropy_in_loss=bool(select(verl, f"{actor}.calculate_entropy", False))
        or float(select(verl, f"{actor}.entropy_coeff", 0.0) or 0.0) != 0.0,
        gradient_checkpointing=bool(
            select(verl, "actor_rollout_ref.model.enable_gradient_checkpointing", False)
        ),
        sdpa_packed=attention == "sdpa"
        and bool(select(verl, "actor_rollout_ref.model.use_remove_padding", False)),
        sequence_parallel=sp,
        fsdp_size=int(select(verl, f"{actor}.fsdp_config.fsdp_size", -1) or -1),
        param_offload=bool(select(verl, f"{actor}.fsdp_config.param_offload", False)),
        optimizer_offload=bool(select(verl, f"{actor}.fsdp_config.optimizer_offload", False)),
        strategy=str(select(verl, f"{actor}.strategy")),
        ref_tokens=budget(
            "actor_rollout_ref.ref.log_prob_use_dynamic_bsz",
            "actor_rollout_ref.ref.log_prob_max_token_len_per_gpu",
            "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu",
        )
        if ref_needed
        else None,
        # veRL offloads a forward-only engine's params whatever param_offload says
        # (verl/workers/engine/fsdp/transformer_impl.py:459, docs/fsdp.md).
        ref_param_offload=bool(select(verl, "actor_rollout_ref.ref.fsdp_config.param_offload"))
        or bool(select(verl, "actor_rollout_ref.ref.fsdp_config.forward_only")),
        old_log_prob_tokens=budget(
            "actor_rollout_ref.rollout.log_prob_use_dynamic_bsz",
            "actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu",
            "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu",
        ),
        tensor_parallel=int(
            select(verl, "actor_rollout_ref.rollout.tensor_model_parallel_size", 1)
        ),
        gpu_memory_utilization=float(
            select(verl, "actor_rollout_ref.rollout.gpu_memory_utilization", 0.5)
        ),
        max_num_batched_tokens=int(
            select(verl, "actor_rollout_ref.rollout.max_num_batched_tokens", 8192) or 8192
        ),
        max_model_len=select(verl, "actor_rollout_ref.rollout.max_model_len"),
        max_num_seqs=int(select(verl, "actor_rollout_ref.rollout.max_num_seqs", 1024) or 1024),
    )
