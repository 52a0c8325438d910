"""GPU memory per phase of a veRL GRPO step, per GPU, from the model's shape and the config.

Arithmetic from shapes (bytes), in the order veRL 0.9.1's colocated FSDP workers run a step:

- rollout: the actor's resident states beside vLLM, which takes `gpu_memory_utilization` of
  the GPU for its weights (per tensor-parallel rank), activations and KV cache;
- old log-probs (actor, no grad, entropy on: veRL logs it) and the reference's log-probs;
- actor update: FSDP's sharded fp32 params, grads and Adam states; the gathered bf16 units;
  activations with gradient checkpointing; the log-prob/entropy path.

Adam's states exist from the optimizer's first step on (torch allocates them in the first
`step()`, at the end of step 1's update): every phase counts them, except the log-prob and
rollout phases of a run's first step (`PlanInputs.optimizer_stepped=False`).

Every phase also counts the memory no allocator holds (its parts named `OUTSIDE`...): each
process's CUDA context and library workspaces (the FSDP worker and the rollout's server,
`PROCESSES_PER_GPU`), and NCCL's buffers where more than one GPU trains.
The driver's reserve is not in the plan: `PlanInputs.gpu_memory_gib` is what processes may
allocate (torch's total, nvidia-smi's total less its reserve), and the smoke measures NVML's
v2 `used`, which leaves the reserve out.

The activation and log-prob terms count tensors of the shapes the code keeps and were checked
against one-GPU measurements of the 7B shape (docs/measurements/actor_memory_h200.json,
`benchmarks/gpu_actor_memory.py`): every measured case is within 10%; the no-grad pass also
against what it allocates on the CPU (tests/training/test_memory_plan.py). What the plan cannot
see (allocator fragmentation, vLLM's CUDA graphs and what a sleeping vLLM keeps) is the margin:
a phase fits when it stays under (1 - MARGIN) x the GPU's memory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from codefu_trainer.training.planning.model_shape import ModelShape

GIB = 1024**3
# The FSDP version the terms below count (veRL's `strategy`): FSDP2's per-parameter sharding.
PLANNED_STRATEGY = "fsdp2"
MARGIN = 0.10
BF16 = 2
FP32 = 4
# One decoder layer recomputed under gradient checkpointing, per token, in bf16 tensors: the
# MLP's gate, up, activation and product and two gradients of that size; ~12 of hidden size
# (two RMSNorms in fp32, q/k/v, rotary outputs, attention output, residuals, their grads).
LAYER_INTERMEDIATE_TENSORS = 6
LAYER_HIDDEN_TENSORS = 12
# transformers' sdpa mask of a packed row (veRL's use_remove_padding: one row, position ids
# restarting per sequence): a (T, T) bool mask, built once per forward and kept through every
# layer, and the bf16 additive copy torch's scaled_dot_product_attention makes of it in each
# attention call (convert_boolean_attn_mask).
SDPA_BOOL_MASK_BYTES = 1
PACKED_SDPA_MASK_BYTES = SDPA_BOOL_MASK_BYTES + BF16
# (T, vocab) bytes per element alive at the log-prob path's peak: bf16 logits with the
# gradient written in place (no entropy); logits + softmax + product + three gradients (entropy
# with grad: veRL's entropy_from_logits beside a cross-entropy without in-place gradient).
LOGITS_BYTES_NO_ENTROPY = 1 * BF16
LOGITS_BYTES_ENTROPY = 6 * BF16
# Forward-only passes: logits (reference); logits + softmax + product (old log-probs, entropy).
LOGITS_BYTES_FORWARD = 1 * BF16
LOGITS_BYTES_FORWARD_ENTROPY = 3 * BF16
# veRL's fused kernels (use_fused_kernels) compute log-probs and entropy 512 tokens at a time:
# three fp32 (chunk, vocab) tensors instead of any (T, vocab) one.
FUSED_CHUNK_TOKENS = 512
FUSED_CHUNK_TENSORS = 3
# A no-grad forward (transformers' Qwen2/Llama decoder) peaks inside a layer, in its MLP or in
# its attention call. In the MLP: three intermediate-size tensors (the activated gate, up,
# their product) and four of hidden size (the embeddings' output, which the model's forward
# keeps, the layer's input, the residual after attention, the MLP's normed input). In the
# attention call: seven of hidden size (the embeddings' output, the layer's input, the normed
# input, q after rotary, k and v repeated to every query head, which transformers does
# whenever a mask is passed, the output). Both beside the packed row's mask.
FORWARD_INTERMEDIATE_TENSORS = 3
FORWARD_MLP_HIDDEN_TENSORS = 4
FORWARD_ATTENTION_HIDDEN_TENSORS = 7
# vLLM: activation profile of a max_num_batched_tokens forward, per token (intermediate-size
# MLP tensors per tensor-parallel rank), and fp32 logits of one token per running sequence.
VLLM_INTERMEDIATE_TENSORS = 3
# Processes holding a CUDA context on each GPU: veRL's FSDP worker (actor and reference,
# colocated) and the rollout's (vLLM's engine worker, or the `hf` server). In the rollout phase
# vLLM's own process is inside its gpu_memory_utilization share (vLLM's profile counts its
# non-torch memory there), so that phase counts the worker's alone.
PROCESSES_PER_GPU = 2
# What one such process holds outside any allocator: its CUDA context, cuBLAS's and the other
# libraries' workspaces. Derived from the H200 smoke (docs/measurements/gpu_smoke_h200.md), step
# 1's actor update: NVML's v1 `used` peak 14.07 GiB (gpu_smoke_h200_phases.jsonl), less the
# driver's reserve v1 counts (0.60 GiB: nvidia-smi's 143,771 MiB total less torch's 139.8 GiB),
# less the actor process's allocator peak (veRL's perf/max_memory_reserved_gb, 11.27 GiB; veRL
# divides by 1024**3), over the 2 processes on that GPU (the FSDP worker, the sleeping `hf`
# server): (14.07 - 0.60 - 11.27) / 2.
PROCESS_OUTSIDE_ALLOCATOR_GIB = 1.10
# NCCL's buffers per process where more than one GPU trains (world size > 1): not measured here
# (the smoke has one GPU). An estimate from NCCL's defaults: 4 MiB (NCCL_BUFFSIZE) per protocol
# buffer, two ring peers, up to 32 channels, a few protocols.
NCCL_GIB = 0.5
# How the parts of a phase that no allocator holds are named (every other part is allocator
# memory).
OUTSIDE = "outside allocators: "


@dataclass(frozen=True)
class PlanInputs:
    """Everything the plan reads. `key` metadata: the veRL key an override of the field names."""

    nnodes: int
    gpus_per_node: int
    gpu_memory_gib: float
    gpu_name: str
    prompt_length: int
    response_length: int
    # actor
    actor_tokens: int = field(metadata={"key": "actor_rollout_ref.actor.ppo_max_token_len_per_gpu"})
    use_fused_kernels: bool = field(metadata={"key": "actor_rollout_ref.model.use_fused_kernels"})
    entropy_in_loss: bool = True  # entropy_coeff != 0 or calculate_entropy
    gradient_checkpointing: bool = True
    sdpa_packed: bool = True  # sdpa attention on packed rows (use_remove_padding)
    sequence_parallel: int = 1  # Ulysses: a micro-batch holds sequence_parallel x actor_tokens
    fsdp_size: int = -1
    param_offload: bool = False
    optimizer_offload: bool = field(
        default=False, metadata={"key": "actor_rollout_ref.actor.fsdp_config.optimizer_offload"}
    )
    # veRL's FSDP of the actor (and the reference): the terms are FSDP2's (fully_shard), as
    # fitted and measured; the preflight refuses another (`preflight.strategy_checks`).
    strategy: str = field(
        default=PLANNED_STRATEGY, metadata={"key": "actor_rollout_ref.actor.strategy"}
    )
    # reference model (None: no reference model)
    ref_tokens: int | None = field(
        default=None, metadata={"key": "actor_rollout_ref.ref.log_prob_max_token_len_per_gpu"}
    )
    ref_param_offload: bool = True
    # rollout
    old_log_prob_tokens: int = field(
        default=32768,
        metadata={"key": "actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu"},
    )
    tensor_parallel: int = 1
    gpu_memory_utilization: float = field(
        default=0.6, metadata={"key": "actor_rollout_ref.rollout.gpu_memory_utilization"}
    )
    max_num_batched_tokens: int = 8192
    max_model_len: int | None = None
    max_num_seqs: int = 1024
    # Adam's states exist (every step after the first); False: the first step's log-prob and
    # rollout phases, which run before the optimizer's first step allocates them.
    optimizer_stepped: bool = True

    @property
    def world(self) -> int:
        return self.nnodes * self.gpus_per_node

    @property
    def shards(self) -> int:
        """FSDP's shard count: fsdp_size, or every GPU when it is -1."""
        return self.world if self.fsdp_size in (-1, 0) else self.fsdp_size

    @property
    def sequence_length(self) -> int:
        return self.prompt_length + self.response_length

    @property
    def usable_gib(self) -> float:
        return self.gpu_memory_gib * (1 - MARGIN)


