"""Real attacks against the real sandbox: each asserts the verdict and an unharmed host.

Runs as whatever user pytest runs as; as root (SageMaker, CI containers) every layer
is exercised: uid drop, rlimits, seccomp, Landlock.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from codefu_sandbox import Judge, Limits, TestCase, Verdict

MiB = 1 << 20
LIMITS = Limits(1.0, 256 * MiB)
ONE_TEST = [TestCase("", "")]

pytestmark = [pytest.mark.security, pytest.mark.usefixtures("host_guard")]

PRELUDE = """
#include <bits/stdc++.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>
using namespace std;
"""


def run(judge: Judge, body: str, tests: list[TestCase] | None = None, limits: Limits = LIMITS):
    report = judge.judge(PRELUDE + body, tests or ONE_TEST, limits)
    assert report.compile.ok, report.compile.diagnostics
    return report


def test_fork_bomb_is_a_security_violation(judge: Judge) -> None:
    report = run(judge, "int main() { for (;;) fork(); }")
    assert report.verdict is Verdict.SV


def test_vfork_and_system_are_security_violations(judge: Judge) -> None:
    assert run(judge, 'int main() { return system("true"); }').verdict is Verdict.SV
    assert run(judge, "int main() { if (vfork() == 0) _exit(0); }").verdict is Verdict.SV


def test_connect_to_local_listener_is_blocked(judge: Judge, listener: Any) -> None:
    body = f"""
    int main() {{
        int s = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{{}}; a.sin_family = AF_INET; a.sin_port = htons({listener.port});
        a.sin_addr.s_addr = inet_addr("127.0.0.1");
        printf("%d\\n", connect(s, (sockaddr*)&a, sizeof a));
    }}"""
    report = run(judge, body)
    assert report.verdict is Verdict.SV
    assert listener.accepted == []


def test_execve_shell_is_blocked(judge: Judge, tmp_path: Path) -> None:
    marker = Path("/tmp") / f"codefu-exec-{uuid.uuid4().hex}"
    body = f'int main() {{ execl("/bin/sh", "sh", "-c", "touch {marker}", (char*)0); return 3; }}'
    assert run(judge, body).verdict is Verdict.SV
    assert not marker.exists()


def test_writes_outside_the_work_dir_fail(judge: Judge) -> None:
    targets = [
        Path(d) / f"codefu-escape-{uuid.uuid4().hex}" for d in ("/tmp", "/var/tmp", "/dev/shm")
    ]
    opens = "".join(f'ok += fopen("{t}", "w") != nullptr;' for t in targets)
    body = f"""
    int main() {{
        int ok = 0; {opens}
        ok += fopen("own-file.txt", "w") != nullptr;  // no files by default: no disk filling
        printf("%d\\n", ok);
    }}"""
    report = run(judge, body, [TestCase("", "0\n")])
    assert report.verdict is Verdict.AC, report.tests[0].message
    assert not any(t.exists() for t in targets)


def test_work_dir_is_writable_when_allowed(judge: Judge) -> None:
    writer = Judge(judge.cache_dir, allow_file_writes=True)
    target = Path("/tmp") / f"codefu-escape-{uuid.uuid4().hex}"
    body = f"""
    int main() {{
        FILE* f = fopen("scratch.txt", "w"); fputs("42", f); fclose(f);
        int x = 0; f = fopen("scratch.txt", "r"); fscanf(f, "%d", &x);
        printf("%d %d\\n", x, fopen("{target}", "w") != nullptr);
    }}"""
    report = run(writer, body, [TestCase("", "42 0\n")])
    assert report.verdict is Verdict.AC, report.to_dict()
    assert not target.exists()


def test_reading_a_root_only_file_fails(judge: Judge, secret: Path) -> None:
    body = f"""
    int main() {{
        FILE* f = fopen("{secret}", "r");
        if (!f) {{ puts("denied"); return 0; }}
        char buf[64] = {{0}}; fread(buf, 1, 60, f); printf("%s", buf);
    }}"""
    report = run(judge, body, [TestCase("", "denied\n")])
    assert report.verdict is Verdict.AC
    assert "TOPSECRET" not in str(report.to_dict())


def test_reading_a_world_readable_file_outside_system_trees_fails(
    judge: Judge, public_file: Path
) -> None:
    if not judge.runner.isolation.landlock_abi:
        pytest.skip("Landlock is not available: world-readable files stay readable")
    body = f'int main() {{ puts(fopen("{public_file}", "r") ? "read" : "denied"); }}'
    assert run(judge, body, [TestCase("", "denied\n")]).verdict is Verdict.AC


def test_including_a_secret_at_compile_time_is_a_compile_error(judge: Judge, secret: Path) -> None:
    for source in (
        f'#include "{secret}"\nint main() {{}}',
        f'asm(".incbin \\"{secret}\\"");\nint main() {{}}',
    ):
        report = judge.judge(source, ONE_TEST, LIMITS)
        assert report.verdict is Verdict.CE
        assert "TOPSECRET" not in report.compile.diagnostics


def test_incbin_of_a_world_readable_file_is_refused(judge: Judge, public_file: Path) -> None:
    if not judge.runner.isolation.landlock_abi:
        pytest.skip("Landlock is not available")
    report = judge.judge(f'asm(".incbin \\"{public_file}\\"");\nint main() {{}}', ONE_TEST, LIMITS)
    assert report.verdict is Verdict.CE


@pytest.mark.parametrize(
    "body",
    [
        "int main() { kill(-1, SIGKILL); }",
        "int main() { kill(getppid(), SIGKILL); }",
        "int main() { kill(1, SIGTERM); }",
    ],
    ids=["kill-all", "kill-parent", "kill-init"],
)
def test_signals_to_other_processes_are_violations(judge: Judge, body: str) -> None:
    assert run(judge, body).verdict is Verdict.SV


def test_signals_to_itself_are_allowed(judge: Judge) -> None:
    body = (
        "int main() { signal(SIGUSR1, SIG_IGN); raise(SIGUSR1);"
        ' kill(getpid(), SIGUSR1); puts("ok"); }'
    )
    assert run(judge, body, [TestCase("", "ok\n")]).verdict is Verdict.AC
    assert run(judge, "int main() { abort(); }").verdict is Verdict.RE


@pytest.mark.parametrize(
    "call", ["ptrace(PTRACE_ATTACH, getppid(), 0, 0)", "ptrace(PTRACE_TRACEME, 0, 0, 0)"]
)
def test_ptrace_is_a_violation(judge: Judge, call: str) -> None:
    assert run(judge, f"int main() {{ {call}; }}").verdict is Verdict.SV


def test_four_gigabyte_allocation_is_mle(judge: Judge) -> None:
    body = 'int main() { vector<char> v(4000000000LL, 1); printf("%d\\n", v[123]); }'
    assert run(judge, body).verdict is Verdict.MLE


def test_touching_one_gigabyte_is_mle(judge: Judge) -> None:
    body = """
    int main() {
        vector<vector<char>> chunks;
        for (int i = 0; i < 1024; i++) chunks.emplace_back(1 << 20, (char)i);
        printf("%zu\\n", chunks.size());
    }"""
    report = run(judge, body)
    assert report.verdict is Verdict.MLE


def test_over_limit_but_under_cap_is_mle_by_peak(judge: Judge) -> None:
    body = 'int main() { vector<char> v(300 << 20, 1); printf("%d\\n", v[5]); }'
    report = run(judge, body, [TestCase("", "1\n")])
    assert report.verdict is Verdict.MLE
    assert report.tests[0].peak_memory_bytes > 256 * MiB


def test_static_array_over_the_cap_is_mle_not_a_crash_at_exec(judge: Judge) -> None:
    body = """
    char table[500 << 20];
    int main() { int x = 7; scanf("%d", &x); table[x] = 1; printf("%d\\n", table[x]); }"""
    report = run(judge, body, [TestCase("3\n", "1\n"), TestCase("4\n", "1\n")])
    assert report.verdict is Verdict.MLE, report.to_dict()
    assert report.tests[0].peak_memory_bytes >= 500 * MiB


def test_unchecked_malloc_of_twice_the_limit_is_mle(judge: Judge) -> None:
    """An over-limit allocation is MLE, not the crash it causes. With rlimits
    alone malloc returns NULL and the write crashes (RE): this needs the memory cgroup."""
    if judge.runner.cgroups is None:
        pytest.skip("needs per-run memory cgroups (root and a writable memory cgroup)")
    body = """
    int main() {
        size_t n = (size_t)512 << 20;
        char *p = (char *)malloc(n);
        for (size_t i = 0; i < n; i += 4096) p[i] = (char)i;
        printf("%d\\n", p[4096 * 7]);
    }"""
    report = run(judge, body, [TestCase("", "0\n")])
    assert report.verdict is Verdict.MLE, report.to_dict()


def test_vector_growth_past_the_limit_is_mle(judge: Judge) -> None:
    body = """
    int main() {
        vector<long long> v;
        for (long long i = 0; i < 200000000LL; i++) v.push_back(i);
        printf("%zu\\n", v.size());
    }"""
    report = run(judge, body, [TestCase("", "200000000\n")], limits=Limits(3.0, 256 * MiB))
    assert report.verdict is Verdict.MLE, report.to_dict()


def test_200mb_heap_allocation_within_256mb_passes(judge: Judge) -> None:
    body = """
    int main() {
        size_t n = (size_t)200 << 20;
        char *p = (char *)malloc(n);
        if (!p) return 3;
        memset(p, 1, n);
        long long s = 0; for (size_t i = 0; i < n; i += 4096) s += p[i];
        printf("%lld\\n", s);
    }"""
    report = run(judge, body, [TestCase("", f"{(200 * MiB) // 4096}\n")])
    assert report.verdict is Verdict.AC, report.to_dict()


def test_memory_cgroups_are_used_as_root_and_removed(judge: Judge) -> None:
    cgroups = judge.runner.cgroups
    if cgroups is None:
        pytest.skip("needs per-run memory cgroups (root and a writable memory cgroup)")
    assert "+cgroup+" in judge.isolation
    report = run(judge, 'int main() { puts("x"); }', [TestCase("", "x\n")] * 3)
    assert report.verdict is Verdict.AC and "+cgroup+" in report.isolation
    mine = [p for p in cgroups.parent.iterdir() if p.name.startswith(f"{os.getpid()}-")]
    assert mine == []


def test_stale_memory_cgroups_of_dead_judges_are_removed(judge: Judge) -> None:
    cgroups = judge.runner.cgroups
    if cgroups is None:
        pytest.skip("needs per-run memory cgroups (root and a writable memory cgroup)")
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = cgroups.parent / f"{dead.pid}-0"
    stale.mkdir()
    live = cgroups.parent / f"{os.getpid()}-stale-test"
    live.mkdir()
    try:
        cgroups.remove_stale()
        assert not stale.exists()
        assert live.exists()  # this process is alive: its cgroups are its own business
    finally:
        for path in (stale, live):
            if path.exists():
                path.rmdir()


def test_infinite_loop_is_tle_on_cpu_time(judge: Judge) -> None:
    limits = Limits(0.5, 256 * MiB)
    report = run(judge, "int main() { volatile long x = 0; for (;;) x++; }", limits=limits)
    assert report.verdict is Verdict.TLE
    assert report.tests[0].cpu_seconds >= 0.5


def test_sleeping_forever_is_tle_by_the_wall_backstop(judge: Judge) -> None:
    limits = Limits(0.3, 256 * MiB)
    report = run(judge, "int main() { for (;;) sleep(1000); }", limits=limits)
    assert report.verdict is Verdict.TLE
    assert report.tests[0].cpu_seconds < 0.3


def test_hundred_megabytes_of_output_is_ole(judge: Judge) -> None:
    body = """
    int main() {
        static char line[1 << 20]; memset(line, 'x', sizeof line);
        for (int i = 0; i < 100; i++) fwrite(line, 1, sizeof line, stdout);
    }"""
    assert run(judge, body).verdict is Verdict.OLE


def test_thread_pool_is_allowed(judge: Judge) -> None:
    body = """
    int main() {
        atomic<long> sum{0}; vector<thread> pool;
        for (int t = 0; t < 8; t++)
            pool.emplace_back([&, t] { for (int i = 0; i < 1000; i++) sum += t; });
        for (auto& th : pool) th.join();
        printf("%ld\\n", sum.load());
    }"""
    assert run(judge, body, [TestCase("", "28000\n")]).verdict is Verdict.AC


def test_async_tasks_are_allowed(judge: Judge) -> None:
    body = """
    int main() {
        auto f = async(launch::async, [] { return 6 * 7; });
        printf("%d\\n", f.get());
    }"""
    assert run(judge, body, [TestCase("", "42\n")]).verdict is Verdict.AC


# ----------------------------------------------------------------- compile-time bombs
def test_include_dev_random_is_a_compile_error(judge: Judge) -> None:
    report = judge.judge('#include "/dev/random"\nint main() {}', ONE_TEST, LIMITS)
    assert report.verdict is Verdict.CE


def test_template_recursion_is_a_compile_error(judge: Judge) -> None:
    source = """
    template <int N> struct Deep { static const int v = Deep<N + 1>::v + 1; };
    int main() { return Deep<0>::v; }
    """
    report = judge.judge(source, ONE_TEST, LIMITS)
    assert report.verdict is Verdict.CE
    assert len(report.compile.diagnostics) <= judge.executor("cpp").config.diagnostics_chars + 100


@pytest.mark.slow
def test_exponential_template_instantiation_is_stopped(judge: Judge) -> None:
    source = """
    template <int N, int I> struct T {
        static const long v = T<N - 1, 2 * I>::v + T<N - 1, 2 * I + 1>::v;
    };
    template <int I> struct T<0, I> { static const long v = I; };
    int main() { return (int)T<40, 1>::v; }
    """
    report = judge.judge(source, ONE_TEST, LIMITS)
    assert report.verdict is Verdict.CE
    assert report.compile.diagnostics


def test_huge_source_is_a_compile_error(judge: Judge) -> None:
    source = "int main() { return 0; }\n" + "// padding\n" * 200_000
    report = judge.judge(source, ONE_TEST, LIMITS)
    assert report.verdict is Verdict.CE
    assert "limit" in report.compile.diagnostics


def test_huge_diagnostics_are_truncated(judge: Judge) -> None:
    source = "int main() {\n" + "int x = undefined_name;\n" * 2_000 + "}\n"
    report = judge.judge(source, ONE_TEST, LIMITS)
    assert report.verdict is Verdict.CE
    assert report.compile.diagnostics.endswith("[diagnostics truncated]")


# --------------------------------------------------------- legitimate heavy programs
def test_deep_recursion_with_200mb_of_stack_passes(judge: Judge) -> None:
    body = """
    int depth(int n) {
        volatile char pad[1000]; pad[0] = (char)n;
        if (n == 0) return 0;
        return depth(n - 1) + 1 + pad[0] * 0;
    }
    int main() { printf("%d\\n", depth(200000)); }"""
    report = run(judge, body, [TestCase("", "200000\n")])
    assert report.verdict is Verdict.AC, report.to_dict()


def test_200mb_array_passes(judge: Judge) -> None:
    body = """
    static int a[50 * 1000 * 1000];
    int main() {
        for (int i = 0; i < 50000000; i++) a[i] = i & 7;
        long long s = 0; for (int i = 0; i < 50000000; i++) s += a[i];
        printf("%lld\\n", s);
    }"""
    report = run(judge, body, [TestCase("", "175000000\n")], limits=Limits(2.0, 256 * MiB))
    assert report.verdict is Verdict.AC, report.to_dict()
    assert report.tests[0].peak_memory_bytes > 190 * MiB


def test_fast_io_on_ten_megabytes_passes(judge: Judge) -> None:
    numbers = list(range(1_000_000, 2_000_000))
    data = "\n".join(map(str, numbers)) + "\n"
    assert len(data) >= 7_000_000
    data = data + " ".join("7" for _ in range(1_500_000)) + "\n"
    expected = f"{sum(numbers) + 7 * 1_500_000}\n"
    body = """
    int main() {
        ios::sync_with_stdio(false); cin.tie(nullptr);
        long long s = 0, x; while (cin >> x) s += x;
        cout << s << '\\n';
    }"""
    report = run(judge, body, [TestCase(data, expected)], limits=Limits(2.0, 256 * MiB))
    assert report.verdict is Verdict.AC, report.to_dict()


@pytest.mark.netns
def test_network_namespace_layer(judge: Judge, listener: Any) -> None:
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root here")
    netns_judge = Judge(judge.cache_dir, netns=True)
    assert netns_judge.isolation.endswith("+netns")
    ok = run(netns_judge, 'int main() { puts("fine"); }', [TestCase("", "fine\n")])
    assert ok.verdict is Verdict.AC and ok.isolation.endswith("+netns")


def test_peak_memory_is_the_programs_own_not_the_judges(judge: Judge) -> None:
    """Linux keeps a process's largest RSS across exec, so a program spawned
    (even via vfork) from a large Python process would inherit its peak. The judge must
    report the program's own peak however big the judging process is (Ray workers)."""
    ballast = bytearray(400 * MiB)
    for i in range(0, len(ballast), 4096):
        ballast[i] = 1
    report = run(judge, 'int main() { puts("small"); }', [TestCase("", "small\n")])
    assert report.verdict is Verdict.AC, report.to_dict()
    assert report.tests[0].peak_memory_bytes < 64 * MiB
    del ballast
