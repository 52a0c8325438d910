"""A language declares the system calls its programs and builds make beyond the sandbox's
base policy, within a ceiling sandbox-exec enforces itself.

Proof by extension: test-only languages registered here and judged by the real judge in
the real sandbox, then unregistered. `Polling` is C++ whose runtime polls its standard
streams at start, as Rust's does (`poll`, outside the solution allowlist): AC with its
declaration, SV naming `poll` without it (`Undeclared`), SV naming `ptrace` for a call
above the ceiling. `Niced` builds under `nice` (`setpriority`, in the compiler's
denylist): it builds with its declaration and is a compile error naming the call without
(`NicedUndeclared`). A declaration above the ceiling is refused where the class is
written, and by sandbox-exec itself whatever asks.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from codefu_sandbox import Judge, Limits, TestCase, Verdict
from codefu_sandbox.languages import Program, register, unregister
from codefu_sandbox.languages.base import Command, digest
from codefu_sandbox.languages.cpp import Cpp, CppExecutor
from codefu_sandbox.process import RunLimits, parse_sandbox_exec_line
from codefu_sandbox.records import CompileResult
from codefu_sandbox.runner import Runner
from codefu_sandbox.syscalls import CEILING, NUMBERS
from codefu_sandbox.verdicts import decide

pytestmark = [pytest.mark.security, pytest.mark.usefixtures("host_guard")]

LIMITS = Limits(1.0, 64 << 20)
TESTS = [TestCase("1 2\n", "3\n")]
SUM = """#include <cstdio>
int main() { long a, b; scanf("%ld %ld", &a, &b); printf("%ld\\n", a + b); }
"""
# What the polling language's runtime does before main: poll its standard streams, as
# Rust's standard library does at start (by the call's number: glibc may use ppoll).
RUNTIME = """#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>
static const long polled = [] {
    pollfd streams[3] = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}};
    return syscall(SYS_poll, streams, 3, 0);
}();
"""
NICE = shutil.which("nice", path="/usr/bin:/bin")
# Lowers its own priority to the least (always permitted): setpriority, which every base
# profile refuses.
SETPRIORITY = "import os\nos.setpriority(os.PRIO_PROCESS, 0, 19)\n"


class PollingExecutor(CppExecutor):
    """g++ on the program after the language's runtime."""

    def compile(self, source: str) -> tuple[CompileResult, Program | None]:
        return super().compile(RUNTIME + source)


class Polling(Cpp):
    """C++ with a runtime that polls its standard streams at start."""

    name = "polling-cpp"
    display_name = "C++ (polling runtime)"
    suffixes = (".pcpp",)
    fence_tags = ("pcpp",)
    aliases = ()
    run_syscalls = ("poll",)

    def executor(self, cache_dir: Path, runner: Runner, config: Any = None) -> CppExecutor:
        return PollingExecutor(cache_dir, runner, config, language=self)


class Undeclared(Polling):
    """The same runtime, its call not declared."""

    name = "undeclared-cpp"
    suffixes = (".ucpp",)
    fence_tags = ("ucpp",)
    run_syscalls = ()


class NicedExecutor(CppExecutor):
    """g++ under `nice -n 1`; its artifacts cached apart from plain C++'s (the same
    source must build here, not come from the judge's cache)."""

    def build_command(self) -> Command:
        assert NICE is not None
        command = super().build_command()
        return replace(command, argv=(NICE, "-n", "1", *command.argv))

    def key(self, source: str) -> str:
        declared = "\0".join(self.compile_syscalls).encode()
        return digest(b"niced", declared, super().key(source).encode())


class Niced(Cpp):
    """C++ built at a lower priority."""

    name = "niced-cpp"
    display_name = "C++ (built under nice)"
    suffixes = (".ncpp",)
    fence_tags = ("ncpp",)
    aliases = ()
    compile_syscalls = ("setpriority",)

    def executor(self, cache_dir: Path, runner: Runner, config: Any = None) -> CppExecutor:
        return NicedExecutor(cache_dir, runner, config, language=self)


