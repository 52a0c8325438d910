"""The raw dataset shipped in codefu_data.sample prepares into all three tiers."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from codefu_data.config import DataConfig
from codefu_data.prepare import prepare


def _sample_dir() -> Path:
    try:
        from codefu_data.sample import sample_dataset_dir
    except ImportError:
        pytest.skip("codefu_data.sample is not installed")
    root = sample_dataset_dir()
    if not sorted((root / "data").glob("*.parquet")):
        pytest.skip("the sample shards are not built yet")
    return root


def test_default_source_prepares_every_tier(tmp_path: Path) -> None:
    _sample_dir()
    result = prepare(DataConfig(out_dir=str(tmp_path / "out")), progress=False)  # source: "sample"
    for tier in ("easy", "hard", "expert"):
        assert pq.read_metadata(result.out_dir / tier / "train.parquet").num_rows > 0, tier
    assert (
        sum(result.manifest["outputs"][t]["test"]["rows"] for t in ("easy", "hard", "expert")) > 0
    )
    dropped = result.manifest["totals"]["dropped"]
    assert dropped.get("not_codeforces", 0) > 0  # the non-Codeforces rows, excluded by default


@pytest.mark.slow
def test_validation_with_the_accepted_solutions(tmp_path: Path) -> None:
    source = _sample_dir()
    if shutil.which("g++") is None:
        pytest.skip("needs g++")
    # Problems with several valid answers kept (judged against one output, as the
    # reference does): their accepted solutions disagree under exact checking.
    keep = {"keep_several_answers": True}
    plain = prepare(
        DataConfig(source=str(source), out_dir=str(tmp_path / "plain"), **keep), progress=False
    )
    checked = prepare(
        DataConfig(source=str(source), out_dir=str(tmp_path / "checked"), validate=True, **keep),
        progress=False,
    )
    stats = checked.manifest["validation"]
    assert stats["problems_validated"] > 0 and stats["solutions_run"] >= stats["problems_validated"]
    assert checked.manifest["totals"]["dropped"].get("accepted_solutions_disagree", 0) >= 1
    assert checked.manifest["totals"]["kept"] < plain.manifest["totals"]["kept"]
    # By default the statements' rules drop those problems before any solution runs.
    default = prepare(
        DataConfig(source=str(source), out_dir=str(tmp_path / "default"), validate=True),
        progress=False,
    )
    dropped = default.manifest["totals"]["dropped"]
    assert dropped.get("several_valid_answers", 0) == 2
    assert dropped.get("accepted_solutions_disagree", 0) == 0
