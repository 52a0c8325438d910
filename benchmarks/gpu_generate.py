"""transformers' `generate` at the GPU smoke's shape, timed bare and as the `hf` rollout calls it.

For a GPU machine (torch, transformers):

    python benchmarks/gpu_generate.py --out runs/generate.json

builds a Qwen2 model of the smoke's shape (Qwen2.5-0.5B's: `SMOKE_SHAPE`, the smoke's
`stages.GPU_SHAPE` and vocabulary) with random weights in bf16 on the first GPU, sdpa
attention, in eval mode, and times one step's batch of the smoke: 4 prompts × 4 responses,
left-padded to the longest, prompts of the shipped sample's first four problems' lengths
(`--prompt-tokens`), `--new-tokens` sampled tokens at temperature 1 (random weights never
sample EOS: every row runs to the limit). Cases, each on the same model:

- `prefill`: `max_new_tokens=1` (the prompt's forward alone);
- `bare`: `model.generate` with sampling only;
- `server`: as `training/verl/cpu/rollout.py`'s server calls it (`return_dict_in_generate`,
  `output_logits`) and then its per-position log-probs;
- `bare_batch4`: one prompt's 4 responses (a batch split by late arrivals, as the server's
  earlier 50 ms window could split a step).

Per case: seconds, ms per new token (also after the prefill, for the cases of its batch), peak
allocated memory, and on a GPU
how many times the host waited for the GPU (`torch.cuda.set_sync_debug_mode`'s warnings, per
new token). The report also records what could make generation slow: the model's dtype and
device, eval mode, gradient checkpointing, the attention implementation and whether the KV
cache is on. `--tiny` runs a tiny model on whatever device is there (CPU included), to check
the script. Results are written after every case.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import torch
import transformers
from transformers import Qwen2Config, Qwen2ForCausalLM

# The GPU smoke's model (training/smoke/stages.py: GPU_SHAPE, GPU_VOCAB).
SMOKE_SHAPE: dict[str, Any] = {
    "hidden_size": 896,
    "intermediate_size": 4864,
    "num_hidden_layers": 24,
    "num_attention_heads": 14,
    "num_key_value_heads": 2,
    "max_position_embeddings": 32768,
    "vocab_size": 151936,
    "tie_word_embeddings": True,
}
TINY_SHAPE: dict[str, Any] = {
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "max_position_embeddings": 4096,
    "vocab_size": 512,
    "tie_word_embeddings": True,
}
# The shipped sample's first four problems as the smoke's step 1 sends them (chat template and
# byte tokens); each gets 4 responses.
PROMPT_TOKENS = (960, 750, 590, 810)
RESPONSES_PER_PROMPT = 4
CASES = ("prefill", "bare", "server", "bare_batch4")


def build_model(shape: dict[str, Any], device: torch.device) -> Any:
    config = Qwen2Config(**shape, pad_token_id=0, eos_token_id=1, bos_token_id=None)
    config._attn_implementation = "sdpa"
    torch.manual_seed(0)
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    with torch.device(device):
        model = Qwen2ForCausalLM(config)
    return model.to(dtype).eval()


def batch(lengths: list[int], repeat: int, vocab: int, device: torch.device) -> tuple[Any, Any]:
    """Left-padded prompts of `lengths` tokens (random ids), each `repeat` times."""
    rows = [n for n in lengths for _ in range(repeat)]
    width = max(rows)
    ids = torch.zeros((len(rows), width), dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    gen = torch.Generator().manual_seed(1)
    for i, n in enumerate(rows):
        ids[i, width - n :] = torch.randint(2, vocab, (n,), generator=gen)
        mask[i, width - n :] = 1
    return ids.to(device), mask.to(device)


def run_case(model: Any, case: str, lengths: list[int], new_tokens: int) -> dict[str, Any]:
    device = model.device
    repeat = RESPONSES_PER_PROMPT
    if case == "bare_batch4":
        lengths, repeat = lengths[:1], RESPONSES_PER_PROMPT
    ids, mask = batch(lengths, repeat, model.config.vocab_size, device)
    wanted = 1 if case == "prefill" else new_tokens
    kwargs: dict[str, Any] = {
        "do_sample": True,
        "temperature": 1.0,
        "top_p": 1.0,
        "top_k": None,
        "max_new_tokens": wanted,
        # Random weights may draw EOS (id 1): every row runs to the end, as in the smoke.
        "min_new_tokens": wanted,
        "eos_token_id": 1,
        "pad_token_id": 0,
    }
    if case == "server":
        kwargs.update(return_dict_in_generate=True, output_logits=True)
    on_gpu = device.type == "cuda"
    if on_gpu:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated() if on_gpu else 0
    syncs = 0
    start = time.monotonic()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if on_gpu:
            torch.cuda.set_sync_debug_mode("warn")
        try:
            with torch.no_grad():
                out = model.generate(input_ids=ids, attention_mask=mask, **kwargs)
                if case == "server":
                    new = out.sequences[:, ids.shape[1] :]
                    log_probs = [
                        torch.log_softmax(step.float(), -1).gather(-1, new[:, t : t + 1])
                        for t, step in enumerate(out.logits)
                    ]
                    torch.cat(log_probs, dim=1).cpu()
            if on_gpu:
                torch.cuda.synchronize()
        finally:
            if on_gpu:
                torch.cuda.set_sync_debug_mode("default")
        syncs = sum(1 for w in caught if "synchroniz" in str(w.message).lower())
    seconds = time.monotonic() - start
    sequences = out.sequences if case == "server" else out
    generated = int(sequences.shape[1] - ids.shape[1])
    result: dict[str, Any] = {
        "case": case,
        "batch": int(ids.shape[0]),
        "prompt_width": int(ids.shape[1]),
        "new_tokens": generated,
        "seconds": round(seconds, 3),
        "peak_above_model_gib": round((torch.cuda.max_memory_allocated() - before) / 2**30, 3)
        if on_gpu
        else None,
        "host_waits": syncs if on_gpu else None,
    }
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="the JSON report")
    parser.add_argument("--new-tokens", type=int, default=128, help="sampled tokens per row")
    parser.add_argument(
        "--prompt-tokens",
        default=",".join(map(str, PROMPT_TOKENS)),
        help="the prompts' lengths (each gets 4 responses)",
    )
    parser.add_argument("--cases", default=",".join(CASES), help=f"from {', '.join(CASES)}")
    parser.add_argument("--tiny", action="store_true", help="a tiny model, any device")
    args = parser.parse_args(argv)
    device = torch.device("cuda", 0) if torch.cuda.is_available() else torch.device("cpu")
    if device.type == "cpu" and not args.tiny:
        print("gpu_generate: no GPU here; --tiny checks the script on the CPU.", file=sys.stderr)
        return 2
    shape = TINY_SHAPE if args.tiny else SMOKE_SHAPE
    lengths = [int(n) for n in args.prompt_tokens.split(",")]
    if args.tiny:
        lengths = [max(4, n // 32) for n in lengths]
    model = build_model(shape, device)
    report: dict[str, Any] = {
        "device": torch.cuda.get_device_name(0) if device.type == "cuda" else "cpu",
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "shape": shape,
        "dtype": str(next(model.parameters()).dtype),
        "eval_mode": not model.training,
        "gradient_checkpointing": bool(model.is_gradient_checkpointing),
        "attention": model.config._attn_implementation,
        "use_cache": bool(model.generation_config.use_cache),
        "prompt_tokens": lengths,
        "results": [],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    prefill = None
    for case in args.cases.split(","):
        result = run_case(model, case, lengths, args.new_tokens)
        new = max(1, result["new_tokens"])
        result["ms_per_token"] = round(1000 * result["seconds"] / new, 2)
        if case == "prefill":
            prefill = result["seconds"]
        elif prefill is not None and case in ("bare", "server"):  # the prefill's batch
            decode = max(0.0, result["seconds"] - prefill)
            result["ms_per_token_after_prefill"] = round(1000 * decode / new, 2)
        if result["host_waits"] is not None and result["new_tokens"]:
            result["host_waits_per_token"] = round(result["host_waits"] / result["new_tokens"], 2)
        report["results"].append(result)
        args.out.write_text(json.dumps(report, indent=1) + "\n")
        print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
