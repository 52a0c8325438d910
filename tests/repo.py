"""Facts about the repository shared by the repository-level checks."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {
    "sandbox": "codefu_sandbox",
    "data": "codefu_data",
    "trainer": "codefu_trainer",
    "launcher": "codefu_launcher",
}


def load_toml(path: Path) -> dict[str, Any]:
    with path.open("rb") as f:
        return tomllib.load(f)


def lock_pins(profile: str) -> dict[str, str]:
    """Package name → version pinned by locks/<profile>.txt."""
    text = (ROOT / "locks" / f"{profile}.txt").read_text()
    return {
        name.lower(): version
        for name, version in re.findall(r"^([A-Za-z0-9_.-]+)==([^\s;]+)", text, re.MULTILINE)
    }


def nox_sessions() -> list[str]:
    """Every session `nox -l` lists (selected or not), parametrized ones with their call spec."""
    out = subprocess.run(
        [sys.executable, "-m", "nox", "-l", "-f", str(ROOT / "noxfile.py")],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout
    return re.findall(r"^[*-] (\S+?)(?: ->|$)", out, re.MULTILINE)


def console_scripts() -> set[str]:
    """Every console script the four packages declare (`codefu-judge`, …)."""
    return {
        script
        for package in PACKAGES
        for script in load_toml(ROOT / "packages" / package / "pyproject.toml")["project"].get(
            "scripts", {}
        )
    }
