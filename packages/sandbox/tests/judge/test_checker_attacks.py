"""Real attacks from a checker program against the real sandbox.

A checker is untrusted code (a model may have written it): it runs under the submission's
isolation with a policy a Python interpreter lives under. Each attack must end as an
internal error of that test (the checker's failure, never the program's) or be refused
inside the checker, which then reports what it could do; `host_guard` checks the host.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from codefu_sandbox import Judge, Limits, TestCase, Verdict
from codefu_sandbox.checkers import CheckerConfig
from codefu_sandbox.verdicts import JudgeReport

pytestmark = [pytest.mark.security, pytest.mark.usefixtures("host_guard")]

ECHO = "#include <bits/stdc++.h>\nint main(){std::string s;while(std::cin>>s)std::cout<<s<<' ';}"
TESTS = [TestCase("7\n", "7\n")]
LIMITS = Limits(1.0, 256 << 20)


def judge_with(judge: Judge, source: str, language: str = "python", **params: Any) -> JudgeReport:
    config = CheckerConfig("program", {"source": source, "language": language, **params})
    return judge.judge(ECHO, TESTS, LIMITS, config)


def test_a_python_checker_may_end_with_exit_or_quit(judge: Judge) -> None:
    verdict = (
        "import sys\nok = open(sys.argv[2]).read().split() == open(sys.argv[3]).read().split()\n"
    )
    assert judge_with(judge, verdict + "exit(0 if ok else 1)\n").verdict is Verdict.AC
    assert judge_with(judge, verdict + "if ok:\n    quit()\nexit(1)\n").verdict is Verdict.AC
    wrong = "exit(1)\n"
    assert judge_with(judge, wrong).verdict is Verdict.WA


def refused(judge: Judge, attempt: str) -> JudgeReport:
    """A Python checker that runs `attempt` (statements that raise when refused) and
    exits 0 ("accepted") only when it raised OSError: AC means the sandbox refused."""
    source = (
        f"import os, sys\ntry:\n{attempt}\nexcept OSError as e:\n    sys.exit(0)\nsys.exit(1)\n"
    )
    return judge_with(judge, source)


def test_an_honest_python_and_cpp_checker_run(judge: Judge) -> None:
    python = "import sys\nout, ans = open(sys.argv[2]).read(), open(sys.argv[3]).read()\n"
    python += "sys.exit(0 if out.split() == ans.split() else 1)\n"
    assert judge_with(judge, python).verdict is Verdict.AC
    cpp = (
        "#include <bits/stdc++.h>\nint main(int c,char**v){std::ifstream o(v[2]),a(v[3]);"
        "long long x,y;o>>x;a>>y;return x==y?0:1;}"
    )
    assert judge_with(judge, cpp, "cpp").verdict is Verdict.AC
    assert (
        judge.judge(
            ECHO,
            [TestCase("7", "8")],
            LIMITS,
            CheckerConfig("program", {"source": cpp, "language": "cpp"}),
        ).verdict
        is Verdict.WA
    )


@pytest.mark.parametrize("target", ["/tmp", "/var/tmp", "/dev/shm", "..", "/root"])
def test_a_checker_writes_only_in_its_folder(judge: Judge, target: str) -> None:
    name = f"{target}/codefu-checker-{uuid.uuid4().hex}"
    report = refused(judge, f"    open({name!r}, 'w').write('x')")
    assert report.verdict is Verdict.AC, report.to_dict()
    assert not Path(name).exists()
    # and inside its own folder it may write
    own = "import sys\nopen('scratch.txt', 'w').write('ok')\nsys.exit(0)\n"
    assert judge_with(judge, own).verdict is Verdict.AC


def test_a_checker_cannot_reach_the_network(judge: Judge, listener: Any) -> None:
    source = (
        f"import socket\ns = socket.create_connection(('127.0.0.1', {listener.port}), timeout=2)\n"
    )
    report = judge_with(judge, source)
    assert report.verdict is Verdict.IE, report.to_dict()
    assert listener.accepted == []


@pytest.mark.parametrize("language", ["python", "cpp"])
def test_a_checker_fork_bomb_is_stopped(judge: Judge, language: str) -> None:
    source = (
        "import os\nwhile True:\n    os.fork()\n"
        if language == "python"
        else "#include <unistd.h>\nint main(){for(;;)fork();}"
    )
    report = judge_with(judge, source, language)
    assert report.verdict is Verdict.IE, report.to_dict()
    assert "the checker made a forbidden system call: clone" in report.tests[0].message


def test_a_checker_cannot_run_a_shell(judge: Judge) -> None:
    marker = Path("/tmp") / f"codefu-checker-exec-{uuid.uuid4().hex}"
    report = judge_with(judge, f"import os\nos.execv('/bin/sh', ['sh', '-c', 'touch {marker}'])\n")
    assert report.verdict is Verdict.IE
    assert not marker.exists()


def test_a_checker_cannot_read_another_runs_files(judge: Judge) -> None:
    """Another submission's private folder (the judge's, 0700) and its files."""
    with judge.runner.workspace() as other:
        secret = other / "out-0"
        secret.write_text("another submission's output")
        secret.chmod(0o644)
        report = refused(judge, f"    open({str(secret)!r}).read()")
        listing = refused(judge, f"    os.listdir({str(judge.runner.scratch)!r})")
    assert report.verdict is Verdict.AC, report.to_dict()
    assert listing.verdict is Verdict.AC, listing.to_dict()


def test_a_hanging_checker_is_an_internal_error(judge: Judge) -> None:
    spin = judge_with(judge, "while True:\n    pass\n", time_seconds=1.0)
    assert spin.verdict is Verdict.IE and "CPU" in spin.tests[0].message
    sleep = judge_with(judge, "import time\ntime.sleep(600)\n", time_seconds=0.5)
    assert sleep.verdict is Verdict.IE and "wall" in sleep.tests[0].message


def test_a_checker_flooding_output_or_disk_is_an_internal_error(judge: Judge) -> None:
    flood = "import sys\nwhile True:\n    sys.stdout.write('x' * 65536)\n"
    assert judge_with(judge, flood).verdict is Verdict.IE
    disk = "f = open('big', 'w')\nwhile True:\n    f.write('x' * 65536)\n"
    assert judge_with(judge, disk).verdict is Verdict.IE


def test_a_checker_over_its_memory_is_an_internal_error(judge: Judge) -> None:
    hog = "blocks = []\nwhile True:\n    blocks.append(bytearray(16 << 20))\n"
    report = judge_with(judge, hog, memory_bytes=128 << 20)
    assert report.verdict is Verdict.IE, report.to_dict()


def test_a_crashing_checker_is_an_internal_error_not_a_wrong_answer(judge: Judge) -> None:
    assert judge_with(judge, "raise RuntimeError('bug in the checker')\n").verdict is Verdict.IE
    assert judge_with(judge, "import sys\nsys.exit(3)\n").verdict is Verdict.IE
    broken = judge_with(judge, "int main( {", "cpp")
    assert broken.verdict is Verdict.IE and "does not compile" in broken.tests[0].message
