"""The nox sessions that run our CLIs end nox with the CLI's own exit code (README "Exit codes").

nox exits 1 for any failed session; the sessions catch the failure and exit with the code
the CLI returned, so a shell (or CI) sees 2 for bad input and 3 for nothing to run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from repo import ROOT

PROBE_NOXFILE = """
import sys
sys.path.insert(0, {root!r})
import nox
from noxfile import run_cli

@nox.session(python=False)
def probe(session):
    run_cli(session, sys.executable, "-c", "import sys; sys.exit(int(sys.argv[1]))",
            *session.posargs)
"""


def nox(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOX")}
    return subprocess.run(
        [sys.executable, "-m", "nox", *args],
        capture_output=True, text=True, cwd=cwd, env=env, timeout=600, check=False,
    )  # fmt: skip


@pytest.mark.parametrize("code", [0, 1, 2, 3, 7])
def test_run_cli_hands_the_cli_exit_code_to_the_shell(tmp_path: Path, code: int) -> None:
    noxfile = tmp_path / "noxfile.py"
    noxfile.write_text(PROBE_NOXFILE.format(root=str(ROOT)))
    done = nox("-f", str(noxfile), "-s", "probe", "--", str(code), cwd=tmp_path)
    assert done.returncode == code, done.stderr
    if code:
        assert f"exited with code {code}" in done.stderr


@pytest.mark.slow
def test_prepare_of_a_corrupt_parquet_exits_2_through_nox(tmp_path: Path) -> None:
    """What a user types: `nox -s prepare -- data.source=DIR`, DIR holding a broken shard."""
    source = tmp_path / "raw"
    source.mkdir()
    (source / "train.parquet").write_bytes(b"PAR1 not really a parquet file")
    out = tmp_path / "processed"
    done = nox(
        "-f", str(ROOT / "noxfile.py"), "--envdir", str(tmp_path / "envs"), "-s", "prepare",
        "--", f"data.source={source}", f"data.out_dir={out}",
        cwd=ROOT,
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == 2, output[-3000:]
    assert f"{source / 'train.parquet'}: not a readable parquet file" in output
    assert not out.exists()
