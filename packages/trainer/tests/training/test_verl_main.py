"""The veRL dispatch pieces that run without GPUs."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from codefu_trainer.training.clusters.registry import compose_run
from codefu_trainer.training.verl import main as verl_main

from ..conftest import CONF


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vLLM is installed here")
def test_without_vllm_the_local_run_stops_and_says_how_to_install_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = compose_run(CONF, ["cluster=local", f"run.dir={tmp_path}"], gpus_detected=8)
    assert run.verl is not None
    assert verl_main.run(run.verl, run.cfg, run.run_dir) == 3
    assert "codefu-trainer[gpu]" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())
