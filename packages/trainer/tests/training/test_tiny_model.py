"""The offline tiny model and byte-level tokenizer used by the rehearsal."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from codefu_trainer.run.config import TinyModelConfig
from codefu_trainer.training.rehearsal.tiny_model import build_byte_tokenizer, write_tiny_model

_TOK = build_byte_tokenizer()


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
def test_byte_tokenizer_round_trips_any_text(text: str) -> None:
    """Every text decodes back to itself; one token per UTF-8 byte, except that a special
    token's literal string (`<|im_end|>`, ...) is that special token, as in Qwen's tokenizers:
    the chat template relies on it."""
    ids = _TOK(text, add_special_tokens=False)["input_ids"]
    assert _TOK.decode(ids) == text
    parts = re.split("(" + "|".join(map(re.escape, _TOK.all_special_tokens)) + ")", text)
    specials, plain = parts[1::2], "".join(parts[0::2])
    assert len(ids) == len(specials) + len(plain.encode("utf-8"))


def test_a_special_token_string_in_the_text_is_one_token() -> None:
    ids = _TOK("a<|endoftext|>b", add_special_tokens=False)["input_ids"]
    assert ids == [_TOK.convert_tokens_to_ids(t) for t in ("a", "<|endoftext|>", "b")]


def test_chat_template_ends_with_the_assistant_turn() -> None:
    text = _TOK.apply_chat_template(
        [{"role": "user", "content": "a+b"}], tokenize=False, add_generation_prompt=True
    )
    assert text == "<|im_start|>user\na+b<|im_end|>\n<|im_start|>assistant\n"


def test_tiny_model_saves_loads_and_generates(tmp_path: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    cfg = TinyModelConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1)
    path = write_tiny_model(cfg, tmp_path / "m")
    assert write_tiny_model(cfg, path) == path  # reused, not rebuilt
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path)
    assert model.config.vocab_size == len(tok)
    ids = tok("int main", return_tensors="pt")
    out = model.generate(**ids, max_new_tokens=5, do_sample=True, pad_token_id=tok.pad_token_id)
    assert out.shape[1] <= ids["input_ids"].shape[1] + 5
    again = AutoModelForCausalLM.from_pretrained(write_tiny_model(cfg, tmp_path / "n"))
    for a, b in zip(model.parameters(), again.parameters(), strict=True):
        assert torch.equal(a, b)  # same seed, same weights


def test_warm_start_teaches_the_response() -> None:
    from codefu_trainer.training.rehearsal.tiny_model import build_tiny_model, warm_start

    tok = build_byte_tokenizer()
    model = build_tiny_model(
        TinyModelConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1),
        len(tok),
        tok.pad_token_id,
        tok.eos_token_id,
    )
    prompts = [[{"role": "user", "content": f"problem {i}"}] for i in range(3)]
    examples = [(p, "<code>int main(){}</code>") for p in prompts]
    reported: list[tuple[int, float]] = []
    losses = warm_start(
        model, tok, examples, steps=25, lr=1e-2, seed=1, on_step=lambda *a: reported.append(a)
    )
    assert len(losses) == 25
    assert reported == list(enumerate(losses, start=1))  # what the progress line shows
    assert losses[-1] < 0.5 * losses[0]
    assert warm_start(model, tok, examples, steps=0, lr=1e-2) == []
