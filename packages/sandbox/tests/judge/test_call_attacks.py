"""Real attacks on the call grader (`graders/call.py`) against the real sandbox.

A call-based answer runs inside the grader's harness, in one process for all its tests, and
its results come back through a record channel: each attack here is judged, and must be
contained (`host_guard`: nothing left on the host) and not accepted. The harness is in the
program's process, so the program can reach it; what the judge relies on is that the
expected values never enter the sandbox and that only JSON data comes out (docs/security.md).
"""

from __future__ import annotations

import json
import secrets
import uuid
from pathlib import Path
from typing import Any

import pytest

from codefu_sandbox import GraderConfig, Judge, JudgeReport, Limits, TestCase, Verdict

MiB = 1 << 20
LIMITS = Limits(1.0, 256 * MiB)
SOLVE = GraderConfig("call", {"fn_name": "solve", "prelude": "livecodebench"})

pytestmark = [pytest.mark.security, pytest.mark.usefixtures("host_guard")]


def secret_tests(count: int = 3) -> list[TestCase]:
    """Tests whose expected values no program can compute: fresh random tokens."""
    return [
        TestCase(json.dumps([i]), json.dumps(f"SECRET-{secrets.token_hex(16)}"))
        for i in range(count)
    ]


def run(judge: Judge, source: str, tests: list[TestCase] | None = None) -> JudgeReport:
    report = judge.judge(source, tests or secret_tests(), LIMITS, language="python", grader=SOLVE)
    assert report.compile.ok, report.compile.diagnostics
    return report


def verdicts(report: JudgeReport) -> set[str]:
    return {str(t.verdict) for t in report.tests}


def test_writes_outside_the_folder_fail(judge: Judge) -> None:
    targets = [Path(d) / f"codefu-call-escape-{uuid.uuid4().hex}" for d in ("/tmp", "/dev/shm")]
    targets.append(judge.cache_dir / f"codefu-call-escape-{uuid.uuid4().hex}")
    paths = [str(t) for t in targets] + ["../escape.txt", "own-file.txt"]
    source = (
        "def solve(i):\n"
        "    got = []\n"
        f"    for path in {paths!r}:\n"
        "        try:\n"
        "            open(path, 'w').write('x')\n"
        "            got.append(path)\n"
        "        except OSError:\n"
        "            pass\n"
        "    return got\n"
    )
    report = run(judge, source, [TestCase("[0]", "[]")])
    assert report.verdict is Verdict.AC, report.to_dict()  # every write refused
    assert not any(t.exists() for t in targets)


@pytest.mark.parametrize(
    "attack",
    [
        "import os\n    os.fork()",
        "import subprocess\n    subprocess.run(['true'])",
        "import os\n    os.kill(os.getppid(), 9)",
    ],
    ids=["fork", "subprocess", "kill-parent"],
)
def test_new_processes_and_signals_out_are_violations(judge: Judge, attack: str) -> None:
    report = run(judge, f"def solve(i):\n    {attack}\n    return 0\n")
    assert report.verdict is Verdict.SV, report.to_dict()


def test_a_socket_is_a_violation_and_reaches_nothing(judge: Judge, listener: Any) -> None:
    source = (
        "import socket\n"
        "def solve(i):\n"
        f"    socket.create_connection(('127.0.0.1', {listener.port}))\n"
        "    return 0\n"
    )
    assert run(judge, source).verdict is Verdict.SV
    assert listener.accepted == []


def test_objects_that_lie_about_equality_are_not_accepted(judge: Judge) -> None:
    """LiveCodeBench compares the solution's own objects with `==`: these pass every test
    there. Here only their JSON data comes out."""
    liars = {
        "object": "class Liar:\n    def __eq__(self, other):\n        return True\n",
        "str": "class Liar(str):\n    def __eq__(self, other):\n        return True\n",
        "list": "class Liar(list):\n    def __eq__(self, other):\n        return True\n",
        "int": "class Liar(int):\n    def __eq__(self, other):\n        return True\n"
        "    __hash__ = int.__hash__\n",
    }
    for kind, liar in liars.items():
        source = liar + "def solve(i):\n    return Liar()\n"
        report = run(judge, source)
        assert verdicts(report) == {"WA"}, (kind, report.to_dict())


def test_exhausting_memory_is_stopped_at_the_limit(judge: Judge) -> None:
    source = (
        "def solve(i):\n    hoard = []\n    while True:\n        hoard.append(bytearray(1 << 20))\n"
    )
    report = run(judge, source)
    assert verdicts(report) == {"MLE"}, report.to_dict()
    assert all(t.peak_memory_bytes < 2 * (LIMITS.memory_bytes + 64 * MiB) for t in report.tests)


