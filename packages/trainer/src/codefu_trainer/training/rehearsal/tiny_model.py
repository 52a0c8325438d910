"""A tiny randomly initialised Qwen2-style causal LM and a byte-level tokenizer, built offline.

Nothing is downloaded: the tokenizer's vocabulary is the 256 byte symbols plus chat
special tokens, and the model's weights come from a seeded random initialisation. Used by
the CPU rehearsal to exercise the real loading, generation and training code paths.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from codefu_trainer.run.config import TinyModelConfig

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


# The special tokens build_byte_tokenizer adds after its vocabulary.
SPECIAL_TOKENS = 3


def build_byte_tokenizer(vocab_size: int | None = None) -> Any:
    """A byte-level BPE tokenizer without merges (one token per byte) and a chat template.

    `vocab_size`: the length to pad it to (special tokens included) with byte pairs and
    triples that encoding never produces, so a model of a real vocabulary's size (a
    shape's memory) can be sampled from and every id it draws still decodes.
    """
    from itertools import product

    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    vocab = {symbol: i for i, symbol in enumerate(alphabet)}
    if vocab_size is not None:
        fill = ("".join(chars) for n in (2, 3) for chars in product(alphabet, repeat=n))
        while len(vocab) < vocab_size - SPECIAL_TOKENS:
            vocab[next(fill)] = len(vocab)
    core = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    core.decoder = decoders.ByteLevel()
    tok = PreTrainedTokenizerFast(
        tokenizer_object=core,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        bos_token=None,
        additional_special_tokens=["<|im_start|>"],
    )
    tok.add_special_tokens({"additional_special_tokens": ["<|im_start|>"]})
    tok.chat_template = CHAT_TEMPLATE
    tok.padding_side = "left"
    return tok


def tiny_model_config(
    cfg: TinyModelConfig,
    vocab_size: int,
    pad_token_id: int | None = None,
    eos_token_id: int | None = None,
) -> Any:
    """The Qwen2Config of that shape (tied embeddings)."""
    from transformers import Qwen2Config

    return Qwen2Config(
        vocab_size=vocab_size,
        hidden_size=cfg.hidden_size,
        intermediate_size=cfg.intermediate_size,
        num_hidden_layers=cfg.num_hidden_layers,
        num_attention_heads=cfg.num_attention_heads,
        num_key_value_heads=cfg.num_key_value_heads,
        max_position_embeddings=cfg.max_position_embeddings,
        tie_word_embeddings=True,
        pad_token_id=pad_token_id,
        eos_token_id=eos_token_id,
        bos_token_id=None,
    )


def build_tiny_model(
    cfg: TinyModelConfig, vocab_size: int, pad_token_id: int, eos_token_id: int, seed: int = 0
) -> Any:
    """A random Qwen2ForCausalLM of the given shape (float32, CPU), initialised from `seed`."""
    import torch
    from transformers import Qwen2ForCausalLM

    config = tiny_model_config(cfg, vocab_size, pad_token_id, eos_token_id)
    torch.manual_seed(seed)
    return Qwen2ForCausalLM(config)


def warm_start(
    model: Any,
    tok: Any,
    examples: Sequence[tuple[Sequence[Mapping[str, str]], str]],
    *,
    steps: int,
    lr: float,
    seed: int = 0,
    batch_size: int = 8,
    on_step: Callable[[int, float], object] | None = None,
) -> list[float]:
    """Teacher-force each example's response (+ end of turn) after its chat prompt; returns
    the losses.

    Loss on the response tokens only, AdamW; the examples are taken in epochs, each in an
    order drawn from `seed`. `on_step(steps done, loss)` is called after every step.
    """
    import torch

    if steps <= 0 or not examples:
        return []
    encoded = [
        (
            tok(
                tok.apply_chat_template(list(prompt), tokenize=False, add_generation_prompt=True),
                add_special_tokens=False,
            )["input_ids"],
            tok(response + tok.eos_token, add_special_tokens=False)["input_ids"],
        )
        for prompt, response in examples
    ]
    gen = torch.Generator().manual_seed(seed)
    order: list[int] = []
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    losses: list[float] = []
    for _ in range(steps):
        batch: list[tuple[list[int], list[int]]] = []
        while len(batch) < batch_size:
            if not order:
                order = torch.randperm(len(encoded), generator=gen).tolist()
            batch.append(encoded[order.pop()])
        width = max(len(p) + len(t) for p, t in batch)
        ids = torch.full((batch_size, width), tok.pad_token_id)
        labels = torch.full((batch_size, width), -100)
        mask = torch.zeros((batch_size, width), dtype=torch.long)
        for i, (prefix, target) in enumerate(batch):
            start = width - len(prefix) - len(target)  # left padding, as generation uses
            ids[i, start:] = torch.tensor(prefix + target)
            mask[i, start:] = 1
            labels[i, start + len(prefix) :] = torch.tensor(target)
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(float(loss.detach()))
        if on_step is not None:
            on_step(len(losses), losses[-1])
    model.eval()
    return losses


def write_tiny_model(
    cfg: TinyModelConfig,
    out_dir: Path,
    warmup: Callable[[Any, Any], object] | None = None,
    *,
    seed: int = 0,
    vocab_size: int | None = None,
) -> Path:
    """Build the tokenizer (padded to `vocab_size`, `build_byte_tokenizer`) and the model
    initialised from `seed` (optionally warm-started) and save both in Hugging Face format
    under `out_dir`.

    Idempotent: an existing complete directory is reused (resume loads the same base).
    """
    if (out_dir / "config.json").is_file() and (out_dir / "tokenizer.json").is_file():
        return out_dir
    out_dir.mkdir(parents=True, exist_ok=True)
    tok = build_byte_tokenizer(vocab_size)
    model = build_tiny_model(cfg, len(tok), tok.pad_token_id, tok.eos_token_id, seed)
    if warmup is not None:
        warmup(model, tok)
    model.save_pretrained(out_dir)
    tok.save_pretrained(out_dir)
    return out_dir
