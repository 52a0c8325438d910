"""The rows of a prepared parquet as prompts for training and evaluation on small models."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def load_prompts(
    train_file: Path, max_prompt_chars: int, limit: int | None = None
) -> list[dict[str, Any]]:
    """Rows of a prepared parquet as {prompt, ground_truth (JSON), name}.

    A prompt longer than `max_prompt_chars` keeps its beginning (the instruction and the
    start of the statement): the tiny model's context is short.
    """
    import pyarrow.parquet as pq

    table = pq.read_table(train_file, columns=["prompt", "reward_model", "extra_info"])
    rows: list[dict[str, Any]] = []
    for row in table.to_pylist():
        messages = [
            {"role": m["role"], "content": m["content"][:max_prompt_chars]} for m in row["prompt"]
        ]
        rows.append(
            {
                "prompt": messages,
                "ground_truth": json.dumps(row["reward_model"]["ground_truth"]),
                "name": (row.get("extra_info") or {}).get("name", ""),
            }
        )
        if limit is not None and len(rows) >= limit:
            break
    if not rows:
        raise ValueError(f"{train_file} has no rows; run `nox -s prepare` again.")
    return rows
