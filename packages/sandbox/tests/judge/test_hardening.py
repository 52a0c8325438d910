"""Hardening of solution runs: the seccomp allowlist, IPC, the terminal, parent death, cgroup v2.

Real programs against the real sandbox, as in test_security.py; each asserts a verdict and
what the host looks like afterwards.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from codefu_sandbox import Judge, Limits, TestCase, Verdict
from codefu_sandbox.runner import MemoryCgroups, cgroup2_memory_roots, cgroup2_mounts

MiB = 1 << 20
LIMITS = Limits(1.0, 256 * MiB)

pytestmark = [pytest.mark.security, pytest.mark.usefixtures("host_guard")]

PRELUDE = """
#include <bits/stdc++.h>
#include <fcntl.h>
#include <mqueue.h>
#include <sched.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>
using namespace std;
"""


def judged(judge: Judge, body: str, tests: list[TestCase] | None = None) -> Verdict:
    report = judge.judge(PRELUDE + body, tests or [TestCase("", "")], LIMITS)
    assert report.compile.ok, report.compile.diagnostics
    return report.verdict


# Calls outside the allowlist (by what they try): the call the filter refuses, and the code.
OUTSIDE_THE_ALLOWLIST = {
    "sync": ("sync", "sync();"),
    "syncfs": ("syncfs", "syncfs(1);"),
    "mlockall": ("mlockall", "mlockall(MCL_CURRENT);"),
    "inotify": ("inotify_init1", "inotify_init1(0);"),
    "sched_setscheduler": (
        "sched_setscheduler",
        "sched_param p{}; sched_setscheduler(0, SCHED_BATCH, &p);",
    ),
    "ioprio_set": ("ioprio_set", "syscall(SYS_ioprio_set, 1, 0, 0);"),
    "setpriority": ("setpriority", "setpriority(PRIO_PROCESS, 0, 19);"),
    "mq_open": ("mq_open", 'mq_open("/codefu", O_CREAT | O_RDWR, 0600, nullptr);'),
    "shmget": ("shmget", "shmget(IPC_PRIVATE, 1 << 20, IPC_CREAT | 0600);"),
    "msgget": ("msgget", "msgget(IPC_PRIVATE, IPC_CREAT | 0600);"),
    "semget": ("semget", "semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);"),
    "clone-process": ("clone", "syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);"),
    "clone-namespace": (
        "clone",
        "syscall(SYS_clone, CLONE_VM | CLONE_THREAD | CLONE_SIGHAND | CLONE_NEWNET, 0, 0, 0, 0);",
    ),
    "tkill-other": ("tkill", "syscall(SYS_tkill, 1, SIGKILL);"),
    "prlimit-other": ("prlimit64", "rlimit r{}; prlimit(1, RLIMIT_NOFILE, nullptr, &r);"),
    "mmap-wx": (
        "mmap",
        "mmap(0, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);",
    ),
    "mprotect-wx": (
        "mprotect",
        "void *p = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);"
        " mprotect(p, 4096, PROT_READ | PROT_WRITE | PROT_EXEC);",
    ),
    "personality": ("personality", "syscall(SYS_personality, 0xffffffff);"),
    "getsid": ("getsid", "getsid(0);"),
}


@pytest.mark.parametrize(
    ("refused", "call"), OUTSIDE_THE_ALLOWLIST.values(), ids=OUTSIDE_THE_ALLOWLIST.keys()
)
def test_a_call_outside_the_allowlist_is_a_named_security_violation(
    judge: Judge, refused: str, call: str
) -> None:
    source = PRELUDE + f'int main() {{ {call} puts("survived"); }}'
    report = judge.judge(source, [TestCase("", "")], LIMITS)
    assert report.verdict is Verdict.SV, report.to_dict()
    assert report.tests[0].message == f"forbidden system call: {refused}"


THREADS_BODY = """
int main() {
    ios::sync_with_stdio(false); cin.tie(nullptr);
    int n; cin >> n;
    atomic<long long> sum{0};
    vector<thread> pool;
    for (int t = 0; t < 4; t++)
        pool.emplace_back([&, t] {
            for (int i = t; i < n; i += 4) sum += i;
            this_thread::sleep_for(chrono::microseconds(50));
        });
    for (auto &t : pool) t.join();
    random_device rd; mt19937_64 gen(rd()); (void)gen();
    auto t0 = chrono::steady_clock::now(); (void)chrono::system_clock::now();
    mutex m; condition_variable cv;
    { unique_lock<mutex> lock(m); cv.wait_for(lock, chrono::milliseconds(1)); }
    auto answer = async(launch::async, [] { return 42; });
    int caught = 0;
    try { throw runtime_error("x"); } catch (const exception &) { caught = 1; }
    try { vector<int>(3).at(7); } catch (const out_of_range &) { caught++; }
    bool forward = chrono::steady_clock::now() >= t0;
    cout << sum << ' ' << answer.get() << ' ' << caught << ' ' << forward
         << ' ' << thread::hardware_concurrency() / max(1u, thread::hardware_concurrency())
         << endl;
}"""


def test_threads_atomics_random_chrono_async_exceptions_are_accepted(judge: Judge) -> None:
    body = THREADS_BODY
    tests = [TestCase("1000\n", "499500 42 2 1 1\n")]
    assert judged(judge, body, tests) is Verdict.AC


HERE = Path(__file__).resolve().parent
SANDBOX_EXEC_C = HERE.parents[1] / "src" / "codefu_sandbox" / "sandbox_exec.c"
BENCH_SOLUTIONS = HERE.parents[3] / "benchmarks" / "solutions"


def allowlisted_calls() -> set[str]:
    """Every call the solution filter lets through (allowed, checked or answered with an
    errno), read from sandbox_exec.c: the checks in `run_checks` and the `RUN_ALLOW` list."""
    text = SANDBOX_EXEC_C.read_text()
    checks = text[text.index("struct sock_filter run_checks[]") :]
    checks = checks[: checks.index("struct sock_filter checker_checks[]")]
    listed = text[text.index("#define RUN_ALLOW") : text.index("#define COMPILE_DENY")]
    return set(re.findall(r"__NR_(\w+)", checks + listed))


def _accepted_programs(real_data: Path | None) -> list[tuple[str, str, str]]:
    """(name, source, input) of accepted solutions: the benchmark's typical ones on their
    first test, the real problems' hand-written `ac.cpp` on their first public test (with
    the real data, `real_data`), and the threads/atomics/random/chrono program above."""
    programs = []
    typical = json.loads((BENCH_SOLUTIONS / "typical_tests.json").read_text())
    for path in sorted((BENCH_SOLUTIONS / "typical").glob("*.cpp")):
        programs.append((path.stem, path.read_text(), typical[path.stem][0]["input"]))
    if real_data is not None:
        import pyarrow.parquet as pq

        real = HERE / "real_solutions"
        manifest = json.loads((real / "manifest.json").read_text())
        first: dict[str, str] = {}
        for split in ("train", "test"):
            table = pq.read_table(real_data / "codefu_easy" / f"{split}.parquet")
            for row in table.column("reward_model").to_pylist():
                truth = row["ground_truth"]
                first[truth["name"]] = (truth["public_tests"]["input"] or [""])[0]
        for slug, meta in sorted(manifest.items()):
            programs.append((slug, (real / slug / "ac.cpp").read_text(), first[meta["name"]]))
    programs.append(("threads", PRELUDE + THREADS_BODY, "1000\n"))
    return programs


def test_accepted_solutions_make_only_allowlisted_calls(
    judge: Judge, real_data_dir: Path | None, tmp_path: Path
) -> None:
    """The evidence behind the allowlist, re-taken: `strace -f` of accepted solutions
    built by the judge's own compiler (static, -O2, PCH) sees no call outside it."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed (Debian/Ubuntu: apt-get install strace)")
    allowed = allowlisted_calls() | {"execve"}  # strace starts it by path; we by execveat
    outside: dict[str, list[str]] = {}
    for name, source, stdin in _accepted_programs(real_data_dir):
        compiled, program = judge.executor("cpp").compile(source)
        assert program is not None, compiled.diagnostics
        binary = program.argv[0]
        trace = tmp_path / f"{name}.strace"
        subprocess.run(
            ["strace", "-f", "-qq", "-o", str(trace), str(binary)],
            input=stdin.encode(),
            capture_output=True,
            check=True,
            timeout=60,
        )
        seen = set(re.findall(r"^\d+\s+(?:<\.\.\. )?(\w+)[( ]", trace.read_text(), re.M))
        assert {"read", "exit_group"} <= seen, f"{name}: strace recorded {sorted(seen)}"
        for call in seen - allowed:
            outside.setdefault(call, []).append(name)
    assert not outside, f"calls outside the allowlist (call: programs): {outside}"


