"""The CodeFu reference parquet (CODEFU_REAL_DATA) has our processed schema."""

from __future__ import annotations

from pathlib import Path

import pytest

from codefu_data.reader import read_processed
from codefu_data.schema import OUTPUT_SCHEMA, REFERENCE_REWARD_MODEL_TYPE

pytestmark = pytest.mark.real_data


@pytest.mark.parametrize("split", ["train", "test"])
def test_reference_schema_equals_ours(codefu_easy: Path, split: str) -> None:
    table = read_processed(codefu_easy / f"{split}.parquet")  # raises on any type difference
    ours = OUTPUT_SCHEMA.remove(OUTPUT_SCHEMA.get_field_index("extra_info"))
    index = ours.get_field_index("reward_model")
    ours = ours.set(index, ours.field(index).with_type(REFERENCE_REWARD_MODEL_TYPE))
    # The reference has no extra_info column and no judging_rules in its ground truth.
    assert table.schema.remove_metadata() == ours
    rows = table.slice(0, 50).to_pylist()
    for row in rows:
        assert row["data_source"] == "code_contests" and row["ability"] == "coding-cp"
        assert row["prompt"][0]["role"] == "user" and "<think>" in row["prompt"][0]["content"]
        gt = row["reward_model"]["ground_truth"]
        assert 800 <= gt["cf_rating"] <= 1000 and gt["private_tests"]["input"]
