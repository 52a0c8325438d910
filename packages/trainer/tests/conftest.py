"""Fixtures of the trainer's own tests (the reward tests live in tests/reward/)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]
CONF = REPO / "conf"

APLUSB_OK = """<think>add them</think>
<code>
#include <iostream>
int main() { long long a, b; std::cin >> a >> b; std::cout << a + b << std::endl; }
</code>"""


def _problem(index: int, split: str) -> dict:
    name = f"{index}_A. Sum"
    inputs = [f"{i} {i + index}\n" for i in range(1, 4)]
    outputs = [f"{2 * i + index}\n" for i in range(1, 4)]
    return {
        "data_source": "code_contests",
        "prompt": [{"role": "user", "content": f"Problem {name}: print a+b. Use <code> tags."}],
        "ability": "coding-cp",
        "reward_model": {
            "style": "rule",
            "ground_truth": {
                "name": name,
                "cf_rating": 800,
                "time_limit": {"seconds": 2.0, "nanos": 0.0},
                "memory_limit_bytes": 256 * 1024 * 1024,
                "public_tests": {"input": inputs[:1], "output": outputs[:1]},
                "private_tests": {"input": inputs, "output": outputs},
            },
        },
        "extra_info": {"index": index, "split": split, "tier": "easy", "name": name},
    }


def write_prepared(out: Path, train: int, test: int) -> Path:
    """A processed dataset (codefu-data's layout) of a+b problems in tier easy."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    (out / "easy").mkdir(parents=True)
    for split, n in (("train", train), ("test", test)):
        rows = [_problem(i, split) for i in range(n)]
        pq.write_table(pa.Table.from_pylist(rows), out / "easy" / f"{split}.parquet")
    from codefu_data.prepare import MANIFEST_FORMAT

    (out / "manifest.json").write_text(json.dumps({"format": MANIFEST_FORMAT}))
    return out


@contextmanager
def own_ray_cluster(num_cpus: int, **init: Any) -> Iterator[None]:
    """A Ray cluster of the test's own on this machine, shut down after. `address="local"`:
    a bare ray.init() joins any cluster already running here (another xdist worker's)."""
    import ray

    ray.init(
        address="local", num_cpus=num_cpus, include_dashboard=False, log_to_driver=False, **init
    )
    try:
        yield
    finally:
        ray.shutdown()


@pytest.fixture
def prepared_data(tmp_path: Path) -> Path:
    """A processed dataset with a few a+b problems in tier easy (fewer than a GPU batch)."""
    return write_prepared(tmp_path / "processed", train=4, test=2)


@pytest.fixture
def gpu_sized_data(tmp_path: Path) -> Path:
    """A processed dataset with more training rows than the GPU profiles' batch (64)."""
    return write_prepared(tmp_path / "processed-gpu", train=128, test=8)


@pytest.fixture(autouse=True)
def _no_mlflow_run_between_tests() -> Iterator[None]:
    """Each test starts without an MLflow run: `tracking.continue_mlflow_run` sets
    MLFLOW_RUN_ID in this process (as the job's head needs), and a run left active by one
    test would make the next test's runs resume it."""
    names = ("MLFLOW_RUN_ID", "MLFLOW_EXPERIMENT_ID", "MLFLOW_EXPERIMENT_NAME")
    saved = {n: os.environ.pop(n) for n in names if n in os.environ}
    yield
    for name in names:
        os.environ.pop(name, None)
    os.environ.update(saved)
    mlflow = sys.modules.get("mlflow")
    if mlflow is not None:
        while mlflow.active_run() is not None:
            mlflow.end_run()


# The suite's longest files (minutes each on 2 cores), started first: under pytest-xdist
# (`--dist=loadfile`) the other workers then take the many short files meanwhile, instead of
# one worker starting a long file when the rest of the suite is done.
LONGEST_FILES = (
    "training/test_smoke.py",
    "training/test_rehearsal.py",
    "training/test_export.py",
    "reward/test_cluster.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        path = item.path.as_posix()
        return next(
            (i for i, f in enumerate(LONGEST_FILES) if path.endswith(f)), len(LONGEST_FILES)
        )

    items.sort(key=rank)  # stable: every file keeps its tests' order
