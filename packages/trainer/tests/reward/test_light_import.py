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


# What judges a response: the service (ground truth → the sandbox's request → a job), the
# pools and the worker a judge node runs.
JUDGE_PATH = (
    "codefu_trainer.reward.service",
    "codefu_trainer.reward.worker",
    "codefu_trainer.reward.judge_pool",
    "codefu_trainer.reward.local_pool",
)


def test_the_judge_path_imports_the_sandbox_alone_of_our_packages() -> None:
    """A judge node installs the sandbox and the reward: no codefu-data (nor pyarrow, which
    it brings), no codefu-launcher."""
    code = (
        "import importlib, json, sys\n"
        f"for m in {JUDGE_PATH!r}: importlib.import_module(m)\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    loaded = set(json.loads(out.stdout.strip().splitlines()[-1]))
    assert "codefu_sandbox" in loaded
    assert not loaded & {"codefu_data", "codefu_launcher", "pyarrow"}, sorted(loaded)


def test_the_verl_adapter_is_the_module_that_needs_verl() -> None:
    code = "import sys\nimport codefu_trainer.reward.verl_adapter\nprint('verl' in sys.modules)\n"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    )
    assert out.stdout.strip().splitlines()[-1] == "True"
