"""Settings and fixtures shared by every package's test suite.

pytest loads this file for every suite: the root pyproject.toml holds pytest's settings, so
the repository root is the rootdir (and the default confcutdir) wherever pytest starts.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests assert what a function returns, never how fast: CI machines are shared and
# noisy (a 200 ms example deadline failed a checker property on a loaded 2-core machine).
settings.register_profile("codefu", deadline=None)
settings.load_profile("codefu")

# Ray starts its worker processes at niceness 15 (its `worker_niceness`), so that on a judge
# node the raylet stays responsive beside busy workers. Here the tests' own processes and any
# neighbour run at niceness 0 and would get ~28x the CPU of the Ray cluster under test: on a
# loaded 2-core machine a judging of one small program then outlasted its 89 s deadline.
# Every Ray process the suite starts (ray.init, Cluster, the smoke's subprocesses) reads this,
# as the cluster a run starts on this machine does (codefu_trainer/run/local_ray.py).
os.environ.setdefault("RAY_worker_niceness", "0")

# One OpenMP thread per process. pytest-xdist already runs one worker per core, and torch's
# default of one thread per core in each worker, its subprocesses and Ray's processes beside
# them oversubscribed the cores: OpenMP threads wait for each other at every parallel region,
# and a thread that lost its core stalls the rest. Measured on 2 cores (2026-11-29): the
# trainer's suite 15 min 20 s -> 12 min 10 s, the two-step Python rehearsal 213 s -> 58 s in it
# (33 s alone). Set before any test imports torch; a value the caller set is kept.
os.environ.setdefault("OMP_NUM_THREADS", "1")

# A line-buffered log (CI, `| tee`) shows nothing of a line of pytest-xdist's dots until it
# ends (every 72 tests): the suite looked hung for 16 min. The heartbeat below prints a
# progress line every HEARTBEAT_S seconds, under the 60 s such a log may stay silent.
HEARTBEAT_S = 50.0


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--heartbeat",
        type=float,
        default=HEARTBEAT_S,
        metavar="SECONDS",
        help="print a progress line (tests done, tests running and for how long) every "
        f"SECONDS; 0: never (default {HEARTBEAT_S:.0f})",
    )


@pytest.hookimpl(trylast=True)  # after the terminal reporter is registered
def pytest_configure(config: pytest.Config) -> None:
    every = config.getoption("heartbeat")
    terminal = config.pluginmanager.get_plugin("terminalreporter")
    # An xdist worker's output never reaches the terminal: its controller prints the beats.
    if every > 0 and terminal is not None and not hasattr(config, "workerinput"):
        config.pluginmanager.register(Heartbeat(config, every), "codefu-heartbeat")


def _duration(seconds: float) -> str:
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes} min {rest:02d} s" if minutes else f"{rest} s"


class Heartbeat:
    """Every `every` seconds, one line: time since the session started, tests done (of how
    many), and the tests running with how long each has run, oldest first. Works in one
    process and in pytest-xdist's controller (which relays its workers' test starts and ends).

    The lines go to a copy of the terminal's file descriptor taken at configure time (pytest's
    output capture is paused then), so that a test's own output capture never swallows them.
    """

    def __init__(self, config: pytest.Config, every: float) -> None:
        self.writer = config.get_terminal_writer()
        self.every = every
        self.fd = os.dup(1)
        self.start = time.monotonic()
        self.done = 0
        self.total: int | None = None
        self.running: dict[str, float] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="codefu-heartbeat", daemon=True)

    def pytest_sessionstart(self) -> None:
        self._thread.start()

    def pytest_sessionfinish(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def pytest_unconfigure(self) -> None:
        os.close(self.fd)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.total = len(session.items)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: object, ids: Sequence[str]) -> None:
        self.total = len(ids)

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        with self._lock:
            self.running[nodeid] = time.monotonic()

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        with self._lock:
            self.running.pop(nodeid, None)
            self.done += 1

    def line(self) -> str:
        now = time.monotonic()
        with self._lock:
            running = sorted(self.running.items(), key=lambda item: item[1])
            done = self.done
        of = f" of {self.total}" if self.total else ""
        shown = ", ".join(f"{nodeid} ({_duration(now - t)})" for nodeid, t in running[:4])
        more = f" and {len(running) - 4} more" if len(running) > 4 else ""
        return (
            f"[heartbeat {_duration(now - self.start)}] {done}{of} tests done; running: "
            f"{shown + more if running else 'none (collecting, or between tests)'}"
        )

    def _beat(self) -> None:
        ours = 0  # where pytest's current line stood when this last wrote
        while not self._stop.wait(self.every):
            # pytest's line (a file's dots) may be half written: start a line of our own.
            width = self.writer.width_of_current_line
            start = "\n" if width not in (0, ours) else ""
            os.write(self.fd, f"{start}{self.line()}\n".encode())
            ours = width


REAL_DATA_ENV = "CODEFU_REAL_DATA"
EASY = "codefu_easy"
SPLITS = ("train", "test")


@pytest.fixture(scope="session")
def real_data_dir() -> Path | None:
    """The real-data folder ($CODEFU_REAL_DATA, the repository's ../shared/data), or None
    when it is unset. Set but without codefu_easy/{train,test}.parquet fails the test: a
    wrong path must not turn the real-data tests into silent skips."""
    root = os.environ.get(REAL_DATA_ENV)
    if not root:
        return None
    missing = [str(Path(root) / EASY / f"{s}.parquet") for s in SPLITS]
    missing = [path for path in missing if not Path(path).is_file()]
    if missing:
        pytest.fail(
            f"{REAL_DATA_ENV}={root} lacks {', '.join(missing)}: point it at the folder "
            f"holding {EASY}/{{train,test}}.parquet (shared/data), or unset it."
        )
    return Path(root)


@pytest.fixture(scope="session")
def codefu_easy(real_data_dir: Path | None) -> Path:
    """$CODEFU_REAL_DATA/codefu_easy, the real CodeContests problems ({train,test}.parquet);
    the test skips when CODEFU_REAL_DATA is unset."""
    if real_data_dir is None:
        pytest.skip(
            f"{REAL_DATA_ENV} is unset: set it to a folder holding "
            f"{EASY}/{{train,test}}.parquet (real CodeContests problems) to run this"
        )
    return real_data_dir / EASY


Refused = Callable[[Callable[[Sequence[str]], int], Sequence[str], str, Path], None]


@pytest.fixture
def refused(capsys: pytest.CaptureFixture[str]) -> Refused:
    """`refused(main, argv, names, folder)`: the command `main(argv)` turns a bad input away
    as the README's exit codes say: exit 2, no traceback, a last stderr line naming the value
    (`names` in it) that is the only one (or follows argparse's usage line, for argparse's own
    refusals), and nothing new in `folder`."""

    def check(
        main: Callable[[Sequence[str]], int], argv: Sequence[str], names: str, folder: Path
    ) -> None:
        before = sorted(folder.rglob("*"))
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's own refusals
            code = exc.code  # type: ignore[assignment]
        err = capsys.readouterr().err
        lines = [line for line in err.splitlines() if line.strip()]
        assert code == 2, err
        assert "Traceback" not in err
        assert lines and names in lines[-1], err
        assert len(lines) == 1 or (len(lines) > 1 and lines[0].startswith("usage:")), err
        assert sorted(folder.rglob("*")) == before

    return check