PYTHON_STDLIB_PROGRAM = """import sys, threading, math, collections, heapq, bisect, itertools
import functools, random, re, string, decimal, fractions, array, statistics, io, os, time
sys.setrecursionlimit(10**6)
threading.stack_size(64 << 20)
n = int(sys.stdin.readline())
out = []
t = threading.Thread(target=lambda: out.append(sum(range(n))))
t.start()
t.join()
print(out[0], random.random() < 1, decimal.Decimal(1) / 3 > 0, time.perf_counter() > 0)
"""


# The real problems with Python solutions, and an input of each.
PYTHON_SAMPLE_INPUTS = {
    "916a_jamie_and_alarm_snooze": "3\n11 23\n",
    "624a_save_luke": "2 6 2 2\n",
    "1293b_joe_is_on_tv": "2\n",
}


def test_python_programs_make_only_allowlisted_calls(judge: Judge, tmp_path: Path) -> None:
    """The evidence that CPython fits the solution allowlist, re-taken: `strace -f` of the
    byte-compiler and of accepted Python programs, run as the judge runs them (the
    interpreter, its flags and the byte code in the folder; a call-based answer inside the
    call grader's harness, with LiveCodeBench's prelude), sees no call outside it."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed (Debian/Ubuntu: apt-get install strace)")
    from codefu_sandbox.graders.call import HARNESS
    from codefu_sandbox.languages.python import (
        BYTE_COMPILE,
        FLAGS,
        LIVECODEBENCH_PRELUDE,
        SOURCE_NAME,
        PythonExecutor,
    )

    allowed = allowlisted_calls() | {"execve"}  # strace starts it by path; we by execveat
    executor = judge.executor("python")
    assert isinstance(executor, PythonExecutor)
    programs: list[tuple[str, str, str, list[str] | None]] = [
        ("stdlib-and-threads", PYTHON_STDLIB_PROGRAM, "1000\n", None)
    ]
    for slug, stdin in PYTHON_SAMPLE_INPUTS.items():
        source = (HERE / "real_solutions" / slug / "ac.py").read_text()
        programs.append((slug, source, stdin, None))
    header = {
        "nonce": "n",
        "function": "solve",
        "prelude": LIVECODEBENCH_PRELUDE,
        "seconds": 10.0,
        "wall": 30.0,
        "memory": 1 << 30,
        "apps": False,
        "tests": 2,
    }
    programs.append(
        (
            "call-harness",
            "def solve(n):\n    return [sum(range(n)), n / 3]\n",
            f"{json.dumps(header)}\n[1000]\n[7]\n",
            [executor.interpreter, *FLAGS, "-c", HARNESS],
        )
    )
    outside: dict[str, list[str]] = {}
    for name, source, stdin, harness in programs:
        compiled, program = executor.compile(source)
        assert program is not None, compiled.diagnostics
        folder = tmp_path / name
        folder.mkdir()
        (folder / SOURCE_NAME).write_text(source)
        for file_name, cached in program.files.items():
            shutil.copyfile(cached, folder / file_name)
        runs = {
            "byte-compile": [executor.interpreter, *FLAGS, "-c", BYTE_COMPILE],
            "run": harness or list(program.argv),
        }
        for step, argv in runs.items():
            trace = tmp_path / f"{name}-{step}.strace"
            done = subprocess.run(
                ["strace", "-f", "-qq", "-o", str(trace), *argv],
                input=stdin.encode(),
                capture_output=True,
                cwd=folder,
                env={},
                check=False,
                timeout=60,
            )
            assert done.returncode == 0, f"{name} {step}: {done.stderr.decode()[-500:]}"
            if harness and step == "run":  # it called the function on both tests
                assert b"n test 1 " in done.stdout, done.stdout[-500:]
            seen = set(re.findall(r"^\d+\s+(?:<\.\.\. )?(\w+)[( ]", trace.read_text(), re.M))
            assert {"read", "exit_group"} <= seen, f"{name}: strace recorded {sorted(seen)}"
            for call in seen - allowed:
                outside.setdefault(call, []).append(f"{name} {step}")
    assert not outside, f"calls outside the allowlist (call: programs): {outside}"


def _sysv_objects() -> set[str]:
    """Keys and ids of every SysV IPC object in this (the host's) IPC namespace."""
    found = set()
    for kind in ("shm", "msg", "sem"):
        lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]
        found |= {f"{kind} {' '.join(line.split()[:2])}" for line in lines}
    return found


