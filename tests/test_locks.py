"""The locks match the pyprojects and still resolve: the real `nox -s lock -- --check`.

uv resolves from the package index (seconds with a warm cache). The two copies of the
repository below show the check fails, naming `nox -s lock`, where it should.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from repo import PACKAGES, ROOT


def _check(root: Path, *profiles: str) -> subprocess.CompletedProcess[str]:
    nox = [sys.executable, "-m", "nox", "-f", str(root / "noxfile.py")]
    return subprocess.run(
        [*nox, "-s", "lock", "--", "--check", *profiles],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=root,
    )


def _copy_of_the_repository(tmp_path: Path) -> Path:
    """What the lock is made from: noxfile (and tools/, which it imports), root pyproject,
    locks/, the packages' sources."""
    for name in ("noxfile.py", "tools", "pyproject.toml", "locks"):
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, tmp_path / name)
    for package in PACKAGES:
        shutil.copytree(
            ROOT / "packages" / package,
            tmp_path / "packages" / package,
            ignore=shutil.ignore_patterns("tests", "__pycache__", "*.egg-info"),
        )
    return tmp_path


def test_the_locks_match_the_pyprojects_and_resolve() -> None:
    done = _check(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    for profile in ("cpu", "cuda"):
        assert f"locks/{profile}.txt matches the pyprojects and resolves" in done.stderr


def test_a_lock_behind_its_pyprojects_fails_and_names_nox_lock(tmp_path: Path) -> None:
    root = _copy_of_the_repository(tmp_path)
    lock = root / "locks" / "cpu.txt"
    lock.write_text(re.sub(r"^ruff==\S+$", "ruff==0.17.4", lock.read_text(), flags=re.M))
    done = _check(root, "cpu")
    assert done.returncode != 0
    assert "locks/cpu.txt does not match the pyprojects" in done.stderr
    assert "-ruff==0.17.4" in done.stderr and "+ruff==0.17.5" in done.stderr
    assert "run `nox -s lock`" in done.stderr


def test_a_gpu_set_that_cannot_resolve_fails_and_names_nox_lock(tmp_path: Path) -> None:
    # vLLM 0.33.0 needs transformers >= 5.16.1 and torch 2.14.0; veRL 0.9.1 allows < 5.11.
    root = _copy_of_the_repository(tmp_path)
    pyproject = root / "packages" / "trainer" / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('"vllm==0.24.0"', '"vllm==0.33.0"'))
    done = _check(root, "cuda")
    assert done.returncode != 0
    assert "locks/cuda.in no longer resolves" in done.stderr
    assert "run `nox -s lock`" in done.stderr
