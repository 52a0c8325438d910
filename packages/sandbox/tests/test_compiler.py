"""Compiler: binary cache, precompiled header (built once, verified, shared by processes)."""

from __future__ import annotations

import shutil
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from codefu_sandbox import (
    CompilerConfig,
    CompilerNotFoundError,
    Judge,
    Limits,
    Submission,
    TestCase,
    Verdict,
    default_cache_dir,
    usable_cpus,
)
from codefu_sandbox.languages.cpp import LINK_CHOICES, CppExecutor

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
ADD = "#include <bits/stdc++.h>\nint main(){long a,b;std::cin>>a>>b;std::cout<<a+b<<'\\n';}\n"
TESTS = [TestCase("1 2\n", "3\n"), TestCase("-5 5\n", "0\n")]
LIMITS = Limits(1.0, 256 << 20)


def _cpp(judge: Judge) -> CppExecutor:
    executor = judge.executor("cpp")
    assert isinstance(executor, CppExecutor)
    return executor


def test_missing_compiler_names_the_package(tmp_path: Path) -> None:
    with pytest.raises(CompilerNotFoundError, match="apt-get install g\\+\\+"):
        Judge(tmp_path, toolchains={"cpp": CompilerConfig(compiler="g++-does-not-exist")})


def test_default_cache_dir_follows_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CODEFU_CACHE_DIR", str(tmp_path / "c"))
    assert default_cache_dir() == tmp_path / "c"
    monkeypatch.delenv("CODEFU_CACHE_DIR")
    assert default_cache_dir() == Path.home() / ".cache" / "codefu"


def test_cache_hit_and_pch_use(judge: Judge) -> None:
    source = ADD + "// cache test\n"
    first = judge.judge(source, TESTS, LIMITS)
    second = judge.judge(source, TESTS, LIMITS)
    assert first.verdict is second.verdict is Verdict.AC
    assert not first.compile.cached and first.compile.pch_used
    assert second.compile.cached
    other_flags = _cpp(judge).key(source) != _cpp(judge).key(source + " ")
    assert other_flags


def test_pch_is_verified_and_reported_unused_without_bits(judge: Judge) -> None:
    pch = _cpp(judge).pch_dir()
    assert pch is not None and (pch / "bits" / "stdc++.h.gch").is_file()
    report = judge.judge('#include <cstdio>\nint main(){puts("3");}\n', TESTS[:1], LIMITS)
    assert report.verdict is Verdict.AC and not report.compile.pch_used


def test_compile_error_is_cached_with_diagnostics(judge: Judge) -> None:
    source = "int main() { return missing_variable; }\n"
    first = judge.judge(source, TESTS, LIMITS)
    assert first.verdict is Verdict.CE and "missing_variable" in first.compile.diagnostics
    assert first.passed == 0 and first.total == 2 and first.tests == []
    again = judge.judge(source, TESTS, LIMITS)
    assert again.verdict is Verdict.CE and again.compile.cached


def test_different_standard_is_a_different_cache_entry(tmp_path: Path, judge: Judge) -> None:
    other = Judge(judge.cache_dir, toolchains={"cpp": CompilerConfig(std="c++20", use_pch=False)})
    source = ADD + "// std test\n"
    assert _cpp(other).key(source) != _cpp(judge).key(source)
    report = other.judge(
        "#include <bits/stdc++.h>\n"
        "int main(){ auto x = std::span<int>(); std::cout << x.size() << '\\n'; }",
        [TestCase("", "0\n")],
        LIMITS,
    )
    assert report.verdict is Verdict.AC


def _is_dynamic(binary: Path) -> bool:
    """Whether a 64-bit ELF file asks for a program interpreter (PT_INTERP)."""
    data = binary.read_bytes()
    phoff = struct.unpack_from("<Q", data, 0x20)[0]
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    types = [struct.unpack_from("<I", data, phoff + i * phentsize)[0] for i in range(phnum)]
    return 3 in types


def test_binaries_link_with_the_probed_flags(judge: Judge) -> None:
    flags = _cpp(judge).link_flags
    assert flags in LINK_CHOICES
    probed = list((judge.cache_dir / "link").glob("*.txt"))
    assert [p.read_text().split() for p in probed] == [list(flags)]
    source = ADD + "// link test\n"
    assert judge.judge(source, TESTS, LIMITS).verdict is Verdict.AC
    binary = _cpp(judge).artifact_path(_cpp(judge).key(source))
    assert _is_dynamic(binary) == ("-static" not in flags)


