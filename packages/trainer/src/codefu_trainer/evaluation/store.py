"""An evaluation's directory: `meta.json` (what is evaluated) and `samples.jsonl` (one line
per judged sample), safe to kill at any moment and resume.

Each judged batch is appended as whole lines, flushed and fsynced. A process killed in the
middle of a write leaves a last line without its newline: reading truncates it away, so it
is judged again and never read as a result. A sample already present is never written twice.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

META_FILE = "meta.json"
SAMPLES_FILE = "samples.jsonl"
SUMMARY_FILE = "summary.json"


class StoreError(ValueError):
    """The directory holds something else than this evaluation; the message says what to do."""


def open_store(out_dir: Path, identity: Mapping[str, Any]) -> None:
    """Create `out_dir` with its meta.json, or check that it holds this evaluation."""
    meta = out_dir / META_FILE
    if meta.is_file():
        try:
            stored = json.loads(meta.read_text())["identity"]
        except (ValueError, KeyError, TypeError) as exc:
            raise StoreError(
                f"{meta} is unreadable ({exc}): delete {out_dir} to start over."
            ) from exc
        if stored != dict(identity):
            raise StoreError(
                f"eval.out={out_dir} holds samples of another evaluation "
                f"({_differences(stored, identity)}): pass another eval.out, or delete "
                f"{out_dir} to start over."
            )
        return
    if (out_dir / SAMPLES_FILE).exists():
        raise StoreError(
            f"eval.out={out_dir} holds a {SAMPLES_FILE} without {META_FILE}, so whose samples "
            "they are is unknown: pass another eval.out, or delete it to start over."
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = meta.with_suffix(".tmp")
    tmp.write_text(json.dumps({"identity": dict(identity)}, indent=2, sort_keys=True) + "\n")
    tmp.replace(meta)


def _differences(stored: Mapping[str, Any], identity: Mapping[str, Any]) -> str:
    keys = sorted(set(stored) | set(identity))
    diffs = [
        f"{k}: {identity.get(k)!r} here, {stored.get(k)!r} there"
        for k in keys
        if stored.get(k) != identity.get(k)
    ]
    return "; ".join(diffs)


def read_samples(out_dir: Path) -> list[dict[str, Any]]:
    """The complete lines of samples.jsonl, first occurrence of each (problem, sample).

    A half-written last line (no newline) is cut off the file.
    """
    path = out_dir / SAMPLES_FILE
    if not path.is_file():
        return []
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    if end < len(data):
        with path.open("r+b") as f:
            f.truncate(end)
    records: list[dict[str, Any]] = []
    seen: set[tuple[str, int]] = set()
    for lineno, line in enumerate(data[:end].splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            key = (str(record["problem"]), int(record["sample"]))
        except (ValueError, KeyError, TypeError) as exc:
            raise StoreError(
                f"{path}:{lineno} is not a sample line ({exc}): delete {out_dir} to start over."
            ) from exc
        if key not in seen:
            seen.add(key)
            records.append(record)
    return records


def append_samples(out_dir: Path, records: Iterable[Mapping[str, Any]]) -> None:
    """Append whole lines and make them durable before returning."""
    text = "".join(json.dumps(dict(r), ensure_ascii=False) + "\n" for r in records)
    with (out_dir / SAMPLES_FILE).open("a", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
