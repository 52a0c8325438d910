"""`nox -s cli -- COMMAND`: every command the README names is reachable from a fresh clone.

The commands are console scripts inside nox's environments (`.nox/<environment>/bin`), not on
the user's PATH; `nox -s cli` installs the package a command belongs to and runs it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from repo import PACKAGES, ROOT, console_scripts


def _nox(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOX")}
    return subprocess.run(
        [sys.executable, "-m", "nox", *args],
        capture_output=True, text=True, cwd=cwd, env=env, timeout=600, check=False,
    )  # fmt: skip


def test_every_command_the_readme_names_is_a_console_script() -> None:
    named = set(re.findall(r"`(codefu-[a-z]+)\b", (ROOT / "README.md").read_text()))
    packages = {f"codefu-{p}" for p in PACKAGES}  # distribution names, not commands
    assert named - packages <= console_scripts(), (named - packages) - console_scripts()
    assert "nox -s cli -- codefu-judge --help" in (ROOT / "README.md").read_text()


def test_an_unknown_command_lists_the_commands(tmp_path: Path) -> None:
    done = _nox("-f", str(ROOT / "noxfile.py"), "--envdir", str(tmp_path), "-s", "cli", "--",
                "codefu-nothing", cwd=ROOT)  # fmt: skip
    assert done.returncode == 1
    output = done.stdout + done.stderr
    assert "'codefu-nothing' is not one of them" in output
    for script in console_scripts():
        assert script in output


@pytest.mark.slow
def test_from_a_fresh_clone_the_judge_answers_and_its_exit_code_reaches_the_shell(
    tmp_path: Path,
) -> None:
    """A clone of the committed tree, a new environment: as a newcomer types it."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout of the repository")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True, timeout=300)
    done = _nox("-s", "cli", "--", "codefu-judge", "--help", cwd=clone)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert "usage: codefu-judge" in done.stdout + done.stderr
    bad = _nox("-s", "cli", "--", "codefu-judge", "--no-such-option", cwd=clone)
    assert bad.returncode == 2, (bad.stdout + bad.stderr)[-3000:]  # argparse's usage error
