"""An offline byte-level BPE tokenizer (no downloads), saved in Hugging Face format, and the
veRL token batch the reward-loop tests build with it."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def build_tokenizer(directory: Path, corpus: list[str]) -> Path:
    """Train a tiny byte-level BPE on ``corpus`` and save it where AutoTokenizer can load it."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600,
        special_tokens=["<pad>", "<eos>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(corpus, trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>")
    directory.mkdir(parents=True, exist_ok=True)
    fast.save_pretrained(str(directory))
    return directory


def token_batch(
    tokenizer: Any,
    prompts: list[str],
    responses: list[str],
    non_tensors: dict[str, Any],
    *,
    prompt_len: int,
    response_len: int = 256,
) -> tuple[Any, list[int]]:
    """A veRL DataProto as the rollout leaves it: prompts left-padded, responses right-padded
    and ended by EOS; with each response's valid length (its last token carries the score)."""
    import torch
    from verl import DataProto

    n = len(responses)
    pad = tokenizer.pad_token_id
    prompt_ids = torch.full((n, prompt_len), pad, dtype=torch.long)
    response_ids = torch.full((n, response_len), pad, dtype=torch.long)
    attention = torch.zeros((n, prompt_len + response_len), dtype=torch.long)
    lengths = []
    for i, (prompt, text) in enumerate(zip(prompts, responses, strict=True)):
        p = tokenizer(prompt)["input_ids"][-prompt_len:]
        r = [*tokenizer(text)["input_ids"], tokenizer.eos_token_id]
        assert len(r) < response_len, "a response must fit: the tests read its last valid token"
        prompt_ids[i, prompt_len - len(p) :] = torch.tensor(p)
        attention[i, prompt_len - len(p) : prompt_len] = 1
        response_ids[i, : len(r)] = torch.tensor(r)
        attention[i, prompt_len : prompt_len + len(r)] = 1
        lengths.append(len(r))
    batch = DataProto.from_dict(
        tensors={
            "prompts": prompt_ids,
            "responses": response_ids,
            "input_ids": torch.cat([prompt_ids, response_ids], dim=1),
            "attention_mask": attention,
        },
        non_tensors=non_tensors,
    )
    return batch, lengths
