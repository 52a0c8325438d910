"""veRL's FSDP actor on two CPU ranks whose checkpoint roots are separate directories, as on
two hosts (run by test_export; gloo, veRL's CPU platform from codefu_trainer.training.verl.cpu).

`python two_host_checkpoint.py save SPEC.json`: both ranks build the actor from the tiny
model, move their own parameter shards (so the checkpoint differs from the base model),
save veRL's checkpoint of step 1, each into `<host_r>/checkpoints`; rank 0 then writes what
veRL's trainer process writes (data.pt and the tracker) on host 0. Rank 0 writes the full
state dict the ranks hold to `<out>/saved.pt`.

`python two_host_checkpoint.py resume SPEC.json`: both ranks build the actor from the base
model again and load the step the tracker of their own host names (veRL's load_checkpoint,
model, optimizer and extra state); rank 0 writes the full state dict to `<out>/resumed.pt`.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

WORLD = 2


def _actor_config(spec: dict) -> Any:
    from omegaconf import OmegaConf

    from codefu_trainer.training.verl.config import compose_verl

    verl = compose_verl(Path(spec["conf_dir"]), spec["overrides"])
    return OmegaConf.create(OmegaConf.to_container(verl.actor_rollout_ref, resolve=True))


def _build(spec: dict) -> Any:
    from verl.workers.engine import EngineRegistry
    from verl.workers.engine.fsdp.transformer_impl import FSDPEngineWithLMHead
    from verl.workers.engine_workers import ActorRolloutRefWorker

    # veRL registers its FSDP engine for cuda and npu only: the same engine, for cpu.
    EngineRegistry.register(model_type="language_model", backend=["fsdp", "fsdp2"], device="cpu")(
        FSDPEngineWithLMHead
    )
    worker = ActorRolloutRefWorker(config=_actor_config(spec), role="actor")
    worker.init_model()
    return worker


def _full_state(worker: Any) -> dict:
    from verl.utils.fsdp_utils import get_fsdp_full_state_dict

    state = get_fsdp_full_state_dict(
        worker.actor.engine.module, offload_to_cpu=True, rank0_only=True
    )
    return {k: v.detach().clone() for k, v in state.items()}


def _rank(rank: int, phase: str, spec: dict) -> None:
    os.environ.update(RANK=str(rank), LOCAL_RANK="0", WORLD_SIZE=str(WORLD))
    import torch
    import torch.distributed as dist
    from verl.plugin.platform.platform_manager import set_platform

    from codefu_trainer.training.verl.cpu.platform import PlatformCPU

    # veRL's CPU platform (its device module restores the CPU RNG state on load).
    set_platform(PlatformCPU())

    dist.init_process_group("gloo", rank=rank, world_size=WORLD)
    torch.manual_seed(0)
    worker = _build(spec)
    root = Path(spec["hosts"][rank]) / "checkpoints"
    out = Path(spec["out"])
    if phase == "save":
        with torch.no_grad():
            for param in worker.actor.engine.module.parameters():
                local = param.to_local() if hasattr(param, "to_local") else param
                local.add_(0.25 * (rank + 1))  # each rank moves only the shard it holds
        worker.save_checkpoint(str(root / "global_step_1" / "actor"), global_step=1)
        state = _full_state(worker)
        if rank == 0:
            torch.save(state, out / "saved.pt")
            torch.save({"dataloader": "state"}, root / "global_step_1" / "data.pt")
            (root / "latest_checkpointed_iteration.txt").write_text("1")
    else:
        step = int((root / "latest_checkpointed_iteration.txt").read_text())
        worker.load_checkpoint(str(root / f"global_step_{step}" / "actor"))
        state = _full_state(worker)
        if rank == 0:
            torch.save(state, out / "resumed.pt")
    dist.barrier()
    dist.destroy_process_group()


def main(phase: str, spec_path: str) -> None:
    import torch.multiprocessing as mp

    spec = json.loads(Path(spec_path).read_text())
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(spec["port"]))
    mp.spawn(_rank, args=(phase, spec), nprocs=WORLD, join=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
