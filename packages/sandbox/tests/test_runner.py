"""The runner's pure parts and its IE path, plus the judge's handling of checkers."""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
import time
from pathlib import Path

import pytest

from codefu_sandbox import CheckerConfig, Judge, Limits, Submission, TestCase, Verdict
from codefu_sandbox.graders.base import cgroup_cap
from codefu_sandbox.records import CompileResult
from codefu_sandbox.runner import (
    UIDS_PER_PROCESS,
    Isolation,
    RunLimits,
    UidWindow,
    cgroup2_mounts,
    parse_sandbox_exec_line,
)

needs_gpp = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
ECHO = (
    "#include <bits/stdc++.h>\nint main(){std::string s; while(std::cin>>s) std::cout<<s<<' ';}\n"
)


def _binary(judge: Judge, source: str) -> tuple[CompileResult, Path | None]:
    """The C++ binary `source` compiles to (the judge's cache), None on a compile error."""
    compiled, program = judge.executor("cpp").compile(source)
    return compiled, Path(program.argv[0]) if program is not None else None


def test_parse_sandbox_exec_line() -> None:
    run = parse_sandbox_exec_line("ok 0 0 1500 500 2048 3000 0 -1", "", time.monotonic())
    assert (run.exit_code, run.signal, run.killed, run.error) == (0, None, None, None)
    assert run.cpu_seconds == pytest.approx(0.002) and run.peak_memory_bytes == 2048 * 1024
    assert run.refused_syscall is None
    killed = parse_sandbox_exec_line("ok -1 9 1000000 0 100 1100000 2 -1", "", time.monotonic())
    assert (killed.exit_code, killed.signal, killed.killed) == (None, 9, "wall")
    refused = parse_sandbox_exec_line("ok -1 9 100 0 100 1000 0 7", "", time.monotonic())
    assert (refused.signal, refused.killed, refused.refused_syscall) == (9, None, 7)
    assert parse_sandbox_exec_line("ok 0 0 1500 500 2048 3000 0", "", 0.0).error is not None
    broken = parse_sandbox_exec_line(
        "error setresuid: Operation not permitted", "", time.monotonic()
    )
    assert broken.error is not None and "setresuid" in broken.error
    assert parse_sandbox_exec_line("", "usage: …", time.monotonic()).error is not None


def test_isolation_description() -> None:
    assert Isolation(True, 7, True, False).describe() == "rlimits+uid+seccomp+landlock-v7"
    assert Isolation(False, 0, False, False).describe() == "rlimits"
    assert Isolation(True, 0, True, True).describe() == "rlimits+uid+seccomp+netns"
    assert Isolation(True, 7, True, False, "v1").describe() == (
        "rlimits+cgroup+uid+seccomp+landlock-v7"
    )
    assert Isolation(True, 0, True, True, ipcns=True).describe() == (
        "rlimits+uid+seccomp+ipcns+netns"
    )


def test_uid_window_gives_distinct_uids_to_concurrent_users() -> None:
    window = UidWindow(200_000)
    with window.take() as a, window.take() as b:
        assert a != b
    with window.take() as c:
        assert c in (a, b)


def test_uid_window_shares_uids_past_its_size() -> None:
    window = UidWindow(200_000)
    with contextlib.ExitStack() as stack:
        uids = [stack.enter_context(window.take()) for _ in range(UIDS_PER_PROCESS + 1)]
    assert len(set(uids)) == UIDS_PER_PROCESS and uids[-1] == uids[0]
    assert all(window.base <= u < window.base + UIDS_PER_PROCESS for u in uids)


@needs_gpp
def test_sandbox_exec_failure_is_internal_error(judge: Judge, tmp_path: Path) -> None:
    report = judge.judge(ECHO, [TestCase("a", "a")], Limits(1.0, 256 << 20))
    assert report.verdict is Verdict.AC
    work = tmp_path / "w"
    work.mkdir()
    outcome = judge.runner.run(
        [str(tmp_path / "missing-binary")],
        cwd=work,
        limits=RunLimits(1.0, 2.0, None, 1 << 20),
        stdin=None,
        stdout=tmp_path / "out",
        stderr=tmp_path / "err",
    )
    assert outcome.error is not None and "missing-binary" in outcome.error


