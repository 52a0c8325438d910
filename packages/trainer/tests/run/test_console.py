"""codefu_trainer.run.console: once a run has its directory, the terminal shows the project's
lines and tables, and the run's log file gets everything (Python writes from any thread,
warnings, Ray's forwarded lines, writes to file descriptors 1 and 2 by C code or children).

Each case runs a small CLI in its own process, as `codefu-train` runs, so the real file
descriptors are redirected and restored.
"""

from __future__ import annotations

import io
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import TextIO

import pytest

from codefu_trainer.run import console

CLI = textwrap.dedent(
    """
    import os, subprocess, sys, threading, warnings
    from pathlib import Path
    from codefu_trainer.run import console

    @console.command("codefu-probe")
    def main(argv):
        if "--verbose" in argv:
            console.show_everything()
        print("codefu-probe: before the run dir")
        console.log_to(Path(argv[0]))
        print("codefu-probe: stage 1\\n  detail of stage 1")
        print("a library's line")
        warnings.warn("a library warning")
        print("(TaskRunner pid=12) codefu-probe: from a Ray actor")
        print("(TaskRunner pid=12) veRL's configuration")
        os.write(1, b"written by C code\\n")
        subprocess.run([sys.executable, "-c", "print('a child process')"], check=True)
        thread = threading.Thread(target=print, args=("codefu-probe: from a thread",))
        thread.start()
        thread.join()
        print("step  score", file=console.stdout())
        print("   1  0.500", file=console.stdout())
        print("codefu-probe: error line", file=sys.stderr)
        if "--fail" in argv:
            raise RuntimeError("the run broke")
        return 0

    sys.exit(main(sys.argv[1:]))
    """
)


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "probe.py"
    script.write_text(CLI)
    return subprocess.run(
        [sys.executable, str(script), str(tmp_path / "run"), *args],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_quiet_shows_the_projects_lines_and_logs_everything(tmp_path: Path) -> None:
    done = _run(tmp_path)
    assert done.returncode == 0, done.stderr
    log = tmp_path / "run" / "codefu-probe.log"
    assert done.stdout.splitlines() == [
        "codefu-probe: before the run dir",
        f"codefu-probe: library output (warnings, veRL's configuration, Ray's messages) goes "
        f"to {log}; --verbose shows it here",
        "codefu-probe: stage 1",
        "  detail of stage 1",
        "(TaskRunner pid=12) codefu-probe: from a Ray actor",
        "codefu-probe: from a thread",
        "step  score",
        "   1  0.500",
    ]
    assert done.stderr.splitlines() == ["codefu-probe: error line"]
    logged = log.read_text()
    for line in (
        "a library's line",
        "UserWarning: a library warning",
        "(TaskRunner pid=12) veRL's configuration",
        "written by C code",
        "a child process",
        "codefu-probe: stage 1",
        "   1  0.500",
        "codefu-probe: error line",
    ):
        assert line in logged, line


def test_verbose_shows_everything_and_keeps_no_log(tmp_path: Path) -> None:
    done = _run(tmp_path, "--verbose")
    assert done.returncode == 0, done.stderr
    for line in ("a library's line", "veRL's configuration", "written by C code", "a child"):
        assert line in done.stdout, line
    assert "a library warning" in done.stderr
    assert not (tmp_path / "run" / "codefu-probe.log").exists()


def test_a_failed_run_shows_the_end_of_its_log(tmp_path: Path) -> None:
    done = _run(tmp_path, "--fail")
    assert done.returncode == 1
    log = tmp_path / "run" / "codefu-probe.log"
    assert f"codefu-probe: the run failed; the last lines of {log}:" in done.stderr
    assert "a library's line" in done.stderr  # the log's tail
    assert "RuntimeError: the run broke" in done.stderr  # the traceback, after the console


def test_a_call_restores_the_streams_and_outside_a_command_nothing_changes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    streams = (sys.stdout, sys.stderr)
    late: TextIO | io.TextIOBase | None = None

    @console.command("codefu-probe")
    def main(argv: object) -> int:
        nonlocal late
        console.log_to(tmp_path)
        print("codefu-probe: ours")
        print("theirs")
        late = console.stdout()
        return 0

    assert main(None) == 0
    assert (sys.stdout, sys.stderr) == streams
    assert late is not None
    late.write("codefu-probe: a table row after the call\n")  # held past the call: as before
    out = capsys.readouterr().out
    assert "codefu-probe: ours" in out and "theirs" not in out
    assert "a table row after the call" in out
    assert "theirs" in (tmp_path / "codefu-probe.log").read_text()
    console.log_to(tmp_path / "elsewhere")  # no command running: no console to quiet
    print("theirs")
    assert capsys.readouterr().out == "theirs\n" and not (tmp_path / "elsewhere").exists()
    assert console.stdout() is sys.stdout and console.shows("anything")


def test_ours_is_the_project_prefix_also_behind_rays_actor_prefix() -> None:
    assert console.is_ours("codefu-train: warm start")
    assert console.is_ours("(TaskRunner pid=371) codefu-train: resuming from step 2")
    assert console.is_ours("(WorkerDict pid=9, ip=10.0.0.1) codefu-eval: batch 1/2")
    assert console.is_ours("\x1b[36m(CodeFuTaskRunner pid=25706)\x1b[0m codefu-train: step 1/2")
    assert not console.is_ours("(TaskRunner pid=371) step:1 - critic/score/mean:0.5")
    assert not console.is_ours("UserWarning: codefu-train mentioned later")
