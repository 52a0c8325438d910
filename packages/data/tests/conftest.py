"""Shared fixtures: a small synthetic raw dataset (CodeContests schema, HF layout)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from codefu_data.config import DataConfig
from codefu_data.synthetic import SyntheticSpec, write_synthetic

SPEC = SyntheticSpec(problems=120, test_bytes_per_problem=1_500, train_shards=2, row_group_rows=16)


@pytest.fixture(scope="session")
def raw_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("raw")
    write_synthetic(root, SPEC)
    return root


def _make_config(source: Path | str, out: Path, **changes: object) -> DataConfig:
    cfg = DataConfig(source=str(source), out_dir=str(out))
    for key, value in changes.items():
        setattr(cfg, key, value)
    return cfg


@pytest.fixture(scope="session")
def spec() -> SyntheticSpec:
    return SPEC


@pytest.fixture(scope="session")
def make_config() -> Callable[..., DataConfig]:
    """`make_config(source, out, **changes)`: a DataConfig for a test run."""
    return _make_config