@needs_gpp
def test_external_checker_program(judge: Judge, tmp_path: Path) -> None:
    checker = tmp_path / "check.py"  # run in the sandbox, as every checker program is
    checker.write_text(
        "import sys\nout, ans = (open(p).read().split() for p in sys.argv[2:4])\n"
        "sys.exit(0 if ''.join(out) == ''.join(ans) else 1)\n"
    )
    tests = [TestCase("a b", "ab"), TestCase("x", "x")]
    report = judge.judge(ECHO, tests, Limits(1.0, 256 << 20), checker=str(checker))
    assert report.verdict is Verdict.AC, report.to_dict()
    report = judge.judge(
        ECHO, [TestCase("a", "b")], Limits(1.0, 256 << 20), checker=f"testlib:{checker}"
    )
    assert report.verdict is Verdict.WA


@needs_gpp
def test_unknown_checker_is_an_error(judge: Judge) -> None:
    with pytest.raises(ValueError, match="unknown checker"):
        judge.judge(ECHO, [TestCase("a", "a")], Limits(1.0, 256 << 20), checker="fuzzy")


@needs_gpp
def test_static_memory_bytes(tmp_path: Path, judge: Judge) -> None:
    from codefu_sandbox.languages.cpp import static_memory_bytes

    text = tmp_path / "not-elf"
    text.write_text("hello")
    assert static_memory_bytes(text) == 0
    assert static_memory_bytes(tmp_path / "missing") == 0
    _, small = _binary(judge, "int main() { return 0; }\n")
    _, big = _binary(judge, "char t[64 << 20];\nint main(int c, char**) { return t[c]; }\n")
    assert small is not None and big is not None
    assert 0 < static_memory_bytes(small) < 16 << 20
    assert static_memory_bytes(big) >= 64 << 20


@needs_gpp
def test_binary_briefly_held_open_for_writing_is_not_an_internal_error(judge: Judge) -> None:
    """Under load a child forked by another judging thread can still hold the compiler's
    copy of a binary open for writing (inherited, closed at its exec) when the binary is
    first run: exec then fails with ETXTBSY. That is the judge's business, never an IE."""
    source = ECHO + "\n// held open for writing\n"
    compiled, binary = _binary(judge, source)
    assert binary is not None, compiled.diagnostics
    writer = os.open(binary, os.O_WRONLY)
    releaser = threading.Timer(0.2, os.close, [writer])
    releaser.start()
    try:
        report = judge.judge(source, [TestCase("a", "a")], Limits(1.0, 256 << 20))
    finally:
        releaser.join()
    assert report.verdict is Verdict.AC, report.to_dict()


@needs_gpp
def test_checker_params_reach_the_checker(judge: Judge) -> None:
    # Prints 0.3334 for an expected 0.333333: off by 2e-4, beyond the default 1e-6.
    source = '#include <cstdio>\nint main(){ std::printf("0.3334\\n"); }\n'
    tests = [TestCase("", "0.333333\n")]
    limits = Limits(time_seconds=1.0, memory_bytes=256 << 20)
    strict = judge.judge(source, tests, limits, checker="codecontests")
    loose = judge.judge(
        source, tests, limits, checker="codecontests", checker_params={"tolerance": 1e-3}
    )
    floats = judge.judge(
        source, tests, limits, checker="floats", checker_params={"precision": 1e-3}
    )
    assert (strict.verdict, loose.verdict, floats.verdict) == (Verdict.WA, Verdict.AC, Verdict.AC)