@dataclass(frozen=True)
class Phase:
    """One phase's parts (GiB per GPU) and whether their sum stays under the usable memory."""

    name: str
    parts: dict[str, float]
    usable_gib: float
    notes: tuple[str, ...] = ()

    @property
    def total_gib(self) -> float:
        return sum(self.parts.values())

    @property
    def allocated_gib(self) -> float:
        """The parts the processes' allocators hold (the total less the `OUTSIDE` parts)."""
        return sum(v for k, v in self.parts.items() if not k.startswith(OUTSIDE))

    @property
    def fits(self) -> bool:
        return self.total_gib <= self.usable_gib


@dataclass(frozen=True)
class Fix:
    """An override that makes a phase fit, with that phase's total after it."""

    override: str
    total_gib: float


@dataclass(frozen=True)
class MemoryPlan:
    inputs: PlanInputs
    shape: ModelShape
    phases: tuple[Phase, ...]
    kv_cache: dict[str, float]
    fixes: dict[str, Fix | None]

    @property
    def fits(self) -> bool:
        return all(p.fits for p in self.phases) and self.kv_cache["full_sequences"] >= 1

    def phase(self, name: str) -> Phase:
        return next(p for p in self.phases if p.name == name)


def gib(n_bytes: float) -> float:
    return n_bytes / GIB


