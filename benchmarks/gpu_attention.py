"""Attention implementations at long sequences: peak memory and time of forward + backward.

Standalone (torch + transformers only), for a GPU machine:

    python benchmarks/gpu_attention.py --out attention.json

builds the decoder of a DeepSeek-R1-Distill-Qwen-7B-shaped model (Qwen2: hidden 3584, 28
attention heads, 4 KV heads, intermediate 18944, bf16, gradient checkpointing as in
conf/verl/grpo.yaml) with `--layers` layers on the GPU, and runs forward + backward of one
batch per sequence length and attention implementation (eager, sdpa, flash_attention_2 when
flash-attn is installed; otherwise it is reported unavailable with transformers' error).
Two layouts per length: `one` sequence of that many tokens, and `packed`: two sequences of
half the length packed into one row with restarting position ids, which is how veRL feeds
the model with use_remove_padding (transformers then builds a mask that keeps the two
apart). The LM head and loss are left out: their memory is the same for every attention.

`--tiny` runs a tiny model of the same architecture on whatever device is there (CPU
included), to check the script itself.
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from pathlib import Path
from typing import Any

import torch
import transformers
from transformers import AutoModel, Qwen2Config

IMPLEMENTATIONS = ("eager", "sdpa", "flash_attention_2")
LAYOUTS = ("one", "packed")
SHAPE_7B = {
    "hidden_size": 3584,
    "intermediate_size": 18944,
    "num_attention_heads": 28,
    "num_key_value_heads": 4,
    "vocab_size": 152064,
    "max_position_embeddings": 32768,
    "rope_theta": 10000.0,
}
SHAPE_TINY = {
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_attention_heads": 2,
    "num_key_value_heads": 1,
    "vocab_size": 256,
    "max_position_embeddings": 4096,
    "rope_theta": 10000.0,
}
GIB = 1024**3


def build(shape: dict[str, Any], layers: int, impl: str, device: torch.device) -> Any:
    """The decoder (no LM head) with random weights, in training mode with checkpointing."""
    config = Qwen2Config(**shape, num_hidden_layers=layers, use_cache=False)
    torch.manual_seed(0)
    with device:
        model = AutoModel.from_config(config, attn_implementation=impl, dtype=torch.bfloat16)
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    return model.train()


def inputs(seq_len: int, layout: str, vocab: int, device: torch.device) -> dict[str, Any]:
    ids = torch.randint(0, vocab, (1, seq_len), device=device)
    if layout == "one":
        positions = torch.arange(seq_len, device=device)
    else:
        half = seq_len // 2
        positions = torch.cat(
            [torch.arange(half, device=device), torch.arange(seq_len - half, device=device)]
        )
    return {"input_ids": ids, "position_ids": positions[None]}


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def step(model: Any, batch: dict[str, Any]) -> None:
    hidden = model(**batch).last_hidden_state
    hidden.float().pow(2).mean().backward()


def measure(model: Any, batch: dict[str, Any], device: torch.device, iters: int) -> dict[str, Any]:
    """Peak memory above the model + its gradients, and mean seconds of fwd + bwd."""
    step(model, batch)  # warm-up; also allocates the gradients
    sync(device)
    cuda = device.type == "cuda"
    if cuda:
        torch.cuda.reset_peak_memory_stats(device)
        base = torch.cuda.memory_allocated(device)
    start = time.perf_counter()
    for _ in range(iters):
        step(model, batch)
    sync(device)
    seconds = (time.perf_counter() - start) / iters
    result: dict[str, Any] = {"status": "ok", "seconds": round(seconds, 4)}
    if cuda:
        peak = torch.cuda.max_memory_allocated(device)
        result["peak_gib"] = round(peak / GIB, 3)
        result["above_model_gib"] = round((peak - base) / GIB, 3)
    return result


def free(device: torch.device) -> None:
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()


def run(args: argparse.Namespace) -> dict[str, Any]:
    device = torch.device(args.device)
    shape = SHAPE_TINY if args.tiny else SHAPE_7B
    report: dict[str, Any] = {
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else str(device),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "shape": {**shape, "num_hidden_layers": args.layers, "dtype": "bfloat16"},
        "unavailable": {},
        "results": [],
    }
    for impl in IMPLEMENTATIONS:
        try:
            model = build(shape, args.layers, impl, device)
        except (ImportError, ValueError) as exc:
            report["unavailable"][impl] = f"{type(exc).__name__}: {exc}"
            continue
        for seq_len in args.seq_lens:
            for layout in LAYOUTS:
                batch = inputs(seq_len, layout, shape["vocab_size"], device)
                row = {"attn": impl, "layout": layout, "seq_len": seq_len}
                try:
                    row.update(measure(model, batch, device, args.iters))
                except torch.cuda.OutOfMemoryError as exc:
                    row.update(status="OOM", error=str(exc).splitlines()[0])
                model.zero_grad(set_to_none=True)
                del batch
                free(device)
                report["results"].append(row)
                print(format_row(row), flush=True)
        del model
        free(device)
    return report


def format_row(row: dict[str, Any]) -> str:
    mem = f"{row['peak_gib']:9.2f} {row['above_model_gib']:9.2f}" if "peak_gib" in row else ""
    seconds = f"{row['seconds']:8.3f}" if row["status"] == "ok" else f"{row['status']:>8}"
    return f"{row['attn']:>18} {row['layout']:>6} {row['seq_len']:>7} {seconds} {mem}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="JSON report path")
    parser.add_argument("--tiny", action="store_true", help="tiny shapes (CPU check)")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--iters", type=int, default=2, help="timed iterations per case")
    parser.add_argument(
        "--seq-lens", type=int, nargs="+", default=None, help="default 4096 8192 16384 24576"
    )
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()
    if args.seq_lens is None:
        args.seq_lens = [64, 128, 256] if args.tiny else [4096, 8192, 16384, 24576]
    header = ("attn", "layout", "seq_len", "fwd+bwd s", "peak GiB", "+base GiB")
    print(" ".join(f"{h:>{w}}" for h, w in zip(header, (18, 6, 7, 8, 9, 9), strict=True)))
    report = run(args)
    for impl, error in report["unavailable"].items():
        print(f"{impl}: unavailable ({error})")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