@needs_gpp
def test_a_problems_rules_reach_the_checker(judge: Judge) -> None:
    # Answers "yes" where the jury wrote "YES", and 2.99999 where it wrote the integer 3:
    # wrong as CodeContests compares, right under a statement allowing any case and 1e-4.
    source = '#include <cstdio>\nint main(){ std::printf("yes 2.99999\\n"); }\n'
    tests = [TestCase("", "YES 3\n")]
    limits = Limits(time_seconds=1.0, memory_bytes=256 << 20)
    rules = CheckerConfig(
        "codecontests",
        {"tolerance": 1e-4, "real_numbers": True, "any_case_words": ["YES", "NO"]},
    )
    without = judge.judge(source, tests, limits, checker="codecontests")
    named = judge.judge(source, tests, limits, "codecontests", checker_params=rules.params)
    configured = judge.judge(source, tests, limits, checker=rules)
    many = judge.judge_many(
        [Submission(source, tests, limits, checker=rules), Submission(source, tests, limits)]
    )
    assert without.verdict is Verdict.WA
    assert named.verdict is Verdict.AC and configured.verdict is Verdict.AC
    assert [r.verdict for r in many] == [Verdict.AC, Verdict.WA]


@needs_gpp
def test_a_misspelt_checker_parameter_is_refused(judge: Judge) -> None:
    tests = [TestCase("", "1\n")]
    limits = Limits(time_seconds=1.0, memory_bytes=256 << 20)
    with pytest.raises(ValueError, match="tolerance_mode"):
        judge.judge(ECHO, tests, limits, "codecontests", checker_params={"mode": "relative"})
    with pytest.raises(ValueError, match="takes no parameter 'tolerance'"):
        judge.judge(ECHO, tests, limits, "tokens", checker_params={"tolerance": 1e-4})
    with pytest.raises(ValueError, match=r"CheckerConfig\.params"):
        judge.judge(ECHO, tests, limits, CheckerConfig("floats"), checker_params={"precision": 1})


@needs_gpp
def test_stop_on_ends_judging_at_the_named_verdict(judge: Judge) -> None:
    # Echoes its input; the second test expects something else (WA), the rest are AC.
    tests = [TestCase("a", "a"), TestCase("b", "x"), TestCase("c", "c"), TestCase("d", "d")]
    limits = Limits(time_seconds=1.0, memory_bytes=256 << 20)
    full = judge.judge(ECHO, tests, limits, stop_on=(Verdict.TLE,))
    stopped = judge.judge(ECHO, tests, limits, stop_on=(Verdict.WA,))
    assert [t.verdict for t in full.tests] == [Verdict.AC, Verdict.WA, Verdict.AC, Verdict.AC]
    assert [t.verdict for t in stopped.tests] == [Verdict.AC, Verdict.WA]
    assert (stopped.verdict, stopped.passed, stopped.total) == (Verdict.WA, 1, 4)


# Touches 400 MB on input "big" (over a 256 MB limit), else echoes its input.
HOG_ON_BIG = (
    "#include <bits/stdc++.h>\n"
    "int main(){ std::string s; std::cin >> s;\n"
    '  if (s == "big") { std::vector<char> v(400u << 20);\n'
    "    for (size_t i = 0; i < v.size(); i += 4096) v[i] = 1; std::cout << int(v[8192]); }\n"
    "  std::cout << s << '\\n'; }\n"
)


@needs_gpp
def test_a_memory_limit_hit_counts_for_its_own_test_only(judge: Judge) -> None:
    # All tests of a submission share one memory cgroup (where cgroups are used): a cap hit
    # must make that test MLE, not the ones after it.
    tests = [TestCase(s, s) for s in ("a", "big", "b", "c", "big", "d")]
    report = judge.judge(HOG_ON_BIG, tests, Limits(1.0, 256 << 20))
    assert [t.verdict for t in report.tests] == [
        Verdict.AC,
        Verdict.MLE,
        Verdict.AC,
        Verdict.AC,
        Verdict.MLE,
        Verdict.AC,
    ]
    assert report.verdict is Verdict.MLE and report.passed == 4
    if judge.runner.cgroups is not None:
        # The tests run as children of one sandbox-exec process that joined the cgroup: they
        # are born in it, so the kernel stops the hog at the cgroup's limit, short of its
        # 400 MB (its peak RSS also counts mapped file pages the cgroup does not charge: a
        # small margin).
        hogs = [t for t in report.tests if t.verdict is Verdict.MLE]
        assert all(t.peak_memory_bytes <= cgroup_cap(256 << 20) + (16 << 20) for t in hogs)