def _posix_ipc_names() -> set[str]:
    names = set()
    for root in (Path("/dev/shm"), Path("/dev/mqueue")):
        if root.is_dir():
            names |= {str(p) for p in root.iterdir()}
    return names


def test_ipc_objects_do_not_outlive_a_judged_program(judge: Judge) -> None:
    """Every way to create a lasting IPC object: SV or a plain failure, and nothing left."""
    before_sysv, before_posix = _sysv_objects(), _posix_ipc_names()
    tag = uuid.uuid4().hex[:12]
    attempts = [
        "int id = shmget(0x5eed, 64 << 20, IPC_CREAT | 0666);"
        " char *p = (char*)shmat(id, 0, 0); memset(p, 1, 64 << 20);",
        "msgget(0x5eee, IPC_CREAT | 0666);",
        "semget(0x5eef, 4, IPC_CREAT | 0666);",
        f'mq_open("/codefu-{tag}", O_CREAT | O_RDWR, 0666, nullptr);',
    ]
    for attempt in attempts:
        assert judged(judge, f"int main() {{ {attempt} }}") is Verdict.SV
    # shm_open is an open() under /dev/shm, which Landlock does not grant: it just fails.
    path = f"/dev/shm/codefu-{tag}"
    shm_open = f'int main() {{ printf("%d\\n", open("{path}", O_CREAT | O_RDWR, 0666) < 0); }}'
    assert judged(judge, shm_open, [TestCase("", "1\n")]) is Verdict.AC
    assert _sysv_objects() <= before_sysv
    assert not any(tag in name for name in _posix_ipc_names() - before_posix)


