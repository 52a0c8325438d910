"""The console of `codefu-train` and `codefu-eval`: the project's own lines on the terminal,
everything else in the run's log file.

`@command("codefu-train")` on a CLI's `main` gives the call a console; `--verbose` calls
`show_everything()`, and every line then comes out as it did before. Once a run knows its
directory it calls `log_to(<run dir>)`, the log being `<run dir>/<program>.log`: from then
until `main` returns, a line is shown on the terminal only when it is the project's
(`is_ours`: it starts with `codefu-`, also behind Ray's `(Actor pid=N)` prefix, as lines of
veRL's and our Ray actors reach the driver through Ray's log forwarding) or is written to
`stdout()` (the tables). Every line, library warnings, veRL's configuration dump, Ray's
notices and anything written to file descriptors 1 and 2 (C libraries, child processes)
included, goes to the log file. A run that fails shows the log's last lines on the
terminal. Outside a `@command` call (a test calling a job directly) nothing changes.
"""

from __future__ import annotations

import functools
import io
import os
import re
import sys
import threading
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import ParamSpec, TextIO

# The project's lines, also as Ray forwards an actor's line: `(TaskRunner pid=12) codefu-…`,
# the prefix perhaps in colour (ANSI escapes).
OURS = re.compile(r"^(?:\x1b\[[0-9;]*m)?(?:\([^)]*pid=\d+[^)]*\)(?:\x1b\[[0-9;]*m)? )?codefu-")
# Lines of the log shown when a quiet run fails.
FAILURE_TAIL = 40

P = ParamSpec("P")


def is_ours(line: str) -> bool:
    """Whether a line is one of the project's own (shown even when quiet)."""
    return OURS.match(line) is not None


class _Console:
    """One CLI call's console: the terminal's streams and, once quiet, the log file."""

    def __init__(self, program: str) -> None:
        self.program = program
        self.verbose = False
        self.log: TextIO | None = None
        self.path: Path | None = None
        self.lock = threading.Lock()
        self.terminal: dict[int, TextIO] = {}  # fd -> a stream to the terminal
        self.saved: dict[int, int] = {}  # fd -> a copy of what it was before
        self.streams: tuple[TextIO, TextIO] = (sys.stdout, sys.stderr)
        self.routers: list[_Router] = []

    @property
    def quiet(self) -> bool:
        return self.log is not None

    def start(self, directory: Path) -> None:
        path = directory / f"{self.program}.log"
        directory.mkdir(parents=True, exist_ok=True)
        self.log = path.open("a", buffering=1, encoding="utf-8", errors="replace")
        self.path = path
        self.streams = (sys.stdout, sys.stderr)
        routers = []
        for fd, stream in zip((1, 2), self.streams, strict=True):
            stream.flush()
            terminal: TextIO = stream
            try:
                if stream.fileno() == fd:  # the process's own stream: redirect the descriptor
                    self.saved[fd] = os.dup(fd)
                    terminal = os.fdopen(
                        os.dup(fd), "w", buffering=1, encoding="utf-8", errors="replace"
                    )
                    os.dup2(self.log.fileno(), fd)
            except (AttributeError, OSError, io.UnsupportedOperation):
                pass  # a captured stream (a test's): only its Python writes are routed
            self.terminal[fd] = terminal
            routers.append(_Router(self, fd))
        self.routers = routers
        sys.stdout, sys.stderr = routers[0], routers[1]
        self.show(
            f"{self.program}: library output (warnings, veRL's configuration, Ray's messages) "
            f"goes to {path}; --verbose shows it here\n"
        )

    def emit(self, text: str, ours: bool, fd: int) -> None:
        with self.lock:
            if self.log is None:  # closed: a thread still holding a router writes as before
                self.streams[fd - 1].write(text)
                return
            self.log.write(text)
            if ours:
                self.terminal[fd].write(text)
                self.terminal[fd].flush()

    def show(self, text: str) -> None:
        self.emit(text, True, 1)

    def close(self, failed: bool) -> None:
        if self.log is None:
            return
        for router in self.routers:
            router.flush_partial()
        sys.stdout, sys.stderr = self.streams
        for fd, saved in self.saved.items():
            os.dup2(saved, fd)
            os.close(saved)
            self.terminal[fd].close()
        self.log.close()
        self.log = None
        if failed and self.path is not None and self.path.is_file():
            with self.path.open(encoding="utf-8", errors="replace") as f:
                tail = "".join(deque(f, maxlen=FAILURE_TAIL))
            print(
                f"{self.program}: the run failed; the last lines of {self.path}:\n{tail}",
                file=sys.stderr,
                flush=True,
            )