class NicedUndeclared(Niced):
    """Built under nice, its call not declared."""

    name = "niced-undeclared-cpp"
    suffixes = (".nucpp",)
    fence_tags = ("nucpp",)
    compile_syscalls = ()


@pytest.fixture
def registered() -> Iterator[None]:
    languages = [Polling(), Undeclared(), Niced(), NicedUndeclared()]
    for language in languages:
        register(language)
    try:
        yield
    finally:
        for language in languages:
            unregister(language.name)


def test_a_declared_call_is_allowed_and_an_undeclared_one_is_a_named_violation(
    judge: Judge, registered: None
) -> None:
    accepted = judge.judge(SUM, TESTS, LIMITS, language="polling-cpp")
    assert accepted.verdict is Verdict.AC, accepted.to_dict()
    refused = judge.judge(SUM, TESTS, LIMITS, language="undeclared-cpp")
    assert refused.compile.cached  # the same binary: only the declaration differs
    assert refused.verdict is Verdict.SV, refused.to_dict()
    assert refused.tests[0].message == "forbidden system call: poll"


def test_a_call_above_the_ceiling_is_a_named_violation_in_a_declaring_language(
    judge: Judge, registered: None
) -> None:
    tracing = "#include <sys/ptrace.h>\nint main() { ptrace(PTRACE_TRACEME, 0, 0, 0); }\n"
    report = judge.judge(tracing, TESTS, LIMITS, language="polling-cpp")
    assert report.verdict is Verdict.SV, report.to_dict()
    assert report.tests[0].message == "forbidden system call: ptrace"


@pytest.mark.skipif(NICE is None, reason="nice (coreutils) is not installed")
def test_a_declared_build_call_is_allowed_and_an_undeclared_one_is_a_named_compile_error(
    judge: Judge, registered: None
) -> None:
    refused = judge.judge(SUM, TESTS, LIMITS, language="niced-undeclared-cpp")
    assert refused.verdict is Verdict.CE
    assert refused.compile.diagnostics.startswith(
        "[compilation made a forbidden system call: setpriority]"
    )
    built = judge.judge(SUM, TESTS, LIMITS, language="niced-cpp")
    assert built.verdict is Verdict.AC, built.to_dict()
    assert not built.compile.cached


def test_a_declaration_above_the_ceiling_is_refused_where_it_is_written() -> None:
    with pytest.raises(ValueError, match=r"Tracing\.run_syscalls: ptrace is above the sandbox's"):

        class Tracing(Cpp):
            run_syscalls = ("poll", "ptrace")

    with pytest.raises(ValueError, match=r"Mounting\.compile_syscalls: mount is above"):

        class Mounting(Cpp):
            compile_syscalls = ("mount",)

    with pytest.raises(ValueError, match="'pol' is not an x86-64 system call name"):

        class Misspelt(Cpp):
            run_syscalls = ("pol",)

    with pytest.raises(ValueError, match="must be a tuple of system call names"):

        class Bare(Cpp):
            run_syscalls = "poll"  # type: ignore[assignment]


