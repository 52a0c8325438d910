"""Per-host manifests of a checkpoint step: a step counts as written only when whole.

After veRL's save of step N returned on every rank (the checkpoint callback), each host
writes `global_step_N/manifest.<host>.<names>.json` as the step's last file: the path (relative to
the step directory), size and CRC-32 of every file it holds under the step. A crash during
the save, a full disk or an interrupted S3 sync leaves a step without its manifest, or
with files that no longer match it; SageMaker uploads files in no particular order, so a
restored manifest proves nothing about the files beside it until they are checked.

`check_step` compares one host's copy of a step with every manifest it holds. CRC-32
detects truncated, zero-filled and overwritten files (not deliberate tampering).
"""

from __future__ import annotations

import json
import os
import re
import socket
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

MANIFEST_RE = re.compile(r"manifest\.([A-Za-z0-9._-]+)\.json")
CHUNK_BYTES = 8 * 1024 * 1024
READERS = 8  # files read at once (zlib releases the GIL): a host's ranks' shards in parallel


def list_files(root: Path) -> dict[str, int]:
    """Every file under `root` (relative POSIX path → size); empty when `root` is absent."""
    if not root.is_dir():
        return {}
    out: dict[str, int] = {}
    for dirpath, _, names in os.walk(root):
        for name in names:
            path = Path(dirpath) / name
            try:
                out[path.relative_to(root).as_posix()] = path.stat().st_size
            except FileNotFoundError:  # removed while listing (a concurrent prune)
                continue
    return out


def this_host() -> str:
    """This host's name in manifest file names: SageMaker's `algo-N`, else the hostname."""
    name = os.environ.get("SM_CURRENT_HOST") or socket.gethostname() or "host"
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def crc32_of(path: Path) -> tuple[int, str]:
    """The size and CRC-32 (8 hex digits) of the file's bytes, read in chunks."""
    crc, size = 0, 0
    with path.open("rb") as f:
        while chunk := f.read(CHUNK_BYTES):
            crc = zlib.crc32(chunk, crc)
            size += len(chunk)
    return size, f"{crc:08x}"


def is_manifest(rel: str) -> bool:
    """Whether `rel` (relative to a step directory) is a manifest or a manifest being written."""
    name = rel.removesuffix(".tmp")
    return "/" not in name and MANIFEST_RE.fullmatch(name) is not None


def write_manifest(step_dir: Path, host: str | None = None) -> Path | None:
    """Record every file of this host's `step_dir` in `manifest.<host>.<names>.json`
    (`<names>`: CRC-32 of the file names), atomically.

    Returns the manifest's path, or None when this host holds no files of the step.
    """
    files = [rel for rel in sorted(list_files(step_dir)) if not is_manifest(rel)]
    if not files:
        return None
    with ThreadPoolExecutor(READERS) as pool:
        sums = pool.map(crc32_of, [step_dir / rel for rel in files])
        entries = {
            rel: {"size": size, "crc32": crc} for rel, (size, crc) in zip(files, sums, strict=True)
        }
    # The names of the files in the name too: hosts that share a hostname stay apart.
    names = f"{zlib.crc32(chr(0).join(files).encode()):08x}"
    path = step_dir / f"manifest.{host or this_host()}.{names}.json"
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w") as f:
        json.dump({"files": entries}, f, indent=1, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    tmp.replace(path)
    return path


@dataclass(frozen=True)
class StepCheck:
    """One host's copy of a step against the manifests it holds (paths relative to the step)."""

    verified: frozenset[str]  # files a manifest lists that match it
    problems: tuple[str, ...]  # "<file>: <what is wrong>", one per fault found
    unlisted: tuple[str, ...] = ()  # files present that no manifest lists


def check_step(step_dir: Path) -> StepCheck:
    """Compare every file of `step_dir` with the manifests there (sizes and CRC-32s)."""
    present = {rel for rel in list_files(step_dir) if not is_manifest(rel)}
    manifests = sorted(p for p in step_dir.glob("manifest.*.json") if is_manifest(p.name))
    verified: set[str] = set()
    listed: set[str] = set()
    problems: list[str] = []
    for manifest in manifests:
        try:
            entries = json.loads(manifest.read_text())["files"]
            items = sorted((str(r), int(e["size"]), str(e["crc32"])) for r, e in entries.items())
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
            problems.append(f"{manifest.name}: unreadable ({type(err).__name__}: {err})")
            continue
        with ThreadPoolExecutor(READERS) as pool:
            found = list(pool.map(lambda i: _compare(step_dir / i[0], i[1], i[2]), items))
        for (rel, _, _), problem in zip(items, found, strict=True):
            listed.add(rel)
            if problem:
                problems.append(f"{rel}: {problem} (against {manifest.name})")
            else:
                verified.add(rel)
    unlisted = tuple(sorted(present - listed))
    return StepCheck(frozenset(verified), tuple(problems), unlisted)


def _compare(path: Path, size: int, crc: str) -> str | None:
    try:
        actual = path.stat().st_size
    except FileNotFoundError:
        return "missing"
    if actual != size:
        short = "cut short" if actual < size else "longer than written"
        return f"{short}: {actual} bytes, {size} written"
    _, actual_crc = crc32_of(path)
    if actual_crc != crc:
        return f"content changed: CRC-32 {actual_crc}, {crc} written"
    return None
