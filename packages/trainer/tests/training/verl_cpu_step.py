"""One GRPO step of veRL 0.9.1's own workers on this machine's CPU (run by test_verl_on_cpu).

`python verl_cpu_step.py SPEC.json OUT.json`. SPEC holds the conf dir, a tiny model dir,
the overrides for `codefu_trainer.training.clusters.registry.compose_run`, and prompts with their
ground truths and responses (two per prompt: one GRPO group each). In its own process,
since it sets veRL's platform, a gloo process group and transformers patches globally:

1. veRL's ActorRolloutRefWorker builds the reference (role "ref") and the actor (role
   "actor") from the composed `actor_rollout_ref` config: HFModelConfig, the FSDP engine,
   transformers' from_pretrained with the configured attention, veRL's monkey patches, FSDP2.
2. The responses are scored by `RewardService` (Ray + the real judge), the scores placed on
   each response's last token, and advantages computed by veRL's `compute_advantage` (GRPO).
3. The actor's log-probs (remove padding and padded), then one `update_actor`, then the
   log-probs again. Everything measured goes to OUT.json for the test to judge.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path
from typing import Any


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _init_single_process_group() -> None:
    import torch.distributed as dist

    os.environ.update(
        WORLD_SIZE="1",
        RANK="0",
        LOCAL_RANK="0",
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(_free_port()),
    )
    dist.init_process_group("gloo", rank=0, world_size=1)


def _padded_batch(tok: Any, prompts: list[list[dict]], responses: list[str]) -> Any:
    """Prompts left-padded, responses right-padded: the layout veRL's rollout hands over."""
    import torch
    from verl import DataProto

    prompt_ids = [
        tok.apply_chat_template(p, tokenize=True, add_generation_prompt=True)["input_ids"]
        for p in prompts
    ]
    response_ids = [
        tok(r + tok.eos_token, add_special_tokens=False)["input_ids"] for r in responses
    ]
    width_p, width_r = max(map(len, prompt_ids)), max(map(len, response_ids))
    n = len(responses)
    ids = torch.full((n, width_p + width_r), tok.pad_token_id)
    mask = torch.zeros((n, width_p + width_r), dtype=torch.long)
    for i, (p, r) in enumerate(zip(prompt_ids, response_ids, strict=True)):
        ids[i, width_p - len(p) : width_p + len(r)] = torch.tensor(p + r)
        mask[i, width_p - len(p) : width_p + len(r)] = 1
    return DataProto.from_dict(
        tensors={
            "input_ids": ids,
            "attention_mask": mask,
            "position_ids": (mask.cumsum(-1) - 1).clamp(min=0),
            "prompts": ids[:, :width_p],
            "responses": ids[:, width_p:],
            "response_mask": mask[:, width_p:],
        }
    )


def _log_probs(actor: Any, batch: Any, *, remove_padding: bool) -> Any:
    """The actor's log-probs of the responses, as veRL's trainer asks for them."""
    from verl.utils import tensordict_utils as tu
    from verl.workers.utils.padding import left_right_2_no_padding, no_padding_2_padding

    td = left_right_2_no_padding(batch.to_tensordict())
    tu.assign_non_tensor(
        td, calculate_entropy=False, compute_loss=False, use_remove_padding=remove_padding
    )
    out = actor.compute_log_prob(td)
    return no_padding_2_padding(tu.get(out, "log_probs"), td).float()


def _ref_worker(config: Any, attention: str) -> tuple[Any, str]:
    """veRL's reference worker with `attention`; the error its init_model stops at, if any."""
    from omegaconf import OmegaConf
    from verl.workers.engine_workers import ActorRolloutRefWorker

    cfg = OmegaConf.create(OmegaConf.to_container(config, resolve=True))
    cfg.model.override_config.attn_implementation = attention
    worker = ActorRolloutRefWorker(config=cfg, role="ref")
    try:
        worker.init_model()
    except (ImportError, RuntimeError) as exc:
        return worker, f"{type(exc).__name__}: {exc}"
    return worker, ""


