"""Actor-update memory on one GPU: the decoder, the LM head and the log-prob/entropy paths.

For a GPU machine (torch, transformers, Triton):

    python benchmarks/gpu_actor_memory.py --out docs/measurements/actor_memory_h200.json

builds a Qwen2 model of the DeepSeek-R1-Distill-Qwen-7B shape (`--config FILE` for another
`config.json`; `--layers N` for fewer layers) with random bf16 weights on the GPU, sdpa
attention and gradient checkpointing (non-reentrant), in training mode and unsharded, and runs
one actor step per case the way veRL 0.9.1's FSDP engine does with `use_remove_padding`: one
packed row of T tokens (sequences of at most `--max-seq` tokens, position ids restarting per
sequence), decoder, then one of the log-prob paths:

- `off`: LM head → logits (T, vocab) in bf16 → log-probs with flash-attn's Triton
  cross-entropy, gradient written in place (veRL when no entropy is computed);
- `logits`: the same logits, entropy with veRL's `entropy_from_logits` and the cross-entropy
  without the in-place gradient (veRL when `entropy_coeff != 0`: the shipped config);
- `fused_torch`, `fused_triton`: no logits tensor; veRL's fused kernels of
  `actor_rollout_ref.model.use_fused_kernels` (its torch and triton backends) on the hidden
  states and the LM head's weight, log-probs and entropy together;

then loss = -mean(logp * adv) - 0.001 * mean(entropy) and backward. Three forward-only cases
stand for the log-prob passes: `ref` (reference model: logits path, no entropy, no grad),
`old` (the actor's old log-probs: logits path with entropy, no grad) and `old_fused` (the
same with veRL's fused kernels, torch backend). The old log-probs with fused kernels at 8k,
16k and 32k tokens: `--paths '' --extra old_fused@8192,old_fused@16384,old_fused@32768`.

The figure per case is `torch.cuda.max_memory_allocated()` minus the allocation before the
step, when the weights and their bf16 gradients are already allocated (a warm-up step made
them): what the activations and the log-prob path add above weights and grads, on one GPU.
Results are written after every case, so a run cut short keeps what it measured.

flash-attn's cross-entropy is imported as `flash_attn.ops.triton.cross_entropy` (one source
file is enough) and veRL's modules from the `verl` package; where veRL's package cannot be
imported whole (no Ray on a bare GPU machine), its modules are loaded without running the
package's `__init__` files. `--tiny` runs a tiny model on whatever device is there (CPU
included), to check the script: there the cases fall back to torch's own log-softmax.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import sys
import time
import types
from pathlib import Path
from typing import Any

import torch
import transformers
from transformers import AutoModelForCausalLM, Qwen2Config

SHAPE_7B: dict[str, Any] = {
    "architectures": ["Any"],
    "hidden_size": 3584,
    "intermediate_size": 18944,
    "num_hidden_layers": 28,
    "num_attention_heads": 28,
    "num_key_value_heads": 4,
    "vocab_size": 152064,
    "max_position_embeddings": 131072,
    "rope_theta": 10000.0,
    "tie_word_embeddings": False,
}
SHAPE_TINY: dict[str, Any] = {
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "vocab_size": 512,
    "max_position_embeddings": 4096,
    "rope_theta": 10000.0,
    "tie_word_embeddings": False,
}
TRAIN_PATHS = ("off", "logits", "fused_torch", "fused_triton")
FORWARD_PATHS = ("ref", "old", "old_fused")
ENTROPY_COEFF = 0.001
GIB = 1024**3


def load_verl(name: str) -> types.ModuleType:
    """veRL's module `name`; without running veRL's package `__init__`s where they cannot run."""
    try:
        return importlib.import_module(name)
    except ImportError:
        pass
    spec = importlib.util.find_spec("verl") if "verl" not in sys.modules else None
    root = (
        Path(spec.submodule_search_locations[0])
        if spec and spec.submodule_search_locations
        else None
    )
    if root is None:
        raise ImportError(f"{name}: veRL is not installed")
    parts = name.split(".")
    for depth in range(1, len(parts)):
        package = ".".join(parts[:depth])
        if package in sys.modules and getattr(sys.modules[package], "__path__", None):
            continue
        module = types.ModuleType(package)
        module.__path__ = [str(root.joinpath(*parts[1:depth]))]
        sys.modules[package] = module
    return importlib.import_module(name)


class LogProbPaths:
    """The log-prob and entropy functions veRL calls, or torch's own where they are missing."""

    def __init__(self) -> None:
        self.notes: dict[str, str] = {}
        try:
            from flash_attn.ops.triton.cross_entropy import cross_entropy_loss

            self.cross_entropy: Any = cross_entropy_loss
        except ImportError as exc:
            self.cross_entropy = None
            self.notes["flash_attn_cross_entropy"] = f"unavailable ({exc}); torch log_softmax"
        try:
            self.entropy_from_logits: Any = load_verl(
                "verl.utils.torch_functional"
            ).entropy_from_logits
        except ImportError as exc:
            self.entropy_from_logits = None
            self.notes["verl_entropy_from_logits"] = f"unavailable ({exc})"
        self.fused: dict[str, Any] = {}
        try:
            self.fused["fused_torch"] = load_verl(
                "verl.utils.experimental.torch_functional"
            ).FusedLinearForPPO(impl_backend="torch")
        except ImportError as exc:
            self.notes["fused_torch"] = f"unavailable ({exc})"
        try:
            self.fused["fused_triton"] = load_verl("verl.utils.kernel.linear_cross_entropy")
        except ImportError as exc:
            self.notes["fused_triton"] = f"unavailable ({exc})"

    def log_probs(self, logits: torch.Tensor, labels: torch.Tensor, inplace: bool) -> torch.Tensor:
        if self.cross_entropy is not None and logits.is_cuda:
            return -self.cross_entropy(logits, labels, inplace_backward=inplace)[0]
        logp = torch.log_softmax(logits.float(), dim=-1)
        return logp.gather(-1, labels[:, None]).squeeze(-1)

    def entropy(self, logits: torch.Tensor) -> torch.Tensor:
        if self.entropy_from_logits is None:
            raise RuntimeError("veRL's entropy_from_logits is unavailable")
        return self.entropy_from_logits(logits)

    def fused_step(
        self, path: str, hidden: torch.Tensor, weight: torch.Tensor, labels: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        if path not in self.fused:
            raise RuntimeError(f"{path}: {self.notes.get(path, 'unavailable')}")
        if path == "fused_torch":
            return self.fused[path](hidden, weight, labels, temperature=1.0)
        logp, entropy = self.fused[path].linear_cross_entropy(hidden, weight, labels, 1.0, "none")
        return logp, entropy


def packed_positions(
    tokens: int, max_seq: int, device: torch.device
) -> tuple[torch.Tensor, list[int]]:
    """Position ids of one row packing sequences of at most `max_seq` tokens."""
    lengths = [max_seq] * (tokens // max_seq)
    if tokens % max_seq:
        lengths.append(tokens % max_seq)
    positions = torch.cat([torch.arange(n, device=device) for n in lengths])
    return positions[None], lengths


def build(shape: dict[str, Any], device: torch.device, dtype: torch.dtype = torch.bfloat16) -> Any:
    """The model with random weights in `dtype`, sdpa, gradient checkpointing, training mode."""
    config = Qwen2Config(
        **{k: v for k, v in shape.items() if k != "architectures"}, use_cache=False
    )
    torch.manual_seed(0)
    with device:
        model = AutoModelForCausalLM.from_config(config, attn_implementation="sdpa", dtype=dtype)
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    return model.train()


def step(model: Any, paths: LogProbPaths, path: str, tokens: int, max_seq: int) -> None:
    """One actor step (or one forward-only log-prob pass) of `path` over `tokens` tokens."""
    device = model.device
    vocab = model.config.vocab_size
    positions, _ = packed_positions(tokens, max_seq, device)
    ids = torch.randint(0, vocab, (1, tokens), device=device)
    labels = torch.roll(ids, shifts=-1, dims=1)[0]
    adv = torch.randn(tokens, device=device)
    forward_only = path in FORWARD_PATHS
    with torch.set_grad_enabled(not forward_only):
        hidden = model.model(input_ids=ids, position_ids=positions).last_hidden_state[0]
        entropy = None
        if path.startswith("fused") or path == "old_fused":
            kernel = "fused_torch" if path == "old_fused" else path
            logp, entropy = paths.fused_step(kernel, hidden, model.lm_head.weight, labels)
        else:
            logits = model.lm_head(hidden)
            if path in ("logits", "old"):
                entropy = paths.entropy(logits)
            logp = paths.log_probs(logits, labels, inplace=path == "off")
        if forward_only:
            return
        loss = -(logp.float() * adv).mean()
        if entropy is not None:
            loss = loss - ENTROPY_COEFF * entropy.float().mean()
    loss.backward()


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def measure(
    model: Any, paths: LogProbPaths, path: str, tokens: int, max_seq: int
) -> dict[str, Any]:
    device = model.device
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
    start = time.perf_counter()
    try:
        step(model, paths, path, tokens, max_seq)
        sync(device)
    except torch.cuda.OutOfMemoryError as exc:
        return {"status": "OOM", "error": str(exc).splitlines()[0]}
    except RuntimeError as exc:
        return {"status": "error", "error": str(exc).splitlines()[0]}
    seconds = time.perf_counter() - start
    out: dict[str, Any] = {"status": "ok", "seconds": round(seconds, 3)}
    if device.type == "cuda":
        out["above_weights_and_grads_gib"] = round(
            (torch.cuda.max_memory_allocated() - base) / GIB, 3
        )
        out["weights_and_grads_gib"] = round(base / GIB, 3)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="JSON file to write")
    parser.add_argument("--config", type=Path, help="a model's config.json (default: the 7B shape)")
    parser.add_argument("--layers", type=int, help="decoder layers (default: the config's)")
    parser.add_argument("--tokens", default="16384,24576,32768", help="tokens per micro-batch")
    parser.add_argument("--paths", default="off,logits,fused_torch", help=",".join(TRAIN_PATHS))
    parser.add_argument(
        "--extra",
        default="fused_triton@32768,ref@32768,old@32768",
        help="further PATH@TOKENS cases (forward-only: ref, old, old_fused)",
    )
    parser.add_argument("--max-seq", type=int, default=24576, help="longest sequence in a row")
    parser.add_argument("--tiny", action="store_true", help="a tiny model, to check the script")
    args = parser.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if args.tiny:
        shape = dict(SHAPE_TINY)
        tokens = [256, 384]
        max_seq = 256
    else:
        shape = json.loads(args.config.read_text()) if args.config else dict(SHAPE_7B)
        tokens = [int(t) for t in args.tokens.split(",") if t]
        max_seq = args.max_seq
    if args.layers:
        shape["num_hidden_layers"] = args.layers
    cases = [(p, t) for t in tokens for p in args.paths.split(",") if p]
    for item in args.extra.split(",") if args.extra else []:
        path, _, count = item.partition("@")
        cases.append((path, max(tokens) if args.tiny else int(count)))

    paths = LogProbPaths()
    model = build(shape, device)
    step(model, paths, "off", min(tokens), max_seq)  # warm-up: allocates the gradients
    sync(device)
    report: dict[str, Any] = {
        "device": torch.cuda.get_device_name() if device.type == "cuda" else "cpu",
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "attention": "sdpa",
        "gradient_checkpointing": True,
        "max_seq": max_seq,
        "shape": {k: v for k, v in shape.items() if k != "architectures"},
        "notes": paths.notes,
        "results": [],
    }
    if device.type == "cuda":
        report["gpu_total_gib"] = round(torch.cuda.get_device_properties(0).total_memory / GIB, 2)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for path, count in cases:
        _, lengths = packed_positions(count, max_seq, torch.device("cpu"))
        result = {"path": path, "tokens": count, "sequences": lengths}
        result.update(measure(model, paths, path, count, max_seq))
        model.zero_grad(set_to_none=False)
        report["results"].append(result)
        args.out.write_text(json.dumps(report, indent=1) + "\n")
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
