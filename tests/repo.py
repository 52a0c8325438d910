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


def run(
    *args: str, env: dict[str, str] | None = None, timeout: int = 600
) -> subprocess.CompletedProcess[str]:
    """A command from the repository root, its output captured."""
    return subprocess.run(
        args, capture_output=True, text=True, timeout=timeout, check=False, cwd=ROOT, env=env
    )


def fresh_torch_env(uv: str, venv: Path) -> str:
    """A new venv holding torch alone (the CPU lock's, through uv's cache); its python."""
    sys.path.insert(0, str(ROOT))
    from noxfile import find_links_args

    python = str(venv / "bin" / "python")
    assert run(uv, "venv", "--quiet", "--python", "3.11", str(venv)).returncode == 0
    torch_pin = f"torch=={lock_pins('cpu')['torch']}"
    base = run(uv, "pip", "install", "--quiet", "--python", python, torch_pin,
               "-c", str(ROOT / "locks" / "cpu.txt"), *find_links_args("cpu"))  # fmt: skip
    assert base.returncode == 0, base.stderr
    return python
