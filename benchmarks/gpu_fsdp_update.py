"""A whole actor update under FSDP2 on one GPU: states, gathered units, activations, logits.

For a GPU machine (torch, transformers, Triton):

    python benchmarks/gpu_fsdp_update.py --layers 8 --out docs/measurements/fsdp_update_h200.json

wraps a Qwen2 model of the DeepSeek-R1-Distill-Qwen-7B shape (`--layers` decoder layers) the way
veRL 0.9.1's FSDP2 engine does (`verl/utils/fsdp_utils.py` `apply_fsdp2`: `fully_shard` on each
decoder layer, then on the root; fp32 parameters, mixed precision bf16 compute with fp32
gradient reduction; gradient checkpointing; AdamW), in a one-process group, and runs actor
steps on one packed row of `--tokens` tokens: forward to the logits, log-probs through
flash-attn's Triton cross-entropy, entropy with veRL's `entropy_from_logits` for path
`logits` (none for `off`), backward, optimizer step. A warm-up step creates Adam's states; the
figure per case is the peak of `torch.cuda.max_memory_allocated()` over a second step, with
everything the step holds (fp32 params, fp32 grads, Adam states, the gathered bf16 units, the
activations and the logits path): what the memory plan's "actor update" phase counts for one
GPU (`fsdp_size` 1). One GPU cannot shard, so the plan's per-rank division is not exercised;
its parts are.

The cross-entropy and veRL modules are imported as benchmarks/gpu_actor_memory.py does.
`--tiny` runs a tiny model on the CPU with gloo, to check the script.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
import transformers

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_actor_memory import SHAPE_7B, SHAPE_TINY, LogProbPaths, packed_positions
from gpu_actor_memory import build as build_model

GIB = 1024**3
ENTROPY_COEFF = 0.001


def build(shape: dict[str, Any], device: torch.device) -> Any:
    """fp32 weights wrapped as veRL's apply_fsdp2 wraps them (bf16 compute, fp32 reduce)."""
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    model = build_model(shape, device, dtype=torch.float32)
    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for layer in model.model.layers:
        fully_shard(layer, mp_policy=policy)
    fully_shard(model, mp_policy=policy)
    return model.train()


def step(
    model: Any, optim: Any, paths: LogProbPaths, path: str, *, tokens: int, max_seq: int
) -> None:
    device = next(model.parameters()).device
    positions, _ = packed_positions(tokens, max_seq, device)
    ids = torch.randint(0, model.config.vocab_size, (1, tokens), device=device)
    labels = torch.roll(ids, shifts=-1, dims=1)[0]
    adv = torch.randn(tokens, device=device)
    logits = model(input_ids=ids, position_ids=positions).logits[0]
    entropy = paths.entropy(logits) if path == "logits" else None
    logp = paths.log_probs(logits, labels, inplace=path == "off")
    loss = -(logp.float() * adv).mean()
    if entropy is not None:
        loss = loss - ENTROPY_COEFF * entropy.float().mean()
    loss.backward()
    optim.step()
    optim.zero_grad(set_to_none=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--tokens", type=int, default=32768)
    parser.add_argument("--paths", default="off,logits")
    parser.add_argument("--max-seq", type=int, default=24576)
    parser.add_argument("--tiny", action="store_true")
    args = parser.parse_args()

    cuda = torch.cuda.is_available() and not args.tiny
    device = torch.device("cuda" if cuda else "cpu")
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    dist.init_process_group("nccl" if cuda else "gloo", rank=0, world_size=1)
    shape = dict(SHAPE_TINY if args.tiny else SHAPE_7B)
    shape["num_hidden_layers"] = 2 if args.tiny else args.layers
    tokens, max_seq = (384, 256) if args.tiny else (args.tokens, args.max_seq)

    paths = LogProbPaths()
    model = build(shape, device)
    optim = torch.optim.AdamW(model.parameters(), lr=1e-6)
    report: dict[str, Any] = {
        "device": torch.cuda.get_device_name() if cuda else "cpu",
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "attention": "sdpa",
        "fsdp": "fully_shard per decoder layer + root, fp32 params, bf16 compute, fp32 reduce",
        "optimizer": "AdamW",
        "shape": shape,
        "notes": paths.notes,
        "results": [],
    }
    for path in args.paths.split(","):
        step(
            model, optim, paths, path, tokens=tokens, max_seq=max_seq
        )  # warm-up: Adam's states exist after
        gc.collect()
        if cuda:
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
            resident = torch.cuda.memory_allocated()
        start = time.perf_counter()
        try:
            step(model, optim, paths, path, tokens=tokens, max_seq=max_seq)
            if cuda:
                torch.cuda.synchronize()
            result: dict[str, Any] = {"path": path, "tokens": tokens, "status": "ok"}
            result["seconds"] = round(time.perf_counter() - start, 3)
            if cuda:
                result["resident_between_steps_gib"] = round(resident / GIB, 3)
                result["peak_gib"] = round(torch.cuda.max_memory_allocated() / GIB, 3)
        except torch.cuda.OutOfMemoryError as exc:
            result = {"path": path, "tokens": tokens, "status": "OOM", "error": str(exc)[:300]}
        _, lengths = packed_positions(tokens, max_seq, torch.device("cpu"))
        result["sequences"] = lengths
        report["results"].append(result)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1) + "\n")
        print(json.dumps(result), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
