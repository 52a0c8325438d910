"""Synthetic raw datasets in the CodeContests schema and HF shard layout (tests, benchmark).

Statements and tests are generated text, not real problems; nothing here is meant for
training. With `flaws=True` the data carries every defect the filters look for, at fixed
positions (see `FLAW_KINDS`), and cross-split duplicates, so expected counts are known.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from codefu_data.schema import RAW_SCHEMA

# Row i of the train split carries flaw FLAW_KINDS[i % FLAW_PERIOD] when that index exists.
FLAW_PERIOD = 20
FLAW_KINDS = {
    1: "no_private_tests",
    2: "empty_description",
    3: "invalid_time_limit",
    4: "cf_rating_missing",
    5: "not_codeforces",
    6: "cf_rating_below_min",
    7: "invalid_memory_limit",
    8: "no_tests",
}
RATINGS = list(range(800, 3600, 100))
_WORDS = [
    "given",
    "array",
    "integers",
    "find",
    "minimum",
    "maximum",
    "number",
    "ways",
    "modulo",
    "query",
    "segment",
    "tree",
    "graph",
    "vertices",
    "edges",
    "path",
    "string",
    "substring",
    "palindrome",
    "print",
    "answer",
    "each",
    "test",
    "case",
    "output",
]


@dataclass(frozen=True)
class SyntheticSpec:
    problems: int = 100  # total over train + valid + test
    test_bytes_per_problem: int = 2_000  # private + generated tests, roughly
    generated_fraction: float = 0.6  # share of the test bytes in generated_tests (never read)
    train_shards: int = 2
    row_group_rows: int = 32
    flaws: bool = True
    seed: int = 0


def split_sizes(total: int) -> dict[str, int]:
    """CodeContests' proportions (13,328 / 117 / 165); at least 1 valid and 2 test problems."""
    valid = max(1, round(total * 117 / 13610))
    test = max(2, round(total * 165 / 13610))
    return {"train": max(1, total - valid - test), "valid": valid, "test": test}


class _Text:
    """Fast pseudo-random numeric text, sliced from one pre-built block."""

    def __init__(self, seed: int, size: int = 4 << 20) -> None:
        rng = random.Random(seed)
        parts: list[str] = []
        length = 0
        while length < size:
            line = " ".join(str(rng.randint(0, 10**9)) for _ in range(8)) + "\n"
            parts.append(line)
            length += len(line)
        self.block = "".join(parts)
        self.rng = rng

    def take(self, n: int) -> str:
        n = max(1, min(n, len(self.block) - 1))
        start = self.rng.randrange(0, len(self.block) - n)
        return self.block[start : start + n]


def _statement(rng: random.Random, i: int) -> str:
    words = " ".join(rng.choice(_WORDS) for _ in range(60))
    return (
        f"Synthetic problem {i}. {words.capitalize()}.\n\nInput\n\nThe first line contains n.\n\n"
        f"Output\n\nPrint the answer.\n\nExamples\n\nInput\n\n3\n1 2 3\n\nOutput\n\n{i % 7}\n"
    )


def _tests(text: _Text, count: int, total_bytes: int) -> dict[str, list[str]]:
    per = max(2, total_bytes // max(1, count) // 2)
    return {
        "input": [text.take(per) for _ in range(count)],
        "output": [text.take(per // 4 + 1) for _ in range(count)],
    }


def _row(
    i: int, split: str, spec: SyntheticSpec, rng: random.Random, text: _Text
) -> dict[str, Any]:
    private_bytes = int(spec.test_bytes_per_problem * (1 - spec.generated_fraction))
    generated_bytes = spec.test_bytes_per_problem - private_bytes
    row: dict[str, Any] = {
        "name": f"{1000 + i}_{split[0].upper()}. Synthetic {split} {i}",
        "description": _statement(rng, i if split == "train" else 100_000 + i + hash(split) % 1000),
        "public_tests": {"input": ["3\n1 2 3\n"], "output": [f"{i % 7}\n"]},
        "private_tests": _tests(text, 1 + rng.randrange(5), private_bytes),
        "generated_tests": _tests(text, 1 + rng.randrange(10), generated_bytes),
        "source": 2,
        "difficulty": 7,
        "solutions": {"language": [2, 3], "solution": ["int main() { return 0; }", "print(0)"]},
        "incorrect_solutions": {"language": [2], "solution": ["int main() { return 1; }"]},
        "cf_contest_id": 1000 + i,
        "cf_index": "A",
        "cf_points": 500.0,
        "cf_rating": RATINGS[i % len(RATINGS)],
        "cf_tags": ["math"],
        "is_description_translated": False,
        "untranslated_description": "",
        "time_limit": {"seconds": 1 + i % 3, "nanos": 0},
        "memory_limit_bytes": 256_000_000,
        "input_file": "",
        "output_file": "",
    }
    if spec.flaws and split == "train":
        kind = FLAW_KINDS.get(i % FLAW_PERIOD)
        if kind == "no_private_tests":
            row["private_tests"] = {"input": [], "output": []}
        elif kind == "empty_description":
            row["description"] = "   "
        elif kind == "invalid_time_limit":
            row["time_limit"] = None
        elif kind == "cf_rating_missing":
            row["cf_rating"] = 0
        elif kind == "not_codeforces":
            row["source"], row["cf_rating"] = 1, 0
        elif kind == "cf_rating_below_min":
            row["cf_rating"] = 500
        elif kind == "invalid_memory_limit":
            row["memory_limit_bytes"] = 0
        elif kind == "no_tests":
            row["public_tests"] = {"input": [], "output": []}
            row["private_tests"] = {"input": [], "output": []}
    return row


def write_synthetic(root: Path, spec: SyntheticSpec | None = None) -> dict[str, int]:
    """Write `root/data/{train,valid,test}-000NN-of-000MM.parquet`; returns rows per split.

    With flaws, the held-out `test` split's first two problems duplicate train problems
    10 (same name) and 11 (same statement up to case and whitespace).
    """
    spec = spec or SyntheticSpec()
    rng = random.Random(spec.seed)
    text = _Text(spec.seed)
    sizes = split_sizes(spec.problems)
    (root / "data").mkdir(parents=True, exist_ok=True)
    train_rows: dict[int, dict[str, Any]] = {}
    for split, n in sizes.items():
        shards = spec.train_shards if split == "train" else 1
        per_shard = -(-n // shards)
        i = 0
        for shard in range(shards):
            path = root / "data" / f"{split}-{shard:05d}-of-{shards:05d}.parquet"
            with pq.ParquetWriter(path, RAW_SCHEMA, compression="zstd") as writer:
                stop = min(n, i + per_shard)
                while i < stop:
                    rows = []
                    for _ in range(min(spec.row_group_rows, stop - i)):
                        row = _row(i, split, spec, rng, text)
                        if split == "train" and i in (10, 11):
                            train_rows[i] = row
                        if spec.flaws and split == "test" and i == 0 and 10 in train_rows:
                            row["name"] = train_rows[10]["name"]
                        if spec.flaws and split == "test" and i == 1 and 11 in train_rows:
                            row["description"] = "  " + train_rows[11][
                                "description"
                            ].upper().replace(" ", "   ")
                        rows.append(row)
                        i += 1
                    writer.write_table(pa.Table.from_pylist(rows, schema=RAW_SCHEMA))
    return sizes
