"""The evaluation modules import the heavy stack only inside the functions that use it."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("torch", "transformers", "vllm", "trl", "mlflow", "matplotlib", "numpy.random")
MODULES = (
    "codefu_trainer.evaluation.cli",
    "codefu_trainer.evaluation.compare",
    "codefu_trainer.evaluation.generation",
    "codefu_trainer.evaluation.identity",
    "codefu_trainer.evaluation.plots",
    "codefu_trainer.evaluation.run",
    "codefu_trainer.evaluation.summary",
)


def test_importing_the_evaluation_loads_no_model_or_plotting_stack() -> None:
    code = (
        "import importlib, json, sys\n"
        f"for m in {MODULES!r}: importlib.import_module(m)\n"
        f"print(json.dumps(sorted(h for h in {HEAVY!r} if h in sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