def checkpointed_activations(shape: ModelShape, tokens: int, packed_sdpa: bool) -> float:
    """Bytes of the decoder's activations in an update over `tokens` tokens (one GPU).

    With gradient checkpointing: each layer's bf16 input kept, one layer recomputed with its
    gradients, and transformers' (T, T) sdpa mask when a row packs several sequences.
    """
    boundaries = shape.num_hidden_layers * tokens * shape.hidden_size * BF16
    per_token = BF16 * (
        LAYER_INTERMEDIATE_TENSORS * shape.intermediate_size
        + LAYER_HIDDEN_TENSORS * shape.hidden_size
    )
    mask = PACKED_SDPA_MASK_BYTES * tokens * tokens if packed_sdpa else 0
    return boundaries + tokens * per_token + mask


def full_activations(shape: ModelShape, tokens: int, packed_sdpa: bool) -> float:
    """Without gradient checkpointing every layer keeps what the recomputed one holds."""
    per_token = BF16 * (
        LAYER_INTERMEDIATE_TENSORS * shape.intermediate_size
        + LAYER_HIDDEN_TENSORS * shape.hidden_size
    )
    mask = PACKED_SDPA_MASK_BYTES * tokens * tokens if packed_sdpa else 0
    return shape.num_hidden_layers * tokens * per_token + mask


def logits_path(shape: ModelShape, tokens: int, fused: bool, entropy: bool) -> float:
    """Bytes the log-prob (and entropy) path adds over `tokens` tokens, with gradient."""
    if fused:
        return FUSED_CHUNK_TENSORS * FP32 * FUSED_CHUNK_TOKENS * shape.vocab_size
    per_element = LOGITS_BYTES_ENTROPY if entropy else LOGITS_BYTES_NO_ENTROPY
    return per_element * tokens * shape.vocab_size


