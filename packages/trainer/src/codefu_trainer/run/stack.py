"""Whether the training stack (codefu-trainer's `train` extra) is installed, without importing it.

The base install is the reward side; `codefu-train` and `codefu-eval` need the extra.
"""

from __future__ import annotations

import re
from importlib import metadata

from codefu_trainer.run.compose import PrerequisiteError

EXTRA = "train"


def missing_training_stack() -> list[str]:
    """Distributions of the `train` extra that are not installed here."""
    missing: list[str] = []
    for requirement in metadata.requires("codefu-trainer") or []:
        spec, _, marker = requirement.partition(";")
        if re.search(rf"extra\s*==\s*[\"']{EXTRA}[\"']", marker):
            name = re.split(r"[\s\[<>=!~(]", spec.strip(), maxsplit=1)[0]
            try:
                metadata.distribution(name)
            except metadata.PackageNotFoundError:
                missing.append(name)
    return missing


def require_training_stack(session: str) -> None:
    """PrerequisiteError naming what to install when the `train` extra is missing."""
    missing = missing_training_stack()
    if missing:
        raise PrerequisiteError(
            f"the training stack is not installed (missing {', '.join(missing)}): pip install "
            f"'codefu-trainer[{EXTRA}]' ('codefu-trainer[{EXTRA},gpu]' on a CUDA machine), or "
            f"run it through `nox -s {session}`."
        )
