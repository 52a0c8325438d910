"""Progress lines for the CPU rehearsal's long phases, so that none is silent for 10 s.

`Progress`: a loop of known length (the warm start): steps done, the loss, elapsed and time
left, every few seconds. `heartbeat`: one long call (imports, composing veRL's config,
starting Ray): its name, then the time elapsed every few seconds until it returns.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

# Seconds between lines: often enough that no phase is silent for 10 s.
EVERY_S = 5.0


class Progress:
    """`update(done, loss=...)` after each step prints `label: done/total, values, elapsed,
    ~left` when `every_s` seconds have passed since the last line, and always at the last step."""

    def __init__(
        self,
        label: str,
        total: int,
        *,
        every_s: float = EVERY_S,
        clock: Callable[[], float] = time.monotonic,
        out: TextIO | None = None,
    ) -> None:
        self.label = label
        self.total = total
        self.every_s = every_s
        self.clock = clock
        self.out = out
        self.start = clock()
        self.last = self.start

    def update(self, done: int, **values: float) -> None:
        now = self.clock()
        if done < self.total and now - self.last < self.every_s:
            return
        self.last = now
        elapsed = now - self.start
        left = elapsed / done * (self.total - done) if done else float("nan")
        shown = "".join(f", {k} {v:.3f}" for k, v in values.items())
        print(
            f"{self.label}: {done}/{self.total}{shown}, {elapsed:.0f}s elapsed, ~{left:.0f}s left",
            file=self.out or sys.stdout,
            flush=True,
        )


@contextmanager
def heartbeat(label: str, *, every_s: float = EVERY_S, out: TextIO | None = None) -> Iterator[None]:
    """Print `label...` now, then `label: Ns elapsed` every `every_s` seconds until the block
    ends; nothing more once it has ended."""
    stream = out or sys.stdout
    print(f"{label}...", file=stream, flush=True)
    start = time.monotonic()
    done = threading.Event()

    def beat() -> None:
        while not done.wait(every_s):
            print(f"{label}: {time.monotonic() - start:.0f}s elapsed", file=stream, flush=True)

    thread = threading.Thread(target=beat, name="codefu-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