@needs_gpp
def test_a_served_run_matches_a_single_launch_and_a_dead_server_is_an_error(
    judge: Judge, tmp_path: Path
) -> None:
    _, binary = _binary(judge, ECHO)
    assert binary is not None
    (tmp_path / "in").write_text("3 4\n")
    limits = RunLimits(cpu_seconds=1.0, wall_seconds=3.5, address_space=1 << 30, file_size=1 << 20)
    files = {"stdin": tmp_path / "in", "stdout": tmp_path / "out", "stderr": tmp_path / "err"}
    single = judge.runner.run(
        [str(binary)], cwd=tmp_path, limits=limits, writable_cwd=False, **files
    )
    assert single.error is None and (tmp_path / "out").read_text() == "3 4 "
    (tmp_path / "out").unlink()
    with judge.runner.serve([str(binary)], limits=limits, uid=None, group=None) as server:
        served = [server.run(cwd=tmp_path, writable_cwd=False, **files) for _ in range(2)]
        assert (tmp_path / "out").read_text() == "3 4 "
        server._proc.kill()
        server._proc.wait()
        gone = server.run(cwd=tmp_path, writable_cwd=False, **files)
    assert [o.exit_code for o in served] == [single.exit_code] * 2 == [0, 0]
    assert all(o.error is None and o.killed is None for o in served)
    assert gone.error is not None and "sandbox-exec" in gone.error


@needs_gpp
def test_output_page_cache_near_the_memory_limit_is_not_mle(judge: Judge) -> None:
    # 56 MB touched under a 64 MiB limit plus 48 MB of output: where a memory cgroup is
    # used, its limit (64 + 32 MiB) is passed by the output's page cache, which the kernel
    # reclaims instead of killing the program.
    source = (
        "#include <bits/stdc++.h>\n"
        "int main(){ std::vector<char> v(56u << 20);\n"
        "  for (size_t i = 0; i < v.size(); i += 4096) v[i] = 1;\n"
        "  std::string line(1023, 'x'); line += '\\n';\n"
        "  for (int i = 0; i < 48 * 1024; ++i) fputs(line.c_str(), stdout);\n"
        '  printf("%d\\n", v[4096]); }\n'
    )
    expected = ("x" * 1023 + "\n") * (48 * 1024) + "1\n"
    report = judge.judge(source, [TestCase("", expected)], Limits(2.0, 64 << 20))
    assert report.verdict is Verdict.AC, report.tests[0].message
    assert report.tests[0].peak_memory_bytes < 64 << 20


def test_sandbox_exec_option_probe(judge: Judge) -> None:
    """The probe that decides `+ipcns` tells a working option from one that fails here."""
    assert judge.runner._sandbox_exec_accepts("--wall", "5")
    assert not judge.runner._sandbox_exec_accepts("--cwd", "/nonexistent/codefu-probe")
    if os.geteuid() == 0:
        assert judge.runner.isolation.ipcns == judge.runner._sandbox_exec_accepts("--ipcns", "1")


def test_cgroup2_mounts_are_read_from_the_mount_table(tmp_path: Path) -> None:
    table = tmp_path / "mounts"
    table.write_text(
        "cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0\n"
        "cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0\n"
        "cgroup2 /mnt/with\\040space cgroup2 rw 0 0\n"
    )
    assert cgroup2_mounts(table) == [Path("/sys/fs/cgroup/unified"), Path("/mnt/with space")]
    assert cgroup2_mounts(tmp_path / "absent") == []
