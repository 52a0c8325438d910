"""Repository-level checks: layout, task runner, pixi and Docker files stay consistent."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from repo import PACKAGES, ROOT, load_toml


@pytest.fixture(scope="session")
def package_metadata() -> dict[str, dict[str, Any]]:
    """Each package's [project] table, by directory name."""
    return {
        name: load_toml(ROOT / "packages" / name / "pyproject.toml")["project"] for name in PACKAGES
    }