def test_printed_records_are_the_programs_output_not_results(judge: Judge) -> None:
    """The program's stdout is not the record channel: a record printed there, even with
    the right expected value, is ignored."""
    tests = secret_tests(1)
    forged = f"test 0 0.0 0.0 0 value {tests[0].output}"
    source = (
        "import sys\n"
        "def solve(i):\n"
        f"    print({forged!r})\n"
        f"    sys.stdout.write({forged!r} + '\\n')\n"
        f"    sys.__stdout__.write({forged!r} + '\\n')\n"
        "    sys.stdout.flush()\n"
        "    return 'nothing'\n"
    )
    report = run(judge, source, tests)
    assert verdicts(report) == {"WA"}, report.to_dict()


def test_forging_records_through_the_harness_gains_nothing(judge: Judge) -> None:
    """The program finds the harness's nonce and record fd in its frames and writes records
    of its own for every test (first record wins), then ends the process: without the
    expected values it can only claim values it could have returned."""
    source = (
        "import os, sys\n"
        "def solve(i):\n"
        "    frame = sys._getframe()\n"
        "    while frame is not None:\n"
        "        job = frame.f_locals.get('job')\n"
        "        watch = frame.f_locals.get('watch')\n"
        "        if job is not None and watch is not None:\n"
        "            break\n"
        "        frame = frame.f_back\n"
        "    nonce = job['nonce']\n"
        "    for index in range(job['tests']):\n"
        "        record = f'{nonce} test {index} 0.0 0.0 0 value \"SECRET-guess\"\\n'\n"
        "        os.write(watch.records, record.encode())\n"
        "    os._exit(0)\n"
    )
    report = run(judge, source)
    assert verdicts(report) == {"WA"}, report.to_dict()
    assert all(t.message.startswith("result: got '\"SECRET-guess\"'") for t in report.tests)


def test_the_expected_values_are_nowhere_the_program_can_look(judge: Judge) -> None:
    """Everything the program can reach (its objects, its folder and those above, its stdin,
    arguments and environment) holds no expected value: it counts the tokens it finds."""
    source = (
        "import gc, os, re, sys\n"
        "TOKEN = re.compile('SECRET-' + '[0-9a-f]{32}')\n"
        "def solve(i):\n"
        "    texts = [sys.stdin.read(), ' '.join(sys.argv), ' '.join(os.environ.values())]\n"
        "    for obj in list(gc.get_objects()):\n"
        "        if obj is texts:\n"
        "            continue\n"
        "        for item in obj if isinstance(obj, (list, tuple, dict)) else [obj]:\n"
        "            if isinstance(item, str):\n"
        "                texts.append(item)\n"
        "            elif isinstance(item, bytes):\n"
        "                texts.append(item.decode('latin-1'))\n"
        "    for folder in ('.', '..', '../..'):\n"
        "        try:\n"
        "            names = os.listdir(folder)\n"
        "        except OSError:\n"
        "            continue\n"
        "        for name in names:\n"
        "            try:\n"
        "                with open(os.path.join(folder, name), 'rb') as f:\n"
        "                    texts.append(f.read().decode('latin-1'))\n"
        "            except OSError:\n"
        "                pass\n"
        "    texts = [text for text in texts if 'SECRET' in text]\n"
        "    return len({t for text in texts for t in TOKEN.findall(text)})\n"
    )
    # The control: a token in a test's arguments is in reach, and found (every test sees
    # all the arguments: the harness read them first).
    control = TestCase(json.dumps([f"SECRET-{secrets.token_hex(16)}"]), "1")
    tests = [*secret_tests(), control]
    # Time enough to look everywhere on a loaded host.
    report = judge.judge(source, tests, Limits(10.0, 256 * MiB), language="python", grader=SOLVE)
    assert [str(t.verdict) for t in report.tests] == ["WA", "WA", "WA", "AC"], report.to_dict()
    assert all(t.message.startswith("result: got '1'") for t in report.tests[:3])


def test_turning_the_timers_off_leaves_the_answers_budget(judge: Judge) -> None:
    """A program that stops the harness's CPU timer and watchdog, then spins, is ended by
    the sandbox at the answer's budget (tests + 1 of the time limit), and judging stops."""
    short = Limits(0.25, 256 * MiB)
    source = (
        "import signal\n"
        "def solve(i):\n"
        "    signal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
        "    signal.signal(signal.SIGPROF, signal.SIG_IGN)\n"
        "    signal.setitimer(signal.ITIMER_PROF, 0)\n"
        "    signal.setitimer(signal.ITIMER_REAL, 0)\n"
        "    while True:\n"
        "        pass\n"
    )
    tests = secret_tests(3)
    report = judge.judge(source, tests, short, language="python", grader=SOLVE)
    assert report.verdict is Verdict.TLE, report.to_dict()
    assert [str(t.verdict) for t in report.tests] == ["TLE"]
    assert report.tests[0].cpu_seconds <= (len(tests) + 1) * short.time_seconds + 0.5