def forward_log_probs(
    shape: ModelShape, tokens: int, *, fused: bool, entropy: bool, packed_sdpa: bool
) -> float:
    """Peak bytes of a no-grad log-prob pass over `tokens` tokens: the largest of the decoder's
    peak in a layer's MLP, its peak in a layer's attention call (both beside the packed row's
    sdpa mask, `packed_sdpa`) and the head's (the final hidden states and the (T, vocab)
    tensors, or the fused kernels' chunks)."""
    hidden = BF16 * tokens * shape.hidden_size
    mask = tokens * tokens if packed_sdpa else 0
    mlp = (
        SDPA_BOOL_MASK_BYTES * mask
        + FORWARD_INTERMEDIATE_TENSORS * BF16 * tokens * shape.intermediate_size
        + FORWARD_MLP_HIDDEN_TENSORS * hidden
    )
    attention = PACKED_SDPA_MASK_BYTES * mask + FORWARD_ATTENTION_HIDDEN_TENSORS * hidden
    if fused:
        head = FUSED_CHUNK_TENSORS * FP32 * FUSED_CHUNK_TOKENS * shape.vocab_size
    else:
        per_element = LOGITS_BYTES_FORWARD_ENTROPY if entropy else LOGITS_BYTES_FORWARD
        head = per_element * tokens * shape.vocab_size
    return max(mlp, attention, head + hidden)


def update_above_weights(
    shape: ModelShape, tokens: int, *, path: str, packed_sdpa: bool = True
) -> float:
    """GiB an actor update adds above bf16 weights and grads on one unsharded GPU: what
    benchmarks/gpu_actor_memory.py measures. `path`: off, logits, fused_torch, fused_triton,
    ref, old, old_fused (its cases; the last three are no-grad passes)."""
    if path in ("ref", "old", "old_fused"):
        return gib(
            forward_log_probs(
                shape,
                tokens,
                fused=path == "old_fused",
                entropy=path != "ref",
                packed_sdpa=packed_sdpa,
            )
        )
    fused = path.startswith("fused")
    return gib(
        checkpointed_activations(shape, tokens, packed_sdpa)
        + logits_path(shape, tokens, fused=fused, entropy=path != "off")
    )


def _sharded(i: PlanInputs, shape: ModelShape, bytes_per_param: float) -> float:
    return shape.params * bytes_per_param / i.shards


def _gathered_units(shape: ModelShape, with_grads: bool) -> float:
    """FSDP's unsharded bf16 units: the root (embeddings, norm, head) kept gathered, the
    current and the prefetched decoder layer; with grads, a layer's fp32 gradient before its
    reduce-scatter and the head's bf16 gradient."""
    params = BF16 * (shape.root_params + 2 * shape.layer_params)
    if not with_grads:
        return params
    return (
        params + FP32 * shape.layer_params + BF16 * max(shape.head_params, shape.embedding_params)
    )


def _resident(i: PlanInputs, shape: ModelShape) -> dict[str, float]:
    """The actor's states that stay on the GPU outside its update (fp32 params, and Adam's
    once the optimizer has stepped)."""
    parts = {}
    if not i.param_offload:
        parts["actor params (fp32, sharded)"] = gib(_sharded(i, shape, FP32))
    if not i.optimizer_offload and i.optimizer_stepped:
        parts["actor Adam states (fp32, sharded)"] = gib(_sharded(i, shape, 2 * FP32))
    return parts


def outside_allocators(i: PlanInputs, processes: int) -> dict[str, float]:
    """GiB no allocator holds on each GPU: `processes` CUDA contexts with their libraries'
    workspaces, and NCCL's buffers of the FSDP worker when more than one GPU trains."""
    parts = {
        f"{OUTSIDE}{processes} CUDA context(s), workspaces": processes
        * PROCESS_OUTSIDE_ALLOCATOR_GIB
    }
    if i.world > 1:
        parts[f"{OUTSIDE}NCCL buffers"] = NCCL_GIB
    return parts


