"""Real attacks in Python against the real sandbox (the C++ ones: test_security.py).

Each judges a Python 3 program that tries to get out, asserting the verdict and, through
`host_guard`, an unharmed host. Programs that probe many doors print what they got
through (expected: nothing); those whose first forbidden call ends them are SV.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from codefu_sandbox import Judge, JudgeReport, Limits, TestCase, Verdict

MiB = 1 << 20
LIMITS = Limits(1.0, 256 * MiB)
ONE_TEST = [TestCase("", "")]

pytestmark = [pytest.mark.security, pytest.mark.usefixtures("host_guard")]


def run(
    judge: Judge, source: str, tests: list[TestCase] | None = None, limits: Limits = LIMITS
) -> JudgeReport:
    report = judge.judge(source, tests or ONE_TEST, limits, language="python")
    assert report.compile.ok, report.compile.diagnostics
    return report


def probe(judge: Judge, attempts: list[str], expected: str = "0") -> JudgeReport:
    """Run a program that tries each statement in `attempts` (an exception means it was
    stopped) and prints how many got through; AC with `expected` means all were stopped."""
    body = "".join(
        f"try:\n    {a}\n    got.append({a!r})\nexcept Exception:\n    pass\n" for a in attempts
    )
    source = f"got = []\n{body}print(len(got), *got)\n"
    report = run(judge, source, [TestCase("", f"{expected}\n")])
    assert report.verdict is Verdict.AC, report.to_dict()
    return report


def violations(judge: Judge, attacks: dict[str, str]) -> None:
    """Judge one program that runs the attack its test names (one test per attack, so one
    compile and one sandbox-exec for all); each must end as a security violation."""
    source = f"import sys\nATTACKS = {attacks!r}\nexec(ATTACKS[sys.stdin.readline().strip()])\n"
    report = run(judge, source, [TestCase(f"{name}\n", "") for name in attacks])
    verdicts = {name: str(t.verdict) for name, t in zip(attacks, report.tests, strict=True)}
    assert verdicts == dict.fromkeys(attacks, "SV")


def test_new_processes_and_exec_are_security_violations(judge: Judge) -> None:
    violations(
        judge,
        {
            "fork": "import os\nos.fork()",
            "system": "import os\nos.system('true')",
            "subprocess": "import subprocess\nsubprocess.run(['true'])",
            "posix_spawn": "import os\nos.posix_spawn('/bin/true', ['true'], {})",
            "execv": "import os\nos.execv('/bin/sh', ['sh', '-c', 'true'])",
            "multiprocessing": "import multiprocessing\n"
            "multiprocessing.Process(target=print).start()",
            "pipe": "import os\nos.pipe()",
        },
    )


def test_execve_of_a_shell_leaves_nothing_behind(judge: Judge) -> None:
    marker = Path("/tmp") / f"codefu-exec-{uuid.uuid4().hex}"
    source = f"import os\nos.execv('/bin/sh', ['sh', '-c', 'touch {marker}'])\n"
    assert run(judge, source).verdict is Verdict.SV
    assert not marker.exists()


def test_connect_to_local_listener_is_blocked(judge: Judge, listener: Any) -> None:
    source = f"import socket\nsocket.create_connection(('127.0.0.1', {listener.port}))\n"
    assert run(judge, source).verdict is Verdict.SV
    assert listener.accepted == []


def test_sockets_are_security_violations(judge: Judge) -> None:
    violations(
        judge,
        {
            "unix": "import socket\nsocket.socket(socket.AF_UNIX, socket.SOCK_STREAM)",
            "socketpair": "import socket\nsocket.socketpair()",
            "udp": "import socket\nsocket.socket(socket.AF_INET, socket.SOCK_DGRAM)",
        },
    )


def test_ctypes_reaches_no_further_than_python(judge: Judge) -> None:
    libc = "import ctypes, os\nlibc = ctypes.CDLL(None)\n"
    violations(
        judge,
        {
            "fork": libc + "libc.fork()",
            "raw-fork": libc + "libc.syscall(57)",  # fork by number
            "raw-socket": libc + "libc.syscall(41, 2, 1, 0)",  # socket by number
            "ptrace": libc + "libc.ptrace(16, 1, 0, 0)",  # PTRACE_ATTACH to init
            # A writable and executable page: the start of shellcode.
            "wx-mmap": libc + "libc.mmap.restype = ctypes.c_void_p\n"
            "libc.mmap(None, 4096, 7, 0x22, -1, 0)",
            "kill-parent": libc + "libc.kill(os.getppid(), 9)",
            "unshare": libc + "libc.unshare(0x10000000)",  # a user namespace
        },
    )


def test_signals_to_other_processes_are_violations(judge: Judge) -> None:
    violations(
        judge,
        {
            "parent": "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)",
            "init": "import os\nos.kill(1, 9)",
        },
    )


def test_writes_outside_the_folder_fail(judge: Judge) -> None:
    targets = [
        Path(d) / f"codefu-escape-{uuid.uuid4().hex}" for d in ("/tmp", "/var/tmp", "/dev/shm")
    ]
    targets.append(judge.cache_dir / f"codefu-escape-{uuid.uuid4().hex}")
    attempts = [f"open({str(t)!r}, 'w').write('x')" for t in targets]
    attempts += [
        "open('../escape.txt', 'w').write('x')",
        "open('own-file.txt', 'w').write('x')",  # no files by default: no disk filling
        "open('/proc/self/oom_score_adj', 'w').write('-1000')",
    ]
    probe(judge, attempts)
    assert not any(t.exists() for t in targets)


def test_making_a_directory_is_a_violation(judge: Judge) -> None:
    target = Path("/tmp") / f"codefu-escape-{uuid.uuid4().hex}"
    assert run(judge, f"import os\nos.mkdir({str(target)!r})").verdict is Verdict.SV
    assert not target.exists()


def test_reading_secrets_and_files_outside_the_system_trees_fails(
    judge: Judge, secret: Path, public_file: Path
) -> None:
    attempts = [
        f"open({str(secret)!r}).read()",
        f"open({str(public_file)!r}).read()",  # world-readable: Landlock hides it
        "open('/etc/shadow').read()",
        "open('/etc/passwd').read()",
        "open('/proc/1/environ').read()",
        "open('/proc/self/../1/cmdline').read()",
        "__import__('os').listdir('/root')",
        f"__import__('os').listdir({str(judge.cache_dir)!r})",
        "__import__('os').listdir('/tmp')",
        "__import__('os').listdir('..')",
        "__import__('pty').fork()",  # a terminal to escape through: /dev/ptmx is closed
    ]
    report = probe(judge, attempts)
    assert "TOPSECRET" not in str(report.to_dict())
    assert "PUBLIC-TESTS" not in str(report.to_dict())


def test_the_environment_is_empty(judge: Judge, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEFU_TEST_SECRET", "ENV-SECRET-1234")
    source = (
        "import os\n"
        "print(sorted(os.environ))\n"
        "for pid in ('self', os.getppid(), 1):\n"
        "    try:\n"
        "        print(open(f'/proc/{pid}/environ', 'rb').read())\n"
        "    except OSError:\n"
        "        print('denied')\n"
    )
    # Only the locale Python sets itself (PEP 538's coercion of the C locale); /proc is
    # outside what Landlock lets it read.
    expected = "['LC_CTYPE']\ndenied\ndenied\ndenied\n"
    report = run(judge, source, [TestCase("", expected)])
    assert report.verdict is Verdict.AC, report.to_dict()
    assert "ENV-SECRET" not in str(report.to_dict())


def test_no_site_packages_only_the_standard_library(judge: Judge) -> None:
    source = (
        "import sys\n"
        "print(any('packages' in p for p in sys.path), sys.flags.isolated, sys.flags.no_site)\n"
        "for name in ('codefu_sandbox', 'pytest', 'numpy'):\n"
        "    try:\n"
        "        __import__(name)\n"
        "        print(name)\n"
        "    except ImportError:\n"
        "        pass\n"
    )
    report = run(judge, source, [TestCase("", "False 1 1\n")])
    assert report.verdict is Verdict.AC, report.to_dict()


def test_threads_are_capped_by_the_process_limit(judge: Judge) -> None:
    source = (
        "import threading\n"
        "stop = threading.Event()\n"
        "threads = []\n"
        "try:\n"
        "    for _ in range(1000):\n"
        "        t = threading.Thread(target=stop.wait)\n"
        "        t.start()\n"
        "        threads.append(t)\n"
        "except RuntimeError:\n"
        "    pass\n"
        "stop.set()\n"
        "print('capped' if len(threads) < 1000 else 'all')\n"
    )
    report = run(judge, source, [TestCase("", "capped\n")])
    if not judge.runner.isolation.drop_uid:  # RLIMIT_NPROC applies to a sandbox uid only
        pytest.skip("not root: no sandbox uid, no per-run process cap")
    assert report.verdict is Verdict.AC, report.to_dict()


def test_spinning_threads_share_one_cpu_limit(judge: Judge) -> None:
    source = (
        "import threading\n"
        "def spin():\n"
        "    while True:\n"
        "        pass\n"
        "for _ in range(4):\n"
        "    threading.Thread(target=spin, daemon=True).start()\n"
        "spin()\n"
    )
    report = run(judge, source, limits=Limits(0.25, 256 * MiB))
    assert report.verdict is Verdict.TLE
    assert report.tests[0].wall_seconds < 10


def test_deep_recursion_in_a_big_stack_thread_is_accepted(judge: Judge) -> None:
    """The contest idiom: a thread with a large stack and a raised recursion limit."""
    source = (
        "import sys, threading\n"
        "sys.setrecursionlimit(1 << 20)\n"
        "threading.stack_size(1 << 27)\n"
        "def depth(n):\n"
        "    return 0 if n == 0 else 1 + depth(n - 1)\n"
        "def main():\n"
        "    print(depth(int(input())))\n"
        "t = threading.Thread(target=main)\n"
        "t.start()\n"
        "t.join()\n"
    )
    report = run(judge, source, [TestCase("100000\n", "100000\n")], Limits(2.0, 256 * MiB))
    assert report.verdict is Verdict.AC, report.to_dict()


def test_sleeping_forever_is_tle_by_the_wall_backstop(judge: Judge) -> None:
    report = run(judge, "import time\ntime.sleep(3600)\n", limits=Limits(0.25, 256 * MiB))
    assert report.verdict is Verdict.TLE
    assert report.tests[0].cpu_seconds < 0.25 < report.tests[0].wall_seconds < 10


def test_flooding_stdout_is_ole(judge: Judge) -> None:
    source = "import sys\nblock = 'x' * (1 << 20)\nwhile True:\n    sys.stdout.write(block)\n"
    report = run(judge, source)
    assert report.verdict is Verdict.OLE, report.to_dict()


def test_flooding_stderr_is_stopped_at_the_cap(judge: Judge) -> None:
    source = "import sys\nblock = 'x' * (1 << 20)\nwhile True:\n    sys.stderr.write(block)\n"
    report = run(judge, source)
    assert report.verdict in (Verdict.RE, Verdict.OLE), report.to_dict()
    assert report.tests[0].wall_seconds < 10


@pytest.mark.parametrize(
    "source",
    [
        "x = " + "(" * 100_000 + "1" + ")" * 100_000,  # the parser's nesting limit
        "x = 1\n\0\n",  # a NUL byte
        "x = '\udcff'\n",  # not UTF-8
        "# -*- coding: no-such-codec -*-\nx = 1\n",
    ],
    ids=["nesting", "nul", "not-utf8", "bad-coding"],
)
def test_sources_the_byte_compiler_refuses_are_compile_errors(judge: Judge, source: str) -> None:
    report = judge.judge(source, ONE_TEST, LIMITS, language="python")
    assert report.verdict is Verdict.CE, report.to_dict()
    assert report.compile.diagnostics.strip()


def test_byte_compilation_runs_no_code(judge: Judge) -> None:
    marker = Path("/tmp") / f"codefu-compile-{uuid.uuid4().hex}"
    source = f"open({str(marker)!r}, 'w').write('x')\ndef f(:\n"
    report = judge.judge(source, ONE_TEST, LIMITS, language="python")
    assert report.verdict is Verdict.CE
    assert not marker.exists()