def test_sandbox_exec_refuses_the_ceiling_whatever_asks(judge: Judge, tmp_path: Path) -> None:
    """Past the Python checks (the runner's, then a declaration's): sandbox-exec refuses each
    ceiling call by its number, and takes every other call of the table at once."""
    limits = RunLimits(cpu_seconds=5.0, wall_seconds=10.0, address_space=None, file_size=1 << 20)
    with pytest.raises(ValueError, match="ptrace is above the sandbox's ceiling"):
        judge.runner.run(
            ["/bin/true"],
            cwd=tmp_path,
            limits=limits,
            stdin=None,
            stdout=tmp_path / "out",
            stderr=tmp_path / "err",
            syscalls=("ptrace",),
        )
    exe = str(judge.runner.sandbox_exec)
    for name in CEILING:
        number = NUMBERS[name]
        done = subprocess.run(
            [exe, "--allow-syscall", str(number), "--", "/bin/true"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert (done.returncode, done.stdout) == (
            2,
            f"error --allow-syscall {number} ({name}): above the sandbox's ceiling, no "
            "profile may allow it\n",
        )
    others = [str(n) for name, n in NUMBERS.items() if name not in CEILING and n < 512]
    done = subprocess.run(
        [exe, *(a for n in others for a in ("--allow-syscall", n)), "--", "/bin/true"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.stdout.startswith("ok 0 0 "), done.stdout


@pytest.mark.parametrize("profile", ["run", "compile", "checker"])
def test_each_profile_takes_the_declared_calls(judge: Judge, tmp_path: Path, profile: str) -> None:
    """A call outside a profile's base policy: refused, named by number; declared: it runs."""
    if not judge.runner.isolation.seccomp:
        pytest.skip("no seccomp filter on this host")
    python = shutil.which("python3", path="/usr/bin:/bin")
    if python is None:
        pytest.skip("no /usr/bin/python3")
    limits = RunLimits(cpu_seconds=5.0, wall_seconds=20.0, address_space=None, file_size=1 << 20)

    def run(syscalls: tuple[str, ...]) -> Any:
        with judge.runner.uids.take() as uid:
            work = tmp_path / f"{profile}-{len(syscalls)}"
            work.mkdir()
            return judge.runner.run(
                [python, "-I", "-S", "-B", "-c", SETPRIORITY],
                cwd=work,
                limits=limits,
                stdin=None,
                stdout=work / "out",
                stderr=work / "err",
                profile=profile,
                syscalls=syscalls,
                uid=uid,
            )

    refused = run(())
    assert (refused.refused_syscall, refused.error) == (NUMBERS["setpriority"], None)
    allowed = run(("setpriority",))
    assert (allowed.exit_code, allowed.refused_syscall, allowed.error) == (0, None, None)


HOLDER = r"""
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
/* Holds a seccomp listener (a filter allowing everything), kept open across exec, then
 * execs argv[1...]: a filter below it cannot have a listener of its own (EBUSY). */
int main(int argc, char **argv) {
    struct sock_filter allow[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
    struct sock_fprog prog = {1, allow};
    if (argc < 2 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return 1;
    long flags = SECCOMP_FILTER_FLAG_NEW_LISTENER;
    long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
    if (fd < 0 || fcntl((int)fd, F_SETFD, 0) != 0) { perror("seccomp"); return 1; }
    execv(argv[1], argv + 1);
    perror("execv");
    return 1;
}
"""


def test_without_a_listener_a_refused_call_still_kills(judge: Judge, tmp_path: Path) -> None:
    """Where sandbox-exec cannot have the filter's listener (one is held above it), its
    filter kills the program at a refused call (SIGSYS: SV, the call unnamed), and a
    declared call still runs."""
    if not judge.runner.isolation.seccomp:
        pytest.skip("no seccomp filter on this host")
    python = shutil.which("python3", path="/usr/bin:/bin")
    if python is None:
        pytest.skip("no /usr/bin/python3")
    source = tmp_path / "holder.c"
    source.write_text(HOLDER)
    holder = tmp_path / "holder"
    subprocess.run(["gcc", "-O2", "-o", str(holder), str(source)], check=True)
    base = [str(holder), str(judge.runner.sandbox_exec), "--wall", "20", "--seccomp", "1"]
    argv = ["--exec-fd", "1", "--", python, "-I", "-S", "-B", "-c", SETPRIORITY]

    def run(*options: str) -> Any:
        done = subprocess.run([*base, *options, *argv], capture_output=True, text=True, check=False)
        return parse_sandbox_exec_line(done.stdout.strip(), done.stderr, 0.0)

    killed = run()
    assert (killed.signal, killed.refused_syscall, killed.error) == (31, None, None)
    verdict = decide(killed, time_seconds=5.0, memory_bytes=1 << 30, output_limit=1 << 20)
    assert verdict is Verdict.SV
    allowed = run("--allow-syscall", str(NUMBERS["setpriority"]))
    assert (allowed.exit_code, allowed.error) == (0, None)