def kv_cache(i: PlanInputs, shape: ModelShape) -> dict[str, float]:
    """vLLM's memory per tensor-parallel rank and how many full-length sequences its KV holds."""
    tp = i.tensor_parallel
    budget = i.gpu_memory_utilization * i.gpu_memory_gib * GIB
    weights = shape.params * BF16 / tp
    activations = (
        i.max_num_batched_tokens * VLLM_INTERMEDIATE_TENSORS * BF16 * shape.intermediate_size / tp
        + i.max_num_seqs * shape.vocab_size * FP32 / tp
    )
    kv_heads = max(1, shape.num_key_value_heads // tp)
    per_token = 2 * shape.num_hidden_layers * kv_heads * shape.head_dim * BF16
    free = max(0.0, budget - weights - activations)
    max_len = i.max_model_len or i.sequence_length
    return {
        "vllm_budget_gib": gib(budget),
        "vllm_weights_gib": gib(weights),
        "vllm_activations_gib": gib(activations),
        "kv_cache_gib": gib(free),
        "kv_bytes_per_token": float(per_token),
        "kv_tokens": free / per_token,
        "max_model_len": float(max_len),
        "full_sequences": free / per_token / max_len,
    }


def _log_prob_pass(i: PlanInputs, shape: ModelShape, tokens: int, *, entropy: bool) -> float:
    """GiB of a no-grad log-prob pass (old log-probs, reference) with the run's settings."""
    return gib(
        forward_log_probs(
            shape, tokens, fused=i.use_fused_kernels, entropy=entropy, packed_sdpa=i.sdpa_packed
        )
    )


def _phases(i: PlanInputs, shape: ModelShape) -> tuple[Phase, ...]:
    usable = i.usable_gib
    resident = _resident(i, shape)
    outside = outside_allocators(i, PROCESSES_PER_GPU)
    rollout = Phase(
        "rollout",
        {**resident, "vLLM (gpu_memory_utilization x GPU)": i.gpu_memory_utilization
         * i.gpu_memory_gib, **outside_allocators(i, PROCESSES_PER_GPU - 1)},
        usable,
    )  # fmt: skip
    gathered = gib(_gathered_units(shape, with_grads=False))
    old = Phase(
        "old log-probs",
        {
            **resident,
            "gathered units (bf16)": gathered,
            "log-prob pass": _log_prob_pass(i, shape, i.old_log_prob_tokens, entropy=True),
            **outside,
        },
        usable,
    )
    phases = [rollout, old]
    if i.ref_tokens is not None:
        ref_parts = dict(resident)
        if not i.ref_param_offload:
            ref_parts["reference params (bf16, sharded)"] = gib(_sharded(i, shape, BF16))
        ref_parts["gathered units (bf16)"] = gathered
        ref_parts["log-prob pass"] = _log_prob_pass(i, shape, i.ref_tokens, entropy=False)
        ref_parts.update(outside)
        phases.append(Phase("reference log-probs", ref_parts, usable))
    activations = (
        checkpointed_activations(shape, i.actor_tokens, i.sdpa_packed)
        if i.gradient_checkpointing
        else full_activations(shape, i.actor_tokens, i.sdpa_packed)
    )
    update = {
        "actor params (fp32, sharded)": gib(_sharded(i, shape, FP32)),
        "actor grads (fp32, sharded)": gib(_sharded(i, shape, FP32)),
    }
    if not i.optimizer_offload:  # the first step's update allocates them in its step()
        update["actor Adam states (fp32, sharded)"] = gib(_sharded(i, shape, 2 * FP32))
    update["gathered units and their grads"] = gib(_gathered_units(shape, with_grads=True))
    update["activations"] = gib(activations)
    update["log-prob/entropy path"] = gib(
        logits_path(shape, i.actor_tokens, i.use_fused_kernels, i.entropy_in_loss)
    )
    update.update(outside)
    phases.append(Phase("actor update", update, usable))
    return tuple(phases)


def _token_budgets(i: PlanInputs, current: int) -> list[int]:
    """Token budgets to try, largest first: multiples of 1024 from `current` down to one
    full-length sequence (veRL needs a micro-batch to hold the longest sequence; with
    sequence parallelism a micro-batch spans sequence_parallel GPUs)."""
    floor = -(-i.sequence_length // i.sequence_parallel)
    step = 1024
    start = (current - 1) // step * step
    budgets = list(range(start, floor - 1, -step))
    return [b for b in budgets if b >= floor] + ([floor] if floor not in budgets else [])


def _candidates(i: PlanInputs, phase: str) -> list[PlanInputs]:
    """Changes that lower `phase`, in the order a user would want them tried."""
    out: list[PlanInputs] = []
    if phase == "actor update":
        if not i.use_fused_kernels:
            out.append(replace(i, use_fused_kernels=True))
        out += [replace(i, actor_tokens=t) for t in _token_budgets(i, i.actor_tokens)]
        if not i.optimizer_offload:
            out.append(replace(i, optimizer_offload=True))
    elif phase == "old log-probs":
        if not i.use_fused_kernels:
            out.append(replace(i, use_fused_kernels=True))
        out += [replace(i, old_log_prob_tokens=t) for t in _token_budgets(i, i.old_log_prob_tokens)]
    elif phase == "reference log-probs" and i.ref_tokens is not None:
        out += [replace(i, ref_tokens=t) for t in _token_budgets(i, i.ref_tokens)]
    elif phase == "rollout":
        for tenths in range(int(i.gpu_memory_utilization * 20) - 1, 5, -1):
            out.append(replace(i, gpu_memory_utilization=tenths / 20))
        if not i.optimizer_offload:
            out.append(replace(i, optimizer_offload=True))
    return out


def override_text(before: PlanInputs, after: PlanInputs) -> str:
    """The veRL override(s) that turn `before` into `after`."""
    changed = []
    for f in before.__dataclass_fields__.values():
        old, new = getattr(before, f.name), getattr(after, f.name)
        if old != new:
            value = str(new).lower() if isinstance(new, bool) else str(new)
            changed.append(f"{f.metadata['key']}={value}")
    return " ".join(changed)


def _fix(i: PlanInputs, shape: ModelShape, phase: str) -> Fix | None:
    for candidate in _candidates(i, phase):
        planned = {p.name: p for p in _phases(candidate, shape)}[phase]
        kv_ok = kv_cache(candidate, shape)["full_sequences"] >= 1
        if planned.fits and (phase != "rollout" or kv_ok):
            return Fix(override_text(i, candidate), planned.total_gib)
    return None


def make_plan(i: PlanInputs, shape: ModelShape) -> MemoryPlan:
    phases = _phases(i, shape)
    fixes = {p.name: _fix(i, shape, p.name) for p in phases if not p.fits}
    return MemoryPlan(i, shape, phases, kv_cache(i, shape), fixes)


def plan_table(plan: MemoryPlan, rows: Callable[[str], None] = print) -> None:
    """The plan as a plain-text table, phase by phase."""
    i = plan.inputs
    rows(
        f"GPU memory plan per GPU: {i.gpu_name}, {i.gpu_memory_gib:.1f} GiB, usable "
        f"{i.usable_gib:.1f} GiB ({MARGIN:.0%} margin); {i.nnodes} node(s) x "
        f"{i.gpus_per_node} GPUs; model {plan.shape.params / 1e9:.2f}B params "
        f"({plan.shape.source}); strategy {i.strategy}"
    )
    width = max(len(part) for p in plan.phases for part in p.parts) + 2
    for phase in plan.phases:
        verdict = "fits" if phase.fits else "DOES NOT FIT"
        rows(f"  {phase.name:<{width}}{phase.total_gib:8.1f} GiB  {verdict}")
        for part, value in phase.parts.items():
            rows(f"    {part:<{width - 2}}{value:8.1f}")
    kv = plan.kv_cache
    rows(
        f"  vLLM per TP rank: budget {kv['vllm_budget_gib']:.1f} GiB = weights "
        f"{kv['vllm_weights_gib']:.1f} + activations {kv['vllm_activations_gib']:.1f} + KV cache "
        f"{kv['kv_cache_gib']:.1f} ({kv['kv_tokens']:,.0f} tokens: "
        f"{kv['full_sequences']:.1f} sequences of {kv['max_model_len']:,.0f})"
    )


def plan_json(plan: MemoryPlan) -> dict[str, object]:
    """The plan's parts in GiB, for scripts (`codefu-train --plan-json`)."""
    i = plan.inputs
    update = plan.phase("actor update")
    return {
        "gpu": {"name": i.gpu_name, "memory_gib": i.gpu_memory_gib, "usable_gib": i.usable_gib},
        "strategy": i.strategy,
        "margin": MARGIN,
        "nodes": i.nnodes,
        "gpus_per_node": i.gpus_per_node,
        "model": {"params": plan.shape.params, "source": plan.shape.source},
        "phases": {
            p.name: {
                "parts_gib": p.parts,
                "total_gib": p.total_gib,
                "allocated_gib": p.allocated_gib,
                "fits": p.fits,
            }
            for p in plan.phases
        },
        # What benchmarks/gpu_actor_memory.py measures: activations + the log-prob path.
        "actor_update_above_weights_gib": update.parts["activations"]
        + update.parts["log-prob/entropy path"],
        "kv_cache": plan.kv_cache,
        "fits": plan.fits,
        "fixes": {
            name: ({"override": f.override, "total_gib": f.total_gib} if f else None)
            for name, f in plan.fixes.items()
        },
    }
