"""Memory cgroups for runs (v1 memory controller or v2), where root can create them."""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from codefu_sandbox.records import RunOutcome

CGROUP_V1_ROOT = Path("/sys/fs/cgroup/memory")
CGROUP_PARENT = "codefu"


def cgroup2_mounts(mounts: Path = Path("/proc/self/mounts")) -> list[Path]:
    """Mount points of the cgroup v2 hierarchy (usually /sys/fs/cgroup; on hybrid hosts
    /sys/fs/cgroup/unified beside the v1 controllers)."""
    found = []
    with contextlib.suppress(OSError):
        for line in mounts.read_text().splitlines():
            fields = line.split()
            if len(fields) >= 3 and fields[2] == "cgroup2":
                found.append(Path(fields[1].replace("\\040", " ")))
    return found


def cgroup2_memory_roots() -> list[Path]:
    """cgroup v2 mounts whose root offers the memory controller."""
    roots = []
    for mount in cgroup2_mounts():
        with contextlib.suppress(OSError):
            if "memory" in (mount / "cgroup.controllers").read_text().split():
                roots.append(mount)
    return roots


@dataclass
class MemoryGroup:
    """One memory cgroup and its OOM-kill count after the last run in it."""

    path: Path
    limit: int
    oom_kills: int = 0


class MemoryCgroups:
    """Memory cgroups (v1 memory controller or v2) for runs, when root can create them.

    A group is a child cgroup `<parent>/codefu/<pid>-<n>` (unique across threads and
    processes) whose limit is the memory cap; sandbox-exec's child joins it before
    dropping privileges. A run's growth of the group's OOM-kill count says whether it hit
    the cap. A judged submission reuses one group for all its tests, one run at a time
    (creating and removing a group costs ~0.25 ms of Python per run). Cgroups left behind
    by a crashed judge (their pid is gone) are removed when the next one starts.
    """

    def __init__(self, parent: Path, version: str) -> None:
        self.parent = parent
        self.version = version
        self._counter = itertools.count()
        self._prefix = f"{os.getpid()}-"

    @classmethod
    def probe(cls) -> MemoryCgroups | None:
        """Usable cgroups on this host, or None (not root, not mounted, read-only, ...)."""
        if os.geteuid() != 0 or os.environ.get("CODEFU_SANDBOX_CGROUP", "1") == "0":
            return None
        candidates: list[tuple[Path, str]] = []
        if (CGROUP_V1_ROOT / "memory.limit_in_bytes").exists():
            candidates.append((CGROUP_V1_ROOT, "v1"))
        candidates += [(root, "v2") for root in cgroup2_memory_roots()]
        for root, version in candidates:
            groups = cls.at(root, version)
            if groups is not None:
                return groups
        return None

    @classmethod
    def at(cls, root: Path, version: str) -> MemoryCgroups | None:
        """Groups under `root` (a v1 memory mount or a v2 mount with the memory
        controller), or None when a limited child cgroup cannot be created there."""
        parent = root / CGROUP_PARENT
        try:
            parent.mkdir(exist_ok=True)
            if version == "v2":
                (parent / "cgroup.subtree_control").write_text("+memory")
            groups = cls(parent, version)
            groups.remove_stale()
            with groups.create(64 << 20) as probe:
                groups.oom_kills(probe.path)
        except OSError:
            return None
        return groups

    def remove_stale(self) -> None:
        """Remove cgroups of judge processes that no longer exist."""
        for entry in self.parent.iterdir():
            pid = entry.name.split("-", 1)[0]
            if not entry.is_dir() or not pid.isdigit():
                continue
            try:
                os.kill(int(pid), 0)
            except ProcessLookupError:
                with contextlib.suppress(OSError):
                    entry.rmdir()
            except PermissionError:
                pass

    @contextlib.contextmanager
    def create(self, limit: int) -> Iterator[MemoryGroup]:
        """A fresh cgroup limited to `limit` bytes (no swap), removed afterwards."""
        path = self.parent / f"{self._prefix}{next(self._counter)}"
        path.mkdir()
        try:
            if self.version == "v1":
                (path / "memory.limit_in_bytes").write_text(str(limit))
                with contextlib.suppress(OSError):
                    (path / "memory.swappiness").write_text("0")
            else:
                (path / "memory.max").write_text(str(limit))
                with contextlib.suppress(OSError):
                    (path / "memory.swap.max").write_text("0")
            yield MemoryGroup(path, limit)
        finally:
            self._remove(path)

    def oom_kills(self, path: Path) -> int:
        """How many times the kernel OOM-killed a task in this cgroup (its limit was hit)."""
        name = "memory.oom_control" if self.version == "v1" else "memory.events"
        for line in (path / name).read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
        return 0

    def check(self, outcome: RunOutcome, group: MemoryGroup) -> RunOutcome:
        """The outcome of a run in `group` with `memory_cap_hit` from the growth of the
        group's OOM-kill count."""
        try:
            kills = self.oom_kills(group.path)
        except (OSError, ValueError) as exc:
            error = outcome.error or f"cannot read the memory cgroup {group.path}: {exc}"
            return dataclasses.replace(outcome, error=error)
        hit = kills > group.oom_kills
        group.oom_kills = kills  # the next run's baseline, whatever this run's outcome
        if outcome.error is not None:
            return outcome
        return dataclasses.replace(outcome, memory_cap_hit=hit)

    @staticmethod
    def _remove(path: Path) -> None:
        # Sandbox-exec reaps its child before returning, so the cgroup is empty; a killed
        # task may take a moment to leave it. What still fails is removed as stale later.
        for delay in (0.0, 0.001, 0.01, 0.1):
            time.sleep(delay)
            try:
                path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                continue
