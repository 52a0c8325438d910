"""Fixtures of the evaluation tests: a tiny random model in Hugging Face format."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The rehearsal's tiny model, smaller still (random weights, byte-level tokenizer)."""
    from codefu_trainer.run.config import TinyModelConfig
    from codefu_trainer.training.rehearsal.tiny_model import write_tiny_model

    shape = TinyModelConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1)
    return write_tiny_model(shape, tmp_path_factory.mktemp("tiny"))
