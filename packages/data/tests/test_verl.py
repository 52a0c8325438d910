"""veRL's RL dataset class reads a prepared tier (tokenizer built offline, no downloads)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from codefu_data.config import DataConfig
from codefu_data.prepare import prepare

CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def tiny_tokenizer(corpus: list[str]) -> object:
    """A byte-level BPE tokenizer trained on `corpus` in memory, with a ChatML template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<|im_start|>", "<|im_end|>", "<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(corpus, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>"
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


@pytest.mark.slow
def test_rlhf_dataset_loads_a_tier(
    raw_dir: Path, tmp_path: Path, make_config: Callable[..., DataConfig]
) -> None:
    pytest.importorskip("verl")
    from omegaconf import OmegaConf
    from verl.utils.dataset.rl_dataset import RLHFDataset

    out = prepare(make_config(raw_dir, tmp_path / "out"), progress=False).out_dir
    train = out / "hard" / "train.parquet"
    import pyarrow.parquet as pq

    rows = pq.read_table(train).to_pylist()
    assert rows
    tokenizer = tiny_tokenizer([r["prompt"][0]["content"] for r in rows[:20]])
    config = OmegaConf.create(
        {
            "prompt_key": "prompt",
            "max_prompt_length": 100_000,
            "filter_overlong_prompts": True,
            "filter_overlong_prompts_workers": 1,
            "truncation": "error",
            "cache_dir": str(tmp_path / "verl-cache"),
        }
    )
    dataset = RLHFDataset(data_files=[str(train)], tokenizer=tokenizer, config=config)
    assert len(dataset) == len(rows)
    item = dataset[0]
    assert item["raw_prompt"][0]["role"] == "user"
    assert item["raw_prompt"][0]["content"] == rows[0]["prompt"][0]["content"]
    assert item["data_source"] == "code_contests"
    assert item["reward_model"]["ground_truth"]["name"] == rows[0]["extra_info"]["name"]
    assert item["index"] == 0
    # A tight prompt budget makes veRL's own length filter drop everything: it tokenized our chat.
    short = OmegaConf.merge(config, {"max_prompt_length": 8})
    assert len(RLHFDataset(data_files=[str(train)], tokenizer=tokenizer, config=short)) == 0