class _Router(io.TextIOBase):
    """sys.stdout or sys.stderr of a quiet run: each line to the log, the project's lines
    also to the terminal. A line is judged by the write that starts it (a multi-line print
    of ours is ours throughout); each thread assembles its own lines."""

    def __init__(self, console: _Console, fd: int) -> None:
        self.console = console
        self.fd = fd
        self.pending: dict[int, tuple[str, bool]] = {}  # thread id -> (partial line, ours)

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        if self.fd in self.console.saved:
            return self.fd  # now the log file
        raise io.UnsupportedOperation("fileno")

    def write(self, text: str) -> int:
        key = threading.get_ident()
        partial, ours = self.pending.get(key, ("", False))
        if not partial:
            ours = is_ours(text)
        partial += text
        if "\n" in partial:
            lines, _, partial = partial.rpartition("\n")
            self.console.emit(lines + "\n", ours, self.fd)
        self.pending[key] = (partial, ours)
        return len(text)

    def flush(self) -> None:
        if self.console.log is not None:
            self.console.log.flush()

    def flush_partial(self) -> None:
        for partial, ours in list(self.pending.values()):
            if partial:
                self.console.emit(partial + "\n", ours, self.fd)
        self.pending.clear()


# The console of each `@command` call in progress, innermost last.
_calls: list[_Console] = []


def _active() -> _Console | None:
    return _calls[-1] if _calls else None


def command(program: str) -> Callable[[Callable[P, int]], Callable[P, int]]:
    """Decorate a CLI's `main`: the call gets a console (module docstring)."""

    def decorate(main: Callable[P, int]) -> Callable[P, int]:
        @functools.wraps(main)
        def with_console(*args: P.args, **kwargs: P.kwargs) -> int:
            console = _Console(program)
            _calls.append(console)
            failed = True  # an exception, or exit code 1 (bad inputs say why in one line)
            try:
                code = main(*args, **kwargs)
                failed = code == 1
                return code
            finally:
                _calls.remove(console)
                console.close(failed)

        return with_console

    return decorate


def show_everything() -> None:
    """`--verbose`: every line on the terminal, as it comes (no log file)."""
    console = _active()
    if console is not None:
        console.verbose = True


def log_to(directory: Path) -> None:
    """The run's log file is `<directory>/<program>.log`: from now on only the project's
    lines reach the terminal (nothing changes under --verbose, once quiet, or outside a
    `@command` call)."""
    console = _active()
    if console is not None and not console.verbose and not console.quiet:
        console.start(directory)


def shows(line: str) -> bool:
    """Whether a line passed on from a child process belongs on the terminal."""
    console = _active()
    return console is None or not console.quiet or is_ours(line)


def stdout() -> TextIO | io.TextIOBase:
    """Where the project's tables go: the terminal (and the log) even when quiet."""
    console = _active()
    if console is not None and console.quiet:
        return _Shown(console)
    return sys.stdout


class _Shown(io.TextIOBase):
    """Writes that are the project's whatever they say (a table's rows)."""

    def __init__(self, console: _Console) -> None:
        self.console = console

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.console.show(text)
        return len(text)