def test_a_recorded_link_choice_is_reused_and_explicit_flags_win(
    tmp_path: Path, judge: Judge
) -> None:
    if "-static" not in _cpp(judge).link_flags:
        pytest.skip("this toolchain cannot link statically")
    # A cache whose probe found no static libraries: binaries there link dynamically.
    record = tmp_path / "link" / next((judge.cache_dir / "link").glob("*.txt")).name
    record.parent.mkdir()
    record.write_text("\n")
    recorded = Judge(tmp_path, toolchains={"cpp": CompilerConfig(use_pch=False)})
    explicit = Judge(
        tmp_path, toolchains={"cpp": CompilerConfig(use_pch=False, link_flags=("-static",))}
    )
    assert _cpp(recorded).link_flags == () and _cpp(explicit).link_flags == ("-static",)
    source = ADD + "// recorded link test\n"
    assert _cpp(recorded).key(source) != _cpp(explicit).key(source)
    for one, dynamic in ((recorded, True), (explicit, False)):
        assert one.judge(source, TESTS, LIMITS).verdict is Verdict.AC
        assert _is_dynamic(_cpp(one).artifact_path(_cpp(one).key(source))) is dynamic


def test_no_tests_is_an_error(judge: Judge) -> None:
    with pytest.raises(ValueError, match="no tests"):
        judge.judge(ADD, [], LIMITS)


def test_judge_many_keeps_order_and_bounds_workers(judge: Judge) -> None:
    wrong = ADD.replace("a+b", "a-b")
    subs = [Submission(ADD if i % 2 == 0 else wrong, TESTS, LIMITS) for i in range(6)]
    reports = judge.judge_many(subs, max_workers=64)
    assert [r.verdict for r in reports] == [Verdict.AC, Verdict.WA] * 3
    assert usable_cpus() >= 1


CONCURRENT = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from codefu_sandbox import Judge, Limits, TestCase
    judge = Judge(Path(sys.argv[1]))
    source = "#include <bits/stdc++.h>\\nint main(){int a,b;std::cin>>a>>b;std::cout<<a*b;}\\n"
    report = judge.judge(source, [TestCase("6 7", "42")], Limits(1.0, 256 << 20))
    print(report.verdict, report.compile.pch_used)
    """
)


@pytest.mark.slow
def test_processes_share_one_pch_and_cache_safely(tmp_path: Path) -> None:
    cache = tmp_path / "shared-cache"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CONCURRENT, str(cache)], stdout=subprocess.PIPE, text=True
        )
        for _ in range(3)
    ]
    outputs = [p.communicate(timeout=300)[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert outputs == ["AC True"] * 3
    pch_dirs = [p for p in (cache / "pch").iterdir() if p.is_dir()]
    assert len(pch_dirs) == 1, pch_dirs
    leftovers = [p for p in cache.rglob("*") if p.name.startswith((".build-", ".tmp-"))]
    assert leftovers == []
    binaries = list((cache / "bin").rglob("*"))
    assert len([b for b in binaries if b.is_file()]) == 1


# 2^18 tokens from nested macros: cc1plus needs seconds of CPU for them.
COMPILE_BOMB = """#define A(x) x x
#define B(x) A(A(A(A(x))))
#define C(x) B(B(B(B(x))))
#define D(x) A(A(C(x)))
int main() { long long s = 0 D(+1); return (int)s; }
"""


def test_a_source_that_keeps_the_compiler_busy_is_a_compile_error(tmp_path: Path) -> None:
    judge = Judge(tmp_path, toolchains={"cpp": CompilerConfig(cpu_seconds=1.0, use_pch=False)})
    report = judge.judge(COMPILE_BOMB, [TestCase("", "")], Limits(1.0, 256 << 20))
    assert report.verdict is Verdict.CE
    assert report.compile.diagnostics.startswith("[compilation exceeded 1 s of CPU]")


def test_a_compile_past_the_wall_backstop_is_the_judges_failure(tmp_path: Path) -> None:
    """Wall time past the backstop within the CPU limit means an overloaded host: IE (a
    judge failure, retried or not rewarded), never a CE that would cost the program."""
    source = '#include <bits/stdc++.h>\nint main() { puts("ok"); }\n'
    slow = Judge(tmp_path, toolchains={"cpp": CompilerConfig(wall_seconds=0.01, use_pch=False)})
    report = slow.judge(source, [TestCase("", "ok\n")], Limits(1.0, 256 << 20))
    assert report.verdict is Verdict.IE
    assert "overloaded" in report.compile.diagnostics
    # Nothing was cached as a compile error: the same source compiles on a calmer try.
    calm = Judge(tmp_path, toolchains={"cpp": CompilerConfig(use_pch=False)})
    assert calm.judge(source, [TestCase("", "ok\n")], Limits(1.0, 256 << 20)).verdict is Verdict.AC
