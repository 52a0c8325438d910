"""Whether what a run uses of the training stack is installed, without importing it.

The base install is the reward side; `codefu-train` and `codefu-eval` need the `train` extra,
or the part of it a run uses: each cluster kind names its distributions
(`training/clusters/`), tracking adds MLflow. A missing one is named with the command that
installs it (its requirement as codefu-trainer declares it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from importlib import metadata

from codefu_trainer.run.compose import PrerequisiteError

EXTRA = "train"
DISTRIBUTION = "codefu-trainer"

# What a run imports, by what it does (pip's names).
# veRL's trainer, with what its v1 trainer imports without declaring it, and Ray.
VERL = ("verl", "transferqueue", "cachetools", "uvicorn", "fastapi", "ray")
# The CPU rehearsal: TRL's GRPO trainer, its dataset and the byte-level tokenizer, the plots.
TRL = ("trl", "transformers", "datasets", "tokenizers", "matplotlib")
# run.tracking.mlflow=true.
MLFLOW = ("mlflow",)
# Up to this many missing distributions are each named with their install command.
FEW = 3


def _name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~(;]", requirement.strip(), maxsplit=1)[0]


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirements() -> list[tuple[str, str, str | None]]:
    """codefu-trainer's requirements: (name, requirement, its extra or None)."""
    found: list[tuple[str, str, str | None]] = []
    for requirement in metadata.requires(DISTRIBUTION) or []:
        spec, _, marker = requirement.partition(";")
        extra = re.search(r"extra\s*==\s*[\"']([^\"']+)[\"']", marker)
        found.append((_name(spec), spec.strip(), extra.group(1) if extra else None))
    return found


def training_stack() -> list[str]:
    """Every distribution of the `train` extra."""
    return [name for name, _, extra in _requirements() if extra == EXTRA]


def missing(distributions: Iterable[str]) -> list[str]:
    """Those of `distributions` that are not installed here."""
    absent: list[str] = []
    for name in dict.fromkeys(distributions):
        try:
            metadata.distribution(name)
        except metadata.PackageNotFoundError:
            absent.append(name)
    return absent


def require(distributions: Iterable[str], session: str) -> None:
    """PrerequisiteError naming each missing distribution with the command that installs it,
    the whole stack's, and the nox session that brings it."""
    absent = missing(distributions)
    if not absent:
        return
    whole = (
        f"pip install 'codefu-trainer[{EXTRA}]' ('codefu-trainer[{EXTRA},gpu]' on a CUDA machine)"
    )
    if len(absent) <= FEW:
        specs = {
            _normal(name): spec for name, spec, extra in _requirements() if extra in (None, EXTRA)
        }
        each = " ".join(f"'{specs.get(_normal(name), name)}'" for name in absent)
        whole = f"pip install {each}, or the whole stack: {whole}"
    raise PrerequisiteError(
        f"the training stack is not installed (missing {', '.join(absent)}): {whole}, or run "
        f"it through `nox -s {session}`."
    )


def require_training_stack(session: str) -> None:
    """`require` for every distribution of the `train` extra."""
    require(training_stack(), session)
