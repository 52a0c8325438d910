"""The import audit of tests/test_bundle.py's smoke step.

With this folder on PYTHONPATH and CODEFU_IMPORT_AUDIT=DIR in the environment, every Python
process of the run (Ray's and veRL's workers inherit both) writes each module name the import
system looks up to DIR/<pid>.txt, one line each: `NAME import` for an import (a failed one
too), `NAME probe` for an `importlib.util.find_spec` asking only whether it is there.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import FrameType, ModuleType

AUDIT_ENV = "CODEFU_IMPORT_AUDIT"


def _asked_by_find_spec(frame: FrameType | None) -> bool:
    while frame is not None:
        code = frame.f_code
        if code.co_name == "find_spec" and Path(code.co_filename).parts[-2:] == (
            "importlib",
            "util.py",
        ):
            return True
        frame = frame.f_back
    return False


class ImportAudit:
    """A meta-path finder that finds nothing and writes down what it was asked for."""

    def __init__(self, folder: str) -> None:
        self.folder = Path(folder)

    def find_spec(
        self,
        name: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> ModuleSpec | None:
        kind = "probe" if _asked_by_find_spec(sys._getframe(1)) else "import"
        with (self.folder / f"{os.getpid()}.txt").open("a") as out:
            out.write(f"{name} {kind}\n")
        return None


if os.environ.get(AUDIT_ENV):
    sys.meta_path.insert(0, ImportAudit(os.environ[AUDIT_ENV]))
