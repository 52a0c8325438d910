"""The small raw dataset shipped with codefu-data (CodeContests schema, HF shard layout).

Built by ``packages/data/sample_src/build.py`` from human-readable sources; see
``packages/data/sample_src/README.md`` for the problem list and the deliberate flaws.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["sample_dataset_dir"]


def sample_dataset_dir() -> Path:
    """Return the directory holding ``data/{train,valid,test}-00000-of-00001.parquet``."""
    return Path(__file__).resolve().parent
