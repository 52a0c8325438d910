"""The reward side installs and imports without the GPU training stack."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("torch", "verl", "transformers", "vllm", "trl", "datasets", "mlflow", "matplotlib")
REWARD_MODULES = (
    "codefu_trainer.reward",
    "codefu_trainer.reward.cli",
    "codefu_trainer.reward.config",
    "codefu_trainer.reward.extract",
    "codefu_trainer.reward.judge_pool",
    "codefu_trainer.reward.rules",
    "codefu_trainer.reward.service",
)


def test_importing_the_reward_loads_no_training_stack() -> None:
    code = (
        "import importlib, json, sys\n"
        f"for m in {REWARD_MODULES!r}: importlib.import_module(m)\n"
        f"print(json.dumps(sorted(h for h in {HEAVY!r} if h in sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_the_verl_adapter_is_the_module_that_needs_verl() -> None:
    code = "import sys\nimport codefu_trainer.reward.verl_adapter\nprint('verl' in sys.modules)\n"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    )
    assert out.stdout.strip().splitlines()[-1] == "True"