IPC_CREATOR = r"""
#include <stdio.h>
#include <sys/ipc.h>
#include <sys/shm.h>
int main(int argc, char **argv) {
    int id = shmget(atoi(argv[1]), 1 << 20, IPC_CREAT | 0600);
    printf("%d\n", id);
    return id < 0;
}
"""


def _launch(judge: Judge, tmp_path: Path, *args: str) -> str:
    out = tmp_path / "out.txt"
    line = subprocess.run(
        [str(judge.runner.sandbox_exec), "--wall", "10", "--stdout", str(out), *args],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert line.startswith("ok 0 "), line
    return out.read_text()


def test_the_ipc_namespace_layer_drops_what_a_run_created(judge: Judge, tmp_path: Path) -> None:
    """Without seccomp, so the namespace alone is tested: a segment created with --ipcns 1
    is gone afterwards; the same program without it leaves one behind (removed here)."""
    if not judge.runner.isolation.ipcns:
        pytest.skip("a private IPC namespace needs root (CAP_SYS_ADMIN) on this host")
    source = tmp_path / "ipc.c"
    source.write_text("#include <stdlib.h>\n" + IPC_CREATOR)
    binary = tmp_path / "ipc"
    subprocess.run(["gcc", "-O2", "-o", str(binary), str(source)], check=True)
    key = 0x7000_0000 + os.getpid() % 0x0FFF_FFFF
    _launch(judge, tmp_path, "--ipcns", "1", "--", str(binary), str(key))
    listed = {line.split()[0] for line in Path("/proc/sysvipc/shm").read_text().splitlines()[1:]}
    assert str(key) not in listed
    shmid = int(_launch(judge, tmp_path, "--", str(binary), str(key)))
    try:
        listed = {
            line.split()[0] for line in Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
        }
        assert str(key) in listed  # the control: the host namespace does keep it
    finally:
        subprocess.run(["ipcrm", "-m", str(shmid)], check=False)


def test_there_is_no_controlling_terminal(judge: Judge) -> None:
    body = """
    int main() {
        int tty = open("/dev/tty", O_RDWR);
        char c = 'x';
        int sti = ioctl(0, TIOCSTI, &c);
        int sti_errno = errno;
        termios t{};
        int tcgets = tcgetattr(1, &t);
        printf("%d %d %d %d %d\\n", tty < 0, sti < 0, sti_errno == ENOTTY, tcgets < 0, isatty(2));
    }"""
    assert judged(judge, body, [TestCase("", "1 1 1 1 0\n")]) is Verdict.AC


def _children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def test_the_program_dies_with_sandbox_exec(judge: Judge, tmp_path: Path) -> None:
    supervisor = subprocess.Popen(
        [str(judge.runner.sandbox_exec), "--wall", "60", "--", "/bin/sleep", "60"],
        stdout=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while not (children := _children_of(supervisor.pid)) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert children, "sandbox-exec started no child"
        supervisor.send_signal(signal.SIGKILL)
        supervisor.wait()
        deadline = time.monotonic() + 10
        while any(Path(f"/proc/{c}").exists() for c in children) and time.monotonic() < deadline:
            time.sleep(0.01)
        alive = [c for c in children if Path(f"/proc/{c}").exists()]
        assert not alive, f"orphaned program(s) {alive} outlived sandbox-exec"
    finally:
        supervisor.kill()
        supervisor.wait()


def _cgroup_v2_skip_reason() -> str:
    if os.geteuid() != 0:
        return "creating cgroups needs root"
    mounts = cgroup2_mounts()
    if not mounts:
        return "no cgroup2 file system is mounted (/proc/self/mounts lists none)"
    if not cgroup2_memory_roots():
        described = ", ".join(f"{m} (controllers: {_controllers(m) or 'none'})" for m in mounts)
        return (
            f"no cgroup2 mount offers the memory controller: {described}; on this host memory "
            "is bound to the v1 hierarchy (a kernel attaches a controller to one hierarchy)"
        )
    return ""


def _controllers(mount: Path) -> str:
    try:
        return (mount / "cgroup.controllers").read_text().strip()
    except OSError as exc:
        return f"unreadable: {exc}"


@pytest.fixture
def v2_judge(judge: Judge) -> Iterator[Judge]:
    reason = _cgroup_v2_skip_reason()
    if reason:
        pytest.skip(reason)
    root = cgroup2_memory_roots()[0]
    groups = MemoryCgroups.at(root, "v2")
    if groups is None:
        pytest.skip(f"cannot create a child cgroup with memory.max under {root / 'codefu'}")
    v2 = Judge(judge.cache_dir)
    v2.runner.cgroups = groups
    v2.runner.isolation = dataclasses.replace(v2.runner.isolation, cgroup="v2")
    yield v2


def test_the_cgroup_v2_memory_path(v2_judge: Judge) -> None:
    """A run inside a v2 memory cgroup: AC below the cap, MLE (an OOM kill counted in
    memory.events) when touching past it, and the per-run cgroups removed afterwards."""
    assert v2_judge.runner.cgroups is not None
    ok = 'int main() { vector<char> v(100 << 20, 1); printf("%d\\n", v[5]); }'
    assert judged(v2_judge, ok, [TestCase("", "1\n")]) is Verdict.AC
    big = 'int main() { vector<char> v(1LL << 30, 1); printf("%d\\n", v[5]); }'
    assert judged(v2_judge, big) is Verdict.MLE
    parent = v2_judge.runner.cgroups.parent
    assert not [p for p in parent.iterdir() if p.name.startswith(f"{os.getpid()}-")]
