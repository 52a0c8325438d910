"""Sandbox uids: each judge process's window of uids, handed to its concurrent runs."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator

DEFAULT_UID_BASE = 200_000  # sandbox uids: base + per-process slot, no passwd entry needed
UID_SLOTS = 4096
UIDS_PER_PROCESS = 64  # a process's window of sandbox uids (UidWindow)


class UidWindow:
    """This process's window of UIDS_PER_PROCESS sandbox uids (placed by its pid among
    UID_SLOTS), handed to runs: up to UIDS_PER_PROCESS concurrent runs get distinct uids, so
    NPROC and files never cross between them; more runs at once share uids, round robin."""

    def __init__(self, base: int) -> None:
        self._free: list[int] = []
        self._next = 0
        self.base = base + (os.getpid() * UIDS_PER_PROCESS) % UID_SLOTS
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def take(self) -> Iterator[int]:
        with self._lock:
            if self._free:
                slot = self._free.pop()
            else:
                slot = self._next
                self._next += 1
        try:
            yield self.base + slot % UIDS_PER_PROCESS
        finally:
            with self._lock:
                self._free.append(slot)