def main(spec_path: str, out_path: str) -> None:
    spec = json.loads(Path(spec_path).read_text())
    from codefu_trainer.training.clusters.registry import compose_run

    run = compose_run(Path(spec["conf_dir"]), spec["overrides"], gpus_detected=1)
    assert run.verl is not None
    # veRL's CPU platform (codefu_trainer.training.verl.cpu), without the patches: this step
    # shows how far veRL goes on its own.
    from verl.plugin.platform.platform_manager import set_platform

    from codefu_trainer.training.verl.cpu.platform import PlatformCPU

    set_platform(PlatformCPU())
    _init_single_process_group()
    import numpy as np
    import torch
    from omegaconf import OmegaConf
    from transformers import AutoTokenizer
    from verl.trainer.ppo.ray_trainer import compute_advantage
    from verl.utils import tensordict_utils as tu
    from verl.workers.engine import EngineRegistry
    from verl.workers.engine.fsdp.transformer_impl import FSDPEngineWithLMHead
    from verl.workers.engine_workers import ActorRolloutRefWorker
    from verl.workers.utils.padding import left_right_2_no_padding

    from codefu_trainer.reward.service import RewardService

    # veRL registers its FSDP engine for cuda and npu only: the same engine, for cpu.
    EngineRegistry.register(model_type="language_model", backend=["fsdp", "fsdp2"], device="cpu")(
        FSDPEngineWithLMHead
    )
    config = run.verl.actor_rollout_ref
    attention = str(config.model.override_config.attn_implementation)
    result: dict[str, Any] = {"configured_attention": attention}

    ref, result["ref_init_error"] = _ref_worker(config, attention)
    ref_module = ref.ref.engine._build_module()  # the construction init_model ran first
    result["ref_attention"] = ref_module.config._attn_implementation
    _, result["flash_attention_2_error"] = _ref_worker(config, "flash_attention_2")

    actor = ActorRolloutRefWorker(
        config=OmegaConf.create(OmegaConf.to_container(config, resolve=True)), role="actor"
    )
    actor.init_model()
    result["actor_attention"] = actor.actor.engine.module.config._attn_implementation

    prompts = [p for p in spec["prompts"] for _ in range(2)]
    responses = spec["responses"]
    truths = [t for t in spec["ground_truths"] for _ in range(2)]
    service = RewardService(run.cfg.reward)
    try:
        scored = service.score(responses, truths)
    finally:
        service.close()
    result["scores"] = [s["score"] for s in scored]
    result["verdicts"] = [s["verdict"] for s in scored]

    batch = _padded_batch(AutoTokenizer.from_pretrained(spec["model_dir"]), prompts, responses)
    batch.meta_info["temperature"] = config.rollout.temperature  # as the rollout sampled
    mask = batch.batch["response_mask"]
    rewards = torch.zeros(mask.shape)
    rewards[torch.arange(len(responses)), mask.sum(-1) - 1] = torch.tensor(result["scores"])
    batch.batch["token_level_rewards"] = rewards
    batch.non_tensor_batch["uid"] = np.array([str(i // 2) for i in range(len(responses))])
    batch = compute_advantage(
        batch,
        adv_estimator=run.verl.algorithm.adv_estimator,
        norm_adv_by_std_in_grpo=run.verl.algorithm.norm_adv_by_std_in_grpo,
    )
    result["advantages"] = batch.batch["advantages"][:, 0].tolist()

    before = _log_probs(actor, batch, remove_padding=True)
    padded = _log_probs(actor, batch, remove_padding=False)
    result["remove_padding_vs_padded_max_diff"] = float(((before - padded) * mask).abs().max())
    result["log_prob_spread"] = float((before * mask).sum(-1).std())
    # Step 1: the reference is the initial actor.
    batch.batch["old_log_probs"] = before
    batch.batch["ref_log_prob"] = before
    td = left_right_2_no_padding(batch.to_tensordict())
    size = len(responses)
    tu.assign_non_tensor(
        td,
        calculate_entropy=True,
        global_batch_size=size,
        mini_batch_size=size,
        epochs=1,
        seed=0,
        dataloader_kwargs={"shuffle": False},
        compute_loss=True,
    )
    metrics = tu.get(actor.update_actor(td), "metrics")
    result["metrics"] = {k: float(np.mean(v)) for k, v in metrics.items()}
    after = _log_probs(actor, batch, remove_padding=True)
    result["log_prob_change"] = ((after - before) * mask).sum(-1).tolist()
    Path(out_path).write_text(json.dumps(result))


if __name__ == "__main__":
    main(*sys.argv[1:3])
