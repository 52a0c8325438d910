"""Progress lines for the CPU rehearsal's long phases, so that none is silent for 10 s.

`Progress`: a loop of known length (the warm start): steps done, the loss, elapsed and time
left, every few seconds. `Heartbeat`: one long call (imports, composing veRL's config,
starting Ray): its name, then the time elapsed every few seconds until it returns.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

# Seconds between lines: often enough that no phase is silent for 10 s.
EVERY_S = 5.0


class Progress:
    """`update(done, loss=...)` after each step prints `label: done/total, values, elapsed,
    ~left` when `every_s` seconds have passed since the last line, and always at the last step.

    The time left is the steps left at the pace of the steps after the first update: the
    first step carries one-off costs (the warm start's first step took seconds more than the
    others, and an estimate from it said 719 s for 267 s of work)."""

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
        self.first: tuple[float, int] | None = None  # (time, done) at the first update

    def update(self, done: int, **values: float) -> None:
        now = self.clock()
        if self.first is None:
            self.first = (now, done)
        if done < self.total and now - self.last < self.every_s:
            return
        self.last = now
        elapsed = now - self.start
        since, done_then = self.first
        left = ""  # no pace yet: nothing was done after the first update
        if done > done_then:
            left = f", ~{(now - since) / (done - done_then) * (self.total - done):.0f}s left"
        shown = "".join(f", {k} {v:.3f}" for k, v in values.items())
        print(
            f"{self.label}: {done}/{self.total}{shown}, {elapsed:.0f}s elapsed{left}",
            file=self.out or sys.stdout,
            flush=True,
        )


class Heartbeat:
    """`with Heartbeat(label):` prints `label...` on entry, then `label: Ns elapsed` whenever
    `every_s` seconds have passed without a line, until the block ends.

    `mark(label)` says the phase moved on (a step ended and printed its row): the silence
    and the elapsed time count again from now, and later lines carry the new label.
    """

    def __init__(self, label: str, *, every_s: float = EVERY_S, out: TextIO | None = None) -> None:
        self.label = label
        self.every_s = every_s
        self.out = out
        self._phase_start = self._last_line = time.monotonic()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="codefu-heartbeat", daemon=True)

    def __enter__(self) -> Heartbeat:
        print(f"{self.label}...", file=self.out or sys.stdout, flush=True)
        self.mark()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()

    def mark(self, label: str | None = None) -> None:
        if label is not None:
            self.label = label
        self._phase_start = self._last_line = time.monotonic()

    def _beat(self) -> None:
        while not self._done.wait(max(0.0, self._last_line + self.every_s - time.monotonic())):
            now = time.monotonic()
            if now - self._last_line >= self.every_s:
                elapsed = now - self._phase_start
                print(
                    f"{self.label}: {elapsed:.0f}s elapsed", file=self.out or sys.stdout, flush=True
                )
                self._last_line = now
