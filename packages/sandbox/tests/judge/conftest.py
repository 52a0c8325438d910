"""Fixtures for the judge security/accuracy suite (`nox -s judge-tests`).

`judge`: one session-wide Judge on a temporary cache dir (the precompiled header is
built once). `host_guard`: snapshots what an attack could harm on the host and checks
it afterwards (no new files in world-writable places, no stray sandbox processes).
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from codefu_sandbox import Judge

WORLD_WRITABLE = (Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"))


@pytest.fixture(scope="session")
def judge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Judge]:
    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed (Debian: apt-get install g++)")
    yield Judge(tmp_path_factory.mktemp("codefu-judge-cache"))


def sandbox_owned_files(judge: Judge) -> list[Path]:
    """Entries in world-writable directories owned by a sandbox uid (none may exist)."""
    low = judge.runner.uids.base
    found = []
    for root in WORLD_WRITABLE:
        if not root.is_dir():
            continue
        for entry in root.iterdir():
            try:
                uid = entry.lstat().st_uid
            except OSError:
                continue
            if low <= uid < low + 64:
                found.append(entry)
    return found


def sandbox_processes(judge: Judge) -> list[int]:
    """Pids of live processes owned by any sandbox uid of this judge."""
    low = judge.runner.uids.base
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            uid = entry.stat().st_uid
        except OSError:
            continue
        if low <= uid < low + 64:
            pids.append(int(entry.name))
    return pids


@dataclass
class Listener:
    """A TCP listener on 127.0.0.1 that records accepted connections."""

    port: int
    accepted: list[str] = field(default_factory=list)


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    record = Listener(server.getsockname()[1])
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, addr = server.accept()
            except (TimeoutError, OSError):
                continue
            record.accepted.append(f"{addr}")
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield record
    stop.set()
    thread.join()
    server.close()


@pytest.fixture
def host_guard(judge: Judge) -> Iterator[None]:
    """Fails the test if the attack left a sandbox-owned file in /tmp, /var/tmp, /dev/shm,
    or a sandboxed process alive. (Other users of the machine write to /tmp concurrently,
    so ownership, not a before/after listing, tells what the sandbox wrote.)"""
    yield
    leftovers = sandbox_owned_files(judge)
    assert not leftovers, f"files written outside the sandbox: {sorted(map(str, leftovers))}"
    assert not sandbox_processes(judge), "a sandboxed process outlived its test"
    assert os.getppid() > 1  # our parent (pytest's launcher) is alive


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    """A 0600 root-owned (when root) secret in a traversable directory."""
    folder = tmp_path / "secrets"
    folder.mkdir()
    for parent in (folder, *folder.parents):
        if parent == Path("/"):
            break
        if parent.stat().st_uid == os.geteuid():
            parent.chmod(parent.stat().st_mode | 0o011)  # traversable, not listable
    path = folder / "secret.txt"
    path.write_text("TOPSECRET-42\n")
    path.chmod(0o600)
    return path


@pytest.fixture
def public_file(secret: Path) -> Path:
    """A world-readable file outside the system trees (Landlock must still hide it)."""
    path = secret.parent / "public.txt"
    path.write_text("PUBLIC-TESTS-7\n")
    path.chmod(0o644)
    return path
