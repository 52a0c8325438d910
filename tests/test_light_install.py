"""The trainer's base install is the reward side: no torch, veRL, transformers or vLLM.

A fresh environment gets the four packages without extras, pinned by locks/cpu.txt (what
the judge image installs); uv's cache makes this seconds after the suites' installs.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from repo import PACKAGES, ROOT

HEAVY = ("torch", "verl", "transformers", "vllm", "trl", "flash_attn")


@pytest.fixture(scope="module")
def light_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    uv = shutil.which("uv")
    assert uv, "uv is installed with the repository tests (nox -s tests)"
    env = tmp_path_factory.mktemp("light") / "venv"
    subprocess.run([uv, "venv", "--quiet", "--python", "3.11", str(env)], check=True)
    packages = [arg for p in PACKAGES for arg in ("-e", str(ROOT / "packages" / p))]
    locked = ["-c", str(ROOT / "locks" / "cpu.txt")]
    subprocess.run(
        [
            uv,
            "pip",
            "install",
            "--quiet",
            "--python",
            str(env / "bin" / "python"),
            *locked,
            *packages,
        ],
        check=True,
        timeout=600,
    )
    return env


def test_the_reward_side_imports_without_the_training_stack(light_env: Path) -> None:
    code = (
        "import importlib.util, json, codefu_trainer.reward.service, codefu_trainer.reward.cli\n"
        f"print(json.dumps([m for m in {HEAVY!r} if importlib.util.find_spec(m)]))"
    )
    out = subprocess.run(
        [str(light_env / "bin" / "python"), "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


@pytest.mark.parametrize(
    ("command", "session"), [("codefu-train", "train"), ("codefu-eval", "evaluate")]
)
def test_training_commands_without_the_train_extra_say_what_to_install(
    light_env: Path, command: str, session: str
) -> None:
    done = subprocess.run(
        [str(light_env / "bin" / command), "cluster=cpu"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 3
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"{command}: the training stack is not installed")
    assert "codefu-trainer[train]" in line and "verl" in line and f"nox -s {session}" in line
