"""An offline byte-level BPE tokenizer (no downloads), saved in Hugging Face format."""

from __future__ import annotations

from pathlib import Path


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
