"""The attention veRL builds the models with: `codefu-train --check` only passes settings
veRL can carry out in the environment that will load the model."""

from __future__ import annotations

from collections.abc import Callable
from importlib import metadata
from pathlib import Path

import pytest
import yaml

from codefu_trainer.training.cli import main

from ..conftest import CONF

FLASH = "actor_rollout_ref.model.override_config.attn_implementation=flash_attention_2"
SP4 = "actor_rollout_ref.actor.ulysses_sequence_parallel_size=4"


@pytest.fixture
def check_cli(
    gpu_sized_data: Path, capsys: pytest.CaptureFixture[str]
) -> Callable[[list[str]], tuple[int, str, str]]:
    """`codefu-train --check ARGV` on a dataset of GPU batch size: (code, stdout, stderr)."""

    def check(argv: list[str]) -> tuple[int, str, str]:
        code = main(["--config-dir", str(CONF), "--check", f"data.out_dir={gpu_sized_data}", *argv])
        out = capsys.readouterr()
        return code, out.out, out.err

    return check


def _flash_attn_installed() -> bool:
    try:
        metadata.distribution("flash-attn")
    except metadata.PackageNotFoundError:
        return False
    return True


def test_check_of_cluster_local_names_an_attention_this_environment_loads(
    check_cli: Callable[[list[str]], tuple[int, str, str]],
) -> None:
    from transformers import Qwen2Config, Qwen2ForCausalLM

    code, out, _ = check_cli(["cluster=local"])
    assert code == 0
    verl = yaml.safe_load(out.split("# --- veRL ---", 1)[1])
    model = verl["actor_rollout_ref"]["model"]
    impl = model["override_config"]["attn_implementation"]
    assert impl == "sdpa"
    assert model["use_remove_padding"] is True
    assert verl["actor_rollout_ref"]["actor"]["ulysses_sequence_parallel_size"] == 1
    # transformers builds a model with it here (flash_attention_2 would raise ImportError).
    config = Qwen2Config(
        vocab_size=64, hidden_size=64, intermediate_size=64, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=1,
    )  # fmt: skip
    assert (
        Qwen2ForCausalLM._from_config(config, attn_implementation=impl).config._attn_implementation
        == impl
    )


@pytest.mark.skipif(_flash_attn_installed(), reason="flash-attn is installed here")
def test_flash_attention_without_flash_attn_says_what_to_install_or_set(
    check_cli: Callable[[list[str]], tuple[int, str, str]],
) -> None:
    code, _, err = check_cli(["cluster=local", FLASH])
    assert code == 2
    line = err.splitlines()[0]
    assert "flash-attn package, which is not installed here" in line
    assert "attn_implementation=sdpa" in line


def test_ulysses_sequence_parallelism_needs_flash_attention(
    check_cli: Callable[[list[str]], tuple[int, str, str]],
) -> None:
    code, _, err = check_cli(["cluster=sagemaker_p4de", SP4])
    assert code == 2
    assert "Ulysses sequence parallel size 4 needs flash attention" in err
    assert "ulysses_sequence_parallel_size=1" in err


def test_ulysses_sequence_parallelism_needs_remove_padding(
    check_cli: Callable[[list[str]], tuple[int, str, str]],
) -> None:
    # veRL's own validation refuses this one.
    code, _, err = check_cli(
        ["cluster=sagemaker_p4de", FLASH, SP4, "actor_rollout_ref.model.use_remove_padding=false"]
    )
    assert code == 2
    assert "use_remove_padding" in err


def test_the_codefu_setting_passes_where_the_training_image_loads_the_model(
    check_cli: Callable[[list[str]], tuple[int, str, str]],
) -> None:
    # A SageMaker job loads the model in the training image, which has flash-attn: the
    # workstation that submits it needs none.
    code, out, _ = check_cli(["cluster=sagemaker_p4de", FLASH, SP4])
    assert code == 0
    verl = yaml.safe_load(out.split("# --- veRL ---", 1)[1])
    assert verl["actor_rollout_ref"]["model"]["override_config"]["attn_implementation"] == (
        "flash_attention_2"
    )
