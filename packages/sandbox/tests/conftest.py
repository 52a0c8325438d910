"""Shared fixtures for the sandbox unit suite."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from codefu_sandbox import Judge


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One judge cache per test session (the PCH is built once)."""
    return tmp_path_factory.mktemp("codefu-cache")


@pytest.fixture(scope="session")
def judge(cache_dir: Path) -> Iterator[Judge]:
    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed")
    yield Judge(cache_dir)
